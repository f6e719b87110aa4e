"""A save of a few new entries is embedded with its own write.

On a big realm the backlog's batch in progress (the bulk child's, up to a
second) kept a saved file's one new function from semantic search
(bench/freshness.py: p95 1.5-1.9 s). Now the write's hook embeds up to
SAVE_EMBED_MAX new texts with the daemon's own model, next in turn, and the
rows reach the table and the matrix with their vectors. Real LanceDB, the
real default model loaded offline.
"""

from __future__ import annotations

import logging

from testlib import settings_with_realm

from indexd.enrich.texts import embed_hash, embed_parts, embed_text
from indexd.enrich.vectors import pool
from indexd.enrich.vectors import VectorStage
from indexd.enrich.worker import SAVE_EMBED_MAX
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest

SAVED = ("def celsius_to_fahrenheit(degrees):\n"
         "    '''Convert a temperature from Celsius to Fahrenheit.'''\n"
         "    return degrees * 9 / 5 + 32\n\n\n"
         "def existing_handler():\n    return 1\n")


def _indexer(git_repo, make_store, model, now):
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    store.switch_model(model.model_id, model.dim)
    stage = VectorStage(store, model, batch=8)
    indexer = Indexer(settings, store)
    indexer.before_table = lambda rows: stage.fill_before_write(rows, now=now, limit=SAVE_EMBED_MAX)
    return store, stage, indexer


def test_a_saves_few_new_entries_are_searchable_by_meaning_once_written(git_repo, make_store,
                                                                         real_model):
    git_repo.write("conv.py", SAVED)
    git_repo.commit()
    store, stage, indexer = _indexer(git_repo, make_store, real_model, real_model.encode_now)
    indexer.index()
    # No embed step ran: the write itself carried the three vectors (file + two functions).
    assert store.count("entries") == 3 and store.count_missing_vectors() == 0
    res = fused_search(store, real_model, SearchRequest(
        query="turn a temperature in celsius into fahrenheit", mode="semantic", limit=1))
    assert res["results"][0]["symbol"] == "celsius_to_fahrenheit"
    # The same vectors the queue's step would have stored (the texts, this model).
    row = store.entries_where("name = 'celsius_to_fahrenheit'", ["vector", "path", "lang", "kind",
                                                                  "name", "qualname", "signature",
                                                                  "doc", "summary", "summary_source",
                                                                  "body"])[0]
    again = pool(real_model.encode(embed_parts(row, stage.recipe)))
    assert sum(a * b for a, b in zip(row["vector"], again)) > 0.9999
    # The cache gets them from the embed thread's next step, off the save's path.
    key = embed_hash(embed_text(row, stage.recipe), real_model.model_id)
    assert store.cache_get([key]) == {}
    assert stage.step() == 0
    assert set(store.cache_get([key])) == {key}


HELPERS = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(SAVE_EMBED_MAX + 2))


def _many_indexed(git_repo, make_store, real_model):
    """A file of more new texts than a write embeds, indexed: the queue has them all.
    Returns the store, the stage, the indexer and the write's calls to the model."""
    git_repo.write("many.py", HELPERS)
    git_repo.commit()
    calls = []

    def now(texts):
        calls.append(texts)
        return real_model.encode_now(texts)

    store, stage, indexer = _indexer(git_repo, make_store, real_model, now)
    indexer.index()
    assert calls == [] and store.count_missing_vectors() == SAVE_EMBED_MAX + 3
    return store, stage, indexer, calls


def test_a_change_of_many_new_entries_is_left_to_the_queue(git_repo, make_store, real_model):
    store, stage, _, _ = _many_indexed(git_repo, make_store, real_model)
    stage.drain()
    assert store.count_missing_vectors() == 0


def test_a_failing_model_leaves_the_save_written_and_queued(git_repo, make_store, real_model,
                                                           caplog):
    git_repo.write("conv.py", SAVED)
    git_repo.commit()

    def broken(texts):
        raise RuntimeError("model went away")

    store, stage, indexer = _indexer(git_repo, make_store, real_model, broken)
    with caplog.at_level(logging.WARNING, logger="indexd.enrich.vectors"):
        indexer.index()
    assert store.count("entries") == 3 and store.count_missing_vectors() == 3
    assert "not embedded before its write: model went away" in caplog.text
    stage.drain()   # the queue still embeds them
    assert store.count_missing_vectors() == 0


def test_a_shared_realms_reconcile_leaves_its_vectors_to_the_team_index(git_repo, make_store,
                                                                        real_model):
    from indexd.enrich.worker import Enricher

    git_repo.write("conv.py", SAVED)
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store, stage, indexer = _indexer(git_repo, make_store, real_model, None)
    enricher = Enricher(store, lambda: settings, lambda: None, embed=False)
    enricher.embedder, enricher.vectors = real_model, stage
    indexer.before_table = enricher.before_table
    enricher.hold_vectors = True   # the engine, while a shared realm's files are written
    indexer.index()
    assert store.count_missing_vectors() == 3
    assert (enricher.written_with_vectors, enricher.written_without_vectors) == (0, 1)
    enricher.hold_vectors = False
    git_repo.write("conv.py", SAVED + "\n\ndef kelvin_offset():\n    return 273.15\n")
    indexer.index()
    # a save once the hold is over: its file's four rows, none cached, go with its write
    assert store.count_missing_vectors() == 0
    assert (enricher.written_with_vectors, enricher.written_without_vectors) == (1, 1)


def test_the_first_save_of_a_file_the_queue_has_not_reached_embeds_its_edit_at_once(
        git_repo, make_store, real_model):
    # Before: every entry of such a file was missing, more than SAVE_EMBED_MAX, so
    # the write embedded none and the edit waited for the whole file in the queue
    # (typing.py's first save while the stdlib embedded: 13-28 s to semantic search).
    store, stage, indexer, calls = _many_indexed(git_repo, make_store, real_model)
    git_repo.write("many.py", HELPERS + SAVED.split("\n\n\ndef existing_handler")[0] + "\n")
    indexer.index()
    # the save's changed entries only: the new function and the file's own entry
    assert len(calls) == 1 and len(calls[0]) <= SAVE_EMBED_MAX, calls
    assert any("Celsius to Fahrenheit" in text for text in calls[0]), calls
    assert not any(text.startswith("function helper_") for text in calls[0]), calls
    res = fused_search(store, real_model, SearchRequest(
        query="turn a temperature in celsius into fahrenheit", mode="semantic", limit=1))
    assert res["results"][0]["symbol"] == "celsius_to_fahrenheit"
    assert store.count_missing_vectors() == SAVE_EMBED_MAX + 2   # the untouched helpers wait
    stage.drain()
    assert store.count_missing_vectors() == 0
