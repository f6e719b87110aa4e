"""Context packs: the code an agent should read for a task, within a token budget.

The ``context`` method asks search for the best hits, seeds the graph with
them (weight 1/rank) and with the files the agent names (weight 1, like the
top hit), and ranks the neighbourhood by personalised PageRank
(graph/neighbourhood.py). This module owns what happens around that:

* ``ContextRequest``: the params, validated;
* ``candidates``: the search hits in search order, then their symbol
  neighbours by PageRank, at most ``ContextRequest.max_candidates`` (other
  orders measured: docs/decisions.md); without ``hits`` the hits asked for
  and the cap grow with the budget (``seed_hits``); files the graph reaches without a symbol rank but are
  not items, and a file hit gives way to the file's symbols when any is a
  candidate;
* ``assemble``: each candidate's two views, a *signature* (the indexed
  signature and the first sentence of its summary) and a *body* (its lines
  read from disk through the indexer's reader, secrets masked), counted with
  ``tokens.TokenCounter``, then fitted to the budget (``fit``): the best
  candidate's signature, bodies for the first ``BODY_FIRST`` up to
  ``BODY_SHARE`` of the budget, signatures for the rest in rank order while
  they fit, then spare tokens turn signatures into bodies.

Item costs are additive (each item is counted once, on its own), so a greedy
pass in rank order fits the budget exactly; Aider's repo map binary-searches
how many tags to render because its rendered tree is not additive. The one
binary search left is the cut of the best hit's signature when it alone is
larger than the budget (``_cut``): the best hit is never left out. ``tokens``
is the sum of the items' counts.

Must not import lancedb (gets a store handle) or the engine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidParams
from ..scan.reader import Skip, read_source

BUDGET_DEFAULT = 4000
BUDGET_MIN, BUDGET_MAX = 64, 200_000
HITS_DEFAULT, HITS_MAX = 10, 50    # HITS_DEFAULT: the fewest seeds when hits is not given
# Without ``hits`` the seeds grow with the budget: about as many hits as fill SEED_SHARE of
# it as signatures; the candidates grow with it too (one per CANDIDATE_TOKENS, never under
# MAX_CANDIDATES). Chosen on the train splits (docs/decisions.md): a fixed 10 hits and 40
# candidates lost to the hits alone at 8k, where the pack hit the cap.
SEED_SHARE = 0.5
SIGNATURE_TOKENS = 40      # a signature view's typical count (bench/context_quality.py)
MAX_CANDIDATES = 40
CANDIDATE_TOKENS = 100
BODY_SHARE = 0.6         # of the budget, for bodies in the first pass...
BODY_FIRST = 8           # ...given to the first this many candidates only
# A body longer than budget x this is taken not to fit and is not even counted: code
# runs ~3.7 characters a word-piece (bench/context_quality.py: chars/4 is 0.90-0.95x).
MAX_CHARS_PER_TOKEN = 12
SUMMARY_CHARS = 160
ROW_COLUMNS = ["realm", "repo", "path", "lang", "kind", "qualname", "start_line", "end_line",
               "signature", "doc", "summary"]
_KNOWN = {"query", "files", "budget", "realm", "repo", "mode", "hits", "depth", "graph", "sync",
          "timeout"}


@dataclass(frozen=True)
class ContextRequest:
    query: str
    files: tuple = ()            # paths or path::Qualified.name (methods._file_of's forms)
    budget: int = BUDGET_DEFAULT
    realm: str | None = None
    repo: str | None = None
    mode: str | None = None
    hits: int | None = None      # None: grows with the budget (seed_hits)
    depth: int = 2
    graph: bool = True           # False: the hits alone (bench/context_quality.py's baseline)

    @classmethod
    def from_params(cls, params: dict) -> ContextRequest:
        unknown = set(params) - _KNOWN
        if unknown:
            raise InvalidParams(f"unknown context params: {', '.join(sorted(unknown))}",
                                {"known": sorted(_KNOWN)})
        query = params.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InvalidParams("context needs a non-empty string 'query': the task in words")
        files = params.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) and f.strip() for f in files):
            raise InvalidParams("files must be a list of paths (or path::Qualified.name)")
        for name in ("realm", "repo"):
            if params.get(name) is not None and not isinstance(params[name], str):
                raise InvalidParams(f"{name} must be a string")
        if params.get("mode") not in (None, "keyword", "semantic", "hybrid"):
            raise InvalidParams("mode must be keyword, semantic or hybrid")
        if not isinstance(params.get("graph", True), bool):
            raise InvalidParams("graph must be true or false")
        return cls(query=query, files=tuple(files),
                   budget=_int(params, "budget", BUDGET_DEFAULT, BUDGET_MIN, BUDGET_MAX),
                   realm=params.get("realm"), repo=params.get("repo"), mode=params.get("mode"),
                   hits=_int(params, "hits", None, 1, HITS_MAX),
                   depth=_int(params, "depth", 2, 1, 3), graph=params.get("graph", True))

    @property
    def seed_hits(self) -> int:
        """The search hits asked for: ``hits``, or as many as fill SEED_SHARE of the budget
        as signatures, within HITS_DEFAULT..HITS_MAX."""
        if self.hits is not None:
            return self.hits
        return max(HITS_DEFAULT, min(HITS_MAX, int(self.budget * SEED_SHARE) // SIGNATURE_TOKENS))

    @property
    def max_candidates(self) -> int:
        """A bigger budget holds more items: one candidate per CANDIDATE_TOKENS, at least
        MAX_CANDIDATES, and never fewer than the hits asked for."""
        return max(MAX_CANDIDATES, self.seed_hits, self.budget // CANDIDATE_TOKENS)

    def search_params(self) -> dict:
        out = {"query": self.query, "limit": self.seed_hits, "realm": self.realm, "repo": self.repo,
               "mode": self.mode}
        return {k: v for k, v in out.items() if v is not None}


def _int(params: dict, name: str, default: int, lo: int, hi: int) -> int:
    value = params.get(name, default)
    if value is None and default is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        hint = " (tokens)" if name == "budget" else ""
        raise InvalidParams(f"{name} must be an integer in {lo}..{hi}{hint}", {"param": name})
    return value


def hit_seeds(hits: list[dict]) -> list[dict]:
    return [{"realm": h["realm"], "repo": h["repo"], "path": h["path"], "symbol": h.get("symbol"),
             "weight": 1.0 / (i + 1)} for i, h in enumerate(hits)]


# --- candidates -------------------------------------------------------------------
@dataclass
class Candidate:
    realm: str
    repo: str
    path: str
    symbol: str | None
    why: str
    score: float = 0.0
    row: dict | None = None
    views: dict = field(default_factory=dict)    # "signature"/"body" -> (text, tokens)

    @property
    def key(self) -> tuple:
        return (self.realm, self.repo, self.path, self.symbol)


def candidates(hits: list[dict], nodes: list[dict], mode: str | None,
               limit: int = MAX_CANDIDATES) -> list[Candidate]:
    """The hits, then their symbol neighbours by PageRank (see the module docstring)."""
    score = {(n["realm"], n["repo"], n["path"], n["symbol"]): n["score"] for n in nodes}
    out: dict[tuple, Candidate] = {}
    for i, h in enumerate(hits):
        key = (h["realm"], h["repo"], h["path"], h.get("symbol"))
        s = score.get(key, score.get(key[:3] + (None,), 0.0))
        why = f"search hit {i + 1} ({mode or 'search'}, score {h.get('score', 0):.3f})"
        out.setdefault(key, Candidate(*key, why=why, score=s))
    hits_first = list(out.values())
    for n in nodes:
        key = (n["realm"], n["repo"], n["path"], n["symbol"])
        if key in out or n["symbol"] is None:
            continue
        out[key] = Candidate(*key, why=f"{n['why']}; PageRank {n['score']:.3f}", score=n["score"])
    rest = sorted(list(out.values())[len(hits_first):], key=lambda c: -c.score)
    # A file's own entry (its head, or all of it) says less than its symbols do.
    with_symbols = {c.key[:3] for c in out.values() if c.symbol is not None}
    ranked = [c for c in hits_first + rest
              if c.symbol is not None or c.key[:3] not in with_symbols]
    return ranked[:limit]


# --- texts ------------------------------------------------------------------------
def attach_rows(store, cands: list[Candidate]) -> list[Candidate]:
    """Each candidate's entry row (kind, lines, signature, summary); those the store no
    longer has (deleted meanwhile) are dropped."""
    from .search import _in, _sql

    by_file: dict[tuple, list[Candidate]] = {}
    for c in cands:
        by_file.setdefault((c.realm, c.repo), []).append(c)
    rows: dict[tuple, dict] = {}
    for (realm, repo), group in by_file.items():
        where = (f"realm = {_sql(realm)} AND repo = {_sql(repo)} AND "
                 + _in("path", sorted({c.path for c in group})))
        for r in store.entries_where(where, ROW_COLUMNS):
            sym = None if r["kind"] == "file" else r["qualname"]
            rows.setdefault((realm, repo, r["path"], sym), r)
    for c in cands:
        c.row = rows.get(c.key)
    return [c for c in cands if c.row is not None]


def signature_text(row: dict) -> str:
    sig = (row.get("signature") or "").strip() or row.get("qualname") or row["path"]
    note = (row.get("summary") or row.get("doc") or "").strip()
    note = " ".join(note.split("\n\n", 1)[0].split())
    if len(note) > SUMMARY_CHARS:
        note = note[:SUMMARY_CHARS - 1] + "…"
    return f"{sig}\n    {note}" if note and row.get("kind") not in ("file", "section") else sig


class SourceLines:
    """Files read once per pack, through the indexer's reader (secrets masked)."""

    def __init__(self, settings):
        self.max_size = settings.max_file_size
        self.allow = tuple(settings.secret_allow)
        self._files: dict[tuple, list[str] | None] = {}

    def lines(self, repo: str, path: str, start: int, end: int) -> str | None:
        key = (repo, path)
        if key not in self._files:
            src = read_source(Path(repo), path, self.max_size, self.allow)
            self._files[key] = None if isinstance(src, Skip) else src.text.splitlines()
        text = self._files[key]
        if text is None or start > len(text):
            return None
        return "\n".join(text[max(0, start - 1):end])


def add_views(cands: list[Candidate], source: SourceLines, counter, budget: int) -> None:
    texts: list[tuple[Candidate, str, str]] = []
    for c in cands:
        row = c.row
        texts.append((c, "signature", signature_text(row)))
        body = source.lines(c.repo, c.path, int(row["start_line"]), int(row["end_line"]))
        if body and len(body) <= budget * MAX_CHARS_PER_TOKEN:
            texts.append((c, "body", body))
    counts = counter.counts([t for _, _, t in texts])
    for (c, view, text), n in zip(texts, counts):
        c.views[view] = (text, n)


# --- fitting ----------------------------------------------------------------------
def _inside(inner: Candidate, outer: Candidate) -> bool:
    """Does ``outer``'s body hold ``inner`` (a method in its class, a symbol in its file)?"""
    return (inner is not outer and inner.key[:3] == outer.key[:3]
            and int(outer.row["start_line"]) <= int(inner.row["start_line"])
            and int(inner.row["end_line"]) <= int(outer.row["end_line"]))


def fit(cands: list[Candidate], budget: int) -> dict[tuple, str]:
    """key -> chosen view, within ``budget``: the best candidate's signature first
    (it is never left out), then the module docstring's three greedy passes. No
    text is shown twice: an item inside a chosen body is left out, and a body
    holding an item already chosen is not taken."""
    chosen: dict[tuple, str] = {}
    by_key = {c.key: c for c in cands}
    used = 0

    def cost(c: Candidate, view: str) -> int:
        now = chosen.get(c.key)
        return c.views[view][1] - (c.views[now][1] if now else 0)

    def fits(c: Candidate, view: str, limit: float) -> bool:
        if view not in c.views or chosen.get(c.key) == view or used + cost(c, view) > limit:
            return False
        if any(v == "body" and _inside(c, by_key[k]) for k, v in chosen.items()):
            return False   # already shown inside a chosen body
        return view != "body" or not any(_inside(by_key[k], c) for k in chosen if k != c.key)

    def take(c: Candidate, view: str) -> None:
        nonlocal used
        used += cost(c, view)
        chosen[c.key] = view

    passes = [(cands[:1], "signature", budget),
              (cands[:BODY_FIRST], "body", budget * BODY_SHARE),   # the best bodies
              (cands, "signature", budget),                        # the rest, in rank order
              (cands, "body", budget)]                             # spare tokens: bodies
    for group, view, limit in passes:
        for c in group:
            if view == "signature" and c.key in chosen:
                continue
            if view == "body" and limit == budget and c.key not in chosen:
                continue   # the last pass only upgrades what is in
            if fits(c, view, limit):
                take(c, view)
    return chosen


def _cut(text: str, budget: int, counter) -> tuple[str, int]:
    """The longest prefix of ``text`` (plus an ellipsis) within ``budget``: binary search."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid] + "…") <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo] + "…"
    return cut, counter.count(cut)


def item(c: Candidate, view: str, text: str, tokens: int) -> dict:
    row = c.row
    return {"realm": c.realm, "repo": c.repo, "path": c.path, "symbol": c.symbol,
            "kind": row["kind"], "lang": row.get("lang"), "start_line": int(row["start_line"]),
            "end_line": int(row["end_line"]), "view": view, "text": text, "tokens": tokens,
            "why": c.why, "score": round(c.score, 5)}


def assemble(req: ContextRequest, hits: list[dict], nodes: list[dict], store, settings,
             counter, mode: str | None) -> dict:
    t0 = time.perf_counter()
    cands = attach_rows(store, candidates(hits, nodes, mode, req.max_candidates))
    add_views(cands, SourceLines(settings), counter, req.budget)
    if cands and cands[0].views["signature"][1] > req.budget:
        # Not even the best hit's signature fits: its head, cut to the budget, is
        # still more use than the hits below it (and says it was cut).
        c = cands[0]
        c.views = {"signature": _cut(c.views["signature"][0], req.budget, counter)}
        c.why += "; cut to fit the budget"
    chosen = fit(cands, req.budget)
    items = [item(c, chosen[c.key], *c.views[chosen[c.key]]) for c in cands if c.key in chosen]
    tokens = sum(i["tokens"] for i in items)
    return {"query": req.query, "budget": req.budget, "tokens": tokens, "items": items,
            "tokenizer": counter.name, "mode": mode, "candidates": len(cands),
            "left_out": len(cands) - len(items),
            "bodies": sum(i["view"] == "body" for i in items),
            "assemble_ms": round((time.perf_counter() - t0) * 1000, 2)}
