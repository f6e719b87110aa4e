"""Fusion never drops what one leg ranked first (issue 12, part 1).

Weighted RRF gives a row both legs found at ranks up to ~30 more than a row
only one leg found, even at rank 1: with ten such rows, a keyword leg's exact
best answer fell out of a top 10. ``ranking`` is pure, so the legs here are
plain ranked lists of rows.
"""

from __future__ import annotations

from dataclasses import replace

from indexd.query.ranking import DEFAULT_PARAMS, fuse, keep_leg_tops


def _row(name):
    return {"id": name, "name": name, "qualname": name, "kind": "function", "path": "m.py"}


def _legs():
    shared = [_row(f"both_{i}") for i in range(12)]
    keyword = [(10.0, _row("only_keyword"))] + [(9.0 - i * 0.1, r) for i, r in enumerate(shared)]
    semantic = [(0.9, _row("only_semantic"))] + [(0.8 - i * 0.01, r) for i, r in enumerate(shared)]
    return {"keyword": keyword, "semantic": semantic}


def _names(entries, n):
    return [e["row"]["name"] for e in entries[:n]]


def test_plain_fusion_loses_each_legs_first_hit():
    fused = fuse(_legs(), lambda r: r["id"], "text", DEFAULT_PARAMS)
    assert "only_keyword" not in _names(fused, 10) and "only_semantic" not in _names(fused, 10)


def test_each_legs_first_hit_takes_the_last_places_of_the_answer():
    legs = _legs()
    fused = fuse(legs, lambda r: r["id"], "text", DEFAULT_PARAMS)
    for limit in (3, 5, 10):
        kept = keep_leg_tops(fused, legs, lambda r: r["id"], limit)
        assert set(_names(kept, limit)[-2:]) == {"only_keyword", "only_semantic"}, limit
        assert _names(kept, limit - 2) == _names(fused, limit - 2)   # the rest keeps its order
        assert sorted(_names(kept, len(kept))) == sorted(_names(fused, len(fused)))   # none lost
    # two places: the fused first and the better of the two; one place: the fused first
    two = _names(keep_leg_tops(fused, legs, lambda r: r["id"], 2), 2)
    assert two[0] == _names(fused, 1)[0] and two[1] in {"only_keyword", "only_semantic"}
    assert _names(keep_leg_tops(fused, legs, lambda r: r["id"], 1), 1) == _names(fused, 1)


def test_the_default_keeps_them():
    assert replace(DEFAULT_PARAMS).keep_leg_tops
