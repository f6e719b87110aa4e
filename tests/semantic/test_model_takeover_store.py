"""What the store does for a model taking over (enrich/later_model.py): a write
filled with the old model's vectors just before the switch drops them, and the
later model's cached vectors survive the cache purge. Real LanceDB."""

from __future__ import annotations

from testlib import settings_with_realm

from indexd.enrich.embedder import HashEmbedder
from indexd.enrich.vectors import VectorStage
from indexd.pipeline import Indexer

CODE = "def settle(bill):\n    return bill\n\n\ndef refund(bill):\n    return -bill\n"


class Other(HashEmbedder):
    """Same dimension, another model: its vectors must never sit beside the first's."""

    def __init__(self):
        super().__init__(64)
        self.model_id = "other-embedder/64"


def test_a_write_filled_before_a_model_switch_goes_without_those_vectors(git_repo, make_store):
    git_repo.write("pay.py", CODE)
    git_repo.commit()
    store = make_store(settings_with_realm("work", git_repo.path))
    first, later = HashEmbedder(64), Other()
    store.switch_model(first.model_id, first.dim)
    stage = VectorStage(store, first, batch=8)
    indexer = Indexer(settings_with_realm("work", git_repo.path), store)

    def fill_then_switch(rows):
        assert stage.fill_before_write(rows, now=first.encode_now, limit=8)
        store.switch_model(later.model_id, later.dim)   # the take-over, between fill and write
    indexer.before_table = fill_then_switch
    indexer.index()
    assert store.count("entries") == 3
    assert store.count_missing_vectors() == 3, "the first model's vectors were written"
    assert store.get_meta("embed_model") == later.model_id


def test_the_later_models_cached_vectors_survive_the_purge(git_repo, make_store):
    store = make_store(settings_with_realm("work", git_repo.path))
    first = HashEmbedder(64)
    store.switch_model(first.model_id, first.dim)
    store.cache_put(first.model_id, {f"old{i}": [0.1] * 64 for i in range(5)})
    store.cache_put("other-embedder/64", {f"new{i}": [0.2] * 64 for i in range(5)})
    assert store.purge_cache(0, keep_model="other-embedder/64") == 5
    assert set(store.cache_get([f"new{i}" for i in range(5)])) == {f"new{i}" for i in range(5)}
    assert store.cache_get([f"old{i}" for i in range(5)]) == {}


def test_a_cache_of_another_dimension_is_its_own_table(git_repo, make_store):
    store = make_store(settings_with_realm("work", git_repo.path))
    store.switch_model("first/64", 64)
    store.cache_put("later/32", {"k": [0.5] * 32}, dim=32)
    assert store.cache_get(["k"]) == {}
    assert list(store.cache_get(["k"], dim=32)) == ["k"]
    store.switch_model("later/32", 32)   # the take-over finds them in its own cache
    assert list(store.cache_get(["k"])) == ["k"]
