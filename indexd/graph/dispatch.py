"""Dispatch by a name built at run time (Python): ``getattr(self, f"visit_{...}")``.

A visitor (jinja2's and ``ast``'s ``NodeVisitor``), a command loop (``cmd.Cmd``'s
``do_*``) or a parser (``parse_*``) calls the method whose name it builds from a
fixed start and a value. No name in the source says which method, so no edge
reached them: on jinja2, impact of a broken ``CodeGenerator.visit_Template`` or of
anything only it calls reached no test (bench/impact_vs_tests.py).

Here such a use reaches every method whose name has that fixed start, on the class
the receiver holds, each an ``inferred`` calls edge:

- ``getattr(r, f"visit_{x}")``, ``getattr(r, "do_" + x)``, ``getattr(r, "h_%s" % x)``;
- ``getattr(r, v)`` where ``v = "visit_" + x`` (or an f-string) in the same function;
- ``r`` is ``self`` or ``cls``: the enclosing class, the methods along its bases and
  the overrides in its subclasses anywhere in the realm (what runs on a subclass
  instance, as ``self.m()`` resolves); another receiver: the classes its bindings
  give (graph/types.py), along their bases;
- a fixed start with fewer than ``MIN_PREFIX`` letters or digits (``f"_{x}"``) names
  too many methods to mean any: no edge.

The edges depend on every definition whose name has the start: the file wants
``("prefix", start)``, which graph.py recomputes when such a name appears or goes.
"""

from __future__ import annotations

import re

from .model import Edge

MIN_PREFIX = 2
_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def prefix_of(text: str | None) -> str | None:
    """The identifier a built name starts with (``"h_%s"`` -> ``h_``), or None when
    it is too short to choose methods by."""
    m = _START.match(text or "")
    if not m:
        return None
    start = m.group(0)
    return start if sum(c.isalnum() for c in start) >= MIN_PREFIX else None


def dispatch_edges(index, f, scope, res) -> None:

    uses = list(_uses(f))
    if not uses:
        return
    classes = _class_quals(index, f)
    seen = {(e.kind, e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol) for e in res.edges}
    for receiver, start, line, where in uses:
        res.wants.add(("prefix", start))
        names = names_with(index, start)
        if receiver == "cls":
            receiver = "self"     # a classmethod's cls is the class, as self's is
        for other, here, cls, own in _receiver_classes(index, f, scope, receiver, names,
                                                        where, classes):
            for name in names:
                hits = _class_member(index, other, here, cls, name)
                if own:
                    hits = hits + _overrides(index, f, cls, name)
                for hit in hits:
                    key = ("calls", where, *hit)
                    if key not in seen:
                        seen.add(key)
                        res.edges.append(Edge("calls", f.repo, f.path, where, *hit, line,
                                              "inferred", 1.0, f.realm))


def names_with(index, start: str) -> tuple[str, ...]:
    """Every name the realm defines that begins with ``start``."""
    key = ("prefix_names", start)
    if key not in index.memo:
        index.memo[key] = tuple(sorted(n for n in index.defs_by_name if n.startswith(start)
                                       and n != start))
    return index.memo[key]


def _uses(f):
    """(receiver, fixed start, line, scope) of each dispatch in the file."""
    refs = f.refs_of("dispatch_prefix", "dispatch", "dispatch_var")
    bound = {(r.scope, r.name): r.module for r in refs if r.kind == "dispatch_prefix"}
    for r in refs:
        if r.kind == "dispatch_prefix" or not r.module:
            continue
        start = prefix_of(r.name if r.kind == "dispatch" else bound.get((r.scope, r.name)))
        if start:
            yield r.module, start, r.line, r.scope


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .dunder import _receiver_classes  # noqa: E402
from .edges import _class_member, _class_quals, _overrides  # noqa: E402
