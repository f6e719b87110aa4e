"""Fixtures for the enrich tests: a fake Ollama server and settings objects.

Not a conftest.py on purpose: other test modules do ``from conftest import``,
and a second conftest.py directory on sys.path would shadow tests/conftest.py.
Test modules import these fixtures by name.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

# tests/ has no __init__.py: make tests/fakes importable as the ``fakes`` package.
_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

from fakes.ollama_server import FakeOllama  # noqa: E402


@pytest.fixture
def fake_ollama():
    server = FakeOllama().start()
    yield server
    server.stop()


@pytest.fixture
def settings(indexd_home):
    from indexd.config import load_settings

    def make(**overrides):
        return replace(load_settings(), **overrides)

    return make


def load_real_model(home: Path, **kw):
    """The real default model for a fresh home, loaded with the network refused."""
    import socket

    from indexd.config import Settings, default_paths
    from indexd.enrich.embedder import load_embedder

    def refuse(self, address):
        raise AssertionError(f"network access attempted while loading the model: {address!r}")

    settings = Settings(paths=default_paths({"INDEXD_HOME": str(home)}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(socket.socket, "connect", refuse)
        return load_embedder(replace(settings, embed_model="default"), **kw)
