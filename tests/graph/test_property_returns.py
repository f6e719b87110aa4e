"""A property's value is what its body returns (marshmallow 3.22.0,
bench/impact_vs_tests.py): ``Field._validate`` calls ``self._validate_all(value)``,
where ``_validate_all`` is a property returning ``And(*self.validators)``, so every
field's validation runs ``And.__call__``. The receiver ``self._validate_all`` had no
class (no ``self._validate_all = ...`` binding), so breaking ``And.__call__`` reached
only ``test_and`` while six test files failed, and ``tests affected`` called it safe."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

from indexd.graph.test_select import is_trusted

FILES = {
    "pkg/__init__.py": "",
    "pkg/validate.py": (
        "class And:\n"
        "    def __init__(self, *validators):\n        self.validators = validators\n\n"
        "    def __call__(self, value):\n        return value\n"),
    "pkg/fields.py": (
        "from pkg.validate import And\n\n\n"
        "class Field:\n"
        "    def validate(self, value):\n        return self._validate_all(value)\n\n"
        "    @property\n"
        "    def _validate_all(self):\n        return And()\n\n"
        "    def plain(self):\n        return And()\n\n"
        "    def other(self, value):\n        return self.plain(value)\n"),
    "tests/test_fields.py": (
        "from pkg.fields import Field\n\n\n"
        "def test_validate():\n    assert Field().validate(1) == 1\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("prop_returns"), FILES))


def test_calling_a_property_runs_the_dunder_call_of_what_it_returns(graph):
    assert ("pkg/validate.py", "And.__call__", "inferred") in calls_from(
        graph, "pkg/fields.py", "Field.validate")
    # `self.plain(value)` calls the method, not what it returns
    assert ("pkg/validate.py", "And.__call__", "inferred") not in calls_from(
        graph, "pkg/fields.py", "Field.other")


def test_the_test_of_the_field_is_trusted_for_the_validator(graph):
    tests = graph.impact("pkg/validate.py::And.__call__", limit=None)["tests"]
    assert any(t["symbol"] == "test_validate" and is_trusted(t) for t in tests)
