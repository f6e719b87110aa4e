"""Issue 11 part 2: a constructor is reached through its class. Changing
`Base.__init__` breaks every `App(...)` of a subclass: on a real framework 21 failing
test files had no predicted test at all, because nothing calls `__init__` by name."""

from __future__ import annotations

from graph_helpers import build

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Base:\n    def __init__(self, x):\n        self.x = x\n\n"
                   "    def other(self):\n        return 1\n",
    "pkg/app.py": "from pkg.base import Base\n\n\nclass App(Base):\n    pass\n",
    "tests/test_app.py": "from pkg.app import App\n\n\ndef test_app():\n    assert App(1).x == 1\n",
    "tests/test_unrelated.py": "def test_nothing():\n    assert True\n",
}


def test_changing_a_base_constructor_reaches_tests_that_build_a_subclass(tree):
    g = build("r", tree("ctor", FILES))
    res = g.impact("pkg/base.py::Base.__init__", depth=3)
    tests = {t["path"] for t in res["tests"]}
    assert "tests/test_app.py" in tests, res["tests"]
    assert "tests/test_unrelated.py" not in tests


def test_an_ordinary_method_is_not_widened_to_its_class(tree):
    g = build("r", tree("ctor", FILES))
    res = g.impact("pkg/base.py::Base.other", depth=3)
    assert "tests/test_app.py" not in {t["path"] for t in res["tests"]}


INHERIT = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Base:\n    def helper(self):\n        return 1\n",
    "pkg/mixins.py": "class Mixin:\n    def mixed(self):\n        return 2\n",
    "pkg/app.py": ("from pkg.base import Base\nfrom pkg import mixins\n\n\n"
                   "class App(Base, mixins.Mixin):\n    def run(self):\n"
                   "        return self.helper() + self.mixed()\n\n\n"
                   "class Sub(App):\n    def go(self):\n        return self.helper()\n"),
    "tests/test_app.py": "from pkg.app import App\n\n\ndef test_run():\n    assert App().run() == 3\n",
}


def test_self_method_found_through_the_bases(tree):
    g = build("r", tree("inherit", INHERIT))
    calls = {(e.src_symbol, e.dst_path, e.dst_symbol, e.how) for e in g.edges(["calls"])
             if e.src_path == "pkg/app.py"}
    assert ("App.run", "pkg/base.py", "Base.helper", "inferred") in calls, calls
    assert ("App.run", "pkg/mixins.py", "Mixin.mixed", "inferred") in calls, calls
    assert ("Sub.go", "pkg/base.py", "Base.helper", "inferred") in calls, calls   # two levels
    res = g.impact("pkg/base.py::Base.helper", depth=3)
    assert "tests/test_app.py" in {t["path"] for t in res["tests"]}
