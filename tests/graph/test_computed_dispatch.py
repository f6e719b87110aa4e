"""A class that finds its own methods by a name computed at run time (pyflakes 3.2.0,
bench/impact_vs_tests.py, held out): ``Checker.getNodeHandler`` does
``nodeType = node_class.__name__.upper()`` and ``getattr(self, nodeType, ...)``, so every
``Checker.DICT``, ``Checker.CLASSDEF`` ... runs for the nodes of a parsed tree. No name
in the source calls them; ``tests affected`` said "untested" and called 12 broken
functions safe while up to 10 test files failed each.

- a name built in capitals (``x.upper()``) reaches the receiver's methods named in
  capitals, each an ``inferred`` calls edge, as a fixed start (``"visit_" + x``) does;
- any other computed name (no fixed start, no case) reaches no method by an edge, but a
  method of that class (or of a class deriving from it) that no test reaches is
  ``unknown``, not ``untested``: the answer names the dispatching method in ``run_by``.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, parse_file, paths, write_tree

from indexd.graph.test_select import select_tests

FILES = {
    "pkg/__init__.py": "",
    "pkg/checker.py": (
        "def _keys(node):\n    return node.keys\n\n\n"
        "class Checker:\n"
        "    def __init__(self, tree):\n        self.handleNode(tree)\n\n"
        "    def getNodeHandler(self, node_class):\n"
        "        nodeType = node_class.__name__.upper()\n"
        "        return getattr(self, nodeType, self.handleChildren)\n\n"
        "    def handleNode(self, node):\n"
        "        handler = self.getNodeHandler(node.__class__)\n"
        "        handler(node)\n\n"
        "    def handleChildren(self, node):\n        return None\n\n"
        "    def DICT(self, node):\n        return _keys(node)\n\n"
        "    def NAME(self, node):\n        return 1\n\n\n"
        "class Strict(Checker):\n"
        "    def TRY(self, node):\n        return 2\n\n\n"
        "def lonely():\n    return 3\n"),
    "pkg/options.py": (
        "class Options:\n"
        "    def get(self, option):\n        return getattr(self, option)\n\n"
        "    def unused(self):\n        return 4\n\n\n"
        "class Plain:\n"
        "    def orphan(self):\n        return 5\n"),
    "tests/test_checker.py": (
        "from pkg.checker import Checker\n\n\n"
        "def test_dict():\n    Checker({})\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("dispatch"), FILES))


def verdict(graph, path, symbol):
    target = f"{path}::{symbol}"
    repo = graph.resolve_target(target)[0][1]
    result = graph.impact(target, limit=None)
    result["implicit_caller"] = graph.implicit_caller(target, result["affected"])
    change = {"repo": repo, "path": path, "symbol": symbol, "change": "target"}
    return select_tests([(change, result)], 3)["changed"][0], result


def test_a_name_built_in_capitals_calls_the_methods_named_in_capitals(graph):
    calls = calls_from(graph, "pkg/checker.py", "Checker.getNodeHandler")
    assert {("pkg/checker.py", "Checker.DICT", "inferred"),
            ("pkg/checker.py", "Checker.NAME", "inferred"),
            ("pkg/checker.py", "Strict.TRY", "inferred")} <= calls
    assert not {c for c in calls if c[1] in ("Checker.handleNode", "Checker.__init__")}


@pytest.mark.parametrize("path, symbol", [("pkg/checker.py", "Checker.DICT"),
                                          ("pkg/checker.py", "_keys")])
def test_a_handler_found_by_its_computed_name_reaches_the_tests(graph, path, symbol):
    row, result = verdict(graph, path, symbol)
    assert "tests/test_checker.py" in paths(result["tests"])
    assert row["tested"] == "trusted"


@pytest.mark.parametrize("symbol", ["Options.unused"])
def test_a_method_of_a_class_getting_its_own_computed_names_is_unknown(graph, symbol):
    row, result = verdict(graph, "pkg/options.py", symbol)
    assert result["tests"] == []
    assert row["tested"] == "unknown"
    assert row["run_by"].endswith("pkg/options.py::Options.get")


@pytest.mark.parametrize("path, symbol", [("pkg/options.py", "Plain.orphan"),
                                          ("pkg/checker.py", "lonely")])
def test_what_no_computed_name_can_reach_stays_untested(graph, path, symbol):
    row, _ = verdict(graph, path, symbol)
    assert row["tested"] == "untested" and "run_by" not in row


def test_a_saved_file_adding_a_method_in_capitals_joins_the_dispatch(tmp_path):
    """A save of another file alone: the dispatching method's edges follow
    (graph.update_file; the file wants ``("upper",)``)."""
    repo = write_tree(tmp_path, FILES)
    g = build("r", repo)
    rel = "pkg/extra.py"
    (repo / rel).write_text("from pkg.checker import Checker\n\n\n"
                            "class Loose(Checker):\n"
                            "    def MATCH(self, node):\n        return 6\n")
    g.update_file(parse_file("r", repo, rel))
    assert ("pkg/extra.py", "Loose.MATCH", "inferred") in calls_from(
        g, "pkg/checker.py", "Checker.getNodeHandler")
