"""Fixtures: an isolated INDEXD_HOME per test, real git repos, a real daemon.

Helpers live in testlib.py (importable from any test folder: pytest's
pythonpath includes tests/), so sub-folders may have their own conftest.py.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from testlib import Daemon, GitRepo


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory):
    """One ONNX export of the real model per test session, not one per INDEXD_HOME."""
    import os

    path = tmp_path_factory.mktemp("models")
    os.environ["INDEXD_MODEL_CACHE"] = str(path)
    yield path
    os.environ.pop("INDEXD_MODEL_CACHE", None)


@pytest.fixture(autouse=True)
def indexd_home(monkeypatch):
    # Short path: Unix socket paths are limited to ~107 bytes.
    home = Path(tempfile.mkdtemp(prefix="ix"))
    monkeypatch.setenv("INDEXD_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


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

    def start(extra_env=None, wait=True):
        d = Daemon(indexd_home, extra_env)
        started.append(d)
        return d.start(wait=wait)

    yield start
    for d in started:
        d.stop()
