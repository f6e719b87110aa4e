"""Check search-quality query sets against the code they were written for.

For every query of each set (``bench/queries/stdlib.json`` and
``bench/queries/click.json`` by default; names or files as arguments; the
corpus of each is described by its ``source``, see bench/query_sets.py),
parses each expected file with ``ast`` and verifies that the expected
qualified name is defined there: top-level ``name``, methods
``Class.method``, nested classes ``Outer.Inner.method``. Definitions inside
module- or class-level ``if`` / ``try`` / ``with`` blocks count (``if
hasattr(select, 'epoll'): class EpollSelector``); functions nested in
functions are ``outer.inner``. The expected file must be one the bench
indexes (inside the corpus: not a test folder, not ``site-packages``), and
indexd's own parser (``indexd.parse.code.extract_code``) must report the
same qualified name, else indexd can never return it (``--no-indexd`` skips
that check when indexd cannot be imported).

Also checks the schema (id, query, kind in meaning/mixed/identifier, split
in heldout/train and equal to the rule of bench/query_sets.py, 1-3 expected
pairs, unique ids and queries; ``--write-splits`` rewrites the split fields
by the rule) and, as warnings only, ``kind`` consistency:

* a ``meaning`` query should share no word (3+ chars, stopwords removed,
  substring either way) with its symbols' names;
* a ``mixed`` query should share at least one with some expected symbol or
  its docstring;
* an ``identifier`` query should share at least one with the symbols' names.

Exit status 0 when every set is valid, 1 otherwise.

    .venv/bin/python bench/check_queries.py [stdlib|click|FILE ...] [--root DIR]
        [--no-indexd] [--write-splits]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import query_sets  # noqa: E402
from query_sets import KINDS, SPLITS, stdlib_root  # noqa: E402,F401 - stdlib_root re-exported

DEFAULT_QUERIES = query_sets.SETS["stdlib"]

STOPWORDS = frozenset("""
a an the and or of to in on at by for from with without into onto over under as is are be
been was were it its it's this that these those there their them they we you your i me my
our how what when where which who why can could should would will do does did done has have
had not no so if then than too very just only some any all each every same other another
get gets got make makes use uses using given like such via per one two
""".split())

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


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
def load_queries(path: Path | str) -> list[dict]:
    return query_sets.load(path).queries


def check_schema(q: dict, label: str, rule: dict[str, str] | None) -> list[str]:
    """Errors in one query's fields other than its targets."""
    errors = []
    if q.get("kind") not in KINDS:
        errors.append(f"{label}: kind must be one of {KINDS}, not {q.get('kind')!r}")
    if rule is not None:
        if q.get("split") not in SPLITS:
            errors.append(f"{label}: split must be one of {SPLITS}, not {q.get('split')!r}")
        elif q.get("split") != rule.get(q["query"]):
            errors.append(f"{label}: split {q.get('split')!r} but the rule says "
                          f"{rule.get(q['query'])!r} (bench/check_queries.py --write-splits)")
    expected = q.get("expected")
    if not isinstance(expected, list) or not 1 <= len(expected) <= 3:
        errors.append(f"{label}: 'expected' must list 1-3 {{path, symbol}} pairs")
    return errors


def kind_warning(q: dict, label: str, names: set[str], docs: str) -> str | None:
    words = query_words(q["query"])
    shared = overlap(words, names)
    kind, text = q.get("kind"), q["query"]
    if kind == "meaning" and shared:
        return f"{label}: kind meaning but shares {sorted(shared)} with the symbol names ({text!r})"
    if kind == "mixed" and not shared and not overlap(words, set(query_words(docs))):
        return (f"{label}: kind mixed but shares no word with the symbol names or docstrings "
                f"({text!r})")
    if kind == "identifier" and not shared:
        return f"{label}: kind identifier but shares no word with the symbol names ({text!r})"
    return None


class Targets:
    """Definitions per expected file, parsed once (ast and, optionally, indexd)."""

    def __init__(self, root: Path, corpus: set[str] | None, use_indexd: bool):
        self.root, self.corpus, self.use_indexd = root, corpus, use_indexd
        self.trees: dict[str, dict | None] = {}
        self.indexd: dict[str, set | None] = {}

    def find(self, rel: str, sym: str, label: str) -> tuple[ast.AST | None, list[str]]:
        """(the definition or None, errors)."""
        if self.corpus is not None and rel not in self.corpus:
            return None, [f"{label}: {rel} is not in the corpus the bench indexes"]
        if rel not in self.trees:
            try:
                self.trees[rel] = definitions(parse_file(self.root / rel))
            except (OSError, SyntaxError, ValueError) as exc:
                self.trees[rel] = None
                return None, [f"{label}: cannot parse {rel}: {exc}"]
        defs = self.trees[rel]
        if defs is None:
            return None, []
        node = defs.get(sym)
        if node is None:
            near = sorted(d for d in defs if d.split(".")[-1] == sym.split(".")[-1])[:5]
            return None, [f"{label}: {rel} defines no {sym!r}"
                          + (f" (same last name: {', '.join(near)})" if near else "")]
        if self.use_indexd:
            if rel not in self.indexd:
                self.indexd[rel] = indexd_qualnames(self.root / rel)
            got = self.indexd[rel]
            if got is not None and sym not in got:
                return node, [f"{label}: indexd's parser reports no {sym!r} in {rel}, so "
                              "search can never return it"]
        return node, []


def check(queries: list[dict], root: Path, use_indexd: bool = True, out=sys.stdout,
          corpus: set[str] | None = None, splits: bool = True) -> tuple[list[str], list[str]]:
    """(errors, warnings) as printable lines.

    ``corpus``: the relative paths the bench indexes (None: not checked);
    ``splits``: whether every query must carry the rule's split.
    """
    errors: list[str] = []
    warns: list[str] = []
    targets = Targets(root, corpus, use_indexd)
    seen_ids, seen_queries = set(), set()
    valid = [q for q in queries if isinstance(q.get("query"), str) and q["query"].strip()]
    rule = query_sets.assign_splits(valid) if splits else None

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
        problems = check_schema(q, label, rule)
        errors += problems
        if any("'expected'" in e for e in problems):
            continue
        names, docs = set(), ""
        for exp in q["expected"]:
            rel, sym = exp.get("path"), exp.get("symbol")
            if not isinstance(rel, str) or not isinstance(sym, str) or "\\" in rel:
                errors.append(f"{label}: bad expected entry {exp!r}")
                continue
            node, found = targets.find(rel, sym, label)
            errors += found
            if node is not None:
                names |= name_words(sym)
                docs += " " + (ast.get_docstring(node) or "")
        line = kind_warning(q, label, names, docs)
        if line:
            warns.append(line)
    return errors, warns


def counts(queries: list[dict]) -> str:
    """'N queries: K1 (h heldout / t train), ...' for the report."""
    parts = []
    for kind in KINDS:
        sub = [q for q in queries if q.get("kind") == kind]
        if sub:
            held = sum(q.get("split") == "heldout" for q in sub)
            parts.append(f"{len(sub)} {kind} ({held} heldout / {len(sub) - held} train)")
    return f"{len(queries)} queries: " + ", ".join(parts)


def write_splits(qs: query_sets.QuerySet) -> int:
    """Rewrite the set's split fields by the rule; the number of queries changed."""
    rule = query_sets.assign_splits(qs.queries)
    changed = 0
    out = []
    for q in qs.queries:
        new = {}
        for key, value in q.items():
            if key == "split":   # the rule's, placed after kind below
                continue
            new[key] = value
            if key == "kind":
                new["split"] = rule[q["query"]]
        new.setdefault("split", rule[q["query"]])
        changed += new["split"] != q.get("split")
        out.append(new)
    qs.path.write_text(query_sets.dump(qs, out), encoding="utf-8")
    return changed


def check_set(qs: query_sets.QuerySet, root: Path, use_indexd: bool) -> int:
    files = query_sets.corpus_files(qs.source, root)
    corpus = {p.relative_to(root).as_posix() for p in files}
    errors, warns = check(qs.queries, root, use_indexd=use_indexd, corpus=corpus)
    pairs = sum(len(q.get("expected") or []) for q in qs.queries)
    print(f"{qs.path}: {counts(qs.queries)}; {pairs} expected symbols; corpus "
          f"{len(files)} files under {root}")
    for line in warns:
        print(f"warning: {line}")
    for line in errors:
        print(f"ERROR: {line}")
    print("OK" if not errors else f"{len(errors)} error(s)")
    return len(errors)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sets", nargs="*", metavar="SET",
                   help=f"{', '.join(query_sets.SETS)} or a file (default: every known set)")
    p.add_argument("--root", "--stdlib", dest="root", type=Path, default=None,
                   help="the corpus source root (a stdlib or unpacked sdist copy); default: "
                        "the running interpreter's stdlib, or the sdist fetched and unpacked")
    p.add_argument("--no-indexd", action="store_true",
                   help="skip the cross-check against indexd's parser")
    p.add_argument("--write-splits", action="store_true",
                   help="rewrite each set's split fields by the rule, then check")
    args = p.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="check-queries-") as tmp:
        for name in args.sets or list(query_sets.SETS):
            try:
                qs = query_sets.load(name)
            except query_sets.QuerySetError as exc:
                print(f"ERROR: {exc}")
                failed += 1
                continue
            if args.write_splits:
                print(f"{qs.path}: {write_splits(qs)} split(s) changed")
                qs = query_sets.load(qs.path)
            root = args.root or query_sets.source_root(qs.source, Path(tmp))
            failed += check_set(qs, root, use_indexd=not args.no_indexd)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
