"""Issue 11 part 2: implicit dunder calls on an instance whose class is known
(graph/types.py). click's tests break through `with f:` (LazyFile.__exit__ ->
close), `for x in bar` (ProgressBar.__iter__), `lf.name` on a class without
`name` but with `__getattr__`; attrs' validators run as `v(inst, attr, value)`
(__call__) and show as `repr(v)` (__repr__). Each gets an `inferred` calls edge;
a receiver of unknown class, or a member the class has, gets none."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/lazy.py": (
        "class Lazy:\n"
        "    mode = 'r'\n\n"
        "    def __init__(self, name):\n        self.name = name\n\n"
        "    def __getattr__(self, attr):\n        return attr\n\n"
        "    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *a):\n        self.close()\n\n"
        "    def close(self):\n        pass\n\n"
        "    def __iter__(self):\n        return iter(())\n\n"
        "    def __next__(self):\n        raise StopIteration\n\n"
        "    def __call__(self, x):\n        return x\n\n"
        "    def __repr__(self):\n        return 'Lazy'\n\n\n"
        "def make(name) -> Lazy:\n    return Lazy(name)\n"),
    "pkg/use.py": (
        "from pkg.lazy import Lazy, make\n\n\n"
        "def with_as():\n    with Lazy('a') as f:\n        return f\n\n\n"
        "def with_name(f: Lazy):\n    with f:\n        pass\n\n\n"
        "def loop():\n    bar = make('b')\n    for x in bar:\n        print(x)\n\n\n"
        "def call_it():\n    v = Lazy('c')\n    return v(1), repr(v)\n\n\n"
        "def attrs():\n    lf = Lazy('d')\n    return lf.missing, lf.mode, lf.name, lf.close()\n\n\n"
        "def unknown(g):\n    with g:\n        for x in g:\n            g(x)\n    return g.missing\n\n\n"
        "def stores():\n    lf = Lazy('e')\n    lf.missing = 1\n    lf.other += 1\n"),
}
LAZY = "pkg/lazy.py"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("dunder"), FILES))


def calls(graph, symbol):
    return {(e.dst_symbol, e.how) for e in graph.edges(["calls"])
            if e.src_path == "pkg/use.py" and e.src_symbol == symbol and e.dst_path == LAZY}


def test_with_reaches_enter_and_exit(graph):
    for fn in ("with_as", "with_name"):
        assert {("Lazy.__enter__", "inferred"), ("Lazy.__exit__", "inferred")} <= calls(graph, fn)


def test_for_reaches_iter_and_next(graph):
    assert {("Lazy.__iter__", "inferred"), ("Lazy.__next__", "inferred")} <= calls(graph, "loop")


def test_calling_an_instance_and_repr_reach_call_and_repr(graph):
    assert {("Lazy.__call__", "inferred"), ("Lazy.__repr__", "inferred")} <= calls(graph,
                                                                                  "call_it")


def test_a_missing_attribute_reaches_getattr_only_when_missing(graph):
    got = calls(graph, "attrs")
    assert ("Lazy.__getattr__", "inferred") in got      # lf.missing: no such member
    assert ("Lazy.close", "inferred") in got
    # lf.mode is a class attribute, lf.name set in __init__, lf.close a method:
    # the one __getattr__ edge is lf.missing's
    lines = [e.line for e in graph.edges(["calls"]) if e.src_symbol == "attrs"
             and e.dst_symbol == "Lazy.__getattr__"]
    assert lines == [27]


def test_assigning_a_missing_attribute_is_no_getattr(graph):
    """`lf.missing = 1` runs __setattr__, never __getattr__ (stdlib test_gc's `a.attr =
    b` on a class with __getattr__); `lf.other += 1` reads it first."""
    lines = [e.line for e in graph.edges(["calls"]) if e.src_symbol == "stores"
             and e.dst_symbol == "Lazy.__getattr__"]
    assert lines == [40]      # the `+=`, not the plain store above it


def test_a_receiver_of_unknown_class_gets_no_dunder_edge(graph):
    assert not {s for s, _ in calls(graph, "unknown") if s.startswith("Lazy.__")}


# A `with` needs both methods: Python looks `__enter__` and `__exit__` up on the class
# before entering and raises if either is missing (stdlib test_contextlib's
# `test_typo_exit`: `__enter__` and a misspelled `__exit__`). `async with` runs
# `__aenter__`/`__aexit__`, never `__enter__`/`__exit__`.
HALF = {
    "pkg/half.py": (
        "class Typo:\n    def __enter__(self):\n        return self\n\n"
        "    def __exittt__(self, *a):\n        pass\n\n\n"
        "class Base:\n    def __enter__(self):\n        return self\n\n\n"
        "class Both(Base):\n    def __exit__(self, *a):\n        pass\n\n\n"
        "class Async:\n    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *a):\n        pass\n\n"
        "    async def __aenter__(self):\n        return self\n\n"
        "    async def __aexit__(self, *a):\n        pass\n\n\n"
        "def typo():\n    with Typo():\n        pass\n\n\n"
        "def inherited():\n    with Both() as b:\n        pass\n\n\n"
        "async def async_with():\n    async with Async() as a:\n        pass\n\n\n"
        # test_typo_exit's own shape: the class is defined in the function, and a
        # module-level class of that name has both methods
        "class mycontext:\n    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *a):\n        pass\n\n\n"
        "def typo_nested():\n    class mycontext:\n        def __enter__(self):\n"
        "            return self\n\n        def __uxit__(self, *a):\n            pass\n\n"
        "    with mycontext():\n        pass\n"),
}


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("half"), {**FILES, **HALF}))


def half_calls(graph, symbol):
    return {e.dst_symbol for e in graph.edges(["calls"])
            if e.src_path == "pkg/half.py" and e.src_symbol == symbol}


def test_with_on_a_class_lacking_exit_reaches_neither(half):
    assert not {s for s in half_calls(half, "typo") if s.startswith("Typo.__")}


def test_with_on_a_class_of_the_function_is_not_the_module_class_of_that_name(half):
    assert not {s for s in half_calls(half, "typo_nested") if s.startswith("mycontext.__")}


def test_with_finds_enter_and_exit_along_the_bases(half):
    assert {"Base.__enter__", "Both.__exit__"} <= half_calls(half, "inherited")


def test_async_with_reaches_aenter_and_aexit_only(half):
    got = {s for s in half_calls(half, "async_with") if s.startswith("Async.__")}
    assert got == {"Async.__aenter__", "Async.__aexit__"}
