"""Coverage edges in the warm graph: the tests that really ran a symbol.

``indexctl tests ingest`` stores test -> covered symbol edges (how
"coverage") with the content hash both ends had then. ``CoverageIndex``
holds them by covered file, with the current content hash of every symbol
of the files involved, so an edge whose test or target changed since the
ingest reads as stale: still listed, with lower confidence. ``merge_tests``
puts covering tests first in an impact answer; static "tests" edges stay
for symbols no ingest covered. Store reads go through the store handle.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from .impact import symbol_matches
from .model import node_label

log = logging.getLogger(__name__)

FRESH_CONFIDENCE = 1.0
# A stale edge is still evidence (the test ran this code before the edit) but
# weaker than a fresh one, and about as strong as a resolved static test edge
# two hops away (1.0 halved per hop in impact.combined).
STALE_CONFIDENCE = 0.4


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


class CoverageIndex:
    def __init__(self, edges: list[CovEdge] = ()):
        self.by_dst: dict[tuple, list[CovEdge]] = {}
        for e in edges:
            self.by_dst.setdefault((e.realm, e.dst_repo, e.dst_path), []).append(e)
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
        out = set(self.by_dst)
        out |= {(e.realm, e.src_repo, e.src_path) for es in self.by_dst.values() for e in es}
        return out

    def refresh(self, store, keys) -> None:
        """New current hashes for the files among ``keys`` (after an indexing batch)."""
        involved = self.files() & {tuple(k) for k in keys}
        if involved:
            self.hashes.update(current_hashes(store, involved))

    def is_stale(self, e: CovEdge) -> bool:
        src = self.hashes.get((e.realm, e.src_repo, e.src_path), {})
        dst = self.hashes.get((e.realm, e.dst_repo, e.dst_path), {})
        return src.get(e.src_symbol) != e.src_hash or dst.get(e.dst_symbol) != e.dst_hash

    def edges_into(self, node: tuple) -> list[CovEdge]:
        """Edges landing on a node (realm, repo, path, symbol | None) or inside it."""
        realm, repo, path, symbol = node
        return [e for e in self.by_dst.get((realm, repo, path), ())
                if symbol_matches(symbol, e.dst_symbol)]

    def counts(self) -> dict:
        edges = [e for es in self.by_dst.values() for e in es]
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
