"""Python import resolution: relative, submodules, src layout, multi-repo."""

from __future__ import annotations

from graph_helpers import build, paths


def importers(graph, target):
    res = graph.impact(target, depth=1, kinds=["imports"], limit=None)
    return paths(res["affected"]) | paths(res["tests"])


def test_relative_and_submodule_imports(tree):
    repo = tree("proj", {
        "pkg/__init__.py": "from .core import Engine\n",
        "pkg/core.py": "class Engine:\n    pass\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/leaf.py": "from ..core import Engine\nfrom .. import core\nfrom . import sibling\n",
        "pkg/sub/sibling.py": "from .... import beyond_the_root\n",
        "app.py": "from pkg import core, Engine\nfrom pkg.sub import leaf\nimport pkg.sub.sibling\n",
    })
    g = build("r", repo)
    assert importers(g, "pkg/core.py") == {"pkg/__init__.py", "pkg/sub/leaf.py", "app.py"}
    # `from pkg import Engine` (a name) -> the package itself.
    assert importers(g, "pkg/__init__.py") == {"app.py"}
    # `from . import sibling` is the submodule, not the package.
    assert importers(g, "pkg/sub/sibling.py") == {"pkg/sub/leaf.py", "app.py"}
    assert importers(g, "pkg/sub/__init__.py") == set()
    assert importers(g, "pkg/sub/leaf.py") == {"app.py"}
    # The imported name points at the definition.
    refs = g.refs("pkg/core.py::Engine")["refs"]
    assert {(r["path"], r["how"]) for r in refs} >= {("pkg/sub/leaf.py", "resolved"),
                                                     ("app.py", "resolved")}


def test_src_layout_and_unresolved_external(tree):
    repo = tree("proj", {
        "src/mylib/__init__.py": "",
        "src/mylib/api.py": "import requests\nfrom mylib import util\n",
        "src/mylib/util.py": "def helper():\n    pass\n",
        "tests/test_api.py": "from mylib.api import *\nimport mylib.util\n",
    })
    g = build("r", repo)
    assert importers(g, "src/mylib/util.py") == {"src/mylib/api.py", "tests/test_api.py"}
    assert importers(g, "src/mylib/api.py") == {"tests/test_api.py"}
    deps = g.deps("src/mylib/api.py")
    assert {d["path"] for d in deps["deps"]} >= {"src/mylib/util.py"}
    assert [x["name"] for x in deps["external"]] == ["requests"]


def test_multi_repo_realm(tree):
    lib = tree("shared", {
        "shared_pkg/__init__.py": "",
        "shared_pkg/money.py": "def convert_currency(amount):\n    return amount\n",
    })
    app = tree("webapp", {
        "webapp/__init__.py": "",
        "webapp/views.py": ("from shared_pkg.money import convert_currency\n\n"
                            "def price_view():\n    return convert_currency(3)\n"),
        "tests/test_views.py": ("from webapp.views import price_view\n\n"
                                "def test_price():\n    assert price_view()\n"),
        "docs/guide.md": "# Prices\nPrices use `convert_currency` from [money](../../shared/shared_pkg/money.py).\n",
    })
    g = build("r", lib, app)
    res = g.impact("shared/shared_pkg/money.py", depth=3)
    assert res["complete"] is True
    affected = {(i["repo"].rsplit("/", 1)[-1], i["path"], i["symbol"]) for i in res["affected"]}
    assert ("webapp", "webapp/views.py", None) in affected
    assert ("webapp", "webapp/views.py", "price_view") in affected
    assert {i["path"] for i in res["tests"]} == {"tests/test_views.py"}
    assert {i["path"] for i in res["docs"]} == {"docs/guide.md"}
    hows = {v["how"] for i in res["docs"] for v in i["via"]}
    assert "link" in hows
    # Symbol-level target: only users of that function.
    sym = g.impact("shared/shared_pkg/money.py::convert_currency", depth=1)
    assert {(i["path"], i["symbol"]) for i in sym["affected"]} == {
        ("webapp/views.py", "price_view"), ("webapp/views.py", None)}
    for item in sym["affected"]:
        assert item["via"][0]["to"] == "shared/shared_pkg/money.py::convert_currency"


def test_import_of_a_submodule_binds_the_top_package(tree):
    """`import click._termui_impl` binds `click` too (Python runs and binds the package),
    so `click.progressbar(...)` is the package's re-exported function: click's
    test_termui.py reaches `progressbar` (and through it ProgressBar) only that way."""
    from graph_helpers import calls_from

    repo = tree("proj", {
        "src/lib/__init__.py": "from .bar import progressbar as progressbar\n",
        "src/lib/bar.py": "def progressbar(n):\n    return n\n",
        "src/lib/impl.py": "X = 1\n",
        "tests/test_bar.py": ("import lib.impl\n\n\n"
                              "def test_bar():\n    lib.progressbar(3)\n    lib.impl.X\n"),
    })
    g = build("r", repo)
    assert ("src/lib/bar.py", "progressbar", "resolved") in calls_from(g, "tests/test_bar.py",
                                                                       "test_bar")


def test_a_symbols_external_dependencies_are_the_imports_it_uses(tree):
    """`deps utils.py::echo` listed every import of utils.py (os, re, sys, functools...)
    as echo's external dependencies; a symbol's are the ones its own code names."""
    repo = tree("proj", {"pkg/__init__.py": "", "pkg/util.py": (
        "import os\nimport typing as t\nimport json\nfrom functools import update_wrapper\n"
        "from gettext import gettext as _\nimport xml.dom.minidom\n\n\n"
        "def size(path: t.Optional[str]) -> int:\n    return os.path.getsize(path)\n\n\n"
        "class Box:\n    def dump(self):\n        import csv\n        return json.dumps(_('x'))\n\n"
        "    def wrap(self, f):\n        return update_wrapper(f, self)\n\n\n"
        "def tree(text):\n    return xml.dom.minidom.parseString(text)\n\n\n"
        "def nothing():\n    return 1\n")})
    g = build("r", repo)

    def external(target):
        return sorted(x["name"] for x in g.deps(target)["external"])

    assert external("pkg/util.py") == sorted(["os", "typing", "json", "functools:update_wrapper",
                                              "gettext:gettext", "xml.dom.minidom", "csv"])
    assert external("pkg/util.py::size") == ["os", "typing"]
    assert external("pkg/util.py::Box") == ["csv", "functools:update_wrapper", "gettext:gettext",
                                            "json"]
    assert external("pkg/util.py::Box.dump") == ["csv", "gettext:gettext", "json"]
    assert external("pkg/util.py::tree") == ["xml.dom.minidom"]
    assert external("pkg/util.py::nothing") == []
