"""Bounded, explained lists: every list in impact/deps/refs says how many exist
(``<list>_total``) and whether it was cut (``<list>_truncated``), instead of
stopping at 200 silently."""

from __future__ import annotations

import pytest

from graph_helpers import build

CALLERS = 260    # more than the default limit of 200


def hub_files(n: int = CALLERS) -> dict[str, str]:
    """lib.py::target_fn called from n modules; all.py imports every one of them."""
    files = {"lib.py": "def target_fn():\n    return 1\n"}
    for i in range(n):
        files[f"callers/c{i:03}.py"] = (f"from lib import target_fn\n\n\n"
                                        f"def use_{i}():\n    return target_fn()\n")
    files["callers/__init__.py"] = ""
    files["all.py"] = "".join(f"from callers.c{i:03} import use_{i}\n" for i in range(n))
    return files


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    from graph_helpers import write_tree

    return build("r", write_tree(tmp_path_factory.mktemp("hub"), hub_files()))


def test_refs_total_is_the_real_count_and_truncated_at_the_default(hub):
    full = hub.refs("lib.py::target_fn", limit=None)
    assert full["refs_truncated"] is False and len(full["refs"]) == full["refs_total"]
    assert len({r["path"] for r in full["refs"]}) == CALLERS
    cut = hub.refs("lib.py::target_fn")
    assert cut["refs_total"] == full["refs_total"] > 200
    assert len(cut["refs"]) == 200 and cut["refs_truncated"] is True and cut["truncated"] is True
    assert cut["refs"] == full["refs"][:200]   # the top of the same order


def test_impact_total_per_bucket_and_distance(hub):
    full = hub.impact("lib.py::target_fn", depth=2, limit=100_000)
    affected = full["affected"]
    assert full["affected_truncated"] is False and len(affected) == full["affected_total"]
    assert {i["path"] for i in affected if i["distance"] == 1} >= {
        f"callers/c{i:03}.py" for i in range(CALLERS)}
    by_distance = {str(d): sum(i["distance"] == d for i in affected) for d in (1, 2)}
    assert full["affected_by_distance"] == by_distance and by_distance["2"] > 0
    cut = hub.impact("lib.py::target_fn", depth=2)
    assert cut["affected_total"] == full["affected_total"] > 200
    assert len(cut["affected"]) == 200 and cut["affected_truncated"] is True
    assert cut["affected_by_distance"] == by_distance   # counts of all, not of the shown
    assert cut["tests_total"] == 0 and cut["tests_truncated"] is False
    assert cut["truncated"] is True and cut["limit"] == 200
    small = hub.impact("lib.py::target_fn", depth=2, limit=5)
    assert len(small["affected"]) == 5 and small["affected_total"] == full["affected_total"]


def test_deps_total(hub):
    full = hub.deps("all.py", limit=None)
    assert full["deps_total"] == len(full["deps"]) >= CALLERS and full["deps_truncated"] is False
    cut = hub.deps("all.py", limit=10)
    assert len(cut["deps"]) == 10 and cut["deps_total"] == full["deps_total"]
    assert cut["deps_truncated"] is True and cut["deps_by_distance"] == {"1": full["deps_total"]}


def test_small_answers_are_not_truncated(tree):
    g = build("r", tree("small", hub_files(3)))
    refs = g.refs("lib.py::target_fn")
    assert refs["refs_truncated"] is False and refs["truncated"] is False
    assert refs["refs_total"] == len(refs["refs"]) > 0
    imp = g.impact("lib.py::target_fn", depth=1)
    assert imp["truncated"] is False and imp["affected_total"] == len(imp["affected"]) > 0
    assert imp["unresolved_total"] == len(imp["unresolved"])
    assert imp["unresolved_truncated"] is False
