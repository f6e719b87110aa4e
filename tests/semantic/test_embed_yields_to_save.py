"""While a saved file is parsed and written, the model waits between batches.

On two cores a save's parse competed with the model's two threads for the CPU
(bench/freshness.py: read + parse 98 ms median while the corpus embeds), so
the daemon's watcher closes a gate on every file event and the indexer opens
it once the batch is written; the model runs no batch meanwhile. A stream of
events cannot starve the model: no batch waits longer than MAX_YIELD_S.
"""

from __future__ import annotations

import threading
import time

from testlib import hash_embedded_store

from indexd.enrich import worker
from indexd.enrich.embedder import HashEmbedder
from indexd.enrich.vectors import VectorStage
from indexd.enrich.worker import Enricher
from indexd.pipeline import Indexer

CODE = ("def refund_order(order):\n    '''Give the customer their money back.'''\n    return -order\n\n\n"
        "def ship_order(order):\n    '''Hand the parcel to the carrier.'''\n    return order\n")


class Recording(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.times: list[float] = []
        self.batch_size = 1   # one model batch per entry: a pause before each

    def encode(self, texts):
        self.times.append(time.monotonic())
        return super().encode(texts)


def _stage(git_repo, make_store):
    settings, store, _ = hash_embedded_store(git_repo, make_store, {"pay.py": CODE})
    Indexer(settings, store).index()
    assert store.count_missing_vectors() == 3
    enricher = Enricher(store, lambda: settings, lambda: None)
    entered = threading.Event()

    def pause():
        entered.set()
        enricher.wait_for_saves()

    model = Recording()
    return enricher, VectorStage(store, model, batch=1, pause=pause), model, entered, store


def test_no_model_batch_runs_between_a_file_event_and_its_write(git_repo, make_store, monkeypatch):
    monkeypatch.setattr(worker, "SAVE_YIELD_S", 120.0)   # only save_written opens the gate here
    monkeypatch.setattr(worker, "MAX_YIELD_S", 120.0)
    enricher, stage, model, entered, store = _stage(git_repo, make_store)
    enricher.yield_to_save()
    step = threading.Thread(target=stage.step)
    step.start()
    assert entered.wait(30), "the stage never reached a batch"
    released = time.monotonic()
    enricher.save_written()
    step.join(60)
    assert not step.is_alive()
    assert model.times and min(model.times) >= released, "a batch ran while the save was in flight"
    assert store.count_missing_vectors() == 0


def test_events_that_keep_coming_cannot_starve_the_model(git_repo, make_store, monkeypatch):
    monkeypatch.setattr(worker, "SAVE_YIELD_S", 120.0)
    monkeypatch.setattr(worker, "MAX_YIELD_S", 0.2)      # per batch, whatever arrives
    enricher, stage, model, entered, store = _stage(git_repo, make_store)
    enricher.yield_to_save()                              # and never written
    step = threading.Thread(target=stage.step)
    step.start()
    step.join(60)
    # 3 entries, the two functions with a docstring's text each: 5 texts, 5 batches
    assert not step.is_alive() and len(model.times) == 5
    assert store.count_missing_vectors() == 0
