"""Built edge lists kept between queries, bounded by the edges they hold.

``Graph`` keeps each file's edges packed (packed.py) and rebuilds ``Edge``
tuples per query: on the stdlib that rebuilding is about a third of a deep
``impact`` (docs/benchmarks.md, impact_latency), and the same hub nodes
(``os``, ``typing``, a package's base class) are rebuilt by most answers and
by each of an answer's three walks. This keeps the lists most recently asked
for, least recently used out first, up to ``max_edges`` edges in all
(~190 bytes an edge: 150k edges is ~30 MB).

Correctness rests on one rule: the graph clears it whenever its edges change
(any file recomputed, removed, co-change replaced). A list is a tuple so no
caller can change what the next one reads.
"""

from __future__ import annotations

from collections import OrderedDict


class EdgeListCache:
    def __init__(self, max_edges: int):
        self.max_edges = max_edges
        self._lists: OrderedDict[tuple, tuple] = OrderedDict()
        self.held = 0       # edges held now, and one for each list (empty ones count)
        self.hits = 0
        self.misses = 0

    def get(self, node: tuple, build) -> tuple:
        """``node``'s list, built by ``build(node)`` (an iterable of edges) when absent."""
        got = self._lists.get(node)
        if got is not None:
            self.hits += 1
            self._lists.move_to_end(node)
            return got
        self.misses += 1
        got = tuple(build(node))
        if len(got) < self.max_edges:
            self._lists[node] = got
            self.held += len(got) + 1
            while self.held > self.max_edges:
                _, old = self._lists.popitem(last=False)
                self.held -= len(old) + 1
        return got

    def clear(self) -> None:
        self._lists.clear()
        self.held = 0

    def stats(self) -> dict:
        return {"lists": len(self._lists), "edges": self.held, "max_edges": self.max_edges,
                "hits": self.hits, "misses": self.misses}
