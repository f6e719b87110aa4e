"""The daemon's heap out of the cycle collector's walk (memory.freeze_heap).

Frozen objects are never walked by a collection, so a cycle that becomes
garbage among them is only found by ``refreeze`` (the store's upkeep): these
tests check that it is, and that the pause counter sees full collections.
"""

from __future__ import annotations

import gc
import weakref

from indexd.memory import GcPauses, freeze_heap, refreeze


class Node:
    pass


def _cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_a_cycle_frozen_then_dropped_is_collected_by_refreeze_not_before():
    alive = _cycle()
    try:
        freeze_heap()
        assert gc.get_freeze_count() > 0
        gc.collect()
        assert alive() is not None, "frozen: a collection does not walk it"
        assert refreeze() >= 2
        assert alive() is None, "refreeze collected the cycle"
        assert gc.get_freeze_count() > 0, "and froze the rest again"
    finally:
        gc.unfreeze()


def test_gc_pauses_counts_full_collections_only_while_installed():
    pauses = GcPauses().install()
    try:
        gc.collect(0)
        assert pauses.full == 0
        gc.collect()
        gc.collect()
        assert pauses.full == 2 and pauses.max_ms >= pauses.last_ms >= 0
        seen = pauses.to_json()
        assert seen["full_collections"] == 2 and set(seen) == {
            "frozen_at", "full_collections", "last_full_ms", "max_full_ms"}
    finally:
        pauses.uninstall()
    gc.collect()
    assert pauses.full == 2
