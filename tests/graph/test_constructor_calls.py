"""Issue 11: ``C(...)`` runs ``C.__init__`` (found along C's bases), an ``inferred``
calls edge beside the call of the class. The impact of a constructor already started at
its class (test_impact_constructors.py), but a walk that reached ``__init__`` on the
way went no further: click's test_info_dict.py builds ``click.Argument(["name"])`` at
import, which runs ``Parameter.__init__`` and so ``Argument._parse_decls``, and that
test file was never predicted for ``_parse_decls``. A call of a class named only by a
name match, or of a class without a constructor in the realm, gets none."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/params.py": (
        "class Param:\n"
        "    def __init__(self, decls):\n        self.name = self._parse_decls(decls)\n\n"
        "    def _parse_decls(self, decls):\n        return decls\n\n\n"
        "class Argument(Param):\n"
        "    def __init__(self, decls):\n        super().__init__(decls)\n\n"
        "    def _parse_decls(self, decls):\n        return decls[0]\n\n\n"
        "class Positional(Argument):\n    pass\n\n\n"
        "class Plain:\n    pass\n"),
    "tests/__init__.py": "",
    "tests/test_info.py": (
        "from pkg.params import Argument, Plain, Positional\n\n"
        "NAME = Argument(['name'])\n\n\n"
        "def test_name():\n    assert NAME.name == 'name'\n\n\n"
        "def test_inherited():\n    assert Positional(['p']).name == 'p'\n\n\n"
        "def test_plain():\n    assert Plain()\n"),
    "tests/test_other.py": "def test_nothing():\n    assert True\n",
}
PARAMS, TEST = "pkg/params.py", "tests/test_info.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("ctorcalls"), FILES))


def constructors(graph, symbol) -> set[tuple]:
    return {(s, how) for p, s, how in calls_from(graph, TEST, symbol)
            if p == PARAMS and s.endswith(".__init__")}


@pytest.mark.parametrize("symbol, want", [
    ("NAME", "Argument.__init__"),
    ("test_inherited", "Argument.__init__"),     # Positional has none of its own
])
def test_calling_a_class_reaches_its_constructor(graph, symbol, want):
    assert constructors(graph, symbol) == {(want, "inferred")}


def test_a_class_without_a_constructor_gets_no_edge(graph):
    assert constructors(graph, "test_plain") == set()


def test_a_method_the_constructor_runs_reaches_the_test_building_the_class(graph):
    res = graph.impact(f"{PARAMS}::Argument._parse_decls", depth=3)
    tests = {t["path"] for t in res["tests"]}
    assert TEST in tests, res["tests"]
    assert "tests/test_other.py" not in tests
