"""Tests one name match away from the trusted reach (marshmallow 3.22.0, read in
bench/impact_vs_tests.py's misses): ``Field._serialize`` <- ``Field.serialize`` (a
``self.`` call, trusted) <- ``Schema._serialize`` (``f.serialize(obj)`` on a field of no
known class: a name match) <- ``Schema.dump`` <- every test that dumps. The tests walk followed trusted edges
only, and name matches only within impact's depth, so breaking ``_serialize`` selected
the field tests alone, and ``tests affected`` called that safe while 7 more test files
failed. Now a test reached by one guess and then trusted edges to any depth is
selected, as weak evidence (it never makes a change safe on its own); two guesses in a
chain still reach nothing beyond impact's depth.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

from indexd.graph.test_select import is_trusted, select_tests

FILES = {
    "pkg/__init__.py": "",
    "pkg/fields.py": (
        "class Field:\n"
        "    def serialize(self, value):\n        return self._serialize(value)\n\n"
        "    def _serialize(self, value):\n        return value\n"),
    "pkg/schema.py": (
        "class Schema:\n"
        "    def __init__(self, fields):\n        self.fields = fields\n\n"
        "    def dump(self, obj):\n        return self._serialize(obj)\n\n"
        "    def _serialize(self, obj):\n"
        "        return {k: f.serialize(obj) for k, f in self.fields.items()}\n"),
    "pkg/api.py": (
        "def export(thing):\n    return thing.dump(1)\n\n\n"
        "def wrapped(thing):\n    return export(thing)\n"),
    "tests/test_fields.py": (
        "from pkg.fields import Field\n\n\n"
        "def test_field():\n    assert Field().serialize(1) == 1\n"),
    "tests/test_schema.py": (
        "from pkg.schema import Schema\n\n\n"
        "def test_dump():\n    assert Schema({}).dump(1) == {}\n"),
    "tests/test_api.py": (
        "from pkg.api import wrapped\n\n\n"
        "def test_wrapped():\n    assert wrapped(None) is None\n"),
}
TARGET = "pkg/fields.py::Field._serialize"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("one_guess"), FILES))


def _tests(graph) -> dict[str, dict]:
    return {t["path"]: t for t in graph.impact(TARGET, limit=None)["tests"]}


def test_a_test_one_name_match_beyond_the_trusted_reach_is_selected_as_weak(graph):
    tests = _tests(graph)
    assert is_trusted(tests["tests/test_fields.py"])
    dump = tests["tests/test_schema.py"]
    assert [e["how"] for e in dump["via"]].count("name_match") == 1
    assert not is_trusted(dump)
    # test -> Schema.dump -> Schema._serialize -(guess)-> Field.serialize -> Field._serialize:
    # four hops, one more than impact's depth
    assert [e["to"].split("::")[-1] for e in dump["via"]] == [
        "Schema.dump", "Schema._serialize", "Field.serialize", "Field._serialize"]


def test_two_guesses_in_a_chain_reach_no_test_beyond_the_depth(graph):
    # test_wrapped -> wrapped -> export -(guess: thing.dump)-> Schema.dump -(guess)-> ...
    assert "tests/test_api.py" not in _tests(graph)


def test_tests_affected_runs_the_weakly_reached_tests_and_still_calls_it_safe(graph):
    change = {"repo": graph.resolve_target(TARGET)[0][1], "path": "pkg/fields.py",
              "symbol": "Field._serialize", "change": "modified"}
    picked = select_tests([(change, graph.impact(TARGET, limit=None))], 3)
    assert {p for _, p in picked["files"]} == {"tests/test_fields.py", "tests/test_schema.py"}
    assert picked["changed"][0]["tested"] == "trusted"
    assert not picked["files"][(change["repo"], "tests/test_schema.py")]["trusted"]


def test_the_walk_from_name_matches_stops_at_its_own_budget_and_says_so(graph, monkeypatch,
                                                                       capsys):
    from indexd.cli import render

    monkeypatch.setattr(graph, "guess_walk_edges", 1)
    cut = graph.impact(TARGET, limit=None)
    assert cut["tests_walk"]["guesses_exhaustive"] is False
    assert cut["tests_total_exact"] is False
    assert "tests/test_schema.py" not in {t["path"] for t in cut["tests"]}
    render.impact(cut)
    assert "more weakly linked tests may reach it" in capsys.readouterr().out
    monkeypatch.undo()
    whole = graph.impact(TARGET, limit=None)
    assert whole["tests_walk"]["guesses_exhaustive"] is True
