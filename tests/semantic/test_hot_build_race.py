"""Writes that reach a hot index after it is published, before its build reads the table.

The daemon's worker builds the hot keyword and vector indexes at start while
the enrich thread already stores vectors (a restart with a backlog: 584
vectors in memory for 520 rows once, and a semantic answer naming one entry
twice). The store's ``before_hot_build_reads`` seam runs the enrich thread's
work exactly in that window, so the interleaving happens every time.
"""

from __future__ import annotations

from testlib import hash_embedded_store

from indexd.enrich.vectors import VectorStage
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest

CODE = "".join(f"def handler_{i}(event):\n    '''Handle event kind {i}.'''\n    return {i}\n\n\n"
               for i in range(12))


def _store_with_backlog(git_repo, make_store):
    """Rows indexed, a few of them embedded: what a daemon stopped mid-embedding left."""
    settings, store, embedder = hash_embedded_store(git_repo, make_store, {"a.py": CODE})
    Indexer(settings, store).index()
    stage = VectorStage(store, embedder, batch=1)
    stage.step()   # 4 rows
    return store, embedder, stage


def _semantic(store, embedder, query):
    req = SearchRequest(query=query, mode="semantic", limit=30)
    return [(h["path"], h["symbol"]) for h in fused_search(store, embedder, req)["results"]]


def test_vectors_stored_while_the_matrix_builds_are_held_once(git_repo, make_store):
    store, embedder, stage = _store_with_backlog(git_repo, make_store)
    store.build_text_index()

    def enrich_meanwhile(name):
        if name == "vector_index":
            stage.drain()   # the enrich thread's set_vectors, inside the window
    store.before_hot_build_reads = enrich_meanwhile
    store.build_vector_index()

    assert store.count_missing_vectors() == 0
    assert store.vector_index.vectors == store.count("entries", "vector IS NOT NULL")
    hot = _semantic(store, embedder, "handle event kind 3")
    assert len(hot) == len(set(hot)) > 0, hot
    table_only = type(store)(store.path)   # no hot indexes: the table's own vector search
    assert hot == _semantic(table_only, embedder, "handle event kind 3")


def test_words_stored_while_the_text_index_builds_are_held_once(git_repo, make_store):
    store, embedder, _ = _store_with_backlog(git_repo, make_store)
    target = store.entries_where("name = 'handler_3'", ["id", "search_text"])[0]

    def annotate_meanwhile(name):
        if name == "text_index":   # an annotation or a summary, inside the window
            store.update_entries({target["id"]: {"search_text": target["search_text"] + " okapi"}})
    store.before_hot_build_reads = annotate_meanwhile
    store.build_text_index()

    assert store.text_index.docs == store.count("entries")
    res = fused_search(store, None, SearchRequest(query="okapi", mode="keyword"))["results"]
    assert [h["symbol"] for h in res] == ["handler_3"]
