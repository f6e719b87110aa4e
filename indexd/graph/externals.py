"""Which of a file's imports from outside the realm a symbol's own code uses.

``deps`` of a file lists every import the realm cannot resolve (``os``,
``requests``); of a symbol, only those its code names: a name it reads or
calls, or the head of a receiver (``os.path.getsize`` names ``os``), bound by
the import (``import typing as t`` binds ``t``; ``from m import n`` binds
``n``; ``import a.b`` binds ``a``), or an import inside the symbol itself.
"""

from __future__ import annotations

from .model import FileFacts


def used_by(facts: FileFacts, symbol: str, unresolved: list[dict]) -> list[dict]:
    """The entries of ``unresolved`` (kind "import", name "mod" or "mod:name",
    line) that ``symbol`` (a qualified name) or its nested code uses."""
    names: set[str] = set()
    own_lines: set[int] = set()
    for r in facts.refs:
        if r.scope is None or not (r.scope == symbol or r.scope.startswith(symbol + ".")):
            continue
        if r.kind in ("import", "import_from", "import_alias"):
            own_lines.add(r.line)
            continue
        names.add(r.name)
        if r.module:
            names.add(r.module.split(".", 1)[0])
    aliases: dict[tuple[int, str], set[str]] = {}
    for r in facts.refs_of("import_alias"):
        aliases.setdefault((r.line, r.module or ""), set()).add(r.name)
    return [u for u in unresolved
            if u["line"] in own_lines or _bound(u, aliases) & names]


def _bound(u: dict, aliases: dict) -> set[str]:
    """The names an unresolved import binds in its file."""
    module, _, name = u["name"].partition(":")
    alias = aliases.get((u["line"], module))
    if alias:
        return alias
    return {name} if name else {module.split(".", 1)[0]}
