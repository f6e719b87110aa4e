"""Implicit dunder calls (Python): what Python runs on an instance without naming it.

Only where the receiver's class is known through graph/types.py (constructor
calls, annotations, returns, fixtures), each an ``inferred`` calls edge:

- ``for x in r`` -> ``R.__iter__`` (and ``R.__next__`` where defined);
- ``with r:`` / ``with r as x`` -> ``R.__enter__`` and ``R.__exit__``, only when R
  (along its bases) has both: Python looks both up before entering and raises
  when one is missing; ``async with`` -> ``__aenter__``/``__aexit__`` the same way,
  ``async for`` -> ``__aiter__``/``__anext__``;
- the same ``for`` in a comprehension (its first ``for``: the later ones iterate the
  comprehension's own variables), ``next(r)`` / ``next(r, default)`` -> ``R.__next__``,
  ``iter(r)`` -> ``R.__iter__`` (not ``iter(f, sentinel)``: that calls ``f``);
- ``r(...)`` -> ``R.__call__``, also ``C(...)(...)`` (toolz: ``curry(map)(str)``), and
  ``self.x(...)`` where ``self.x`` holds an R (click:
  ``self.type(value, self, ctx)``, ``self.type: types.ParamType``) and ``mod.x(...)`` where
  the module's x does (toolz: ``curried.take = curry(take)``); ``repr(r)`` /
  ``str(r)`` / ``len(r)`` -> ``__repr__`` / ``__str__`` / ``__len__``; a builtin the
  module defines or imports is not the builtin;
- ``C(...)``, a call of a class resolved (or inferred) to one of the realm, ->
  ``C.__new__`` and ``C.__init__`` found along C's bases (``_constructor_edges``;
  jinja2's ``Template(source)`` builds its environment in ``Template.__new__``);
- ``class C(Base):`` runs the ``__new__`` and ``__init__`` of C's metaclass (``metaclass=M``
  on C or the nearest base that has one; marshmallow's ``SchemaMeta`` collects a schema's
  fields there) and the ``__init_subclass__`` of its bases, from where the statement is:
  the enclosing function, or the module (then also an ``import_time`` edge);
- ``r[k]`` -> ``__getitem__`` (``__missing__`` where R has no ``__getitem__`` of its own
  in the realm: a dict subclass's), ``r[k] = v`` -> ``__setitem__``, ``r[k] += v`` -> both,
  ``del r[k]`` -> ``__delitem__``, ``k in r`` / ``k not in r`` -> ``__contains__``;
- a truth test, ``if r:`` / ``elif r:`` / ``while r:`` / ``not r`` / ``r and ...`` /
  ``r or ...`` (and the right operand in a condition) -> ``__bool__``, or ``__len__``
  where R has no ``__bool__`` (pyasn1: ``self.namedValues and ...`` runs
  ``NamedValues.__len__``); an untyped one is not noted (nearly always a plain value);
- ``r.name`` where neither R nor its bases in the realm define, bind in the class body
  or assign (``self.name = ...``) ``name``, but one defines ``__getattr__`` -> that
  ``__getattr__`` (not for ``r.name = v``: that runs ``__setattr__``).

A method looked up is found along the bases (``_class_member``); a bare ``self`` is
the enclosing class, and, as ``self.m()``, also reaches subclasses' overrides; a
receiver of unknown class gives nothing. ``with r as x``: x holds what
``R.__enter__`` returns (``entered_classes``, used by graph/types.py). A receiver of
unknown class in a file whose own class defines the dunder is noted as an unresolved
reference instead (``_note_untyped``), which ``tests affected`` follows as a guess.
"""

from __future__ import annotations

from .model import UNTYPED, Edge, enclosing

SUBSCRIPTS = {"subscript": ("__getitem__",), "subscript_store": ("__setitem__",),
              "subscript_update": ("__getitem__", "__setitem__"),
              "subscript_del": ("__delitem__",), "contains": ("__contains__",)}
# An untyped receiver in a file defining one of these dunders may hold the file's own
# class: noted as an unresolved reference (not an edge), whose tests `tests affected`
# selects as weak evidence (tests_affected._through_untyped). Not `__call__`: every
# call of a parameter would be one.
UNTYPED_REASON = f"{UNTYPED}: the interpreter may run this file's own method"
BUILTINS = {"repr": ("__repr__",), "str": ("__str__",), "len": ("__len__",),
            "iter": ("__iter__",), "next": ("__next__",)}
IMPLICIT = {("iterates", "for"): ("__iter__", "__next__"),
            ("enters", "with"): ("__enter__", "__exit__"),
            ("iterates", "async"): ("__aiter__", "__anext__"),
            ("enters", "async"): ("__aenter__", "__aexit__")}
ENTERS = {False: ("__enter__", "__exit__"), True: ("__aenter__", "__aexit__")}
# a truth test runs __bool__, or __len__ where the class has no __bool__
TRUTH = ("__bool__", "__len__")


def dunder_edges(index, f, scope, res) -> None:

    classes = _class_quals(index, f)
    seen = {(e.kind, e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol) for e in res.edges}
    # a module's own `next` or `from x import iter` is not the builtin
    shadowed = {d.qualname for d in f.defs if "." not in d.qualname} | set(scope.imported)
    found = _constructor_edges(index, f, scope, res)
    found += _class_statement_edges(index, f, scope, res)
    # What a receiver holds depends on the receiver and its scope only, and one
    # scope uses one receiver many times (`node.a`, `node.b`): asked once each
    # (634k uses, 263k distinct on the stdlib: the graph build's largest part).
    held: dict[tuple, list] = {}
    noted: set[tuple] = set()
    for receiver, names, line, where in _uses(f, shadowed, scope.modules):
        for name in names:
            res.wants.add(("name", name))
        key = (receiver, where, names[0].startswith("."))
        if key not in held:
            index.checkpoint()
            held[key] = list(_receiver_classes(index, f, scope, receiver, names, where, classes))
        if held[key]:
            found += [(where, hit, line) for hit in _targets(index, f, held[key], names)]
        elif not names[0].startswith(".") and names != TRUTH:
            # (a truth test of an untyped value is nearly always a plain one: no note)
            _note_untyped(index, f, names, line, where, res, noted)
    for where, hit, line in found:
        key = ("calls", where, *hit)
        if key not in seen:
            seen.add(key)
            res.edges.append(Edge("calls", f.repo, f.path, where, *hit, line, "inferred",
                                  1.0, f.realm))


CLASS_HOOKS = ("__new__", "__init__")      # a metaclass's, run by every class statement


def _class_statement_edges(index, f, scope, res) -> list[tuple]:
    """(scope, hook, line) of what each class statement of the file runs: its
    metaclass's ``__new__`` / ``__init__`` and its bases' ``__init_subclass__``. A
    statement at module level (or in a class body there) also runs at import: an
    ``import_time`` edge, as graph/edges.py gives a module-level call."""
    statements = [d for d in f.defs if d.kind == "class"]
    if not statements:
        return []
    containers = {d.qualname for d in statements}
    script_from = min((r.line for r in f.refs_of("main_guard")), default=None)
    for name in (*CLASS_HOOKS, "__init_subclass__"):
        res.wants.add(("name", name))
    out = []
    for d in statements:
        where = d.qualname.rpartition(".")[0] or None
        hits = _class_member(index, f, scope, d.qualname, "__init_subclass__", skip_own=True)
        meta = next((m for here, qual in class_and_bases(index, f, d.qualname)
                     for m in _metaclasses(index, here, qual)), None)
        if meta is not None:
            other, here_scope, cls = meta
            hits = hits + [h for name in CLASS_HOOKS
                           for h in _class_member(index, other, here_scope, cls, name)]
        out += [(where, hit, d.start) for hit in hits]
        if hits and _runs_at_import(where, containers, d.start, script_from):
            res.edges += [Edge("import_time", f.repo, f.path, None, *hit, d.start, "inferred",
                               1.0, f.realm) for hit in hits]
    return out


def _metaclasses(index, f, cls: str) -> list[tuple]:
    """(file facts, its scope, class) of the metaclass written on ``f``'s class ``cls``
    (``metaclass=M``), where M resolves to a class of the realm; [] else."""
    key = ("metaclass_written", f.repo, f.path)
    if key not in index.memo:        # class qualname -> the metaclass as written
        starts = {(d.start, d.name): d.qualname for d in f.defs if d.kind == "class"}
        index.memo[key] = {starts[(r.line, r.name)]: r.module for r in f.refs_of("metaclass")
                           if (r.line, r.name) in starts and r.module}
    written = index.memo[key].get(cls)
    if written is None:
        return []
    here = _other_scope(index, f)
    receiver, _, name = written.rpartition(".")
    if receiver:
        found = _receiver_targets(index, f, name, receiver, here, {})
    elif name in _class_quals(index, f):
        found = [(f.repo, f.path, name)]
    else:
        found = [(repo, path, sym) for repo, path, sym in here.imported.get(name, ()) if sym]
    return [(other, _other_scope(index, other), qual) for repo, path, qual in found
            if (other := index.files.get((repo, path))) is not None
            and _kind(index, repo, path, qual) == "class"]


def _constructor_edges(index, f, scope, res) -> list[tuple]:
    """(scope, constructor, line) of each trusted calls edge to a class: ``C(...)`` runs
    the ``__new__`` and ``__init__`` along C's bases, which no edge names (a walk that reaches
    ``__init__`` goes on to whoever builds the class). Where the file builds C on import
    (an ``import_time`` edge to C), its constructors get one too: marshmallow's test
    helpers build schemas in class bodies (``fields.Nested(UserSchema(only=...))``), so
    breaking what ``Schema.__init__`` calls broke the import of every test."""
    at_import = {(e.dst_repo, e.dst_path, e.dst_symbol): e.line for e in res.edges
                 if e.kind == "import_time" and e.dst_symbol}
    out, runs = [], {}
    for e in [e for e in res.edges if e.kind == "calls" and e.how in ("resolved", "inferred")
              and e.dst_symbol]:
        if _kind(index, e.dst_repo, e.dst_path, e.dst_symbol) != "class":
            continue
        other = index.files.get((e.dst_repo, e.dst_path))
        here = scope if other is f else _other_scope(index, other)
        built = at_import.get((e.dst_repo, e.dst_path, e.dst_symbol))
        for name in ("__new__", "__init__"):
            for hit in _class_member(index, other, here, e.dst_symbol, name):
                out.append((e.src_symbol, hit, e.line))
                if built is not None:
                    runs.setdefault(hit, built)
    res.edges += [Edge("import_time", f.repo, f.path, None, *hit, line, "inferred", 1.0, f.realm)
                  for hit, line in runs.items()]
    return out


def _uses(f, shadowed: set[str], modules):
    """(receiver, dunder names or ("." + attribute,), line, scope) of the file; a
    builtin the file defines or imports (``shadowed``) calls no dunder; ``modules``: the
    names the file's imports bind to modules."""
    # `async with r` is also a "with" reference on its line: the "async" one stands for it
    asynchronous = {(r.kind, r.line, r.module) for r in f.refs_of("iterates", "enters")
                    if r.name == "async"}
    for r in f.refs_of("iterates", "enters", "builtin_of"):
        if r.name != "async" and (r.kind, r.line, r.module) in asynchronous:
            continue
        if r.kind == "builtin_of" and r.name in shadowed:
            continue
        names = IMPLICIT.get((r.kind, r.name)) or BUILTINS.get(r.name, ())
        if r.module and names:
            yield r.module, names, r.line, r.scope
    for r in f.refs_of("call"):
        if r.module is None and r.name.isidentifier():     # `v(...)`: v's __call__
            yield r.name, ("__call__",), r.line, r.scope
        elif r.module == "self" and r.name.isidentifier():     # `self.x(...)`: x's, if typed
            yield f"self.{r.name}", ("__call__",), r.line, r.scope
        elif r.module in modules and r.name.isidentifier():
            # `mod.x(...)`: a module-level instance of another module (toolz's curried.take)
            yield f"{r.module}.{r.name}", ("__call__",), r.line, r.scope
    for r in f.refs_of("truth"):        # `if r:`, `r and ...`, `not r`
        if r.module:
            yield r.module, TRUTH, r.line, r.scope
    for r in f.refs_of("call_result"):     # `C(...)(...)`: the instance's __call__
        if r.module:
            yield r.module, ("__call__",), r.line, r.scope
    # a store, `r[k] += v` or `del r[k]` also matches the read pattern: it says it itself
    written = {(r.line, r.module) for r in f.refs_of("subscript_store", "subscript_update",
                                                     "subscript_del")}
    for r in f.refs_of(*SUBSCRIPTS):
        if r.module and not (r.kind == "subscript" and (r.line, r.module) in written):
            yield r.module, SUBSCRIPTS[r.kind], r.line, r.scope
    stores = {(r.line, r.module, r.name) for r in f.refs_of("attr_store")}
    for r in f.refs_of("attribute", "call"):
        if r.module and not r.module.startswith("super(") \
                and not (r.kind == "attribute" and (r.line, r.module, r.name) in stores):
            yield r.module, ("." + r.name,), r.line, r.scope


def _note_untyped(index, f, names, line, where, res, noted: set[tuple]) -> None:
    """A dunder run on a value of no known class, in a file whose own class defines it:
    an unresolved reference, once per name and enclosing symbol (cachetools' ``cached``
    wrappers do ``cache[k]`` on the cache they were given, beside ``Cache.__getitem__``)."""
    for name in names:
        if name.startswith(".") or name == "__call__" or (name, where) in noted:
            continue
        noted.add((name, where))
        if any("." in d.qualname for d in _code_defs(index, f.repo, f.path, name)):
            res.unresolved.append({"kind": "name", "name": name, "line": line,
                                   "reason": UNTYPED_REASON})


def _targets(index, f, receivers: list[tuple], names) -> list[tuple]:
    """What ``names`` run on each of ``receivers`` (``_receiver_classes``)."""
    out = []
    for other, here, cls, own in receivers:
        if names in ENTERS.values() and not _context_methods(index, other, here, cls, names):
            continue        # `with` raises on a class lacking one of the two
        run = names
        if names == TRUTH:  # __len__ only where no __bool__ is found along the bases
            run = TRUTH[:1] if _class_member(index, other, here, cls, TRUTH[0]) else TRUTH[1:]
        for name in run:
            if name.startswith("."):
                hits = _getattr_of(index, other, here, cls, name[1:])
            else:
                hits = _class_member(index, other, here, cls, name)
                if not hits and name == "__getitem__":
                    # dict's own __getitem__ runs __missing__ for a key it lacks
                    hits = _class_member(index, other, here, cls, "__missing__")
            if own:         # a subclass instance runs its own override, as self.m() does
                hits = hits + _overrides(index, f, cls, name)
            out += [h for h in hits if h not in out]
    return out


def _receiver_classes(index, f, scope, receiver, names, where, classes):
    """(file facts, scope there, class, is it ``self``) of each class ``receiver`` holds.
    A bare ``self`` (``iter(self)``, ``with self``, ``self(...)``) is the class the use
    sits in; its missing attributes are left out (``self.x()`` is edges.py's)."""
    if receiver == "self":
        cls = next((p for p in enclosing(where) if p in classes), None)
        if cls is None or any(n.startswith(".") for n in names):
            return []
        return [(f, scope, cls, True)]
    return [(other, here, cls, False) for other, here, cls
            in receiver_class_files(index, f, scope, receiver, where, classes)]


def _context_methods(index, f, scope, cls: str, names: tuple) -> list[list[tuple]]:
    """[the __enter__ hits, the __exit__ hits] of ``cls`` (or the async pair), [] unless
    both are defined along its bases."""
    hits = [_class_member(index, f, scope, cls, name) for name in names]
    return hits if all(hits) else []


def entered_classes(index, f, scope, value: str, where, classes, asynchronous: bool):
    """The classes ``x`` holds in ``with value as x`` (``async with``): what the
    ``__enter__`` (``__aenter__``) of each class ``value`` holds returns. [] when any
    class lacks one of the two methods or its ``__enter__`` returns something unknown."""
    out = []
    for other, here, cls in receiver_class_files(index, f, scope, value, where, classes):
        found = _context_methods(index, other, here, cls, ENTERS[asynchronous])
        (repo, path, qual) = found[0][0] if found else (None, None, None)
        at = index.files.get((repo, path))
        got = _returns_of(index, at, here if at is other else _other_scope(index, at), qual,
                          (other.repo, other.path, cls)) if at is not None else []
        if not got:
            return []
        out += [c for c in got if c not in out]
    return out


def _returns_of(index, f, scope, qual: str, own: tuple) -> list[tuple]:
    """What the method ``qual`` of ``f`` returns called on an ``own`` instance: its
    ``-> T`` (``Self``: ``own``), else ``own`` when every return is ``return self``
    (on a subclass instance that is the subclass), else what its returns build."""
    text = _returns(index, f).get(qual)
    got = annotation_classes(index, f, scope, text, self_class=own) if text else []
    values = _returned(index, f).get(qual, [])
    if not got and values and all(k == "return_value" and (v or "").strip() == "self"
                                  for k, v in values):
        return [own]
    return got or body_classes(index, f, scope, qual)


def _getattr_of(index, f, scope, cls: str, attr: str) -> list[tuple]:
    """``R.__getattr__`` when ``R`` (or a base in the realm) defines it and none
    defines or assigns ``attr``."""
    if attr.startswith("__") or _class_member(index, f, scope, cls, attr):
        return []
    hits = _class_member(index, f, scope, cls, "__getattr__")
    if not hits or _assigned(index, f, scope, cls, attr):
        return []
    return hits


def _assigned(index, f, scope, cls: str, attr: str) -> bool:
    """Does the body of ``cls`` or of a base in the realm bind ``attr`` (``mode = "r"``,
    ``x: int``), or one of their methods assign ``self.attr``?"""
    return any(_self_bindings(index, here).get((qual, f"self.{attr}"))
               or _bindings(index, here).get((qual, attr))
               for here, qual in class_and_bases(index, f, cls))


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .edges import (  # noqa: E402
    _class_member, _class_quals, _code_defs, _other_scope, _overrides, _receiver_targets,
    _runs_at_import, class_and_bases)
from .types import (  # noqa: E402
    _bindings, _kind, _returned, _returns, _self_bindings, annotation_classes, body_classes,
    receiver_class_files)
