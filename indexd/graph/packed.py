"""One file's computed edges, packed: what ``Graph`` keeps per file.

``file_edges`` returns a ``FileResult`` of ``Edge`` tuples (twelve fields,
~200 bytes each with their float; 670k of them on the stdlib). ``Packed``
keeps the same edges column-wise (a byte for kind and for how, int32 line,
float64 weight, shared strings for symbols, an index into the file's
distinct destination files), ~40 bytes an edge, plus the order of the edges
grouped by destination so the reverse indexes can point at a (file,
destination) pair instead of holding edges. ``Edge`` tuples are rebuilt on
access, equal to the ones computed, in the same order.
"""

from __future__ import annotations

from array import array

from .edges import FileResult
from .model import EDGE_KINDS, HOWS, Edge

_new = tuple.__new__
_KINDS: list[str] = list(EDGE_KINDS)
_HOWS: list[str] = list(HOWS)


def _code(table: list[str], value: str) -> int:
    try:
        return table.index(value)
    except ValueError:
        table.append(value)
        if len(table) > 256:
            raise ValueError(f"more than 256 edge kinds/hows: {value!r}") from None
        return len(table) - 1


class Packed:
    __slots__ = ("src", "dsts", "kinds", "hows", "src_syms", "dst_idx", "dst_syms", "lines",
                 "weights", "order", "starts", "_unresolved", "broken", "wants")

    def __init__(self, src: tuple, res: FileResult, canon: dict):
        """``canon``: shared tuples (file keys, index keys) to reuse instead of copies."""
        self.src = src
        at: dict[tuple, int] = {}
        kinds, hows, dst_idx = bytearray(), bytearray(), array("I")
        for e in res.edges:
            if e.realm != src[0] or (e.src_repo, e.src_path) != src[1:] or e.support:
                raise ValueError(f"edge does not belong to {src}: {e}")
            dst = (e.realm, e.dst_repo, e.dst_path)
            d = at.get(dst)
            if d is None:
                d = at[dst] = len(at)
            dst_idx.append(d)
            kinds.append(_code(_KINDS, e.kind))
            hows.append(_code(_HOWS, e.how))
        edges = res.edges
        self.dsts = tuple(canon.setdefault(k, k) for k in at)
        self.kinds, self.hows, self.dst_idx = bytes(kinds), bytes(hows), dst_idx
        self.src_syms = _column([e.src_symbol for e in edges])
        self.dst_syms = _column([e.dst_symbol for e in edges])
        self.lines = array("i", [e.line for e in edges])
        self.weights = array("d", [e.weight for e in edges])
        if all(w == 1.0 for w in self.weights):
            self.weights = None
        order = sorted(range(len(edges)), key=dst_idx.__getitem__)   # stable: file order kept
        self.order = array("I", order)
        starts = array("I", [0] * (len(at) + 1))
        for d in dst_idx:
            starts[d + 1] += 1
        for d in range(len(at)):
            starts[d + 1] += starts[d]
        self.starts = starts
        self._unresolved = tuple((u["kind"], u["name"], u["line"], u["reason"])
                                 for u in res.unresolved) or None
        self.broken = res.broken or None
        self.wants = tuple(canon.setdefault(w, w) for w in res.wants)

    def __len__(self) -> int:
        return len(self.kinds)

    def edge(self, i: int) -> Edge:
        src, dst = self.src, self.dsts[self.dst_idx[i]]
        return _new(Edge, (_KINDS[self.kinds[i]], src[1], src[2],
                           self.src_syms[i] if self.src_syms else None, dst[1], dst[2],
                           self.dst_syms[i] if self.dst_syms else None, self.lines[i],
                           _HOWS[self.hows[i]], self.weights[i] if self.weights else 1.0,
                           src[0], 0))

    @property
    def edges(self) -> list[Edge]:
        return [self.edge(i) for i in range(len(self.kinds))]

    def edges_to(self, d: int, symbol: str | None = None):
        """Edges into destination ``d`` (landing on ``symbol`` or inside it), in order."""
        syms = self.dst_syms
        for i in self.order[self.starts[d]:self.starts[d + 1]]:
            if symbol is not None:
                s = syms[i] if syms else None
                if s is None or not (s == symbol or s.startswith(symbol + ".")):
                    continue
            yield self.edge(i)

    def edges_from(self, symbol: str | None):
        """Edges whose source is ``symbol`` or inside it (all when None), in order."""
        syms = self.src_syms
        for i in range(len(self.kinds)):
            if symbol is not None:
                s = syms[i] if syms else None
                if s is None or not (s == symbol or s.startswith(symbol + ".")):
                    continue
            yield self.edge(i)

    def dst_symbols(self):
        """(destination index, symbol) of every edge that lands on a symbol."""
        syms = self.dst_syms
        if syms:
            yield from ((d, s) for d, s in zip(self.dst_idx, syms) if s is not None)

    @property
    def unresolved(self) -> list[dict]:
        return [{"kind": k, "name": n, "line": ln, "reason": r}
                for k, n, ln, r in self._unresolved or ()]


def _column(values: list):
    """A tuple of the values, or None when all are None (an empty column)."""
    return tuple(values) if any(v is not None for v in values) else None
