"""A class attribute holding an instance (Python): ``subtypeSpec = ConstraintsIntersection()``.

pyasn1 keeps per-class defaults in class bodies (``base.Asn1Type.subtypeSpec =
constraint.ConstraintsIntersection()``, ``univ.Integer.namedValues =
namedval.NamedValues()``) and calls them from methods of the class or of its subclasses in
other files (``self.subtypeSpec(value)``). Nothing said what ``self.subtypeSpec`` held, so
breaking ``AbstractConstraint.__call__`` failed three test files that ``impact`` left out
and ``tests affected`` called safe (bench/impact_vs_tests.py, its first run on pyasn1).
``self.x`` that no method of the class binds holds what the nearest class body along the
bases binds ``x`` to."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, parse_file, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/constraint.py": ("class AbstractConstraint:\n"
                          "    def __call__(self, value):\n        return value\n\n\n"
                          "class ConstraintsIntersection(AbstractConstraint):\n    pass\n"),
    "pkg/namedval.py": ("class NamedValues:\n    def __len__(self):\n        return 0\n\n"
                        "    def items(self):\n        return []\n"),
    "pkg/base.py": ("from pkg import constraint\n\n\n"
                    "class Asn1Type:\n    subtypeSpec = constraint.ConstraintsIntersection()\n\n"
                    "    def verify(self, value):\n        self.subtypeSpec(value)\n"),
    "pkg/univ.py": ("from pkg import base\nfrom pkg.namedval import NamedValues\n\n\n"
                    "class Integer(base.Asn1Type):\n    namedValues = NamedValues()\n\n"
                    "    def check(self, v):\n        return self.subtypeSpec(v)\n\n"
                    "    def count(self):\n        return len(self.namedValues)\n\n"
                    "    def names(self):\n        return self.namedValues.items()\n\n\n"
                    "class Real(base.Asn1Type):\n    subtypeSpec = None\n\n"
                    "    def check(self, v):\n        return self.subtypeSpec(v)\n\n\n"
                    "class Bits(base.Asn1Type):\n    def __init__(self):\n        self.namedValues = 3\n\n"
                    "    def count(self):\n        return len(self.namedValues)\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("classbody"), FILES))


def test_a_class_bodys_instance_is_what_self_attr_holds(graph):
    assert ("pkg/constraint.py", "AbstractConstraint.__call__", "inferred") in calls_from(
        graph, "pkg/base.py", "Asn1Type.verify")
    assert ("pkg/namedval.py", "NamedValues.__len__", "inferred") in calls_from(
        graph, "pkg/univ.py", "Integer.count")
    assert ("pkg/namedval.py", "NamedValues.items", "inferred") in calls_from(
        graph, "pkg/univ.py", "Integer.names")


def test_a_base_class_bodys_instance_in_another_file(graph):
    assert ("pkg/constraint.py", "AbstractConstraint.__call__", "inferred") in calls_from(
        graph, "pkg/univ.py", "Integer.check")


def test_the_nearest_binding_decides_and_a_method_binding_comes_first(graph):
    # Real rebinds it to None: no constraint runs there
    assert not {c for c in calls_from(graph, "pkg/univ.py", "Real.check")
                if c[0] == "pkg/constraint.py"}
    # Bits binds self.namedValues in a method (to no class): the class body is not asked
    assert not {c for c in calls_from(graph, "pkg/univ.py", "Bits.count")
                if c[0] == "pkg/namedval.py"}


def test_a_save_of_the_base_moves_the_subclasses_edges(tmp_path):
    """base.py alone saved (graph.update_file): univ.py's `self.subtypeSpec(v)` follows."""
    repo = write_tree(tmp_path, FILES)
    g = build("r", repo)
    assert ("pkg/constraint.py", "AbstractConstraint.__call__", "inferred") in calls_from(
        g, "pkg/univ.py", "Integer.check")
    (repo / "pkg/base.py").write_text(FILES["pkg/base.py"].replace(
        "constraint.ConstraintsIntersection()", "None"))
    g.update_file(parse_file("r", repo, "pkg/base.py"))
    assert not {c for c in calls_from(g, "pkg/univ.py", "Integer.check")
                if c[0] == "pkg/constraint.py"}


TRUTH = {
    "pkg/__init__.py": "",
    "pkg/sized.py": ("class Sized:\n    def __len__(self):\n        return 0\n\n\n"
                     "class Both(Sized):\n    def __bool__(self):\n        return True\n"),
    "pkg/use.py": ("from pkg.sized import Both, Sized\n\n\n"
                   "class Holder:\n    names = Sized()\n    both = Both()\n\n"
                   "    def f(self, value):\n        if self.names and not value:\n"
                   "            return 1\n        return 0\n\n"
                   "    def g(self):\n        return not self.both\n\n"
                   "    def h(self, other):\n        while other:\n            pass\n\n"
                   "    def k(self, flag):\n        v = Both() if flag else Sized()\n"
                   "        x = Both()\n        x = Sized()\n"
                   "        return not x\n"),
}


def test_a_truth_test_runs_bool_or_else_len(tmp_path):
    """pyasn1's `self.namedValues and not value.isdigit()` runs NamedValues.__len__ (it
    has no __bool__); breaking it failed nine test files `tests affected` called safe."""
    g = build("r", write_tree(tmp_path, TRUTH))

    def ran(symbol):
        return {e.dst_symbol for e in g.edges(["calls"]) if e.src_path == "pkg/use.py"
                and e.src_symbol == symbol and e.dst_path == "pkg/sized.py"}
    assert ran("Holder.f") == {"Sized.__len__"}
    assert ran("Holder.g") == {"Both.__bool__"}     # __bool__ first, __len__ not run
    assert ran("Holder.h") == set()                 # a value of no known class
    # x holds a Both or a Sized: each runs its own (__bool__ / __len__)
    assert {"Both.__bool__", "Sized.__len__"} <= ran("Holder.k")
