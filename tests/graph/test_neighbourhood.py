"""The weighted personalised PageRank behind context packs (graph/neighbourhood.py)."""

from __future__ import annotations

import pytest

from indexd.graph.neighbourhood import pagerank


def n(name: str) -> tuple:
    return ("r", "/repo", f"{name}.py", name)


# a - b - c   and   d - e: two components, all edges weight 1
EDGES = {(n("a"), n("b")): 1.0, (n("b"), n("c")): 1.0, (n("d"), n("e")): 1.0}


def test_rank_is_a_distribution_that_follows_the_seeds():
    left = pagerank({n("a"): 1.0}, EDGES)
    assert sum(left.values()) == pytest.approx(1.0)
    # the seed's component gets everything
    assert left[n("d")] == left[n("e")] == 0.0
    assert left[n("a")] > left[n("c")] and left[n("b")] > left[n("c")]
    both = pagerank({n("a"): 1.0, n("d"): 3.0}, EDGES)
    # a seed three times heavier gives its component about three times the rank
    right = both[n("d")] + both[n("e")]
    assert right == pytest.approx(3 * (both[n("a")] + both[n("b")] + both[n("c")]), rel=0.05)


def test_an_isolated_seed_hands_its_rank_back_to_the_seeds():
    scores = pagerank({n("a"): 1.0, n("z"): 1.0}, EDGES)
    assert sum(scores.values()) == pytest.approx(1.0)   # nothing leaks out
    # z = (1 - d) / 2 + d * z / 2 (its own rank restarts, half at itself): 0.075 / 0.575
    assert scores[n("z")] == pytest.approx(0.075 / 0.575, abs=1e-3)


def test_no_seeds_no_rank():
    assert pagerank({}, {}) == {}
