"""Shapes Python-Markdown 3.7 holds (bench/impact_vs_tests.py, run held out), where
``tests affected`` called a broken function safe while test files failed:

- ``markdown/test_tools.py`` is a test module by its name that other test modules use
  (``class TestX(TestCase)`` then ``self.dedent(...)``): a change there selected only
  test_tools.py itself, while 18 test files failed when ``TestCase.dedent`` broke;
- ``InlineProcessor.__handleInline`` is called by ``InlineProcessor.run``, which runs as
  ``treeprocessor.run(root)`` on an element of a registry: a name defined in 18 files, so
  an unresolved reference, never an edge. The target's own name had no such reference, so
  the chain "ended" and the verdict was "untested", while 26 test files failed.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

from indexd.graph.test_select import select_tests
from indexd.relations import _with_runners
from indexd.tests_affected import _reason

FILES = {
    "pkg/__init__.py": "",
    "pkg/test_tools.py": (
        "import unittest\n\n\n"
        "class TestCase(unittest.TestCase):\n"
        "    def dedent(self, text):\n        return text.strip()\n\n"
        "    def assertRenders(self, text, want):\n        self.assertEqual(text, want)\n"),
    "pkg/core.py": (
        "class Inline:\n"
        "    def __handle(self, x):\n        return x\n\n"
        "    def run(self, x):\n        return self.__handle(x)\n\n\n"
        "def helper():\n    return 1\n\n\n"
        "def unused():\n    return helper()\n"),
    "pkg/convert.py": (
        "def convert(processors, x):\n"
        "    for p in processors:\n        x = p.run(x)\n    return x\n"),
    "tests/test_syntax.py": (
        "from pkg.test_tools import TestCase\n"
        "from pkg.core import Inline\nfrom pkg.convert import convert\n\n\n"
        "class TestSyntax(TestCase):\n"
        "    def test_it(self):\n"
        "        self.assertRenders(convert([Inline()], self.dedent(' a ')), 'a')\n"),
}
# `run` defined in more files than a name match keeps (edges.MAX_CANDIDATE_FILES)
FILES |= {f"pkg/other{i}.py": f"class Other{i}:\n    def run(self, x):\n        return {i}\n"
          for i in range(12)}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return write_tree(tmp_path_factory.mktemp("markdown"), FILES)


@pytest.fixture(scope="module")
def graph(repo):
    return build("r", repo)


def verdict(graph, repo, path, symbol):
    target = f"{path}::{symbol}"
    result = _with_runners(graph.impact(target, limit=None), graph)
    if not result["tests"]:
        result["implicit_caller"] = graph.implicit_caller(target, result["affected"])
        result["unresolved_caller"] = graph.unresolved_caller(result["affected"])
    change = {"repo": repo.as_posix(), "path": path, "symbol": symbol, "change": "target"}
    return select_tests([(change, result)], 3)


@pytest.mark.parametrize("symbol", ["TestCase.dedent", "TestCase.assertRenders"])
def test_a_changed_helper_of_a_test_module_selects_the_tests_using_it(graph, repo, symbol):
    answer = verdict(graph, repo, "pkg/test_tools.py", symbol)
    assert {p for _, p in answer["files"]} == {"pkg/test_tools.py", "tests/test_syntax.py"}
    assert answer["changed"][0]["tested"] == "trusted"
    assert answer["changed"][0]["tests"] == ["pkg/test_tools.py", "tests/test_syntax.py"]


def test_a_caller_named_only_by_unresolved_references_makes_the_change_unknown(graph, repo):
    answer = verdict(graph, repo, "pkg/core.py", "Inline.__handle")
    row = answer["changed"][0]
    assert row["tested"] == "unknown"
    assert row["unresolved_caller"].endswith("pkg/core.py::Inline.run")
    assert "Inline.run" in _reason([row])


def test_a_chain_with_no_unresolved_reference_on_it_stays_untested(graph, repo):
    row = verdict(graph, repo, "pkg/core.py", "helper")["changed"][0]
    assert row["tested"] == "untested" and "unresolved_caller" not in row
