"""Walking and scoring the graph: pure functions behind Graph.impact/deps.

``walk`` is a best-first walk to a depth over whatever edges the caller's
``step(node)`` yields (edges into a node for impact, out of it for deps): it
expands nodes in order of their best path's score (the product of its edges'
confidences, halved per hop after the first: the path half of ``combined``),
keeping per node the fewest hops to it and the best path. Without a
``budget`` it reaches every node within the depth, like a breadth-first walk;
with one it stops after examining that many edges (the seeds' own edges are
always examined), so a hub's answer costs the budget, not the graph: what it
left out scores at most ``Walk.stopped_at`` on its path half, and the lists'
totals are lower bounds. ``rank`` scores the visited subgraph with personalised
PageRank from the seeds, edge weight = kind weight x resolution confidence, so
nodes reached by many strong paths (fan-in) rise; the final score averages that
with the best path's score (``combined``). Confidence per edge: resolved 1.0,
inferred 0.9, name_match 0.15 x name weight, git its co-change confidence, link 0.8.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

from .model import Edge, is_test_module, node_label

KIND_WEIGHT = {"imports": 1.0, "calls": 1.0, "references": 0.9, "tests": 1.0, "package": 0.9,
               "documents": 0.7, "config": 0.8, "co_change": 0.6}
DAMPING = 0.85
ITERATIONS = 30
# the tests bucket's trusted reach (tests_walk): what it follows, and a guard on hops
TESTS_HOW = ("resolved", "inferred", "coverage")
TESTS_KINDS = ("calls", "references", "imports", "tests", "import_time")
TESTS_DEPTH = 64

Node = tuple  # (realm, repo, path, symbol | None)


# the confidences that do not depend on an edge's weight: one dict look-up per edge
# in the walk's inner loop instead of a call (``confidence`` has the others)
_FIXED_CONFIDENCE = {"resolved": 1.0, "coverage": 1.0, "inferred": 0.9, "link": 0.8}


def confidence(e: Edge) -> float:
    if e.how in ("resolved", "coverage"):
        return 1.0
    # Calibrated on bench/edge_precision.py's labelled stdlib sample (docs/benchmarks.md):
    # inferred 40 of 40 right, name_match 15% (its weight ranks them: 0.6 -> 3 of 5).
    if e.how == "inferred":     # self/cls/super() through the class and its bases
        return 0.9
    if e.how == "name_match":
        return min(1.0, 0.15 * e.weight)
    if e.how == "git":
        return min(1.0, e.weight)
    if e.how == "link":
        return 0.8
    return 0.5


@dataclass(slots=True)
class Visit:
    distance: int                               # fewest hops from a seed
    confidence: float                           # of the best path (``via``)
    via: list = field(default_factory=list)     # edges, from this node back to a seed

    @property
    def path_score(self) -> float:
        return self.confidence * 0.5 ** max(0, len(self.via) - 1)


@dataclass
class Walk:
    visits: dict
    traversed: dict                 # (from_node, to_node) -> best edge weight
    scores: dict = field(default_factory=dict)   # node -> its visit's path_score, kept at hand
    edges: int = 0                  # edges examined
    budget: int | None = None
    stopped_at: float | None = None  # cut: what was not reached scores at most this
    guesses_cut: bool = False       # tests walk: its walk from name matches hit its budget
    untyped_unreached: list = field(default_factory=list)   # Graph._add_one_guess_tests

    @property
    def exhaustive(self) -> bool:
        return self.stopped_at is None

    def summary(self) -> dict:
        return {"exhaustive": self.exhaustive, "edges_examined": self.edges,
                "edge_budget": self.budget, "stopped_at_score":
                    None if self.stopped_at is None else round(self.stopped_at, 4),
                "guesses_exhaustive": not self.guesses_cut}


def walk(seeds: list[Node], step, depth: int, kinds=None, reverse: bool = True,
         budget: int | None = None, hows=None, starts: dict | None = None) -> Walk:
    """Best-first to ``depth`` (see the module docstring). A node is expanded again
    only when reached in fewer hops, which can reach further within ``depth``.
    ``hows``: follow only edges found so (the others still count against the budget).
    ``starts``: node -> Visit, seeds already some way from the first ones (the walk
    goes on from their paths; ``seeds`` is then ignored)."""
    starts = starts or {s: Visit(0, 1.0) for s in dict.fromkeys(seeds)}
    visits = {s: Visit(v.distance, v.confidence, list(v.via)) for s, v in starts.items()}
    w = Walk(visits, {}, {s: v.path_score for s, v in visits.items()}, budget=budget)
    kinds, hows = frozenset(kinds or ()), frozenset(hows or ())   # per-edge membership tests
    # equal scores in the order answers list them (path, symbol): a cut tie keeps the
    # same first ones as the exhaustive answer
    heap = [(-w.scores[s], s[2], s[3] or "", i, v.distance, s)
            for i, (s, v) in enumerate(visits.items())]
    heapq.heapify(heap)
    expanded: dict[Node, int] = {}   # node -> fewest hops it was expanded at
    seq = len(heap)
    while heap:
        neg, _, _, _, hops, node = heapq.heappop(heap)
        if expanded.get(node, depth) <= hops:
            continue
        if budget is not None and hops > 0 and w.edges >= budget:
            w.stopped_at = -neg * 0.5   # what it would have found scores at most this
            break
        expanded[node] = hops
        for other, d in _expand(w, node, hops, step(node), kinds, reverse,
                                None if hops == 0 else budget, hows):
            if d < depth:
                heapq.heappush(heap, (-w.scores[other], other[2], other[3] or "", seq, d, other))
                seq += 1
        if w.stopped_at is not None:
            break
    return w


def _expand(w: Walk, node: Node, hops: int, edges, kinds, reverse: bool, budget, hows=None):
    """Record ``node``'s edges; yields (other, hops) for each node whose best path
    or fewest hops just improved (worth expanding). Sets ``w.stopped_at`` when the
    budget runs out in the middle."""
    here = w.visits[node]
    visits, scores, kind_weight, fixed = w.visits, w.scores, KIND_WEIGHT.get, _FIXED_CONFIDENCE.get
    d, hop = hops + 1, 0.5 ** len(here.via)   # a path through here: len(via) + 1 hops
    budget = float("inf") if budget is None else budget
    # this loop is most of a walk: the count is a local (written back before each yield
    # and at the end), and node's pairs gather keyed by their other end alone (cheaper
    # to hash than both), joining ``traversed`` at the end in the order they came
    examined, mine = w.edges, {}
    try:
        for e in edges:
            kind, s_repo, s_path, s_sym, d_repo, d_path, d_sym, _, how, _, realm, _ = e
            if kinds and kind not in kinds:
                continue
            if examined >= budget:
                w.stopped_at = scores[node] * 0.5
                return
            examined += 1
            if hows and how not in hows:
                continue
            other = (realm, s_repo, s_path, s_sym) if reverse else (realm, d_repo, d_path, d_sym)
            conf = fixed(how)
            if conf is None:
                conf = confidence(e)
            weight = kind_weight(kind, 0.5) * conf
            if mine.get(other, 0.0) < weight:
                mine[other] = weight
            c = here.confidence * conf
            seen = visits.get(other)
            if seen is None:
                visits[other], scores[other] = Visit(d, c, [e] + here.via), c * hop
                w.edges = examined
                yield other, d
            elif seen.distance > 0:
                fewer = d < seen.distance
                if c * hop > scores[other]:
                    seen.confidence, seen.via, scores[other] = c, [e] + here.via, c * hop
                    fewer = True
                if fewer:
                    seen.distance = min(seen.distance, d)
                    w.edges = examined
                    yield other, d
    finally:
        w.edges, traversed = examined, w.traversed
        for other, weight in mine.items():
            if traversed.get((node, other), 0.0) < weight:
                traversed[(node, other)] = weight


def tests_walk(seeds: list[Node], step, budget: int | None, kinds=None,
               starts: dict | None = None, known=None) -> Walk:
    """The tests bucket's own reach: up trusted edges only (``TESTS_HOW``) to any depth
    (``TESTS_DEPTH`` is a guard, not a policy), best paths first, stopped by ``budget``
    (edges examined), not by hops. Real chains from a test to what it breaks run 4-15
    hops (click: ``runner.invoke`` -> ``main`` -> ``make_context`` -> ``parse_args`` ...);
    a name match is a guess, and a chain of guesses reaches everything, so name
    matches count only within impact's own depth (and once more: ``guess_seeds``). A
    module's own code (a file node reached by a module-level call) is not walked up:
    what runs at import is import_time.py's, which follows the importers instead; but a
    JavaScript test module is walked up to the test modules requiring it.
    ``known``: nodes an earlier walk expanded, not expanded again (it found what is
    above them)."""
    seed_set = set(starts or seeds)
    known = known or {}

    def trusted_step(node: Node):
        if node in known and node not in seed_set:
            return ()
        if node[3] is None and node not in seed_set:
            # a JavaScript test module's checks run when it is required: a test module
            # requiring it (Node's events: tests/index.js requires every test) runs them
            if not runs_when_required(node[2]):
                return ()
            return [e for e in step(node) if e.kind == "imports" and is_test_module(e.src_path)]
        return step(node)

    wanted = [k for k in TESTS_KINDS if kinds is None or k in kinds]
    return walk(seeds, trusted_step, TESTS_DEPTH, wanted, reverse=True, budget=budget,
                hows=TESTS_HOW, starts=starts)


JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")


def runs_when_required(path: str) -> bool:
    """A JavaScript/TypeScript test module: its checks run at import (tape, node's own
    tests), so whatever requires it runs them too."""
    return path.endswith(JS_SUFFIXES) and is_test_module(path)


def guess_seeds(deep: Walk, step, kinds=None) -> dict:
    """Where one name match leaves the trusted reach: for each symbol the tests walk
    reached, the sources of name-match edges into it that the walk did not reach, each
    with its best path (the guess, then the trusted chain back to a seed). A tests walk
    from them (``starts``) finds the tests one guess away: on the seven projects of
    bench/impact_vs_tests.py, restricting the guess to rare names (weight >= 0.3) or to
    the seed's own callers lost recall for little less selection (docs/benchmarks.md)."""
    wanted = frozenset(kinds or TESTS_KINDS)
    out: dict = {}
    for node, here in deep.visits.items():
        if node[3] is None:
            continue
        for e in step(node):
            if e.how != "name_match" or e.kind not in wanted:
                continue
            src = (e.realm, e.src_repo, e.src_path, e.src_symbol)
            if src in deep.visits:
                continue
            c = here.confidence * confidence(e)
            seen = out.get(src)
            if seen is None or c > seen.confidence:
                out[src] = Visit(here.distance + 1, c, [e] + here.via)
    return out


def rank(seeds: list[Node], traversed: dict[tuple[Node, Node], float],
         nodes=None) -> dict[Node, float]:
    """Personalised PageRank over the walked subgraph, normalised to max 1.
    ``nodes``: every node of ``traversed``, the seeds first (a walk's ``visits``):
    the node ids then come from it and the pairs' arrays are built without a Python
    loop (a hub's depth 3 has ~7,000 pairs). The ids' order changes no score: each
    node's sums run in the pairs' order either way."""
    import numpy as np

    if nodes is None:
        return _rank_arrays(np, seeds, *_pairs_numbered(np, seeds, traversed))
    ids: dict[Node, int] = {s: i for i, s in enumerate(nodes)}
    get, n = ids.__getitem__, len(traversed)
    src = np.fromiter(map(get, map(itemgetter(0), traversed)), np.intp, n)
    dst = np.fromiter(map(get, map(itemgetter(1), traversed)), np.intp, n)
    w = np.fromiter(traversed.values(), float, n)
    keep = src != dst   # a node's edges to itself carry no rank
    return _rank_arrays(np, seeds, ids, src[keep], dst[keep], w[keep])


def _pairs_numbered(np, seeds, traversed):
    ids: dict[Node, int] = {s: i for i, s in enumerate(dict.fromkeys(seeds))}
    pairs = [(ids.setdefault(a, len(ids)), ids.setdefault(b, len(ids)), w)
             for (a, b), w in traversed.items() if a != b]
    if not pairs:
        return ids, np.array([], np.intp), np.array([], np.intp), np.array([])
    src, dst, w = (np.array(x) for x in zip(*pairs))
    return ids, src, dst, w


def _rank_arrays(np, seeds, ids: dict, src, dst, w) -> dict[Node, float]:
    n = len(ids)
    pers = np.zeros(n)
    pers[:len(set(seeds))] = 1.0 / max(1, len(set(seeds)))
    if not len(src):
        return {node: float(pers[i]) for node, i in ids.items() if pers[i]}
    out_w = np.bincount(src, weights=w, minlength=n)
    norm = w / out_w[src]
    score, restart = pers.copy(), (1 - DAMPING) * pers   # the same every iteration
    for _ in range(ITERATIONS):
        score = restart + DAMPING * np.bincount(dst, weights=score[src] * norm, minlength=n)
    mask = pers == 0
    top = float(score[mask].max()) if mask.any() else 1.0
    top = top or 1.0
    return dict(zip(ids, np.minimum(1.0, score / top).tolist()))


def via_json(edges: list[Edge]) -> list[dict]:
    return [{"kind": e.kind, "from": _label(e.src_repo, e.src_path, e.src_symbol),
             "to": _label(e.dst_repo, e.dst_path, e.dst_symbol), "line": e.line,
             "how": e.how} for e in edges]


@lru_cache(maxsize=65536)
def _label(repo: str, path: str, symbol: str | None) -> str:
    """``node_label`` (a pathlib call) once per node: a hub's answer names ~1000."""
    return node_label(repo, path, symbol)


def combined(ppr: float, visit: Visit) -> float:
    """Final score: half PageRank (fan-in), half the best path's score."""
    return 0.5 * ppr + 0.5 * visit.path_score


def item(node: Node, visit: Visit, ppr: float, kind: str) -> dict:
    realm, repo, path, symbol = node
    return {"realm": realm, "repo": repo, "path": path, "symbol": symbol, "kind": kind,
            "distance": visit.distance, "score": round(combined(ppr, visit), 4),
            "confidence": round(visit.confidence, 4), "via": via_json(visit.via)}


def symbol_matches(wanted: str | None, symbol: str | None) -> bool:
    """Does an edge end ``symbol`` land on node symbol ``wanted`` (or inside it)?"""
    if wanted is None:
        return True
    return symbol is not None and (symbol == wanted or symbol.startswith(wanted + "."))


def bounded(name: str, rows: list, limit: int | None, distances=None,
            exact: bool | None = None) -> dict:
    """``rows[:limit]`` as ``name``, next to how many exist (``name_total``) and
    whether some were cut (``name_truncated``); with ``distances`` (one per row)
    how many exist at each distance too, so a reader can say what was left out
    of each group. ``limit`` None: all. ``exact`` (when given) says whether the
    rows are all there are (``name_total_exact``): False after a walk stopped by
    its budget, when the total and the per-distance counts are lower bounds and
    the list counts as truncated."""
    shown = rows if limit is None else rows[:limit]
    out = {name: shown, f"{name}_total": len(rows),
           f"{name}_truncated": len(shown) < len(rows) or exact is False}
    if exact is not None:
        out[f"{name}_total_exact"] = exact
    if distances is not None:
        counts = Counter(distances)   # a hub's list has thousands: one str() a distance
        out[f"{name}_by_distance"] = {str(d): counts[d] for d in sorted(counts)}
    return out


def any_truncated(answer: dict) -> bool:
    return any(v is True for k, v in answer.items() if k.endswith("_truncated"))
