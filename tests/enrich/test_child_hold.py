"""A model's child process stops while a save is parsed and goes on after it,
losing nothing (docs/decisions.md, "The bulk child stops for a save").

Real processes and real signals: a Python child that counts, and the real bulk
child loading the packaged model. The clock is the test's own only where the
point is the hold's bounds (when it ends, when the next may begin)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from testlib import wait_until

from indexd.config import Settings, default_paths
from indexd.enrich.bulk_model import BulkEmbedder
from indexd.enrich.child_hold import ChildHold

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

COUNTER = "import sys, time\nn = 0\nwhile True:\n    n += 1\n    print(n, flush=True)\n    time.sleep(0.01)\n"


def _state(pid: int) -> str:
    """The process's state letter: T when stopped (field 3 of /proc/PID/stat)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def counter():
    proc = subprocess.Popen([sys.executable, "-c", COUNTER], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()   # it runs
    yield proc
    proc.kill()
    proc.wait(timeout=30)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@linux_only
def test_a_hold_stops_the_process_and_release_lets_it_go_on(counter):
    hold = ChildHold(lambda: [counter.pid], max_s=60)
    assert hold.hold(60)
    wait_until(lambda: _state(counter.pid) == "T", what="the child stopped")
    hold.release()
    wait_until(lambda: _state(counter.pid) != "T", what="the child running again")
    before = int(counter.stdout.readline())
    assert int(counter.stdout.readline()) > before   # it counts on from where it was
    assert hold.holds == 1 and not hold.held


@posix_only
def test_a_hold_ends_by_its_deadline_and_the_child_then_runs_as_long_before_the_next(counter):
    clock = Clock()
    hold = ChildHold(lambda: [counter.pid], max_s=1.0, clock=clock)
    assert hold.hold(0.5)
    clock.now += 0.3
    assert hold.hold(0.5)            # a second event extends it...
    assert hold.left() == pytest.approx(0.5)
    clock.now += 0.4
    assert hold.hold(0.5)            # ...but never past max_s from its start
    assert hold.left() == pytest.approx(0.3)
    hold.release_if_due()
    assert hold.held
    clock.now += 0.3
    hold.release_if_due()            # nobody released it: due, it ends
    assert not hold.held and hold.held_s == pytest.approx(1.0)
    clock.now += 0.5
    assert not hold.hold(0.5)        # the child's turn: it was held 1 s
    clock.now += 0.6
    assert hold.hold(0.5)
    hold.release()
    assert hold.holds == 2


@posix_only
def test_events_streaming_past_the_deadline_end_the_hold(counter):
    clock = Clock()
    hold = ChildHold(lambda: [counter.pid], max_s=1.0, clock=clock)
    assert hold.hold(1.0)
    for _ in range(12):              # an event every 0.1 s for 1.2 s
        clock.now += 0.1
        hold.hold(1.0)
    assert not hold.held             # the first event past 1 s released it, nothing else did
    assert 1.0 <= hold.held_s <= 1.1 + 1e-9
    assert hold.holds == 1           # and the events after it found the child's turn


@posix_only
def test_a_closed_hold_lets_the_child_run_and_refuses_new_holds(counter):
    hold = ChildHold(lambda: [counter.pid], max_s=60)
    assert hold.hold(60)
    hold.close()
    assert not hold.held and not hold.hold(60)
    counter.stdout.readline()
    counter.kill()
    assert counter.wait(timeout=30) is not None   # it could exit


@posix_only
def test_a_process_already_gone_is_not_an_error(counter):
    counter.kill()
    counter.wait(timeout=30)
    hold = ChildHold(lambda: [counter.pid], max_s=1)
    assert not hold.hold(1) and not hold.held


@linux_only
def test_a_held_bulk_childs_batch_waits_and_then_gives_the_vectors_an_unheld_one_gives(tmp_path):
    settings = replace(Settings(paths=default_paths({"INDEXD_HOME": str(tmp_path)})),
                       embed_model="default")
    bulk = BulkEmbedder(settings, None, threads=2)
    texts = [f"def parse_header_{i}(line): split a header line into name and value" for i in range(8)]
    try:
        wait_until(bulk._info.done, timeout=300, interval=0.1, what="the bulk child loaded")
        if bulk._info.exception() is not None:
            pytest.skip(f"the bulk model did not load here: {bulk._info.exception()}")
        bulk.ready()
        want = bulk.encode(texts)
        pid = bulk._pids()[0]
        assert bulk.hold.hold(0.5)
        wait_until(lambda: _state(pid) == "T", what="the child stopped")   # delivered async
        got = bulk.encode(texts)      # nobody releases it: the wait ends the hold when due
        assert not bulk.hold.held and _state(pid) != "T"
        assert bulk.hold.held_s >= 0.4
        assert [list(v) for v in got] == [list(v) for v in want]
    finally:
        bulk.abort()
        bulk.close()
    assert bulk._pids() == [] or all(not Path(f"/proc/{p}").exists() for p in bulk._pids())
