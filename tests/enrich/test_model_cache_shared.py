"""The ONNX export of the embedding model is made once per user and model, not
once per INDEXD_HOME: a second home (a test run, a second realm set, a CI job
with its own home) reuses it instead of spending a torch export again."""

from __future__ import annotations

import shutil

from indexd.config import load_settings
from indexd.enrich.embedder import load_embedder


def test_two_homes_share_one_export(model_cache, tmp_path, monkeypatch):
    xdg = tmp_path / "xdg"
    if any(model_cache.glob("*/model.onnx")):   # this session exported already: start from it
        shutil.copytree(model_cache, xdg / "indexd" / "models")
    monkeypatch.delenv("INDEXD_MODEL_CACHE", raising=False)   # the default, as users have it
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("INDEXD_EMBED_MODEL", "default")
    ids = []
    for name in ("home1", "home2"):
        monkeypatch.setenv("INDEXD_HOME", str(tmp_path / name))
        ids.append(load_embedder(load_settings()).model_id)
    assert ids[0] == ids[1]
    shared = list((xdg / "indexd" / "models").glob("*/model.onnx"))
    assert len(shared) == 1, shared
    stamp = shared[0].stat().st_mtime_ns
    for name in ("home1", "home2"):
        assert not list((tmp_path / name).rglob("model.onnx")), f"{name} has its own export"
    monkeypatch.setenv("INDEXD_HOME", str(tmp_path / "home3"))
    load_embedder(load_settings())
    assert shared[0].stat().st_mtime_ns == stamp   # reused, not exported again
