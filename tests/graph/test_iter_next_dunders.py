"""Issue 11: the iteration protocol called without naming it, on a receiver whose class
is known (graph/types.py). ``next(r)`` / ``next(r, default)`` runs ``R.__next__``,
``iter(r)`` ``R.__iter__``, a comprehension's ``for x in r`` both, as the ``for``
statement already did; ``iter(self)`` in a method is the enclosing class's (click's
``ProgressBar.__next__`` is ``return next(iter(self))``). Each an ``inferred`` calls
edge; ``iter(f, sentinel)`` calls ``f`` instead, a receiver of unknown class gets none,
and a module's own ``next`` is no builtin."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/bar.py": (
        "class Bar:\n"
        "    def __iter__(self):\n        return self\n\n"
        "    def __next__(self):\n        return next(iter(self))\n\n"
        "    def step(self):\n        return [x for x in self]\n\n\n"
        "def make() -> Bar:\n    return Bar()\n"),
    "pkg/use.py": (
        "from pkg.bar import Bar, make\n\n\n"
        "def one():\n    b = make()\n    return next(b)\n\n\n"
        "def with_default():\n    b = Bar()\n    return next(b, None)\n\n\n"
        "def iterate():\n    b = Bar()\n    return iter(b)\n\n\n"
        "def listed():\n    b = make()\n    return [x for x in b]\n\n\n"
        "def generated(b: Bar):\n    return sum(x for x in b)\n\n\n"
        "def sentinel():\n    b = Bar()\n    return iter(b, None)\n\n\n"
        "def unknown(g):\n    return next(g), iter(g), [x for x in g]\n"),
    "pkg/own.py": (
        "from pkg.bar import Bar\n\n\n"
        "def next(x):\n    return x\n\n\n"
        "def shadowed():\n    b = Bar()\n    return next(b)\n"),
}
BAR, USE = "pkg/bar.py", "pkg/use.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("iternext"), FILES))


def dunders(graph, path, symbol) -> set[tuple]:
    return {(s, how) for p, s, how in calls_from(graph, path, symbol)
            if p == BAR and s.startswith("Bar.__")}


@pytest.mark.parametrize("symbol, want", [
    ("one", {"Bar.__next__"}),
    ("with_default", {"Bar.__next__"}),
    ("iterate", {"Bar.__iter__"}),
    ("listed", {"Bar.__iter__", "Bar.__next__"}),
    ("generated", {"Bar.__iter__", "Bar.__next__"}),
])
def test_the_iteration_protocol_reaches_the_receivers_dunders(graph, symbol, want):
    assert dunders(graph, USE, symbol) == {(s, "inferred") for s in want}


def test_iter_of_self_in_a_method_is_the_enclosing_class(graph):
    assert ("Bar.__iter__", "inferred") in dunders(graph, BAR, "Bar.__next__")
    assert ("Bar.__iter__", "inferred") in dunders(graph, BAR, "Bar.step")


def test_iter_with_a_sentinel_does_not_iterate_its_argument(graph):
    """``iter(f, sentinel)`` calls ``f()`` until it returns the sentinel."""
    assert dunders(graph, USE, "sentinel") == set()


def test_a_receiver_of_unknown_class_gets_no_dunder_edge(graph):
    assert dunders(graph, USE, "unknown") == set()


def test_a_module_level_next_is_no_builtin(graph):
    assert dunders(graph, "pkg/own.py", "shadowed") == set()
