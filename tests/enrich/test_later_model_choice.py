"""Which model answers first and whether a store already holds embed_model's
vectors (indexd/enrich/later_model.py); real LanceDB stores."""

from __future__ import annotations

from dataclasses import replace

import pytest
from testlib import settings_with_realm

from indexd.config import load_settings
from indexd.enrich.later_model import first_spec, holds


@pytest.mark.parametrize("model, first, expected", [
    ("mpnet", "auto", "default"),      # the slow packaged model gets the fast one first
    ("default", "auto", None),         # the default model is the fast one
    ("mpnet", "off", None),
    ("default", "hash", "hash"),
    ("mpnet", "mpnet", None),          # a model cannot go before itself
    ("off", "default", None),
    ("/models/big", "default", "default"),
])
def test_the_first_model(indexd_home, model, first, expected):
    settings = replace(load_settings(), embed_model=model, embed_first=first)
    assert first_spec(settings) == expected


def test_a_store_holds_the_model_it_was_switched_to_by_name(git_repo, make_store):
    store = make_store(settings_with_realm("work", git_repo.path))
    assert not holds(store, "mpnet")
    store.switch_model("all-MiniLM-L6-v2@abcdef123456/384", 384, spec="default")
    assert holds(store, "default") and not holds(store, "mpnet")
    store.switch_model("all-mpnet-base-v2@882b26d4ec78/768", 768, spec="mpnet")
    assert holds(store, "mpnet") and not holds(store, "default")


def test_a_store_from_before_the_name_was_recorded_is_judged_by_its_model_id(git_repo, make_store):
    store = make_store(settings_with_realm("work", git_repo.path))
    store.switch_model("all-mpnet-base-v2@882b26d4ec78/768", 768)   # no spec: an older daemon
    assert store.get_meta("embed_spec") is None
    assert holds(store, "mpnet") and not holds(store, "default")


def test_a_switch_by_a_caller_that_names_no_model_forgets_the_name(git_repo, make_store):
    store = make_store(settings_with_realm("work", git_repo.path))
    store.switch_model("all-mpnet-base-v2@882b26d4ec78/768", 768, spec="mpnet")
    store.switch_model("all-MiniLM-L6-v2@abcdef123456/384", 384)   # e.g. a tool of its own
    assert not holds(store, "mpnet") and holds(store, "default")


def test_the_one_shot_records_the_model_it_embedded_with(git_repo, make_store, indexd_home):
    from indexd.enrich.embed_all import embed_missing

    settings = replace(settings_with_realm("work", git_repo.path), embed_model="hash")
    store = make_store(settings)
    store.switch_model("all-mpnet-base-v2@882b26d4ec78/768", 768, spec="mpnet")
    report = embed_missing(store, settings)
    assert report.error is None and report.model.startswith("hash-embedder")
    assert store.get_meta("embed_spec") == "hash" and not holds(store, "mpnet")
