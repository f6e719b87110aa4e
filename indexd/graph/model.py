"""Plain data for the relationships layer: per-file facts in, edges out.

``FileFacts`` is everything the graph needs to know about one file (what it
defines, what it references, what it links to); ``Edge`` is one relationship
between two files or symbols. Frozen/plain dataclasses only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import NamedTuple

EDGE_KINDS = ("imports", "references", "calls", "tests", "documents", "config", "co_change")
HOWS = ("resolved", "name_match", "link", "git")


class Def(NamedTuple):
    kind: str
    qualname: str
    name: str
    start: int
    end: int


class Ref(NamedTuple):
    kind: str            # import | import_from | import_default | call | attribute | type | config | mod | code_span
    name: str
    module: str | None
    line: int
    scope: str | None    # qualname of the enclosing symbol


class LinkFact(NamedTuple):
    kind: str            # file | anchor | url
    target: str
    line: int
    broken: bool


@dataclass
class FileFacts:
    realm: str
    repo: str            # absolute POSIX path of the repo root
    path: str            # repo-relative POSIX path
    lang: str
    status: str = "indexed"
    defs: list[Def] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    links: list[LinkFact] = field(default_factory=list)
    manifest: dict | None = None   # facts read from go.mod / package.json / tsconfig.json / Cargo.toml

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.realm, self.repo, self.path)


class Edge(NamedTuple):
    """One relationship; src/dst symbol None means the file itself."""

    kind: str
    src_repo: str
    src_path: str
    src_symbol: str | None
    dst_repo: str
    dst_path: str
    dst_symbol: str | None
    line: int
    how: str             # resolved | name_match | link | git
    weight: float = 1.0  # name_match: Aider-style name weight; git: confidence
    realm: str = ""
    support: int = 0     # co_change: commits in which both files changed


def repo_name(repo: str) -> str:
    return PurePosixPath(repo).name or repo


def node_label(repo: str, path: str, symbol: str | None) -> str:
    base = f"{repo_name(repo)}/{path}"
    return f"{base}::{symbol}" if symbol else base


TEST_DIRS = ("tests", "test", "__tests__")


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """Test files by convention (Python, Go, JS/TS) or by living under a test dir."""
    parts = path.split("/")
    name = parts[-1]
    if any(part in TEST_DIRS for part in parts[:-1]):
        return True
    if name.endswith(".py"):
        return name.startswith("test_") or name.endswith("_test.py")
    if name.endswith("_test.go"):
        return True
    stem = name.rsplit(".", 1)[0]
    return stem.endswith((".test", ".spec")) and name.rsplit(".", 1)[-1] in (
        "ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts")
