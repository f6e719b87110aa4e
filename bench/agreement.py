"""Compare indexd's Python symbols with Python's own ``ast`` (shared helper).

Used by ``bench/ast_agreement.py`` (whole stdlib) and
``tests/test_ast_agreement.py`` (a sample). Pure apart from reading files.

An ``ast`` definition (FunctionDef, AsyncFunctionDef, ClassDef at any depth)
*agrees* when indexd has a function/method/class entry with the same name and
the same start line (the ``def``/``class`` line, not the decorator) and the
same end line. Every disagreement gets one cause:

* ``missing``          no indexd entry with that name starts on that line
* ``end_line: ...``    name and start agree, the end line differs (sub-cause:
                       trailing comment lines counted, or ends later/earlier)
* ``kind``             the entry is there but as another kind (e.g. constant)
* ``file_error``       indexd reported a parse error for the file and missed it
"""

from __future__ import annotations

import ast
import sysconfig
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

SYMBOL_KINDS = ("function", "method", "class")


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(root: Path | None = None) -> list[Path]:
    """Every ``*.py`` under the stdlib, site-packages excluded, sorted by relative path."""
    root = root or stdlib_root()
    out = []
    for p in root.rglob("*.py"):
        rel = p.relative_to(root)
        if "site-packages" in rel.parts or "__pycache__" in rel.parts:
            continue
        if p.is_file():
            out.append(p)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def sample_files(files: list[Path], every: int, always: tuple[Path, ...] = ()) -> list[Path]:
    """Deterministic sample: every n-th of the sorted list, plus ``always``."""
    picked = list(files[::every])
    for p in always:
        if p not in picked and p.is_file():
            picked.append(p)
    return picked


@dataclass(frozen=True)
class AstDef:
    name: str
    kind: str       # "function" | "class"
    line: int
    end_line: int


@dataclass
class Disagreement:
    path: str
    cause: str
    ast_def: AstDef
    detail: str


@dataclass
class Agreement:
    files: int = 0
    ast_skipped: list = field(default_factory=list)      # (path, reason)
    indexd_errors: list = field(default_factory=list)    # (path, error)
    total: int = 0
    agreed: int = 0
    disagreements: list = field(default_factory=list)
    extra: list = field(default_factory=list)            # (path, Entry) indexd-only symbols
    seconds_ast: float = 0.0
    seconds_indexd: float = 0.0

    @property
    def percent(self) -> float:
        return 100.0 * self.agreed / self.total if self.total else 100.0

    def causes(self) -> Counter:
        return Counter(d.cause for d in self.disagreements)

    def merge(self, other: "Agreement") -> None:
        self.files += other.files
        self.ast_skipped += other.ast_skipped
        self.indexd_errors += other.indexd_errors
        self.total += other.total
        self.agreed += other.agreed
        self.disagreements += other.disagreements
        self.extra += other.extra
        self.seconds_ast += other.seconds_ast
        self.seconds_indexd += other.seconds_indexd


def read_text(path: Path) -> str | None:
    """The file's text as indexd decodes it (BOMs, UTF-8, cp1252), or None when it skips it."""
    from indexd.scan.reader import decode_text

    decoded = decode_text(path.read_bytes())
    return decoded[0] if isinstance(decoded, tuple) else None


def ast_defs(text: str, filename: str = "<file>") -> list[AstDef]:
    """Raises SyntaxError / ValueError when ``ast`` cannot parse the text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old files
        tree = ast.parse(text, filename=filename)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(AstDef(node.name, "function", node.lineno, node.end_lineno))
        elif isinstance(node, ast.ClassDef):
            out.append(AstDef(node.name, "class", node.lineno, node.end_lineno))
    return sorted(out, key=lambda d: (d.line, d.name))


def compare_text(text: str, rel: str) -> Agreement:
    """Agreement for one file's text (``rel`` only labels the results)."""
    import time

    from indexd.parse.code import extract_code

    result = Agreement(files=1)
    t0 = time.perf_counter()
    try:
        defs = ast_defs(text, rel)
    except (SyntaxError, ValueError) as exc:
        result.ast_skipped.append((rel, f"{type(exc).__name__}: {exc}"))
        return result
    t1 = time.perf_counter()
    parsed = extract_code("python", text)
    t2 = time.perf_counter()
    result.seconds_ast, result.seconds_indexd = t1 - t0, t2 - t1
    if parsed.error:
        result.indexd_errors.append((rel, parsed.error))
    by_key: dict[tuple, list] = {}
    for e in parsed.entries:
        by_key.setdefault((e.name, e.start_line), []).append(e)
    result.total = len(defs)
    lines = text.splitlines()
    for d in defs:
        cands = by_key.get((d.name, d.line), [])
        sym = [e for e in cands if e.kind in SYMBOL_KINDS]
        if any(e.end_line == d.end_line for e in sym):
            result.agreed += 1
            continue
        if sym:
            cause = _end_cause(lines, d.end_line, sym[0].end_line)
            detail = f"indexd end {sym[0].end_line}, ast end {d.end_line}"
        elif cands:
            cause = "kind"
            detail = f"indexd kind {cands[0].kind}"
        else:
            cause = "file_error" if parsed.error else "missing"
            near = [e for e in parsed.entries if e.name == d.name]
            detail = (f"indexd has {d.name} at line(s) {sorted(e.start_line for e in near)[:5]}"
                      if near else "no entry of that name")
            if parsed.error:
                detail += f"; {parsed.error}"
        result.disagreements.append(Disagreement(rel, cause, d, detail))
    starts = {(d.name, d.line) for d in defs}
    result.extra = [(rel, e) for e in parsed.entries
                    if e.kind in SYMBOL_KINDS and (e.name, e.start_line) not in starts]
    return result


def _end_cause(lines: list[str], ast_end: int, indexd_end: int) -> str:
    """Name why the end lines differ: trailing comments are the usual reason."""
    if indexd_end > ast_end:
        extra = [ln.strip() for ln in lines[ast_end:indexd_end]]
        if all(not x or x.startswith("#") for x in extra):
            return "end_line: trailing comment lines counted"
        return "end_line: indexd ends later"
    return "end_line: indexd ends earlier"


def compare_file(path: Path, root: Path) -> Agreement:
    rel = path.relative_to(root).as_posix()
    text = read_text(path)
    if text is None:
        result = Agreement(files=1)
        result.ast_skipped.append((rel, "indexd cannot decode it (skipped as encoding/binary)"))
        return result
    return compare_text(text, rel)


def compare_files(files: list[Path], root: Path) -> Agreement:
    total = Agreement()
    for p in files:
        total.merge(compare_file(p, root))
    return total


def summary_rows(a: Agreement) -> list[tuple[str, str]]:
    rows = [("files", str(a.files)),
            ("files ast cannot parse (skipped)", str(len(a.ast_skipped))),
            ("files indexd reports a syntax error", str(len(a.indexd_errors))),
            ("ast definitions", str(a.total)),
            ("agreed (name + start + end line)", str(a.agreed)),
            ("agreement", f"{a.percent:.2f}%"),
            ("indexd symbols with no ast def (extra)", str(len(a.extra)))]
    for cause, n in a.causes().most_common():
        rows.append((f"disagree: {cause}", str(n)))
    return rows


def format_table(rows: list[tuple], header: tuple | None = None) -> str:
    """Plain aligned text table (also valid inside a markdown code block)."""
    all_rows = ([header] if header else []) + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(all_rows[0]))]
    lines = []
    for n, r in enumerate(all_rows):
        cells = [c.rjust(w) if _numeric(c) and i else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
        if header and n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _numeric(cell: str) -> bool:
    return bool(cell) and cell.replace(".", "", 1).replace("%", "").replace(",", "") \
        .replace("x", "").replace("s", "").replace("-", "", 1).isdigit()


def examples_by_cause(a: Agreement, limit: int = 20) -> list[Disagreement]:
    """Up to ``limit`` examples, spread over the causes (most frequent first)."""
    groups: dict[str, list] = {}
    for d in a.disagreements:
        groups.setdefault(d.cause, []).append(d)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    out: list[Disagreement] = []
    i = 0
    while len(out) < limit and any(i < len(g) for _, g in ordered):
        for _, g in ordered:
            if i < len(g) and len(out) < limit:
                out.append(g[i])
        i += 1
    return out


def replace_region(doc: Path, name: str, body: str, intro: str) -> None:
    """Write ``body`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``doc``.

    Creates the file from ``intro`` when missing and appends the markers when
    the file has none; text outside the markers is never touched.
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = doc.read_text(encoding="utf-8") if doc.exists() else intro
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text and text.index(start) < text.index(end):
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


DOC_INTRO = """# Benchmarks

Measurements of indexd on the running interpreter's standard library (every
`*.py` file, `site-packages` excluded). Numbers are from one machine and a
noisy one at that: compare ratios and medians, not absolute seconds. Each
section below is generated; the text between its markers is replaced on every
run, everything else is kept.

## How to reproduce

```sh
make install                                  # .venv with indexd and the test extra
.venv/bin/python bench/index_cold.py          # cold / warm / one-edit index vs ctags and ast
.venv/bin/python bench/index_cold.py --runs 5 --verbose   # more runs, list parse failures
.venv/bin/python bench/ast_agreement.py       # indexd symbols vs Python's ast
.venv/bin/python -m pytest tests/test_ast_agreement.py tests/test_index_stdlib.py
```

`bench/index_cold.py` needs universal-ctags on `PATH` for the ctags column
and matplotlib for `docs/bench_index_cold.png` (both optional).

## Cold, warm and one-edit indexing

<!-- index_cold:start -->
<!-- index_cold:end -->

## Python symbols against `ast`

<!-- ast_agreement:start -->
<!-- ast_agreement:end -->
"""
