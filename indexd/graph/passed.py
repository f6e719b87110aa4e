"""A module-level name bound to a call that is passed a function (Python).

``h = f(..., g, ...)`` (or ``f(key=g)``) at module level, ``g`` a function or class:
a bare call ``h()``, in the file or where ``h`` is imported from it, gets a ``calls``
edge to ``g``, how ``inferred`` (``f`` built ``h`` around ``g``). click's
``_compat.py``: ``_default_text_stdout = _make_cached_stream_func(lambda:
sys.stdout, get_text_stdout)`` returns a function that calls ``get_text_stdout``, and
``echo`` calls ``_default_text_stdout()``.

``g`` must be a bare name that the module's lookup finds as a function or class (a
top-level ``def``/``class`` of the file, or a name imported from a resolved module);
``h`` must not be a local or parameter of a function the call is in, nor a ``def``
of the calling file. Any call that is passed a function (``f(g)`` -> ``g``) was
measured too and not adopted: on the stdlib 4437 new edges, about 6 in 10 right
(``isinstance(x, C)``, ``patch.object(C, ...)``, ``POINTER(C)`` look at a value
without calling it). Pure; depends only on the realm index.
"""

from __future__ import annotations

from .types import _bindings, _lookup_scopes

CALLABLE_KINDS = ("function", "method", "class")
# Builtins that look at a value without calling it (types.py: FunctionType = type(_f)).
NOT_CALLING = frozenset(("type", "isinstance", "issubclass", "id", "repr", "str", "hash",
                         "callable", "getattr", "hasattr", "vars", "dir", "print"))


def passed_edges(index, f, scope, res) -> None:

    classes = {d.qualname for d in f.defs if d.kind == "class"}
    binds = _bindings(index, f)
    own = {d.qualname for d in f.defs}
    seen: set[tuple] = set()
    for r in f.refs_of("call"):
        if r.module is not None or r.name in own or any(
                (s, r.name) in binds for s in _lookup_scopes(r.scope, classes) if s):
            continue
        index.checkpoint()
        for repo, path, sym in _runs_passed(index, f, scope, r.name):
            key = (r.scope, repo, path, sym)
            if key not in seen and (repo, path, sym) != (f.repo, f.path, r.scope):
                seen.add(key)
                res.edges.append(_edge(f, "calls", r.scope, repo, path, sym, r.line,
                                       "inferred"))


def _runs_passed(index, f, scope, name: str) -> list[tuple]:
    """What a bare call ``name()`` may run through a module-level ``name = f(g)``: of
    this file when it binds ``name`` so, else of the module ``name`` is imported from."""
    here = _module_passes(index, f, scope).get(name)
    if here is not None:
        return here
    out = []
    for repo, path, sym in scope.imported.get(name, ()):
        other = index.files.get((repo, path)) if sym is None else None
        if other is not None:
            out += _module_passes(index, other, _other_scope(index, other)).get(name, [])
    return out


def _module_passes(index, f, scope) -> dict[str, list[tuple]]:
    """Module-level ``h = f(..., g, ...)`` of ``f``: h -> the functions/classes passed."""
    key = ("passes", f.repo, f.path)
    if key not in index.memo:
        out: dict[str, list[tuple]] = {}
        own = {d.qualname: d.kind for d in f.defs}
        callee = {(r.line, r.name): r.module for r in f.refs_of("bind_call") if r.scope is None}
        for r in f.refs_of("bind_passes"):
            if r.scope is None and r.module and callee.get((r.line, r.name)) not in NOT_CALLING:
                got = out.setdefault(r.name, [])
                got += [h for h in _targets(index, f, scope, r.module, own) if h not in got]
        index.memo[key] = out
    return index.memo[key]


def _targets(index, f, scope, name: str, own: dict) -> list[tuple]:
    """(repo, path, qualname) of the function or class ``name`` means at module level."""
    if name in own:
        return [(f.repo, f.path, name)] if own[name] in CALLABLE_KINDS else []
    return [(repo, path, sym) for repo, path, sym in scope.imported.get(name, ())
            if sym and _kind(index, repo, path, sym) in CALLABLE_KINDS]


def _kind(index, repo: str, path: str, qual: str) -> str | None:
    return next((d.kind for d in index.defs_named(repo, path, qual.rpartition(".")[2])
                 if d.qualname == qual), None)


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .edges import _edge, _other_scope  # noqa: E402
