"""Issue 11: calling an instance held in an attribute, ``self.type(value)``, runs the
``__call__`` of the attribute's class, as ``v(x)`` on a variable already did. click's
``Parameter.type_cast_value`` converts each value with ``self.type(value, self, ctx)``
(``self.type: types.ParamType``), and ``ParamType.__call__`` runs ``self.convert``: the
File, Path and Choice conversions a command's tests break were reached by no trusted
edge. An ``inferred`` calls edge, only where ``self.x``'s bindings give its class."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/kinds.py": (
        "class Kind:\n"
        "    def __call__(self, value):\n        return self.convert(value)\n\n"
        "    def convert(self, value):\n        return value\n\n\n"
        "class Param:\n"
        "    def __init__(self, kind: Kind, other):\n"
        "        self.kind: Kind = kind\n        self.made = Kind()\n"
        "        self.other = other\n\n"
        "    def by_annotation(self, value):\n        return self.kind(value)\n\n"
        "    def by_constructor(self, value):\n        return self.made(value)\n\n"
        "    def unknown(self, value):\n        return self.other(value)\n"),
}
KINDS = "pkg/kinds.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("attrcall"), FILES))


def dunder_calls(graph, symbol) -> set[tuple]:
    return {(s, how) for p, s, how in calls_from(graph, KINDS, symbol)
            if p == KINDS and s == "Kind.__call__"}


@pytest.mark.parametrize("symbol", ["Param.by_annotation", "Param.by_constructor"])
def test_calling_an_attribute_of_known_class_reaches_its_call(graph, symbol):
    assert dunder_calls(graph, symbol) == {("Kind.__call__", "inferred")}


def test_an_attribute_of_unknown_class_reaches_no_call(graph):
    assert dunder_calls(graph, "Param.unknown") == set()
