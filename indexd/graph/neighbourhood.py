"""The graph around some seeds, ranked by a weighted personalised PageRank (context packs).

``neighbourhood(graph, seeds)`` walks from the seeds (search hits and the
files an agent names, each with a weight) both ways to ``depth``: edges into
them (callers, importers, tests, docs) and out of them (callees, what they
import), with ``impact.walk`` and its edge budget, so a hub costs the budget,
not the graph. The walked edges are taken as undirected (a callee matters to
the task as much as a caller) with weight = kind weight x confidence, and
``pagerank`` runs a power iteration from the seeds' weights: nodes reached by
many strong edges from strong seeds rise (Aider's repo map ranks its def/ref
graph the same way). Each node keeps the edge that first links it towards a
seed, which becomes the item's ``why``.

Pure over a ``Graph`` the caller holds the lock of; numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

from .impact import DAMPING, walk
from .model import Edge, is_test_path, node_label

ITERATIONS = 40
WALK_EDGES = 3000   # per direction: ~ms on the stdlib (bench/context_quality.py)

Node = tuple  # (realm, repo, path, symbol | None)

# How a neighbour relates to the node it was reached from, per edge kind and
# direction: "in" = the neighbour's edge lands on the node (it calls, imports...).
_IN = {"calls": "calls", "references": "references", "imports": "imports",
       "tests": "tests", "documents": "documents", "config": "configures",
       "co_change": "changes together with", "package": "is a package of",
       "import_time": "runs on import"}
_OUT = {"calls": "called by", "references": "referenced by", "imports": "imported by",
        "tests": "tested by", "documents": "documented by", "config": "configured by",
        "co_change": "changes together with", "package": "package of",
        "import_time": "run on import by"}


@dataclass
class Ranked:
    node: Node
    score: float                 # PageRank, summing to 1 over the walked nodes
    distance: int                # fewest hops from a seed (0: a seed)
    edge: Edge | None = None     # the first edge of its best path towards a seed
    direction: str = ""          # "in": the node is the edge's source; "out": its target
    seed: Node | None = None     # where that path ends

    def why(self) -> str:
        """``calls  pkg/mod.py::f (resolved)``, naming the seed when it is further away."""
        if self.edge is None:
            return ""
        e = self.edge
        verb = (_IN if self.direction == "in" else _OUT).get(e.kind, e.kind)
        other = ((e.dst_repo, e.dst_path, e.dst_symbol) if self.direction == "in"
                 else (e.src_repo, e.src_path, e.src_symbol))
        text = f"{verb} {node_label(*other)} ({e.how}"
        text += f", line {e.line})" if e.line else ")"
        if self.distance > 1 and self.seed is not None:
            text += f", {self.distance} hops from {node_label(*self.seed[1:])}"
        return text


def known_node(graph, node: Node) -> Node | None:
    """``node`` as the graph knows it: the symbol when the file defines it, else
    the file; None for a file the graph lacks."""
    f = graph.facts.get(node[:3])
    if f is None:
        return None
    if node[3] and any(d.qualname == node[3] for d in f.defs):
        return node
    return node[:3] + (None,)


def neighbourhood(graph, seeds: dict[Node, float], depth: int = 2,
                  budget: int = WALK_EDGES) -> list[Ranked]:
    """Seeds and their neighbours, best first. ``seeds``: node -> weight (> 0)."""
    seeds = {n: w for n, w in seeds.items() if w > 0}
    known = [n for n in seeds if n[:3] in graph.facts]
    ins = walk(known, graph._incoming, depth, reverse=True, budget=budget)
    outs = walk(known, graph._outgoing, depth, reverse=False, budget=budget)
    edges: dict[tuple, float] = {}
    for (a, b), w in list(ins.traversed.items()) + list(outs.traversed.items()):
        if a != b:
            key = (a, b) if _order(a) < _order(b) else (b, a)   # undirected: one weight a pair
            edges[key] = max(edges.get(key, 0.0), w)
    scores = pagerank(seeds, edges)
    out = []
    for node, score in scores.items():
        out.append(_ranked(node, score, node in seeds, ins, outs))
    out.sort(key=lambda r: (-r.score, r.distance, r.node[2], r.node[3] or ""))
    return out


def _order(node: Node) -> tuple:
    return node[:3] + (node[3] or "",)   # a file (symbol None) before its symbols


def _ranked(node: Node, score: float, is_seed: bool, ins, outs) -> Ranked:
    """The node with the nearer of its two walks' paths (callers first on a tie)."""
    r = Ranked(node, score, 0)
    if is_seed:
        return r
    paths = [(v.distance, d, v) for d, w in (("in", ins), ("out", outs))
             if (v := w.visits.get(node)) is not None and v.via]
    if not paths:
        return r
    r.distance, r.direction, v = min(paths, key=lambda p: (p[0], p[1]))
    r.edge, last = v.via[0], v.via[-1]
    r.seed = ((last.realm, last.dst_repo, last.dst_path, last.dst_symbol) if r.direction == "in"
              else (last.realm, last.src_repo, last.src_path, last.src_symbol))
    return r


def pagerank(seeds: dict[Node, float], edges: dict[tuple, float]) -> dict[Node, float]:
    """Personalised PageRank over undirected weighted ``edges`` ((a, b) -> w),
    restarting at the seeds in proportion to their weights; a node without
    edges hands its rank back to the seeds, so none leaks out and the ranks sum to 1."""
    import numpy as np

    ids: dict[Node, int] = {n: i for i, n in enumerate(seeds)}
    pairs = [(ids.setdefault(a, len(ids)), ids.setdefault(b, len(ids)), w)
             for (a, b), w in edges.items()]
    n = len(ids)
    if n == 0:
        return {}
    pers = np.zeros(n)
    pers[:len(seeds)] = list(seeds.values())
    pers /= pers.sum() or 1.0
    if pairs:
        a, b, w = (np.array(x) for x in zip(*pairs))
        src, dst, wt = np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([w, w])
    else:
        src = dst = np.zeros(0, dtype=int)
        wt = np.zeros(0)
    out_w = np.bincount(src, weights=wt, minlength=n)
    norm = wt / np.where(out_w[src] > 0, out_w[src], 1.0)
    dangling = out_w == 0
    score = pers.copy()
    for _ in range(ITERATIONS):
        spread = np.bincount(dst, weights=score[src] * norm, minlength=n)
        lost = score[dangling].sum()
        score = (1 - DAMPING) * pers + DAMPING * (spread + lost * pers)
    return {node: float(score[i]) for node, i in ids.items()}


def role(node: Node, lang: str | None) -> str:
    """code | test | doc: what an item is to an agent."""
    if lang == "markdown":
        return "doc"
    return "test" if is_test_path(node[2]) else "code"

