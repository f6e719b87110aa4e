"""Walking and scoring the graph: pure functions behind Graph.impact/deps.

``walk`` is a breadth-first walk to a depth over whatever edges the caller's
``step(node)`` yields (edges into a node for impact, out of it for deps),
keeping per node the first distance, the best path confidence and that
path. ``rank`` scores the visited subgraph with personalised PageRank from
the seeds, edge weight = kind weight x resolution confidence, so nodes
reached by many strong paths (fan-in) rise; the final score averages that
with the best path's confidence halved per hop (``combined``). Confidence per edge: resolved
1.0, name_match 0.3 x name weight, git its co-change confidence, link 0.8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Edge, node_label

KIND_WEIGHT = {"imports": 1.0, "calls": 1.0, "references": 0.9, "tests": 1.0, "package": 0.9,
               "documents": 0.7, "config": 0.8, "co_change": 0.6}
DAMPING = 0.85
ITERATIONS = 30

Node = tuple  # (realm, repo, path, symbol | None)


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


@dataclass
class Visit:
    distance: int
    confidence: float
    via: list = field(default_factory=list)   # edges, from this node back to a seed


def walk(seeds: list[Node], step, depth: int, kinds=None, reverse: bool = True):
    """BFS to ``depth``; returns (visits, traversed [(from_node, to_node, weight)])."""
    visits: dict[Node, Visit] = {s: Visit(0, 1.0) for s in seeds}
    traversed: dict[tuple[Node, Node], float] = {}
    frontier = list(seeds)
    for d in range(1, depth + 1):
        nxt = []
        for node in frontier:
            here = visits[node]
            for e in step(node):
                if kinds and e.kind not in kinds:
                    continue
                other = ((e.realm, e.src_repo, e.src_path, e.src_symbol) if reverse
                         else (e.realm, e.dst_repo, e.dst_path, e.dst_symbol))
                conf = confidence(e)
                c = here.confidence * conf
                w = KIND_WEIGHT.get(e.kind, 0.5) * conf
                if traversed.get((node, other), 0.0) < w:
                    traversed[(node, other)] = w
                seen = visits.get(other)
                if seen is None:
                    visits[other] = Visit(d, c, [e] + here.via)
                    nxt.append(other)
                elif c > seen.confidence and seen.distance > 0:
                    seen.confidence, seen.via = c, [e] + here.via
        frontier = nxt
    return visits, traversed


def rank(seeds: list[Node], traversed: dict[tuple[Node, Node], float]) -> dict[Node, float]:
    """Personalised PageRank over the walked subgraph, normalised to max 1."""
    import numpy as np

    ids: dict[Node, int] = {s: i for i, s in enumerate(dict.fromkeys(seeds))}
    pairs = [(ids.setdefault(a, len(ids)), ids.setdefault(b, len(ids)), w)
             for (a, b), w in traversed.items() if a != b]
    n = len(ids)
    pers = np.zeros(n)
    pers[:len(set(seeds))] = 1.0 / max(1, len(set(seeds)))
    if not pairs:
        return {node: float(pers[i]) for node, i in ids.items()}
    src, dst, w = (np.array(x) for x in zip(*pairs))
    out_w = np.bincount(src, weights=w, minlength=n)
    norm = w / out_w[src]
    score = pers.copy()
    for _ in range(ITERATIONS):
        score = (1 - DAMPING) * pers + DAMPING * np.bincount(dst, weights=score[src] * norm,
                                                             minlength=n)
    mask = pers == 0
    top = float(score[mask].max()) if mask.any() else 1.0
    top = top or 1.0
    return {node: min(1.0, float(score[i]) / top) for node, i in ids.items()}


def via_json(edges: list[Edge]) -> list[dict]:
    return [{"kind": e.kind, "from": node_label(e.src_repo, e.src_path, e.src_symbol),
             "to": node_label(e.dst_repo, e.dst_path, e.dst_symbol), "line": e.line,
             "how": e.how} for e in edges]


def combined(ppr: float, visit: Visit) -> float:
    """Final score: half PageRank (fan-in), half path confidence halved per hop."""
    return 0.5 * ppr + 0.5 * visit.confidence * 0.5 ** max(0, visit.distance - 1)


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


def bounded(name: str, rows: list, limit: int | None, distances=None) -> dict:
    """``rows[:limit]`` as ``name``, next to how many exist (``name_total``) and
    whether some were cut (``name_truncated``); with ``distances`` (one per row)
    how many exist at each distance too, so a reader can say what was left out
    of each group. ``limit`` None: all."""
    shown = rows if limit is None else rows[:limit]
    out = {name: shown, f"{name}_total": len(rows), f"{name}_truncated": len(shown) < len(rows)}
    if distances is not None:
        counts: dict[str, int] = {}
        for d in sorted(distances):
            counts[str(d)] = counts.get(str(d), 0) + 1
        out[f"{name}_by_distance"] = counts
    return out


def any_truncated(answer: dict) -> bool:
    return any(v is True for k, v in answer.items() if k.endswith("_truncated"))
