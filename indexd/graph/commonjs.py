"""CommonJS: what ``const m = require('./m')`` holds, so that ``m(...)`` and ``m.name(...)``
reach a definition. resolve's tests call ``resolve.sync(...)`` on the package's main, which
does ``async.sync = require('./lib/sync'); module.exports = async``; qs's call
``qs.parse(...)`` on ``module.exports = { parse: parse }`` with ``var parse =
require('./parse')``. Read from the references ecmascript.refs.scm emits (``cjs_*``);
what they do not name stays unknown here and the caller falls back to its name match."""

from __future__ import annotations

from .model import enclosing

MAX_HOPS = 6      # re-exports followed (index.js -> lib/index.js -> lib/x.js ...)
EXPORTS = ("exports", "module.exports")


def required_file(index, f, var: str, where) -> tuple[str, str] | None:
    """The file ``var`` holds by its innermost ``var = require(spec)`` binding."""
    table = _table(index, f)
    for scope in (*enclosing(where), None):
        spec = table["bind"].get((scope, var))
        if spec is not None:
            return _resolve(index, f, spec)
    return None


def default_export(index, repo: str, path: str, wants: set, hops: int = 0) -> list[tuple]:
    """(repo, path, qualname) of what ``module.exports`` is in a file."""
    f = index.files.get((repo, path))
    if f is None or hops > MAX_HOPS:
        return []
    wants.add(("path", repo, path))
    table = _table(index, f)
    out = []
    for name in table["export"]:
        out += _value(index, f, table, name, wants, hops)
    for spec in table["export_require"]:
        hit = _resolve(index, f, spec)
        if hit:
            out += default_export(index, *hit, wants, hops + 1)
    return out


def member_export(index, repo: str, path: str, name: str, wants: set,
                  hops: int = 0) -> list[tuple]:
    """(repo, path, qualname) of ``module.exports.name`` in a file."""
    f = index.files.get((repo, path))
    if f is None or hops > MAX_HOPS:
        return []
    wants.add(("path", repo, path))
    table = _table(index, f)
    holders = set(EXPORTS) | set(table["export"])    # `module.exports = async; async.k = ...`
    out = []
    for obj, value, required in table["props"].get(name, ()):
        if obj is not None and obj not in holders:
            continue
        if required:
            hit = _resolve(index, f, value)
            out += default_export(index, *hit, wants, hops + 1) if hit else []
        else:
            out += _value(index, f, table, value, wants, hops)
    if not out:     # `var posix = { join: function () {} }; module.exports = posix`
        defs = {d.qualname for d in index.defs(repo, path)}
        out = [(repo, path, f"{h}.{name}") for h in table["export"] if f"{h}.{name}" in defs]
    if not out:     # `module.exports = require('./lib')`: that file's member
        for spec in table["export_require"]:
            hit = _resolve(index, f, spec)
            if hit:
                out += member_export(index, *hit, name, wants, hops + 1)
    return out


def is_export_alias(index, repo: str, path: str, name: str) -> bool:
    """Is ``module.exports.name`` the exported object itself (``posix.posix = posix;
    module.exports = posix``: Node's ``path.posix``)?"""
    f = index.files.get((repo, path))
    if f is None:
        return False
    table = _table(index, f)
    holders = set(EXPORTS) | set(table["export"])
    return any(not required and value in table["export"] and (obj is None or obj in holders)
               for obj, value, required in table["props"].get(name, ()))


def exported_values(index, f) -> set[tuple[int, str]]:
    """(line, name) of each module-level name a file exports (``module.exports = { k: x }``,
    ``exports.k = x``): an export, not a use of ``x`` by the module (member_export follows
    what imports it)."""
    return _table(index, f)["values"]


def _value(index, f, table, name: str, wants: set, hops: int) -> list[tuple]:
    """A module-level name: a definition of the file, or what a require bound to it holds."""
    defs = [d.qualname for d in index.defs(f.repo, f.path)
            if d.qualname == name and d.kind not in ("section", "key", "file")]
    if defs:
        return [(f.repo, f.path, q) for q in defs]
    spec = table["bind"].get((None, name))
    hit = _resolve(index, f, spec) if spec is not None else None
    return default_export(index, *hit, wants, hops + 1) if hit else []


def _resolve(index, f, spec: str) -> tuple[str, str] | None:
    from .resolve_langs import resolve_js
    return resolve_js(index, f, spec)


def _table(index, f) -> dict:
    key = ("cjs", f.repo, f.path)
    table = index.memo.get(key)
    if table is None or table["facts"] is not f:
        table = {"facts": f, "bind": {}, "export": [], "export_require": [], "props": {},
                 "values": set()}
        for r in f.refs_of("cjs_bind"):
            table["bind"].setdefault((r.scope, r.name), r.module)
        for r in f.refs_of("cjs_export"):
            table["export"].append(r.name)
        for r in f.refs_of("cjs_export_require"):
            table["export_require"].append(r.module)
        for r in f.refs_of("cjs_prop_value", "cjs_prop_require"):
            obj, _, prop = r.name.rpartition(".")
            table["props"].setdefault(prop, []).append(
                (obj or None, r.module, r.kind == "cjs_prop_require"))
            if r.kind == "cjs_prop_value":
                table["values"].add((r.line, r.module))
        index.memo[key] = table
    return table
