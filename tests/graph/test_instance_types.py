"""Issue 11 part 2: instance types. `app = App(...)` then `app.run()` is App.run (or
the base that defines it), as are `def f(app: App)`, `self.x = X()` then `self.x.m()`,
and `a = make()` where `make() -> App`; all `inferred`. On click, `parser =
self.make_parser(ctx)` (`-> OptionParser`) and `formatter: HelpFormatter` cut the
tests off from the methods called on them. A binding of unknown type keeps today's
label."""

from __future__ import annotations

import pytest
from graph_helpers import build

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Base:\n    def helper(self):\n        return 1\n",
    "pkg/app.py": ("from pkg.base import Base\n\n\nclass App(Base):\n"
                   "    def run(self):\n        return 2\n\n\n"
                   "class Other:\n    def run(self):\n        return 3\n\n\n"
                   "def make() -> App:\n    return App()\n\n\n"
                   "def maybe() -> 'Optional[App]':\n    return None\n"),
    "pkg/use.py": (
        "import typing as t\nfrom typing import Optional\n"
        "from pkg import app as appmod\n"
        "from pkg.app import App, make, maybe\n\n\n"
        "def constructed():\n    a = App()\n    return a.run()\n\n\n"
        "def through_base():\n    a = appmod.App()\n    return a.helper()\n\n\n"
        "def annotated(a: App, b: Optional[App] = None, c: 'App' = None, d: App | None = None):\n"
        "    return a.run(), b.run(), c.run(), d.run()\n\n\n"
        "def returned():\n    a = make()\n    m = maybe()\n    return a.run(), m.run()\n\n\n"
        "def chained():\n    return App().run()\n\n\n"
        "def unknown(get):\n    a = get()\n    return a.run()\n\n\n"
        "def rebound(items):\n    a = App()\n    for a in items:\n        pass\n    return a.run()\n\n\n"
        "def plain_param(a):\n    return a.run()\n\n\n"
        "def unresolvable(a: Missing):\n    return a.run()\n\n\n"
        "MODULE_APP = App()\nmodule_app = App()\n\n\n"
        "def uses_module_var():\n    return module_app.run()\n\n\n"
        "def shadows_module_var(module_app):\n    return module_app.run()\n\n\n"
        "class Holder:\n    def __init__(self):\n        self.app = App()\n        self.none = None\n\n"
        "    def go(self):\n        return self.app.run()\n\n"
        "    def factory(self) -> App:\n        return App()\n\n"
        "    def from_factory(self):\n        a = self.factory()\n        return a.run()\n\n\n"
        # click's parser: option = self._long_opt[opt]; option.process(...)
        "class Registry:\n    def __init__(self):\n        self.by_name: t.Dict[str, App] = {}\n"
        "        self.plain = {}\n\n"
        "    def lookup(self, key):\n        a = self.by_name[key]\n        return a.run()\n\n"
        "    def untyped(self, key):\n        a = self.plain[key]\n        return a.run()\n\n\n"
        "def items(apps: 'list[App]'):\n    first = apps[0]\n    return first.run()\n"),
    "tests/test_use.py": ("from pkg.use import constructed\n\n\n"
                          "def test_constructed():\n    assert constructed() == 2\n"),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("types"), FILES))


def calls(graph, src_symbol):
    return {(e.dst_path, e.dst_symbol, e.how) for e in graph.edges(["calls"])
            if e.src_path == "pkg/use.py" and e.src_symbol == src_symbol}


RUN = ("pkg/app.py", "App.run", "inferred")


def test_a_constructed_instance_has_its_class(graph):
    assert RUN in calls(graph, "constructed")


def test_an_instance_method_is_found_through_the_bases(graph):
    assert ("pkg/base.py", "Base.helper", "inferred") in calls(graph, "through_base")


def test_parameter_annotations_give_the_type(graph):
    # App, Optional[App], 'App', App | None: one edge (the first line is the evidence)
    assert RUN in calls(graph, "annotated")
    assert ("pkg/app.py", "Other.run", "inferred") not in calls(graph, "annotated")


@pytest.mark.parametrize("param", ["b: Optional[App] = None", "c: 'App' = None",
                                   "d: App | None = None"])
def test_each_annotation_form_alone(tree, param):
    name = param.split(":")[0]
    files = dict(FILES, **{"pkg/use.py": f"from typing import Optional\nfrom pkg.app import App\n\n\n"
                                         f"def f({param}):\n    return {name}.run()\n"})
    g = build("r", tree("form", files))
    assert RUN in calls(g, "f")


def test_a_return_annotation_gives_the_type(graph):
    assert RUN in calls(graph, "returned")


def test_a_call_on_a_constructor_call(graph):
    assert RUN in calls(graph, "chained")


def test_a_self_attribute_set_in_init(graph):
    assert RUN in calls(graph, "Holder.go")


def test_a_method_return_annotation(graph):
    assert RUN in calls(graph, "Holder.from_factory")


def test_a_module_variable(graph):
    assert RUN in calls(graph, "uses_module_var")


@pytest.mark.parametrize("symbol", ["Registry.lookup", "items"])
def test_an_item_of_an_annotated_mapping_or_list(graph, symbol):
    assert RUN in calls(graph, symbol)


@pytest.mark.parametrize("symbol", ["unknown", "rebound", "plain_param", "unresolvable",
                                    "shadows_module_var", "Registry.untyped"])
def test_an_unknown_type_is_never_inferred(graph, symbol):
    assert not {c for c in calls(graph, symbol) if c[2] == "inferred"}, calls(graph, symbol)


def test_impact_of_the_method_reaches_the_test(graph):
    res = graph.impact("pkg/app.py::App.run", depth=3)
    assert "tests/test_use.py" in {t["path"] for t in res["tests"]}, res["tests"]
    via = next(t["via"] for t in res["tests"] if t["path"] == "tests/test_use.py")
    assert [v["how"] for v in via] == ["resolved", "inferred"], via


def test_editing_a_return_annotation_elsewhere_recomputes_its_users(tree):
    """`a = make(); a.run()` in use.py depends on app.py's `-> App`, which is no def:
    an edit that only changes it must still move the inferred edge."""
    from graph_helpers import parse_file, repo_facts

    from indexd.graph import Graph

    repo = tree("incr", FILES)
    g = Graph().build(repo_facts("r", repo))
    assert RUN in calls(g, "returned")
    (repo / "pkg/app.py").write_text(FILES["pkg/app.py"].replace("def make() -> App:",
                                                                 "def make() -> Other:"))
    g.update_file(parse_file("r", repo, "pkg/app.py"))
    assert ("pkg/app.py", "Other.run", "inferred") in calls(g, "returned")


def _big_class(n: int) -> str:
    """One class, n methods, each binding its own self attribute and calling it."""
    lines = ["from pkg.app import App\n\n\nclass Big:\n"]
    for i in range(n):
        lines.append(f"    def m{i}(self):\n        self.a{i} = App()\n        return self.a{i}.run()\n\n")
    return "".join(lines)


def test_typing_self_attributes_scales_linearly(tree):
    """4x the methods (n/2 -> 2n) must cost < 8x the CPU: linear 4x, quadratic 16x (a
    lookup of each receiver through all of the class's bindings was quadratic)."""
    from graph_helpers import parse_file
    from testlib import cost_ratio

    from indexd.graph import Graph

    graphs = {}
    for n in (1000, 4000):
        repo = tree(f"big{n}", dict(FILES, **{"pkg/big.py": _big_class(n)}))
        graphs[n] = (Graph().build([parse_file("r", repo, p) for p in FILES]),
                     parse_file("r", repo, "pkg/big.py"))
    for g, facts in graphs.values():     # one warm-up, and the edges are really there
        g.update_file(facts)
        assert RUN in {(e.dst_path, e.dst_symbol, e.how) for e in g.edges(["calls"])
                       if e.src_path == "pkg/big.py"}
    ratio = cost_ratio(lambda: graphs[1000][0].update_file(graphs[1000][1]),
                       lambda: graphs[4000][0].update_file(graphs[4000][1]), 8)
    assert ratio < 8, f"4x the methods cost {ratio:.1f}x the CPU"
