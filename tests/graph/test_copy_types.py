"""Instance types: ``y = copy.copy(x)`` / ``copy.deepcopy(x)`` holds what ``x`` holds.

attrs' ``Attribute.evolve`` does ``new = copy.copy(self); new._setattrs(...)``: with no
type for ``new`` the call was no edge at all (the file's own method), and
``Attribute._setattrs``, which runs at import time, looked untested."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from

FILES = {
    "pkg/__init__.py": "",
    "pkg/box.py": ("import copy\nimport copy as cp\nfrom copy import deepcopy\n"
                   "from copy import copy as shallow\n\n\n"
                   "class Box:\n"
                   "    def evolve(self):\n        new = copy.copy(self)\n"
                   "        new._fill()\n        return new\n\n"
                   "    def deep(self):\n        other = deepcopy(self)\n"
                   "        return other._fill()\n\n"
                   "    def _fill(self):\n        return 1\n\n\n"
                   "def clone(b: Box):\n    c = cp.copy(b)\n    return c._fill()\n\n\n"
                   "def shallow_clone(b: Box):\n    c = shallow(b)\n    return c._fill()\n\n\n"
                   # two names passed: which is copied is not in the facts, no answer
                   "def memo_clone(b: Box, memo):\n    c = copy.deepcopy(b, memo)\n"
                   "    return c._fill()\n"),
    # a `copy` that is not the stdlib's: the rule does not apply
    "pkg/other.py": ("from pkg import fake as copy\nfrom pkg.box import Box\n\n\n"
                     "def clone(b: Box):\n    c = copy.copy(b)\n    return c._fill()\n"),
    "pkg/fake.py": "def copy(x):\n    return 1\n",
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("copy"), FILES))


@pytest.mark.parametrize("caller", ["Box.evolve", "Box.deep", "clone", "shallow_clone"])
def test_a_copy_holds_the_class_of_what_it_copies(graph, caller):
    assert ("pkg/box.py", "Box._fill", "inferred") in calls_from(graph, "pkg/box.py", caller)


def test_two_names_passed_give_no_type(graph):
    got = calls_from(graph, "pkg/box.py", "memo_clone")
    assert ("pkg/box.py", "Box._fill", "inferred") not in got, got


def test_a_copy_function_that_is_not_the_stdlibs_gives_no_type(graph):
    got = calls_from(graph, "pkg/other.py", "clone")
    assert not {c for c in got if c[1] == "Box._fill" and c[2] != "name_match"}, got
