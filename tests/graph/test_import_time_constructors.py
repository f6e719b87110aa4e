"""A class built on import runs its constructor on import (marshmallow 3.22.0,
bench/impact_vs_tests.py): tests/base.py builds schemas in class bodies
(``fields.Nested(UserSchema(only=...))``) and tests/conftest.py imports it, so a broken
``Schema.__init__`` (or what it calls) fails every test's collection. The call to the
class had its ``import_time`` edge, the ``Schema.__init__`` it runs had none, so
``tests affected`` selected 12 of the 13 failing test files and called that safe."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/schema.py": (
        "def init_fields(schema):\n    return []\n\n\n"
        "class Schema:\n"
        "    def __init__(self, only=None):\n        self.fields = init_fields(self)\n"),
    "tests/__init__.py": "",
    "tests/base.py": (
        "from pkg.schema import Schema\n\n\n"
        "class UserSchema(Schema):\n    pass\n\n\n"
        "class BlogSchema(Schema):\n    user = UserSchema(only=('id',))\n"),
    "tests/conftest.py": "from tests.base import BlogSchema\n",
    "tests/test_errors.py": "def test_error():\n    assert ValueError('x')\n",
    "pkg/late.py": (
        "from pkg.schema import Schema\n\n\n"
        "def build():\n    return Schema()\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("ctor_at_import"), FILES))


def test_a_constructor_run_in_a_class_body_runs_at_import(graph):
    runs = {(e.src_path, e.dst_symbol) for e in graph.edges(["import_time"])}
    assert ("tests/base.py", "Schema.__init__") in runs
    # built inside a function only: not at import
    assert ("pkg/late.py", "Schema.__init__") not in runs


def test_every_test_below_the_conftest_that_imports_it_is_in_the_tests_bucket(graph):
    tests = {t["path"] for t in graph.impact("pkg/schema.py::init_fields", limit=None)["tests"]}
    assert "tests/test_errors.py" in tests
