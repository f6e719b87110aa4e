"""Stopping the daemon cuts the long work in progress instead of waiting for it.

As users hit it: Ctrl-C in `make run` took 16.6 s (the daemon waited for the
bulk embedding child, itself still loading its model), and SIGINT while the
daemon reparsed the stdlib copy ("extractor changed", 1,790 files) took 49-56 s:
the worker finished the reparse and rebuilt the whole graph, and the embed
thread went on embedding meanwhile (systemd SIGKILLs a unit after 90 s). Now a
stop cuts the reparse after the files in hand, gives up a graph build, stops
the model batch in progress and kills a bulk child. Everything cut is derived
again at the next start, and these tests check that nothing is lost.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import replace

import pytest

from testlib import assert_matches_fresh, run_cli, settings_with_realm, wait_until

from indexd.enrich.embedder import BatchInterrupted
from indexd.pipeline import EXTRACTOR_VERSION, Indexer, extractor_key

FILES = 130


def _module(i: int) -> str:
    return (f"def compute_{i}(value):\n    '''Step {i}: scale the value.'''\n    return value * {i}\n\n\n"
            f"class Holder{i}:\n    def get(self):\n        return compute_{i}(self)\n")


def _repo(git_repo, n: int = FILES) -> None:
    for i in range(n):
        git_repo.write(f"pkg/mod_{i:04d}.py", _module(i))
    git_repo.commit()


def _files(status: dict, repo_path) -> int:
    return next(r["files"] for realm in status["realms"] for r in realm["repos"]
                if r["repo"] == str(repo_path))


def test_a_run_told_to_stop_writes_what_it_parsed_and_the_next_run_does_the_rest(
        git_repo, indexd_home, make_store, tmp_path):
    _repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    stop = threading.Event()
    done: list[dict] = []

    def progress(event: dict) -> None:
        if event["event"] == "progress":
            stop.set()        # after the first 50 files, as a shutdown would arrive
        elif event["event"] == "done":
            done.append(event)

    indexer = Indexer(settings, store, on_progress=progress)
    indexer.should_stop = stop.is_set
    report = indexer.index()
    assert report.cut == FILES - 50 and done[-1]["cut"] == FILES - 50
    assert len(store.file_records()) == 50 == report.parsed
    # the plan was not carried out in full: the next run must not trust the realm
    assert store.get_meta(extractor_key("work", str(git_repo.path))) != EXTRACTOR_VERSION

    again = Indexer(settings, store).index()
    assert again.cut == 0 and again.parsed == FILES - 50
    assert len(store.file_records()) == FILES
    assert_matches_fresh(indexd_home, git_repo.path, tmp_path)


def test_a_graph_build_told_to_stop_gives_up_and_says_why(git_repo, indexd_home, make_store):
    from indexd.errors import IndexNotReady
    from indexd.relations import Relations

    _repo(git_repo, 120)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    relations = Relations(store, lambda: settings)
    asked: list[int] = []
    relations.should_stop = lambda: asked.append(1) or len(asked) > 1   # after 50 files
    relations.build()
    assert relations.graph is None and len(asked) == 2
    with pytest.raises(IndexNotReady, match="stopped"):
        relations.impact("pkg/mod_0001.py")
    relations.should_stop = lambda: False
    relations.build()
    assert relations.impact("pkg/mod_0001.py")["target"]


def test_a_stop_cuts_the_model_batch_in_progress_and_starts_no_other(
        git_repo, indexd_home, make_store, monkeypatch):
    """The real model (ONNX, offline) embeds a backlog; a stop arrives during a
    batch: that batch is terminated, keeps nothing, and no batch starts after."""
    from indexd.enrich.onnx_embedder import OnnxEmbedder
    from indexd.enrich.worker import Enricher

    monkeypatch.setenv("INDEXD_EMBED_MODEL", "default")
    doc = "Parse the headers, check the session, render the page and log it. " * 6
    for i in range(40):
        git_repo.write(f"jobs/job_{i}.py", "".join(
            f"def step_{i}_{j}(job):\n    '''Step {j}: {doc}'''\n    return job + {j}\n\n\n"
            for j in range(8)))
    git_repo.commit()
    settings = replace(settings_with_realm("work", git_repo.path), embed_bulk_rows=0,
                       embed_runtime="onnx")
    store = make_store(settings)
    Indexer(settings, store).index()
    missing_before = store.count_missing_vectors()
    assert missing_before >= 320

    runs: list[str] = []           # "run" per model batch begun, "stop" when the stop came
    held = threading.Event()
    enricher = Enricher(store, lambda: settings, lambda: None)
    real_run = OnnxEmbedder._run

    def run(self, batch):
        runs.append("run")
        if runs.count("run") == 3:           # the third batch: hold it until the stop arrives
            held.set()
            wait_until(lambda: enricher._stopping, timeout=60, what="the stop")
        return real_run(self, batch)

    monkeypatch.setattr(OnnxEmbedder, "_run", run)
    enricher.start()
    try:
        assert held.wait(300), "the model never reached its third batch"
        embedded = enricher.vectors.embedded
        runs.append("stop")
        enricher.stop()
    finally:
        enricher.stop()
    assert not enricher._thread.is_alive()
    assert runs[-1] == "stop", f"model batches ran after the stop: {runs}"
    assert enricher.vectors.embedded == embedded   # the cut step kept nothing
    assert store.count_missing_vectors() > 0       # the rest waits for the next start


def test_a_bulk_child_still_loading_is_killed_on_stop_not_waited_for(indexd_home):
    """`make run`'s 16.6 s Ctrl-C: the bulk child ignores SIGINT and loads its
    model; closing the pool waited for that load. abort() kills it at once."""
    from indexd.config import load_settings
    from indexd.enrich.bulk_model import BulkEmbedder
    from indexd.enrich.embedder import HashEmbedder

    settings = replace(load_settings(), embed_model="default")
    bulk = BulkEmbedder(settings, HashEmbedder(), threads=1)
    procs = wait_until(lambda: list(bulk._pool._processes.values()), timeout=60,
                       what="the child started")
    bulk.abort()
    bulk.close()
    for proc in procs:
        proc.join(30)
        assert not proc.is_alive()
    assert bulk._info.done() and bulk._info.exception() is not None   # it never loaded
    with pytest.raises(BatchInterrupted):
        bulk.encode(["after the stop"])
    assert bulk.broken is None   # a stop is not a dead child: no steady fallback


def test_sigterm_during_a_cold_reconcile_cuts_it_and_the_next_start_loses_nothing(
        git_repo, daemon, indexd_home, tmp_path):
    _repo(git_repo, 600)
    run_cli("realm", "add", "work", git_repo.path, check=True)
    log = indexd_home / "log" / "indexd.log"
    d = daemon()
    wait_until(lambda: log.exists() and "reconcile realm=work" in log.read_text(), timeout=120,
               what="the cold reconcile begun")
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=120) == 0
    text = log.read_text()
    assert "batch cut for shutdown" in text, text[-3000:]
    assert "daemon stopped" in text

    d = daemon()

    def indexed_all():
        st = d.call("status")
        return st["state"] == "fresh" and _files(st, git_repo.path) == 600

    wait_until(indexed_all, timeout=300, what="the next start indexed the rest")
    d.stop()
    assert_matches_fresh(indexd_home, git_repo.path, tmp_path)


def test_a_cut_reparse_for_a_new_extractor_resumes_where_it_stopped(
        git_repo, indexd_home, make_store, tmp_path):
    """A stop during "extractor changed" (a whole realm parsed again): the next
    start parses only the files the cut run did not reach."""
    _repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    key = extractor_key("work", str(git_repo.path))
    store.set_meta(key, "an older extractor")
    stop = threading.Event()
    indexer = Indexer(settings, store,
                      on_progress=lambda e: e["event"] == "progress" and stop.set())
    indexer.should_stop = stop.is_set
    assert indexer.index().parsed == 50
    resumed = Indexer(settings, store).index()
    assert (resumed.parsed, resumed.unchanged) == (FILES - 50, 50)
    assert store.get_meta(key) == EXTRACTOR_VERSION
    assert_matches_fresh(indexd_home, git_repo.path, tmp_path)


def test_a_hot_index_build_told_to_stop_gives_up_and_can_build_again(
        git_repo, indexd_home, make_store):
    from indexd.errors import Stopping

    _repo(git_repo, 60)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    with pytest.raises(Stopping):
        store.build_text_index(stop=lambda: True)
    assert not store.text_index.ready
    assert store.build_text_index() == store.count("entries")
    assert store.text_index.ready


def test_ctrl_c_in_a_one_shot_index_stores_what_it_parsed_and_the_next_run_finishes(
        git_repo, indexd_home, tmp_path):
    """`indexd index` on a big tree, Ctrl-C: it used to exit 130 at once, dropping the
    files parsed since its last write. The first Ctrl-C now stops after the files in
    hand: they are stored, `done` says how many were left, and the next run parses
    only those."""
    import json
    import subprocess

    from testlib import BIN

    _repo(git_repo, 600)
    run_cli("realm", "add", "work", git_repo.path, check=True)
    proc = subprocess.Popen([str(BIN / "indexd"), "index", "--json", "--no-embed"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["event"] == "progress":
            proc.send_signal(signal.SIGINT)
            break
    events += [json.loads(line) for line in proc.stdout]
    assert proc.wait(timeout=120) == 130, proc.stderr.read()
    done = events[-1]
    assert done["event"] == "done" and done["interrupted"] and done["cut"] > 0, done
    assert done["parsed"] + done["cut"] == 600

    again = run_cli("index", "--json", "--no-embed", tool="indexd", check=True, timeout=300)
    last = json.loads(again.stdout.splitlines()[-1])
    assert (last["parsed"], last["unchanged"], last["cut"]) == (done["cut"], done["parsed"], 0)
    assert_matches_fresh(indexd_home, git_repo.path, tmp_path)


BULK_KILLED_MID_BATCH = """
import threading
from dataclasses import replace
from testlib import wait_until
from indexd.config import load_settings
from indexd.enrich.bulk_model import BulkEmbedder
from indexd.enrich.embedder import BatchInterrupted, HashEmbedder

bulk = BulkEmbedder(replace(load_settings(), embed_model="default"), HashEmbedder(), threads=1)
wait_until(bulk.ready, timeout=240, what="the bulk model loaded")
assert len(bulk.encode(["a first batch, as the backlog's"])) == 1
outcome = []

def encode():
    try:
        bulk.encode(["def scale(value): return value * 2  # " + "words " * 60] * 512)
    except BatchInterrupted:
        outcome.append("interrupted")

running = threading.Thread(target=encode)
running.start()
wait_until(lambda: bulk._pool._pending_work_items, timeout=60, what="the batch sent")
bulk.abort()
running.join(60)
bulk.close()
print(outcome)
"""


def test_a_bulk_child_killed_mid_batch_leaves_no_semaphore_behind(indexd_home):
    """`make run`, Ctrl-C while the bulk model embedded: the daemon stopped at once but
    printed "resource_tracker: There appear to be 1 leaked semaphore objects": tqdm's
    multiprocessing lock, made by the child's first (disabled) progress bar and never
    unlinked by a killed child."""
    import subprocess
    import sys
    from pathlib import Path

    tests = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", BULK_KILLED_MID_BATCH], capture_output=True,
                          text=True, timeout=300, cwd=tests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("['interrupted']"), proc.stdout + proc.stderr
    assert "leaked semaphore" not in proc.stderr, proc.stderr
