"""The learned second pass over the fused pool (issue 12, part 1).

``rerank`` is pure: the legs here are plain ranked lists of rows, and the
cosines of candidates the semantic leg missed come from a real VectorIndex.
Whether the shipped weights help is measured by bench/search_rerank.py on
query sets nobody here wrote (docs/benchmarks.md), not here.
"""

from __future__ import annotations

import json

import numpy as np

from indexd.query import rerank as rr
from indexd.query.hybrid import cosines
from indexd.query.ranking import DEFAULT_PARAMS, fuse
from indexd.store.vector_index import VectorIndex


def _row(name, doc="", kind="function", path="m.py"):
    return {"id": name, "name": name, "qualname": name, "kind": kind, "path": path, "doc": doc,
            "start_line": 1, "end_line": 5}


def _legs():
    rows = [_row("parse_header", doc="Read the header lines of a message."),
            _row("retry_connect", doc="Reconnect with exponential backoff after a failure."),
            _row("_helper"), _row("format_date")]
    keyword = [(5.0 - i, r) for i, r in enumerate(rows)]
    semantic = [(0.6, rows[2]), (0.5, rows[0])]
    return rows, {"keyword": keyword, "semantic": semantic}


def _model(**weights):
    return {"depth": 3, "weights": {f: weights.get(f, 0.0) for f in rr.FEATURES}}


def test_features_follow_the_declared_order_and_read_the_docstring():
    rows, legs = _legs()
    fused = fuse(legs, lambda r: r["id"], "text", DEFAULT_PARAMS)
    feats = rr.feature_rows(fused, legs, {"_helper": 0.6, "parse_header": 0.5},
                            "reconnect with backoff")
    assert all(len(x) == len(rr.FEATURES) for x in feats)
    by_name = {e["row"]["name"]: dict(zip(rr.FEATURES, x)) for e, x in zip(fused, feats)}
    assert by_name["retry_connect"]["doc_frac"] == 1.0      # "reconnect", "backoff" (stems)
    assert by_name["parse_header"]["doc_frac"] == 0.0
    assert by_name["_helper"]["private"] == 1.0 and by_name["_helper"]["sem_in"] == 1.0
    assert by_name["retry_connect"]["sem_in"] == 0.0        # the semantic leg missed it
    assert by_name["retry_connect"]["kw_lr"] < by_name["parse_header"]["kw_lr"]


def test_only_the_head_is_reordered_and_the_tail_keeps_its_order():
    rows, legs = _legs()
    fused = fuse(legs, lambda r: r["id"], "text", DEFAULT_PARAMS)
    out = rr.rerank(fused, legs, {}, "reconnect with backoff", _model(doc_frac=1.0))
    head = [e["row"]["name"] for e in fused[:3]]
    assert sorted(e["row"]["name"] for e in out[:3]) == sorted(head)
    assert [e["row"]["name"] for e in out[3:]] == [e["row"]["name"] for e in fused[3:]]
    if "retry_connect" in head:
        assert out[0]["row"]["name"] == "retry_connect"
    # every entry kept, each with its fused score for display
    assert {id(e) for e in out} == {id(e) for e in fused}


def test_a_zero_model_keeps_the_fused_order():
    rows, legs = _legs()
    fused = fuse(legs, lambda r: r["id"], "text", DEFAULT_PARAMS)
    out = rr.rerank(fused, legs, {}, "anything", _model())
    assert [id(e) for e in out] == [id(e) for e in fused]


def test_a_hit_a_leg_ranks_well_but_the_fusion_left_below_the_head_is_scored():
    """leg_depth: the semantic leg's 2nd hit, which the keyword leg never saw,
    fuses below a head of 2; with leg_depth 2 it joins the head and a model
    that weighs the cosine puts it first (the tail keeps its order)."""
    rows = [_row(f"kw{i}") for i in range(5)] + [_row("meant")]
    legs = {"keyword": [(10.0 - i, r) for i, r in enumerate(rows[:5])],
            "semantic": [(0.7, rows[0]), (0.65, rows[5]), (0.2, rows[1])]}
    fused = fuse(legs, lambda r: r["id"], "text", DEFAULT_PARAMS)
    names = [e["row"]["name"] for e in fused]
    assert names.index("meant") >= 2                 # the fusion leaves it out of a head of 2
    narrow = dict(_model(cos=1.0), depth=2)
    order, size = rr.head_of(fused, legs, narrow, lambda r: r["id"])
    assert (order, size) == (fused, 2)               # leg_depth 0: today's head
    wide = dict(narrow, leg_depth=2)
    order, size = rr.head_of(fused, legs, wide, lambda r: r["id"])
    assert size == 3 and {e["row"]["name"] for e in order[:3]} == {"kw0", "kw1", "meant"}
    cos = {r["id"]: sc for sc, r in legs["semantic"]}
    out = rr.rerank(order, legs, cos, "what was meant", wide, size)
    assert out[0]["row"]["name"] == "kw0" and out[1]["row"]["name"] == "meant"
    rest = [n for n in names if n not in ("kw0", "kw1", "meant")]
    assert [e["row"]["name"] for e in out[3:]] == rest
    assert {id(e) for e in out} == {id(e) for e in fused}


class _Store:
    def __init__(self, index):
        self.vector_index = index


def test_a_candidate_the_semantic_leg_missed_gets_its_cosine_from_the_vectors():
    index = VectorIndex(3)
    vecs = {"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 0.0], "c": [0.6, 0.8, 0.0]}
    index.build([])
    index.set_vectors([{"id": k, "file_key": "f", "vector": np.asarray(v, dtype=np.float32)}
                       for k, v in vecs.items()])
    legs = {"semantic": [(0.9, {"id": "a"})], "keyword": []}
    entries = [{"row": {"id": i}, "score": 0.0, "match": []} for i in ("a", "c", "gone")]
    got = cosines(_Store(index), [1.0, 0.0, 0.0], entries, legs)
    assert got["a"] == 0.9                       # the leg's own score where it found it
    assert abs(got["c"] - 0.6) < 1e-6           # computed for the one it missed
    assert "gone" not in got                     # no vector: no cosine invented


def test_the_shipped_model_names_every_feature_once():
    data = json.loads(rr.WEIGHTS_FILE.read_text())
    assert set(data["weights"]) == set(rr.FEATURES)
    assert data["depth"] >= 10
    assert rr.shipped_weights() is not None
    assert DEFAULT_PARAMS.rerank == "shipped"


def test_the_table_and_the_daemons_matrix_give_the_same_cosines(git_repo, make_store):
    """Without the daemon's hot matrix (a one-shot reader) the cosines of the
    candidates the semantic leg missed come from the entries table."""
    from testlib import hash_embedded_store

    from indexd.enrich.vectors import VectorStage
    from indexd.pipeline import Indexer

    code = "".join(f"def job_{i}(x):\n    '''Run job {i} on x.'''\n    return x + {i}\n\n\n"
                   for i in range(8))
    settings, store, embedder = hash_embedded_store(git_repo, make_store, {"jobs.py": code})
    Indexer(settings, store).index()
    VectorStage(store, embedder).drain()
    ids = [r["id"] for r in store.entries_where(None, ["id"])]
    entries = [{"row": {"id": i}, "score": 0.0, "match": []} for i in ids]
    query = embedder.encode_query("run a job")
    from_table = cosines(store, query, entries, {"semantic": []})
    store.build_vector_index()
    from_matrix = cosines(store, query, entries, {"semantic": []})
    assert set(from_table) == set(from_matrix) == set(ids)
    assert all(abs(from_table[i] - from_matrix[i]) < 1e-5 for i in ids)
