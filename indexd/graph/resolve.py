"""Import resolution against the files of one realm.

Owns ``RealmIndex`` (which files exist, which directories, which names each
file defines, manifests) and turns a file's import references into
``Target``s: the file (and, for imported names, the definition) each import
points at, or an external name when nothing in the realm provides it.
Python lives here; JS/TS, Go and Rust in ``resolve_langs``. Pure: facts in,
targets out.

Python rules: ``import a.b`` -> a/b.py or a/b/__init__.py (longest existing
prefix); ``from m import x`` -> m/x.py when x is a submodule, else m's file
with x as the symbol; relative imports climb from the importer's package.
Roots searched: the repo root, ``src/``, then package roots that contain the
importer, then the importer's own directory when it is not a package; then
the same roots (``""``, ``src``) of the realm's other repos.
"""

from __future__ import annotations

import posixpath
from collections import OrderedDict, defaultdict
from typing import NamedTuple

from .class_values import bound_class_attributes
from .containers import filled_attributes
from .model import Def, FileFacts

PY_SUFFIXES = (".py", "/__init__.py", ".pyi", "/__init__.pyi")
SHARED_ROOTS = ("", "src")


class Target(NamedTuple):
    line: int
    spec: str                # module text as written
    name: str | None         # the imported name (from-imports), None for modules
    repo: str | None         # resolved file; None when external
    path: str | None
    symbol: str | None       # qualname of the imported definition, when found
    scope: str | None = None
    def_at: tuple[str, str] | None = None  # where symbol is defined, if not in path (re-export)


class RealmIndex:
    """What exists in one realm, kept current by add/remove."""

    # Called inside the long loops of a file's edges (edges.py, dunder.py, passed.py):
    # Graph.build sets it to its pause while it builds, so a save need not wait for a
    # file whose edges take 100-450 ms (the stdlib's biggest tests); else it does nothing.
    @staticmethod
    def checkpoint() -> None:
        return None

    def __init__(self, facts: list[FileFacts] = ()):
        self.files: dict[tuple[str, str], FileFacts] = {}
        self.dirs: dict[tuple[str, str], set[str]] = defaultdict(set)  # (repo, dir) -> names
        self.defs_by_name: dict[str, set[tuple[str, str]]] = defaultdict(set)
        # attribute name -> files filling or binding a list of that name (containers.py)
        self.fills_by_attr: dict[str, set[tuple[str, str]]] = defaultdict(set)
        # attribute name -> files binding it in a class body (class_values.py)
        self.class_values_by_attr: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.manifests: dict[tuple[str, str], dict] = {}
        self._py_roots: dict[str, list[str]] = {}
        self._named: dict[tuple[str, str], dict[str, list[Def]]] = {}
        self._repos: dict[str, int] = defaultdict(int)
        # Answers derived from the whole index (class members along bases, other
        # files' import scopes): valid until the next add/remove.
        self.memo: dict = {}
        # Each file's binding table (graph/types.py _bindings), for the last files
        # asked only: one per file of the realm held ~30 MB of the stdlib's graph.
        self.binds: OrderedDict = OrderedDict()
        # What a receiver holds, per (repo, path, receiver, scope), for the file being
        # computed only (edges.file_edges empties it): its references and its dunder
        # uses ask the same receivers again (a third of the asks on the stdlib).
        self.held: dict = {}
        for f in facts:
            self.add(f)

    def __getstate__(self) -> dict:
        # a snapshot (graph/snapshot.py) keeps what exists, not the memos made from it
        state = dict(self.__dict__)
        state["memo"], state["binds"], state["held"] = {}, OrderedDict(), {}
        state.pop("checkpoint", None)   # a build's pause, set only while it runs
        return state

    # -- maintenance -------------------------------------------------------
    def add(self, f: FileFacts) -> None:
        self.memo.clear()
        key = (f.repo, f.path)
        if key in self.files:
            self.remove(f.repo, f.path)
        self.files[key] = f
        self._repos[f.repo] += 1
        self._named.pop(key, None)
        d, base = posixpath.split(f.path)
        self.dirs[(f.repo, d)].add(base)
        for parent in _parents(d):
            self.dirs[(f.repo, parent)]
        for df in f.defs:
            self.defs_by_name[df.name].add(key)
        for table, names in self._by_attr(f):
            for attr in names:
                table[attr].add(key)
        if f.manifest:
            self.manifests[key] = f.manifest
        if base.startswith("__init__.py"):
            self._py_roots.pop(f.repo, None)

    def remove(self, repo: str, path: str) -> FileFacts | None:
        self.memo.clear()
        f = self.files.pop((repo, path), None)
        self._named.pop((repo, path), None)
        if f is None:
            return None
        self._repos[repo] -= 1
        if not self._repos[repo]:
            del self._repos[repo]
        d, base = posixpath.split(path)
        self.dirs[(repo, d)].discard(base)
        for df in f.defs:
            holders = self.defs_by_name.get(df.name)
            if holders is not None:
                holders.discard((repo, path))
                if not holders:
                    del self.defs_by_name[df.name]
        for table, names in self._by_attr(f):
            for attr in names:
                holders = table.get(attr)
                if holders is not None:
                    holders.discard((repo, path))
                    if not holders:
                        del table[attr]
        self.manifests.pop((repo, path), None)
        if base.startswith("__init__.py"):
            self._py_roots.pop(repo, None)
        return f

    def _by_attr(self, f: FileFacts) -> tuple:
        return ((self.fills_by_attr, filled_attributes(f)),
                (self.class_values_by_attr, bound_class_attributes(f)))

    # -- queries -----------------------------------------------------------
    def exists(self, repo: str, path: str) -> bool:
        return (repo, path) in self.files

    def is_dir(self, repo: str, path: str) -> bool:
        return (repo, path) in self.dirs

    def repos(self) -> list[str]:
        return sorted(self._repos)

    def files_in(self, repo: str, d: str) -> list[str]:
        return sorted(posixpath.join(d, n) if d else n for n in self.dirs.get((repo, d), ()))

    def defs(self, repo: str, path: str) -> list[Def]:
        f = self.files.get((repo, path))
        return f.defs if f is not None else []

    def defs_named(self, repo: str, path: str, name: str) -> list[Def]:
        """Definitions called ``name`` in one file (cached per file)."""
        key = (repo, path)
        named = self._named.get(key)
        if named is None:
            named = defaultdict(list)
            for d in self.defs(repo, path):
                named[d.name].append(d)
            self._named[key] = named
        return named.get(name, [])

    def py_roots(self, repo: str) -> list[str]:
        """Package roots of a repo: parents of top-level packages."""
        if repo not in self._py_roots:
            roots = set()
            for (r, path) in self.files:
                if r != repo or not path.endswith(("/__init__.py", "/__init__.pyi")):
                    continue
                pkg = posixpath.dirname(path)
                parent = posixpath.dirname(pkg)
                if not self._has_init(repo, parent):
                    roots.add(parent)
            self._py_roots[repo] = sorted(roots - set(SHARED_ROOTS), key=lambda p: (-p.count("/"), p))
        return self._py_roots[repo]

    def _has_init(self, repo: str, d: str) -> bool:
        names = self.dirs.get((repo, d), ())
        return bool(d) and ("__init__.py" in names or "__init__.pyi" in names)


def _parents(d: str):
    while d:
        d = posixpath.dirname(d)
        yield d


def find_definition(index: RealmIndex, repo: str, path: str, name: str) -> Def | None:
    """The definition of ``name`` in a file: a top-level one first."""
    best = None
    for d in index.defs(repo, path):
        if d.qualname == name:
            return d
        if best is None and d.name == name:
            best = d
    return best


def resolve_imports(index: RealmIndex, f: FileFacts) -> list[Target]:
    """Every import of a file, resolved where the realm provides the module."""
    if f.lang == "python":
        return python_targets(index, f)
    from . import resolve_langs
    return resolve_langs.targets(index, f)


# --- Python ------------------------------------------------------------------

def python_targets(index: RealmIndex, f: FileFacts) -> list[Target]:
    from_lines = {(r.name, r.line) for r in f.refs_of("import_from")}
    out: list[Target] = []
    for r in f.refs_of("import"):
        if r.module is None:
            if (r.name, r.line) not in from_lines:
                out.append(_py_import(index, f, r.name, r.line, r.scope))
        else:
            out.append(_py_from(index, f, r.module, r.name, r.line, r.scope))
    return out


def _py_import(index, f, module: str, line: int, scope) -> Target:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        hit = _py_absolute(index, f, parts[:n])
        if hit and hit[1]:
            return Target(line, module, None, hit[0], hit[1], None, scope)
    return Target(line, module, None, None, None, None, scope)


def _py_from(index, f, module: str, name: str, line: int, scope, depth: int = 3) -> Target:
    hit = _py_relative(index, f, module) if module.startswith(".") else \
        _py_absolute(index, f, module.split("."))
    if hit is None:
        return Target(line, module, name, None, None, None, scope)
    repo, file, pkg_dir = hit
    if name != "*" and pkg_dir is not None:
        sub = _py_file(index, repo, posixpath.join(pkg_dir, name) if pkg_dir else name)
        if sub:
            return Target(line, module, name, repo, sub, None, scope)
    if file is None:
        return Target(line, module, name, None, None, None, scope)
    if name == "*":
        return Target(line, module, name, repo, file, None, scope)
    found = _py_definer(index, repo, file, name, depth)
    if found is None:
        return Target(line, module, name, repo, file, None, scope)
    where, qual = found
    return Target(line, module, name, repo, file, qual, scope,
                  where if where != (repo, file) else None)


def _py_definer(index, repo, file, name, depth: int = 3):
    """((repo, path), qualname) defining ``name``, following re-exports (memoised: a
    name a module lacks is looked for through each of its ``import *``)."""
    key = ("definer", repo, file, name, depth)
    if key not in index.memo:
        index.memo[key] = _find_definer(index, repo, file, name, depth)
    return index.memo[key]


def _find_definer(index, repo, file, name, depth: int):
    d = find_definition(index, repo, file, name)
    if d is not None:
        return (repo, file), d.qualname
    f = index.files.get((repo, file))
    if f is None or depth == 0:
        return None
    for r in f.refs_of("import"):
        if r.module is not None and r.name == name:
            t = _py_from(index, f, r.module, name, r.line, None, depth - 1)
            if t.path is not None and t.symbol:
                return (t.def_at or (t.repo, t.path)), t.symbol
    for alias in f.refs_of("import_alias"):
        # `from .filters import FILTERS as DEFAULT_FILTERS` (jinja2's defaults.py)
        if alias.name != name:
            continue
        for r in f.refs_of("import"):
            if r.line == alias.line and r.module is not None and r.name == alias.module:
                t = _py_from(index, f, r.module, r.name, r.line, None, depth - 1)
                if t.path is not None and t.symbol:
                    return (t.def_at or (t.repo, t.path)), t.symbol
    if name.startswith("_"):       # `import *` leaves private names out (without __all__)
        return None
    for r in f.refs_of("import"):
        # a package's `from .functoolz import *` (toolz): `toolz.curry` is functoolz's
        if r.module is not None and r.name == "*":
            t = _py_from(index, f, r.module, name, r.line, None, depth - 1)
            if t.path is not None and t.symbol:
                return (t.def_at or (t.repo, t.path)), t.symbol
    return None


def _py_file(index: RealmIndex, repo: str, base: str) -> str | None:
    for suffix in PY_SUFFIXES:
        if index.exists(repo, base + suffix):
            return base + suffix
    return None


def _py_locate(index, repo: str, base: str):
    """(repo, module file or None, package dir or None), or None if absent."""
    file = _py_file(index, repo, base)
    pkg = base if index.is_dir(repo, base) else None
    if file is None and pkg is None:
        return None
    if file is not None and not file.endswith(("__init__.py", "__init__.pyi")):
        pkg = None
    return repo, file, pkg


def _py_absolute(index, f, parts: list[str]):
    rel = "/".join(parts)
    namespace = None  # regular modules anywhere win over namespace packages
    for repo, root in _py_search(index, f):
        hit = _py_locate(index, repo, posixpath.join(root, rel) if root else rel)
        if hit is not None and hit[1] is not None:
            return hit
        namespace = namespace or hit
    return namespace


def _py_search(index: RealmIndex, f: FileFacts):
    for root in SHARED_ROOTS:
        yield f.repo, root
    for root in index.py_roots(f.repo):
        if f.path.startswith(root + "/"):
            yield f.repo, root
    here = posixpath.dirname(f.path)
    if here and not index._has_init(f.repo, here):
        yield f.repo, here
    for repo in index.repos():
        if repo != f.repo:
            for root in SHARED_ROOTS:
                yield repo, root


def _py_relative(index, f, module: str):
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    base = posixpath.dirname(f.path)
    for _ in range(dots - 1):
        if not base:
            return None
        base = posixpath.dirname(base)
    if rest:
        base = posixpath.join(base, *rest.split(".")) if base else "/".join(rest.split("."))
    if not base:  # `from . import x` outside any package
        return f.repo, None, ""
    return _py_locate(index, f.repo, base)
