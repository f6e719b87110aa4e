"""Plain data for the relationships layer: per-file facts in, edges out.

``FileFacts`` is everything the graph needs to know about one file (what it
defines, what it references, what it links to); ``Edge`` is one relationship
between two files or symbols. Plain data only, no I/O.
"""

from __future__ import annotations

import re
import sys
from array import array
from functools import lru_cache
from pathlib import PurePosixPath
from typing import NamedTuple

# package: importing pkg.sub runs pkg/__init__.py first (kept apart from imports, which
# are what the file names). import_time: a call that runs when its module is imported
# (module level before ``if __name__``, class bodies, constants' values), from the file.
EDGE_KINDS = ("imports", "references", "calls", "tests", "documents", "config", "co_change",
              "package", "import_time")
# How an edge was found: resolved (through the file's imports/scopes to a unique
# definition), inferred (class or type reasoning: self.x, a method of the enclosing
# class), coverage (observed by a test run), name_match (only a name agrees), git, link.
HOWS = ("resolved", "inferred", "coverage", "name_match", "link", "git")


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


_REF_KINDS: list[str] = []          # ref kind code -> kind (grows as parsers add kinds)
_REF_CODES: dict[str, int] = {}
_SELF_ATTR = re.compile(r"(?:self|cls)\.([A-Za-z_]\w*)")


def ref_code(kind: str) -> int:
    code = _REF_CODES.get(kind)
    if code is None:
        code = _REF_CODES[kind] = len(_REF_KINDS)
        _REF_KINDS.append(sys.intern(kind))
        if code > 255:
            raise ValueError("more than 256 reference kinds")
    return code


class FileFacts:
    """One file's facts. ``refs`` are kept packed in columns (a byte per kind, an
    int32 per line, shared strings), half a million of them on the stdlib; the
    property hands out ``Ref`` tuples, ``refs_of`` only those of some kinds."""

    __slots__ = ("realm", "repo", "path", "lang", "status", "defs", "links", "manifest",
                 "_kinds", "_names", "_modules", "_lines", "_scopes")

    def __init__(self, realm: str, repo: str, path: str, lang: str, status: str = "indexed",
                 defs: list[Def] | None = None, refs: list[Ref] | None = None,
                 links: list[LinkFact] | None = None, manifest: dict | None = None):
        self.realm, self.repo, self.path, self.lang, self.status = realm, repo, path, lang, status
        self.defs = list(defs) if defs is not None else []
        self.links = list(links) if links is not None else []
        self.manifest = manifest   # read from go.mod / package.json / tsconfig.json / Cargo.toml
        self.refs = refs or []

    def __reduce__(self):
        # Kind codes are numbered per process (first use): pickle the kinds by name.
        return (FileFacts, (self.realm, self.repo, self.path, self.lang, self.status,
                            self.defs, self.refs, self.links, self.manifest))

    @property
    def refs(self) -> list[Ref]:
        return [Ref(_REF_KINDS[k], n, m, ln, s) for k, n, m, ln, s in self._columns()]

    @refs.setter
    def refs(self, refs) -> None:
        self.set_refs([r[0] for r in refs], [r[1] for r in refs], [r[2] for r in refs],
                      [r[3] for r in refs], [r[4] for r in refs])

    def set_refs(self, kinds, names, modules, lines, scopes) -> None:
        """Pack parallel columns (kind, name, module, line, scope) of references;
        ``kinds`` as names, or as bytes of ``ref_code``s already."""
        self._kinds = kinds if isinstance(kinds, bytes) else bytes(ref_code(k) for k in kinds)
        self._names = tuple(names)
        self._modules = tuple(modules) if any(m is not None for m in modules) else None
        self._lines = array("i", lines)
        self._scopes = tuple(scopes) if any(s is not None for s in scopes) else None

    def self_attributes(self) -> set[str]:
        """Names used as ``self.x`` / ``cls.x`` (a receiver or value as written,
        ``self.x.m()``, ``len(self.x)``) or called on ``self`` (``self.x(...)``): one pass
        over the name and module columns, no ``Ref`` built."""
        mods = self._modules
        if mods is None:
            return set()
        out = set()
        for name, m in zip(self._names, mods):
            if m is None:
                continue
            if m == "self" or m == "cls":
                out.add(name)
            elif m.startswith(("self.", "cls.")) and (hit := _SELF_ATTR.match(m)):
                out.add(hit.group(1))
        return out

    def refs_of(self, *kinds: str) -> list[Ref]:
        """The references of some kinds only, in order (without unpacking the rest)."""
        codes = [_REF_CODES[k] for k in kinds if k in _REF_CODES]
        if not codes:
            return []
        packed = self._kinds
        if len(codes) == 1:
            at = list(_positions(packed, codes[0]))
        else:
            at = sorted(i for c in codes for i in _positions(packed, c))
        names, lines, kinds = self._names, self._lines, _REF_KINDS
        mods = self._modules or _nones(len(packed))
        scopes = self._scopes or _nones(len(packed))
        # tuple.__new__ skips NamedTuple's Python-level __new__: refs_of makes ~3M
        # Refs in a stdlib graph build, a tenth of the build's time
        return [_tuple_new(Ref, (kinds[packed[i]], names[i], mods[i], lines[i], scopes[i]))
                for i in at]

    def _columns(self):
        n = len(self._kinds)
        return zip(self._kinds, self._names, self._modules or (None,) * n, self._lines,
                   self._scopes or (None,) * n)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.realm, self.repo, self.path)

    def __repr__(self) -> str:
        return (f"FileFacts({self.realm!r}, {self.repo!r}, {self.path!r}, {self.lang!r}, "
                f"{self.status!r}, defs={len(self.defs)}, refs={len(self._kinds)}, "
                f"links={len(self.links)})")


_tuple_new = tuple.__new__


def _nones(n: int) -> tuple:
    return (None,) * n


def _positions(packed: bytes, code: int):
    i = packed.find(code)
    while i >= 0:
        yield i
        i = packed.find(code, i + 1)


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


# The reason an unresolved reference gives when a method name is used on a value of
# no known type in the file defining it (edges._note_own_method, dunder._note_untyped);
# Graph._untyped_seeds follows such notes.
UNTYPED = "untyped receiver"


def is_dunder(symbol: str) -> bool:
    """Is the symbol's last part a ``__name__`` (a method the interpreter calls)?"""
    name = symbol.rsplit(".", 1)[-1]
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def under_test_dir(path: str) -> bool:
    """Does the file live in a ``tests``/``test``/``__tests__`` folder?"""
    return any(part in TEST_DIRS for part in path.split("/")[:-1])


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """Test files by convention (Python, Go, JS/TS) or by living under a test dir."""
    name = path.rsplit("/", 1)[-1]
    if under_test_dir(path):
        return True
    if name.endswith(".py"):
        return name.startswith("test_") or name.endswith("_test.py")
    if name.endswith("_test.go"):
        return True
    stem = name.rsplit(".", 1)[0]
    return stem.endswith((".test", ".spec")) and name.rsplit(".", 1)[-1] in (
        "ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts")


# source files a test runner runs when they sit under a test dir (Go and Python name theirs)
RUNNABLE_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".rs",
                     ".java", ".rb", ".c", ".cc", ".cpp", ".cxx", ".sh", ".bash")


@lru_cache(maxsize=65536)
def is_test_module(path: str) -> bool:
    """A file a test runner runs, not support under a test dir: for Python pytest's own
    ``test_*.py`` / ``*_test.py`` (a helper, ``conftest.py`` or ``__init__.py`` is not),
    for Go ``*_test.go``, elsewhere a source file; never data (templates, fixtures, zips)."""
    if not is_test_path(path):
        return False
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        return name.startswith("test_") or name.endswith("_test.py")
    if name.endswith(".go"):
        return name.endswith("_test.go")
    return name.endswith(RUNNABLE_SUFFIXES)


@lru_cache(maxsize=8192)
def enclosing(qualname: str | None) -> tuple[str, ...]:
    """``A.b.c`` -> (``A.b.c``, ``A.b``, ``A``): the symbols a use inside it sits in,
    innermost first. Cached: a stdlib graph build asks it 1.4M times, and 8,192 kept
    answer 94% of them (65,536 answered 95% and held 13 MB)."""
    parts = qualname.split(".") if qualname else []
    return tuple(".".join(parts[:n]) for n in range(len(parts), 0, -1))

