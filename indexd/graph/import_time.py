"""Import-time effects: the tests that break because a module runs the target on import.

Importing module M runs M's module-level code and its class bodies: decorators
(``@dataclass``, ``@attr.s``, ``@app.route(...)``), ``x = make_thing()``, a class
attribute's ``field()``. A test that imports M (directly or through other
modules, ``pkg/__init__.py`` included) fails when any of that fails, whether or
not it uses what M defines. The graph has each such call as an ``import_time``
edge from the file itself (edges.py; a call after ``if __name__ == "__main__":``
gets none), beside its ``calls`` edge. ``import_time_tests`` walks from the
target up trusted call edges (resolved, inferred, coverage) to the modules that
run it at import, then up ``imports``/``package`` edges to every test file
importing one of them, and to every test below a ``conftest.py`` that does.

Separate from ``impact.walk`` on purpose: its depth counts every hop, and an
import chain (test -> pkg/__init__ -> validators -> the decorator -> the function
it calls) is longer than a call chain of the same weight. Pure: the caller
passes the graph's incoming-edge step.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from .impact import Visit, confidence
from .model import Edge, is_test_path

CALL_KINDS = ("calls", "import_time")
IMPORT_KINDS = ("imports", "package")
TRUSTED_HOW = ("resolved", "inferred", "coverage")
CALL_DEPTH = 5        # callers followed up from the target to an import_time edge
IMPORT_DEPTH = 10     # import chains are short; this reaches any real one

Node = tuple


@dataclass
class Found:
    tests: dict                       # test file node -> Visit
    edges: int = 0                    # edges examined
    stopped_at: float | None = None   # budget cut: what was not reached scores at most this


def import_time_tests(seeds: list[Node], incoming, importers, tests_under=None,
                      budget: int | None = None) -> Found:
    """Test file -> Visit (via: the import chain, the import-time call, the call chain
    down to a seed) for every test importing a module that runs a seed on import.
    ``incoming(node)``: the edges into a node; ``importers(file node)``: per file with
    edges into it, a list of those landing on the file itself (imports, package: a
    file's importers without every use of its names; each file counts against the
    budget, edges or none); ``tests_under(conftest node)``: the test files below a
    conftest.py's folder, which pytest imports it for (so they break with it).
    ``budget``: edges examined at most (None: all; the stdlib's hubs reach every test
    file through 50k file pairs, 0.4 s)."""
    out = Found({})
    modules = _running_modules([s for s in seeds if s[3]], incoming, out, budget)
    return importing_tests(modules, importers, tests_under, budget, out)


def importing_tests(modules: dict[Node, Visit], importers, tests_under=None,
                    budget: int | None = None, out: Found | None = None) -> Found:
    """Test file -> Visit for every test importing one of ``modules`` (file nodes, each
    with the Visit its chain starts from) transitively, or below a conftest.py that
    does; ``importers``, ``tests_under`` and ``budget`` as for ``import_time_tests``.
    graph/coverage.py starts it from the modules coverage saw run a function on import."""
    out = out if out is not None else Found({})
    found = _importing_tests(modules, importers, out, budget)
    for node, v in list(found.items()):
        if tests_under is not None and posixpath.basename(node[2]) == "conftest.py":
            for test in tests_under(node):
                if test not in found:
                    found[test] = Visit(v.distance + 1, v.confidence,
                                        [_conftest_edge(test, node)] + v.via)
    out.tests = {n: v for n, v in found.items() if is_test_path(n[2])}
    return out


def _conftest_edge(test: Node, conftest: Node) -> Edge:
    """No edge of the graph: pytest imports a folder's conftest.py before its tests."""
    return Edge("conftest", test[1], test[2], None, conftest[1], conftest[2], None, 0,
                "resolved", 1.0, test[0])


def _spent(out: Found, budget: int | None, here: Visit) -> bool:
    if budget is not None and out.edges >= budget:
        out.stopped_at = max(out.stopped_at or 0.0, here.path_score * 0.5)
        return True
    out.edges += 1
    return False


def _running_modules(seeds: list[Node], incoming, out: Found, budget) -> dict[Node, Visit]:
    """Files whose import runs a seed: reached from a seed over trusted call edges up to
    an ``import_time`` edge (from the file itself)."""
    visits = {s: Visit(0, 1.0) for s in seeds}
    modules: dict[Node, Visit] = {}
    frontier = list(seeds)
    for d in range(1, CALL_DEPTH + 1):
        nxt = []
        for node in frontier:
            here = visits[node]
            for e in incoming(node):
                if _spent(out, budget, here):
                    return modules
                if e.how not in TRUSTED_HOW or e.kind not in CALL_KINDS or (
                        e.kind == "calls" and e.src_symbol is None):
                    continue    # a module-level call: its import_time edge says if it runs
                other = (e.realm, e.src_repo, e.src_path, e.src_symbol)
                if other in visits or other in modules:
                    continue
                v = Visit(d, here.confidence * confidence(e), [e] + here.via)
                if e.kind == "import_time":
                    modules[other] = v
                else:
                    visits[other] = v
                    nxt.append(other)
        frontier = nxt
    return modules


def _importing_tests(modules: dict[Node, Visit], importers, out: Found,
                     budget) -> dict[Node, Visit]:
    visits = dict(modules)
    frontier = list(modules)
    for _ in range(IMPORT_DEPTH):
        nxt = []
        for node in frontier:
            here = visits[node]
            for edges in importers(node):     # one list per file with edges into node
                if _spent(out, budget, here):
                    return _tests_and_conftests(visits)
                for e in edges:
                    other = (e.realm, e.src_repo, e.src_path, None)
                    if e.kind in IMPORT_KINDS and other not in visits:
                        visits[other] = Visit(here.distance + 1,
                                              here.confidence * confidence(e), [e] + here.via)
                        nxt.append(other)
        frontier = nxt
    return _tests_and_conftests(visits)


def _tests_and_conftests(visits: dict) -> dict:
    return {n: v for n, v in visits.items()
            if is_test_path(n[2]) or posixpath.basename(n[2]) == "conftest.py"}
