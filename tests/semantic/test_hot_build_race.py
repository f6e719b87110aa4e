"""Writes that reach a hot index after it is published, before its build reads the table.

The daemon's worker builds the hot keyword and vector indexes at start while
the enrich thread already stores vectors (a restart with a backlog: 584
vectors in memory for 520 rows once, and a semantic answer naming one entry
twice). The store's ``before_hot_build_reads`` seam runs the enrich thread's
work exactly in that window, so the interleaving happens every time.
"""

from __future__ import annotations

import threading

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


def test_a_vector_write_holding_the_table_lock_while_the_matrix_builds_does_not_deadlock(
        git_repo, make_store):
    """CI, 2026-12-06: a daemon restarted with an embed backlog stopped answering
    (its SIGUSR1 dump: the build held the matrix's lock waiting to read the
    table, the enrich thread held the table's write lock waiting for the
    matrix). The two threads are put exactly there here, every time."""
    store, embedder, stage = _store_with_backlog(git_repo, make_store)
    building, writing = threading.Event(), threading.Event()
    hot, scan = store._hot, store.scan_batches

    def hot_after_signalling(name, op, *args):
        if name == "vector_index" and op == "set_vectors":
            writing.set()   # the table's write lock is held here
        return hot(name, op, *args)

    def scan_after_the_writer(*args, **kwargs):
        building.set()   # inside the build: it is about to read the table
        writing.wait(30)
        yield from scan(*args, **kwargs)

    store._hot = hot_after_signalling
    store.scan_batches = scan_after_the_writer
    builder = threading.Thread(target=store.build_vector_index, daemon=True)
    builder.start()
    assert building.wait(30)
    enricher = threading.Thread(target=stage.drain, daemon=True)
    enricher.start()
    for thread in (enricher, builder):
        thread.join(60)
    assert not builder.is_alive() and not enricher.is_alive(), "the build and the write deadlocked"

    assert store.count_missing_vectors() == 0
    assert store.vector_index.ready
    assert store.vector_index.vectors == store.count("entries", "vector IS NOT NULL")
    found = _semantic(store, embedder, "handle event kind 3")
    assert len(found) == len(set(found)) > 0, found


def test_a_keyword_index_write_during_its_build_returns_at_once_and_lands(git_repo, make_store):
    """The keyword index obeys the same rule: a write arriving while its build
    reads the table is queued, not blocked on the build (which may be waiting
    for that writer's table lock), and is in the index once the build ends."""
    store, _, _ = _store_with_backlog(git_repo, make_store)
    from indexd.store.text_index import COLUMNS, TextIndex

    rows = store.entries_where(None, COLUMNS)
    target = next(dict(r) for r in rows if r["name"] == "handler_3")
    target["search_text"] += " okapi"
    index = TextIndex()
    returned = threading.Event()

    def batches():
        yield rows[:5]
        writer = threading.Thread(target=lambda: (index.upsert([target]), returned.set()))
        writer.start()
        assert returned.wait(30), "the write waited for the build"
        writer.join()
        yield rows[5:]

    index.build(batches())
    store.text_index = index
    res = fused_search(store, None, SearchRequest(query="okapi", mode="keyword"))["results"]
    assert [h["symbol"] for h in res] == ["handler_3"]
    assert index.docs == index.ranked == len(rows)
