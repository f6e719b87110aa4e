"""A save reaches the daemon's hot keyword index before the table's commits.

Keyword search answers from the hot index, and a save's LanceDB commits take
longer than its update (bench/freshness.py: store 100-170 ms, hot index 80-100
ms for typing.py), so the hot index goes first. The table stays the truth: a
table write that fails puts the hot index back to what the table holds.
"""

from __future__ import annotations

import pytest
from testlib import settings_with_realm

from indexd.errors import StoreError
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest

V1 = "def settle(ledger):\n    '''Add up the ledger's okapi lines.'''\n    return sum(ledger)\n"
V2 = "def settle(ledger):\n    '''Add up the ledger's quagga lines.'''\n    return sum(ledger)\n"


def _words(store, word):
    res = fused_search(store, None, SearchRequest(query=word, mode="keyword"))["results"]
    return [h["symbol"] or "<file>" for h in res]


def _indexed(git_repo, make_store):
    git_repo.write("pay.py", V1)
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    store.build_text_index()
    Indexer(settings, store).index()
    assert _words(store, "okapi") == ["settle", "<file>"]
    return settings, store


def test_a_save_is_keyword_searchable_before_its_table_commits(git_repo, make_store):
    settings, store = _indexed(git_repo, make_store)
    seen = []
    store.fault_hook = lambda op: seen.append((op, _words(store, "quagga"),
                                               store.count("entries", "doc LIKE '%quagga%'")))
    git_repo.write("pay.py", V2)
    Indexer(settings, store).index()
    assert ("write", ["settle", "<file>"], 0) in seen, seen   # searchable, not yet in the table
    assert _words(store, "quagga") == ["settle", "<file>"] and _words(store, "okapi") == []
    assert store.text_index.docs == store.count("entries")


@pytest.mark.parametrize("error, raised", [(OSError(28, "No space left on device"), StoreError),
                                           (KeyError("a bug in lancedb"), KeyError)])
def test_a_failed_table_write_puts_the_hot_index_back(git_repo, make_store, error, raised):
    settings, store = _indexed(git_repo, make_store)

    def fail(op):
        if op == "write":
            raise error
    store.fault_hook = fail
    git_repo.write("pay.py", V2)
    with pytest.raises(raised):
        Indexer(settings, store).index()
    assert store.text_index.ready
    assert _words(store, "quagga") == [] and _words(store, "okapi") == ["settle", "<file>"]
    assert store.text_index.docs == store.count("entries")


def test_a_save_is_keyword_searchable_before_its_cached_vectors_are_read(git_repo, make_store):
    """The daemon's vector cache lookup (a scan of the cache table) runs after the
    hot keyword index has the save, not before it; the rows still get their vectors."""
    from indexd.enrich.embedder import HashEmbedder
    from indexd.enrich.vectors import VectorStage

    settings, store = _indexed(git_repo, make_store)
    embedder = HashEmbedder(32)
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8)
    stage.drain()
    assert store.count_missing_vectors() == 0
    indexer = Indexer(settings, store)
    seen = []

    def fill(rows):
        seen.append(_words(store, "quagga"))
        return stage.fill_before_write(rows)
    indexer.before_table = fill
    # the file entry changes, settle's vector is the cache's (its text is unchanged
    # but for the word, so a new one): the fill runs either way
    git_repo.write("pay.py", V2 + "\n")
    indexer.index()
    assert seen == [["settle", "<file>"]]
    assert _words(store, "quagga") == ["settle", "<file>"]
    assert store.text_index.docs == store.count("entries")


def test_cached_vectors_filled_after_the_hot_index_reach_the_table(git_repo, make_store):
    from indexd.enrich.embedder import HashEmbedder
    from indexd.enrich.vectors import VectorStage

    settings, store = _indexed(git_repo, make_store)
    embedder = HashEmbedder(32)
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8)
    stage.drain()
    indexer = Indexer(settings, store)
    indexer.before_table = stage.fill_before_write
    git_repo.write("pay.py", V2)
    indexer.index()
    stage.drain()
    git_repo.write("pay.py", V1)        # back: every text is in the cache
    indexer.index()
    assert store.count_missing_vectors() == 0, "the vectors came from the cache, unembedded"


def test_a_save_is_keyword_searchable_while_another_writer_holds_the_store(git_repo, make_store):
    """The embed stage holds the store's writer lock while it writes a step's
    vectors; a save's words do not wait for it, its table rows do."""
    import threading

    from testlib import wait_until

    settings, store = _indexed(git_repo, make_store)
    git_repo.write("pay.py", V2)
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def vector_write():
        with store.writer:
            held.set()
            release.wait(60)

    holder = threading.Thread(target=vector_write)
    holder.start()
    indexer = threading.Thread(target=lambda: (Indexer(settings, store).index(), done.set()))
    try:
        assert held.wait(10), "the other writer holds the lock"
        indexer.start()
        wait_until(lambda: _words(store, "quagga") == ["settle", "<file>"], timeout=30,
                   what="the save's words searchable while the lock is held")
        assert not done.is_set()
        assert store.count("entries", "doc LIKE '%quagga%'") == 0, "its rows wait for the lock"
    finally:
        release.set()
        holder.join(30)
        if indexer.ident is not None:
            indexer.join(60)
    assert done.is_set() and store.count("entries", "doc LIKE '%quagga%'") == 1
    assert _words(store, "okapi") == [] and store.text_index.docs == store.count("entries")


def test_a_daemons_save_leaves_the_tables_full_text_index_to_upkeep(git_repo, make_store):
    """Rebuilding the table's full-text index took 1.2 s of a save on the stdlib
    (bench/freshness.py: the slow semantic saves); the daemon answers keyword search
    from its hot index, so a small batch no longer checks it. The one-shot does."""
    settings, store = _indexed(git_repo, make_store)
    calls = []
    real = store.ensure_fts
    store.ensure_fts = lambda *a, **k: (calls.append(a), real(*a, **k))[1]
    daemons = Indexer(settings, store)
    daemons.fts_min_files = 100          # what the engine sets
    git_repo.write("pay.py", V2)
    daemons.index()
    assert calls == [] and _words(store, "quagga") == ["settle", "<file>"]
    # a reader without the daemon's hot index finds the saved rows in the table
    from indexd.query.search import keyword_search
    hot, store.text_index = store.text_index, None
    assert any(h["symbol"] == "settle" for h in
               keyword_search(store, SearchRequest(query="quagga", mode="keyword"))["results"])
    store.text_index = hot
    git_repo.write("pay.py", V1)
    Indexer(settings, store).index()     # the one-shot's default
    assert calls == [()]
