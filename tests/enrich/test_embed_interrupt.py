"""A save stops the background model batch in progress (issue 13, part 4).

The embed gate (test_embed_yields_to_save.py) holds the *next* batch while a
saved file is parsed; the batch already running kept both cores for up to a
second under load, which is most of what a keyword save waited for beyond
its own parse. The real bundled model (ONNX runtime, offline) is stopped
mid-run through its run options; the batch is run again after the save and
stores exactly the vectors an uninterrupted run stores. Queries are never
stopped.
"""

from __future__ import annotations

import threading
import time
import pytest
from enrich_fixtures import load_real_model
from testlib import hash_embedded_store

from indexd.enrich.embedder import BatchInterrupted
from indexd.enrich.texts import embed_parts
from indexd.enrich.vectors import VectorStage, pool
from indexd.pipeline import Indexer

# Long texts in big batches: a run lasts long enough to be caught mid-way.
TEXTS = [f"def handler_{i}(request, retries={i}):\n    '''Answer request number {i}: "
         + "parse the headers, check the session, render the page and log it. " * 12 + "'''"
         for i in range(192)]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    embedder = load_real_model(tmp_path_factory.mktemp("home"), threads=2)
    assert embedder.runtime == "onnx"
    return embedder


def _interrupt_once(model, running: threading.Thread, timeout: float = 60) -> bool:
    """Ask until a background batch was really asked to stop (or the call ended)."""
    deadline = time.monotonic() + timeout
    while running.is_alive() and time.monotonic() < deadline:
        if model.interrupt():
            return True
        time.sleep(0.001)
    return False


def test_a_running_background_batch_stops_and_keeps_nothing(model):
    outcome: dict = {}

    def background():
        try:
            outcome["vectors"] = model.encode(TEXTS, interruptible=True)
        except BatchInterrupted:
            outcome["interrupted"] = True

    worker = threading.Thread(target=background)
    worker.start()
    asked = _interrupt_once(model, worker)
    worker.join(120)
    assert not worker.is_alive()
    assert asked and outcome == {"interrupted": True}
    # the model is usable at once, and a later run is not stopped by the old request
    after = model.encode(TEXTS[:4], interruptible=True)
    assert len(after) == 4 and all(len(v) == model.dim for v in after)


def test_a_query_is_never_stopped(model):
    errors: list[BaseException] = []
    answers: list = []

    def queries():
        try:
            for i in range(30):   # distinct texts: none answered from the query cache
                answers.append(model.encode_query(f"how is request {i} retried after a timeout"))
        except BaseException as exc:  # noqa: BLE001 - the assertion below reports it
            errors.append(exc)

    worker = threading.Thread(target=queries)
    worker.start()
    asked = []
    while worker.is_alive():
        asked.append(model.interrupt())
    worker.join(60)
    assert not errors and len(answers) == 30
    assert not any(asked)


def test_a_stopped_batch_is_run_again_and_stores_what_an_uninterrupted_run_stores(
        git_repo, make_store, model):
    doc = "Parse the headers, check the session, render the page and log it. " * 8
    code = "".join(f"def step_{i}(job):\n    '''Step {i}: {doc}'''\n    return job + {i}\n\n\n"
                   for i in range(64))
    settings, store, _ = hash_embedded_store(git_repo, make_store, {"jobs.py": code})
    store.switch_model(model.model_id, model.dim)
    Indexer(settings, store).index()
    waiting = store.count_missing_vectors()
    assert waiting >= 64
    paused = []
    stage = VectorStage(store, model, batch=waiting, pause=lambda: paused.append(time.monotonic()))
    step = threading.Thread(target=stage.step)
    step.start()
    assert _interrupt_once(model, step)
    step.join(300)
    assert not step.is_alive()
    assert stage.interrupted == 1
    assert len(paused) >= 2          # it waited for the save again before the rerun
    assert store.count_missing_vectors() == 0
    rows = store.entries_where(None, ["id", "kind", "name", "qualname", "signature", "doc",
                                      "summary", "summary_source", "path", "lang", "body",
                                      "vector"])
    expected = [pool(model.encode(embed_parts(r, stage.recipe))) for r in rows]
    for row, want in zip(rows, expected):
        cos = sum(a * b for a, b in zip(row["vector"], want))
        assert cos > 0.9999, (row["qualname"], cos)
