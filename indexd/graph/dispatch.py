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
  too many methods to mean any: no edge;
- a name built in capitals (``v = node_class.__name__.upper()``, then ``getattr(self, v)``:
  pyflakes' ``Checker.DICT`` ...) reaches the methods named in capitals, as a start does.

The edges depend on every definition whose name has the start: the file wants
``("prefix", start)`` (``("upper",)``), which graph.py recomputes when such a name
appears or goes.

Any other name computed for ``getattr(self, ...)`` (a parameter, a too short start) may
name any method of the class: no edge, but ``computed_dispatch`` says which classes do
it, and a method of such a class (or of one deriving from it) that no test reaches is
``unknown`` to ``tests affected``, not "untested" (``Graph.implicit_caller``).
"""

from __future__ import annotations

import re

from .model import Edge, enclosing

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


def upper_name(name: str) -> bool:
    """A name ``x.upper()`` can build: capitals, digits and ``_``, two letters or more."""
    return name.isupper() and sum(c.isalpha() for c in name) >= MIN_PREFIX


def dispatch_edges(index, f, scope, res) -> None:

    uses = [u for u in _uses(f) if u[1] is not None]
    if not uses:
        return
    classes = _class_quals(index, f)
    seen = {(e.kind, e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol) for e in res.edges}
    for receiver, start, line, where in uses:
        want = ("upper",) if start is UPPER else ("prefix", start)
        res.wants.add(want)
        names = names_wanted(index, want)
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


def names_wanted(index, want: tuple) -> tuple[str, ...]:
    """Every name the realm defines that a dispatch can build: one beginning with the
    start of ``("prefix", start)``, or one ``x.upper()`` can build (``("upper",)``)."""
    key = ("dispatch_names", *want)
    if key not in index.memo:
        if want[0] == "upper":
            keep = upper_name
        else:
            start = want[1]

            def keep(n: str) -> bool:
                return n.startswith(start) and n != start
        index.memo[key] = tuple(sorted(n for n in index.defs_by_name if keep(n)))
    return index.memo[key]


UPPER = "upper"     # _uses' start for a name built in capitals


def _uses(f):
    """(receiver, fixed start, line, scope) of each dispatch in the file; the start is
    ``UPPER`` for a name built in capitals, None for a name computed otherwise."""
    refs = f.refs_of("dispatch_prefix", "dispatch", "dispatch_var", "dispatch_case")
    bound = {(r.scope, r.name): r.module for r in refs if r.kind == "dispatch_prefix"}
    upper = {(r.scope, r.name) for r in refs if r.kind == "dispatch_case"}
    for r in refs:
        if r.kind in ("dispatch_prefix", "dispatch_case") or not r.module:
            continue
        if r.kind == "dispatch_var" and (r.scope, r.name) in upper:
            yield r.module, UPPER, r.line, r.scope
            continue
        start = prefix_of(r.name if r.kind == "dispatch" else bound.get((r.scope, r.name)))
        yield r.module, start, r.line, r.scope


def computed_dispatch(index, f) -> dict[str, str]:
    """class qualname -> the method of it doing ``getattr(self, <a computed name>)`` with
    no start or case to choose methods by (the first by line), for ``f``'s classes."""
    key = ("computed_dispatch", f.repo, f.path)
    if key not in index.memo:
        classes, out = _class_quals(index, f), {}
        for receiver, start, _line, where in sorted(_uses(f), key=lambda u: u[2]):
            if start is None and receiver in ("self", "cls"):
                cls = next((p for p in enclosing(where) if p in classes), None)
                if cls is not None:
                    out.setdefault(cls, where)
        index.memo[key] = out
    return index.memo[key]


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .dunder import _receiver_classes  # noqa: E402
from .edges import _class_member, _class_quals, _overrides  # noqa: E402
