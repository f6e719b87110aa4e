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


def current_hashes(store, files) -> dict[tuple, dict[str | None, str]]:
    """(realm, repo, path) -> symbol (None: the file) -> content hash, from the store."""
    keys = {_file_key(*f): f for f in files}
    out: dict[tuple, dict[str | None, str]] = {f: {} for f in keys.values()}
    ordered = sorted(keys)
    for start in range(0, len(ordered), 300):
        rows = store.entries_where(_sql_in("file_key", ordered[start:start + 300]),
                                   ["file_key", "kind", "qualname", "content_hash"])
        for r in rows:
            symbol = None if r["kind"] == "file" else r["qualname"]
            out[keys[r["file_key"]]].setdefault(symbol, r["content_hash"])
    return out


def import_key(file_key: str) -> str:
    """The source key of a file's import-time rows (apart from its tests' edges, so an
    ingest that imports a test file without running its tests keeps their edges)."""
    return file_key + "\x1fimport"


class CoverageIndex:
    def __init__(self, edges: list[CovEdge] = ()):
        self.by_dst: dict[tuple, list[CovEdge]] = {}
        # a row with no source symbol: the function ran while its module was imported
        self.imports: dict[tuple, list[CovEdge]] = {}
        for e in edges:
            into = self.by_dst if e.src_symbol is not None else self.imports
            into.setdefault((e.realm, e.dst_repo, e.dst_path), []).append(e)
        self.hashes: dict[tuple, dict[str | None, str]] = {}

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
        out = set(self.by_dst) | set(self.imports)
        out |= {(e.realm, e.src_repo, e.src_path) for es in self.by_dst.values() for e in es}
        return out

    def refresh(self, store, keys) -> None:
        """New current hashes for the files among ``keys`` (after an indexing batch)."""
        involved = self.files() & {tuple(k) for k in keys}
        if involved:
            self.hashes.update(current_hashes(store, involved))

    def is_stale(self, e: CovEdge) -> bool:
        dst = self.hashes.get((e.realm, e.dst_repo, e.dst_path), {})
        if e.src_symbol is None:    # an import-time run: only the function's own text counts
            return dst.get(e.dst_symbol) != e.dst_hash
        src = self.hashes.get((e.realm, e.src_repo, e.src_path), {})
        return src.get(e.src_symbol) != e.src_hash or dst.get(e.dst_symbol) != e.dst_hash

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


def observed_tests(index: CoverageIndex, seeds: list[tuple], kind_of, tests_importing
                   ) -> tuple[list[dict], bool]:
    """The tests coverage saw run a seed, then the test files that import a module it
    saw run one on import and are not listed already; and whether the import walk
    listed all of those (False: it stopped at its budget)."""
    covered = covering_tests(index, seeds, kind_of)
    listed = {(t["repo"], t["path"]) for t in covered}
    imported, exact = import_run_tests(index, seeds, tests_importing)
    return covered + [t for t in imported if (t["repo"], t["path"]) not in listed], exact


def merge_tests(result: dict, covered: list[dict]) -> dict:
    """Covering tests first in ``tests``, then static ones they do not repeat.

    Says where the tests came from (``tests_from``: coverage, static or none)
    and how many of each (``tests_counts``); keeps ``tests_total`` (the bounded
    lists' count, when the answer has one) in step."""
    seen = {(t["repo"], t["path"], t["symbol"]) for t in covered}
    shown = result.get("tests", [])
    static = [{**t, "how": t.get("how") or (t["via"][0]["how"] if t.get("via") else None)}
              for t in shown if (t["repo"], t["path"], t.get("symbol")) not in seen]
    limit = result.get("limit")
    merged = covered + static
    result["tests"] = merged[:limit] if limit else merged
    if "tests_total" in result:
        result["tests_total"] += len(covered) - (len(shown) - len(static))
        # a walk stopped by its budget (tests_total_exact false) may have missed more
        result["tests_truncated"] = (result["tests_total"] > len(result["tests"])
                                     or result.get("tests_total_exact") is False)
        if "truncated" in result:
            result["truncated"] = bool(result["truncated"] or result["tests_truncated"])
    result["tests_from"] = "coverage" if covered else "static" if static else "none"
    result["tests_counts"] = {"coverage": len(covered),
                              "stale": sum(t["stale"] for t in covered), "static": len(static)}
    return result
