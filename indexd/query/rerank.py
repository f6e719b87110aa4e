"""A learned second pass over the fused pool: a linear score of explainable features (pure).

Reciprocal-rank fusion only sees ranks. The head of the fused list is
re-scored by a weighted sum of what each candidate shows: how each leg ranked
it and how far from that leg's best it is, its cosine to the query even when
the semantic leg's pool missed it, whether the query's words are its name's,
its docstring's or its path's, its kind, privacy and size. The weights are
fitted by ``bench/search_rerank.py`` on the train split of bench/queries
(pairwise logistic loss, L2) and stored in ``rerank_weights.json`` with the
figures they were chosen by; the held-out split is only reported.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from ..words import split_identifier
from .ranking import is_exact, query_class

WEIGHTS_FILE = Path(__file__).with_name("rerank_weights.json")
FEATURES = ("rrf", "kw_in", "kw_lr", "kw_rel", "sem_in", "sem_lr", "cos", "cos_gap",
            "exact", "name_all", "name_frac", "doc_frac", "path_frac",
            "k_method", "k_function", "k_class", "k_section", "k_file",
            "private", "dunder", "has_doc", "lines", "depth", "ident", "id_kw", "id_sem")
_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an and are as at be by can do does for from how i if in into is it its of "
                 "on or that the this to what when where which with".split())
STEM = 5   # words compared by their first letters: "reconnecting" meets "reconnect"


# Per-row word sets, cached by their text: a widened head scores ~200 rows a
# query, and the same entries come back query after query.
@lru_cache(maxsize=16384)
def _stems(text: str) -> frozenset[str]:
    return frozenset(w[:STEM] for w in _WORD.findall(text.lower()) if w not in STOP)


@lru_cache(maxsize=16384)
def _name_stems(qualname: str) -> frozenset[str]:
    return frozenset(w[:STEM] for w in split_identifier(qualname))


@lru_cache(maxsize=4096)
def _path_stems(path: str) -> frozenset[str]:
    return _stems(path.replace("/", " ").replace("_", " "))


def query_stems(query: str) -> set[str]:
    words = []
    for token in re.findall(r"[A-Za-z0-9_]+", query):
        words.append(token.lower())
        words.extend(split_identifier(token))
    return {w[:STEM] for w in words if w and w not in STOP}


def _frac(q: set[str], have: set[str]) -> float:
    return len(q & have) / len(q) if q else 0.0


def features(entry: dict, legs: dict, cosine: float | None, top_cos: float, query: str,
             q_stems: set[str], ident: float) -> list[float]:
    """One candidate's feature vector, in FEATURES order. ``legs``: leg name ->
    {key: (rank, score)} plus ``_top`` -> that leg's best score."""
    row = entry["row"]
    key = row["id"]
    kw, sem = legs.get("keyword", {}), legs.get("semantic", {})
    kw_rank, kw_score = kw.get(key, (None, 0.0))
    sem_rank, _ = sem.get(key, (None, 0.0))
    kw_pool, sem_pool = max(len(kw) - 1, 1), max(len(sem) - 1, 1)
    cos = cosine if cosine is not None else 0.0
    name = row.get("name") or ""
    qual = row.get("qualname") or ""
    kind = row.get("kind") or ""
    name_stems = _name_stems(qual or name)
    doc = f"{row.get('doc') or ''} {row.get('summary') or ''}"
    kw_lr = -math.log1p(kw_rank if kw_rank is not None else kw_pool)
    sem_lr = -math.log1p(sem_rank if sem_rank is not None else sem_pool)
    return [
        entry["score"] * 30.0,
        1.0 if kw_rank is not None else 0.0,
        kw_lr,
        kw_score / (kw.get("_top") or 1.0),
        1.0 if sem_rank is not None else 0.0,
        sem_lr,
        cos,
        cos - top_cos,
        1.0 if is_exact(row, query) else 0.0,
        1.0 if q_stems and q_stems <= name_stems else 0.0,
        _frac(q_stems, name_stems),
        _frac(q_stems, _stems(doc)),
        _frac(q_stems, _path_stems(row.get("path") or "")),
        1.0 if kind == "method" else 0.0,
        1.0 if kind == "function" else 0.0,
        1.0 if kind == "class" else 0.0,
        1.0 if kind == "section" else 0.0,
        1.0 if kind in ("file", "key") else 0.0,
        1.0 if name.startswith("_") and not name.startswith("__") else 0.0,
        1.0 if name.startswith("__") and name.endswith("__") else 0.0,
        1.0 if (row.get("doc") or row.get("summary")) else 0.0,
        math.log1p(max(0, int(row.get("end_line") or 0) - int(row.get("start_line") or 0))),
        float(qual.count(".")),
        ident,
        ident * kw_lr,
        ident * sem_lr,
    ]


def leg_ranks(legs: dict[str, list[tuple[float, dict]]], key) -> dict:
    out = {}
    for leg, scored in legs.items():
        ranks = {"_top": max((sc for sc, _ in scored), default=0.0)}
        for i, (sc, row) in enumerate(scored):
            ranks.setdefault(key(row), (i, sc))
        out[leg] = ranks
    return out


def feature_rows(entries: list[dict], legs: dict, cosines: dict[str, float],
                 query: str) -> list[list[float]]:
    ranks = leg_ranks(legs, lambda r: r["id"])
    top_cos = max(cosines.values(), default=0.0)
    q = query_stems(query)
    ident = 1.0 if query_class(query) == "identifier" else 0.0   # once per query, not per hit
    return [features(e, ranks, cosines.get(e["row"]["id"]), top_cos, query, q, ident)
            for e in entries]


@lru_cache(maxsize=1)
def shipped_weights() -> dict | None:
    """The fitted model ({"weights": {feature: w}, "depth": n, ...}), or None."""
    try:
        data = json.loads(WEIGHTS_FILE.read_text())
    except (OSError, ValueError):
        return None
    return data if set(data.get("weights", {})) == set(FEATURES) else None


def head_of(ordered: list[dict], legs: dict[str, list[tuple[float, dict]]], model: dict,
            key) -> tuple[list[dict], int]:
    """The pool re-ordered so the second pass's head comes first, and the
    head's size: the fused pool's first ``depth`` entries, then (``leg_depth``
    > 0) every entry that a leg ranked in its own first ``leg_depth`` and the
    fusion left below: a hit one leg ranks well and the other never saw is
    still scored by the model."""
    depth, leg_depth = int(model.get("depth", 50)), int(model.get("leg_depth", 0))
    if leg_depth <= 0:
        return ordered, min(depth, len(ordered))
    wanted = {key(row) for scored in legs.values() for _, row in scored[:leg_depth]}
    late = [e for e in ordered[depth:] if key(e["row"]) in wanted]
    rest = [e for e in ordered[depth:] if key(e["row"]) not in wanted]
    return ordered[:depth] + late + rest, min(depth, len(ordered)) + len(late)


def rerank(entries: list[dict], legs: dict, cosines: dict[str, float], query: str,
           model: dict, depth: int | None = None) -> list[dict]:
    """The first ``depth`` entries (the model's own unless given) re-ordered by
    the model's score (the rest keep their order below them); each keeps its
    fused score for display."""
    depth = int(model.get("depth", 50)) if depth is None else depth
    head, tail = entries[:depth], entries[depth:]
    w = [float(model["weights"][f]) for f in FEATURES]
    rows = feature_rows(head, legs, cosines, query)
    scored = [(sum(a * b for a, b in zip(w, x)), i) for i, x in enumerate(rows)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    for score, i in scored:   # what `explain` shows
        head[i]["second"] = (score, rows[i])
    return [head[i] for _, i in scored] + tail


def top_terms(features_row: list[float], model: dict, n: int = 3) -> list[list]:
    """The ``n`` largest terms (weight x feature) of one hit's second-pass score."""
    terms = [(f, float(model["weights"][f]) * x) for f, x in zip(FEATURES, features_row)]
    terms.sort(key=lambda t: -abs(t[1]))
    return [[f, round(v, 4)] for f, v in terms[:n] if v]
