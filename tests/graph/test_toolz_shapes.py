"""Shapes of toolz 1.0.0 (bench/impact_vs_tests.py, measured once before any change was
made for it) where a trusted chain from a test to what it breaks was cut:

- ``toolz/curried/__init__.py`` binds ``take = toolz.curry(toolz.take)`` at module level,
  and test_curried.py does ``from toolz.curried import take`` then ``take(2)(...)``:
  calling the imported value runs ``curry.__call__``, but the importing file had no
  binding of ``take`` to type, so the call was a name match to ``toolz.take`` and
  ``curry.__call__`` (and all it calls: ``is_partial_args``, the signature checks) was
  reached from no test of the curried namespace;
- the same value read through its module, ``curried.take(3)``, and a method of it,
  ``take.bind()``;
- ``toolz.curry`` itself: ``toolz/__init__.py`` re-exports it with ``from .functoolz
  import *``, which the resolver did not follow, so ``take = toolz.curry(...)`` was a
  name match and ``take`` had no class.
"""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, trusted_tests, write_tree

FILES = {
    "pkg/__init__.py": "from .core import *\n",
    "pkg/core.py": (
        "class Curry:\n"
        "    def __init__(self, f):\n        self.f = f\n\n"
        "    def __call__(self, *a):\n        return self.f(*a)\n\n"
        "    def bind(self):\n        return 1\n\n\n"
        "def take(n):\n    return n\n\n\n"
        "def _hidden():\n    return 0\n\n\n"
        "def make():\n    return object()\n"),
    "pkg/curried.py": (
        "import pkg\nfrom pkg import core\n\n"
        "take = pkg.Curry(core.take)\n"
        "hidden = pkg._hidden()\n"
        "other = core.make()\n"),
    "tests/test_curried.py": (
        "from pkg.curried import take, other\n"
        "from pkg import curried\n\n\n"
        "def test_take():\n    assert take(2)\n\n\n"
        "def test_bind():\n    assert take.bind()\n\n\n"
        "def test_through_the_module():\n    assert curried.take(3)\n\n\n"
        "def test_unknown():\n    assert other(1)\n"),
}
CORE, TEST = "pkg/core.py", "tests/test_curried.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("toolz_shapes"), FILES))


def _inferred(graph, src: str) -> set[str]:
    return {s for p, s, how in calls_from(graph, TEST, src) if p == CORE and how == "inferred"}


def test_a_name_a_package_star_imports_resolves_to_its_module(graph):
    at_import = calls_from(graph, "pkg/curried.py", None)
    assert (CORE, "Curry", "resolved") in at_import
    # `import *` leaves a private name out: no resolved edge to it
    assert (CORE, "_hidden", "resolved") not in at_import


def test_calling_an_imported_module_level_instance_runs_its_dunder_call(graph):
    assert "Curry.__call__" in _inferred(graph, "test_take")


def test_a_method_of_an_imported_instance_is_its_class_method(graph):
    assert "Curry.bind" in _inferred(graph, "test_bind")


def test_the_instance_read_through_its_module_runs_its_dunder_call(graph):
    assert "Curry.__call__" in _inferred(graph, "test_through_the_module")


def test_an_imported_value_of_unknown_class_reaches_nothing_inferred(graph):
    assert _inferred(graph, "test_unknown") == set()


def test_breaking_the_dunder_call_names_the_test_of_the_curried_value(graph):
    trusted = trusted_tests(graph, f"{CORE}::Curry.__call__")
    assert {(TEST, "test_take"), (TEST, "test_through_the_module")} <= trusted


# toolz's test_serialization.py: `f = curry(map)(str)` calls the curry instance at once,
# running curry.__call__ (and, through its TypeError path, is_partial_args): no reference
# said so, and a broken `_is_partial_args` failed that file with no chain to it.
CALLED_AT_ONCE = {
    "pkg/__init__.py": "from .core import *\n",
    "pkg/core.py": FILES["pkg/core.py"],
    "tests/test_serialization.py": (
        "from pkg import *\nfrom pkg.core import make\n\n\n"
        "def test_curry():\n    f = Curry(map)(str)\n    assert f\n\n\n"
        "def test_unknown():\n    assert make()(1)\n"),
}


def test_calling_what_a_class_call_returns_runs_its_call_method(tmp_path):
    graph = build("r", write_tree(tmp_path, CALLED_AT_ONCE))
    got = calls_from(graph, "tests/test_serialization.py", "test_curry")
    # `from toolz import *` of a package that star-imports its module: the class itself
    assert (CORE, "Curry", "resolved") in got, got
    assert (CORE, "Curry.__call__", "inferred") in got, got
    # a function's result is of no known class: no __call__ guessed
    assert not {s for _p, s, _h in calls_from(graph, "tests/test_serialization.py",
                                              "test_unknown") if s.endswith("__call__")}
