"""Issue 11 part 2: types without annotations at the use. `x = make()` where every
`return` of `make` builds `App(...)` (`cls(...)` in a classmethod: its class) gives x
App; `self.command = command` where `__init__(self, command: "Command")` gives
`self.command.get_help()` Command's method (click's `Context`). Both `inferred`, and
only when every binding and every return agree."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from as calls, parse_file, repo_facts

from indexd.graph import Graph

FILES = {
    "pkg/__init__.py": "",
    "pkg/app.py": (
        "class App:\n    def run(self):\n        return 1\n\n"
        "    @classmethod\n    def create(cls, name):\n        if not name:\n"
        "            return None\n        return cls(name)\n\n\n"
        "class Other:\n    def run(self):\n        return 2\n\n\n"
        "def make(flag):\n    if flag:\n        return App()\n    return None\n\n\n"
        "def either(flag):\n    if flag:\n        return App()\n    return Other()\n\n\n"
        "def passes_on(app):\n    return app\n\n\n"
        "def generates():\n    yield App()\n\n\n"
        "def indirect():\n    return make(1)\n"),
    "pkg/use.py": (
        "from pkg.app import App, either, generates, indirect, make, passes_on\n\n\n"
        "def from_body():\n    a = make(1)\n    return a.run()\n\n\n"
        "def from_classmethod():\n    a = App.create('x')\n    return a.run()\n\n\n"
        "def disagreeing():\n    a = either(1)\n    return a.run()\n\n\n"
        "def not_a_call():\n    a = passes_on(App())\n    return a.run()\n\n\n"
        "def generator():\n    a = generates()\n    return a.run()\n\n\n"
        "def two_deep():\n    a = indirect()\n    return a.run()\n"),
    "pkg/ctx.py": (
        "import typing as t\n\n\nclass Command:\n    def get_help(self):\n        return 'h'\n\n\n"
        "class Context:\n    def __init__(self, command: 'Command', parent: t.Optional['Context'] = None,\n"
        "                 obj=None, other: 'Command' = None):\n"
        "        self.command = command\n        self.parent = parent\n        self.obj = obj\n"
        "        self.mixed = other\n\n"
        "    def reset(self):\n        self.mixed = object()\n\n"
        "    def help(self):\n        return self.command.get_help()\n\n"
        "    def parent_help(self):\n        return self.parent.help()\n\n"
        "    def obj_help(self):\n        return self.obj.get_help()\n\n"
        "    def mixed_help(self):\n        return self.mixed.get_help()\n"),
}
RUN = ("pkg/app.py", "App.run", "inferred")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("bodies"), FILES))


def inferred(graph, path, symbol):
    return {c for c in calls(graph, path, symbol) if c[2] == "inferred"}


@pytest.mark.parametrize("symbol", ["from_body", "from_classmethod"])
def test_every_return_building_one_class_gives_it(graph, symbol):
    assert RUN in calls(graph, "pkg/use.py", symbol), calls(graph, "pkg/use.py", symbol)


@pytest.mark.parametrize("symbol", ["disagreeing", "not_a_call", "generator", "two_deep"])
def test_returns_that_do_not_agree_give_nothing(graph, symbol):
    """Two classes, a returned parameter, a generator, another function's body (no
    recursion through bodies): no inferred edge."""
    assert not inferred(graph, "pkg/use.py", symbol), calls(graph, "pkg/use.py", symbol)


def test_an_attribute_set_from_an_annotated_init_parameter(graph):
    assert ("pkg/ctx.py", "Command.get_help", "inferred") in calls(graph, "pkg/ctx.py",
                                                                   "Context.help")
    # t.Optional["Context"]: the quoted name inside Optional[...]
    assert ("pkg/ctx.py", "Context.help", "inferred") in calls(graph, "pkg/ctx.py",
                                                               "Context.parent_help")


@pytest.mark.parametrize("symbol", ["Context.obj_help", "Context.mixed_help"])
def test_an_attribute_from_an_unannotated_parameter_or_rebound_gives_nothing(graph, symbol):
    assert not inferred(graph, "pkg/ctx.py", symbol), calls(graph, "pkg/ctx.py", symbol)


def test_editing_a_return_elsewhere_recomputes_its_users(tree):
    """use.py's `a = make(1); a.run()` depends on app.py's `return App()`, which is
    neither a definition nor an annotation."""
    repo = tree("incr", FILES)
    g = Graph().build(repo_facts("r", repo))
    assert RUN in calls(g, "pkg/use.py", "from_body")
    (repo / "pkg/app.py").write_text(FILES["pkg/app.py"].replace(
        "    if flag:\n        return App()\n    return None",
        "    if flag:\n        return Other()\n    return None", 1))
    g.update_file(parse_file("r", repo, "pkg/app.py"))
    assert ("pkg/app.py", "Other.run", "inferred") in calls(g, "pkg/use.py", "from_body")
    assert RUN not in calls(g, "pkg/use.py", "from_body")
