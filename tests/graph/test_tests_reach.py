"""Issue 11: the tests bucket reaches tests over trusted edges at any depth. On click a
test reaches the function it breaks through 4-15 calls (`runner.invoke` -> `main` ->
`make_context` -> `parse_args` -> ...) and impact walked 3 hops, so its static recall of
failing test files was 0.58. Resolved and inferred edges are now followed to any depth,
bounded by an edge budget; a name match still counts only within impact's depth (a
chain of guesses reaches everything), or as the one guess between two trusted chains
(tests/graph/test_one_guess_tests.py): weak evidence either way."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

FILES = {
    "pkg/__init__.py": "",
    # test_deep -> a -> b -> Worker.run -> Worker.step -> leaf: 5 hops, resolved and inferred
    "pkg/core.py": ("def leaf():\n    return 1\n\n\n"
                    "class Worker:\n"
                    "    def step(self):\n        return leaf()\n\n"
                    "    def run(self):\n        return self.step()\n\n\n"
                    "def b():\n    w = Worker()\n    return w.run()\n\n\n"
                    "def a():\n    return b()\n"),
    # test_guess -> Thing.go (a name match: untyped receiver) -> g2 -> g3 -> other_leaf
    "pkg/guess.py": ("def other_leaf():\n    return 2\n\n\n"
                     "def g3():\n    return other_leaf()\n\n\n"
                     "def g2():\n    return g3()\n\n\n"
                     "class Thing:\n    def go(self):\n        return g2()\n"),
    "tests/test_deep.py": "from pkg.core import a\n\n\ndef test_deep():\n    assert a()\n",
    "tests/test_guess.py": "def test_guess(thing):\n    assert thing.go()\n",
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("reach"), FILES))


def _rel(label: str) -> str:
    """'reach0/pkg/core.py::a' -> 'pkg/core.py::a' (labels start with the repo's name)."""
    return label.split("/", 1)[1]


def _tests(answer: dict) -> dict:
    return {(t["path"], t["symbol"]): t for t in answer["tests"]}


def test_a_test_five_trusted_hops_away_is_in_the_tests_bucket_with_its_chain(graph):
    answer = graph.impact("pkg/core.py::leaf", depth=3)
    got = _tests(answer)[("tests/test_deep.py", "test_deep")]
    assert got["distance"] == 5
    chain = [(_rel(v["from"]), _rel(v["to"]), v["how"]) for v in got["via"]]
    assert chain == [
        ("tests/test_deep.py::test_deep", "pkg/core.py::a", "resolved"),
        ("pkg/core.py::a", "pkg/core.py::b", "resolved"),
        ("pkg/core.py::b", "pkg/core.py::Worker.run", "inferred"),
        ("pkg/core.py::Worker.run", "pkg/core.py::Worker.step", "inferred"),
        ("pkg/core.py::Worker.step", "pkg/core.py::leaf", "resolved")], chain
    assert answer["tests_walk"]["exhaustive"] is True and answer["tests_truncated"] is False
    # the affected bucket keeps impact's depth: only the tests reach further
    assert max(i["distance"] for i in answer["affected"]) <= 3


def test_a_chain_that_needs_a_name_match_beyond_the_depth_is_weak_evidence(graph):
    # 4 hops: test_guess -name_match-> Thing.go -> g2 -> g3 -> other_leaf: the one guess
    # is followed past the depth (test_one_guess_tests.py), but never trusted
    beyond = _tests(graph.impact("pkg/guess.py::other_leaf", depth=3))[
        ("tests/test_guess.py", "test_guess")]
    assert [e["how"] for e in beyond["via"]] == ["name_match", "resolved", "resolved",
                                                 "resolved"]
    # the name match is an edge (within the depth it counts, as before)
    near = _tests(graph.impact("pkg/guess.py::g2", depth=3))[("tests/test_guess.py",
                                                                "test_guess")]
    assert near["via"][0]["how"] == "name_match"
    far = _tests(graph.impact("pkg/guess.py::other_leaf", depth=4))
    assert ("tests/test_guess.py", "test_guess") in far


def test_the_budget_cut_of_the_tests_walk_is_reported(graph, monkeypatch, capsys):
    from indexd.cli import render

    # an edge budget of 3: the walk stops before the test, five hops up
    monkeypatch.setattr(graph, "walk_min_edges", 3)
    monkeypatch.setattr(graph, "walk_edges_per_item", 1)
    cut = graph.impact("pkg/core.py::leaf", depth=3, limit=1)
    assert cut["tests_walk"]["exhaustive"] is False
    assert cut["tests_walk"]["edges_examined"] <= 3
    assert cut["tests_truncated"] is True and cut["tests_total_exact"] is False
    assert cut["truncated"] is True
    assert ("tests/test_deep.py", "test_deep") not in _tests(cut)
    render.impact(cut)
    assert "tests walk (trusted edges, any depth) stopped at its budget" in capsys.readouterr().out


def test_tests_affected_counts_a_far_trusted_test_as_proof(graph):
    # measured on click's mutants (with fixture types): counting trusted chains longer
    # than the depth said safe 28 times, 21 right, against 15 of 22 within depth 3
    from indexd.graph.test_select import select_tests

    repo = next(iter(graph.facts))[1]
    change = {"repo": repo, "path": "pkg/core.py", "symbol": "leaf", "change": "target"}
    picked = select_tests([(change, graph.impact("pkg/core.py::leaf", depth=3, limit=None))], 3)
    row = picked["files"][(repo, "tests/test_deep.py")]
    (evidence,) = row["evidence"].values()
    assert row["trusted"] is True and evidence["how"] == [
        "resolved", "resolved", "inferred", "inferred", "resolved"]
    assert picked["changed"][0]["tested"] == "trusted"
    # reached only past a name match beyond the depth: selected, but no proof
    far = {**change, "path": "pkg/guess.py", "symbol": "other_leaf"}
    picked = select_tests([(far, graph.impact("pkg/guess.py::other_leaf", depth=3,
                                              limit=None))], 3)
    assert picked["files"][(repo, "tests/test_guess.py")]["trusted"] is False
    assert picked["changed"][0]["tested"] != "trusted"
