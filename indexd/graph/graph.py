"""``Graph``: the relationships of every indexed file, kept warm in memory.

Owns the edge set and its indexes (each file's edges, packed column-wise in
``packed.Packed``; which files have edges into each file and into each of its
symbols; which files depend on which index keys) and keeps them current one
file at a time: ``update_file`` re-resolves that file's outgoing edges plus
only the files whose answers could change, found through a reverse index of
what each file's edges depended on (``wants``): files referencing a name the
file added, removed or moved; files whose imports it may now satisfy or
break (new/deleted files); docs linking to its line ranges. A body edit
recomputes one file; a save never rebuilds the graph (package markers and
manifests, which change module roots, recompute their realm). Queries
(impact, deps, refs, related, export) are answered from memory.
"""

from __future__ import annotations

import gc
import posixpath
import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Callable

from . import export as _export
from . import externals
from .class_values import moved_class_attributes
from .containers import filled_attributes
from .dispatch import computed_dispatch, upper_name
from ..errors import Stopping
from .edge_cache import EdgeListCache
from .edges import (FileResult, _class_quals, class_and_bases, file_edges, outside_base,
                    overridden_method, test_subclasses)
from .impact import (TESTS_HOW, TESTS_KINDS, Visit, any_truncated, bounded, combined, confidence,
                     guess_seeds, item, rank, tests_walk, walk)
from .import_time import CALL_KINDS, import_time_tests, importing_tests
from .model import (UNTYPED, Edge, FileFacts, enclosing, is_dunder, is_test_path, node_label,
                    repo_name, under_test_dir)
from .packed import Packed
from .passed import CALLABLE_KINDS
from .properties import named_quals, property_quals
from .resolve import RealmIndex
from .types import _bindings, _def_kinds, bound_in_function
from .targets import looks_like_symbol, symbol_nodes

STORES = ("attr_store", "subscript_store", "subscript_update", "subscript_del")
# Modules that start other processes: code they run is no coverage of this process's.
PROCESS_MODULES = frozenset(("subprocess", "multiprocessing", "concurrent", "pexpect", "sh"))
STOP_EVERY = 50   # files computed between two looks at Graph.build's stop
# Graph.build's pause comes before every file (every fifth let a save share the GIL
# for ~50 ms) and inside a file every INSIDE_EVERY distinct look-ups (~1 ms of work).
INSIDE_EVERY = 32

FULL_REALM_FILES = ("__init__.py", "__init__.pyi", "go.mod", "package.json", "tsconfig.json",
                    "jsconfig.json", "Cargo.toml")


class _Pauses:
    """A build's waits at its ``pause``: before each file, and every INSIDE_EVERY
    checkpoints of a file's own loops (RealmIndex.checkpoint). They add up to at
    most the build's own time, so a stream of saves cannot starve it."""

    def __init__(self, pause: Callable[[], None]):
        self.pause = pause
        self.started = time.monotonic()
        self.paused = 0.0
        self.calls = 0

    def __call__(self) -> None:
        if self.paused < time.monotonic() - self.started - self.paused:
            t0 = time.monotonic()
            self.pause()
            self.paused += time.monotonic() - t0

    def inside(self) -> None:
        self.calls += 1
        if self.calls % INSIDE_EVERY == 0:
            self()


class BuildStopped(Stopping):
    """Graph.build's ``stop`` said to give up (the daemon is stopping)."""


def _provides(f: FileFacts) -> set[tuple]:
    """Index keys a file satisfies: its module names, its path, its names."""
    d, base = posixpath.split(f.path)
    keys = {("module", base.split(".", 1)[0]), ("module", posixpath.basename(d)),
            ("path", f.repo, f.path)}
    return keys | {("name", x.name) for x in f.defs}


def _unreached(untyped: dict, more, known: dict, handed_out) -> list[str]:
    """Labels of the untyped uses (``Graph._untyped_seeds``) from which the guess walk
    reached no test and nothing the trusted walk reached, but did reach (or start at) a
    function handed out by the function defining it (``handed_out``: nested, and nothing
    an edge names calls it; returned, stored or registered): code that may run the target
    on a value of no known type, called by what no edge follows. cachetools'
    ``getinfo`` reads ``cache.maxsize`` and runs from ``cache_info``, hung on the wrapper
    ``cached`` returns. A use whose callers all end in code no test runs (a ``main``
    nothing calls) runs in no test either."""
    reached = {s for s in untyped if is_test_path(s[2])}
    unseen = {s for s in untyped if handed_out(s)}
    for node, v in more.visits.items():
        if node in untyped:
            continue
        start = next((s for e in v.via      # node -> ... -> the start it came from
                      if (s := (e.realm, e.src_repo, e.src_path, e.src_symbol)) in untyped),
                     None)
        if start is None:
            continue
        if is_test_path(node[2]) or node in known:
            reached.add(start)
        elif handed_out(node):
            unseen.add(start)
    return sorted(node_label(*s[1:]) for s in unseen - reached)


def _return_types(f: FileFacts | None) -> set[tuple]:
    """(function name, its return annotation / a value it returns or yields / that it is
    a pytest fixture): no definition, but what other files' instance types are made of
    (``a = make(); a.run()``, a test's ``runner`` fixture: graph/types.py, fixtures.py)."""
    if f is None:
        return set()
    from .fixtures import fixture_quals

    out = {(r.name, r.module) for r in f.refs_of("returns")}
    out |= {(r.scope.rsplit(".", 1)[-1], f"{r.kind} {r.module}")
            for r in f.refs_of("return_value", "yields") if r.scope}
    # `h = f(g)` at module level: what a call h() elsewhere may run (graph/passed.py)
    out |= {(r.name, f"passes {r.module}") for r in f.refs_of("bind_passes") if r.scope is None}
    return out | {(q.rsplit(".", 1)[-1], "fixture") for q in fixture_quals(f)}




@contextmanager
def _gc_paused():
    """A deep walk allocates millions of short-lived tuples and dicts (edges rebuilt
    from their packed form, nodes, visits, answer rows) and no cycles; the
    collector passes they trigger cost a third of a deep impact on the stdlib
    (docs/benchmarks.md). Queries hold the graph lock, so they do not overlap."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Graph:
    # impact's walk examines at most this many edges per list item asked for (``limit``),
    # and at least the minimum: a hub's answer costs the budget, not the whole graph
    # (docs/benchmarks.md, impact_latency). ``limit=None`` (tests affected, changes)
    # walks everything: test selection needs every test more than speed.
    walk_edges_per_item = 25
    walk_min_edges = 5_000
    # the tests walk (trusted edges, any depth; impact.tests_walk) gets this share of
    # that budget on top
    tests_walk_share = 0.5
    # the walk from one name match on (``_add_one_guess_tests``) examines at most this
    # many edges even unbounded (``tests affected``): on the stdlib's hubs it otherwise
    # walks most of the graph for tests that are weak evidence anyway (docs/benchmarks.md)
    guess_walk_edges = 100_000
    # built incoming-edge lists kept between queries (edge_cache.py): ~30 MB at most
    incoming_cache_edges = 150_000

    def __init__(self):
        self.in_cache = EdgeListCache(self.incoming_cache_edges)
        self.facts: dict[tuple, FileFacts] = {}
        self.indexes: dict[str, RealmIndex] = {}
        self.results: dict[tuple, Packed] = {}
        # dst file -> src file -> the dst's index in the src's Packed result
        # (co-change: ("git", *src) -> its edges)
        self.rev: dict[tuple, dict[tuple, int | list[Edge]]] = defaultdict(dict)
        # dst file -> symbol (and each enclosing symbol) -> src files with edges landing there
        self.rev_sym: dict[tuple, dict[str, list[tuple]]] = defaultdict(dict)
        self.canon: dict[tuple, tuple] = {}   # one shared tuple per file key and index key
        self.wants: dict[tuple, set[tuple]] = defaultdict(set)              # (realm, key) -> srcs
        self.prefixes: dict[str, set[str]] = defaultdict(set)   # realm -> dispatch starts wanted
        self.cochange: dict[tuple, list[Edge]] = defaultdict(list)          # file -> edges out
        self.by_path: dict[str, set[tuple]] = defaultdict(set)
        # (realm, kind, name or last part) -> src file -> its unresolved references so named
        self.unresolved: dict[tuple, dict[tuple, list[tuple]]] = defaultdict(dict)
        self.recomputed = 0   # files whose edges were (re)computed, for tests and stats

    def __getstate__(self) -> dict:
        # what a snapshot keeps (graph/snapshot.py): not the built incoming lists
        state = dict(self.__dict__)
        state["in_cache"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.in_cache = EdgeListCache(self.incoming_cache_edges)

    # -- building ----------------------------------------------------------
    def build(self, facts: list[FileFacts], cochange_edges: list[Edge] = (),
              stop: Callable[[], bool] | None = None,
              pause: Callable[[], None] | None = None) -> Graph:
        """``stop``: asked every STOP_EVERY files; true raises BuildStopped.
        ``pause``: called before each file and inside long ones, may block (the
        daemon: while a save is parsed and written, whose Python this build's would
        slow by half on the GIL); its waits add up to at most the build's own time."""
        self.__init__()
        for f in facts:
            self._add_facts(f)
        pauses = _Pauses(pause) if pause is not None else None
        if pauses is not None:
            for index in self.indexes.values():
                index.checkpoint = pauses.inside
        try:
            for i, key in enumerate(list(self.facts)):
                if stop is not None and i % STOP_EVERY == 0 and stop():
                    raise BuildStopped(f"stopped after {i} of {len(self.facts)} files")
                if pauses is not None:
                    pauses()
                self._compute(key)
        finally:
            for index in self.indexes.values():
                index.__dict__.pop("checkpoint", None)   # updates later run on the writer
        for e in cochange_edges:
            self.add_cochange(e)
        # The build's memos (class members along bases, other files' scopes, binding
        # types) are what the first incremental update drops anyway (RealmIndex.add):
        # not kept in the warm graph for good.
        for index in self.indexes.values():
            index.memo.clear()
            index.binds.clear()     # 11 MB on the stdlib; made again when asked
            index.held.clear()
        return self

    def add_cochange(self, e: Edge) -> None:
        src, dst = (e.realm, e.src_repo, e.src_path), (e.realm, e.dst_repo, e.dst_path)
        if src in self.facts and dst in self.facts:
            self.in_cache.clear()
            self.cochange[src].append(e)
            self.rev[dst].setdefault(("git",) + src, []).append(e)

    def drop_cochange(self, realm: str, repo: str) -> None:
        """Forget a repo's co-change edges (before adding a fresh set)."""
        self.in_cache.clear()
        for src in [k for k in self.cochange if k[0] == realm and k[1] == repo]:
            for e in self.cochange.pop(src):
                dst = (e.realm, e.dst_repo, e.dst_path)
                self.rev.get(dst, {}).pop(("git",) + src, None)

    def _add_facts(self, f: FileFacts) -> None:
        key = self.canon.setdefault(f.key, f.key)
        self.facts[key] = f
        self.indexes.setdefault(f.realm, RealmIndex()).add(f)
        self.by_path[f.path].add(f.key)

    def _compute(self, key: tuple) -> None:
        self._drop_result(key)
        self.in_cache.clear()
        f = self.facts.get(key)
        if f is None:
            return
        key = self.canon.setdefault(key, key)
        res = Packed(key, file_edges(self.indexes[f.realm], f), self.canon)
        self.recomputed += 1
        self.results[key] = res
        for d, dst in enumerate(res.dsts):
            self.rev[dst][key] = d
        for d, sym in res.dst_symbols():
            by_sym = self.rev_sym[res.dsts[d]]
            for s in enclosing(sym):
                srcs = by_sym.setdefault(s, [])
                if not srcs or srcs[-1] is not key:   # one compute appends one key at a time
                    srcs.append(key)
        for w in res.wants:
            self.wants[(f.realm, w)].add(key)
            if w[0] == "prefix":
                self.prefixes[f.realm].add(w[1])
        for name_key, refs in _unresolved_index(res).items():
            self.unresolved[(f.realm, *name_key)][key] = refs

    def _drop_result(self, key: tuple) -> None:
        old = self.results.pop(key, None)
        if old is None:
            return
        self.in_cache.clear()
        for dst in old.dsts:
            self.rev.get(dst, {}).pop(key, None)
        for d, sym in set(old.dst_symbols()):
            by_sym = self.rev_sym.get(old.dsts[d], {})
            for s in enclosing(sym):
                srcs = by_sym.get(s)
                if srcs and key in srcs:
                    srcs.remove(key)
        for w in old.wants:
            self.wants.get((key[0], w), set()).discard(key)
        for name_key in _unresolved_index(old):
            self.unresolved.get((key[0], *name_key), {}).pop(key, None)

    # -- incremental -------------------------------------------------------
    def update_file(self, facts: FileFacts) -> int:
        """Replace one file's facts; returns how many files were recomputed."""
        key = facts.key
        old = self.facts.get(key)
        before = self.recomputed
        if old is not None:
            self.facts[key] = facts
            self.indexes[facts.realm].add(facts)
        else:
            self._add_facts(facts)
        if posixpath.basename(facts.path) in FULL_REALM_FILES and (
                old is None or old.manifest != facts.manifest):
            self._recompute_realm(facts.realm)
        else:
            for k in self._dirty(old, facts) | {key}:
                self._compute(k)
        return self.recomputed - before

    def remove_file(self, realm: str, repo: str, path: str) -> int:
        key = (realm, repo, path)
        old = self.facts.pop(key, None)
        if old is None:
            return 0
        before = self.recomputed
        self.in_cache.clear()
        self.indexes[realm].remove(repo, path)
        self.by_path[path].discard(key)
        self._drop_result(key)
        for e in self.cochange.pop(key, []):
            self.rev.get((e.realm, e.dst_repo, e.dst_path), {}).pop(("git",) + key, None)
        for src in list(self.rev.get(key, {})):
            if len(src) == 4:
                self.cochange[src[1:]] = [e for e in self.cochange[src[1:]]
                                          if (e.dst_repo, e.dst_path) != (repo, path)]
        if posixpath.basename(path) in FULL_REALM_FILES:
            self._recompute_realm(realm)
        else:
            for k in self._dirty(old, None):
                self._compute(k)
        self.rev.pop(key, None)
        self.rev_sym.pop(key, None)
        return self.recomputed - before

    def _dirty(self, old: FileFacts | None, new: FileFacts | None) -> set[tuple]:
        f = new or old
        realm = f.realm
        dirty: set[tuple] = set()
        old_defs = {(d.kind, d.qualname, d.name) for d in old.defs} if old else set()
        new_defs = {(d.kind, d.qualname, d.name) for d in new.defs} if new else set()
        if old is None or new is None:
            for k in _provides(f):
                dirty |= self.wants.get((realm, k), set())
        starts = self.prefixes.get(realm, ())
        for name in {d[2] for d in old_defs ^ new_defs} | {
                n for n, _ in _return_types(old) ^ _return_types(new)}:
            dirty |= self.wants.get((realm, ("name", name)), set())
            for start in starts:        # getattr(self, f"visit_{x}"): graph/dispatch.py
                if name.startswith(start):
                    dirty |= self.wants.get((realm, ("prefix", start)), set())
            if upper_name(name):        # getattr(self, x.upper()) too
                dirty |= self.wants.get((realm, ("upper",)), set())
        # a file filling (or binding) a list attribute changes what iterating it holds
        # anywhere: any edit of it, since its receivers' classes may have moved too
        if f.lang == "python":
            for attr in filled_attributes(old) | filled_attributes(new):
                dirty |= self.wants.get((realm, ("fills", attr)), set())
            # and so does binding a class attribute (graph/class_values.py)
            for attr in moved_class_attributes(old, new):
                dirty |= self.wants.get((realm, ("class_value", attr)), set())
        # Name-based answers are covered by wants; line-anchored doc links
        # (``file.py#L10``) also depend on line ranges.
        if old is not None and new is not None and old.defs != new.defs:
            dirty |= {k for k in self.rev.get(f.key, {}) if len(k) == 3
                      and self.facts.get(k) and self.facts[k].lang == "markdown"}
        return {k for k in dirty if k in self.facts}

    def _recompute_realm(self, realm: str) -> None:
        for key in [k for k in self.facts if k[0] == realm]:
            self._compute(key)

    # -- lookups -----------------------------------------------------------
    def edges(self, kinds=None) -> list[Edge]:
        out = [e for r in self.results.values() for e in r.edges]
        out += [e for es in self.cochange.values() for e in es]
        return [e for e in out if not kinds or e.kind in kinds]

    def edge_count(self) -> int:
        return sum(map(len, self.results.values())) + sum(map(len, self.cochange.values()))

    def broken_links(self, realm: str | None = None) -> list[dict]:
        return [{"realm": k[0], "repo": k[1], "path": k[2], **b}
                for k, r in sorted(self.results.items()) if realm in (None, k[0])
                for b in r.broken or ()]

    def resolve_target(self, target: str) -> list[tuple]:
        """'repo_name/path', an absolute path, a unique repo-relative path or a
        directory, optionally '::Qualified.name'; or, where no path matches, a
        symbol's name alone (targets.py) -> nodes. Raises KeyError."""
        path, sep, symbol = target.partition("::")
        path = path.rstrip("/")
        keys = self._files_for(path)
        if not keys and not sep and looks_like_symbol(path):
            return symbol_nodes(self.facts, path)
        if not keys:
            raise KeyError(f"no indexed file matches {path!r}")
        if symbol:
            found = [k + (symbol,) for k in keys
                     if any(d.qualname == symbol for d in self.facts[k].defs)]
            if not found:
                raise KeyError(f"{symbol!r} is not defined in {path!r}")
            return found
        return [k + (None,) for k in keys]

    def _files_for(self, path: str) -> list[tuple]:
        hits = [k for k in self.facts if path.startswith(k[1].rstrip("/") + "/")
                and k[2] == path[len(k[1].rstrip("/")) + 1:]] if path.startswith("/") else []
        if not hits:
            head, _, rest = path.partition("/")
            hits = [k for k in self.by_path.get(rest, ()) if repo_name(k[1]) == head]
        if not hits:
            hits = sorted(self.by_path.get(path, ()))
            if len({k[1] for k in hits}) > 1:
                names = ", ".join(sorted(f"{repo_name(k[1])}/{path}" for k in hits))
                raise KeyError(f"{path!r} is ambiguous: {names}")
        if not hits:  # a directory
            for k in self.facts:
                full = f"{k[1].rstrip('/')}/{k[2]}"
                rel = f"{repo_name(k[1])}/{k[2]}"
                if any(p.startswith(path + "/") for p in (full, rel, k[2])):
                    hits.append(k)
        return sorted(hits)

    def _file_incoming(self, node):
        """Per file with edges into node's file: those landing on no symbol (imports,
        package), a list each (import_time.py counts files, not edges)."""
        for src, at in self.rev.get(node[:3], {}).items():
            if type(at) is int:
                yield self.results[src].edges_to_file(at)

    def _tests_under(self, node) -> list[tuple]:
        """The test files of node's repo below the folder of node's file (conftest.py)."""
        realm, repo, path, _ = node
        d = posixpath.dirname(path)
        return [k + (None,) for k in self.facts if k[0] == realm and k[1] == repo
                and is_test_path(k[2]) and (not d or k[2].startswith(d + "/"))
                and posixpath.basename(k[2]) != "conftest.py"]

    def _incoming(self, node) -> tuple:
        """The edges into node, built once until the graph changes (edge_cache.py)."""
        return self.in_cache.get(node, self._build_incoming)

    def _build_incoming(self, node):
        realm, repo, path, symbol = node
        dst = (realm, repo, path)
        by_src = self.rev.get(dst, {})
        if symbol is None:
            for src, at in by_src.items():
                if type(at) is int:
                    yield from self.results[src].edges_to(at)
                else:
                    yield from at   # co-change edges
        else:
            for src in self.rev_sym.get(dst, {}).get(symbol, ()):
                yield from self.results[src].edges_to(by_src[src], symbol)

    def _outgoing(self, node):
        realm, repo, path, symbol = node
        res = self.results.get((realm, repo, path))
        if res is not None:
            yield from res.edges_from(symbol)
        if symbol is None:
            yield from self.cochange.get((realm, repo, path), [])

    def starts_processes(self, realm: str, repo: str, path: str) -> bool:
        """Does the file import a module that starts other processes (whose code no
        coverage of this one sees)? Unknown files: yes."""
        f = self.facts.get((realm, repo, path))
        if f is None:
            return True
        return any((r.module or r.name or "").split(".")[0] in PROCESS_MODULES
                   for r in f.refs_of("import", "import_from"))

    def writes_module_state(self, node) -> bool:
        """Does the Python function at ``node`` (or one nested in it) store into a
        module-level name or an imported one (``_CURRENT.locale = None``, ``os.environ[k] =
        v``, ``REGISTRY[k] = f``, ``global LEVEL``)? What it leaves there outlives the test
        that ran it."""
        realm, repo, path, symbol = node
        f = self.facts.get((realm, repo, path))
        if f is None or f.lang != "python" or not symbol:
            return False
        index = self.indexes[realm]
        classes = {d.qualname for d in f.defs if d.kind == "class"}
        top = ({d.qualname for d in f.defs if "." not in d.qualname}
               | {name for scope, name in _bindings(index, f) if scope is None}
               | {r.name.split(".")[0] for r in f.refs_of("import", "import_alias")
                  if r.scope is None and r.name})
        def inside(scope):
            return scope and (scope == symbol or scope.startswith(symbol + "."))
        # `global X` is written to rebind X (a read needs no declaration)
        if any(inside(r.scope) for r in f.refs_of("global_decl")):
            return True
        for r in f.refs_of(*STORES):
            if not r.module or not inside(r.scope):
                continue
            root = r.module.split(".")[0].split("[")[0]
            if root in top and root not in ("self", "cls") and not bound_in_function(
                    index, f, root, r.scope, classes):
                return True
        return False

    def _node_kind(self, node) -> str:
        realm, repo, path, symbol = node
        if symbol:
            for d in self.indexes[realm].defs_named(repo, path, symbol.rsplit(".", 1)[-1]):
                if d.qualname == symbol:
                    return d.kind
        return "file"

    def _completeness(self, files: set[tuple], pending) -> tuple[bool, str | None]:
        failed = sorted(k for k in files if k in self.facts and self.facts[k].status == "failed")
        realms = {k[0] for k in files}
        waiting = sorted(k for k in (pending or ()) if k in files or k[0] in realms)
        reasons = []
        if failed:
            reasons.append(f"{len(failed)} file(s) failed to parse: "
                           + ", ".join(f"{repo_name(k[1])}/{k[2]}" for k in failed[:5]))
        if waiting:
            reasons.append(f"{len(waiting)} file(s) pending reindex: "
                           + ", ".join(f"{repo_name(k[1])}/{k[2]}" for k in waiting[:5]))
        return not reasons, "; ".join(reasons) or None

    # -- queries -----------------------------------------------------------
    @_gc_paused()
    def impact(self, target: str, depth: int = 3, kinds=None, pending=None,
               limit: int | None = 200) -> dict:
        """What may break if ``target`` changes: reverse walk, scored."""
        t0 = time.perf_counter()
        named = self.resolve_target(target)
        seeds = _with_constructed_classes(named)
        incoming = self._incoming
        w = walk(seeds, incoming, depth, kinds, reverse=True, budget=self._budget(limit))
        visits, scores = w.visits, rank(seeds, w.traversed, w.visits)
        seed_files = {s[:3] for s in seeds}
        file_target = all(s[3] is None for s in seeds)
        calls = kinds is None or bool(set(kinds) & set(CALL_KINDS))
        if not file_target and calls:
            self._add_import_time(w, seeds, incoming, limit)
        deep = self._add_trusted_tests(w, seeds, incoming, kinds, limit) if calls else None
        buckets: dict[str, list] = {"affected": [], "tests": [], "docs": []}
        file_bucket: dict[tuple, str] = {}   # nodes share files: each file looked up once
        for node, v in visits.items():
            key = node[:3]
            if v.distance == 0 or (file_target and key in seed_files):
                continue
            bucket = file_bucket.get(key)
            if bucket is None:
                bucket = file_bucket[key] = self._bucket(key)
            buckets[bucket].append((-combined(scores.get(node, 0.0), v), v.distance,
                                    node[2], node[3] or "", node))
        out = {}
        for name, rows in buckets.items():
            rows.sort()
            exact = w.exhaustive and (name != "tests" or deep is None
                                      or (deep.exhaustive and not deep.guesses_cut))
            out |= bounded(name, rows, limit, [r[1] for r in rows], exact=exact)
            # only the rows shown become items: a hub's thousands stay cheap
            out[name] = [item(r[-1], visits[r[-1]], scores.get(r[-1], 0.0),
                              self._node_kind(r[-1])) for r in out[name]]
        out |= self._unresolved_for(seeds)
        files = seed_files | {n[:3] for n in visits}
        complete, reason = self._completeness(files, pending)
        return {"target": target, "resolved": _resolved_label(target, named),
                "took_ms": round((time.perf_counter() - t0) * 1000, 2),
                "complete": complete, "incomplete_reason": reason, **out,
                "limit": limit, "truncated": any_truncated(out), "walk": w.summary(),
                "tests_walk": None if deep is None else
                deep.summary() | {"untyped_unreached": deep.untyped_unreached}}

    def called_base_method(self, target: str) -> str | None:
        """The called base-class method ``target`` (a Python method) overrides, as a
        label: a call through a receiver typed as the base lands on the base's method,
        and may run this override, which no edge says. None: no such method."""
        for realm, repo, path, symbol in self.resolve_target(target):
            f = self.facts[(realm, repo, path)]
            if not symbol or f.lang != "python":
                continue
            base = overridden_method(self.indexes[realm], f, symbol)
            if base is not None and self._incoming((realm, *base)):
                return node_label(*base)
        return None

    def outside_base(self, target: str) -> str | None:
        """A base from outside the realm of ``target``'s class (a Python method), as
        written: its code may call ``target``, which no edge can say. None: none."""
        for realm, repo, path, symbol in self.resolve_target(target):
            f = self.facts[(realm, repo, path)]
            if symbol and f.lang == "python":
                base = outside_base(self.indexes[realm], f, symbol)
                if base is not None:
                    return base
        return None

    def enclosing_def(self, realm: str, repo: str, path: str, line: int) -> str | None:
        """The innermost definition of the file holding ``line`` (its qualname); None at
        module level or for a file the graph does not know."""
        f = self.facts.get((realm, repo, path))
        if f is None:
            return None
        holding = [d for d in f.defs if d.start <= line <= d.end and d.kind in CALLABLE_KINDS]
        return max(holding, key=lambda d: (d.start, -d.end)).qualname if holding else None

    def defines_tests(self, repo: str, path: str) -> bool:
        """Does a Python file that is a test module by its name only (outside a test
        folder) define anything pytest or unittest collects (a ``test*`` function or
        method, a class named ``*Test*``)? indexd's own graph/test_select.py is named so and
        holds none. Under a test folder the name decides: pytest collects such a file, and
        its import fails with the code's (marshmallow's tests/mypy_test_cases/, no tests,
        failed with every mutant that broke the import). True for other languages and for
        files the graph does not know."""
        if under_test_dir(path):
            return True
        keys = [k for k in self.by_path.get(path, ()) if k[1] == repo]
        f = self.facts.get(keys[0]) if keys else None
        if f is None or f.lang != "python":
            return True
        return any(d.name.startswith("test") if d.kind in ("function", "method")
                   else d.kind == "class" and "Test" in d.name for d in f.defs)

    def test_runners(self, items: list[dict]) -> list[dict]:
        """More test items for ``items`` (an impact's tests): a test method of a class in a
        test file (a mixin in tests/__init__.py, a base test class) also runs from each
        test module class deriving from that class, one ``inherits`` hop further."""
        out = []
        for it in items:
            cls, _, meth = (it.get("symbol") or "").rpartition(".")
            if not cls or not is_test_path(it["path"]):
                continue
            for key in sorted(k for k in self.by_path.get(it["path"], ()) if k[1] == it["repo"]):
                realm, repo, path = key
                for sub_repo, sub_path, sub in test_subclasses(self.indexes[realm], repo, path,
                                                               cls):
                    line = next((d.start for d in self.facts[(realm, sub_repo, sub_path)].defs
                                 if d.qualname == sub), None)
                    hop = {"kind": "inherits", "from": node_label(sub_repo, sub_path, sub),
                           "to": node_label(repo, path, cls), "line": line, "how": "resolved"}
                    out.append({**it, "repo": sub_repo, "path": sub_path,
                                "symbol": f"{sub}.{meth}",
                                "distance": it.get("distance", len(it.get("via", []))) + 1,
                                "via": [hop] + it.get("via", [])})
        return out

    def is_property(self, target: str) -> bool:
        """Is ``target`` a Python property (run by an attribute read: graph/properties.py)?"""
        for realm, repo, path, symbol in self.resolve_target(target):
            f = self.facts[(realm, repo, path)]
            if symbol and symbol in property_quals(f):
                return True
        return False

    def implicit_caller(self, target: str, items: list[dict]) -> str | None:
        """The first of ``target``'s nodes and ``items`` (its impact rows) that runs
        without a call any edge names, as a label: a ``__dunder__`` method or a property
        (the interpreter runs those: pickle calls ``__reduce__``), or a function a
        module-level list of strings names (run by name). None: no such node."""
        implicit: dict[tuple, set[str]] = {}
        nodes = [{"realm": r, "repo": repo, "path": p, "symbol": s}
                 for r, repo, p, s in self.resolve_target(target)]
        for it in nodes + items:
            symbol = it.get("symbol")
            if not symbol:
                continue
            key = (it["realm"], it["repo"], it["path"])
            if key not in implicit:
                f = self.facts.get(key)
                implicit[key] = (property_quals(f) | named_quals(f)) if f is not None else set()
            if is_dunder(symbol) or symbol in implicit[key]:
                return node_label(it["repo"], it["path"], symbol)
            if (by := self._dispatched_by(key, symbol)) is not None:
                return by
        return None

    def unresolved_caller(self, items: list[dict]) -> str | None:
        """The first of ``items`` (impact rows: what reaches a target) that references
        indexd could not tie to one definition may name (``p.run(x)`` on an element of a
        registry, ``run`` defined in 18 files), as a label: a caller no edge names, so
        tests it leads to are unseen. None: no such item."""
        for it in items:
            symbol = it.get("symbol")
            if symbol and self._unresolved_for(
                    [(it["realm"], it["repo"], it["path"], symbol)], limit=0)["unresolved_total"]:
                return node_label(it["repo"], it["path"], symbol)
        return None

    def _dispatched_by(self, key: tuple, symbol: str) -> str | None:
        """The method of ``symbol``'s class, or of a class it derives from, that looks up
        its own methods by a name computed at run time (graph/dispatch.py), as a label;
        None when the class has none or ``symbol`` is no method."""
        f = self.facts.get(key)
        if f is None or f.lang != "python" or "." not in symbol:
            return None
        index = self.indexes[key[0]]
        classes = _class_quals(index, f)
        cls = next((p for p in enclosing(symbol)[1:] if p in classes), None)
        if cls is None:
            return None
        for here, qual in class_and_bases(index, f, cls):
            where = computed_dispatch(index, here).get(qual)
            if where is not None:
                return node_label(here.repo, here.path, where)
        return None

    def _bucket(self, key: tuple) -> str:
        """The impact list a file's nodes go in."""
        f = self.facts.get(key)
        return ("docs" if f is not None and f.lang == "markdown" else
                "tests" if is_test_path(key[2]) else "affected")

    def _add_trusted_tests(self, w, seeds, incoming, kinds, limit: int | None):
        """The tests ``tests_walk`` reaches over trusted edges at any depth, into the
        walk's answer: those it lacks, and those it reached only through a name
        match (the trusted chain is better evidence; the fewest hops stay). Returns
        the tests walk (its summary says whether the budget cut it)."""
        budget = self._budget(limit)
        deep = tests_walk(seeds, incoming, None if budget is None
                          else max(1, int(budget * self.tests_walk_share)), kinds)
        for node, v in deep.visits.items():
            if v.distance == 0 or not is_test_path(node[2]):
                continue
            seen = w.visits.get(node)
            if seen is None:
                w.visits[node] = v
            elif seen.distance > 0 and not all(e.how in TESTS_HOW for e in seen.via):
                seen.confidence, seen.via = v.confidence, v.via
        self._add_one_guess_tests(w, deep, incoming, kinds, budget)
        return deep

    def _add_one_guess_tests(self, w, deep, incoming, kinds, budget) -> None:
        """Tests one name match away from the trusted reach, then trusted again to any
        depth (marshmallow: ``Field._serialize`` <- ``Field.serialize`` <- (a name
        match: ``field_obj.serialize``) ``Schema._serialize`` <- ``Schema.dump`` <- ...
        every test that dumps). Weak evidence: they never make a change safe."""
        starts = guess_seeds(deep, incoming, kinds)
        untyped = self._untyped_seeds(deep)
        for node, v in untyped.items():
            if node not in starts or v.confidence > starts[node].confidence:
                starts[node] = v
        if not starts:
            return
        more = tests_walk([], incoming, self.guess_walk_edges if budget is None
                          else max(1, int(budget * self.tests_walk_share)), kinds, starts,
                          known=deep.visits)
        for node, v in more.visits.items():
            if is_test_path(node[2]) and node not in w.visits:
                w.visits[node] = v
        deep.guesses_cut = more.stopped_at is not None   # weak tests may be more
        deep.untyped_unreached = _unreached(untyped, more, deep.visits, self._handed_out)

    def _handed_out(self, node) -> bool:
        """Is ``node`` a function nested in a function, which nothing an edge names calls,
        references or tests (by any how)? Its enclosing function hands it out."""
        realm, repo, path, symbol = node
        parent = (symbol or "").rpartition(".")[0]
        f = self.facts.get((realm, repo, path))
        if not parent or f is None or _def_kinds(self.indexes[realm], f).get(parent) not in (
                "function", "method"):
            return False
        return not any(e.kind in TESTS_KINDS for e in self._incoming(node))

    def _untyped_seeds(self, deep) -> dict:
        """The other way one guess leaves the trusted reach: a symbol the tests walk
        reached is a method (or dunder) whose own file also runs a method of that name
        on a value of no known type (``edges._note_own_method``, ``dunder._note_untyped``:
        unresolved references, never edges). The symbol holding that use joins the guess
        walk's starts, one guess away, so one walk follows all of them (cachetools'
        ``cached`` wrappers run ``cache.setdefault`` and ``cache[k] = v`` on the cache
        they were given: ``_TimedCache.setdefault`` and ``Cache.__setitem__`` said safe
        while test_func.py failed)."""
        out: dict = {}
        for node, here in deep.visits.items():
            realm, repo, path, symbol = node
            if symbol is None or "." not in symbol:
                continue       # a method's name only: a function's name is name-matched
            notes = self.unresolved.get((realm, "name", symbol.rsplit(".", 1)[-1]), {})
            for u in notes.get((realm, repo, path), ()):
                if not u[3].startswith(UNTYPED):
                    continue
                scope = self.enclosing_def(realm, repo, path, u[2])
                src = (realm, repo, path, scope)
                if scope is None or src in deep.visits:
                    continue
                e = Edge("calls", repo, path, scope, repo, path, symbol, u[2], "name_match",
                         1.0, realm)
                c = here.confidence * confidence(e)
                if src not in out or c > out[src].confidence:
                    out[src] = Visit(here.distance + 1, c, [e] + here.via)
        return out

    def _add_import_time(self, w, seeds, incoming, limit: int | None) -> None:
        """Tests importing a module that runs the target on import (import_time.py),
        where the walk did not reach them itself; a cut search makes the walk's
        answer inexact too."""
        found = import_time_tests(seeds, incoming, self._file_incoming,
                                  self._tests_under, budget=self._budget(limit))
        for node, v in found.tests.items():
            w.visits.setdefault(node, v)
        if found.stopped_at is not None:
            w.stopped_at = max(w.stopped_at or 0.0, found.stopped_at)

    def tests_importing(self, modules: dict, limit: int | None = None):
        """Test files importing any of ``modules`` (file node -> the Visit its chain
        starts from) transitively, or below a conftest.py that does (import_time.py)."""
        return importing_tests(modules, self._file_incoming, self._tests_under,
                               budget=self._budget(limit))

    def _budget(self, limit: int | None) -> int | None:
        if limit is None:
            return None
        return max(self.walk_min_edges, self.walk_edges_per_item * limit)

    def impact_as_committed(self, facts: FileFacts, targets: list[str], depth: int = 2,
                            pending=None, limit: int | None = None) -> dict[str, dict | None]:
        """Impact of symbols (or the file) as ``facts`` - a file's committed version -
        had them: for deleted and renamed symbols, which the graph, following the
        working tree, no longer knows. The file's facts are swapped in, queried
        and swapped back; the caller holds the graph's lock throughout, so no
        query sees the borrowed version. None for a target ``facts`` lacks."""
        key = facts.key
        current = self.facts.get(key)
        self.update_file(facts)
        try:
            out: dict[str, dict | None] = {}
            for target in targets:
                try:
                    out[target] = self.impact(target, depth=depth, pending=pending, limit=limit)
                except KeyError:
                    out[target] = None
            return out
        finally:
            if current is None:
                self.remove_file(*key)
            else:
                self.update_file(current)

    @_gc_paused()
    def deps(self, target: str, depth: int = 1, kinds=None, pending=None,
             limit: int | None = 200) -> dict:
        """What ``target`` depends on: forward walk."""
        t0 = time.perf_counter()
        seeds = self.resolve_target(target)
        w = walk(seeds, self._outgoing, depth, kinds, reverse=False)
        visits, scores = w.visits, rank(seeds, w.traversed, w.visits)
        deps = [item(n, v, scores.get(n, 0.0), self._node_kind(n))
                for n, v in visits.items() if v.distance > 0]
        deps.sort(key=lambda x: (x["distance"], -x["score"], x["path"], x["symbol"] or ""))
        external = [{"path": s[2], **u} for s in seeds for u in self._external_imports(s)]
        complete, reason = self._completeness({s[:3] for s in seeds} | {n[:3] for n in visits},
                                              pending)
        out = bounded("deps", deps, limit, [d["distance"] for d in deps])
        return {"target": target, "took_ms": round((time.perf_counter() - t0) * 1000, 2),
                "complete": complete, "incomplete_reason": reason, **out,
                "external": external, "limit": limit, "truncated": any_truncated(out)}

    def _external_imports(self, node) -> list[dict]:
        """The file's imports the realm cannot resolve; of a symbol, those it uses."""
        found = [u for u in self.results.get(node[:3], FileResult()).unresolved
                 if u["kind"] == "import"]
        facts = self.facts.get(node[:3])
        if node[3] is None or facts is None:
            return found
        return externals.used_by(facts, node[3], found)

    def refs(self, target: str, limit: int | None = 200) -> dict:
        """Every edge into one symbol (or file), with its evidence."""
        seeds = self.resolve_target(target)
        rows = []
        for node in seeds:
            for e in self._incoming(node):
                rows.append({"realm": e.realm, "repo": e.src_repo, "path": e.src_path,
                             "symbol": e.src_symbol, "kind": e.kind, "line": e.line,
                             "how": e.how, "weight": e.weight})
        rows.sort(key=lambda r: (r["how"] != "resolved", -r["weight"], r["path"], r["line"]))
        out = bounded("refs", rows, limit) | self._unresolved_for(seeds)
        return {"target": target, **out, "limit": limit, "truncated": any_truncated(out)}

    def related(self, path: str, symbol: str | None = None, limit: int = 5) -> list[dict]:
        """A few strongest neighbours of a file or symbol, both directions."""
        from .impact import KIND_WEIGHT, confidence

        target = f"{path}::{symbol}" if symbol else path
        try:
            seeds = self.resolve_target(target)
        except KeyError:
            return []
        best: dict[tuple, dict] = {}
        for node in seeds:
            for direction, edges in (("in", self._incoming(node)), ("out", self._outgoing(node))):
                for e in edges:
                    other = ((e.src_repo, e.src_path, e.src_symbol) if direction == "in"
                             else (e.dst_repo, e.dst_path, e.dst_symbol))
                    if other[:2] == node[1:3] and (other[2] is None or symbol is None):
                        continue
                    score = KIND_WEIGHT.get(e.kind, 0.5) * confidence(e)
                    if other not in best or best[other]["score"] < score:
                        best[other] = {"repo": other[0], "path": other[1], "symbol": other[2],
                                       "kind": e.kind, "direction": direction, "how": e.how,
                                       "score": round(score, 4)}
        return sorted(best.values(), key=lambda r: (-r["score"], r["path"]))[:limit]

    def export(self, fmt: str = "json", scope: str | None = None) -> str:
        """Edges (all, one realm, or those touching files under a path) as json/dot/graphml."""
        edges = self.edges()
        if scope:
            if scope in self.indexes:
                edges = [e for e in edges if e.realm == scope]
            else:
                keys = set(self._files_for(scope))
                edges = [e for e in edges if (e.realm, e.src_repo, e.src_path) in keys
                         or (e.realm, e.dst_repo, e.dst_path) in keys]
        return _export.export(edges, fmt)

    def _unresolved_for(self, seeds, limit: int = 50) -> dict:
        """References that might reach the target but could not be tied to it: the
        first ``limit``, with how many there are (the keys ``bounded`` gives)."""
        names, modules = set(), set()
        for realm, repo, path, symbol in seeds:
            f = self.facts[(realm, repo, path)]
            if symbol:
                names.add((realm, symbol.rsplit(".", 1)[-1]))
            else:
                names |= {(realm, d.name) for d in f.defs if d.qualname == d.name}
                d, base = posixpath.split(path)
                stem = base.split(".", 1)[0]
                modules.add((realm, posixpath.basename(d) if stem in ("__init__", "index", "mod")
                             else stem))
        keys = ([(r, ("name", n), "name") for r, n in sorted(names)]
                + [(r, ("module", m), "import") for r, m in sorted(modules)])
        shown, total = [], 0
        for realm, key, kind in keys:
            # from the index of unresolved names, not by reading every file that wants
            # the name: a hub module's dozens of names are wanted by hundreds of files
            named = self.unresolved.get((realm, kind, key[1]))
            if named:
                wanting = self.wants.get((realm, key), ())
                for src in sorted(s for s in named if s in wanting):
                    refs = named[src]
                    total += len(refs)   # counted; only the first ``limit`` become rows
                    if len(shown) < limit:
                        shown += [(src, u) for u in refs[:limit - len(shown)]]
        return {"unresolved": [{"realm": src[0], "repo": src[1], "path": src[2], "kind": u[0],
                                "name": u[1], "line": u[2], "reason": u[3]}
                               for src, u in shown],
                "unresolved_total": total, "unresolved_truncated": len(shown) < total}


def _unresolved_index(res: Packed) -> dict[tuple, list[tuple]]:
    """(kind, name) -> the file's unresolved references of that name or last part
    (``a.b:c`` -> c), in file order; packed tuples, made dicts only if shown."""
    index: dict[tuple, list[tuple]] = {}
    for u in res._unresolved or ():
        kind, name = u[0], u[1]
        last = name[max(name.rfind("."), name.rfind(":"), name.rfind("/")) + 1:]
        index.setdefault((kind, name), []).append(u)
        if last != name:
            index.setdefault((kind, last), []).append(u)
    return index


CONSTRUCTORS = ("__init__", "__new__", "__post_init__")


def _resolved_label(target: str, nodes: list[tuple]) -> str | None:
    """The symbol a name alone resolved to (``repo/path::Qualified.name``); None
    for a path target, which says what it is."""
    if "::" in target or len(nodes) != 1 or nodes[0][3] is None:
        return None
    return f"{repo_name(nodes[0][1])}/{nodes[0][2]}::{nodes[0][3]}"


def _with_constructed_classes(seeds: list[tuple]) -> list[tuple]:
    """A constructor is run by every ``Class(...)``, which no edge names: changing
    ``C.__init__`` affects what uses ``C`` (and, through their bases, its subclasses)."""
    extra = [s[:3] + (s[3].rsplit(".", 1)[0],) for s in seeds
             if s[3] and "." in s[3] and s[3].rsplit(".", 1)[1] in CONSTRUCTORS]
    return seeds + [e for e in extra if e not in seeds]
