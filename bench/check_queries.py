"""Check the search-quality query set against the running interpreter's stdlib.

For every query in ``bench/queries/stdlib.json`` (or the file given), parses
each expected file with ``ast`` and verifies that the expected qualified name
is defined there: top-level ``name``, methods ``Class.method``, nested
classes ``Outer.Inner.method``. Definitions inside module- or class-level
``if`` / ``try`` / ``with`` blocks count (``if hasattr(select, 'epoll'):
class EpollSelector``); functions nested in functions are ``outer.inner``.

Also checks the schema (id, query, kind in meaning/mixed, 1-3 expected
pairs, unique ids and queries) and, as warnings only:

* ``kind`` consistency: a ``meaning`` query should share no word (3+ chars,
  stopwords removed, substring either way) with its symbols' names; a
  ``mixed`` query should share at least one with some expected symbol or its
  docstring;
* whether indexd's own parser (``indexd.parse.code.extract_code``) reports
  the same qualified name, when indexd imports (``--no-indexd`` skips it).

Exit status 0 when every expected symbol exists, 1 otherwise.

    .venv/bin/python bench/check_queries.py [bench/queries/stdlib.json] [--stdlib DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import sysconfig
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_QUERIES = HERE / "queries" / "stdlib.json"
KINDS = ("meaning", "mixed")

STOPWORDS = frozenset("""
a an the and or of to in on at by for from with without into onto over under as is are be
been was were it its it's this that these those there their them they we you your i me my
our how what when where which who why can could should would will do does did done has have
had not no so if then than too very just only some any all each every same other another
get gets got make makes use uses using given like such via per one two
""".split())

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def query_words(text: str) -> list[str]:
    """Lower-cased words of 3+ characters, stopwords removed, in order, unique."""
    out: list[str] = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if len(w) >= 3 and w not in STOPWORDS and w not in out:
            out.append(w)
    return out


def name_words(qualname: str) -> set[str]:
    """Lower-cased parts of a qualified name: whole identifiers and their camel/snake words."""
    words = set()
    for chunk in _WORD.findall(qualname):
        words.add(chunk.lower())
        words.update(w.lower() for w in _CAMEL.findall(chunk))
    return {w for w in words if len(w) >= 3}


def overlap(qwords: list[str], nwords: set[str]) -> set[str]:
    """Query words found in the name words (equal, or one contains the other)."""
    hits = set()
    for q in qwords:
        for n in nwords:
            if q == n or q in n or (len(n) >= 4 and n in q):
                hits.add(q)
    return hits


# --- definitions ------------------------------------------------------------
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
if hasattr(ast, "TryStar"):
    _BLOCKS = _BLOCKS + (ast.TryStar,)


def definitions(tree: ast.AST) -> dict[str, ast.AST]:
    """Qualified name -> node for every class and function (first definition wins)."""
    out: dict[str, ast.AST] = {}

    def visit(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, _DEFS):
                qual = f"{prefix}{node.name}"
                out.setdefault(qual, node)
                visit(node.body, qual + ".")
            elif isinstance(node, _BLOCKS):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []) or [], prefix)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix)

    visit(tree.body, "")
    return out


def parse_file(path: Path) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # invalid escape sequences in old files
        return ast.parse(path.read_bytes(), filename=str(path))


def indexd_qualnames(path: Path) -> set[str] | None:
    """Qualified names indexd's parser extracts from the file, or None when unavailable."""
    try:
        sys.path.insert(0, str(ROOT))
        from indexd.parse.code import extract_code
    except Exception:  # noqa: BLE001 - optional cross-check
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    parsed = extract_code("python", text)
    return {e.qualname for e in parsed.entries if getattr(e, "qualname", None)}


# --- checks -----------------------------------------------------------------
def load_queries(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["queries"] if isinstance(data, dict) else data


def check(queries: list[dict], stdlib: Path, use_indexd: bool = True,
          out=sys.stdout) -> tuple[list[str], list[str]]:
    """(errors, warnings) as printable lines."""
    errors: list[str] = []
    warns: list[str] = []
    trees: dict[str, dict | None] = {}
    indexd_names: dict[str, set | None] = {}
    seen_ids, seen_queries = set(), set()

    for i, q in enumerate(queries):
        label = q.get("id") or f"#{i + 1}"
        text = q.get("query")
        if not isinstance(text, str) or not text.strip():
            errors.append(f"{label}: missing 'query'")
            continue
        if q.get("id") in seen_ids:
            errors.append(f"{label}: duplicate id")
        seen_ids.add(q.get("id"))
        if text.lower() in seen_queries:
            errors.append(f"{label}: duplicate query {text!r}")
        seen_queries.add(text.lower())
        if q.get("kind") not in KINDS:
            errors.append(f"{label}: kind must be one of {KINDS}, not {q.get('kind')!r}")
        expected = q.get("expected")
        if not isinstance(expected, list) or not 1 <= len(expected) <= 3:
            errors.append(f"{label}: 'expected' must list 1-3 {{path, symbol}} pairs")
            continue
        names, docs = set(), ""
        for exp in expected:
            rel, sym = exp.get("path"), exp.get("symbol")
            if not isinstance(rel, str) or not isinstance(sym, str) or "\\" in rel:
                errors.append(f"{label}: bad expected entry {exp!r}")
                continue
            if rel not in trees:
                path = stdlib / rel
                try:
                    trees[rel] = definitions(parse_file(path))
                except (OSError, SyntaxError, ValueError) as exc:
                    trees[rel] = None
                    errors.append(f"{label}: cannot parse {rel}: {exc}")
            defs = trees[rel]
            if defs is None:
                continue
            node = defs.get(sym)
            if node is None:
                near = sorted(d for d in defs if d.split(".")[-1] == sym.split(".")[-1])[:5]
                errors.append(f"{label}: {rel} defines no {sym!r}"
                              + (f" (same last name: {', '.join(near)})" if near else ""))
                continue
            names |= name_words(sym)
            docs += " " + (ast.get_docstring(node) or "")
            if use_indexd:
                if rel not in indexd_names:
                    indexd_names[rel] = indexd_qualnames(stdlib / rel)
                got = indexd_names[rel]
                if got is not None and sym not in got:
                    warns.append(f"{label}: indexd's parser reports no {sym!r} in {rel}")
        words = query_words(text)
        shared = overlap(words, names)
        if q.get("kind") == "meaning" and shared:
            warns.append(f"{label}: kind meaning but shares {sorted(shared)} with the symbol "
                         f"names ({text!r})")
        if q.get("kind") == "mixed" and not shared and not overlap(words, set(query_words(docs))):
            warns.append(f"{label}: kind mixed but shares no word with the symbol names or "
                         f"docstrings ({text!r})")
    return errors, warns


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("queries", nargs="?", type=Path, default=DEFAULT_QUERIES)
    p.add_argument("--stdlib", type=Path, default=None,
                   help="stdlib (or corpus copy) root; default: the running interpreter's")
    p.add_argument("--no-indexd", action="store_true",
                   help="skip the cross-check against indexd's parser")
    args = p.parse_args(argv)
    stdlib = args.stdlib or stdlib_root()
    queries = load_queries(args.queries)
    errors, warns = check(queries, stdlib, use_indexd=not args.no_indexd)
    kinds = {k: sum(q.get("kind") == k for q in queries) for k in KINDS}
    pairs = sum(len(q.get("expected") or []) for q in queries)
    print(f"{args.queries}: {len(queries)} queries ({', '.join(f'{v} {k}' for k, v in kinds.items())}), "
          f"{pairs} expected symbols, stdlib {stdlib}")
    for line in warns:
        print(f"warning: {line}")
    for line in errors:
        print(f"ERROR: {line}")
    print("OK" if not errors else f"{len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
