"""A property is run by reading an attribute, which no edge names (marshmallow 3.22.0,
bench/impact_vs_tests.py): ``Nested.schema`` is read as ``self.schema`` and
``field.schema`` all over the package, so breaking it failed 7 test files, while
``tests affected`` said "untested" (provably no test) and called the change safe. A
property (``@property``, ``@functools.cached_property``, ``@x.setter``) that no
trusted chain reaches is now ``unknown``: not safe, and the test files importing its
module are added."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

from indexd.graph.properties import property_quals
from indexd.graph.test_select import select_tests

FILES = {
    "pkg/__init__.py": "",
    "pkg/fields.py": (
        "import functools\n\n\n"
        "class Nested:\n"
        "    @property\n"
        "    def schema(self):\n        return self._schema\n\n"
        "    @schema.setter\n"
        "    def schema(self, value):\n        self._schema = value\n\n"
        "    @functools.cached_property\n"
        "    def size(self):\n        return 1\n\n"
        "    def plain(self):\n        return 2\n\n"
        "    @staticmethod\n"
        "    def helper():\n        return 3\n\n"
        "    def dump(self):\n        return self.schema\n"),
    "tests/test_fields.py": (
        "from pkg.fields import Nested\n\n\n"
        "def test_dump(thing):\n    assert thing.dump() is None\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("props"), FILES))


def test_properties_are_known_by_their_decorators(graph):
    (facts,) = [f for k, f in graph.facts.items() if k[2] == "pkg/fields.py"]
    assert property_quals(facts) == {"Nested.schema", "Nested.size"}


@pytest.mark.parametrize("symbol, tested", [("schema", "unknown"), ("size", "unknown"),
                                            ("plain", "untested")])
def test_a_property_no_trusted_chain_reaches_is_unknown_not_untested(graph, symbol, tested):
    target = f"pkg/fields.py::Nested.{symbol}"
    repo = graph.resolve_target(target)[0][1]
    change = {"repo": repo, "path": "pkg/fields.py", "symbol": f"Nested.{symbol}",
              "change": "target"}
    result = graph.impact(target, limit=None)
    result["property"] = graph.is_property(target)
    picked = select_tests([(change, result)], 3)
    assert picked["changed"][0]["tested"] == tested
