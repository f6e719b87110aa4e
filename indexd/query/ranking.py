"""How search results are ordered: query classes, exact names, leg fusion (pure).

Three ideas, each measured on bench/queries (train split; bench/search_tune.py):

* A query that looks like an identifier (``url_for``, ``HTTPResponse._read_chunked``,
  ``subprocess.run``) is answered by names first: every entry whose name,
  qualified name, dotted suffix or module-qualified name equals it is a
  candidate before any pool is cut, and such exact hits rank above the rest.
* The keyword leg scores fields, not one bag of words: BM25 over the
  ``search_text`` column, raised when the query's words are the entry's name
  words, lowered for private names and whole files.
* The legs are fused by weighted reciprocal rank, with weights per query
  class: names lean on keywords, sentences on meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..words import dotted_module, split_identifier

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _default_weights() -> dict:
    return {"identifier": {"keyword": 1.0, "semantic": 1.0},
            "text": {"keyword": 1.0, "semantic": 1.0}}


@dataclass(frozen=True)
class RankParams:
    fusion: str = "rrf"          # rrf | convex (see fuse)
    rrf_k: int = 30              # chosen on the train splits (bench/search_tune.py --grid)
    keyword_pool: int = 200      # FTS rows scored before fusion
    semantic_pool: int = 100     # nearest neighbours scored before fusion
    exact_pool: int = 500        # exact-name rows fetched for an identifier query
    weights: dict = field(default_factory=_default_weights)
    name_words_boost: float = 2.0   # every query word is a word of the entry's name
    file_factor: float = 0.8        # a symbol or section is a more precise answer
    pin_exact: bool = True
    keep_leg_tops: bool = True      # each leg's first hit stays in the answer (keep_leg_tops)
    parent_share: float = 0.0       # a member's fused score lent to its class (see lend_to_parents)
    # The learned second pass over the fused head (rerank.py): "shipped" is
    # rerank_weights.json where present, a dict a model of its own, None off.
    rerank: object = "shipped"
    # Per-field weights of the daemon's keyword index (store/text_index.py);
    # body_words chosen on the train splits in hybrid mode (bench/search_tune.py --grid).
    field_boosts: dict = field(default_factory=lambda: {"text": 1.0, "name_words": 0.0,
                                                        "body_words": 1.5})


DEFAULT_PARAMS = RankParams()


def query_class(query: str) -> str:
    """``identifier`` for one name-like token (dots allowed), else ``text``."""
    return "identifier" if _IDENT.match(query.strip()) else "text"


def is_exact(row: dict, query: str) -> bool:
    """The query names this entry: its name, qualified name, a dotted suffix of
    it, or the module path plus qualified name (``subprocess.run``)."""
    q = query.strip().lower()
    if not q:
        return False
    name = (row.get("name") or "").lower()
    if row.get("kind") == "file":   # a module by its dotted name, or the file by its name
        return q in (name, dotted_module(row.get("path") or "").lower())
    qual = (row.get("qualname") or "").lower()
    if q in (name, qual) or (qual and qual.endswith("." + q)):
        return True
    if "." in q and qual:
        full = f"{dotted_module(row.get('path') or '').lower()}.{qual}"
        return full == q or full.endswith("." + q)
    return False


def keyword_score(row: dict, terms: list[str], query: str, params: RankParams) -> float:
    """BM25 with explainable factors: exact names, name words, privacy, files."""
    score = float(row.get("_score") or 0.0)
    term_set = set(terms)
    name_words = set(split_identifier(row.get("qualname") or ""))
    if is_exact(row, query):
        score = max(score, 1.0) * 3.0
    elif term_set and term_set <= name_words:
        score *= params.name_words_boost
    if row.get("kind") in ("file", "key"):
        score *= params.file_factor
    return score * visibility(row.get("name") or "")


def visibility(name: str) -> float:
    """Private helpers and dunders rarely answer a question (bench/search_quality)."""
    if name.startswith("__") and name.endswith("__"):
        return 0.6
    if name.startswith("_"):
        return 0.7
    return 1.0


def fuse(legs: dict[str, list[tuple[float, dict]]], key, qclass: str,
         params: RankParams) -> list[dict]:
    """Fuse ranked legs of (score, row): [{"row", "score", "match"}], best first.

    ``rrf``: weighted reciprocal rank. ``convex``: a weighted sum of each leg's
    scores divided by that leg's best (so a leg's top hit is worth its weight
    whatever its score scale); a row one leg did not return gets 0 there.
    """
    weights = params.weights.get(qclass) or {}
    fused: dict[tuple, dict] = {}
    for leg, scored in legs.items():
        w = float(weights.get(leg, 1.0))
        top = max((sc for sc, _ in scored), default=0.0) or 1.0
        for rank_no, (sc, row) in enumerate(scored):
            entry = fused.setdefault(key(row), {"row": row, "score": 0.0, "match": []})
            if params.fusion == "convex":
                entry["score"] += w * max(sc, 0.0) / top
            else:
                entry["score"] += w / (params.rrf_k + rank_no + 1)
            entry["match"].append(leg)
    return sorted(fused.values(), key=lambda e: -e["score"])


def lend_to_parents(entries: list[dict], share: float) -> list[dict]:
    """A class whose members match is itself a match: each entry in the pool
    adds ``share`` x its best member's score (``Barrier.wait`` found means
    ``Barrier`` is what was asked for more often than not). Only parents
    already in the pool move; order re-sorted."""
    if share <= 0:
        return entries
    by_key = {(e["row"].get("path"), e["row"].get("qualname")): e for e in entries
              if e["row"].get("kind") != "file"}
    best: dict[int, float] = {}
    for e in entries:
        qual = e["row"].get("qualname") or ""
        if "." not in qual or e["row"].get("kind") == "file":
            continue
        parent = by_key.get((e["row"].get("path"), qual.rsplit(".", 1)[0]))
        if parent is not None:
            best[id(parent)] = max(best.get(id(parent), 0.0), e["score"])
    if not best:
        return entries
    out = [dict(e, score=e["score"] + share * best[id(e)]) if id(e) in best else e for e in entries]
    return sorted(out, key=lambda e: -e["score"])


def keep_leg_tops(entries: list[dict], legs: dict[str, list[tuple[float, dict]]], key,
                  limit: int) -> list[dict]:
    """What a leg ranked first is never fused out of the answer: a hit one
    leg put first and the fusion pushed below ``limit`` takes the answer's
    last free place (limit >= 2; ordered by fused score among themselves)."""
    if limit < 2:
        return entries
    firsts = {key(scored[0][1]) for scored in legs.values() if scored}
    shown = {key(e["row"]) for e in entries[:limit]}
    late = [e for e in entries[limit:] if key(e["row"]) in firsts and key(e["row"]) not in shown]
    if not late:
        return entries
    late = late[: limit - 1]
    moved = {id(e) for e in late}
    rest = [e for e in entries if id(e) not in moved]
    cut = limit - len(late)
    return rest[:cut] + late + rest[cut:]


def same_case(row: dict, query: str) -> bool:
    """``option`` names the function ``option`` more than the class ``Option``."""
    q = query.strip()
    qual = row.get("qualname") or ""
    return q in (row.get("name"), qual) or qual.endswith("." + q) or \
        f"{dotted_module(row.get('path') or '')}.{qual}".endswith(q)


def via_package(row: dict, query: str) -> bool:
    """``asyncio.run`` names a module-level ``run`` of a module inside package
    ``asyncio`` (``asyncio/runners.py``, re-exported by the package), not a
    method ``run`` of some class there."""
    *package, name = query.strip().lower().split(".")
    if not package or row.get("kind") == "file":
        return False
    module = dotted_module(row.get("path") or "").lower()
    return (row.get("qualname") or "").lower() == name and module.startswith(
        ".".join(package) + ".")


def _nesting(row: dict, query: str) -> int:
    """How much deeper the entry's qualified name is than the query: ``make_archive``
    names the function ``make_archive`` before the method ``Command.make_archive``."""
    return max(0, (row.get("qualname") or "").count(".") - query.strip().count("."))


def pin_exact(entries: list[dict], query: str, params: RankParams) -> list[dict]:
    """Exact-name hits first (same case before other case, then the least nested,
    each in fused order), then names reached through their package, then the
    rest: an exact identifier must not sink below fuzzier matches at any limit."""
    if not params.pin_exact or query_class(query) != "identifier":
        return entries
    exact = [e for e in entries if is_exact(e["row"], query)]
    ids = {id(e) for e in exact}
    package = [e for e in entries if id(e) not in ids and via_package(e["row"], query)]
    if not exact and not package:
        return entries
    ids |= {id(e) for e in package}
    # stable sort: fused order within each group
    exact.sort(key=lambda e: (not same_case(e["row"], query), _nesting(e["row"], query)))
    return exact + package + [e for e in entries if id(e) not in ids]
