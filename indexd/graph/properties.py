"""Properties: methods Python runs when an attribute is read.

``@property``, ``@functools.cached_property`` (or ``cached_property`` imported) and
the accessors ``@x.setter`` / ``@x.getter`` / ``@x.deleter`` make a method run on
``obj.name``, a read the graph keeps no edge for (every ``self.x`` read as a reference
was measured and not kept: docs/benchmarks.md). So no edge into a property is no proof
that nothing runs it (graph/test_select.py).
"""

from __future__ import annotations

PROPERTY_DECORATORS = {"property", "cached_property"}
ACCESSORS = {"setter", "getter", "deleter"}
DECORATOR_GAP = 10    # lines from the decorator to its `def` (other decorators between)


def property_quals(f) -> set[str]:
    """Qualnames of the file's properties: the first method after each such decorator,
    in the decorator's own scope (a class)."""
    if f.lang != "python":
        return set()
    return decorated(f, [r for r in f.refs_of("decorator")
                         if r.name in PROPERTY_DECORATORS or (r.name in ACCESSORS and r.module)],
                     DECORATOR_GAP)


def named_quals(f) -> set[str]:
    """Top-level functions and classes a module-level list of strings names (jinja2's
    ``exported``, written into generated code): run by name, which no edge shows."""
    names = {r.name for r in f.refs_of("named")}
    return {d.qualname for d in f.defs if d.qualname in names} if names else set()


def decorated(f, decorators, gap: int) -> set[str]:
    """Qualnames of the functions ``decorators`` (references) apply to: the first one
    after each, in the decorator's own scope, at most ``gap`` lines below it."""
    starts = sorted((d.start, d.qualname) for d in f.defs if d.kind in ("function", "method"))
    out = set()
    for r in decorators:
        parent = r.scope or ""
        for start, qual in starts:
            if start > r.line and qual.rpartition(".")[0] == parent:
                if start - r.line <= gap:
                    out.add(qual)
                break
    return out
