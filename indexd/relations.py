"""The daemon's warm relationship graph: built once, then updated per batch.

Owns the in-memory ``graph.Graph`` (imports, references, tests, documents,
config, co-change edges), its lock, and the graph queries the methods table
exposes (impact, deps, refs, related, changes, export). The engine calls
``files_changed`` after every indexing batch with the keys it wrote or
deleted, so one save never triggers a full rebuild. Co-change edges are
computed per repo in the background from git history and refreshed when
HEAD moves.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from .descriptions import Describer
from .errors import IndexNotReady, InvalidParams, RealmError
from .graph.cochange import co_change_edges
from .graph.coverage import (CoverageIndex, merge_tests, observed_tests, rule_out, set_tests,
                             unimported_runs)
from .graph.graph import BuildStopped, Graph
from .graph.impact import Visit, any_truncated, bounded
from .graph import snapshot
from .graph.loader import load_facts, load_file_facts
from .graph.targets import symbol_nodes, target_error
from .memory import trim

log = logging.getLogger(__name__)

REBUILD_WAIT_S = 60    # a query during a rebuild waits this long for the new graph
REBUILD_SHARE = 0.5    # files changed in one batch, or during a build, past this share: rebuild
REBUILDS_AT_MOST = 3   # ...that many times at most, then apply them whatever it costs
EDGE_KINDS = ("imports", "references", "calls", "tests", "documents", "config", "co_change",
              "package", "import_time")


RELATED_TOP = 3   # search hits that get graph neighbours


class Relations:
    def __init__(self, store, settings_provider):
        self.store = store
        self._settings = settings_provider
        self.graph: Graph | None = None
        self.lock = threading.RLock()
        self.error: str | None = None
        self.built_at: float | None = None
        self.build_s: float | None = None
        self._heads: dict[str, str] = {}
        self._built = threading.Event()
        self.coverage = CoverageIndex()   # tests ingest's edges (graph/coverage.py)
        self.describer = Describer(store, settings_provider)   # summaries, edge sentences
        # Called with the file keys each update touched (None: a new graph, all of
        # them): the enrich stage's relationship descriptions follow the graph.
        self.listeners: list = []
        self.should_stop = lambda: False   # true: a build in progress gives up (shutdown)
        self.pause = None   # a build's pause between files (Graph.build): the engine's save gate
        # Graph updates one at a time, each reading the store after the last (a build
        # and the writer's files_changed may run in two threads).
        self._updating = threading.Lock()
        # Files changed while a build reads the store: applied when it is done (None:
        # no build under way).
        self._waiting: set[tuple] | None = None
        self._threads: list[threading.Thread] = []
        self._one_build = threading.Lock()
        # Where the graph came from ("build", or "snapshot" with that many files
        # applied since it was written: graph/snapshot.py), and file updates not in
        # the snapshot on disk yet (save_snapshot at stop writes them).
        self.source: str | None = None
        self.snapshot_changes = 0
        self._unsaved = 0
        self._snapshot_build_s: float | None = None

    # -- building ------------------------------------------------------------
    def build_in_background(self) -> None:
        """The start's full build (``build``) in its own thread, so the writer indexes
        saves meanwhile (a stdlib-sized realm builds for 20-40 s); what they change is
        applied to the graph when it is ready. ``join`` waits for it."""
        thread = threading.Thread(target=self.build, name="indexd-graph", daemon=True)
        self.expect_build()
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def expect_build(self) -> None:
        """From now on files_changed keeps the changed files for the build to come
        (called before the writer's next batch; the build itself may start later)."""
        with self._updating:
            self._waiting = self._waiting if self._waiting is not None else set()

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)

    def build(self, replace: bool = False) -> None:
        """Full build from the store (at start; seconds on the stdlib).

        ``replace``: a rebuild after a mass change. The old graph is dropped
        first and queries wait for the new one (``_ready``): holding both was
        the daemon's largest transient (+400 MB on the stdlib, docs/benchmarks.md).
        Files changed meanwhile (``files_changed`` from another thread) are applied
        to the new graph before it is done.
        """
        with self._one_build:   # a rebuild asked during the start's build follows it
            self._build(replace)

    def _build(self, replace: bool) -> None:
        t0 = time.monotonic()
        self.expect_build()
        if replace:
            with self.lock:
                self._built.clear()
                self.graph = None
            trim()
        try:
            for attempt in range(1, REBUILDS_AT_MOST + 1):
                if self.should_stop():
                    raise BuildStopped("before reading the store")
                t_read = time.monotonic()
                graph, budget_s, files = (None, None, 0) if replace or attempt > 1 else \
                    self._from_snapshot()
                built = graph is None
                if built:
                    facts = load_facts(self.store)
                    files = len(facts)
                    graph = Graph().build(facts, stop=self.should_stop, pause=self.pause)
                    facts = None
                    budget_s = time.monotonic() - t_read
                    self.source, self.snapshot_changes = "build", 0
                if self._publish(graph, files, budget_s,
                                 last=attempt == REBUILDS_AT_MOST, save=built):
                    break
                graph = None    # not two graphs at once
                log.info("graph rebuild reason=files changed %s cost more to apply than "
                         "building again", "since the snapshot" if self.source == "snapshot"
                         else "during the build")
        except BuildStopped:
            self._give_up("the graph build was stopped (shutdown)")
            log.info("graph build stopped for shutdown")
            return
        except Exception as exc:  # noqa: BLE001 - queries say why instead
            self._give_up(f"{type(exc).__name__}: {exc}")
            log.exception("graph build failed")
            return
        self._tell(None)
        self.reload_coverage()
        trim()   # the build's transient rows are freed; give the heap back
        self.build_s = round(time.monotonic() - t0, 3)
        self.built_at = time.time()
        self.error = None
        log.info("graph built files=%d s=%.2f", files, self.build_s)
        self._heads.clear()   # a new graph has no co-change edges yet
        self.refresh_cochange()

    def _from_snapshot(self) -> tuple[Graph | None, float | None, int]:
        """The graph the last build or stop left on disk, with the files whose facts
        differ from the store's waiting to be applied (``_publish``), the time a build
        took then (applying them may take that long before building wins), and the
        files in the store. (None, None, 0): none, or not usable (graph/snapshot.py
        says why). The store's facts are freed once compared: a changed file's are
        read again when applied. On the stdlib the graph read back holds 242-252 MB
        after a trim, against 281 MB built."""
        t0 = time.monotonic()
        got = snapshot.load(self.store.path)
        if got is None:
            return None, None, 0
        graph, header = got
        # what a build cost when this graph was built: the budget for applying changes,
        # kept for the snapshots written from it (not this read's few seconds)
        self._snapshot_build_s = max(float(header.get("build_s") or 0), 1.0)
        facts = load_facts(self.store)
        changed = snapshot.changed_keys(graph, facts)
        files = len(facts)
        del facts
        with self._updating:
            self._waiting = (self._waiting or set()) | set(changed)
        self.source, self.snapshot_changes = "snapshot", len(changed)
        log.info("graph snapshot read files=%d changed since=%d s=%.2f", len(graph.facts),
                 len(changed), time.monotonic() - t0)
        return graph, self._snapshot_build_s, files

    def _save_snapshot(self, graph: Graph, build_s: float) -> None:
        """Keep the graph for the next start (~0.7 s on the stdlib). The caller holds
        ``_updating``, and no query or update may touch ``graph`` meanwhile."""
        t0 = time.monotonic()
        if snapshot.save(graph, self.store.path, build_s) is not None:
            self._snapshot_build_s = build_s
            self._unsaved = 0
            log.info("graph snapshot written s=%.2f", time.monotonic() - t0)

    def save_snapshot(self) -> None:
        """At stop: the graph as updates left it, when they changed it since the last
        snapshot (the next start then applies only what changes after this)."""
        with self._updating:
            if self.graph is None or not self._unsaved or self._waiting is not None:
                return
            with self.lock:
                self._save_snapshot(self.graph, self._snapshot_build_s or self.build_s or 0.0)

    def purge_snapshot(self) -> None:
        """``purge``: the snapshot may hold what the purge removes from the store (a
        deleted file's names); gone now, the stop writes the graph as it is then."""
        with self._updating:
            snapshot.discard(self.store.path)
            if self.graph is not None:
                self._unsaved = max(self._unsaved, 1)

    def _publish(self, graph: Graph, files: int, build_s: float, last: bool,
                 save: bool = False) -> bool:
        """Apply the files changed while ``graph`` was built (it may hold their old
        facts, or none) and make it the graph queries see; applied first, or an answer
        would miss them and still say it is complete. False, publishing nothing, when
        building again costs less: most files changed meanwhile (a first index runs
        beside the start's build), or applying them outran the build's own time."""
        with self._updating:
            waiting = sorted(self._waiting or ())
            self._waiting = set()
            if not last and len(waiting) > REBUILD_SHARE * max(files, 1):
                return False
            try:
                if not self._apply(graph, waiting, budget_s=None if last else build_s):
                    return False
            except Exception:  # noqa: BLE001 - the graph stands; these files lag
                log.exception("graph: %d files changed during the build not applied",
                              len(waiting))
            if save:   # a new build, kept for the next start (not yet seen by queries)
                if self.pause is not None:   # pickling holds the GIL ~0.7 s: a save first
                    self.pause()
                self._save_snapshot(graph, build_s)
            self._waiting = None
            with self.lock:
                self.graph = graph
                self._built.set()
            return True

    def _give_up(self, error: str) -> None:
        """A build that failed or was stopped: queries say why (the next build reads
        every file again, so the changes it waited for need no keeping)."""
        with self._updating:
            self._waiting = None
            self.error = error
            self._built.set()

    def refresh_cochange(self) -> None:
        """Co-change edges for repos whose HEAD moved since last time."""
        if self.graph is None:      # being built: the build refreshes them when done
            return
        for realm, repo in self._settings().realm_repos(None):
            head = _head(repo)
            if head is None or self._heads.get(repo) == head:
                continue
            try:
                edges = co_change_edges(repo, realm=realm)
            except Exception as exc:  # noqa: BLE001 - history is optional evidence
                log.warning("co-change failed repo=%s error=%s", repo, exc)
                continue
            with self.lock:
                if self.graph is None:
                    return
                self.graph.drop_cochange(realm, repo)
                for edge in edges:
                    self.graph.add_cochange(edge)
            self._heads[repo] = head
            log.info("co-change repo=%s edges=%d", repo, len(edges))

    def files_changed(self, keys: list[tuple], budget_s: float | None = None) -> bool:
        """Incremental update after a batch: keys are (realm, repo, path).

        False when ``budget_s`` ran out first: the caller rebuilds instead.
        Measured on the stdlib: 1,000 new files took 0.3 s, but 200 edited
        files that each lost a definition 45 s (every file naming it is
        recomputed), where a rebuild takes ~4 s.
        """
        if not keys:
            return True
        with self._updating:
            if self._waiting is not None:   # a build is reading the store: after it
                self._waiting.update(keys)
                return True
            if self.graph is None:
                return True
            ok = self._apply(self.graph, keys, budget_s)
        self._tell(keys)
        return ok

    def _apply(self, graph: Graph, keys: list[tuple], budget_s: float | None) -> bool:
        """files_changed's work on ``graph``; the caller holds ``_updating``."""
        if not keys:
            return True
        deadline = time.monotonic() + budget_s if budget_s is not None else None
        present = {f.key: f for f in load_file_facts(self.store, keys)}
        self._refresh_coverage(keys)
        for key in keys:
            if deadline is not None and time.monotonic() > deadline:
                return False
            self._unsaved += 1
            with self.lock:   # per file: queries go in between
                if key in present:
                    graph.update_file(present[key])
                else:
                    graph.remove_file(*key)
        return True

    def _tell(self, keys) -> None:
        for listener in self.listeners:
            try:
                listener(keys)
            except Exception:  # noqa: BLE001 - a listener never breaks an update
                log.exception("graph listener failed")

    # -- queries -------------------------------------------------------------
    def _ready(self) -> Graph:
        """The current graph, waiting for a rebuild under way. Never call it
        holding ``self.lock``: the rebuild takes the lock to publish its graph."""
        if self.graph is None and self.built_at is not None:
            self._built.wait(REBUILD_WAIT_S)   # a rebuild is under way
        if self.graph is None:
            raise IndexNotReady("the relationship graph is still being built" +
                                (f" (last error: {self.error})" if self.error else ""))
        return self.graph

    def _kinds(self, kinds) -> list[str] | None:
        if kinds is None:
            return None
        if isinstance(kinds, str):
            kinds = [k.strip() for k in kinds.split(",") if k.strip()]
        bad = [k for k in kinds if k not in EDGE_KINDS]
        if bad:
            raise InvalidParams(f"unknown edge kinds {bad}; use {', '.join(EDGE_KINDS)}")
        if "references" in kinds and "calls" not in kinds:
            kinds = [*kinds, "calls"]
        return list(kinds)

    def tests_importing(self, target: str) -> dict:
        """Test file node -> Visit for every test importing ``target`` (a module)
        transitively, through a package or below a conftest.py that does
        (Graph.tests_importing); {} when the graph no longer knows the target."""
        graph = self._ready()   # outside the lock, which a rebuild needs to publish
        with self.lock:
            try:
                nodes = graph.resolve_target(target)
            except KeyError:   # the graph was replaced meanwhile
                return {}
            return graph.tests_importing({n: Visit(0, 1.0) for n in nodes if n[3] is None}).tests

    def called_base_method(self, target: str) -> str | None:
        """Graph.called_base_method under the lock; None when the graph no longer knows
        the target."""
        graph = self._ready()
        with self.lock:
            try:
                return graph.called_base_method(target)
            except KeyError:
                return None

    def defines_tests(self, repo: str, path: str) -> bool:
        """Graph.defines_tests under the lock."""
        graph = self._ready()
        with self.lock:
            return graph.defines_tests(repo, path)

    def test_runners(self, items: list[dict]) -> list[dict]:
        """Graph.test_runners under the lock."""
        graph = self._ready()
        with self.lock:
            return graph.test_runners(items)

    def outside_base(self, target: str) -> str | None:
        """Graph.outside_base under the lock; None when the graph no longer knows it."""
        graph = self._ready()
        with self.lock:
            try:
                return graph.outside_base(target)
            except KeyError:
                return None

    def is_property(self, target: str) -> bool:
        """Graph.is_property under the lock; False when the graph no longer knows it."""
        graph = self._ready()
        with self.lock:
            try:
                return graph.is_property(target)
            except KeyError:
                return False

    def implicit_caller(self, target: str, items: list[dict]) -> str | None:
        """Graph.implicit_caller under the lock; None when the graph no longer knows
        the target."""
        graph = self._ready()
        with self.lock:
            try:
                return graph.implicit_caller(target, items)
            except KeyError:
                return None

    def unresolved_caller(self, items: list[dict]) -> str | None:
        """Graph.unresolved_caller under the lock."""
        graph = self._ready()
        with self.lock:
            return graph.unresolved_caller(items)

    def impact(self, target: str, **kw) -> dict:
        """The graph's impact (with the tests coverage saw run the target first), its
        files' summaries and its edges in words (descriptions.py)."""
        result = self._impact_with_coverage(target, **kw)
        # limit None: a whole walk for changes / tests affected, which describe
        # only what they show (or nothing)
        return result if kw.get("limit", 200) is None else self._described(result)

    def _described(self, result: dict) -> dict:
        graph = self.graph
        if graph is None:
            return result
        try:
            return self.describer.impact(result, graph, self.lock)
        except Exception:  # noqa: BLE001 - the answer stands without its sentences
            log.exception("impact descriptions failed target=%s", result.get("target"))
            return result

    def _impact_with_coverage(self, target: str, changing: list[tuple] = (), **kw) -> dict:
        result = self._graph_impact(target, **kw)
        kinds = self._kinds(kw.get("kinds"))
        if kinds is not None and "tests" not in kinds:
            return result
        graph = self._ready()   # waits outside the lock: the rebuild needs it to publish
        with self.lock:
            try:
                seeds = graph.resolve_target(target)
            except KeyError:   # the graph was replaced meanwhile: static tests only
                return result
            observed, exact = observed_tests(
                self.coverage, seeds, graph._node_kind,
                lambda modules: graph.tests_importing(modules, kw.get("limit", 200)))
            if not exact:   # the import walk stopped at its budget: more may import it
                result["tests_total_exact"] = False
            ruled = rule_out(self.coverage, result, seeds, graph._node_kind, changing,
                             graph.starts_processes, graph.writes_module_state)
            unimported = unimported_runs(self.coverage, seeds, observed)
            if unimported:
                result["ran_unimported"] = unimported
            return _with_runners(merge_tests(result, observed, ruled), graph)

    def summary(self, target: str, top: int = 5) -> dict:
        """One file's summary and its strongest relationships both ways, in words."""
        graph = self._ready()
        with self.lock:
            try:
                seeds = graph.resolve_target(target)
            except KeyError as exc:
                raise RealmError(target_error(target, exc)) from None
        files = sorted({s[:3] for s in seeds})
        if len(files) != 1 or seeds[0][3] is not None:
            raise InvalidParams(f"summary needs one file; {target!r} is "
                                + (f"{len(files)} files" if len(files) != 1 else "a symbol"))
        return self.describer.summary(files[0], graph, self.lock, top=top)

    # -- coverage edges (indexctl tests ingest) --------------------------------
    def reload_coverage(self) -> None:
        """Coverage edges and their ends' current hashes from the store (after an ingest)."""
        try:
            coverage = CoverageIndex.load(self.store)
        except Exception as exc:  # noqa: BLE001 - static test edges still answer
            log.warning("coverage edges not loaded: %s", exc)
            return
        with self.lock:
            self.coverage = coverage

    def _refresh_coverage(self, keys) -> None:
        try:
            self.coverage.refresh(self.store, keys)
        except Exception as exc:  # noqa: BLE001 - staleness catches up at the next load
            log.warning("coverage hashes not refreshed: %s", exc)

    def _graph_impact(self, target: str, depth: int = 3, kinds=None, pending=None,
                      limit: int | None = 200) -> dict:
        graph = self._ready()
        with self.lock:
            try:
                return graph.impact(target, depth=depth, kinds=self._kinds(kinds), pending=pending,
                                    limit=limit)
            except KeyError as exc:
                raise RealmError(target_error(target, exc)) from None

    def deps(self, target: str, depth: int = 1, kinds=None, pending=None,
             limit: int | None = 200) -> dict:
        graph = self._ready()
        with self.lock:
            try:
                return graph.deps(target, depth=depth, kinds=self._kinds(kinds), pending=pending,
                                  limit=limit)
            except KeyError as exc:
                raise RealmError(target_error(target, exc)) from None

    def named_symbol(self, symbol: str) -> str:
        """``repo/path::Qualified.name`` of the one symbol a name alone names
        (graph/targets.py): for answers that resolve paths themselves (owners)."""
        graph = self._ready()
        with self.lock:
            try:
                (_, repo, path, qualname), = symbol_nodes(graph.facts, symbol)
            except KeyError as exc:
                raise RealmError(target_error(symbol, exc)) from None
        return f"{repo.rstrip('/')}/{path}::{qualname}"

    def refs(self, target: str, limit: int | None = 200) -> dict:
        graph = self._ready()
        with self.lock:
            try:
                return graph.refs(target, limit=limit)
            except KeyError as exc:
                raise RealmError(target_error(target, exc)) from None

    def related(self, hits: list[dict], limit: int = 3, top: int = RELATED_TOP) -> None:
        """Fill ``related`` on the first ``top`` search hits (best effort; empty
        while building, and for the hits below): 10 hits cost 4.4 ms on the
        stdlib, as much as the search itself."""
        graph = self.graph
        for n, hit in enumerate(hits):
            hit["related"] = []
            if graph is None or n >= top:
                continue
            with self.lock:
                try:
                    path = f"{hit['repo']}/{hit['path']}"
                    hit["related"] = graph.related(path, hit.get("symbol"), limit=limit)
                except (KeyError, ValueError):
                    pass
        if graph is not None:
            try:
                self.describer.related(hits[:top], graph, self.lock)
            except Exception:  # noqa: BLE001 - hits stand without their sentences
                log.exception("related descriptions failed")

    def neighbourhood(self, seeds: list[dict], depth: int = 2) -> dict:
        """Seeds ({realm, repo, path, symbol, weight}) and their neighbours ranked by
        personalised PageRank (graph/neighbourhood.py), as rows for context packs."""
        from .graph.neighbourhood import known_node, neighbourhood

        graph = self._ready()
        with self.lock:
            weights: dict[tuple, float] = {}
            for s in seeds:
                node = (s["realm"], s["repo"], s["path"], s.get("symbol"))
                known = known_node(graph, node)
                if s.get("given") and (known is None or known[3] != node[3]):
                    what = f"{node[2]}::{node[3]}" if known is not None else node[2]
                    raise RealmError(f"{what} is not indexed (yet) in {node[1]}")
                node = known or node
                weights[node] = weights.get(node, 0.0) + s["weight"]
            ranked = neighbourhood(graph, weights, depth=depth)
            rows = []
            for r in ranked:
                f = graph.facts.get(r.node[:3])
                rows.append({"realm": r.node[0], "repo": r.node[1], "path": r.node[2],
                             "symbol": r.node[3], "lang": f.lang if f is not None else None,
                             "score": r.score, "distance": r.distance, "why": r.why(),
                             "seed": r.node in weights})
        return {"nodes": rows}

    def export(self, fmt: str, scope: str | None) -> str:
        graph = self._ready()
        if fmt not in ("json", "dot", "graphml"):
            raise InvalidParams("format must be json, dot or graphml")
        with self.lock:
            try:
                return graph.export(fmt, scope=scope)
            except KeyError as exc:
                raise RealmError(target_error(scope or "", exc)) from None

    def changes(self, repo: str, since: str | None, depth: int, pending=None,
                limit: int | None = 200) -> dict:
        """Impact of the uncommitted (or since-REV) diff of one repo. Each change's
        impact is taken whole (limit None) so the merged buckets' totals are real;
        ``limit`` bounds the merged lists."""
        from .graph.changes import changed_symbols

        t0 = time.perf_counter()
        self._ready()
        try:
            changed = changed_symbols(repo, since)
        except (KeyError, ValueError) as exc:
            raise InvalidParams(f"cannot diff {repo} against {since or 'HEAD'}: {exc}") from None
        results, gone, doubts = [], [], []
        for ch in changed:
            try:
                results.append(self.impact(_change_target(repo, ch), depth=depth, pending=pending,
                                           limit=None))
            except RealmError:
                # Gone from the working tree, so from the warm graph too: its
                # dependents come from the committed version below. Anything
                # else unknown is a file indexd does not index (ignored).
                if ch["change"] in ("deleted", "renamed"):
                    gone.append(ch)
        results += self._impact_of_gone(repo, since, gone, depth, pending, doubts)
        reasons = [r["incomplete_reason"] for r in results if r.get("incomplete_reason")] + doubts
        unresolved = [u for r in results for u in r.get("unresolved", [])]
        lists = _merge_impacts(results, limit) | bounded("unresolved", unresolved, 50)
        # each answer listed its first 50 unresolved: the total is the sum of theirs
        lists["unresolved_total"] = sum(r.get("unresolved_total", 0) for r in results)
        lists["unresolved_truncated"] = lists["unresolved_total"] > len(lists["unresolved"])
        return self._described({
            "repo": repo, "since": since, "changed": changed, **lists,
            "complete": all(r["complete"] for r in results) and not doubts,
            "incomplete_reason": "; ".join(dict.fromkeys(reasons)) or None,
            "limit": limit, "truncated": any_truncated(lists),
            "took_ms": round((time.perf_counter() - t0) * 1000, 2)})

    def tests_affected(self, **kw) -> dict:
        """The tests to run for a change, ranked, with evidence (tests_affected.py)."""
        from .tests_affected import tests_affected

        return tests_affected(self, **kw)

    def _impact_of_gone(self, repo: str, since: str | None, gone: list[dict], depth: int,
                        pending, doubts: list[str]) -> list[dict]:
        """Impact of deleted/renamed symbols (and deleted files) as the committed
        version of their file had them; what cannot be told goes to ``doubts``."""
        from .graph.changes import base_text, committed_facts

        by_path: dict[str, list[dict]] = {}
        for ch in gone:
            by_path.setdefault(ch["path"], []).append(ch)
        realms = [r for r, rp in self._settings().realm_repos(None) if rp == repo]
        out = []
        for path, rows in sorted(by_path.items()):
            targets = list(dict.fromkeys(_change_target(repo, ch) for ch in rows))
            if not (Path(repo) / path).exists():
                targets.append(f"{repo}/{path}")   # a deleted file: its importers too
            try:
                text = base_text(repo, since, path)
                if text is None or not realms:
                    raise LookupError("no committed version" if realms else "repo in no realm")
                for realm in realms:
                    facts = committed_facts(realm, repo, path, text)
                    graph = self._ready()   # never wait while holding the lock
                    with self.lock:
                        got = graph.impact_as_committed(facts, targets, depth, pending,
                                                        limit=None)
                    out += [r for r in got.values() if r is not None]
                    doubts += [f"cannot tell what used {t}: not in the committed version"
                               for t, r in got.items() if r is None]
            except Exception as exc:  # noqa: BLE001 - the answer says it is incomplete instead
                log.warning("changes: committed version failed repo=%s path=%s error=%s",
                            repo, path, exc)
                doubts.append(f"cannot tell what used {path}'s deleted symbols: {exc}")
        return out

    def status(self) -> dict:
        g, waiting = self.graph, self._waiting
        return {"ready": g is not None, "error": self.error, "build_s": self.build_s,
                "edges": g.edge_count() if g is not None else 0,
                "building": waiting is not None, "changes_waiting": len(waiting or ()),
                "source": self.source, "snapshot_changes": self.snapshot_changes}


def _change_target(repo: str, ch: dict) -> str:
    return f"{repo}/{ch['path']}" + (f"::{ch['symbol']}" if ch.get("symbol") else "")


def _merge_impacts(results: list[dict], limit: int | None = None) -> dict:
    """Buckets of several (whole) impact answers, each item at its best score, the
    first ``limit`` of each with its counts (``bounded``)."""
    merged: dict[str, dict] = {"affected": {}, "tests": {}, "docs": {}}
    for res in results:
        for bucket, best in merged.items():
            for item in res.get(bucket, []):
                key = (item["repo"], item["path"], item.get("symbol"))
                if key not in best or item["score"] > best[key]["score"]:
                    best[key] = item
    out: dict = {}
    for b, v in merged.items():
        rows = sorted(v.values(), key=lambda i: (-i["score"], i["path"]))
        out |= bounded(b, rows, limit, [i["distance"] for i in rows])
    return out


def _head(repo: str) -> str | None:
    try:
        import pygit2

        r = pygit2.Repository(repo)
        return None if r.head_is_unborn else str(r.head.target)
    except Exception:  # noqa: BLE001 - plain folders have no history
        return None if not Path(repo, ".git").exists() else "unknown"


def _with_runners(result: dict, graph) -> dict:
    """Each test method of a mixin or base test class followed by its runs from the test
    modules deriving from it (Graph.test_runners, an ``inherits`` hop): coverage names
    those runs after the class defining the method, and a static walk reaches the method."""
    tests = result.get("tests")
    if not tests:
        return result
    seen = {(t["repo"], t["path"], t.get("symbol")) for t in tests}
    out = []
    for t in tests:
        out.append(t)
        for runner in graph.test_runners([t]):
            key = (runner["repo"], runner["path"], runner["symbol"])
            if key not in seen:
                seen.add(key)
                out.append(runner)
    set_tests(result, out, len(out) - len(tests))
    return result
