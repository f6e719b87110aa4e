"""Issue 11 part 2: import-time effects. Importing a module runs its decorators, its
module-level calls and its class bodies, so a test that imports it (directly or through
`pkg/__init__.py`) breaks when any of them breaks, whether or not it uses the module's
names. On attrs, 17 of 40 mutated functions (`_ClassBuilder.build_class`,
`validators.optional`, ...) broke `import attr` and so every test file, and impact named
none of them."""

from __future__ import annotations

import pytest
from graph_helpers import build

FILES = {
    "pkg/__init__.py": "from pkg import models\n",
    "pkg/deco.py": ("def register(fn):\n    return fn\n\n\n"
                    "def helper():\n    return 1\n\n\n"
                    "def make_thing():\n    return helper()\n\n\n"
                    "def field_maker():\n    return 2\n\n\n"
                    "def method_deco(fn):\n    return fn\n\n\n"
                    "def lazy():\n    return 3\n"),
    # names used through the module: no import of the name itself links them
    "pkg/models.py": ("from pkg import deco\n\n\n"
                      "@deco.register\ndef handler():\n    return deco.lazy()\n\n\n"
                      "THING = deco.make_thing()\n\n\n"
                      "class K:\n    x = deco.field_maker()\n\n"
                      "    @deco.method_deco\n    def m(self):\n        return 1\n"),
    "tests/test_pkg.py": "import pkg\n\n\ndef test_it():\n    assert pkg.models\n",
    "tests/test_other.py": "def test_nothing():\n    assert True\n",
    # pytest imports a folder's conftest.py before every test file below it
    "tests/sub/conftest.py": "import pkg\n",
    "tests/sub/test_bare.py": "def test_bare():\n    assert True\n",
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("imptime"), FILES))


def _tests_of(graph, target):
    return {t["path"]: t for t in graph.impact(target, depth=3)["tests"]}


@pytest.mark.parametrize("what", [
    "register",        # a module-level decorator
    "make_thing",      # a module-level call
    "helper",          # called by a module-level call
    "field_maker",     # a call in a class body
    "method_deco",     # a method's decorator
])
def test_what_a_module_runs_on_import_reaches_tests_importing_it(graph, what):
    got = _tests_of(graph, f"pkg/deco.py::{what}")
    assert "tests/test_pkg.py" in got, got
    assert "tests/test_other.py" not in got
    hows = [v["how"] for v in got["tests/test_pkg.py"]["via"]]
    assert set(hows) <= {"resolved", "inferred"}, got["tests/test_pkg.py"]["via"]


def test_a_call_inside_a_function_is_not_run_at_import(graph):
    assert "tests/test_pkg.py" not in _tests_of(graph, "pkg/deco.py::lazy")


def test_class_body_and_constant_calls_are_import_time_edges_from_the_file(graph):
    got = {(e.src_symbol, e.dst_symbol) for e in graph.edges(["import_time"])
           if e.src_path == "pkg/models.py"}
    assert got == {(None, "make_thing"), (None, "field_maker"), (None, "method_deco")}, got
    # the class keeps its own call edge too
    assert ("K", "field_maker") in {(e.src_symbol, e.dst_symbol) for e in graph.edges(["calls"])
                                    if e.src_path == "pkg/models.py"}


def test_a_decorator_is_a_call_of_the_decorator(graph):
    got = {(e.src_symbol, e.dst_symbol, e.how) for e in graph.edges(["calls"])
           if e.src_path == "pkg/models.py"}
    assert (None, "register", "resolved") in got, got


def test_a_conftest_importing_the_module_breaks_every_test_below_it(graph):
    got = _tests_of(graph, "pkg/deco.py::helper")
    assert "tests/sub/test_bare.py" in got, got
    assert "tests/test_other.py" not in got
    assert got["tests/sub/test_bare.py"]["via"][0]["kind"] == "conftest"


def test_a_budget_cuts_the_search_and_says_so(graph):
    from indexd.graph.import_time import import_time_tests

    seeds = graph.resolve_target("pkg/deco.py::helper")
    full = import_time_tests(seeds, graph._incoming, graph._file_incoming,
                             graph._tests_under)
    assert full.stopped_at is None and full.tests
    cut = import_time_tests(seeds, graph._incoming, graph._file_incoming,
                            graph._tests_under, budget=2)
    assert cut.stopped_at is not None and cut.edges == 2
    assert set(cut.tests) < set(full.tests)
