"""Issue 11: a ``for`` target holds the element class of what it iterates, when an
annotation says it: ``for p in self.get_params(ctx)`` where ``get_params`` is annotated
``-> List["Parameter"]``, ``for p in self.params`` where ``self.params: List[Parameter]``,
``for p in ordered()`` with ``-> Iterator[Parameter]``. click's ``Command.parse_args``
runs ``param.handle_parse_result(...)`` on each parameter so: without it every test
that invokes a command missed the parameter processing (prompts, type conversion).
``p.m()`` is then an ``inferred`` call to the element class's ``m``; a mapping
iterates its keys, a tuple target (``for a, b in ...``) and an unknown iterable give
nothing."""

from __future__ import annotations

import pytest
from graph_helpers import build, hows_to, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/params.py": (
        "import typing as t\n\n\n"
        "class Param:\n    def handle(self):\n        return 1\n\n\n"
        "def ordered(ps) -> t.Iterator[Param]:\n    yield from ps\n\n\n"
        "class Command:\n"
        "    def __init__(self):\n        self.params: t.List[Param] = []\n\n"
        "    def get_params(self) -> t.List[\"Param\"]:\n        return self.params\n\n"
        "    def by_call(self):\n        for p in self.get_params():\n            p.handle()\n\n"
        "    def by_attr(self):\n        for p in self.params:\n            p.handle()\n\n\n"
        "def by_generator(ps):\n    for p in ordered(ps):\n        p.handle()\n\n\n"
        "def by_parameter(ps: t.Sequence[Param]):\n    for p in ps:\n        p.handle()\n\n\n"
        "def by_mapping(d: t.Dict[Param, int], e: t.Dict[str, Param]):\n"
        "    for k in e:\n        k.handle()\n\n\n"
        "def by_pairs(ps: t.List[Param]):\n    for a, b in ps:\n        a.handle()\n\n\n"
        "def by_unknown(ps):\n    for p in ps:\n        p.handle()\n\n\n"
        "def rebound(ps: t.List[Param]):\n    for p in ps:\n        p.handle()\n"
        "    p = 3\n    p.handle()\n"),
}
PARAMS = "pkg/params.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("forelem"), FILES))


def handles(graph, symbol) -> set[str]:
    return hows_to(graph, PARAMS, symbol, "Param.handle")


@pytest.mark.parametrize("symbol", ["Command.by_call", "Command.by_attr", "by_generator",
                                    "by_parameter"])
def test_a_for_target_holds_the_annotated_element_class(graph, symbol):
    assert handles(graph, symbol) == {"inferred"}


@pytest.mark.parametrize("symbol", ["by_mapping", "by_pairs", "by_unknown", "rebound"])
def test_no_element_class_without_a_sequence_annotation_of_one_target(graph, symbol):
    """A mapping iterates its keys (str here); ``for a, b`` unpacks each element; an
    unannotated iterable says nothing; ``p = 3`` after the loop is another binding."""
    assert "inferred" not in handles(graph, symbol)
