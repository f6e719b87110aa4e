"""Subscripts and `in` are dunder calls too (graph/dunder.py): `r[k]` runs
`__getitem__`, `r[k] = v` `__setitem__` (and no `__getitem__`), `r[k] += v` both,
`del r[k]` `__delitem__`, `k in r` `__contains__`. cachetools' caches are used so, and
none of it was an edge: `Cache.__getitem__` was reached only by explicit calls. A
receiver of unknown class in the file defining the dunder is an unresolved reference
instead (once per enclosing symbol), which `tests affected` follows as a guess."""

from __future__ import annotations

import pytest
from graph_helpers import build, write_tree

BOX = ("class Box:\n"
       "    def __getitem__(self, k):\n        return k\n\n"
       "    def __setitem__(self, k, v):\n        pass\n\n"
       "    def __delitem__(self, k):\n        pass\n\n"
       "    def __contains__(self, k):\n        return True\n\n\n"
       "def untyped(box):\n    box['a'] = 1\n    return box['b'], 'c' in box\n")
USE = ("from pkg.box import Box\n\n\n"
       "def read():\n    b = Box()\n    return b['x']\n\n\n"
       "def write():\n    b = Box()\n    b['x'] = 1\n\n\n"
       "def bump():\n    b = Box()\n    b['x'] += 1\n\n\n"
       "def drop():\n    b = Box()\n    del b['x'], b['y']\n\n\n"
       "def has(b: Box):\n    return 'x' in b and 'y' not in b\n\n\n"
       "def unknown(b):\n    return b['x']\n")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("subscripts"),
                                 {"pkg/__init__.py": "", "pkg/box.py": BOX, "pkg/use.py": USE}))


def calls(graph, symbol):
    return {e.dst_symbol for e in graph.edges(["calls"]) if e.src_path == "pkg/use.py"
            and e.src_symbol == symbol and e.dst_path == "pkg/box.py" and e.how == "inferred"}


@pytest.mark.parametrize("fn, dunders", [
    ("read", {"Box.__getitem__"}),
    ("write", {"Box.__setitem__"}),
    ("bump", {"Box.__getitem__", "Box.__setitem__"}),
    ("drop", {"Box.__delitem__"}),
    ("has", {"Box.__contains__"}),
    ("unknown", set()),
])
def test_subscripts_and_in_reach_the_dunders_of_a_known_class(graph, fn, dunders):
    assert calls(graph, fn) - {"Box.__init__", "Box.__new__"} == dunders


def test_an_untyped_receiver_beside_the_dunder_is_an_unresolved_reference(graph):
    got = graph.impact("pkg/box.py::Box.__getitem__", limit=None)
    noted = {(u["path"], u["name"]) for u in got["unresolved"]}
    assert ("pkg/box.py", "__getitem__") in noted
    # another file's untyped `b['x']` is no guess about this file's class
    assert all(u["path"] == "pkg/box.py" for u in got["unresolved"])
    assert "untyped receiver" in got["unresolved"][0]["reason"]


# pyflakes 3.2.0: `class _FieldsOrder(dict)` defines `__missing__`, which `dict.__getitem__`
# runs for a key it lacks; `iter_child_nodes(node, _fields_order=_FieldsOrder())` reads
# `_fields_order[node.__class__]`. Breaking what `__missing__` calls failed every test
# file, and no edge led there.
FIELDS = ("class Fields(dict):\n"
          "    def _get(self, k):\n        return (k,)\n\n"
          "    def __missing__(self, k):\n"
          "        self[k] = got = self._get(k)\n        return got\n\n\n"
          "class Own(dict):\n"
          "    def __getitem__(self, k):\n        return 1\n\n"
          "    def __missing__(self, k):\n        return 2\n\n\n"
          "def children(node, order=Fields()):\n    return order[node]\n\n\n"
          "def own(o: Own):\n    return o['x']\n")


def test_a_read_of_a_dict_subclass_runs_its_missing(tmp_path):
    g = build("r", write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/fields.py": FIELDS}))
    got = {(e.src_symbol, e.dst_symbol) for e in g.edges(["calls"])
           if e.how == "inferred" and e.dst_symbol and e.dst_symbol.endswith("__")}
    assert ("children", "Fields.__missing__") in got
    # a class with its own __getitem__ decides itself whether __missing__ runs
    assert ("own", "Own.__getitem__") in got and ("own", "Own.__missing__") not in got
