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
                      "    @deco.method_deco\n    def m(self):\n        return 1\n\n\n"
                      # runs as a script only, never on import
                      "if __name__ == '__main__':\n    deco.lazy()\n"),
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


def test_calls_in_a_function_or_a_main_block_are_not_run_at_import(graph):
    from indexd.graph.import_time import import_time_tests

    # lazy is called by handler() and under `if __name__ == '__main__':` only
    seeds = graph.resolve_target("pkg/deco.py::lazy")
    assert not import_time_tests(seeds, graph._incoming, graph._file_incoming,
                                 graph._tests_under).tests


def test_what_runs_on_import_is_an_import_time_edge_from_the_file(graph):
    # module level, class bodies, constants' values; not the `if __name__` block
    got = {(e.src_symbol, e.dst_symbol) for e in graph.edges(["import_time"])
           if e.src_path == "pkg/models.py"}
    assert got == {(None, "register"), (None, "make_thing"), (None, "field_maker"),
                   (None, "method_deco")}, got
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


BUILTIN_DECORATORS = {
    "lib/props.py": ("class Box:\n    @property\n    def size(self):\n        return 1\n\n"
                     "    @size.setter\n    def size(self, v):\n        pass\n\n"
                     "    @staticmethod\n    def make():\n        return Box()\n"),
    # look-alikes the builtins' names would match
    "lib/other.py": "def property(f):\n    return f\n\n\nclass P:\n    def setter(self, f):\n"
                    "        return f\n",
}


def test_an_unresolved_decorator_is_never_a_name_match(tree):
    """`@property` is the builtin, `@size.setter` its method: on the stdlib 700 decorator
    lines were name-matched to whatever defines `property` or `setter`."""
    g = build("r", tree("builtins", BUILTIN_DECORATORS))
    got = {(e.src_symbol, e.dst_path, e.dst_symbol, e.how) for e in g.edges(["calls"])
           if e.src_path == "lib/props.py"}
    assert not {x for x in got if x[1] == "lib/other.py"}, got


NAME_MATCHED = {
    "pkg/__init__.py": "from pkg import models\n",
    "pkg/helpers.py": "def prepare(thing):\n    return thing.load_everything()\n",
    "pkg/store.py": "class Store:\n    def load_everything(self):\n        return 3\n",
    "pkg/models.py": "from pkg import helpers\n\nS = helpers.prepare(None)\n",
    "tests/test_pkg.py": "import pkg\n\n\ndef test_it():\n    assert pkg.models.S\n",
}


def test_a_name_matched_route_to_code_run_on_import_is_never_untested(tree):
    """The import-time search follows trusted edges only (a name match is no evidence
    that it runs), so it finds no test here; the answer must still not be "untested"
    (safe): the depth-3 walk over every edge reaches as far as its depth, so "unknown"."""
    from indexd.graph.import_time import import_time_tests
    from indexd.graph.test_select import select_tests

    g = build("r", tree("nm", NAME_MATCHED))
    seeds = g.resolve_target("pkg/store.py::Store.load_everything")
    assert not import_time_tests(seeds, g._incoming, g._file_incoming, g._tests_under).tests
    result = g.impact("pkg/store.py::Store.load_everything", depth=3, limit=None)
    change = {"repo": "r", "path": "pkg/store.py", "symbol": "Store.load_everything",
              "change": "target"}
    assert select_tests([(change, result)], 3)["changed"][0]["tested"] in ("unknown", "weak")
