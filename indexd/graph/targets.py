"""A target named by its symbol alone: ``load_settings``, ``Queue.put``, ``urllib.parse.urlsplit``.

A person or an agent asking what a change breaks types the name first, not
``path::Qualified.name``. Graph.resolve_target tries paths first (a file or
a folder of that name wins) and asks here only when none matches. Tiers, the
first that finds anything answers: the qualified name itself (``urlsplit``,
``Thread.run``); the name qualified by its module's dotted path or a tail of
it (``urllib.parse.urlsplit``, ``parse.urlsplit``); a plain name as a
member's own name (``_read_chunked`` for ``HTTPResponse._read_chunked``).
More than one symbol is never guessed: the error lists them.
"""

from __future__ import annotations

import re

from ..words import dotted_module
from .model import repo_name

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
LISTED = 10   # candidates an ambiguity error names
# files that declare what code elsewhere defines (TypeScript's typings, Python's stubs)
DECLARATIONS = (".d.ts", ".d.mts", ".d.cts", ".pyi")


class AmbiguousTarget(KeyError):
    """The name names several symbols; the message lists them."""


def target_error(target: str, exc: KeyError) -> str:
    """What to tell a user whose target the graph could not take: unknown, or naming
    several symbols."""
    what = "ambiguous" if isinstance(exc, AmbiguousTarget) else "unknown"
    detail = exc.args[0] if exc.args else ""
    return f"{what} target {target!r}: {detail}" if detail else f"{what} target {target!r}"


def looks_like_symbol(target: str) -> bool:
    return bool(_NAME.match(target))


def symbol_nodes(facts: dict, name: str) -> list[tuple]:
    """The nodes (realm, repo, path, qualname) the name names: exactly one
    symbol (a file may define it twice: both definitions are one node).
    Raises KeyError when it names none or several."""
    tiers: tuple[list, list, list] = ([], [], [])
    dotted = "." in name
    for key, f in facts.items():
        module = dotted_module(key[2])
        for d in f.defs:
            if d.qualname == name:
                tiers[0].append(key + (d.qualname,))
            elif dotted and f".{module}.{d.qualname}".endswith("." + name):
                tiers[1].append(key + (d.qualname,))
            elif not dotted and d.name == name:
                tiers[2].append(key + (d.qualname,))
    found = next((sorted(set(t)) for t in tiers if t), [])
    if not found:
        raise KeyError(f"no indexed file or symbol matches {name!r}")
    code = [n for n in found if not n[2].endswith(DECLARATIONS)]
    if len(code) == 1:      # the code, not a file that only declares it (index.d.ts)
        return code
    if len(found) > 1:
        raise AmbiguousTarget(_ambiguous(name, found))
    return found


def _ambiguous(name: str, nodes: list[tuple]) -> str:
    many_repos = len({n[1] for n in nodes}) > 1
    shown = [f"{repo_name(n[1]) + '/' if many_repos else ''}{n[2]}::{n[3]}"
             for n in nodes[:LISTED]]
    more = f" and {len(nodes) - LISTED} more" if len(nodes) > LISTED else ""
    return (f"{name!r} names {len(nodes)} symbols: {', '.join(shown)}{more}; "
            "name one as PATH::NAME")
