"""Search in every mode: vector leg + keyword leg, fused by weighted reciprocal rank.

Weights per query class (``ranking.py``); the fused head re-scored by the
learned second pass (``rerank.py``); exact names pinned on top in keyword
and hybrid mode; each hit records which legs found it (``match``) and, asked
to ``explain``, why it ranks where it does. Filters are the keyword search's, pushed down to both legs.
Optional ``context`` reads N lines around each hit from the file on disk,
through the indexer's own reader: nothing indexing would not read (links out
of the repo, secret files, files over the size cap), secret values masked.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..scan.reader import Skip, read_source
from .ranking import (DEFAULT_PARAMS, RankParams, fuse, is_exact, keep_leg_tops, lend_to_parents,
                      pin_exact, query_class)
from .rerank import head_of, leg_ranks, rerank, shipped_weights, top_terms
from .search import (RESULT_COLUMNS, SearchRequest, _sql, build_where,
                     hit_from_row, keyword_leg, path_only, text_filters)

# Nearest neighbours always exist; below this cosine similarity a vector hit
# is noise, and "no results" must stay possible (indexctl exit code 1).
MIN_SIMILARITY = 0.2


def _key(row: dict) -> str:
    return row["id"]   # stable per entry, in both legs and every store path


def semantic_rows(store, query_vector, req: SearchRequest, depth: int) -> list[dict]:
    hot = _hot_rows(store, query_vector, req, depth)
    if hot is not None:
        return hot
    rows = store.vector_search(query_vector, build_where(req), depth, RESULT_COLUMNS + ["_distance"])
    rows = [r for r in rows if 1.0 - float(r.get("_distance", 1.0)) >= MIN_SIMILARITY]
    return path_only(rows, req)


def _hot_rows(store, query_vector, req: SearchRequest, depth: int) -> list[dict] | None:
    """The daemon's in-memory path: nearest ids from the vector matrix, their
    rows from the keyword index's stored fields; None where it cannot answer
    (not built, or a path glob that only SQL evaluates)."""
    vectors, text = getattr(store, "vector_index", None), getattr(store, "text_index", None)
    filters = text_filters(req)
    if vectors is None or text is None or not (vectors.ready and text.ready):
        return None
    # Ids only: fusion needs nothing else, and only the rows that make the
    # answer are fetched (``_hydrate``), not the whole pool.
    return [{"id": i, "_distance": 1.0 - sim, "_stub": True}
            for sim, i in vectors.search(query_vector, filters, depth, MIN_SIMILARITY)]


def _hydrate(store, entries: list[dict]) -> list[dict]:
    """Give stub hits (the vector leg's ids, the keyword index's ranked fields)
    their rows from the keyword index's stored fields; an id it no longer holds
    (deleted meanwhile) is dropped."""
    stubs = [e["row"]["id"] for e in entries if e["row"].get("_stub")]
    if not stubs:
        return entries
    rows = store.text_index.rows_by_id(stubs)
    out = []
    for e in entries:
        stub = e["row"]
        if stub.get("_stub"):
            row = rows.get(stub["id"])
            if row is None:
                continue
            e = dict(e, row=row | {k: stub[k] for k in ("_distance", "_score") if k in stub})
        out.append(e)
    return out


def candidates(store, embedder, req: SearchRequest, params: RankParams = DEFAULT_PARAMS):
    """The legs and their fused pool before any re-ordering: (ordered, legs, query vector)."""
    legs: dict[str, list[tuple[float, dict]]] = {}
    query_vector = None
    if req.mode in ("hybrid", "keyword"):
        legs["keyword"] = keyword_leg(store, req, params)
    if req.mode in ("hybrid", "semantic"):
        depth = max(params.semantic_pool, req.limit * 3)
        query_vector = embedder.encode_query(req.query)
        rows = semantic_rows(store, query_vector, req, depth)
        legs["semantic"] = [(1.0 - float(r.get("_distance", 1.0)), r) for r in rows]
    if len(legs) == 1:   # one leg: its own order and scores
        (leg, scored), = legs.items()
        return [{"row": r, "score": sc, "match": [leg]} for sc, r in scored], legs, query_vector
    ordered = fuse(legs, _key, query_class(req.query), params)
    if params.parent_share > 0:   # members need their rows to find their class
        ordered = lend_to_parents(_hydrate(store, ordered), params.parent_share)
    return ordered, legs, query_vector


def rerank_model(params: RankParams) -> dict | None:
    return shipped_weights() if params.rerank == "shipped" else params.rerank


def reranked(store, ordered: list[dict], legs: dict, query_vector, query: str,
             model: dict) -> list[dict]:
    """The fused pool's head re-scored by the learned model (rerank.py)."""
    ordered, depth = head_of(ordered, legs, model, _key)
    head = _hydrate(store, ordered[:depth])
    return rerank(head + ordered[depth:], legs, cosines(store, query_vector, head, legs), query,
                  model, depth)


def cosines(store, query_vector, entries: list[dict], legs: dict) -> dict[str, float]:
    """Each entry's cosine to the query: the semantic leg's where it found the
    entry, else from the vectors themselves (hot matrix, or the table)."""
    out = {r["id"]: sc for sc, r in legs.get("semantic", ())}
    missing = [e["row"]["id"] for e in entries if e["row"]["id"] not in out]
    if not missing or query_vector is None:
        return out
    index = getattr(store, "vector_index", None)
    if index is not None and index.ready:
        return out | index.similarities(query_vector, missing)
    import numpy as np

    rows = store.entries_where("id IN (" + ", ".join(_sql(i) for i in missing) + ")",
                               ["id", "vector"])
    q = np.asarray(query_vector, dtype=np.float32)
    return out | {r["id"]: float(np.asarray(r["vector"], dtype=np.float32) @ q)
                  for r in rows if r.get("vector") is not None}


def fused_search(store, embedder, req: SearchRequest, params: RankParams = DEFAULT_PARAMS) -> dict:
    """One search in any mode: keyword alone, semantic alone, or both fused."""
    started = time.perf_counter()
    ordered, legs, query_vector = candidates(store, embedder, req, params)
    model = rerank_model(params)
    if len(legs) > 1:
        if model:
            ordered = reranked(store, ordered, legs, query_vector, req.query, model)
        if params.keep_leg_tops:
            ordered = keep_leg_tops(ordered, legs, _key, req.limit)
    if req.mode != "semantic":   # the semantic leg alone stays pure meaning
        ordered = pin_exact(ordered, req.query, params)
    ranks = leg_ranks(legs, _key) if req.explain else None
    why = (lambda e: explain(e, ranks, model, req, params)) if ranks is not None else None
    if req.files:
        return _file_results(_hydrate(store, ordered), req, started, why)
    results = []
    for e, also in distinct_symbols(store, ordered, req.limit):
        hit = hit_from_row(e["row"], e["score"], tuple(e["match"])).to_json()
        if also:
            hit["also_at"] = also
        if req.context:
            hit["context"] = read_context(e["row"], req)
        if why is not None:
            hit["why"] = why(e)
        results.append(hit)
    return {"query": req.query, "mode": req.mode,
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
            "total": len(results), "results": results}


# A code symbol defined more than once in one file (typing overloads, a def
# per platform) is one answer to a person: one hit, not three of the first places.
FOLDED_KINDS = ("function", "method", "class")


def distinct_symbols(store, ordered: list[dict], limit: int) -> list[tuple[dict, list[int]]]:
    """The first ``limit`` hits, hydrated, each code symbol once: at its best
    rank, with the start lines of its other definitions in the same file that
    rank within what was read."""
    out: list[tuple[dict, list[int]]] = []
    seen: dict[tuple, list[int]] = {}
    start = 0
    while len(out) < limit and start < len(ordered):
        step = max(limit - len(out), 8)
        for e in _hydrate(store, ordered[start:start + step]):
            row = e["row"]
            key = (row.get("realm"), row.get("repo"), row.get("path"), row.get("kind"),
                   row.get("qualname"))
            if row.get("kind") in FOLDED_KINDS and key in seen:
                seen[key].append(int(row["start_line"]))
            elif len(out) < limit:
                seen[key] = []
                out.append((e, seen[key]))
        start += step
    return out


def explain(entry: dict, ranks: dict, model: dict | None, req: SearchRequest,
            params: RankParams) -> dict:
    """Why a hit ranks where it does: each leg's rank (1-based) and score, the
    fused score, the second pass's score and largest terms, and whether it
    was pinned as an exact name."""
    key = _key(entry["row"])
    out: dict = {}
    for leg, label in (("keyword", "score"), ("semantic", "cosine")):
        if leg not in ranks:   # a one-leg mode
            continue
        found = ranks[leg].get(key)
        out[leg] = {"rank": found[0] + 1, label: round(found[1], 4)} if found else None
    out["fused"] = round(entry["score"], 6)
    second = entry.get("second")
    out["second_pass"] = ({"score": round(second[0], 4), "top": top_terms(second[1], model)}
                          if second and model else None)
    out["exact"] = (req.mode != "semantic" and params.pin_exact
                    and query_class(req.query) == "identifier" and is_exact(entry["row"], req.query))
    return out


def _file_results(ordered: list[dict], req: SearchRequest, started: float, why=None) -> dict:
    """Files ranked by their best entry (what someone scanning a repo wants):
    each file once, at the rank of its best hit, with that hit and how many
    of the file's entries matched."""
    files: dict[tuple, dict] = {}
    for e in ordered:
        row = e["row"]
        key = (row["realm"], row["repo"], row["path"])
        if key in files:
            files[key]["entries"] += 1
            continue
        if len(files) == req.limit:
            continue
        best = hit_from_row(row, e["score"], tuple(e["match"])).to_json()
        files[key] = {"realm": row["realm"], "repo": row["repo"], "path": row["path"],
                      "symbol": None, "kind": "file", "start_line": best["start_line"],
                      "end_line": best["end_line"], "score": best["score"], "match": best["match"],
                      "snippet": best["snippet"], "summary": best["summary"],
                      "summary_source": best["summary_source"], "lang": best["lang"],
                      "best": {k: best[k] for k in ("symbol", "kind", "start_line", "end_line")},
                      "entries": 1}
        if why is not None:   # why the file's best entry ranks where it does
            files[key]["why"] = why(e)
    results = list(files.values())
    return {"query": req.query, "mode": req.mode, "files": True,
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
            "total": len(results), "results": results}


def read_context(row: dict, req: SearchRequest) -> str:
    """Lines around a hit, or "" where the file as it is now would not be indexed."""
    src = read_source(Path(row["repo"]), row["path"], req.context_max_size, req.context_allow)
    if isinstance(src, Skip):
        return ""
    text = src.text.splitlines()
    lines = req.context
    start = max(0, int(row["start_line"]) - 1 - lines)
    end = min(len(text), int(row["end_line"]) + lines) if lines else int(row["start_line"])
    end = min(end, start + 2 * lines + 60)   # big symbols: show the head, not the whole body
    return "\n".join(text[start:end])
