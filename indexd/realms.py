"""Realm membership: validate and edit the [realms] table of config.toml
(through config_edit: locked, atomic, the user's comments kept).

Used by the CLI when no daemon runs and by the daemon's realm.* methods, so
there is one implementation of the rules. No engine imports.
"""

from __future__ import annotations

import re
from pathlib import Path

from .config import Settings
from .config_edit import edit_realms
from .errors import ConfigError, RealmError
from .model import inside

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def normalise_repo(path: str) -> str:
    p = Path(path).expanduser()
    if not p.exists():
        raise RealmError(f"no such directory: {path}")
    if not p.is_dir():
        raise RealmError(f"not a directory: {path}")
    return str(p.resolve())


def add_repos(settings: Settings, realm: str, paths: list[str]) -> dict:
    if not _NAME.match(realm):
        raise ConfigError(f"bad realm name {realm!r}: use letters, digits, '_', '.', '-'")
    if not paths:
        raise RealmError("realm add needs at least one path")
    wanted = [normalise_repo(p) for p in paths]

    def add(realms: dict[str, list[str]]) -> dict:   # the file's current realms, not ours
        repos = realms.setdefault(realm, [])
        added = []
        for repo in wanted:
            if repo not in repos:
                _refuse_overlap(realm, repo, repos)
                repos.append(repo)
                added.append(repo)
        return {"realm": realm, "added": added, "repos": list(repos)}

    return edit_realms(settings.paths, add)


def _refuse_overlap(realm: str, repo: str, repos: list[str]) -> None:
    """One realm's roots never nest: a file under both would be indexed twice (every
    search hit doubled) and watched twice."""
    for other in repos:
        within, around = inside(other, repo), inside(repo, other)   # never equal here
        if not (within or around):
            continue
        where = (f"{repo} is inside {other}, already in realm {realm!r}: its files are "
                 "indexed there" if within else
                 f"{repo} holds {other}, already in realm {realm!r}")
        raise RealmError(f"{where}. A realm's folders must not nest; to have git repos under "
                         f"a folder as repos of their own (changes, owners, tests affected), "
                         f"add the repos one by one instead of the folder holding them")


def remove_repos(settings: Settings, realm: str, paths: list[str] | None) -> dict:
    targets = {str(Path(p).expanduser().resolve()) for p in paths or ()}

    def remove(realms: dict[str, list[str]]) -> dict:
        if realm not in realms:
            raise RealmError(f"unknown realm {realm!r}")
        if not targets:
            return {"realm": realm, "removed": realms.pop(realm)}
        removed = [r for r in realms[realm] if r in targets]
        missing = targets - set(removed)
        if missing:
            raise RealmError(f"not in realm {realm!r}: {', '.join(sorted(missing))}")
        realms[realm] = [r for r in realms[realm] if r not in targets]
        return {"realm": realm, "removed": removed}

    return edit_realms(settings.paths, remove)


def list_realms(settings: Settings) -> dict:
    return {"realms": [{"name": n, "repos": list(r)} for n, r in sorted(settings.realms.items())]}


def locate(settings: Settings, path: str) -> tuple[str, str, str]:
    """(realm, repo, repo-relative path) for an absolute or cwd-relative path.

    Refuses anything outside every realm (including ``..`` tricks and
    symlinks resolving elsewhere).
    """
    p = Path(path).expanduser()
    target = p.resolve() if p.is_absolute() or p.exists() else (Path.cwd() / p).resolve()
    best = None
    for realm, repos in settings.realms.items():
        for repo in repos:
            root = Path(repo)
            if target == root or root in target.parents:
                if best is None or len(repo) > len(best[1]):
                    best = (realm, repo, target.relative_to(root).as_posix())
    if best is None:
        raise RealmError(f"{path} is not inside any realm; add it with: "
                         f"indexctl realm add NAME DIR")
    return best
