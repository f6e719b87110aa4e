"""Fixtures: an isolated INDEXD_HOME per test, real git repos, a real daemon.

Helpers live in testlib.py (importable from any test folder: pytest's
pythonpath includes tests/), so sub-folders may have their own conftest.py.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from testlib import Daemon, GitRepo, descendants, kill_all, proc_info, still_alive, wait_until

SESSION_MARK = "PYTEST_INDEXD_SESSION"   # inherited by every process the tests start
LEFTOVER_GRACE_S = 5


@pytest.fixture(scope="session", autouse=True)
def no_leftover_processes():
    """Fail the session if a process the tests started outlives them.

    Found two ways: descendants of this pytest process, and (for orphans,
    reparented to init) any process whose environment carries this session's
    mark. Each gets a few seconds to finish exiting; the rest are named in the
    failure, then killed so that they do not outlive the report either.
    """
    token = uuid.uuid4().hex
    os.environ[SESSION_MARK] = token
    yield
    if not sys.platform.startswith("linux"):
        return
    mark = f"{SESSION_MARK}={token}"
    try:
        wait_until(lambda: not _session_processes(mark), timeout=LEFTOVER_GRACE_S,
                   interval=0.1, what="processes started by the tests to exit")
    except AssertionError:
        left = _session_processes(mark)
        kill_all(left)
        pytest.fail("processes started by the tests are still running after the session "
                    "(killed now):\n  " + "\n  ".join(map(str, left)), pytrace=False)


def _session_processes(mark: str) -> list:
    skip = {os.getpid()} | _own_helpers()
    found = {p.pid: p for p in descendants(os.getpid())}
    needle = b"\0" + mark.encode() + b"\0"
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in found:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = b"\0" + fh.read()
        except OSError:
            continue    # gone, or not ours to read
        if needle in env and (info := proc_info(int(entry))) is not None:
            found[info.pid] = info
    return still_alive(p for pid, p in found.items() if pid not in skip)


def _own_helpers() -> set:
    """multiprocessing's helpers for pools run inside pytest (tests/test_index_stdlib.py):
    they serve this process until it exits, and exit with it."""
    from multiprocessing import forkserver, resource_tracker

    return {getattr(resource_tracker._resource_tracker, "_pid", None),
            getattr(forkserver._forkserver, "_forkserver_pid", None)}


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory):
    """One ONNX export of the real model per test session, not one per INDEXD_HOME.
    Under pytest-xdist the workers share one folder (the run's temp root): an export is
    atomic (enrich/onnx_export.py), so two workers racing both finish, and later ones
    load it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        path = tmp_path_factory.getbasetemp().parent / "models"
        path.mkdir(exist_ok=True)
    else:
        path = tmp_path_factory.mktemp("models")
    os.environ["INDEXD_MODEL_CACHE"] = str(path)
    yield path
    os.environ.pop("INDEXD_MODEL_CACHE", None)


@pytest.fixture(scope="session")
def real_model(model_cache):
    """The real default model, loaded offline once for the tests that share it."""
    from indexd.config import load_settings
    from indexd.enrich.embedder import load_embedder

    return load_embedder(load_settings(flags={"embed_model": "default"}))


@pytest.fixture(autouse=True)
def indexd_home(monkeypatch):
    # Short path: Unix socket paths are limited to ~107 bytes.
    home = Path(tempfile.mkdtemp(prefix="ix"))
    monkeypatch.setenv("INDEXD_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # `indexd index` embeds: the deterministic hash embedder keeps the many
    # one-shot indexes fast (as the Daemon helper does); tests about meaning or
    # about the config's own embed_model set or delete this.
    monkeypatch.setenv("INDEXD_EMBED_MODEL", "hash")
    yield home
    # The test's own patches first: one of os.open (tests/scan/test_reader.py) made
    # rmtree give up quietly and leave the folder in /tmp.
    monkeypatch.undo()
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def engine(git_repo, indexd_home, make_store):
    """The daemon's engine in this process (no socket, no model) on a one-file
    repo, indexed; stopped after the test."""
    from testlib import settings_with_realm, wait_until

    from indexd.engine import Engine

    git_repo.write("pay.py", "def settle_invoice(total):\n    return total\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    engine = Engine(settings, make_store(settings), embed=False)
    engine.start()
    try:
        wait_until(lambda: engine.store.count("entries") > 0, timeout=120, what="the repo indexed")
        yield engine
    finally:
        engine.stop()


@pytest.fixture
def make_store():
    from indexd.store import Store

    stores = []

    def make(settings):
        store = Store(settings.paths.store_dir)
        stores.append(store)
        return store

    yield make


@pytest.fixture
def daemon(indexd_home):
    started = []

    def start(extra_env=None, wait=True, args=()):
        d = Daemon(indexd_home, extra_env, args)
        started.append(d)
        return d.start(wait=wait)

    yield start
    for d in started:
        d.stop()
