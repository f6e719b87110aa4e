"""The class a JavaScript value holds when the source states it: a variable every ``new C(...)``
in its scope built from one class (edges.py), and, here, the value of a call of a function
every ``return`` of which is ``new C(...)``: ``function walk(obj) { return new Walker(obj); }``
makes ``walk(x).forEach(...)`` and ``var w = walk(x); w.map(...)`` calls of Walker's methods.
An ES5 class is a function with prototype methods (``Walker.prototype.forEach = ...``, which
the parser names ``Walker.forEach``). Anything less certain gives no class."""

from __future__ import annotations

import re

from . import commonjs

_CALLEE = re.compile(r"^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)\(")


def is_class(index, repo: str, path: str, name: str) -> bool:
    """A class, or a function with methods under it (an ES5 constructor)."""
    return name in _shapes(index, repo, path)[1]


def _shapes(index, repo: str, path: str) -> tuple[frozenset, frozenset]:
    """A file's qualnames and its class-like ones, once per graph build (asked per call)."""
    key = ("js shapes", repo, path)
    got = index.memo.get(key)
    if got is None:
        defs = index.defs(repo, path)
        owners = {d.qualname.rpartition(".")[0] for d in defs if d.kind == "method"}
        classes = {d.qualname for d in defs if d.kind == "class"
                   or (d.kind == "function" and d.qualname in owners)}
        got = index.memo[key] = (frozenset(d.qualname for d in defs), frozenset(classes))
    return got


def method_of(index, repo: str, path: str, cls: str, name: str) -> str | None:
    """The qualname ``cls.name`` runs: the method, or the one a prototype alias names
    (``Emitter.prototype.on = Emitter.prototype.addListener``); None: neither."""
    defs = _shapes(index, repo, path)[0]
    if f"{cls}.{name}" in defs:
        return f"{cls}.{name}"
    f = index.files.get((repo, path))
    for r in f.refs_of("js_alias") if f is not None else ():
        if r.name == f"{cls}.prototype.{name}":
            target = (r.module or "").replace(".prototype.", ".", 1)
            if target in defs:
                return target
    return None


def called(receiver: str) -> str | None:
    """``walk([3])`` -> ``walk``, ``lib.walk(x)`` -> ``lib.walk``; None: not one call."""
    m = _CALLEE.match(receiver)
    return m.group(1) if m and receiver.endswith(")") and receiver.count("(") == 1 else None


def call_classes(index, f, callee: str, where, scope, local, wants: set) -> list[tuple]:
    """(repo, path, class) the call of ``callee`` returns; [] unless every function it may
    be returns ``new`` of one and the same class."""
    out = set()
    funcs = _callees(index, f, callee, where, scope, local, wants)
    for repo, path, func in funcs:
        got = _returned(index, repo, path, func)
        if not got:
            return []
        out |= set(got)
    return sorted(out) if len(out) == 1 else []


def _callees(index, f, callee: str, where, scope, local, wants: set) -> list[tuple]:
    head, _, member = callee.partition(".")
    if not member:
        if head in local:
            return [(f.repo, f.path, q) for q in local[head] if "." not in q]
        if head in scope.imported:
            return [t for t in scope.imported[head] if t[2]]
        hit = commonjs.required_file(index, f, head, where)
        return commonjs.default_export(index, *hit, wants) if hit else []
    hit = commonjs.required_file(index, f, head, where) if head not in local else None
    return commonjs.member_export(index, *hit, member, wants) if hit else []


def _returned(index, repo: str, path: str, func: str) -> list[tuple]:
    f = index.files.get((repo, path))
    if f is None:
        return []
    values = [r.module or "" for r in f.refs_of("js_return") if r.scope == func]
    if not values or not all(v.startswith("new ") for v in values):
        return []
    names = {v[4:].split("(", 1)[0].strip().rpartition(".")[2] for v in values}
    if len(names) != 1:
        return []
    cls = names.pop()
    return [(repo, path, cls)] if is_class(index, repo, path, cls) else []


def keyed_member_edges(index, f, res, make_edge) -> None:
    """``table[key]`` where ``table`` is the file's module-level object literal of functions
    (``var generators = { brackets: function ..., repeat: ... }``): a ``references`` edge,
    inferred, from the reading symbol to each of them; the key decides which at run time.
    A local of that name (``function f(generators) {...}``) is the file's object all the
    same here: JavaScript records no local bindings yet."""
    refs = f.refs_of("js_keyed")
    if not refs:
        return
    members: dict[str, list[str]] = {}
    for d in f.defs:
        owner, dot, _ = d.qualname.rpartition(".")
        if dot and d.kind == "method" and "." not in owner:
            members.setdefault(owner, []).append(d.qualname)
    seen: set[tuple] = set()
    for r in refs:
        for q in members.get(r.name, ()) if not is_class(index, f.repo, f.path, r.name) else ():
            if (r.scope, q) not in seen and q != r.scope:
                seen.add((r.scope, q))
                res.edges.append(make_edge(f, "references", r.scope, f.repo, f.path, q,
                                           r.line, "inferred"))

