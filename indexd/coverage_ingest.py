"""`indexctl tests ingest`: a per-test coverage.py data file -> ``covers`` edges.

The data file must have been recorded with per-test contexts: pytest-cov's
``--cov-context=test`` (contexts ``tests/test_x.py::TestA::test_b|run``) or
coverage's ``[run] dynamic_context = test_function`` (``test_x.TestA.test_b``).
It is read through coverage's own API, from a private copy (coverage writes
its schema into a file it opens, and an empty file would become a database).

Each covered line of each measured file is mapped to the innermost indexed
symbol containing it (or to the file, for module-level lines) and each
context to the test function's entry; one edge per (test, symbol), stamped
with both ends' content hash now (coverage_lines.py: a def's header lines
count for the scope around it). A function whose body ran outside every test
(the empty context: importing and collecting) gets one row from its module's
import instead, stamped with its hash: every test importing the module breaks
with it (graph/coverage.py). An ingest replaces the edges of the test
files it names, so running it twice stores the same edges once. Files outside
every realm or not indexed are reported skipped, with the reason.
"""

from __future__ import annotations

import logging
import re
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError, InvalidParams, RealmError
from .coverage_lines import line_map
from .graph.coverage import SEEN_LINES, SUPPORT_LINES, CoverageIndex, import_key
from .graph.model import is_test_path
from .lcov_ingest import LcovRead, read_tracefile
from .lcov_reader import is_tracefile
from .model import file_key
from .realms import locate
from .words import dotted_module

log = logging.getLogger(__name__)

MAX_SKIPPED_CONTEXTS = 50
ENTRY_COLUMNS = ["file_key", "path", "kind", "qualname", "start_line", "end_line", "content_hash"]
_PARAM_ID = re.compile(r"\[.*\]$")     # pytest parametrize ids: test_x[1-2]
_PHASE = ("setup", "run", "teardown")  # pytest-cov's nodeid|phase


@dataclass(frozen=True)
class NamedTest:
    """A test as a context names it: by pytest node id (path + qualname) or by
    coverage's dotted ``module.Class.func`` (``dotted``)."""

    path: str | None = None
    qualname: str | None = None
    dotted: str | None = None

    def candidates(self) -> list[tuple[str, str | None]]:
        """(qualname, module suffix) pairs this id may mean, most specific module first."""
        if self.path is not None:
            return [(self.qualname, None)]
        parts = self.dotted.split(".")
        return [(".".join(parts[k:]), ".".join(parts[:k])) for k in range(len(parts) - 1, 0, -1)]

    def matches(self, rel: str, module: str | None) -> bool:
        if self.path is not None:
            return rel == self.path or rel.endswith("/" + self.path)
        dotted = dotted_module(rel)
        return dotted == module or dotted.endswith("." + module)


def parse_context(context: str) -> NamedTest | None:
    """A coverage context -> the test it names, or None (a static label, import time)."""
    base, bar, phase = context.strip().rpartition("|")
    if not bar or phase not in _PHASE:
        base = context.strip()
    if not base:
        return None
    if "::" in base:
        path, _, rest = base.partition("::")
        parts = [p for p in _PARAM_ID.sub("", rest).split("::") if p and p != "()"]
        return NamedTest(path=path, qualname=".".join(parts)) if parts and path else None
    if "." in base and "/" not in base and " " not in base:
        return NamedTest(dotted=_PARAM_ID.sub("", base))
    return None


# -- reading (I/O at the edge) -------------------------------------------------

def read_data(path: str) -> dict[str, dict[int, list[str]]]:
    """measured file -> line -> contexts, via coverage's API on a private copy."""
    src = Path(path).expanduser()
    if not src.is_file():
        raise InvalidParams(f"no coverage data file at {path}", {"path": path})
    try:
        from coverage import CoverageData
        from coverage.exceptions import CoverageException
    except ImportError as exc:
        raise ConfigError("coverage is not installed: pip install 'coverage>=7'") from exc
    tmp = Path(tempfile.mkdtemp(prefix="indexd-cov-"))
    try:
        copy = tmp / "coverage.db"
        shutil.copyfile(src, copy)
        data = CoverageData(basename=str(copy))
        data.read()
        contexts = data.measured_contexts()
        lines = {f: data.contexts_by_lineno(f) for f in data.measured_files()}
    except (CoverageException, sqlite3.Error, OSError) as exc:
        raise InvalidParams(f"{path} is not a readable coverage.py data file: {exc}",
                            {"path": path}) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not lines:
        raise InvalidParams(f"{path} holds no measured files", {"path": path})
    if not any(parse_context(c) for c in contexts):
        labels = sorted(c for c in contexts if c.strip())[:5]
        raise InvalidParams(f"{path} was recorded without per-test contexts (contexts: "
                            f"{labels or 'none'}): run pytest with --cov-context=test "
                            f"(pytest-cov) or set [run] dynamic_context = test_function",
                            {"path": path})
    return lines


# -- mapping -------------------------------------------------------------------

def _locations(settings, path: str) -> list[tuple[str, str, str]]:
    """Every (realm, repo, rel) a measured file is in (a repo may be in several realms)."""
    realm, repo, rel = locate(settings, path)
    return [(realm, repo, rel)] + [(r, repo, rel) for r, repos in sorted(settings.realms.items())
                                   if r != realm and repo in repos]


def _entries(store, keys: list[str]) -> dict[str, list[dict]]:
    """The measured files' entries, with their text (where a def's header ends)."""
    out: dict[str, list[dict]] = {}
    for start in range(0, len(keys), 300):
        where = "file_key IN (" + ", ".join(_sql(k) for k in keys[start:start + 300]) + ")"
        for row in store.entries_where(where, ENTRY_COLUMNS + ["body"]):
            out.setdefault(row["file_key"], []).append(row)
    return out


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _resolve_tests(store, realms: set[str], ids: dict[str, NamedTest]) -> dict[str, dict]:
    """context -> realm -> the test function's entry row (only those found)."""
    wanted = sorted({q for t in ids.values() for q, _ in t.candidates()})
    rows: dict[str, list[dict]] = {}
    for start in range(0, len(wanted), 300):
        where = ("kind != 'file' AND qualname IN ("
                 + ", ".join(_sql(q) for q in wanted[start:start + 300]) + ") AND realm IN ("
                 + ", ".join(_sql(r) for r in sorted(realms)) + ")")
        for row in store.entries_where(where, ENTRY_COLUMNS + ["realm", "repo"]):
            rows.setdefault(row["qualname"], []).append(row)
    out: dict[str, dict] = {}
    for context, test in ids.items():
        found: dict[str, dict] = {}
        for qualname, module in test.candidates():
            for row in sorted(rows.get(qualname, ()), key=lambda r: (r["repo"], r["path"])):
                if row["realm"] not in found and test.matches(row["path"], module):
                    found[row["realm"]] = row
            if found:
                break
        if found:
            out[context] = found
    missing = {c: t for c, t in ids.items() if c not in out and t.path and "." in t.qualname}
    if missing:
        out |= _inherited_tests(store, realms, missing)
    return out


def _tests_only(tests: dict[str, dict], ids: dict[str, NamedTest]
                ) -> tuple[dict[str, dict], dict[str, str]]:
    """The contexts naming a test; and, apart, the dotted ones (coverage's
    ``test_function`` form) naming a Python function outside the test files
    (``path::qualname``): that context starts at any function named ``test*``, and
    markdown's block processors each have a ``test`` method, run inside tests coverage
    gave no context of their own. A node id or an LCOV test name is the runner's own
    (a Rust ``#[test]`` lives in its source file)."""
    kept, code = {}, {}
    for context, by_realm in tests.items():
        own = {realm: row for realm, row in by_realm.items()
               if ids[context].dotted is None or is_test_path(row["path"])
               or not row["path"].endswith(".py")}
        if own:
            kept[context] = own
        else:
            row = next(iter(by_realm.values()))
            code[context] = f"{row['path']}::{row['qualname']}"
    return kept, code


def _inherited_tests(store, realms: set[str], ids: dict[str, NamedTest]) -> dict[str, dict]:
    """pytest names a test method a class inherits after the class it ran on
    (``tests/test_io.py::TestBytes::test_buf``, the method in ``BaseTestMixin``), and
    collects a test class a module imports again under that module (itsdangerous'
    ``test_timed.py::TestSigner::test_sign``, ``TestSigner`` from test_signer.py). The
    function that ran: the one method of that name in the same file, else the one the
    class's bases give, followed by name through the class signatures (the nearest level
    with such a method; two there: ambiguous, left)."""
    where = ("kind IN ('method', 'class') AND realm IN ("
             + ", ".join(_sql(r) for r in sorted(realms)) + ")")
    rows = store.entries_where(where, ENTRY_COLUMNS + ["realm", "repo", "signature"])
    classes: dict[tuple, list[dict]] = {}     # (realm, repo, class's own name) -> rows
    methods: dict[tuple, list[dict]] = {}     # (realm, method name) -> rows
    members: dict[tuple, dict] = {}           # (realm, repo, path, qualname) -> method row
    for row in rows:
        name = row["qualname"].rpartition(".")[2]
        if row["kind"] == "class":
            classes.setdefault((row["realm"], row["repo"], name), []).append(row)
        else:
            methods.setdefault((row["realm"], name), []).append(row)
            members[(row["realm"], row["repo"], row["path"], row["qualname"])] = row
    out: dict[str, dict] = {}
    for context, test in ids.items():
        cls, _, method = test.qualname.rpartition(".")
        found = {}
        for realm in sorted(realms):
            same_file = [r for r in methods.get((realm, method), ())
                         if test.matches(r["path"], None)]
            hit = same_file[0] if len(same_file) == 1 else (
                None if same_file else _through_bases(realm, cls, method, test, classes,
                                                      members))
            if hit is not None:
                found[realm] = hit
        if found:
            out[context] = found
    return out


def _through_bases(realm, cls, method, test, classes, members, depth: int = 6) -> dict | None:
    name = cls.rpartition(".")[2]
    ran_on = [c for (r, _repo, n), rows in classes.items() if r == realm and n == name
              for c in rows]
    here = [c for c in ran_on if test.matches(c["path"], None) and c["qualname"] == cls]
    frontier = here or ran_on     # not defined in the test's file: imported there
    seen: set[tuple] = set()
    for _ in range(depth):
        frontier = [c for c in frontier if (c["repo"], c["path"], c["qualname"]) not in seen]
        seen |= {(c["repo"], c["path"], c["qualname"]) for c in frontier}
        hits = [m for c in frontier
                if (m := members.get((realm, c["repo"], c["path"], f"{c['qualname']}.{method}")))]
        if hits:
            return hits[0] if len(hits) == 1 else None
        frontier = [b for c in frontier for base in class_bases(c.get("signature") or "")
                    for b in _base_rows(classes, realm, c, base)]
        if not frontier:
            return None
    return None


def _base_rows(classes, realm, cls_row, base: str) -> list[dict]:
    """The classes a base name may be: the one of its file if it defines one, else every
    class of that name in its repo."""
    rows = classes.get((realm, cls_row["repo"], base), [])
    own = [r for r in rows if r["path"] == cls_row["path"]]
    return own or rows


def class_bases(signature: str) -> list[str]:
    """``class A(B, mod.C, Generic[T], metaclass=M)`` -> ["B", "C", "Generic"]."""
    head, paren, rest = signature.partition("(")
    if not paren or not head.lstrip().startswith("class "):
        return []
    inside, depth, parts, cur = rest.rpartition(")")[0], 0, [], ""
    for ch in inside:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in (p.strip() for p in parts):
        if not part or "=" in part or part.startswith("*"):
            continue
        out.append(part.split("[", 1)[0].rpartition(".")[2].strip())
    return [b for b in out if b.isidentifier()]


@dataclass
class Plan:
    rows: list[dict]
    test_files: list[str]
    files: int
    tests: int
    skipped: list[dict]
    skipped_contexts: list[dict]
    contexts: int
    import_rows: list[dict] = field(default_factory=list)   # functions seen run at import
    import_files: list[str] = field(default_factory=list)   # their files' import keys
    seen_rows: list[dict] = field(default_factory=list)     # every symbol's hash then

    @property
    def replace_keys(self) -> list[str]:
        """What the store swaps: the test files' edges and the import-time rows of the
        files this run imported outside every test."""
        return self.test_files + self.import_files


_PACKAGE = str(Path(__file__).resolve().parent) + "/"


def _own(path: str) -> bool:
    """A file of indexd itself (``-p indexd.pytest_plugin`` runs under the coverage it
    records): outside the realms, it is not the user's code to report as skipped."""
    return path.startswith(_PACKAGE)


def plan(store, settings, lines: dict[str, dict[int, list[str]]], data_file: str) -> Plan:
    skipped: list[dict] = []
    located: dict[tuple, dict[int, list[str]]] = {}
    for path in sorted(lines):
        try:
            for loc in _locations(settings, path):
                located[loc] = lines[path]
        except RealmError:
            if not _own(path):
                skipped.append({"path": path, "reason": "outside every realm"})
    entries = _entries(store, sorted({file_key(*loc) for loc in located}))
    for loc in sorted(located):
        if file_key(*loc) not in entries:
            skipped.append({"path": str(Path(loc[1]) / loc[2]), "realm": loc[0],
                            "reason": "not indexed"})
            del located[loc]
    contexts = {c for by_line in located.values() for cs in by_line.values() for c in cs if c.strip()}
    ids = {c: t for c in sorted(contexts) if (t := parse_context(c)) is not None}
    tests = _resolve_tests(store, {loc[0] for loc in located}, ids) if ids else {}
    tests, code = _tests_only(tests, ids)
    bad = [{"context": c, "reason": "not a test id (a static --context label?)"}
           for c in sorted(contexts - set(ids))]
    bad += [{"context": c, "reason": "test function not indexed"}
            for c in sorted(set(ids) - set(tests) - set(code))]
    bad += [{"context": c, "reason": f"names {where}, outside the test files (coverage's "
             "test_function context starts at any function named test*): what ran under "
             "it counts as run outside every test"} for c, where in sorted(code.items())]
    maps = {loc: line_map(entries[file_key(*loc)]) for loc in located}
    rows = _edges(located, maps, tests, data_file)
    imported, import_files = _import_time(located, maps, set(ids) - set(code))
    seen = _seen_rows(located, entries, _support(store, tests, located))
    import_files = sorted(set(import_files) | {r["src_file_key"] for r in seen})
    test_files = sorted({r["file_key"] for by_realm in tests.values() for r in by_realm.values()})
    n_tests = len({(r["file_key"], r["qualname"]) for t in tests.values() for r in t.values()})
    return Plan(rows, test_files, len(located), n_tests, skipped, bad, len(contexts),
                imported, import_files, seen)


def _edges(located, maps, tests, data_file: str) -> list[dict]:
    agg: dict[tuple, list] = {}
    for (realm, repo, rel), by_line in located.items():
        lines = maps[(realm, repo, rel)]
        for line, contexts in by_line.items():
            dst = lines.at(line)
            if dst is None:
                continue
            for context in contexts:
                test = tests.get(context, {}).get(realm)
                if test is None or (
                        test["file_key"] == dst["file_key"] and test["qualname"] == dst["qualname"]):
                    continue   # import-time lines, unknown tests, a test covering itself
                key = (realm, test["file_key"], test["qualname"], repo, rel, dst["qualname"])
                hit = agg.setdefault(key, [test, dst, repo, rel, set(), context])
                hit[4].add(line)   # parametrized runs of one test cover a line once
    now = time.time()
    return [{"src_file_key": test["file_key"], "realm": key[0], "src_repo": test["repo"],
             "src_path": test["path"], "src_symbol": test["qualname"],
             "src_hash": test["content_hash"], "dst_repo": repo, "dst_path": rel,
             "dst_symbol": None if dst["kind"] == "file" else dst["qualname"],
             "dst_hash": dst["content_hash"], "lines": len(n), "context": context,
             "how": "coverage", "ingested_at": now}
            for key, (test, dst, repo, rel, n, context) in sorted(agg.items(), key=lambda i: i[0])]


def _import_time(located, maps, test_ids: set[str]) -> tuple[list[dict], list[str]]:
    """Functions whose body ran outside every test (the empty context, or a static label:
    importing and collecting the test modules), one row each from their module's
    import (graph/coverage.py), stamped with the function's hash; and the import keys
    of the files this run saw run anything outside a test, whose rows it replaces."""
    agg: dict[tuple, list] = {}
    files: set[str] = set()
    for (realm, repo, rel), by_line in located.items():
        lines = maps[(realm, repo, rel)]
        for line, contexts in by_line.items():
            outside = next((c for c in contexts if c not in test_ids), None)
            if outside is None:
                continue
            files.add(import_key(file_key(realm, repo, rel)))
            row = lines.ran(line)
            if row is not None:
                hit = agg.setdefault((realm, repo, rel, row["qualname"]), [row, set(), outside])
                hit[1].add(line)
    now = time.time()
    return [{"src_file_key": import_key(file_key(realm, repo, rel)), "realm": realm,
             "src_repo": repo, "src_path": rel, "src_symbol": None, "src_hash": "",
             "dst_repo": repo, "dst_path": rel, "dst_symbol": qualname,
             "dst_hash": row["content_hash"], "lines": len(n), "context": context,
             "how": "coverage", "ingested_at": now}
            for (realm, repo, rel, qualname), (row, n, context) in sorted(agg.items())], \
        sorted(files)


def _support(store, tests: dict, located) -> dict[tuple, list[dict]]:
    """The entries of the recorded tests' folders and of every ``conftest.py`` of their
    repos, by (realm, repo, path): fixtures and helpers a run uses but a ``source``-limited
    measurement leaves out (graph/coverage.py's ``unchanged`` needs their text then)."""
    where: set[tuple] = set()
    for by_realm in tests.values():
        for realm, row in by_realm.items():
            folder = row["path"].rpartition("/")[0]
            where.add((realm, row["repo"], folder))
    out: dict[tuple, list[dict]] = {}
    for realm, repo, folder in sorted(where):
        # LIKE's `_` matches any character: a wider set of rows, never a missing one
        under = f"path LIKE {_sql(folder + '/%')}" if folder else "path IS NOT NULL"
        query = (f"realm = {_sql(realm)} AND repo = {_sql(repo)} AND "
                 f"({under} OR path LIKE '%conftest.py')")
        for row in store.entries_where(query, ["kind", "qualname", "content_hash", "path"]):
            if (realm, repo, row["path"]) not in located:
                out.setdefault((realm, repo, row["path"]), []).append(row)
    return out


def _seen_rows(located, entries, support: dict[tuple, list[dict]]) -> list[dict]:
    """The hash every symbol of a measured file, and of the tests' folders and conftest.py
    files, had at the ingest, one row each (``lines`` 0, no test): what lets
    graph/coverage.py tell that a test's chain to a change is the code that ran then."""
    now = time.time()
    files = [(loc, entries[file_key(*loc)], SEEN_LINES) for loc in sorted(located)]
    files += [(loc, rows, SUPPORT_LINES) for loc, rows in sorted(support.items())]
    return [{"src_file_key": import_key(file_key(realm, repo, rel)), "realm": realm,
             "src_repo": repo, "src_path": rel, "src_symbol": None, "src_hash": "",
             "dst_repo": repo, "dst_path": rel,
             "dst_symbol": None if row["kind"] == "file" else row["qualname"],
             "dst_hash": row["content_hash"], "lines": marker, "context": "",
             "how": "coverage", "ingested_at": now}
            for (realm, repo, rel), rows, marker in files for row in rows]


# -- the unit of work --------------------------------------------------------------

def _read(store, settings, data_file: str, cwd: str | None) -> tuple[dict, LcovRead | None]:
    """measured file -> line -> contexts, and the LCOV read's own report (None for
    coverage.py data). The format is told by content: LCOV is text, coverage.py SQLite."""
    if is_tracefile(data_file):
        lcov = read_tracefile(store, settings, data_file, cwd)
        return lcov.lines, lcov
    return read_data(data_file), None


def ingest(store, settings, data_file: str, cwd: str | None = None) -> dict:
    """Read, map and store one data file (coverage.py's or an LCOV tracefile); the
    report ``indexctl tests ingest`` prints. ``cwd``: where a relative SF: may start.

    The mapping reads entries and the write stamps their hashes: both under the
    store's writer mutex, so no indexing batch rewrites them in between."""
    lines, lcov = _read(store, settings, data_file, cwd)   # outside the mutex: the slow part
    with store.writer:
        p = plan(store, settings, lines, data_file)
        if lcov is not None:
            lcov.restore(p.rows)
            p.skipped[:0], p.skipped_contexts[:0] = lcov.skipped, lcov.skipped_contexts
        if p.replace_keys:
            store.replace_coverage(p.replace_keys, p.rows + p.import_rows + p.seen_rows)
        stale = CoverageIndex.load(store).counts()["stale"]
    log.info("coverage ingested file=%s files=%d tests=%d edges=%d skipped=%d", data_file,
             p.files, p.tests, len(p.rows), len(p.skipped))
    return {"data_file": data_file, "format": "coverage.py" if lcov is None else "lcov",
            "files": p.files, "tests": p.tests, "edges": len(p.rows),
            "import_time": len(p.import_rows),
            "contexts": p.contexts, "skipped": p.skipped,
            "skipped_contexts": p.skipped_contexts[:MAX_SKIPPED_CONTEXTS],
            "skipped_contexts_total": len(p.skipped_contexts),
            "replaced_test_files": len(p.test_files), "stale": stale}
