"""What runs only through a dunder or a property has callers no edge names (toolz 1.0.0,
bench/impact_vs_tests.py): ``_restore_curry`` is named only in ``curry.__reduce__``, which
pickle calls; breaking it failed test_serialization.py while ``tests affected`` said
"untested" and called the change safe. A name in a tuple without parentheses (``return
_restore_curry, state``) is now a reference, as one in parentheses was; and a symbol no
test reaches whose callers include a
``__dunder__`` method or a property is now ``unknown``, and the answer says through what."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

from indexd.graph.test_select import select_tests

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def _restore(cls, func):\n    return cls(func)\n\n\n"
        "def describe(c):\n    return 'curry'\n\n\n"
        "def _size():\n    return 1\n\n\n"
        "def helper():\n    return 2\n\n\n"
        "def unused():\n    return helper()\n\n\n"
        "class curry:\n"
        "    def __init__(self, func):\n        self.func = func\n\n"
        "    def __reduce__(self):\n        state = (type(self), self.func)\n"
        "        return _restore, state\n\n"
        "    def __repr__(self):\n        return describe(self)\n\n"
        "    @property\n"
        "    def size(self):\n        return _size()\n"),
    "tests/test_core.py": (
        "import pickle\n\n\n"
        "def test_pickle(make):\n    assert pickle.loads(pickle.dumps(make()))\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("implicit"), FILES))


def verdict(graph, symbol, path="pkg/core.py"):
    target = f"{path}::{symbol}"
    repo = graph.resolve_target(target)[0][1]
    result = graph.impact(target, limit=None)
    assert result["tests"] == []
    result["implicit_caller"] = graph.implicit_caller(target, result["affected"])
    change = {"repo": repo, "path": path, "symbol": symbol, "change": "target"}
    return select_tests([(change, result)], 3)["changed"][0]


@pytest.mark.parametrize("symbol, via", [("_restore", "curry.__reduce__"),
                                         ("describe", "curry.__repr__"),
                                         ("_size", "curry.size")])
def test_a_symbol_run_only_through_a_dunder_or_property_is_unknown(graph, symbol, via):
    row = verdict(graph, symbol)
    assert row["tested"] == "unknown"
    assert row["run_by"].endswith(f"pkg/core.py::{via}")


def test_a_plain_chain_with_no_test_is_still_untested(graph):
    row = verdict(graph, "helper")          # called by unused(), which nothing calls
    assert row["tested"] == "untested" and "run_by" not in row


NAMED = {
    "pkg/__init__.py": "",
    "pkg/runtime.py": (
        "__all__ = ['helper', 'identity']\n"
        "exported = ['identity', 'Markup', 'not_here']\n\n\n"
        "def identity(x):\n    return x\n\n\n"
        "def helper(x):\n    return x\n"),
    "pkg/compiler.py": (
        "from pkg.runtime import exported\n\n\n"
        "def header():\n    return 'from pkg.runtime import ' + ', '.join(exported)\n"),
    "tests/test_compiler.py": (
        "from pkg.compiler import header\n\n\n"
        "def test_render():\n    assert header()\n"),
}


@pytest.fixture(scope="module")
def named_graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("named"), NAMED))


def test_a_function_a_list_of_strings_names_is_run_by_name_so_unknown(named_graph):
    """jinja2 3.1.4: ``runtime.identity`` is named in ``exported``, which the compiler
    writes into generated code; breaking it failed 3 test files while indexd said
    "untested"."""
    row = verdict(named_graph, "identity", "pkg/runtime.py")
    assert row["tested"] == "unknown" and row["run_by"].endswith("pkg/runtime.py::identity")


def test_a_name_only_in_dunder_all_is_not_run_by_name(named_graph):
    """``__all__`` only says what a star import takes, and star imports are resolved."""
    row = verdict(named_graph, "helper", "pkg/runtime.py")
    assert row["tested"] == "untested" and "run_by" not in row
