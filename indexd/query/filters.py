"""Checks of search's filter values against what the index can hold.

A typo in ``--kind``/``--lang``/``--repo`` used to answer "0 results", which
reads as "no such symbol". The known values come from the parsers (the
definition captures of the shipped queries, the languages detected) and from
the realms in the settings, so the error lists what would have matched.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath

from ..errors import InvalidParams
from ..parse.configdoc import LANGUAGES as CONFIG_LANGUAGES
from ..parse.languages import EXTENSIONS, GRAMMARS

# Kinds built outside the code queries: files, markdown sections, config keys,
# and a function inside a class (code.py promotes it to a method).
_DOC_KINDS = ("file", "section", "key", "method")
# search's own kind aliases (query/search.py KIND_ALIASES).
_ALIASES = ("function", "symbol")
_DEFINITION = re.compile(r"@definition\.([a-z_]+)")


@lru_cache(maxsize=1)
def known_kinds() -> frozenset[str]:
    found = set(_DOC_KINDS) | set(_ALIASES)
    for f in (resources.files("indexd.parse") / "queries").iterdir():
        if f.name.endswith(".scm"):
            found |= set(_DEFINITION.findall(f.read_text(encoding="utf-8")))
    return frozenset(found)


def known_languages() -> frozenset[str]:
    return frozenset(GRAMMARS) | frozenset(EXTENSIONS.values()) | set(CONFIG_LANGUAGES) | {"text"}


def check_filters(kind: str | None, lang: str | None) -> None:
    """InvalidParams naming the unknown value, the closest known one and the rest."""
    for name, value, known in (("kind", kind, known_kinds()), ("lang", lang, known_languages())):
        for item in _items(value):
            if item not in known:
                raise InvalidParams(f"unknown {name} {item!r}{_did_you_mean(item, known)}; "
                                    f"known: {', '.join(sorted(known))}", {name: item})


def check_repo(repo: str | None, repos: list[str]) -> None:
    """``repo`` must name one of ``repos`` by its path or its directory name."""
    if not repo or repo in repos or any(PurePosixPath(r).name == repo for r in repos):
        return
    names = repos + [PurePosixPath(r).name for r in repos]   # what people type: a folder name
    raise InvalidParams(f"unknown repo {repo!r}{_did_you_mean(repo, names)}; the realm's repos: "
                        f"{', '.join(repos) or 'none'}", {"repo": repo})


def _items(value: str | None) -> list[str]:
    return [x.strip() for x in (value or "").split(",") if x.strip()]


def _did_you_mean(value: str, known) -> str:
    close = difflib.get_close_matches(value, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
