"""An LCOV tracefile -> the measured-lines shape `coverage_ingest.plan` works on.

LCOV test names (``TN:``) are free text. Each is mapped to one indexed test
function by the first form it fits:

- a pytest node id ``tests/test_x.py::TestA::test_b[1]``, or ``path:Qual.name``:
  that qualified name in that file;
- a dotted name ``tests.test_x.TestA.test_b``: module + qualified name, as
  coverage's ``test_function`` contexts; then the qualified name alone;
- a path of names ``tests::test_parse`` (Rust's, C++'s): that qualified name,
  then shorter ones;
- a function's name ``TestParse``, ``test_parse`` (``TestParse/case``: a Go
  subtest): a function or method of that name in a test file, or in a
  ``tests`` module (Rust's ``#[cfg(test)] mod tests``), never a production
  function that happens to share it.

A name two test functions fit equally is reported ambiguous, with where they
are, never guessed; a title (a describe/it, a suite label) or a name nothing
indexed fits is reported with the reason. A mapped name becomes the context
``path::Qual.name``, which the shared plan resolves again under the writer
mutex; `LcovRead.restore` puts the recorded name back on the edges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import RealmError
from .graph.model import is_test_path
from .lcov_reader import parse_tracefile, resolve_source, source_bases
from .realms import locate
from .words import dotted_module

_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_PARAMS = re.compile(r"\[.*\]$")                 # pytest parametrize ids, test_x[1-2]
_TEST_MODULES = {"tests", "test"}
AMBIGUOUS_SHOWN = 5
NO_FORM = ("not a test function's name (a describe/it title or a suite label?): LCOV test "
           "names map by pytest node id, path:qualname, dotted name or a test function's name")


@dataclass(frozen=True)
class Try:
    """One reading of a test name: ``qualname`` exactly, or any qualname ending in
    ``bare``; in the file ``path`` / the module ``module`` when given, else in a test."""

    qualname: str | None = None
    bare: str | None = None
    path: str | None = None
    module: str | None = None

    @property
    def last(self) -> str:
        return self.bare or self.qualname.rsplit(".", 1)[-1]

    def fits(self, row: dict) -> bool:
        qual, rel = row["qualname"], row["path"]
        if self.qualname is not None and qual != self.qualname:
            return False
        if self.path is None and self.module is None and not _is_test(rel, qual):
            return False     # named by no file or module: only a test counts, not a
            # production function that happens to share the name
        if self.path is not None and not _same_file(self.path, row["repo"], rel):
            return False
        return self.module is None or _in_module(rel, self.module)


def _is_test(rel: str, qual: str) -> bool:
    """In a test file, or in a ``tests`` module (Rust's ``#[cfg(test)] mod tests``)."""
    return is_test_path(rel) or bool(_TEST_MODULES & set(qual.split(".")[:-1]))


def _same_file(path: str, repo: str, rel: str) -> bool:
    p = path[2:] if path.startswith("./") else path
    return rel == p or rel.endswith("/" + p) or str(Path(repo) / rel) == p


def _in_module(rel: str, module: str) -> bool:
    dotted = dotted_module(rel)
    return dotted == module or dotted.endswith("." + module)


def _fileish(text: str) -> bool:
    return "/" in text or "\\" in text or re.search(r"\.[A-Za-z0-9]+$", text) is not None


def tries(name: str) -> list[Try]:
    """The readings of one test name, most specific first; [] when none fits."""
    name = name.strip()
    if "::" in name:
        head, _, rest = name.partition("::")
        parts = [p for p in _PARAMS.sub("", rest).split("::") if p and p != "()"]
        if _fileish(head):
            return [Try(qualname=".".join(parts), path=head)] if parts else []
        segs = [head] + parts
        if not all(_IDENT.match(s) for s in segs):
            return []
        # down to two parts; a last name alone is read as a bare name (test files only)
        return ([Try(qualname=".".join(segs[k:])) for k in range(len(segs) - 1)]
                + [Try(bare=segs[-1])])
    head, colon, rest = name.rpartition(":")
    if colon and _fileish(head) and all(_IDENT.match(s) for s in rest.split(".")):
        return [Try(qualname=rest, path=head)]
    bare = _PARAMS.sub("", name)
    if name.startswith("Test") and "/" in name:
        bare = name.split("/", 1)[0]            # a Go subtest: TestParse/empty_input
    segs = bare.split(".")
    if not all(_IDENT.match(s) for s in segs):
        return []
    if len(segs) == 1:
        return [Try(bare=bare)]
    dotted = [Try(qualname=".".join(segs[k:]), module=".".join(segs[:k]))
              for k in range(len(segs) - 1, 0, -1)]
    return dotted + [Try(qualname=".".join(segs[k:])) for k in range(1, len(segs) - 1)]


# -- mapping names to test entries ----------------------------------------------

def _sql_in(column: str, values) -> str:
    return f"{column} IN (" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def _functions(store, realms: set[str], names: set[str]) -> dict[str, list[dict]]:
    """The realms' functions and methods of those names (the last part of a qualname)."""
    out: dict[str, list[dict]] = {}
    ordered = sorted(names)
    for start in range(0, len(ordered), 300):
        where = (f"kind IN ('function', 'method') AND {_sql_in('realm', sorted(realms))} "
                 f"AND {_sql_in('name', ordered[start:start + 300])}")
        for row in store.entries_where(where, ["repo", "path", "qualname"]):
            out.setdefault(row["qualname"].rsplit(".", 1)[-1], []).append(row)
    return out


def map_name(name: str, functions: dict[str, list[dict]]) -> tuple[str | None, dict | None]:
    """(context ``path::Qual.name``, None) or (None, {context, reason[, candidates]})."""
    readings = tries(name)
    if not readings:
        return None, {"context": name, "reason": NO_FORM}
    for t in readings:
        found = sorted({(r["repo"], r["path"], r["qualname"]) for r in functions.get(t.last, ())
                        if t.fits(r)})
        if len(found) == 1:
            return f"{found[0][1]}::{found[0][2]}", None
        if found:
            where = [f"{path}::{qual}" for _, path, qual in found]
            return None, {"context": name, "candidates": where[:AMBIGUOUS_SHOWN],
                          "reason": f"ambiguous: {len(found)} test functions fit it ("
                                    f"{', '.join(where[:AMBIGUOUS_SHOWN])}); name it by "
                                    f"path::name to choose"}
    return None, {"context": name, "reason": "test function not indexed"}


# -- the read ------------------------------------------------------------------------

@dataclass
class LcovRead:
    lines: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    skipped: list[dict] = field(default_factory=list)
    skipped_contexts: list[dict] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)   # context -> TN as recorded

    def restore(self, rows: list[dict]) -> None:
        """Edges say the test name the tracefile recorded, not the mapped id."""
        for row in rows:
            row["context"] = self.names.get(row["context"], row["context"])


def _realms(settings, paths) -> set[str]:
    out: set[str] = set()
    for path in paths:
        try:
            realm, repo, _ = locate(settings, path)
        except RealmError:
            continue     # the plan reports it: outside every realm
        out |= {realm} | {r for r, repos in settings.realms.items() if repo in repos}
    return out


def read_tracefile(store, settings, path: str, cwd: str | None = None) -> LcovRead:
    """Parse, resolve SF: paths and map test names; raises InvalidParams on bad input."""
    trace = parse_tracefile(path)
    out = LcovRead()
    bases = source_bases(path, cwd)
    wanted = {sf for by_sf in trace.tests.values() for sf in by_sf}
    sources = {sf: resolve_source(sf, bases) for sf in sorted(wanted)}
    out.skipped = [{"path": sf, "reason": "not found: a relative SF: path that names no file "
                                          "under the tracefile's folder, its parents or the "
                                          "current folder"}
                   for sf, where in sources.items() if where is None]
    realms = _realms(settings, {p for p in sources.values() if p})
    names = {t.last for name in trace.tests for t in tries(name)}
    functions = _functions(store, realms, names) if realms and names else {}
    for name in sorted(trace.tests):
        context, why = map_name(name, functions) if realms else (None, None)
        if why:
            out.skipped_contexts.append(why)
        if context is None:
            continue
        out.names.setdefault(context, name)
        for sf, covered in trace.tests[name].items():
            if sources[sf] is not None:
                by_line = out.lines.setdefault(sources[sf], {})
                for line in covered:
                    if context not in by_line.setdefault(line, []):
                        by_line[line].append(context)
    if trace.unnamed:
        n = len(trace.unnamed)
        out.skipped_contexts.append({"context": "", "reason": f"{n} source file{'s' * (n != 1)} "
                                     f"recorded under an empty or absent TN: no per-test data"})
    return out
