"""Issue 11: a base written with a subscript (``class Box(Base[T])``,
``class Box(mod.Base[int])``, ``class X(Generic[T], Base)``) is the class before the
``[...]``: methods looked up along the bases (MRO) find it, and ``self.m()`` in the base
reaches the subclass's override. Edges are labelled as for a plain base (``inferred``
for a receiver typed by graph/types.py or ``self``); a subscript of a class outside the
realm (``t.IO[str]``) gives no base, and no name match turns into a trusted edge."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "import typing as t\n\nT = t.TypeVar('T')\n\n\n"
        "class Base(t.Generic[T]):\n"
        "    def get(self):\n        return self.hook()\n\n"
        "    def hook(self):\n        pass\n\n\n"
        "class Mixin:\n    def mixed(self):\n        pass\n"),
    "pkg/kids.py": (
        "import typing as t\nfrom typing import Generic\n\n"
        "from pkg import base\nfrom pkg.base import Base, Mixin, T\n\n\n"
        "class Plain(Base):\n    pass\n\n\n"
        "class Box(Base[int]):\n    def hook(self):\n        pass\n\n\n"
        "class Dotted(base.Base[str]):\n    pass\n\n\n"
        "class Both(Generic[T], Mixin):\n    pass\n\n\n"
        "class Nested(t.Generic[T], base.Mixin):\n    pass\n\n\n"
        "class Lazy(t.IO[str]):\n    def read(self):\n        return self.get()\n"),
    "pkg/use.py": (
        "from pkg.kids import Both, Box, Dotted, Lazy, Nested, Plain\n\n\n"
        "def plain():\n    return Plain().get()\n\n\n"
        "def box():\n    return Box().get()\n\n\n"
        "def dotted():\n    return Dotted().get()\n\n\n"
        "def both():\n    return Both().mixed()\n\n\n"
        "def nested():\n    return Nested().mixed()\n\n\n"
        "def lazy():\n    return Lazy().get()\n"),
}
BASE, USE = "pkg/base.py", "pkg/use.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("subbases"), FILES))


def to_base(graph, path, symbol) -> set[tuple]:
    return {(s, how) for p, s, how in calls_from(graph, path, symbol) if p == BASE}


@pytest.mark.parametrize("symbol, want", [
    ("plain", "Base.get"),      # the unsubscripted base: the label to match
    ("box", "Base.get"),
    ("dotted", "Base.get"),
    ("both", "Mixin.mixed"),
    ("nested", "Mixin.mixed"),
])
def test_a_method_of_a_subscripted_base_is_found(graph, symbol, want):
    assert to_base(graph, USE, symbol) == {(want, "inferred")}


def test_self_call_in_the_base_reaches_the_override_of_a_subscripted_subclass(graph):
    got = calls_from(graph, BASE, "Base.get")
    assert ("pkg/kids.py", "Box.hook", "inferred") in got


def test_a_subscripted_base_outside_the_realm_gives_no_trusted_edge(graph):
    """``Lazy().get()`` stays what it was: at most a name match, never inferred."""
    trusted = {"inferred", "resolved"}
    assert not {s for s, how in to_base(graph, USE, "lazy") if how in trusted}
    assert not {s for p, s, how in calls_from(graph, "pkg/kids.py", "Lazy.read")
                if p == BASE and how in trusted}


# The stdlib's realm holds typing.py, where `class TextIO(IO[str])` now finds IO: an
# annotation `fp: TextIO` would reach typing's stubs (`IO.read`), which never run on
# the real file (an io.TextIOWrapper). typing's classes describe a value; they type none.
TYPING = {
    "typing.py": (
        "class Generic:\n    pass\n\n\n"
        "class IO(Generic[str]):\n    def read(self):\n        pass\n\n"
        "    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *a):\n        pass\n\n\n"
        "class TextIO(IO[str]):\n    def __enter__(self) -> 'TextIO':\n        pass\n"),
    "pkg/__init__.py": "",
    "pkg/files.py": (
        "from typing import IO, TextIO\n\n\n"
        "def opened(name) -> TextIO:\n    return open(name)\n\n\n"
        "def load(fp: TextIO):\n    return fp.read()\n\n\n"
        "def load_io(fp: IO[str]):\n    return fp.read()\n\n\n"
        "def read_text(name):\n    with opened(name) as fp:\n        return fp.read()\n"),
}


@pytest.fixture(scope="module")
def typing_graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("typingstubs"), TYPING))


@pytest.mark.parametrize("symbol", ["load", "load_io", "read_text"])
def test_a_typing_annotation_reaches_no_typing_stub(typing_graph, symbol):
    got = calls_from(typing_graph, "pkg/files.py", symbol)
    assert not {s for p, s, how in got if p == "typing.py" and how != "name_match"}, got
