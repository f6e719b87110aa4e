"""A shape of marshmallow 3.22.0 (bench/impact_vs_tests.py, measured once before any
change was made for it) where a trusted chain from a test to what it breaks was cut:

``class Schema(base.SchemaABC, metaclass=SchemaMeta)``: every ``class MySchema(Schema)``
statement runs ``SchemaMeta.__new__``, which collects the declared fields
(``_get_fields``). No call names it, so breaking ``_get_fields`` (13 test files fail)
reached no test, and ``tests affected`` called the change safe. The same holds for a
base's ``__init_subclass__`` (Python 3.6+), which a class statement runs too.

And ``field_obj.serialize(attr_name, obj, accessor=self.get_attribute)``: a bound method
passed as a value runs wherever it is called, but ``self.x`` read as a value was no
reference at all, so ``Schema.get_attribute`` (7 test files fail) reached no test.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, trusted_tests, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/schema.py": (
        "def _get_fields(attrs):\n    return list(attrs)\n\n\n"
        "class SchemaMeta(type):\n"
        "    def __new__(mcs, name, bases, attrs):\n"
        "        attrs['_declared'] = _get_fields(attrs)\n"
        "        return super().__new__(mcs, name, bases, attrs)\n\n\n"
        "class Base:\n    pass\n\n\n"
        "class Schema(Base, metaclass=SchemaMeta):\n"
        "    def dump(self, obj):\n"
        "        return serialize(obj, accessor=self.get_attribute)\n\n"
        "    def dump_all(self, objs):\n"
        "        return list(map(self.get_attribute, objs))\n\n"
        "    def get_attribute(self, obj):\n        return obj\n\n"
        "    def with_data(self, obj):\n        return serialize(obj, accessor=self.unknown)\n\n\n"
        "def serialize(obj, accessor):\n    return accessor(obj)\n\n\n"
        "class Plugin:\n"
        "    def __init_subclass__(cls, **kw):\n"
        "        register(cls)\n\n\n"
        "def register(cls):\n    return cls\n"),
    "pkg/other.py": "class Other:\n    def unknown(self):\n        return 0\n",
    "tests/test_schema.py": (
        "from pkg.schema import Schema, Plugin, Base\n\n\n"
        "class UserSchema(Schema):\n    pass\n\n\n"
        "def test_nested_definition():\n"
        "    class Local(UserSchema):\n        pass\n"
        "    assert Local().dump(1)\n\n\n"
        "def test_plugin():\n"
        "    class Mine(Plugin):\n        pass\n"
        "    assert Mine\n\n\n"
        "def test_plain():\n"
        "    class Plain(Base):\n        pass\n"
        "    assert Plain\n"),
}
SCHEMA, TEST = "pkg/schema.py", "tests/test_schema.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("marshmallow_shapes"), FILES))


def _hooks(graph, src) -> set[str]:
    return {s for p, s, how in calls_from(graph, TEST, src) if p == SCHEMA and how == "inferred"}


def test_a_class_statement_runs_its_metaclass_new_at_import(graph):
    assert "SchemaMeta.__new__" in _hooks(graph, None)
    assert (SCHEMA, "SchemaMeta.__new__") in {
        (e.dst_path, e.dst_symbol) for e in graph.edges(["import_time"])
        if e.src_path == TEST}


def test_a_class_statement_in_a_function_runs_the_metaclass_found_along_its_bases(graph):
    assert "SchemaMeta.__new__" in _hooks(graph, "test_nested_definition")


def test_a_class_statement_runs_its_bases_init_subclass(graph):
    assert "Plugin.__init_subclass__" in _hooks(graph, "test_plugin")


def test_a_class_without_a_metaclass_or_hook_runs_neither(graph):
    assert _hooks(graph, "test_plain") == set()


def test_breaking_what_the_metaclass_calls_names_the_tests_defining_schemas(graph):
    assert (TEST, "test_nested_definition") in trusted_tests(graph, f"{SCHEMA}::_get_fields")


def test_a_bound_method_passed_as_a_value_is_a_reference_to_it(graph):
    refs = {(e.src_symbol, e.dst_symbol, e.how) for e in graph.edges(["references"])
            if e.src_path == SCHEMA and e.dst_path == SCHEMA}
    assert ("Schema.dump", "Schema.get_attribute", "inferred") in refs
    assert ("Schema.dump_all", "Schema.get_attribute", "inferred") in refs


def test_a_data_attribute_passed_as_a_value_is_no_guess_at_another_class(graph):
    assert not [e for e in graph.edges(["references"]) if e.src_symbol == "Schema.with_data"
                and e.dst_symbol == "Other.unknown"]
