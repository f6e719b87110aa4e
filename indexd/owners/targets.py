"""What an owners target names: 'path' or 'path::Qualified.name' -> a file and lines.

The path is absolute (inside a realm), 'repo_name/path', or repo-relative and
found in exactly one repo (impact's forms); a symbol's lines are the indexed
entry's. Reads the store; never writes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidParams, RealmError
from ..realms import locate


def resolve(settings, target: str) -> tuple[str, str, str, str | None]:
    """(realm, repo, rel, symbol) of 'path' or 'path::Qualified.name'; the path is
    absolute, 'repo_name/path' or a repo-relative path found in one repo."""
    path, _, symbol = target.partition("::")
    path = path.rstrip("/")
    if not path:
        raise InvalidParams("needs 'target': a path, or path::Qualified.name")
    if os.path.isabs(path):
        realm, repo, rel = locate(settings, path)
        return realm, repo, rel, symbol or None
    found = in_one_repo(settings, path)
    if found is None:
        raise RealmError(f"no file matches {path!r} in any realm")
    return (*found, symbol or None)


def in_one_repo(settings, path: str) -> tuple[str, str, str] | None:
    """(realm, repo, rel) of 'repo_name/path' or of a repo-relative path that
    one repo of the realms has; None where none has it. Raises RealmError when
    several do."""
    pairs = settings.realm_repos(None)
    head, _, rest = path.partition("/")
    hits = [(r, p, rest) for r, p in pairs if Path(p).name == head and _is_file(p, rest)]
    hits = hits or [(r, p, path) for r, p in pairs if _is_file(p, path)]
    if len({h[1] for h in hits}) > 1:
        raise RealmError(f"{path!r} is ambiguous: " +
                         ", ".join(sorted(f"{Path(h[1]).name}/{h[2]}" for h in hits)))
    return hits[0] if hits else None


def symbol_range(store, realm: str, repo: str, rel: str, symbol: str) -> tuple[int, int]:
    from ..query.search import outline

    rows = [r for r in outline(store, realm, repo, rel) if r.get("symbol") == symbol]
    if not rows:
        raise RealmError(f"{symbol!r} is not defined in {rel} (as indexed)")
    return min(r["start_line"] for r in rows), max(r["end_line"] for r in rows)


def _is_file(repo: str, rel: str) -> bool:
    try:
        return Path(repo, rel).is_file()
    except (OSError, ValueError):   # a name too long for the OS is no file either
        return False
