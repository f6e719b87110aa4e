"""The debouncer's two quiet periods, on a clock the test moves (no sleeping)."""

from __future__ import annotations

from indexd.watch.debounce import Debouncer


def make(quick_max: int = 8) -> Debouncer:
    return Debouncer(0.25, 2.0, clock=lambda: 0.0, quick_s=0.05, quick_max=quick_max)


def test_an_editor_save_is_due_after_the_short_quiet_period():
    d = make()
    # vim-style burst: modified, modified, closed within 8 ms (docs/benchmarks.md)
    for t in (0.000, 0.004, 0.008):
        d.touch(("r", "/repo", "a.py"), now=t)
    assert d.due(now=0.040) == {}
    assert d.next_deadline() == 0.008 + 0.05
    assert d.due(now=0.059) == {("r", "/repo", "a.py"): 0.0}
    assert d.pending() == 0


def test_a_write_then_rename_save_comes_out_as_one_set():
    d = make()
    d.touch(("r", "/repo", ".a.py.tmp"), now=0.000)
    d.touch(("r", "/repo", "a.py"), now=0.010)    # the rename's destination
    ready = d.due(now=0.061)
    assert set(ready) == {("r", "/repo", ".a.py.tmp"), ("r", "/repo", "a.py")}


def test_a_burst_of_many_files_keeps_the_long_quiet_period():
    d = make()
    keys = [("r", "/repo", f"m{i}.py") for i in range(20)]
    for i, key in enumerate(keys):
        d.touch(key, now=i * 0.001)
    assert d.due(now=0.100) == {}
    assert d.next_deadline() == 0.25
    ready = d.due(now=0.019 + 0.25)
    assert set(ready) == set(keys)


def test_a_writer_that_never_pauses_gets_no_shortcut_but_the_max_delay_holds():
    d = make()
    key = ("r", "/repo", "log.py")
    t = 0.0
    due_at = None
    while t < 3.0 and due_at is None:
        d.touch(key, now=t)
        t = round(t + 0.03, 3)            # every 30 ms: never 50 ms quiet
        if d.due(now=t):
            due_at = t
    assert due_at is not None and 2.0 <= due_at < 2.1   # the max delay, not the quick path


def test_quick_off_when_equal_to_the_quiet_period():
    d = Debouncer(0.25, 2.0, clock=lambda: 0.0)       # no quick_s: the old single rule
    d.touch("a", now=0.0)
    assert d.due(now=0.1) == {}
    assert d.due(now=0.25) == {"a": 0.0}


A = ("r", "/repo", "a.py")


def test_a_save_written_in_place_and_closed_is_due_at_once():
    # Python's write_text, nano, VS Code: modified, modified, closed (inotify, Linux)
    d = make()
    for t, event in ((0.000, "modified"), (0.0002, "modified"), (0.0004, "closed")):
        d.touch(A, now=t, event=event)
    assert d.next_deadline() == 0.0004
    assert d.due(now=0.0004) == {A: 0.0}


def test_a_file_closed_then_written_again_waits_for_the_quiet_period():
    d = make()
    d.touch(A, now=0.000, event="closed")
    d.touch(A, now=0.001, event="modified")     # reopened: more may come
    assert d.due(now=0.002) == {}
    assert d.due(now=0.052) == {A: 0.0}


def test_a_rename_save_waits_though_its_temporary_closed_first():
    # JetBrains, vim's rename: the temporary is created, written and closed
    # before the rename that brings the file in arrives
    d = make()
    tmp = ("r", "/repo", "a.py___jb_tmp___")
    d.touch(tmp, now=0.000, event="created")
    d.touch(tmp, now=0.001, event="modified")
    d.touch(tmp, now=0.002, event="closed")
    assert d.due(now=0.002) == {}
    d.touch(tmp, now=0.004, event="moved")
    d.touch(A, now=0.004, event="moved")
    assert d.due(now=0.010) == {}
    assert set(d.due(now=0.055)) == {tmp, A}


def test_a_new_file_waits_and_the_next_save_of_it_does_not():
    d = make()
    d.touch(A, now=0.000, event="created")
    d.touch(A, now=0.001, event="closed")
    assert d.due(now=0.002) == {}
    assert d.due(now=0.052) == {A: 0.0}
    d.touch(A, now=1.000, event="modified")     # the flags went with the batch
    d.touch(A, now=1.001, event="closed")
    assert d.due(now=1.001) == {A: 1.0}


def test_a_big_set_of_closed_files_keeps_the_long_quiet_period():
    d = make(quick_max=2)
    keys = [("r", "/repo", f"m{i}.py") for i in range(3)]
    for key in keys:
        d.touch(key, now=0.0, event="closed")
    assert d.due(now=0.1) == {}
    assert set(d.due(now=0.25)) == set(keys)


def test_one_open_file_in_the_set_holds_the_others():
    d = make()
    d.touch(A, now=0.000, event="closed")
    d.touch(("r", "/repo", "b.py"), now=0.001, event="modified")
    assert d.due(now=0.002) == {}
    d.touch(("r", "/repo", "b.py"), now=0.003, event="closed")
    assert set(d.due(now=0.003)) == {A, ("r", "/repo", "b.py")}
