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
from bisect import bisect_left, bisect_right

from .edges import FileResult
from .model import EDGE_KINDS, HOWS, Edge

_new = tuple.__new__
_KINDS: list[str] = list(EDGE_KINDS)
_HOWS: list[str] = list(HOWS)


_CODES: dict[str, int] = {}     # (table id, value) -> its index there


def _code(table: list[str], value: str) -> int:
    got = _CODES.get((id(table), value))
    if got is not None:
        return got
    if value not in table:
        table.append(value)
        if len(table) > 256:
            raise ValueError(f"more than 256 edge kinds/hows: {value!r}") from None
    got = _CODES[(id(table), value)] = table.index(value)
    return got


class Packed:
    __slots__ = ("src", "dsts", "kinds", "hows", "src_syms", "dst_idx", "dst_syms", "lines",
                 "weights", "order", "order_keys", "starts", "_unresolved", "broken", "wants")

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
        # grouped by destination, then by destination symbol (a symbol and what is
        # inside it are two contiguous runs), then file order
        syms = self.dst_syms or ()
        self.order = array("I", sorted(range(len(edges)),
                                       key=lambda i: (dst_idx[i], syms[i] or "" if syms else "")))
        # each ordered edge's destination symbol ("" for none): bisected in C, without a
        # Python key call per step (a deep impact asks ~2,000 of these look-ups)
        self.order_keys = tuple(syms[i] or "" for i in self.order) if syms else None
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

    def _build(self, at, d: int | None = None) -> list[Edge]:
        """The edges at positions ``at`` (ascending), as ``Edge`` tuples; ``d``: they all
        land in destination ``d`` (the reverse walk's lists: one look-up, not one an edge).
        An absent column reads from a shared tuple of its one value, not through a
        Python ``__getitem__`` an edge: this loop is most of a deep impact's cost."""
        realm, repo, path = self.src
        kinds, hows, lines = self.kinds, self.hows, self.lines
        n = len(kinds)
        ss = self.src_syms or _filled(None, n)
        ds = self.dst_syms or _filled(None, n)
        ws = self.weights or _filled(1.0, n)
        if d is not None:
            _, d_repo, d_path = self.dsts[d]
            return [_new(Edge, (_KINDS[kinds[i]], repo, path, ss[i], d_repo, d_path, ds[i],
                                lines[i], _HOWS[hows[i]], ws[i], realm, 0)) for i in at]
        dsts, dst_idx = self.dsts, self.dst_idx
        return [_new(Edge, (_KINDS[kinds[i]], repo, path, ss[i], dsts[dst_idx[i]][1],
                            dsts[dst_idx[i]][2], ds[i], lines[i], _HOWS[hows[i]], ws[i], realm, 0))
                for i in at]

    @property
    def edges(self) -> list[Edge]:
        return self._build(range(len(self.kinds)))

    def edges_to(self, d: int, symbol: str | None = None) -> list[Edge]:
        """Edges into destination ``d`` (landing on ``symbol`` or inside it), in order."""
        lo, hi = self.starts[d], self.starts[d + 1]
        if symbol is None:
            return self._build(sorted(self.order[lo:hi]), d)
        keys = self.order_keys
        if not keys:
            return []
        a = bisect_left(keys, symbol, lo, hi)
        b = bisect_right(keys, symbol, a, hi)
        c = bisect_left(keys, symbol + ".", b, hi)
        e = bisect_left(keys, symbol + "/", c, hi)   # "/" follows "."
        if c == e:   # nothing inside the symbol: its run is in file order already
            return self._build(self.order[a:b], d) if a < b else []
        return self._build(sorted(self.order[a:b] + self.order[c:e]), d)

    def edges_to_file(self, d: int) -> list[Edge]:
        """Edges into destination ``d`` that land on no symbol (imports, package): the
        first run of its group, so a file's importers cost no other edge."""
        lo, hi = self.starts[d], self.starts[d + 1]
        keys = self.order_keys
        if not keys:
            return self._build(sorted(self.order[lo:hi]), d)
        end = bisect_right(keys, "", lo, hi)
        return self._build(sorted(self.order[lo:end]), d)

    def edges_from(self, symbol: str | None) -> list[Edge]:
        """Edges whose source is ``symbol`` or inside it (all when None), in order."""
        if symbol is None:
            return self.edges
        syms, inside = self.src_syms or (), symbol + "."
        return self._build([i for i, s in enumerate(syms)
                            if s is not None and (s == symbol or s.startswith(inside))])

    def dst_symbols(self):
        """(destination index, symbol) of every edge that lands on a symbol."""
        syms = self.dst_syms
        if syms:
            yield from ((d, s) for d, s in zip(self.dst_idx, syms) if s is not None)

    @property
    def unresolved(self) -> list[dict]:
        return [{"kind": k, "name": n, "line": ln, "reason": r}
                for k, n, ln, r in self._unresolved or ()]


# value -> a tuple of it, as long as the longest absent column read so far (one per
# value, shared by every file's Packed)
_FILL: dict = {None: (), 1.0: ()}


def _filled(value, n: int) -> tuple:
    """A column of ``n`` (or more) ``value``s: an absent symbol or weight column."""
    col = _FILL[value]
    if len(col) < n:   # a race only replaces it with another long enough one
        col = _FILL[value] = (value,) * max(n, 2 * len(col))
    return col


def _column(values: list):
    """A tuple of the values, or None when all are None (an empty column)."""
    return tuple(values) if any(v is not None for v in values) else None
