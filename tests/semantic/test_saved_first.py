"""A file saved while the embed stage works through a backlog waits for one
embedder batch, not for the whole step (real LanceDB, the hash embedder)."""

from __future__ import annotations

from testlib import settings_with_realm

from indexd.enrich.embedder import HashEmbedder
from indexd.enrich.vectors import VectorStage
from indexd.pipeline import Indexer

BACKLOG = "".join(f"def backlog_fn_{i}(x):\n    return x + {i}\n\n\n" for i in range(100))
SAVED = 'def freshly_saved_gadget(x):\n    """Turn a gadget on."""\n    return x\n'


class SaveDuringFirstBatch(HashEmbedder):
    """The hash embedder; during its first batch the user saves a file."""

    batch_size = 8

    def __init__(self, on_first):
        super().__init__()
        self.on_first = on_first
        self.batches: list[int] = []

    def encode(self, texts):
        self.batches.append(len(texts))
        if self.on_first is not None:
            hook, self.on_first = self.on_first, None
            hook()
        return super().encode(texts)


def _backlog(git_repo, make_store):
    """A realm of 100 functions, parsed and not embedded; and a save() that writes
    saved.py, parses it and queues its rows as the engine does after a save."""
    git_repo.write("backlog.py", BACKLOG)
    git_repo.commit("base")
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    indexer = Indexer(settings, store)
    indexer.index()

    def save(stage):
        git_repo.write("saved.py", SAVED)
        indexer.index()
        stage.prioritize([_saved_key(git_repo, store)])
    return store, save


def _saved_key(git_repo, store) -> str:
    return store.file_records(realm="work", repo=str(git_repo.path))["saved.py"].key


def test_a_saved_file_is_embedded_after_one_batch_of_the_backlog(git_repo, make_store):
    store, save = _backlog(git_repo, make_store)
    backlog = store.count_missing_vectors()
    assert backlog > 100

    embedder = SaveDuringFirstBatch(lambda: save(stage))   # during its first batch
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8)   # a step takes 32 rows
    first = stage.step()
    # The backlog step stopped at the batch boundary: one batch embedded, not 32.
    assert first == 8 and embedder.batches == [8]
    saved_key = _saved_key(git_repo, store)
    assert store.rows_needing_vectors(10, file_keys=[saved_key])
    assert stage.priority_done_at is None

    stage.step()
    assert store.rows_needing_vectors(10, file_keys=[saved_key]) == []
    assert stage.priority_done_at is not None
    assert store.count_missing_vectors() >= backlog - 8 - 4 * 8   # the backlog is still there


def test_backlog_steps_take_step_rows_while_a_saved_file_takes_a_small_step(git_repo, make_store):
    # The daemon's backlog steps are embed_step rows (one scan and one rewrite per
    # step); a saved file's rows still go first, in a step of batch x 4.
    git_repo.write("backlog.py", "".join(f"def bulk_fn_{i}(x):\n    return x + {i}\n\n\n"
                                         for i in range(400)))
    git_repo.commit("base")
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    indexer = Indexer(settings, store)
    indexer.index()
    embedder = SaveDuringFirstBatch(None)
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8, step_rows=256)
    assert stage.step() == 256
    assert set(embedder.batches) == {8} and len(embedder.batches) == 32

    git_repo.write("saved.py", "".join(f"def saved_fn_{i}(x):\n    return x\n\n\n" for i in range(50)))
    indexer.index()
    saved_key = store.file_records(realm="work", repo=str(git_repo.path))["saved.py"].key
    stage.prioritize([saved_key])
    before = store.count_missing_vectors()
    saved_before = len(store.rows_needing_vectors(100, file_keys=[saved_key]))
    assert saved_before > 32
    stored = stage.step()
    assert stored == 32 and store.count_missing_vectors() == before - 32
    assert len(store.rows_needing_vectors(100, file_keys=[saved_key])) == saved_before - 32


def test_a_stopped_backlog_step_leaves_its_vectors_in_the_cache_for_the_next(git_repo, make_store):
    """The step a save stops writes no rows (that write would delay the saved
    file's): its vectors wait in the cache, and the next backlog step stores them
    without asking the model again."""
    store, save = _backlog(git_repo, make_store)
    backlog = store.count_missing_vectors()
    embedder = SaveDuringFirstBatch(lambda: save(stage))
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8)
    assert stage.step() == 8 and embedder.batches == [8]
    saved = len(store.rows_needing_vectors(10, file_keys=[_saved_key(git_repo, store)]))
    assert store.count_missing_vectors() == backlog + saved, "no backlog row written"
    stage.step()                      # the saved file's rows
    asked = len(embedder.batches)
    stored = stage.step()             # the backlog again: the first 8 from the cache
    assert stored == 32
    assert sum(embedder.batches[asked:]) == 32 - 8, "the cached 8 were not embedded again"


def test_a_save_written_while_the_model_waited_at_the_gate_goes_before_its_next_batch(
        git_repo, make_store):
    store, save = _backlog(git_repo, make_store)
    pauses = []

    def pause():   # the gate: the second wait is the one a save was written during
        pauses.append(len(embedder.batches))
        if len(pauses) == 2:
            save(stage)

    embedder = SaveDuringFirstBatch(None)
    store.switch_model(embedder.model_id, embedder.dim)
    stage = VectorStage(store, embedder, batch=8, pause=pause)
    assert stage.step() == 8 and embedder.batches == [8], "no batch after the gate opened"
    stage.step()
    assert store.rows_needing_vectors(10, file_keys=[_saved_key(git_repo, store)]) == []


def test_a_saved_files_embedded_time_is_when_search_finds_it_not_after_the_cache_write(
        git_repo, make_store):
    """status.last_batch.timing.ms.embedded read while the step still wrote the
    vector cache (~100 ms on a big realm) had no `embedded` yet although a
    semantic search already found the file (a CI failure of
    tests/e2e/test_freshness_daemon.py); and the figure ran late by that write."""
    import time

    store, save = _backlog(git_repo, make_store)
    embedder = HashEmbedder()
    store.switch_model(embedder.model_id, embedder.dim)
    store.build_vector_index()                      # the daemon's matrix: searched first
    stage = VectorStage(store, embedder, batch=8)
    save(stage)
    seen, table_add_at = [], []
    real_put, real_add = store.cache_put, store.entries.add

    def add(*args, **kw):
        table_add_at.append(time.time())
        return real_add(*args, **kw)

    store.entries.add = add

    def cache_put(model_id, vectors):
        # What a status call at this moment would see: the saved rows are stored.
        seen.append((stage.priority_done_at, store.rows_needing_vectors(10, file_keys=[
            _saved_key(git_repo, store)])))
        return real_put(model_id, vectors)

    store.cache_put = cache_put
    stage.step()                                    # the saved file's step
    [(done_at, still_missing)] = seen
    assert still_missing == []                      # searchable before the cache write...
    assert done_at is not None                      # ...and its embedded time already set,
    assert done_at <= table_add_at[-1]              # the matrix's moment, not the table's
