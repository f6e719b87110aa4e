"""Implicit dunder calls (Python): what Python runs on an instance without naming it.

Only where the receiver's class is known through graph/types.py (constructor
calls, annotations, returns, fixtures), each an ``inferred`` calls edge:

- ``for x in r`` -> ``R.__iter__`` (and ``R.__next__`` where defined);
- ``with r:`` / ``with r as x`` -> ``R.__enter__`` and ``R.__exit__``;
- ``r(...)`` -> ``R.__call__``; ``repr(r)`` / ``str(r)`` / ``len(r)`` ->
  ``__repr__`` / ``__str__`` / ``__len__``;
- ``r.name`` where neither R nor its bases in the realm define, bind in the class body
  or assign (``self.name = ...``) ``name``, but one defines ``__getattr__`` -> that
  ``__getattr__``.

A method looked up is found along the bases (``_class_member``); a receiver of
unknown class gives nothing.
"""

from __future__ import annotations

from .model import Edge

BUILTINS = {"repr": ("__repr__",), "str": ("__str__",), "len": ("__len__",)}
IMPLICIT = {"iterates": ("__iter__", "__next__"), "enters": ("__enter__", "__exit__")}


def dunder_edges(index, f, scope, res) -> None:
    from .edges import _class_quals

    classes = _class_quals(index, f)
    seen = {(e.kind, e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol) for e in res.edges}
    for receiver, names, line, where in _uses(f):
        for name in names:
            res.wants.add(("name", name))
        for hit in _targets(index, f, scope, receiver, names, where, classes):
            key = ("calls", where, *hit)
            if key not in seen:
                seen.add(key)
                res.edges.append(Edge("calls", f.repo, f.path, where, *hit, line, "inferred",
                                      1.0, f.realm))


def _uses(f):
    """(receiver, dunder names or ("." + attribute,), line, scope) of the file."""
    for r in f.refs_of("iterates", "enters", "builtin_of"):
        names = IMPLICIT.get(r.kind) or BUILTINS.get(r.name, ())
        if r.module and names:
            yield r.module, names, r.line, r.scope
    for r in f.refs_of("call"):
        if r.module is None and r.name.isidentifier():     # `v(...)`: v's __call__
            yield r.name, ("__call__",), r.line, r.scope
    for r in f.refs_of("attribute", "call"):
        if r.module and not r.module.startswith("super("):
            yield r.module, ("." + r.name,), r.line, r.scope


def _targets(index, f, scope, receiver, names, where, classes) -> list[tuple]:
    from .edges import _class_member
    from .types import receiver_class_files

    out = []
    for other, here, cls in receiver_class_files(index, f, scope, receiver, where, classes):
        for name in names:
            if name.startswith("."):
                hits = _getattr_of(index, other, here, cls, name[1:])
            else:
                hits = _class_member(index, other, here, cls, name)
            out += [h for h in hits if h not in out]
    return out


def _getattr_of(index, f, scope, cls: str, attr: str) -> list[tuple]:
    """``R.__getattr__`` when ``R`` (or a base in the realm) defines it and none
    defines or assigns ``attr``."""
    from .edges import _class_member

    if attr.startswith("__") or _class_member(index, f, scope, cls, attr):
        return []
    hits = _class_member(index, f, scope, cls, "__getattr__")
    if not hits or _assigned(index, f, scope, cls, attr):
        return []
    return hits


def _assigned(index, f, scope, cls: str, attr: str) -> bool:
    """Does the body of ``cls`` or of a base in the realm bind ``attr`` (``mode = "r"``,
    ``x: int``), or one of their methods assign ``self.attr``?"""
    from .edges import _bases, _other_scope
    from .types import _bindings, _self_bindings

    todo, seen = [(f, cls)], set()
    while todo and len(seen) < 24:
        here, qual = todo.pop(0)
        if (here.repo, here.path, qual) in seen:
            continue
        seen.add((here.repo, here.path, qual))
        if _self_bindings(index, here).get((qual, f"self.{attr}")) \
                or _bindings(index, here).get((qual, attr)):
            return True
        for repo, path, base in _bases(index, here, _other_scope(index, here), qual):
            other = index.files.get((repo, path))
            if other is not None:
                todo.append((other, base))
    return False
