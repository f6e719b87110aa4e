"""Shapes of sqlparse 0.5.1 (bench/impact_vs_tests.py; a project without annotations)
where a trusted chain from a test to what it breaks was cut:

- ``format()``: ``stack = engine.FilterStack()`` then ``stack =
  formatter.build_filter_stack(stack, options)``, a function that sets the stack up and
  returns the argument it was given. The second binding said nothing, so ``stack`` had
  no class and ``stack.run(sql)`` was a name match: every test of ``sqlparse.format``
  (test_format.py, test_cli.py) lost its trusted path to the filters and the grouping
  functions, and ``tests affected`` called their changes safe;
- ``import sqlparse`` then ``sqlparse.cli.main([...])`` (test_cli.py): a submodule read
  as an attribute of its package (``sqlparse/__init__.py`` imports it) was a name match,
  as was ``sqlparse.formatter.validate_options(...)`` in cli.py;
- ``Lexer.get_default_instance().get_tokens(sql)``: a classmethod keeps its one instance
  in a class attribute (``cls._default_instance = cls()``) and returns it, so what it
  returns had no class and ``Lexer.get_tokens`` (and ``is_keyword``, which only it calls,
  breaking seven test files) had no caller at all.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, trusted_tests, write_tree

FILES = {
    "pkg/__init__.py": (
        "from pkg import cli, engine, formatter\n\n\n"
        "def format(sql, **options):\n"
        "    stack = engine.FilterStack()\n"
        "    stack = formatter.build_filter_stack(stack, options)\n"
        "    return ''.join(stack.run(sql))\n\n\n"
        "def other_name(sql):\n"
        "    made = engine.FilterStack()\n"
        "    stack = formatter.configured(made)\n"
        "    return stack.run(sql)\n\n\n"
        "def not_a_pass_through(sql):\n"
        "    stack = engine.FilterStack()\n"
        "    stack = formatter.fresh(stack)\n"
        "    return stack.run(sql)\n\n\n"
        "def rebound_inside(sql):\n"
        "    stack = engine.FilterStack()\n"
        "    stack = formatter.rebinding(stack)\n"
        "    return stack.run(sql)\n"),
    "pkg/cli.py": (
        "import pkg\n\n\n"
        "def main(args):\n    return pkg.format(' '.join(args))\n"),
    "pkg/engine.py": (
        "class FilterStack:\n"
        "    def __init__(self):\n        self.filters = []\n\n"
        "    def enable(self):\n        self.on = True\n\n"
        "    def run(self, sql):\n        return [sql]\n\n\n"
        "def make():\n    return object()\n"),
    "pkg/lexer.py": (
        "class Lexer:\n"
        "    _default_instance = None\n\n"
        "    @classmethod\n"
        "    def get_default_instance(cls):\n"
        "        if cls._default_instance is None:\n"
        "            cls._default_instance = cls()\n"
        "            cls._default_instance.default_initialization()\n"
        "        return cls._default_instance\n\n"
        "    def default_initialization(self):\n        self.ready = True\n\n"
        "    def get_tokens(self, sql):\n        return [sql]\n\n\n"
        "class Unknown:\n"
        "    @classmethod\n"
        "    def instance(cls):\n"
        "        cls._it = make()\n"
        "        return cls._it\n\n"
        "    def get_tokens(self, sql):\n        return []\n\n\n"
        "def make():\n    return object()\n\n\n"
        "def tokenize(sql):\n"
        "    return Lexer.get_default_instance().get_tokens(sql)\n\n\n"
        "def untyped(sql):\n"
        "    return Unknown.instance().get_tokens(sql)\n"),
    "pkg/formatter.py": (
        "from pkg import engine\n\n\n"
        "def build_filter_stack(stack, options):\n"
        "    if options.get('strip'):\n"
        "        stack.enable()\n"
        "        return stack\n"
        "    return stack\n\n\n"
        "def configured(stack):\n    stack.enable()\n    return stack\n\n\n"
        "def fresh(stack):\n    return engine.make()\n\n\n"
        "def rebinding(stack):\n    stack = engine.make()\n    return stack\n"),
    "tests/test_cli.py": (
        "import pkg\nimport pkg.engine\n\n\n"
        "def test_main():\n    assert pkg.cli.main(['select'])\n\n\n"
        "def test_missing():\n    assert pkg.cli.nothing_here()\n\n\n"
        "def test_class_attribute():\n    assert pkg.engine.FilterStack.run(None, 'x')\n"),
    "tests/test_format.py": (
        "import pkg\n\n\n"
        "def test_format():\n    assert pkg.format('select 1')\n"),
}
INIT, ENGINE = "pkg/__init__.py", "pkg/engine.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("sqlparse_shapes"), FILES))


def _hows(graph, src: str) -> set[str]:
    return {how for p, s, how in calls_from(graph, INIT, src)
            if p == ENGINE and s == "FilterStack.run"}


def test_a_function_returning_its_argument_keeps_the_class_of_what_was_passed(graph):
    assert _hows(graph, "format") == {"inferred"}


def test_the_value_passed_under_another_name_gives_its_class(graph):
    assert _hows(graph, "other_name") == {"inferred"}


def _hows(graph, src: str) -> set[str]:
    return {how for p, s, how in calls_from(graph, INIT, src)
            if p == ENGINE and s == "FilterStack.run"}


def test_a_function_returning_something_else_gives_no_class(graph):
    assert "inferred" not in _hows(graph, "not_a_pass_through")


def test_a_parameter_rebound_before_its_return_is_no_pass_through(graph):
    assert "inferred" not in _hows(graph, "rebound_inside")


def test_the_test_of_format_reaches_the_stack_over_trusted_edges(graph):
    trusted = {path for path, _ in trusted_tests(graph, f"{ENGINE}::FilterStack.run")}
    assert "tests/test_format.py" in trusted


def test_a_submodule_read_through_its_package_resolves(graph):
    assert calls_from(graph, "tests/test_cli.py", "test_main") == {
        ("pkg/cli.py", "main", "resolved")}
    assert ("pkg/engine.py", "FilterStack.run", "resolved") in calls_from(
        graph, "tests/test_cli.py", "test_class_attribute")


def test_a_name_the_submodule_lacks_is_no_edge_to_it(graph):
    assert not {p for p, _, how in calls_from(graph, "tests/test_cli.py", "test_missing")
                if how == "resolved"}


def test_the_cli_test_reaches_the_stack_over_trusted_edges(graph):
    trusted = {path for path, _ in trusted_tests(graph, f"{ENGINE}::FilterStack.run")}
    assert "tests/test_cli.py" in trusted


def test_a_classmethod_returning_its_stored_instance_gives_the_class(graph):
    assert ("pkg/lexer.py", "Lexer.get_tokens", "inferred") in calls_from(
        graph, "pkg/lexer.py", "tokenize")
    assert ("pkg/lexer.py", "Lexer.default_initialization", "inferred") in calls_from(
        graph, "pkg/lexer.py", "Lexer.get_default_instance")


def test_a_class_attribute_holding_an_unknown_value_gives_no_class(graph):
    assert not {how for p, s, how in calls_from(graph, "pkg/lexer.py", "untyped")
                if s == "Unknown.get_tokens" and how in ("resolved", "inferred")}
