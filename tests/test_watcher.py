"""The watcher's own account of its watches (real watchdog, real inotify, real files).

A repo inside a folder another realm already watches read "partial: 0 of 18
directories watched (inotify limit; raise fs.inotify.max_user_watches)": its
directories were watched already, so the process's inotify count could not
rise, and the daemon fell back to periodic reconciles it did not need.
"""

from __future__ import annotations

import sys

import pytest
from testlib import wait_until

from indexd.watch.watcher import Watcher, inotify_watch_count

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or inotify_watch_count() is None,
                                reason="inotify counts are Linux's")


@pytest.mark.parametrize("order", ["parent first", "child first"])
def test_nested_roots_of_two_realms_are_watched_and_not_called_partial(tmp_path, order):
    parent = tmp_path / "src"
    child = parent / "b"
    for d in (parent / "a" / "deep", child / "pkg"):
        d.mkdir(parents=True)
    seen: list[tuple[str, str]] = []
    w = Watcher(lambda realm, repo, rel, kind: seen.append((realm, rel)),
                lambda *a: None, lambda *a: None, lambda *a: None)
    w.start()
    try:
        pairs = [("outer", str(parent)), ("inner", str(child))]
        for pair in (pairs if order == "parent first" else pairs[::-1]):
            w.sync([p for p in pairs if p == pair or (p[0], p[1]) in w.watches])
        assert set(w.watches) == set(pairs)
        assert w.errors == {}, w.errors
        (child / "pkg" / "m.py").write_text("x = 1\n")
        wait_until(lambda: {("outer", "b/pkg/m.py"), ("inner", "pkg/m.py")} <= set(seen),
                   timeout=20, what="both realms to see the save")
    finally:
        w.observer.stop()
        w.observer.join(10)
