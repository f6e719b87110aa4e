"""A ``for`` target over a list the code fills holds the classes put into it.

sqlparse 0.5.1 (bench/impact_vs_tests.py): ``FilterStack.__init__`` sets
``self.postprocess = []``, ``sqlparse.format`` appends ``filters.SerializerUnicode()``
to ``stack.postprocess`` and ``FilterStack.run`` does ``for filter_ in self.postprocess:
stmt = filter_.process(stmt)``. Nothing annotates the list, so ``filter_.process`` was a
name match: test_cli.py, which reaches ``utils.split_unquoted_newlines`` only through
``SerializerUnicode.process``, had no trusted chain, and ``tests affected`` called a
change there safe while test_cli.py failed.

The element classes come from what fills the list: ``c.append(C())`` / ``c.add(C())`` /
``c.extend([C(), ...])`` / ``c = [C(), ...]``, or a name holding a known class
(``c.append(fltr)``), wherever the receiver of ``c`` is the list's class (or, where the
receiver's class is unknown, the attribute is a list of one class only in the realm).
An element of unknown class (a parameter appended), a list bound to anything but a list
literal, or an attribute name several classes hold as a list filled from an unknown
receiver, gives no answer: the call stays a name match, as before.
"""

from __future__ import annotations

import pytest
from graph_helpers import (build, calls_from, edge_set, parse_file, repo_facts,
                           trusted_tests, write_tree)
from indexd.graph import Graph

FILTERS = (
    "class Serializer:\n    def process(self, stmt):\n        return split_lines(stmt)\n\n\n"
    "class OutputPHP:\n    def process(self, stmt):\n        return stmt\n\n\n"
    "class OutputPython:\n    def process(self, stmt):\n        return stmt\n\n\n"
    "class Keyword:\n    def process(self, stream):\n        return stream\n\n\n"
    "class Unrelated:\n    def process(self, x):\n        return x\n\n\n"
    "def split_lines(s):\n    return s.split()\n")
FORMATTER = (
    "from pkg import filters\n\n\n"
    "def build(stack, options):\n"
    "    if options.get('kw'):\n        stack.preprocess.append(filters.Keyword())\n"
    "    if options.get('fmt') == 'php':\n        fltr = filters.OutputPHP()\n"
    "    elif options.get('fmt') == 'python':\n        fltr = filters.OutputPython()\n"
    "    else:\n        fltr = None\n"
    "    if fltr is not None:\n        stack.postprocess.append(fltr)\n"
    "    return stack\n")
FILES = {
    "pkg/__init__.py": (
        "from pkg import engine, filters, formatter\n\n\n"
        "def format(sql, **options):\n"
        "    stack = engine.FilterStack()\n"
        "    stack = formatter.build(stack, options)\n"
        "    stack.postprocess.append(filters.Serializer())\n"
        "    return stack.run(sql)\n"),
    "pkg/engine.py": (
        "class FilterStack:\n"
        "    def __init__(self):\n"
        "        self.preprocess = []\n        self.postprocess = []\n"
        "        self.opaque = []\n\n"
        "    def run(self, sql):\n"
        "        for f in self.preprocess:\n            sql = f.process(sql)\n"
        "        for f in self.postprocess:\n            sql = f.process(sql)\n"
        "        return sql\n\n"
        "    def add(self, f):\n        self.opaque.append(f)\n\n"
        "    def run_opaque(self, sql):\n"
        "        for f in self.opaque:\n            sql = f.process(sql)\n"
        "        return sql\n"),
    "pkg/filters.py": FILTERS,
    "pkg/formatter.py": FORMATTER,
    "pkg/local.py": (
        "from pkg import filters\n\n\n"
        "def pipeline(x):\n"
        "    steps = [filters.Keyword(), filters.Serializer()]\n"
        "    steps.append(filters.OutputPHP())\n"
        "    for s in steps:\n        x = s.process(x)\n"
        "    return x\n\n\n"
        "def opaque_local(x, extra):\n"
        "    steps = []\n    steps.append(extra)\n"
        "    for s in steps:\n        x = s.process(x)\n"
        "    return x\n\n\n"
        "def rebound_local(x, given):\n"
        "    steps = [filters.Keyword()]\n    steps = given\n"
        "    for s in steps:\n        x = s.process(x)\n"
        "    return x\n"),
    "pkg/shared.py": (
        "from pkg import filters\n\n\n"
        "class A:\n    def __init__(self):\n        self.items = []\n\n"
        "    def run(self):\n        for i in self.items:\n            i.process(1)\n\n\n"
        "class B:\n    def __init__(self):\n        self.items = []\n\n\n"
        "def fill(thing):\n    thing.items.append(filters.Unrelated())\n"),
    "pkg/inherit.py": (
        "from pkg import filters\n\n\n"
        "class Base:\n    def __init__(self):\n        self.steps = [filters.Keyword()]\n\n"
        "    def run(self, x):\n        for s in self.steps:\n            x = s.process(x)\n"
        "        return x\n\n\n"
        "class Child(Base):\n    def __init__(self):\n        super().__init__()\n"
        "        self.steps.append(filters.Unrelated())\n"),
    "tests/test_format.py": "import pkg\n\n\ndef test_format():\n    assert pkg.format('x')\n",
}
ENGINE, FILTERS_PY, LOCAL = "pkg/engine.py", "pkg/filters.py", "pkg/local.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("containers"), FILES))


def process_hows(graph, path: str, symbol: str) -> dict[str, set[str]]:
    """Class -> the hows of the calls edges from ``path::symbol`` to its ``process``."""
    out: dict[str, set[str]] = {}
    for p, s, how in calls_from(graph, path, symbol):
        if p == FILTERS_PY and s.endswith(".process"):
            out.setdefault(s.split(".")[0], set()).add(how)
    return out


def inferred(hows: dict[str, set[str]]) -> set[str]:
    return {cls for cls, h in hows.items() if "inferred" in h}


def test_a_list_attribute_holds_what_every_fill_site_appends(graph):
    """``self.postprocess`` is filled in format() (a known FilterStack) and in build()
    (an unannotated parameter: the attribute is one class's list) with a name holding
    either of two classes or None; ``self.preprocess`` with one class."""
    assert inferred(process_hows(graph, ENGINE, "FilterStack.run")) == {
        "Serializer", "OutputPHP", "OutputPython", "Keyword"}


def test_the_test_reaches_what_only_a_filled_element_calls_over_trusted_edges(graph):
    trusted = {path for path, _ in trusted_tests(graph, f"{FILTERS_PY}::split_lines",
                                                 depth=6)}
    assert "tests/test_format.py" in trusted


def test_a_list_filled_with_a_parameter_gives_no_class_and_keeps_the_name_match(graph):
    hows = process_hows(graph, ENGINE, "FilterStack.run_opaque")
    assert not inferred(hows)
    assert any("name_match" in h for h in hows.values())


def test_a_local_list_holds_its_literal_and_appended_classes(graph):
    assert inferred(process_hows(graph, LOCAL, "pipeline")) == {
        "Keyword", "Serializer", "OutputPHP"}


@pytest.mark.parametrize("symbol", ["opaque_local", "rebound_local"])
def test_a_local_list_with_an_unknown_element_or_binding_gives_no_class(graph, symbol):
    assert not inferred(process_hows(graph, LOCAL, symbol))


def test_an_attribute_two_classes_hold_filled_from_an_unknown_receiver_gives_no_class(graph):
    assert not inferred(process_hows(graph, "pkg/shared.py", "A.run"))


def test_a_subclass_adding_to_the_inherited_list_gives_no_class(graph):
    """Child appends to the list Base made: Base.run's loop may hold a Child's element
    too, so the answer is not whole and ``s.process`` stays a name match."""
    hows = process_hows(graph, "pkg/inherit.py", "Base.run")
    assert not inferred(hows)
    assert any("name_match" in h for h in hows.values())


def test_a_changed_fill_site_updates_the_iterating_file(tmp_path):
    """The loop is in engine.py, what fills the list in formatter.py: an edit there must
    recompute engine.py's edges, as a full rebuild would."""
    repo = write_tree(tmp_path / "proj", FILES)
    g = Graph().build(repo_facts("r", repo))
    assert "Keyword" in inferred(process_hows(g, ENGINE, "FilterStack.run"))
    (repo / "pkg/formatter.py").write_text(
        FORMATTER.replace("filters.Keyword()", "filters.Unrelated()"))
    g.update_file(parse_file("r", repo, "pkg/formatter.py"))
    assert edge_set(g) == edge_set(Graph().build(list(g.facts.values())))
    hows = inferred(process_hows(g, ENGINE, "FilterStack.run"))
    assert "Unrelated" in hows and "Keyword" not in hows
