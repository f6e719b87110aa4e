"""A function of the file passed as an argument runs where it is called (marshmallow
3.22.0, bench/impact_vs_tests.py): ``Schema._deserialize`` defines ``getter`` and hands
it on, ``self._call_and_store(getter_func=getter, ...)``, which calls ``getter_func``.
No edge led into ``getter``, so nothing it calls (every field's ``deserialize``)
reached the tests that load a schema. A name passed as an argument is now a
``references`` edge where it resolves to a function or class (never a name match);
a variable passed so is no reference at all."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

from indexd.graph.test_select import is_trusted

FILES = {
    "pkg/__init__.py": "",
    "pkg/schema.py": (
        "def convert(value):\n    return value\n\n\n"
        "def double(x):\n    return 2 * x\n\n\n"
        "class Schema:\n"
        "    def load(self, data):\n        return self._deserialize(data)\n\n"
        "    def _deserialize(self, data):\n"
        "        def getter(val):\n            return convert(val)\n"
        "        return self._call_and_store(getter_func=getter, data=data)\n\n"
        "    def _call_and_store(self, getter_func, data):\n        return getter_func(data)\n\n\n"
        "def total(xs):\n    return sum(map(double, xs))\n\n\n"
        "def count(xs, data):\n    return len(xs) + len(data)\n\n\n"
        "def shadowed(xs, double):\n    return list(map(double, xs))\n\n\n"
        "def rebound(xs):\n    convert = str\n    return list(map(convert, xs))\n\n\n"
        "class Text:\n"
        "    def index(self, i):\n        return i\n\n"
        "    def cget(self, index):\n        return self.call(index)\n\n"
        "    def call(self, *args):\n        return args\n\n"
        "    def foo(self):\n        return 1\n\n"
        "    goo = staticmethod(foo)\n"),
    "tests/test_schema.py": (
        "from pkg.schema import Schema, total\n\n\n"
        "def test_load():\n    assert Schema().load(1) == 1\n\n\n"
        "def test_total():\n    assert total([1, 2]) == 6\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("passed"), FILES))


def _trusted(graph, target: str) -> set[str]:
    return {t["symbol"] for t in graph.impact(target, limit=None)["tests"]
            if is_trusted(t) and t["symbol"]}


def test_a_nested_function_passed_by_keyword_is_reached_from_its_definer(graph):
    assert _trusted(graph, "pkg/schema.py::convert") == {"test_load"}


def test_a_module_function_passed_positionally_is_reached(graph):
    assert _trusted(graph, "pkg/schema.py::double") == {"test_total"}


def test_a_variable_passed_is_no_reference(graph):
    # `len(data)`: `data` names no function of the file; nothing refers to it
    refs = {(e.src_symbol, e.dst_symbol) for e in graph.edges(["references"])
            if e.src_path == "pkg/schema.py"}
    assert ("Schema._deserialize", "Schema._deserialize.getter") in refs
    assert ("total", "double") in refs
    assert not any(dst in ("data", "xs") for _, dst in refs)


def test_a_parameter_or_local_of_that_name_shadows_the_function(graph):
    refs = {(e.src_symbol, e.dst_symbol) for e in graph.edges(["references"])
            if e.src_path == "pkg/schema.py"}
    assert ("shadowed", "double") not in refs
    assert ("rebound", "convert") not in refs


def test_a_bare_name_in_a_method_is_no_method_of_its_class_but_one_in_the_body_is(graph):
    refs = {(e.src_symbol, e.dst_symbol) for e in graph.edges(["references"])
            if e.src_path == "pkg/schema.py"}
    assert ("Text.cget", "Text.index") not in refs      # the parameter `index`
    assert ("Text", "Text.foo") in refs                 # `staticmethod(foo)` in the body
