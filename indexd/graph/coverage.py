"""Coverage edges in the warm graph: the tests that really ran a symbol.

``indexctl tests ingest`` stores test -> covered symbol edges (how
"coverage") with the content hash both ends had then, and for each function
whose body ran outside every test (at import) a row from its module
(``src_symbol`` null, only the function's hash stamped): the tests importing
that module get it too (``import_run_tests``, over the static import graph). ``CoverageIndex``
holds them by covered file, with the current content hash of every symbol
of the files involved, so an edge whose test or target changed since the
ingest reads as stale: still listed, with lower confidence. ``merge_tests``
puts covering tests first in an impact answer; static "tests" edges stay
for symbols no ingest covered. Store reads go through the store handle.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from .impact import Visit, symbol_matches, via_json
from .model import Edge, node_label

log = logging.getLogger(__name__)

# Rows an ingest writes for every symbol of each measured file and of the tests' folders,
# with its hash then and no test (``lines`` 0): not runs, only what the code was then.
SEEN_LINES = 0
SUPPORT_LINES = -1     # the same for a file the run did not measure (a tests' folder's)
FRESH_CONFIDENCE = 1.0
# A stale edge is still evidence (the test ran this code before the edit) but
# weaker than a fresh one, and about as strong as a resolved static test edge
# two hops away (1.0 halved per hop in impact.combined).
STALE_CONFIDENCE = 0.4
IMPORT_WHY = "ran at import time (coverage)"


class CovEdge(NamedTuple):
    realm: str
    src_repo: str
    src_path: str
    src_symbol: str
    src_hash: str
    dst_repo: str
    dst_path: str
    dst_symbol: str | None
    dst_hash: str
    lines: int
    context: str


def _file_key(realm: str, repo: str, path: str) -> str:
    return f"{realm}\x1f{repo}\x1f{path}"   # model.file_key, without importing the model


def _sql_in(column: str, values) -> str:
    return f"{column} IN (" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def current_hashes(store, files) -> dict[tuple, dict[str | None, set[str]]]:
    """(realm, repo, path) -> symbol (None: the file) -> its content hashes, from the store:
    several where one name is defined more than once (``@overload`` stubs above the real
    ``def``, a function defined in both arms of an ``if``), any of which a line may count for."""
    keys = {_file_key(*f): f for f in files}
    out: dict[tuple, dict[str | None, set[str]]] = {f: {} for f in keys.values()}
    ordered = sorted(keys)
    for start in range(0, len(ordered), 300):
        rows = store.entries_where(_sql_in("file_key", ordered[start:start + 300]),
                                   ["file_key", "kind", "qualname", "content_hash"])
        for r in rows:
            symbol = None if r["kind"] == "file" else r["qualname"]
            out[keys[r["file_key"]]].setdefault(symbol, set()).add(r["content_hash"])
    return out


def import_key(file_key: str) -> str:
    """The source key of a file's import-time rows (apart from its tests' edges, so an
    ingest that imports a test file without running its tests keeps their edges)."""
    return file_key + "\x1fimport"


class CoverageIndex:
    def __init__(self, edges: list[CovEdge] = ()):
        self.measured: set[tuple] = set()    # files an ingest saw (realm, repo, path)
        self.support: set[tuple] = set()     # files only their symbols' hashes are of
        self.by_dst: dict[tuple, list[CovEdge]] = {}
        # a row with no source symbol: the function ran while its module was imported
        self.imports: dict[tuple, list[CovEdge]] = {}
        # (realm, repo, path, symbol) -> hashes it had at an ingest: covered symbols and
        # every symbol of the measured files and the tests' folders (SEEN_LINES rows)
        self.was: dict[tuple, set[str]] = {}
        self.recorded: dict[tuple, str] = {}     # each test that ran -> its hash then
        for e in edges:
            self.was.setdefault((e.realm, e.dst_repo, e.dst_path, e.dst_symbol),
                                set()).add(e.dst_hash)
            if e.src_symbol is None and e.lines in (SEEN_LINES, SUPPORT_LINES):
                if e.lines == SEEN_LINES:
                    self.measured.add((e.realm, e.dst_repo, e.dst_path))
                else:
                    self.support.add((e.realm, e.dst_repo, e.dst_path))
                continue
            into = self.by_dst if e.src_symbol is not None else self.imports
            into.setdefault((e.realm, e.dst_repo, e.dst_path), []).append(e)
            if e.src_symbol is not None:
                self.recorded[(e.realm, e.src_repo, e.src_path, e.src_symbol)] = e.src_hash
                self.measured.add((e.realm, e.dst_repo, e.dst_path))
        self.hashes: dict[tuple, dict[str | None, set[str]]] = {}
        self._changed: set[tuple] | None = None
        self._labels: dict[str, dict[str, tuple]] = {}

    @classmethod
    def load(cls, store) -> CoverageIndex:
        edges = [CovEdge(r["realm"], r["src_repo"], r["src_path"], r["src_symbol"], r["src_hash"],
                         r["dst_repo"], r["dst_path"], r["dst_symbol"], r["dst_hash"],
                         r["lines"] or 0, r["context"] or "")
                 for r in store.coverage_rows()]
        index = cls(edges)
        index.hashes = current_hashes(store, index.files())
        return index

    def files(self) -> set[tuple]:
        out = set(self.by_dst) | set(self.imports) | self.measured | self.support
        out |= {(e.realm, e.src_repo, e.src_path) for es in self.by_dst.values() for e in es}
        return out

    def refresh(self, store, keys) -> None:
        """New current hashes for the files among ``keys`` (after an indexing batch)."""
        involved = self.files() & {tuple(k) for k in keys}
        if involved:
            self.hashes.update(current_hashes(store, involved))
            self._changed = None

    def changed(self) -> set[tuple]:
        """Every node an ingest recorded whose text is not what it was then (or gone)."""
        if self._changed is None:
            self._changed = {n for n in (*self.was, *self.recorded) if not self.unchanged(n)}
        return self._changed

    def label_nodes(self, realm: str) -> dict[str, tuple]:
        """node_label -> node, for the nodes an ingest recorded in ``realm`` (kept: the
        recorded nodes change only with a new index, at the next ingest)."""
        if realm not in self._labels:
            labels: dict[str, tuple | None] = {}
            for n in {*self.was, *self.recorded}:
                if n[0] == realm:    # two repos of one name: the label is no one node
                    label = node_label(n[1], n[2], n[3])
                    labels[label] = n if labels.get(label, n) == n else None
            self._labels[realm] = labels
        return self._labels[realm]

    def is_stale(self, e: CovEdge) -> bool:
        dst = self.hashes.get((e.realm, e.dst_repo, e.dst_path), {})
        if e.src_symbol is None:    # an import-time run: only the function's own text counts
            return e.dst_hash not in dst.get(e.dst_symbol, ())
        src = self.hashes.get((e.realm, e.src_repo, e.src_path), {})
        return (e.src_hash not in src.get(e.src_symbol, ())
                or e.dst_hash not in dst.get(e.dst_symbol, ()))

    def unchanged(self, node: tuple) -> bool:
        """Is this symbol's text what an ingest recorded (covered, a test that ran, or any
        symbol of a measured file or a tests' folder)? Unknown is not unchanged."""
        realm, repo, path, symbol = node
        now = self.hashes.get((realm, repo, path), {}).get(symbol, ())
        return bool(now) and (bool(now & self.was.get(node, set()))
                              or self.recorded.get(node) in now)

    def edges_into(self, node: tuple) -> list[CovEdge]:
        """Edges landing on a node (realm, repo, path, symbol | None) or inside it."""
        realm, repo, path, symbol = node
        return [e for e in self.by_dst.get((realm, repo, path), ())
                if symbol_matches(symbol, e.dst_symbol)]

    def runs_at_import(self, node: tuple) -> list[CovEdge]:
        """Import-time runs of the functions a symbol node is or holds (a file: none;
        that its importers depend on it is the static graph's)."""
        realm, repo, path, symbol = node
        if symbol is None:
            return []
        return [e for e in self.imports.get((realm, repo, path), ())
                if symbol_matches(symbol, e.dst_symbol)]

    def counts(self) -> dict:
        edges = [e for es in (*self.by_dst.values(), *self.imports.values()) for e in es]
        return {"edges": len(edges), "stale": sum(self.is_stale(e) for e in edges)}


def covering_tests(index: CoverageIndex, seeds: list[tuple], kind_of=None) -> list[dict]:
    """One impact item per test that covered a seed (a fresh edge wins over a stale one);
    ``kind_of(node)``: the test's kind (function, method) as the graph knows it."""
    best: dict[tuple, dict] = {}
    for node in seeds:
        for e in index.edges_into(node):
            stale = index.is_stale(e)
            conf = STALE_CONFIDENCE if stale else FRESH_CONFIDENCE
            key = (e.realm, e.src_repo, e.src_path, e.src_symbol)
            prev = best.get(key)
            if prev is not None and prev["confidence"] >= conf:
                prev["lines"] += e.lines
                continue
            best[key] = {
                "realm": e.realm, "repo": e.src_repo, "path": e.src_path, "symbol": e.src_symbol,
                "kind": kind_of(key) if kind_of else "function", "distance": 1, "score": conf, "confidence": conf,
                "how": "coverage", "stale": stale, "lines": e.lines + (prev or {}).get("lines", 0),
                "via": [{"kind": "covers", "from": node_label(e.src_repo, e.src_path, e.src_symbol),
                         "to": node_label(e.dst_repo, e.dst_path, e.dst_symbol), "line": None,
                         "how": "coverage", "context": e.context}]}
    return sorted(best.values(), key=lambda t: (t["stale"], t["path"], t["symbol"] or ""))


def import_run_tests(index: CoverageIndex, seeds: list[tuple], tests_importing
                     ) -> tuple[list[dict], bool]:
    """One impact item per test file importing the module of a seed function coverage saw
    run at import (transitively, or below a conftest.py that does): it breaks with it;
    and whether that is all of them. ``tests_importing(modules)``: the graph's import
    walk (Graph.tests_importing) from file nodes, each with the Visit its chain starts
    from -> import_time.Found (``tests``: test file node -> Visit; ``stopped_at``: set
    when its budget cut it)."""
    starts: dict[tuple, tuple[Visit, CovEdge, bool]] = {}
    for node in seeds:
        for e in index.runs_at_import(node):
            stale = index.is_stale(e)
            conf = STALE_CONFIDENCE if stale else FRESH_CONFIDENCE
            module = (e.realm, e.dst_repo, e.dst_path, None)
            if module not in starts or starts[module][0].confidence < conf:
                run = Edge("import_time", e.dst_repo, e.dst_path, None, e.dst_repo, e.dst_path,
                           e.dst_symbol, 0, "coverage", 1.0, e.realm)
                starts[module] = (Visit(1, conf, [run]), e, stale)
    if not starts:
        return [], True
    out = []
    found = tests_importing({m: start[0] for m, start in starts.items()})
    for test, v in found.tests.items():
        _, e, stale = starts[(test[0], v.via[-1].src_repo, v.via[-1].src_path, None)]
        via = via_json(v.via)
        via[-1] |= {"line": None, "context": e.context, "why": IMPORT_WHY}
        out.append({"realm": test[0], "repo": test[1], "path": test[2], "symbol": None,
                    "kind": "file", "distance": v.distance, "score": round(v.path_score, 4),
                    "confidence": v.confidence, "how": "coverage", "stale": stale,
                    "lines": e.lines, "why": IMPORT_WHY, "via": via})
    return sorted(out, key=lambda t: (t["stale"], t["path"])), found.stopped_at is None


def unimported_runs(index: CoverageIndex, seeds: list[tuple], observed: list[dict]) -> list[str]:
    """Labels of the modules of seed functions coverage saw run outside every test that
    no test file imports (``observed``, from ``observed_tests``, holds no import-time
    test from them): loaded by name (``importlib.import_module``, a plugin registry), so
    any test may run them unseen. markdown's generated legacy tests run its extensions,
    named in strings, in the empty context."""
    modules = {node_label(e.dst_repo, e.dst_path, None)
               for s in seeds for e in index.runs_at_import(s)}
    started = {t["via"][-1]["from"] for t in observed if t.get("why") == IMPORT_WHY and t["via"]}
    return sorted(modules - started)


def observed_tests(index: CoverageIndex, seeds: list[tuple], kind_of, tests_importing
                   ) -> tuple[list[dict], bool]:
    """The tests coverage saw run a seed, then the test files that import a module it
    saw run one on import and are not listed already; and whether the import walk
    listed all of those (False: it stopped at its budget)."""
    covered = covering_tests(index, seeds, kind_of)
    listed = {(t["repo"], t["path"]) for t in covered}
    imported, exact = import_run_tests(index, seeds, tests_importing)
    return covered + [t for t in imported if (t["repo"], t["path"]) not in listed], exact


def rule_out(index: CoverageIndex, result: dict, seeds: list[tuple], kind_of,
             changing: list[tuple] = (), spawns=lambda realm, repo, path: False,
             writes=lambda node: False) -> list[str]:
    """Drop from ``result["tests"]`` the static tests coverage shows never ran the change;
    their labels. A test goes only when all of this holds: the change is a function or
    method of a file the ingest measured; the test ran in that ingest and did not run it
    (a fixture or a test module's own code: the change never ran outside a test either),
    and its file starts no other Python (``spawns``: a subprocess runs code coverage did not
    see: click's test_imports.py runs ``click.echo`` in a child interpreter);
    every symbol on the test's chain to it is what the ingest recorded; and nothing the
    ingest recorded has changed since, but the change itself (``seeds`` and ``changing``,
    the other symbols of the same diff, with what holds them); and the change never ran
    outside a test nor stores into module-level state (``writes``). Then the run that recorded
    the test is the same code as now on every path that could reach the change, and it
    did not: jinja2's tests each build an Environment, which reads the registry holding
    every filter, yet a broken filter fails only the tests that use it."""
    if not seeds or not index.recorded:
        return []
    if any(kind_of(s) not in ("function", "method") or s[:3] not in index.measured
           for s in seeds):
        return []
    allowed = [*seeds, *changing]
    if not all(_holds_a_change(n, allowed) for n in index.changed()):
        return []
    # Code that ran outside every test (at import, in a fixture's setup or teardown, at
    # garbage collection) may run during any test: no test is ruled out for it. Nor for a
    # change that stores into module-level state, which a later test reads without running
    # it: humanize's i18n.deactivate resets the active locale; broken, it failed
    # test_number.py and test_time.py after test_i18n.py, neither of which ran it.
    if any(index.runs_at_import(s) or writes(s) for s in seeds):
        return []
    ran = {(e.realm, e.src_repo, e.src_path, e.src_symbol)
           for s in seeds for e in index.edges_into(s)}
    ends = {node_label(s[1], s[2], s[3]) for s in seeds}
    kept, out = [], []
    for t in result.get("tests", []):
        node = (t["realm"], t["repo"], t["path"], t.get("symbol"))
        if (t.get("via") and node not in ran and not spawns(t["realm"], t["repo"], t["path"])
                and (node in index.recorded or not _a_test(t.get("symbol")))
                and index.unchanged(node)
                and _chain_unchanged(index, t, ends)):
            out.append(node_label(t["repo"], t["path"], t.get("symbol")))
        else:
            kept.append(t)
    result["tests"] = kept
    if "tests_total" in result:
        result["tests_total"] -= len(out)
    return out


def _a_test(symbol: str | None) -> bool:
    """A test function or method by pytest's names: one the ingest did not record was not
    run (deselected, a partial run), so its absence says nothing."""
    return bool(symbol) and symbol.rpartition(".")[2].startswith("test")


def _holds_a_change(node: tuple, allowed: list[tuple]) -> bool:
    """Is ``node`` one of the changes, or the file or class holding one?"""
    realm, repo, path, symbol = node
    return any(a[1:3] == (repo, path) and a[0] in (realm, None) and (
        symbol is None or a[3] == symbol or (a[3] or "").startswith(symbol + "."))
        for a in allowed)


def _chain_unchanged(index: CoverageIndex, test: dict, ends: set[str]) -> bool:
    known = index.label_nodes(test["realm"])
    me = node_label(test["repo"], test["path"], test.get("symbol"))
    for hop in test["via"]:
        for label in (hop.get("from"), hop.get("to")):
            if label in ends or label == me:
                continue
            node = known.get(label)
            if node is None or not index.unchanged(node):
                return False
    return True


def set_tests(result: dict, tests: list[dict], added: int) -> None:
    """``tests`` as the answer's list, cut at its ``limit``, with ``tests_total`` (grown by
    ``added``) and the truncation flags kept in step."""
    limit = result.get("limit")
    result["tests"] = tests[:limit] if limit else tests
    if "tests_total" in result:
        result["tests_total"] += added
        # a walk stopped by its budget (tests_total_exact false) may have missed more
        result["tests_truncated"] = (result["tests_total"] > len(result["tests"])
                                     or result.get("tests_total_exact") is False)
        if "truncated" in result:
            result["truncated"] = bool(result["truncated"] or result["tests_truncated"])


def merge_tests(result: dict, covered: list[dict], ruled_out: list[str] = ()) -> dict:
    """Covering tests first in ``tests``, then static ones they do not repeat.

    Says where the tests came from (``tests_from``: coverage, static or none)
    and how many of each (``tests_counts``); keeps ``tests_total`` (the bounded
    lists' count, when the answer has one) in step."""
    seen = {(t["repo"], t["path"], t["symbol"]) for t in covered}
    shown = result.get("tests", [])
    static = [{**t, "how": t.get("how") or (t["via"][0]["how"] if t.get("via") else None)}
              for t in shown if (t["repo"], t["path"], t.get("symbol")) not in seen]
    set_tests(result, covered + static, len(covered) - (len(shown) - len(static)))
    result["tests_from"] = "coverage" if covered else "static" if static else "none"
    result["tests_counts"] = {"coverage": len(covered),
                              "stale": sum(t["stale"] for t in covered), "static": len(static),
                              "ruled_out": len(ruled_out)}
    result["tests_ruled_out"] = list(ruled_out)
    return result
