"""The model's threads run at a lower priority than the rest of the daemon (Linux):
the enrich thread raises its own nice value before loading the real model, and the
runtime's worker threads, created by that load, inherit it."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from indexd.config import ConfigError, Settings, default_paths, load_settings
from indexd.enrich.embedder import load_embedder
from indexd.enrich.priority import lower_this_thread

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="per-thread nice values are Linux's")


def _nice_of_threads() -> dict[int, int]:
    """tid -> nice, read from /proc (field 19 of stat, after the command's ')')."""
    out = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:   # the thread ended meanwhile
            continue
        out[int(task.name)] = int(stat.rsplit(")", 1)[1].split()[16])
    return out


@linux_only
def test_the_models_threads_inherit_the_lowered_priority(tmp_path):
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    settings = replace(Settings(paths=default_paths({"INDEXD_HOME": str(tmp_path)})),
                       embed_model="default")
    before = set(_nice_of_threads())
    seen: dict = {}

    def enrich_thread():   # what Enricher._loop does first
        seen["nice"] = lower_this_thread(10)
        seen["tid"] = threading.get_native_id()
        model = load_embedder(settings, threads=2)
        model.encode(["def parse_header(line): split a header line"] * 8)
        seen["threads"] = _nice_of_threads()   # the runtime's pool is alive with the model
        seen["model"] = model

    t = threading.Thread(target=enrich_thread)
    t.start()
    t.join(timeout=300)
    assert not t.is_alive()
    assert seen["nice"] == min(19, base + 10)
    new = {tid: n for tid, n in seen["threads"].items() if tid not in before}
    workers = {tid: n for tid, n in new.items() if tid != seen["tid"]}
    assert workers, "the model runtime started no thread of its own"
    assert all(n == seen["nice"] for n in new.values()), new
    # the caller's (and so the daemon's other threads') priority is untouched
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base


def test_zero_leaves_the_priority_alone():
    tid = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, tid)
    assert lower_this_thread(0) is None
    assert os.getpriority(os.PRIO_PROCESS, tid) == before


@pytest.mark.parametrize("value", ["-1", "20", "low"])
def test_embed_nice_out_of_range_is_a_config_error(value, tmp_path):
    with pytest.raises(ConfigError, match="embed_nice"):
        load_settings(env={"INDEXD_HOME": str(tmp_path), "INDEXD_EMBED_NICE": value})


def test_embed_nice_is_off_by_default(tmp_path):
    # the enrich thread commits vectors under the store's write lock (docs/decisions.md)
    assert load_settings(env={"INDEXD_HOME": str(tmp_path)}).embed_nice == 0
