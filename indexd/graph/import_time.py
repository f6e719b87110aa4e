"""Import-time effects: the tests that break because a module runs the target on import.

Importing module M runs M's module-level code and its class bodies: decorators
(``@dataclass``, ``@attr.s``, ``@app.route(...)``), ``x = make_thing()``, a class
attribute's ``field()``. A test that imports M (directly or through other
modules, ``pkg/__init__.py`` included) fails when any of that fails, whether or
not it uses what M defines. The graph has those calls as ``calls`` edges whose
source is the file itself and, for class bodies, ``import_time`` edges
(edges.py). ``import_time_tests`` walks from the target up trusted call edges
(resolved, inferred, coverage) to the modules that run it at import, then up
``imports``/``package`` edges to every test file importing one of them.

Separate from ``impact.walk`` on purpose: its depth counts every hop, and an
import chain (test -> pkg/__init__ -> validators -> the decorator -> the function
it calls) is longer than a call chain of the same weight. Pure: the caller
passes the graph's incoming-edge step.
"""

from __future__ import annotations

from .impact import Visit, confidence
from .model import is_test_path

CALL_KINDS = ("calls", "import_time")
IMPORT_KINDS = ("imports", "package")
TRUSTED_HOW = ("resolved", "inferred", "coverage")
CALL_DEPTH = 5        # callers followed up from the target to a module-level call
IMPORT_DEPTH = 10     # import chains are short; this reaches any real one
MAX_NODES = 20000     # a hub's callers stop here rather than walk the whole graph

Node = tuple


def import_time_tests(seeds: list[Node], incoming) -> dict[Node, Visit]:
    """Test file -> Visit (via: the import chain, the import-time call, the call chain
    down to a seed) for every test importing a module that runs a seed on import."""
    modules = _running_modules([s for s in seeds if s[3]], incoming)
    return _importing_tests(modules, incoming)


def _running_modules(seeds: list[Node], incoming) -> dict[Node, Visit]:
    """Files whose import runs a seed: reached from a seed over trusted call edges whose
    last step starts at the file itself (a module-level or class-body call)."""
    visits = {s: Visit(0, 1.0) for s in seeds}
    modules: dict[Node, Visit] = {}
    frontier = list(seeds)
    for d in range(1, CALL_DEPTH + 1):
        nxt = []
        for node in frontier:
            here = visits[node]
            for e in incoming(node):
                if e.kind not in CALL_KINDS or e.how not in TRUSTED_HOW:
                    continue
                other = (e.realm, e.src_repo, e.src_path, e.src_symbol)
                if other in visits or other in modules:
                    continue
                v = Visit(d, here.confidence * confidence(e), [e] + here.via)
                if e.src_symbol is None:
                    modules[other] = v
                elif len(visits) < MAX_NODES:
                    visits[other] = v
                    nxt.append(other)
        frontier = nxt
    return modules


def _importing_tests(modules: dict[Node, Visit], incoming) -> dict[Node, Visit]:
    visits = dict(modules)
    frontier = list(modules)
    for _ in range(IMPORT_DEPTH):
        nxt = []
        for node in frontier:
            here = visits[node]
            for e in incoming(node):
                if e.kind not in IMPORT_KINDS:
                    continue
                other = (e.realm, e.src_repo, e.src_path, None)
                if other not in visits and len(visits) < MAX_NODES:
                    visits[other] = Visit(here.distance + 1, here.confidence * confidence(e),
                                          [e] + here.via)
                    nxt.append(other)
        frontier = nxt
    return {n: v for n, v in visits.items() if is_test_path(n[2])}
