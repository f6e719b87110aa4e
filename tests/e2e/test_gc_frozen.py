"""The running daemon keeps what it built out of the cycle collector's walk.

A full collection walked the graph's and the hot indexes' millions of objects
with the GIL held (~200 ms every few seconds while a realm embedded, found by
bench/freshness.py). status.daemon.gc says what is frozen and what full
collections cost; the store's upkeep (``purge``) collects cycles among them.
"""

from __future__ import annotations

from testlib import settings_with_realm, wait_until


def _gc(d) -> dict:
    return d.call("status")["daemon"]["gc"]


def test_the_daemon_freezes_its_heap_after_building_and_keeps_it_frozen_after_upkeep(
        git_repo, daemon):
    git_repo.write("app.py", "def zebra_parser():\n    '''Parse zebra stripes.'''\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    wait_until(lambda: _gc(d)["frozen_at"] is not None, timeout=60, what="heap frozen after the build")
    built = _gc(d)["frozen_at"]
    git_repo.write("app.py", "def okapi_reader():\n    '''Read okapi files.'''\n")
    res = d.call("search", query="okapi reader", mode="keyword", sync=True, timeout=20)
    assert [h["symbol"] for h in res["results"]][:1] == ["okapi_reader"]
    wait_until(lambda: _gc(d)["frozen_at"] > built, timeout=30, what="frozen again after the save")
    full_before = _gc(d)["full_collections"]
    d.call("purge", timeout=60)
    after = _gc(d)
    assert after["frozen_at"] > built, after
    assert after["full_collections"] > full_before, "upkeep's refreeze collected once"
