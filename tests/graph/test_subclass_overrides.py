"""Issue 11 part 2: ``self.m()`` in a base class also runs the overrides of ``m`` in its
subclasses (class hierarchy analysis). On click, ``BaseCommand.make_context`` calls
``self.parse_args(ctx, args)`` and ``BaseCommand.main`` calls ``self.invoke(ctx)``;
what runs is ``Command.parse_args`` / ``MultiCommand.invoke``, so breaking those cut
every CLI test off (55 of click's 92 missed (function, failing test file) pairs had
such a hop). The edges are ``inferred``; a same-named method of an unrelated class,
and ``super().m()``, get none."""

from __future__ import annotations

import pytest
from graph_helpers import build, paths, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "class BaseCommand:\n"
        "    def main(self, args):\n"
        "        ctx = self.make_context(args)\n"
        "        return self.invoke(ctx)\n\n"
        "    def make_context(self, args):\n"
        "        self.parse_args(args)\n"
        "        return {}\n\n"
        "    def parse_args(self, args):\n"
        "        raise NotImplementedError\n\n"
        "    def invoke(self, ctx):\n"
        "        return None\n\n\n"
        "class Command(BaseCommand):\n"
        "    def parse_args(self, args):\n"
        "        return list(args)\n\n"
        "    def invoke(self, ctx):\n"
        "        return super().invoke(ctx)\n\n\n"
        "class Unrelated:\n"
        "    def parse_args(self, args):\n"
        "        return None\n"),
    "pkg/multi.py": (
        "from pkg.core import Command\n\n\n"
        "class MultiCommand(Command):\n"
        "    def invoke(self, ctx):\n"
        "        return [ctx]\n\n\n"
        "class Group(MultiCommand):\n"
        "    def parse_args(self, args):\n"
        "        return []\n"),
    "tests/test_cli.py": (
        "from pkg.multi import Group\n\n\n"
        "def test_group():\n"
        "    assert Group().main([]) == [{}]\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("overrides"), FILES))


def calls(graph, src_symbol):
    return {(e.dst_path, e.dst_symbol, e.how) for e in graph.edges(["calls"])
            if e.src_symbol == src_symbol}


def test_self_call_reaches_overrides_in_subclasses(graph):
    got = calls(graph, "BaseCommand.make_context")
    assert ("pkg/core.py", "BaseCommand.parse_args", "inferred") in got
    assert ("pkg/core.py", "Command.parse_args", "inferred") in got
    # a subclass of a subclass, in another file that imports the base's file
    assert ("pkg/multi.py", "Group.parse_args", "inferred") in got
    assert not any(sym == "Unrelated.parse_args" for _, sym, _ in got)


def test_super_call_does_not_go_down(graph):
    got = calls(graph, "Command.invoke")
    assert got == {("pkg/core.py", "BaseCommand.invoke", "inferred")}


def test_impact_of_an_override_reaches_tests_through_the_base(graph):
    res = graph.impact("pkg/multi.py::Group.parse_args")
    assert "tests/test_cli.py" in paths(res["tests"])
    res = graph.impact("pkg/multi.py::MultiCommand.invoke")
    assert "tests/test_cli.py" in paths(res["tests"])


def test_a_new_subclass_file_updates_the_base_callers(tmp_path):
    from graph_helpers import parse_file

    root = write_tree(tmp_path, FILES)
    g = build("r", root)
    write_tree(root, {"pkg/extra.py": ("from pkg.core import Command\n\n\n"
                                       "class Extra(Command):\n"
                                       "    def parse_args(self, args):\n"
                                       "        return None\n")})
    g.update_file(parse_file("r", root, "pkg/extra.py"))
    assert ("pkg/extra.py", "Extra.parse_args", "inferred") in calls(g, "BaseCommand.make_context")
