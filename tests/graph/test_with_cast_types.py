"""Issue 11 part 1: receiver types click's tests go through and the rules missed.

- ``with progressbar(...) as bar``: ``bar`` holds what the class's ``__enter__``
  returns (its ``-> "ProgressBar[V]"``; ``return self`` unannotated: the class);
- generic and quoted annotations name their class: ``"ProgressBar[V]"``,
  ``t.Optional["X"]``, ``X[int]``, ``Self`` (the enclosing class);
- ``t.cast(T, expr)``: T when it names a class of the realm, else what ``expr`` is
  (click's ``open_file`` returns ``t.cast("t.IO[t.Any]", LazyFile(...))``).

All ``inferred``; a with on a class lacking ``__exit__`` types nothing."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/bar.py": (
        "import typing as t\n\nimport typing_extensions as te\n\nV = t.TypeVar('V')\n\n\n"
        "class Bar(t.Generic[V]):\n"
        "    def __enter__(self) -> 'Bar[V]':\n        return self\n\n"
        "    def __exit__(self, *a):\n        self.finish()\n\n"
        "    def __iter__(self):\n        return iter(())\n\n"
        "    def update(self, n):\n        pass\n\n"
        "    def finish(self):\n        pass\n\n\n"
        "class Plain:\n    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *a):\n        pass\n\n"
        "    def step(self):\n        pass\n\n\n"
        "class Selfish:\n    def __enter__(self) -> 'te.Self':\n        return self\n\n"
        "    def __exit__(self, *a):\n        pass\n\n"
        "    def step(self):\n        pass\n\n"
        "    @classmethod\n    def make(cls) -> t.Self:\n        return cls()\n\n\n"
        "class Conn:\n    def send(self):\n        pass\n\n\n"
        "class Pool:\n    def __enter__(self):\n        return Conn()\n\n"
        "    def __exit__(self, *a):\n        pass\n\n\n"
        "class Typo:\n    def __enter__(self):\n        return self\n\n"
        "    def __exittt__(self, *a):\n        pass\n\n"
        "    def step(self):\n        pass\n\n\n"
        "class Lazy:\n    def read(self):\n        pass\n\n\n"
        "def progressbar(n) -> 'Bar[V]':\n    return Bar()\n\n\n"
        "def numbered() -> Bar[int]:\n    return Bar()\n\n\n"
        "def maybe() -> t.Optional['Plain']:\n    return None\n\n\n"
        "def maybe_bar() -> t.Optional[Bar[int]]:\n    return None\n\n\n"
        "def open_lazy(name) -> t.IO[t.Any]:\n"
        "    return t.cast('t.IO[t.Any]', Lazy())\n\n\n"
        "def as_plain(x):\n    return t.cast('Plain', x)\n\n\n"
        "def either_file(lazy) -> t.IO[t.Any]:\n    if lazy:\n        return Lazy()\n"
        "    return open(lazy)\n"),
    # the stdlib's collections.abc is in its realm: `-> Iterator[X]` is no Iterator instance
    "pkg/abcs.py": ("class Iterator:\n    def __iter__(self):\n        return self\n\n"
                    "    def __next__(self):\n        raise StopIteration\n\n\n"
                    "def items() -> 'Iterator[int]':\n    return iter(())\n"),
    "pkg/use.py": (
        "import typing\nimport typing as t\nfrom typing import cast\n\n"
        "from pkg.bar import (Lazy, Plain, Pool, Selfish, Typo, as_plain, either_file,\n"
        "                     maybe, maybe_bar, numbered, open_lazy, progressbar)\n\n\n"
        "def with_bar():\n    with progressbar(3) as bar:\n        bar.update(1)\n"
        "        for x in bar:\n            pass\n\n\n"
        "def with_plain():\n    with Plain() as p:\n        p.step()\n\n\n"
        "def with_self():\n    with Selfish() as s:\n        s.step()\n\n\n"
        "def made_self():\n    s = Selfish.make()\n    s.step()\n\n\n"
        "def with_other():\n    with Pool() as c:\n        c.send()\n\n\n"
        "def with_typo():\n    with Typo() as h:\n        h.step()\n\n\n"
        "def generic():\n    a = numbered()\n    a.update(1)\n    b = maybe()\n    b.step()\n\n\n"
        "def generic_in_optional():\n    c = maybe_bar()\n    c.update(2)\n\n\n"
        "def cast_returned():\n    f = open_lazy('x')\n    f.read()\n\n\n"
        "def cast_to_class(x):\n    p = as_plain(x)\n    p.step()\n\n\n"
        "def cast_here(x):\n    g = t.cast('t.IO[t.Any]', Lazy())\n    g.read()\n"
        "    h = typing.cast(Plain, x)\n    h.step()\n\n\n"
        "def cast_bare(x):\n    q = cast('Lazy', x)\n    q.read()\n\n\n"
        "def not_typing_cast(view, y):\n    p = view.cast('Plain', y)\n    p.step()\n\n\n"
        "def returns_disagree():\n    f = either_file(1)\n    f.read()\n\n\n"
        "def abstract_iterator():\n    from pkg.abcs import items\n\n"
        "    for x in items():\n        pass\n"),
}
BAR, USE = "pkg/bar.py", "pkg/use.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("withcast"), FILES))


def inferred(graph, symbol) -> set[str]:
    return {s for p, s, how in calls_from(graph, USE, symbol) if p == BAR and how == "inferred"}


def test_with_as_holds_what_enter_returns_through_a_generic_annotation(graph):
    """click's `with click.progressbar(...) as bar: for x in bar` -> ProgressBar.__iter__,
    and the with itself reaches __enter__/__exit__ through `-> "ProgressBar[V]"`."""
    assert {"Bar.update", "Bar.__iter__", "Bar.__enter__", "Bar.__exit__"} \
        <= inferred(graph, "with_bar")


@pytest.mark.parametrize("symbol, want", [
    ("with_plain", "Plain.step"),        # `return self`, unannotated: the class itself
    ("with_self", "Selfish.step"),       # `-> "te.Self"`
    ("made_self", "Selfish.step"),       # a classmethod's `-> t.Self`
    ("with_other", "Conn.send"),         # __enter__ returns another class
])
def test_with_as_types_from_enter(graph, symbol, want):
    assert want in inferred(graph, symbol), calls_from(graph, USE, symbol)


def test_with_as_on_a_class_lacking_exit_types_nothing(graph):
    assert "Typo.step" not in inferred(graph, "with_typo")


def test_subscripted_and_quoted_annotations_name_their_class(graph):
    assert {"Bar.update", "Plain.step"} <= inferred(graph, "generic")    # -> Bar[int]
    assert "Bar.update" in inferred(graph, "generic_in_optional")    # t.Optional[Bar[int]]


def test_a_subscripted_abstract_container_names_no_class(graph):
    """`-> Iterator[int]`, `Sequence[X]`, `Callable[..., X]`: the value is a generator, a
    list, a function, not an instance of that class."""
    assert not {s for p, s, _ in calls_from(graph, USE, "abstract_iterator")
                if p == "pkg/abcs.py" and s.startswith("Iterator.")}


@pytest.mark.parametrize("symbol, want", [
    ("cast_returned", {"Lazy.read"}),    # -> t.IO[t.Any] (outside the realm): the body's cast
    ("cast_to_class", {"Plain.step"}),   # cast("Plain", x): the class named
    ("cast_here", {"Lazy.read", "Plain.step"}),
    ("cast_bare", {"Lazy.read"}),        # from typing import cast
])
def test_cast_gives_the_class_named_else_the_value(graph, symbol, want):
    assert want <= inferred(graph, symbol), calls_from(graph, USE, symbol)


def test_a_cast_method_of_another_object_is_no_typing_cast(graph):
    """`view.cast('B', shape)` (memoryview's) says nothing of a class B."""
    assert "Plain.step" not in inferred(graph, "not_typing_cast")


def test_returns_that_disagree_behind_an_outside_annotation_give_nothing(graph):
    assert "Lazy.read" not in inferred(graph, "returns_disagree")
