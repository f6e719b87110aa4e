"""Issue 11 (`tests affected`'s "safe"): a method reached only by a call on an untyped
receiver in its own file. On attrs, `Attribute._setattrs` runs at import time through
`new = copy.copy(self); new._setattrs(...)` in `Attribute.evolve`, and `a.evolve(...)` in
the same file: the name match leaves out the file's own definitions (a bare name there
resolves locally), so the graph had no edge and no unresolved reference: `tests
affected` called it untested, so "safe", while 22 test files failed on its mutant.

Such a call is no evidence that the method runs (no name-matched edge is added: a
file's own methods called on untyped receivers are everywhere, and each edge would
widen the selections), but it is a reference that might be it: an unresolved one, so
the answer is "unknown", not "untested", and `tests affected` falls back to the tests
importing the module. (attrs' `new` is typed since: test_copy_types.py.)"""

from __future__ import annotations

import pytest
from graph_helpers import build

from indexd.graph.test_select import select_tests

FILES = {
    "pkg/__init__.py": "from pkg import models\n",
    # `other`: a plain parameter, of no known type (attrs: `new = copy.copy(self)`,
    # typed since, see test_copy_types.py)
    "pkg/box.py": ("class Box:\n"
                   "    def evolve(self, other):\n"
                   "        other._fill()\n        return other\n\n"
                   "    def _fill(self):\n        return 1\n\n"
                   "    def refill(self):\n        return self._fill()\n\n"
                   "    def spare(self):\n        return 2\n\n\n"
                   # a bare name never calls a method
                   "def spare_user():\n    return spare()\n"),
    # runs evolve (so _fill) when imported
    "pkg/models.py": "from pkg.box import Box\n\nB = Box().evolve(Box())\n",
    "tests/test_pkg.py": "import pkg\n\n\ndef test_it():\n    assert pkg.models.B\n",
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("own"), FILES))


def verdict(graph, path: str, symbol: str) -> tuple[str, dict]:
    result = graph.impact(f"{path}::{symbol}", depth=3, limit=None)
    change = {"repo": "r", "path": path, "symbol": symbol, "change": "target"}
    return select_tests([(change, result)], 3)["changed"][0]["tested"], result


def test_a_method_called_on_an_untyped_receiver_of_its_own_file_is_not_untested(graph):
    got, result = verdict(graph, "pkg/box.py", "Box._fill")
    assert got == "unknown", result["unresolved"]
    assert [(u["path"], u["name"], u["line"]) for u in result["unresolved"]] == [
        ("pkg/box.py", "_fill", 3)]


def test_no_edge_is_added_for_it(graph):
    # refill's self._fill() is the class's own: inferred, as before; evolve's: no edge
    got = {(e.src_symbol, e.how) for e in graph.edges(["calls"]) if e.dst_symbol == "Box._fill"}
    assert got == {("Box.refill", "inferred")}, got


def test_a_method_nothing_names_is_still_untested(graph):
    # `spare()` in spare_user is a bare name: it cannot be the method
    got, result = verdict(graph, "pkg/box.py", "Box.spare")
    assert got == "untested", result["unresolved"]


def test_the_caller_reached_from_the_test_stays_trusted(graph):
    assert verdict(graph, "pkg/box.py", "Box.evolve")[0] == "trusted"
