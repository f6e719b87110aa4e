"""Four shapes of jinja2 3.1.4 (bench/impact_vs_tests.py, a project nothing here had
been tuned on) where a trusted chain from a test to what it breaks was cut:

- ``def _output_child_to_const(self, node: nodes.Expr)`` calls ``node.as_const()``:
  an annotated ``Expr`` may hold any subclass, so ``Filter.as_const`` (an override)
  is what runs; only ``Expr.as_const`` was reached;
- the ``env`` fixture ``return Environment(loader=DictLoader({...}), ...)`` is a
  value longer than the parser keeps (200 characters), so the fixture had no type
  and ``env.get_template(...)`` in a test was a name match;
- ``get_spontaneous_environment(...) -> _env_bound`` with ``_env_bound =
  t.TypeVar("_env_bound", bound="Environment")``: the TypeVar named no class;
- ``Template(source)`` runs ``Template.__new__`` (jinja2 builds the template there),
  which no constructor edge reached (only ``__init__``).
"""

from __future__ import annotations

import pytest
from graph_helpers import build, hows_to, trusted_tests, write_tree

LONG = ", ".join(f'"name{i}": "a value long enough to make the call long"' for i in range(6))
FILES = {
    "pkg/__init__.py": "",
    "pkg/nodes.py": (
        "class Expr:\n    def as_const(self):\n        return 1\n\n\n"
        "class Filter(Expr):\n    def as_const(self):\n        return args_as_const(self)\n\n\n"
        "def args_as_const(node):\n    return 2\n\n\n"
        "def fold(node: Expr):\n    return node.as_const()\n\n\n"
        "def built():\n    node = Expr()\n    return node.as_const()\n"),
    "pkg/env.py": (
        "import typing as t\n\n"
        "_env_bound = t.TypeVar(\"_env_bound\", bound=\"Environment\")\n\n\n"
        "class Environment:\n"
        "    def __init__(self, loader=None, trim=False):\n        self.loader = loader\n\n"
        "    def get_template(self, name):\n        return self.load(name)\n\n"
        "    def load(self, name):\n        return name\n\n"
        "    def from_string(self, source):\n        return source\n\n\n"
        "def spontaneous(cls: t.Type[_env_bound]) -> _env_bound:\n    return cls()\n\n\n"
        "class Template:\n"
        "    def __new__(cls, source):\n"
        "        env = spontaneous(Environment)\n"
        "        return env.from_string(source)\n"),
    "tests/test_env.py": (
        "import pytest\nfrom pkg.env import Environment, Template\n\n\n"
        "@pytest.fixture\ndef env():\n"
        f"    return Environment(\n        loader={{{LONG}}},\n        trim=True,\n    )\n\n\n"
        "def test_layout(env):\n    assert env.get_template('layout')\n\n\n"
        "def test_template():\n    assert Template('x')\n"),
}
NODES, ENV = "pkg/nodes.py", "pkg/env.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("jinja_shapes"), FILES))


def _calls(graph, path, src, dst_path, dst) -> set[str]:
    return {e.how for e in graph.edges(["calls"]) if e.src_path == path and e.src_symbol == src
            and e.dst_path == dst_path and e.dst_symbol == dst}


def test_an_annotated_receiver_reaches_the_overrides_of_its_subclasses(graph):
    assert hows_to(graph, NODES, "fold", "Expr.as_const") == {"inferred"}
    assert hows_to(graph, NODES, "fold", "Filter.as_const") == {"inferred"}


def test_a_receiver_built_by_its_class_reaches_only_that_class(graph):
    assert hows_to(graph, NODES, "built", "Expr.as_const") == {"inferred"}
    assert hows_to(graph, NODES, "built", "Filter.as_const") == set()


def test_a_fixture_returning_a_call_too_long_to_keep_still_has_its_class(graph):
    assert len(FILES["tests/test_env.py"].split("return ", 1)[1]) > 200
    assert _calls(graph, "tests/test_env.py", "test_layout",
                  ENV, "Environment.get_template") == {"inferred"}


def test_a_typevar_bound_to_a_class_is_that_class(graph):
    assert _calls(graph, ENV, "Template.__new__", ENV, "Environment.from_string") == {"inferred"}


def test_calling_a_class_runs_its_new(graph):
    assert _calls(graph, "tests/test_env.py", "test_template",
                  ENV, "Template.__new__") == {"inferred"}


def test_the_test_is_named_for_what_each_shape_reached(graph):
    def tests_of(target):
        return {(t["path"], t["symbol"]) for t in graph.impact(target, depth=3)["tests"]}
    assert ("tests/test_env.py", "test_layout") in tests_of(f"{ENV}::Environment.load")
    assert ("tests/test_env.py", "test_template") in tests_of(f"{ENV}::Environment.from_string")


REGISTRY = {
    "pkg/__init__.py": "",
    "pkg/checks.py": (
        "def test_float(value):\n    return isinstance(value, float)\n\n\n"
        "TESTS = {\"float\": test_float, \"odd\": lambda v: v % 2}\n"
        "handlers = [test_float, not_defined_here]\n"),
    "pkg/other.py": "def not_defined_here():\n    return 0\n",
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("registry"), REGISTRY))


def test_a_function_stored_in_a_registry_is_referenced_by_it(registry):
    # jinja2's tests.py: `TESTS = {"float": test_float, ...}`, read by the environment;
    # no edge reached test_float, so `tests affected` called changing it safe
    into = {(e.src_symbol, e.kind, e.how) for e in registry.edges()
            if e.dst_path == "pkg/checks.py" and e.dst_symbol == "test_float"}
    assert ("TESTS", "references", "resolved") in into
    assert (None, "references", "resolved") in into        # the module-level list


def test_a_stored_name_the_file_cannot_resolve_is_no_name_match(registry):
    assert not [e for e in registry.edges() if e.dst_symbol == "not_defined_here"]


ROUNDTRIP = {
    "pkg/__init__.py": "",
    "pkg/env.py": "class Environment:\n    def render(self):\n        return ''\n",
    "tests/conftest.py": ("import pytest\nfrom pkg.env import Environment\n\n\n"
                          "@pytest.fixture\ndef env():\n    return Environment()\n"),
    "tests/test_pickle.py": (
        "import pickle\nfrom pkg.env import Environment\n\n\n"
        "def test_environment(env):\n    env = pickle.loads(pickle.dumps(env))\n"
        "    assert env.render() == ''\n\n\n"
        "def test_copy_of_another():\n    e = Environment()\n"
        "    other = pickle.loads(pickle.dumps(e))\n    assert other.render() == ''\n"),
}


def test_a_pickle_round_trip_holds_the_class_it_was_given(tmp_path):
    # jinja2's test_pickle.py: the test's `env` fixture, pickled and loaded again
    graph = build("r", write_tree(tmp_path, ROUNDTRIP))
    for test in ("test_environment", "test_copy_of_another"):
        assert _calls(graph, "tests/test_pickle.py", test,
                      "pkg/env.py", "Environment.render") == {"inferred"}, test


LISTED = {
    "pkg/__init__.py": "",
    "pkg/grouping.py": (
        "def group_brackets(stmt):\n    return stmt\n\n\n"
        "def group_identifier(stmt):\n    return stmt\n\n\n"
        "def group(stmt):\n    for func in [\n        group_brackets,\n"
        "        group_identifier,\n    ]:\n        func(stmt)\n    return stmt\n"),
    "pkg/split.py": "class Splitter:\n    def process(self, stream):\n        return stream\n",
    "pkg/lexer.py": (
        "from .split import Splitter\n\n\n"
        "class Lexer:\n    def __init__(self):\n"
        "        self.rules = [('x', self.is_keyword)]\n\n"
        "    def is_keyword(self, value):\n        return value\n\n\n"
        "def run(filters, stream):\n"
        "    for filter_ in filters:\n        stream = filter_.process(stream)\n"
        "    return Splitter().process(stream)\n"),
}


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("listed"), LISTED))


def _into(graph, path, dst, with_path: bool = False) -> set[tuple]:
    """(src_symbol, kind, how) of the edges into ``path::dst`` (src_path first, ``with_path``)."""
    return {(e.src_path,) * with_path + (e.src_symbol, e.kind, e.how) for e in graph.edges()
            if e.dst_path == path and e.dst_symbol == dst}


def test_functions_listed_to_run_in_turn_are_referenced_by_the_function(listed):
    # sqlparse's grouping.group: `for func in [group_brackets, ...]: func(stmt)`
    for name in ("group_brackets", "group_identifier"):
        assert ("group", "references", "resolved") in _into(listed, "pkg/grouping.py", name)


def test_a_bound_method_stored_in_a_literal_is_referenced(listed):
    assert ("Lexer.__init__", "references", "inferred") in _into(listed, "pkg/lexer.py",
                                                                 "Lexer.is_keyword")


def test_a_name_match_on_an_earlier_line_does_not_hide_a_trusted_call(listed):
    # `filter_.process(stream)` (untyped: a name match) comes first in `run`;
    # `Splitter().process(stream)` below it is a call of Splitter's method
    assert ("run", "calls", "inferred") in _into(listed, "pkg/split.py", "Splitter.process")


def test_a_stored_name_is_no_name_match_even_beside_a_call_of_the_same_name(tmp_path):
    # the stdlib's copy.py: `for t in (type(None), int, ..., type, range, ...)`: the call
    # `type(None)` may be a name match (a guess); the stored `type` beside it is none
    graph = build("r", write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sock.py": "class Sock:\n    def kind(self):\n        return 1\n",
        "pkg/copying.py": "for t in (kind(None), int,\n          kind):\n    pass\n"}))
    assert {e.kind for e in graph.edges() if e.dst_symbol == "Sock.kind"} <= {"calls"}


# jinja2's filters: `FILTERS = {"sort": do_sort, ...}` in filters.py, re-exported by
# defaults.py as DEFAULT_FILTERS, copied by `Environment.__init__` and called by name in
# `call_filter`. Mutating `make_attrgetter` (called by do_sort) failed test_filters.py,
# while `tests affected` said safe with only test_regression.py: no edge said that the
# environment reads the registry that stores do_sort.
READS = {
    "pkg/__init__.py": "",
    "pkg/filters.py": (
        "def make_attrgetter(attribute):\n    return lambda x: getattr(x, attribute)\n\n\n"
        "def do_sort(value, attribute=None):\n"
        "    return sorted(value, key=make_attrgetter(attribute))\n\n\n"
        "FILTERS = {\"sort\": do_sort}\n"),
    "pkg/defaults.py": "from .filters import FILTERS as DEFAULT_FILTERS  # noqa: F401\n",
    "pkg/env.py": (
        "from .defaults import DEFAULT_FILTERS\n\n\n"
        "class Environment:\n"
        "    def __init__(self):\n        self.filters = DEFAULT_FILTERS.copy()\n\n"
        "    def call_filter(self, name, value):\n"
        "        func = self.filters.get(name)\n        return func(value)\n"),
    "pkg/runtime.py": (
        "from pkg.filters import FILTERS\n\nTABLE = {'a': 1}\n\n\n"
        "def lookup(name):\n    func = FILTERS[name]\n    return func\n\n\n"
        "def own(name):\n    return TABLE.get(name)\n\n\n"
        "def shadowed(FILTERS):\n    return FILTERS.get('sort')\n"),
    "tests/test_filters.py": (
        "from pkg.env import Environment\n\n\n"
        "def test_sort():\n    assert Environment().call_filter('sort', [2, 1]) == [1, 2]\n"),
    "tests/test_regression.py": (
        "from pkg.filters import make_attrgetter\n\n\n"
        "def test_getter():\n    assert make_attrgetter('real')(1) == 1\n"),
}


@pytest.fixture(scope="module")
def reads(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("reads"), READS))


def test_a_function_reading_a_module_constant_references_it(reads):
    into = _into(reads, "pkg/filters.py", "FILTERS", with_path=True)
    assert ("pkg/env.py", "Environment.__init__", "references", "resolved") in into
    assert ("pkg/runtime.py", "lookup", "references", "resolved") in into
    assert ("pkg/runtime.py", "own", "references", "resolved") not in into
    assert ("pkg/runtime.py", "own", "references", "resolved") in _into(
        reads, "pkg/runtime.py", "TABLE", with_path=True)
    # a parameter of the same name is not the module's constant
    assert not {s for _p, s, *_ in into if s == "shadowed"}


def test_the_tests_reaching_a_registry_reader_are_selected_for_what_it_stores(reads):
    got = trusted_tests(reads, "pkg/filters.py::make_attrgetter")
    assert ("tests/test_filters.py", "test_sort") in got
    assert ("tests/test_regression.py", "test_getter") in got
