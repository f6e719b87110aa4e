"""The daemon's engine: watch events -> debounce -> the single indexing worker.

Threads: watchdog's observer thread calls the ``on_*`` hooks (cheap: a dict
update and a wake-up); one worker thread owns every store write (the
pipeline's single writer); the asyncio loop serves requests and reads the
store through ``asyncio.to_thread`` so a query never waits on indexing.

Git awareness: while ``.git/index.lock`` exists the repo is "busy" and its
events are held; when it goes away (or HEAD moves) the whole repo is
reconciled as one batch, which is cheap thanks to the stat cache and
converges however many files a checkout touched.

Freshness: ``index_lag_s`` is the age of the oldest change the index does
not reflect yet (pending or in flight); ``sync`` writes a cookie file in
every repo and waits for its event (Watchman's trick), then flushes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from .config import Settings, load_settings
from .model import file_key
from .errors import IndexNotReady, ModelUnavailable, Stopping, describe_store_error
from .pipeline import Indexer, purge_unknown_repos
from .query.search import in_memory, keyword_search
from .annotations import Annotations
from .batch_timing import BatchTiming, with_embedded
from .enrich.worker import PENDING_TTL_S, Enricher
from .memory import GcPauses, freeze_heap, refreeze, rss_bytes, trim
from .owners import Owners
from .relations import REBUILD_SHARE, Relations
from .server.methods import repo_status
from .store import Store
from .watch.debounce import Debouncer
from .scan.listing import RepoRules
from .watch.watcher import COOKIE_PREFIX, Watcher

log = logging.getLogger(__name__)

RECONCILE_EVERY_S = 600        # safety net even when watching works
BATCH_MAX = 2000
TRIM_AFTER_FILES = 100         # batches this big give their heap back (memory.trim)
FTS_AFTER_FILES = 100          # batches this big check the table's full-text index (saves do not)
GRAPH_MIN_BUDGET_S = 2.0       # incremental graph updates may take this long at least
PRIORITY_EMBED_MAX = 50       # files of a small batch jump the embedding queue
SAVE_MAX_FILES = 8            # this few files pending: a save, debounced by save_debounce_ms
COOKIE_WAIT_S = 3.0           # a repo's watch silent this long with its sync cookie unseen: reconcile
UPKEEP_EVERY_S = 600           # compact the store, drop old versions, trim caches
CONFIG_SETTLE_S = 0.25         # config.toml written this recently may be half-written: read it at rest
HOT_REBUILD_EVERY_S = 60.0     # a hot index that missed a write is built again, at most this often
VECTOR_CACHE_ROWS = 500_000    # cached vectors kept beyond those in use (~800 MB at 384 dims)


@dataclass
class RepoState:
    busy: bool = False                     # git operation in progress
    rescan: str | None = None              # reason, when a full reconcile is due
    rescan_since: float | None = None
    last_reconcile: float = 0.0
    overflow: int = 0
    missing: bool = False                  # root gone (moved, deleted, unmounted)
    last_batch: float = 0.0                # when a batch last brought it up to date
    errors: Counter = field(default_factory=Counter)


class Engine:
    def __init__(self, settings: Settings, store: Store, notify=None, embed: bool = True):
        self.settings = settings
        self.store = store
        self.notify = notify or (lambda params: None)   # called from the worker thread
        self.indexer = Indexer(settings, store)
        # Wall-clock debouncer: its first-seen times feed index_lag_s directly.
        self.debouncer = Debouncer(settings.debounce_ms / 1000, settings.max_delay_ms / 1000,
                                   clock=time.time, quick_s=settings.save_debounce_ms / 1000,
                                   quick_max=SAVE_MAX_FILES)
        self.repos: dict[tuple[str, str], RepoState] = {}
        self.cond = threading.Condition()
        self.in_flight: dict[tuple, float] = {}         # key -> first-seen time
        self.generation = 0                             # completed worker cycles
        self.cookies_seen: set[str] = set()
        # When each repo's watch last delivered an event (monotonic): a sync
        # cookie behind a draining backlog is late, not lost.
        self.events_at: dict[tuple[str, str], float] = {}
        self.flush_requested = False
        self.stopping = False
        self.paused = False
        self.started = time.time()
        self.gc_pauses = GcPauses()
        self.error_state: str | None = None
        self.config_error: str | None = None             # a bad config reload, until a good one
        self.failures = 0
        self.reload_requested = False
        self.purge_due = False                          # rows of unnamed repos to delete
        self.config_generation = 0                      # config reloads the worker applied
        self.last_batch: dict = {}
        self._due_at: float | None = None                # when the worker took its last work
        self._config_stamp = _stamp(settings.paths.config_file)
        self._config_settles_at: float | None = None     # a changed config.toml is read at rest
        self._config_missing_at: float | None = None     # when config.toml was first seen gone
        self.watcher = Watcher(self.on_path, self.on_git, self.on_dir, self.on_overflow)
        # The observer thread's own ignore rules (pygit2 objects are not shared
        # across threads; the worker has the indexer's).
        self._event_rules: dict[str, RepoRules] = {}
        self.thread = threading.Thread(target=self._worker, name="indexd-worker", daemon=True)
        self.relations = Relations(store, lambda: self.settings)
        self._hot_rebuild: threading.Thread | None = None   # a failed hot index built again
        self._hot_rebuild_at = float("-inf")
        self.hot_rebuilds = 0
        self.hot_rebuilt_after: dict[str, str] = {}        # index -> the failure its last rebuild followed
        self.annotations = Annotations(store, lambda: self.settings)
        # Blame per file on its own thread (seconds on long histories), never the worker's.
        self.owners = Owners(lambda: self.settings, store)
        # Semantic layer: loaded in the background so the socket is up at once.
        self.enrich = Enricher(store, lambda: self.settings, lambda: self.notify(self.brief()),
                               embed=embed, relations=self.relations)
        # Annotations carry words, so they come before the hot keyword index;
        # cached vectors only before the table's commits (Store.write).
        self.indexer.before_write = self.annotations.apply
        self.indexer.before_table = self.enrich.before_table
        # A save does not rebuild the table's full-text index (1.2 s on the stdlib once
        # the embed stage's rewrites leave enough rows unindexed: a save's semantic
        # search waited for it); keyword search answers from the hot index, and upkeep
        # and big batches keep the table's index for readers without the daemon.
        self.indexer.fts_min_files = FTS_AFTER_FILES
        # A stop cuts the long work in progress (a realm's reparse, a graph build):
        # what was written stays, the rest is derived again at the next start.
        self.indexer.should_stop = self.relations.should_stop = lambda: self.stopping
        # A graph build waits between files while a save is parsed and written, as the
        # model does between batches: on two cores its Python doubled a save's time.
        self.relations.pause = self.enrich.wait_for_saves

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        # Observer first: a watch scheduled on a running observer starts at
        # once, so an inotify failure (limit reached) stays with its repo,
        # which then falls back to periodic reconciliation.
        self.watcher.start()
        self._sync_repos(initial=True)
        self.gc_pauses.install()
        self.thread.start()
        self.enrich.start()
        self.owners.start()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.enrich.request_stop()   # its batch in progress ends now, not after the worker's
        self.watcher.stop()
        self.thread.join(timeout=60)
        if self._hot_rebuild is not None:
            self._hot_rebuild.join(timeout=60)   # its build stops at the next batch read
        self.relations.join(timeout=60)     # its build gives up at the next few files
        self.relations.save_snapshot()      # the next start reads it instead of building
        self.enrich.stop()
        self.owners.stop()
        self.gc_pauses.uninstall()

    def set_paused(self, paused: bool) -> None:
        """Pause: changes are still collected, nothing is indexed until resume."""
        with self.cond:
            self.paused = paused
            self.cond.notify_all()
        log.info("indexing %s", "paused" if paused else "resumed")
        self.notify(self.brief())

    def request_shutdown(self) -> None:
        self._on_shutdown()

    _on_shutdown = staticmethod(lambda: None)   # the daemon installs its own

    def reload_config(self) -> None:
        """Worker thread only: removed repos' rows are deleted by the single writer,
        after any batch that was already writing them."""
        old_shared = self.settings.shared
        self.settings = load_settings()
        self._config_stamp = _stamp(self.settings.paths.config_file)
        self.indexer.settings = self.settings
        self._sync_repos()
        for realm, uri in self.settings.shared.items():   # a shared index named since
            if old_shared.get(realm) != uri:
                for _, repo in self.settings.realm_repos(realm):
                    self.enrich.seed_shared(realm, repo)

    def request_reload(self) -> int:
        """Ask the worker to re-read config.toml; returns the generation to wait for."""
        with self.cond:
            self.reload_requested = True
            self.cond.notify_all()
            return self.config_generation + 1

    def wait_reloaded(self, generation: int, timeout: float) -> bool:
        """Block until the worker applied config reload ``generation`` (False on timeout)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.config_generation < generation:
                left = deadline - time.monotonic()
                if left <= 0 or self.stopping:
                    return False
                self.cond.wait(min(left, 0.5))
        return True

    def _sync_repos(self, initial: bool = False) -> None:
        pairs = self.settings.realm_repos(None)
        with self.cond:
            for key in pairs:
                if key not in self.repos:
                    self.repos[key] = RepoState(rescan="start" if initial else "added",
                                                rescan_since=time.time())
            removed = [k for k in self.repos if k not in pairs]
            for key in removed:
                del self.repos[key]
            self.cond.notify_all()
        self.watcher.sync(pairs)
        if removed:
            self.debouncer.drop(lambda k: (k[0], k[1]) in removed)
        # No store I/O here (this also runs at start, where a damaged store must
        # not stop the daemon): the worker's next cycle deletes the rows.
        self.purge_due = True

    def _purge_unknown_repos(self) -> list[tuple[str, str]]:
        """Delete rows of every repo no realm names (removed now, or while we were down)."""
        return purge_unknown_repos(self.settings, self.store)

    # -- watcher hooks (observer thread) -----------------------------------
    def on_path(self, realm: str, repo: str, rel: str, event: str = "modified") -> None:
        self.events_at[(realm, repo)] = time.monotonic()
        name = rel.rsplit("/", 1)[-1]
        if name.startswith(COOKIE_PREFIX):
            with self.cond:
                self.cookies_seen.add(name)
                self.cond.notify_all()
            return
        if name in (".gitignore", ".indexdignore"):
            self._event_rules.pop(repo, None)
            self.on_rescan(realm, repo, f"{name} changed")
        elif self._ignored(repo, rel, False):
            return
        self.debouncer.touch((realm, repo, rel), event=event)
        self.enrich.yield_to_save()   # the model waits between batches until it is written
        with self.cond:
            self.cond.notify_all()

    def on_dir(self, realm: str, repo: str, rel: str, what: str) -> None:
        self.events_at[(realm, repo)] = time.monotonic()
        if rel == "." or not self._ignored(repo, rel, True):
            self.on_rescan(realm, repo, f"directory {what}: {rel}")

    def _ignored(self, repo: str, rel: str, is_dir: bool) -> bool:
        rules = self._event_rules.get(repo)
        if rules is None:
            rules = self._event_rules[repo] = RepoRules(Path(repo), self.settings)
        try:
            return rules.is_ignored(rel, is_dir)
        except Exception:  # noqa: BLE001 - when unsure, let the pipeline decide
            return False

    def on_git(self, realm: str, repo: str, rel: str) -> None:
        state = self.repos.get((realm, repo))
        if state is None:
            return
        busy = _git_busy(repo, self.settings.git_lock_stale_s)
        with self.cond:
            if state.busy and not busy:
                state.rescan = state.rescan or "git operation finished"
                state.rescan_since = state.rescan_since or time.time()
            elif not busy and (rel.endswith("HEAD") or "/refs/" in rel):
                state.rescan = state.rescan or f"git {rel} changed"
                state.rescan_since = state.rescan_since or time.time()
            state.busy = busy
            self.cond.notify_all()

    def on_rescan(self, realm: str, repo: str, reason: str) -> None:
        state = self.repos.get((realm, repo))
        if state is not None:
            with self.cond:
                state.rescan = state.rescan or reason
                state.rescan_since = state.rescan_since or time.time()
                self.cond.notify_all()

    def on_overflow(self, path: str) -> None:
        for (realm, repo), state in list(self.repos.items()):
            if not path or os.path.realpath(path).startswith(os.path.realpath(repo)):
                state.overflow += 1
                log.warning("watch overflow realm=%s repo=%s: full reconcile", realm, repo)
                self.on_rescan(realm, repo, "watcher overflow")

    # -- the worker ----------------------------------------------------------
    def _worker(self) -> None:
        # The hot indexes are built here, by the single writer, so no batch can slip
        # between a build's read and its first update (built beside the writer, a
        # teammate's shared vectors were embedded again in 2 of 5 loaded runs of
        # test_shared_index.py: enrich work ran before the start reconcile queued the
        # team's index, the hold below; not retried since). The graph builds beside it
        # (20-40 s on a stdlib-sized realm that saves would wait for): the files
        # batches change meanwhile are applied to it before it serves (relations.py).
        # Read from its snapshot instead (~2 s) the graph could come first, but that
        # delayed the first batch by ~4 s on the stdlib copy: saves come first.
        # The enrich backlog waits for them: embedding beside the keyword index's build
        # (Python on both threads, 2 cores) made it 6.4 s instead of 4.8. A realm with
        # a shared index holds it until its start reconcile has queued the team's
        # vectors and summaries (_run_cycle): asked first, the model redid them.
        self.enrich.hold_vectors = True
        try:
            self.store.ensure_key_indexes()   # a save's deletes find its rows by index
            self._build_hot_indexes()
        finally:
            if not self.settings.shared:
                self.enrich.hold_vectors = False
                self.enrich.wake()
        self.relations.build_in_background()
        while True:
            # What the builds and batches keep is long-lived: out of the cycle
            # collector's walk (memory.py; cheap enough to do every cycle).
            freeze_heap()
            with self.cond:
                work = self._wait_for_work()
                if work is None:
                    return
            self._run_cycle(*work)

    def _keyword_index_status(self) -> dict:
        index = self.store.text_index
        hot = index is not None and index.ready
        return {"hot": hot, "docs": index.docs if index is not None else 0,
                "ranked": index.ranked if index is not None else 0,
                "written": index.added if index is not None else 0,
                "answers_from": "memory" if hot else "table",
                "failed": getattr(index, "failed", None), "rebuilds": self.hot_rebuilds,
                "rebuilt_after": self.hot_rebuilt_after.get("text_index")}

    def _vector_index_status(self) -> dict:
        index = self.store.vector_index
        hot = index is not None and index.ready
        return {"hot": hot, "vectors": index.vectors if index is not None else 0,
                "answers_from": "memory" if hot else "table",
                "failed": getattr(index, "failed", None), "rebuilds": self.hot_rebuilds,
                "rebuilt_after": self.hot_rebuilt_after.get("vector_index")}

    def _build_hot_indexes(self, which=("text_index", "vector_index")) -> None:
        for what, attr, build in (("keyword", "text_index", self.store.build_text_index),
                                  ("vector", "vector_index", self.store.build_vector_index)):
            if attr not in which:
                continue
            try:
                build(lambda: self.stopping)   # a stop cuts a build (shutdown)
            except Stopping:
                log.info("%s index build stopped for shutdown", what)
                setattr(self.store, attr, None)
                return
            except Exception as exc:  # noqa: BLE001 - the table's own search still answers
                log.warning("%s index not built, searching the table instead: %s", what, exc)
                setattr(self.store, attr, None)

    def _heal_hot_indexes(self) -> None:
        """A hot index that missed a write (Store._hot) answers no more and the
        table's indexes do, slower: build it again, on a thread of its own so
        saves go on (writes during the build are queued and replayed:
        store/build_window.py), at most once every HOT_REBUILD_EVERY_S."""
        failed = [attr for attr in ("text_index", "vector_index")
                  if getattr(getattr(self.store, attr), "failed", None)]
        busy = self._hot_rebuild is not None and self._hot_rebuild.is_alive()
        if not failed or busy or time.monotonic() - self._hot_rebuild_at < HOT_REBUILD_EVERY_S:
            return
        self._hot_rebuild_at = time.monotonic()
        self.hot_rebuilds += 1
        for attr in failed:
            self.hot_rebuilt_after[attr] = getattr(self.store, attr).failed
        log.warning("building the %s again after a failed update", " and ".join(failed))
        self._hot_rebuild = threading.Thread(target=self._build_hot_indexes, args=(tuple(failed),),
                                             name="indexd-hot-rebuild", daemon=True)
        self._hot_rebuild.start()

    def _wait_for_work(self):
        """Block (holding cond) until something is due; None when stopping."""
        while not self.stopping:
            self._check_config()
            self._heal_hot_indexes()
            if not self.paused:
                rescans = self._due_rescans()
                keys = self.debouncer.due(float("inf") if self.flush_requested else None)
                keys = self._hold_busy(keys)
                if rescans or keys or self.purge_due:
                    self.flush_requested = False
                    self._due_at = time.time()
                    return rescans, keys
                if self.flush_requested and not self.debouncer.pending():
                    self.flush_requested = False
                    self.generation += 1
                    self.cond.notify_all()
                    continue
            deadline = self.debouncer.next_deadline()
            timeout = 5.0 if deadline is None else max(0.01, deadline - time.time())
            if self._config_settles_at is not None:   # a config.toml being written: look again soon
                timeout = min(timeout, max(0.01, self._config_settles_at - time.monotonic()))
            self.cond.wait(min(timeout, 2.0))
        return None

    def _check_config(self) -> None:
        """Reload when config.toml changed on disk (edited by hand or by indexctl)
        or a request asked for it (realm add/remove over the socket)."""
        stamp = _stamp(self.settings.paths.config_file)
        if stamp == self._config_stamp and not self.reload_requested:
            return
        # An editor that saves in place truncates, then writes (one that renames the
        # file away first leaves none for a moment): read between the two, an empty
        # config removed every repo and deleted its rows.
        if stamp:
            self._config_missing_at = None
            age = time.time() - stamp[0] / 1e9
        else:
            self._config_missing_at = self._config_missing_at or time.time()
            age = time.time() - self._config_missing_at
        if 0 <= age < CONFIG_SETTLE_S:
            self._config_settles_at = time.monotonic() + CONFIG_SETTLE_S - age
            return
        self._config_settles_at = None
        self._config_stamp = stamp
        self.reload_requested = False
        try:
            self.cond.release()
            try:
                self.reload_config()
            finally:
                self.cond.acquire()
            log.info("config reloaded realms=%s", ",".join(sorted(self.settings.realms)))
            self.config_error = None
        except Exception as exc:  # noqa: BLE001 - keep running on the old config
            self.error_state = f"config: {exc}"
            # Kept until a good reload: error_state is cleared by the next batch.
            self.config_error = f"{exc}; keeping the previous config"
            log.error("config reload failed, keeping the previous one: %s", exc)
        self.config_generation += 1
        self.cond.notify_all()

    def _due_rescans(self) -> list[tuple[str, str, str]]:
        now = time.time()
        out = []
        for (realm, repo), state in self.repos.items():
            # inotify says nothing when the watched root itself is renamed or
            # unmounted: notice it here, drop its rows, and pick it up again
            # (with a fresh watch) if it comes back.
            present = Path(repo).is_dir()
            if present == state.missing:
                state.missing = not present
                state.rescan = state.rescan or ("repo missing" if not present else "repo back")
                state.rescan_since = state.rescan_since or now
                if present:
                    self.watcher.restart(realm, repo)   # the old watch died with the old root
            # Checked on disk every time: at start no event has told us about a
            # lock yet, and a git that crashed holding it sends no event later.
            busy = _git_busy(repo, self.settings.git_lock_stale_s)
            if state.busy and not busy:
                log.warning("git lock stale or gone repo=%s: reconciling", repo)
                state.rescan = state.rescan or "git lock stale"
                state.rescan_since = state.rescan_since or now
            state.busy = busy and (state.busy or bool(state.rescan))
            if state.busy:
                continue
            if state.rescan is None:
                unwatched = self.watcher.state(realm, repo) != "ok"
                every = self.settings.unwatched_reconcile_s if unwatched else RECONCILE_EVERY_S
                if now - state.last_reconcile >= every:
                    state.rescan, state.rescan_since = "periodic", now
                else:
                    continue
            out.append((realm, repo, state.rescan))
            self.in_flight[(realm, repo, "*")] = state.rescan_since or now
            state.rescan, state.rescan_since = None, None
            state.last_reconcile = now
        return out

    def _hold_busy(self, due: dict):
        held, ready = [], []
        on_disk: dict[str, bool] = {}
        for key in due:
            state = self.repos.get((key[0], key[1]))
            if state is None:
                continue          # repo removed meanwhile
            if not state.busy:
                # The lock's own event may come after the file's (a loaded machine): the
                # lock on disk holds the repo all the same; _due_rescans reconciles the
                # repo once it is gone, event or not.
                if key[1] not in on_disk:
                    on_disk[key[1]] = _git_busy(key[1], self.settings.git_lock_stale_s)
                state.busy = on_disk[key[1]]
            (held if state.busy else ready).append(key)
        for key in held:          # back into the debouncer until git is done
            self.debouncer.touch(key)
        for key in ready:
            self.in_flight[key] = due[key]
        return ready

    def _run_cycle(self, rescans, keys) -> None:
        started = time.monotonic()
        timing = BatchTiming(min(self.in_flight.values(), default=None), self._due_at)
        timing.mark("start")
        hot_before = getattr(self.store, "hot_s", 0.0)
        plans = []
        try:
            full = {(r, p) for r, p, _ in rescans}
            purged = self._purge_unknown_repos() if (rescans or self.purge_due) else []
            self.purge_due = False
            for realm, repo, reason in rescans:
                log.info("reconcile realm=%s repo=%s reason=%s", realm, repo, reason)
                plans.append(self.indexer.plan_repo(realm, repo))
            by_repo: dict[tuple[str, str], list[str]] = {}
            for realm, repo, rel in keys:
                if (realm, repo) not in full:
                    by_repo.setdefault((realm, repo), []).append(rel)
            for (realm, repo), rels in by_repo.items():
                plans.append(self.indexer.plan_repo(realm, repo, rels))
            timing.mark("planned")
            shared = [(r, p) for r, p, _ in rescans if r in self.settings.shared]
            # A shared realm's vectors come from its team index once the files are
            # known (enrich.seed_shared): the model must not embed them meanwhile.
            self.enrich.hold_vectors = bool(shared)
            writes = (self.enrich.written_with_vectors, self.enrich.written_without_vectors)
            try:
                report = self.indexer.run(plans)
                for realm, repo in shared:   # queued before the hold ends
                    self.enrich.seed_shared(realm, repo)
            finally:
                self.enrich.hold_vectors = False
            timing.mark("written")
            if report.cut:   # stopping: the graph is rebuilt from the store at the next start
                log.info("batch cut for shutdown parsed=%d left=%d", report.parsed, report.cut)
                return
            if getattr(self.store, "hot_at", 0.0) > timing.marks["start"]:
                timing.mark("searchable", self.store.hot_at)
            if self._written_with_vectors(writes):
                timing.mark("embedded", self.store.vectors_at)
            # Before the graph update: the embed thread starts on them meanwhile.
            # Queued before the gate opens, so the model's next move is theirs.
            if len(report.changed_paths) <= PRIORITY_EMBED_MAX:
                self.enrich.prioritize(file_key(*k) for k in report.changed_paths)
            if not self.debouncer.pending():
                self.enrich.save_written()
            timing.mark("embed_queued")
            self._update_graph(report, bool(rescans), rebuild=bool(purged))
            timing.mark("graph")
            if report.parsed or report.shared:   # ~1 ms when they exist; a first start's tables were empty
                self.store.ensure_key_indexes()
            self.error_state = None
            timing.mark("done")
            report_json = report.to_json()
            batch_timing = timing.to_json(report_json.get("stages"),
                                          getattr(self.store, "hot_s", 0.0) - hot_before)
            self.last_batch = report_json | {"at": time.time(), "timing": batch_timing}
            for key in full | set(by_repo):
                if key in self.repos:
                    self.repos[key].last_batch = self.last_batch["at"]
            log.info("batch done paths=%d rescans=%d parsed=%d shared=%d deleted=%d ms=%.0f "
                     "searchable_ms=%s", len(keys), len(rescans), report.parsed, report.shared,
                     report.deleted,
                     (time.monotonic() - started) * 1000, batch_timing["ms"].get("searchable", "-"))
            log.debug("batch timing %s", batch_timing)
            if report.parsed + report.shared + report.deleted >= TRIM_AFTER_FILES:
                trim()   # a big batch's transient rows and Arrow buffers go back to the OS
        except Exception as exc:  # noqa: BLE001 - the worker must survive any batch
            self.failures += 1
            self.error_state = describe_store_error(exc)
            # Back off (1 s, 2 s, ... 60 s) and log the traceback once, not every retry.
            if self.failures == 1:
                log.exception("batch failed; will retry")
            else:
                log.error("batch failed again (%d): %s", self.failures, self.error_state)
            for realm, repo, reason in rescans:
                self.on_rescan(realm, repo, f"retry after error ({reason})")
            for key in keys:
                self.debouncer.touch(key)
            time.sleep(min(60.0, 2.0 ** (self.failures - 1)))
        else:
            self.failures = 0
        finally:
            with self.cond:
                self.in_flight.clear()
                self.generation += 1
                self.cond.notify_all()
        self._maybe_upkeep()
        self.enrich.wake()
        self.notify(self.brief())

    def _maybe_upkeep(self, force: bool = False, purge: bool = False) -> dict:
        """Compaction and old-version cleanup so the store does not grow without bound."""
        now = time.monotonic()
        if not force and now - getattr(self, "_last_upkeep", now) < UPKEEP_EVERY_S:
            self.__dict__.setdefault("_last_upkeep", now)
            return {}
        self._last_upkeep = now
        t0 = time.monotonic()
        try:
            if purge:
                # Zero retention: old versions (deleted rows included) leave the disk.
                # Readers hold the store's read lock, so none is mid-query.
                with self.store.lock.write():
                    self.store.optimize(purge=True)
            else:
                self.store.optimize()
            later = self.enrich.later
            dropped = self.store.purge_cache(VECTOR_CACHE_ROWS,
                                             keep_model=later.model_id if later is not None else None)
            self.store.ensure_fts()
            self.store.ensure_key_indexes()   # a purge's rewrite dropped them
            # the graph's snapshot holds deleted files' names until rewritten: at most an
            # upkeep later than the store's old versions (docs/reliability.md)
            self.relations.save_snapshot()
            self._stats_cache = None
            refreeze()   # cycles among frozen objects are collected here, once
        except Exception as exc:  # noqa: BLE001 - upkeep retries next time
            log.warning("store upkeep failed: %s", exc)
            return {"error": str(exc)}
        log.info("store upkeep purge=%s cache_dropped=%d s=%.2f", purge, dropped, time.monotonic() - t0)
        trim()
        return {"purged": purge, "cache_dropped": dropped, "seconds": round(time.monotonic() - t0, 2)}

    def purge(self) -> dict:
        """Remove every old version now (deleted files' bytes leave the disk), and the
        graph's snapshot, which may hold them too."""
        self.relations.purge_snapshot()
        return self._maybe_upkeep(force=True, purge=True)

    def _update_graph(self, report, after_rescan: bool, rebuild: bool = False) -> None:
        changed = [tuple(k) for k in report.changed_paths]
        graph = self.relations.graph
        if after_rescan:
            self.owners.wake()   # HEAD may have moved: the owners thread re-blames changed blobs
        try:
            # A rebuild runs on the writer: beside it, `status sync` returned before the
            # rebuild's co-change edges were back (test_impact_daemon, CI 2026-12-06).
            if rebuild:     # a repo left: its facts must leave the warm graph too
                log.info("graph rebuild reason=repo removed")
                self.relations.build(replace=True)
                return
            # Incremental while it costs less than a rebuild would (its last time).
            budget = max(GRAPH_MIN_BUDGET_S, self.relations.build_s or 0.0)
            whole = graph is not None and len(changed) > REBUILD_SHARE * len(graph.facts)
            if whole or not self.relations.files_changed(changed, budget_s=budget):
                log.info("graph rebuild changed=%d reason=%s", len(changed),
                         "most files changed" if whole else f"incremental over {budget:.1f}s")
                self.relations.build(replace=True)
                trim()
            elif after_rescan:
                self.relations.refresh_cochange()
        except Exception:  # noqa: BLE001 - the index is fine; the graph catches up
            log.exception("graph update failed")

    def pending_keys(self) -> set[tuple]:
        """Files whose indexed state may be behind: for `complete: false`."""
        keys = {k for k in self.debouncer.keys()} | {k for k in self.in_flight if k[2] != "*"}
        busy_repos = {k[:2] for k in self.in_flight if k[2] == "*"}
        busy_repos |= {key for key, st in self.repos.items() if st.rescan or st.busy}
        graph = self.relations.graph
        if busy_repos and graph is not None:
            keys |= {f for f in graph.facts if f[:2] in busy_repos}
        return keys

    async def graph_call(self, name: str, then=None, **kw) -> dict:
        """``then(result)``, when given, runs in the same worker thread, after."""
        fn = getattr(self.relations, name)
        if name in ("impact", "deps", "changes", "tests_affected"):
            kw["pending"] = self.pending_keys()

        def call():
            result = fn(**kw)
            return result if then is None else then(result)
        result = await asyncio.to_thread(call)
        if isinstance(result, dict):
            result["index_lag_s"] = self.index_lag_s()
        return result

    # -- queries -------------------------------------------------------------
    async def search(self, req) -> dict:
        ready = self.enrich.vectors is not None
        mode = req.mode or ("hybrid" if ready else "keyword")
        if mode != "keyword" and not ready:
            raise ModelUnavailable(
                f"search mode {mode!r} needs the embedding model, which is "
                + (f"unavailable: {self.enrich.embed_error}" if self.enrich.embed_error
                   else "still loading"), {"embed_model": self.settings.embed_model})
        if mode == "keyword" and in_memory(self.store, req):
            # The hot index answers in about 2 ms: a worker thread would add
            # two wake-ups (there and back), 3 ms on a loaded machine.
            result = keyword_search(self.store, replace(req, mode=mode))
        elif mode == "keyword":
            result = await asyncio.to_thread(keyword_search, self.store, replace(req, mode=mode))
        else:
            from .query.hybrid import fused_search

            result = await asyncio.to_thread(fused_search, self.store, self.enrich.embedder,
                                             replace(req, mode=mode))
            result["embed_pending"] = self.enrich.pending(max_age_s=PENDING_TTL_S)
        self.relations.related(result["results"])
        return result

    def search_modes(self) -> list[str]:
        return ["keyword", "semantic", "hybrid"] if self.enrich.vectors is not None else ["keyword"]

    async def reindex(self, paths, realm, wait: bool) -> dict:
        from .realms import locate

        if paths:
            targets = [locate(self.settings, p) for p in paths]
            for r, repo, rel in targets:
                if Path(repo, rel).is_dir():
                    self.on_rescan(r, repo, "reindex requested")
                else:
                    self.debouncer.touch((r, repo, rel))
        else:
            for r, repo in self.settings.realm_repos(realm):
                self.on_rescan(r, repo, "reindex requested")
        with self.cond:
            self.flush_requested = True
            self.cond.notify_all()
        if wait:
            await self.sync(timeout=600, cookies=False)
        return {"queued": len(paths) if paths else "all", "waited": wait} | self.freshness()

    async def sync(self, timeout: float = 10.0, cookies: bool = True) -> None:
        await asyncio.to_thread(self._sync_blocking, timeout, cookies)

    def _sync_blocking(self, timeout: float, cookies: bool) -> None:
        deadline = time.monotonic() + timeout
        if cookies:
            self._wait_cookies(deadline)
        with self.cond:
            target = self.generation + 1
            self.flush_requested = True
            self.cond.notify_all()
            while not (self.generation >= target and self._idle()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise IndexNotReady("sync timed out waiting for the indexer",
                                        self.freshness())
                self.flush_requested = self.flush_requested or bool(self.debouncer.pending())
                self.cond.notify_all()
                self.cond.wait(min(left, 0.5))

    def _idle(self) -> bool:
        return (not self.in_flight and not self.debouncer.pending() and not self.purge_due
                and not any(s.rescan for s in self.repos.values()))

    def _wait_cookies(self, deadline: float) -> None:
        names = {}
        for (realm, repo), state in list(self.repos.items()):
            if self.watcher.state(realm, repo) != "ok":
                self.on_rescan(realm, repo, "sync on an unwatched repo")
                continue
            name = f"{COOKIE_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
            git = Path(repo, ".git")
            where = git if git.is_dir() else Path(repo)
            try:
                (where / name).write_bytes(b"")
                names[name] = (realm, repo, where / name)
            except OSError as exc:
                log.warning("cookie failed repo=%s error=%s", repo, exc)
                self.on_rescan(realm, repo, "sync cookie failed")
        # A cookie not seen while its repo's watch has gone quiet means the watch
        # lost events (a queue overflow, a dead emitter): do not fail the request,
        # reconcile that repo instead and watch it afresh. While events still
        # arrive the cookie is queued behind them: wait. Restarting then let the
        # old backlog reach the new watch after the sync had answered "fresh".
        sent = time.monotonic()
        try:
            with self.cond:
                while (missing := set(names) - self.cookies_seen) and time.monotonic() < deadline:
                    if all(self._watch_quiet(names[n][:2], sent) for n in missing):
                        break
                    self.cond.wait(min(max(0.0, deadline - time.monotonic()), 0.2))
                self.cookies_seen -= set(names)
        finally:
            for _realm, _repo, path in names.values():
                path.unlink(missing_ok=True)
        for name in missing:
            realm, repo, _path = names[name]
            log.warning("sync cookie not seen repo=%s: watch restarted, full reconcile", repo)
            self.watcher.restart(realm, repo)
            self.on_rescan(realm, repo, "sync cookie not seen")

    def _watch_quiet(self, key: tuple[str, str], sent: float) -> bool:
        last = max(sent, self.events_at.get(key, 0.0))
        return time.monotonic() - last >= COOKIE_WAIT_S

    # -- status --------------------------------------------------------------
    def pending(self) -> int:
        rescans = sum(1 for s in self.repos.values() if s.rescan)
        return self.debouncer.pending() + len(self.in_flight) + rescans

    def _repo_pending(self, realm: str, repo: str, state) -> int:
        """The repo's share of ``pending()``: its debounced and in-flight files and
        a queued scan, so the repo lines add up to the header."""
        here = (realm, repo)
        return (self.debouncer.pending_for(lambda k: tuple(k[:2]) == here)
                + sum(1 for k in self.in_flight if tuple(k[:2]) == here)
                + (1 if state.rescan else 0))

    def index_lag_s(self) -> float:
        times = list(self.in_flight.values())
        oldest = self.debouncer.oldest()
        if oldest is not None:
            times.append(oldest)
        times += [s.rescan_since for s in self.repos.values() if s.rescan and s.rescan_since]
        return round(max(0.0, time.time() - min(times)), 3) if times else 0.0

    def freshness(self) -> dict:
        pending = self.pending()
        return {"index_lag_s": self.index_lag_s(), "pending": pending, "stale": pending > 0}

    def brief(self) -> dict:
        pending = self.pending()
        state = ("error" if self.error_state else "paused" if self.paused
                 else "indexing" if pending else "fresh")
        return {"state": state, "pending": pending, "index_lag_s": self.index_lag_s(),
                "generation": self.generation, "paused": self.paused,
                "error": self.error_state, "last_batch": self._last_batch_view(),
                "config_error": self.config_error}

    def _written_with_vectors(self, before: tuple[int, int]) -> bool:
        """Whether every write of the batch just run held its rows' vectors
        (from the cache, or a save's few texts embedded with it)."""
        with_vectors, without = before
        return (self.enrich.written_without_vectors == without
                and self.enrich.written_with_vectors > with_vectors)

    def _last_batch_view(self) -> dict:
        """last_batch, its timing completed by when its files were embedded."""
        batch = self.last_batch
        if not batch or "timing" not in batch:
            return batch
        done_at = getattr(self.enrich.vectors, "priority_done_at", None)
        return batch | {"timing": with_embedded(batch["timing"], done_at)}

    def status(self) -> dict:
        realms = []
        for name in sorted(self.settings.realms):
            repos = []
            for repo in self.settings.realms[name]:
                state = self.repos.get((name, repo), RepoState())
                info = repo_status(self.store, name, repo)
                info["pending"] = self._repo_pending(name, repo, state)
                info["watcher"] = "paused" if self.paused else (
                    "recrawling" if state.rescan else self.watcher.state(name, repo))
                info["overflows"] = state.overflow
                info["git_busy"] = state.busy
                # A batch that only touched stats or deleted files wrote no newer
                # indexed_at, yet the repo is as current as that batch.
                info["last_indexed"] = max(info["last_indexed"] or 0.0, state.last_batch) or None
                repos.append(info)
            realms.append({"name": name, "repos": repos})
        return {"daemon": _process_info(self.started) | {"gc": self.gc_pauses.to_json()},
                "realms": realms,
                "queues": {"parse": self.pending(), "embed": self.enrich.pending() or 0},
                "embedding": self.enrich.status(),
                "keyword_index": self._keyword_index_status(),
                "vector_index": self._vector_index_status(),
                "graph": self.relations.status(), "owners": self.owners.status(),
                "store": self._store_stats(), **self.brief()}

    def _store_stats(self) -> dict:
        """Walking the store's files costs ~100 ms: refreshed after a batch wrote
        (at most every 2 s) and otherwise every 30 s."""
        cached = getattr(self, "_stats_cache", None)
        age = time.monotonic() - cached[0] if cached else 0.0
        if cached is None or age > 30 or (cached[2] != self.generation and age > 2):
            cached = self._stats_cache = (time.monotonic(), self.store.stats(), self.generation)
        return cached[1]


def _stamp(path: Path) -> tuple:
    try:
        st = path.stat()
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return ()


def _git_busy(repo: str, stale_s: float) -> bool:
    """A git operation holds the index (a lock older than ``stale_s`` does not count)."""
    lock = Path(repo, ".git", "index.lock")
    return lock.exists() and time.time() - _mtime(lock) < stale_s


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _process_info(started: float) -> dict:
    return {"pid": os.getpid(), "uptime_s": round(time.time() - started, 1),
            "rss_mb": round(rss_bytes() / 1e6, 1)}
