"""With ``embed_bulk_nice``, the bulk model's child process runs nicer than the
daemon once loaded (Linux): every thread of it, the model runtime's included, so
a save's parse in the daemon gets the cores first. A real child process loading
the real packaged model."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from indexd.config import ConfigError, Settings, default_paths, load_settings
from indexd.enrich.bulk_model import BulkEmbedder

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="per-thread nice values are Linux's")


def _nices(pid: int) -> dict[int, int]:
    """tid -> nice of one process's threads (field 19 of stat, after the ')')."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
        except OSError:   # the thread ended meanwhile
            continue
    return out


def _child_pid(bulk: BulkEmbedder) -> int:
    return next(iter(bulk._pool._processes))


@linux_only
def test_the_bulk_childs_threads_all_run_nicer_and_the_daemons_do_not(tmp_path):
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    settings = replace(Settings(paths=default_paths({"INDEXD_HOME": str(tmp_path)})),
                       embed_model="default", embed_bulk_nice=7)
    bulk = BulkEmbedder(settings, None, threads=2)
    try:
        deadline = time.monotonic() + 300
        while not bulk._info.done():   # the child's initializer ran: its model is loaded (or not)
            assert time.monotonic() < deadline, "the bulk child never finished loading"
            time.sleep(0.1)
        want = min(19, base + 7)
        if bulk._info.exception() is None:
            bulk.ready()
            assert bulk.nice == want
            bulk.encode(["def parse_header(line): split a header line"] * 8)   # the pool runs
        threads = _nices(_child_pid(bulk))
        assert len(threads) >= 2, threads          # the runtime started threads of its own
        assert set(threads.values()) == {want}, threads
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
    finally:
        bulk.abort()
        bulk.close()


def test_the_bulk_nice_setting_is_off_by_default_and_bounded(tmp_path):
    env = {"INDEXD_HOME": str(tmp_path)}
    assert load_settings(env=env).embed_bulk_nice == 0
    assert load_settings(env=env | {"INDEXD_EMBED_BULK_NICE": "19"}).embed_bulk_nice == 19
    with pytest.raises(ConfigError, match="embed_bulk_nice"):
        load_settings(env=env | {"INDEXD_EMBED_BULK_NICE": "20"})
