"""The indexing pipeline: list -> stat -> hash -> parse -> rows -> store.

One path through here serves the one-shot ``indexd index`` and the daemon's
incremental reindex. Work per file is a pure function (``process_file``)
run in worker processes for large batches and inline for small ones; the
single store writer is the caller's thread.

Change detection is three-tiered: a file whose (size, mtime_ns, inode) is
unchanged is never read; a changed stat whose content hash is unchanged only
refreshes the stat cache; only a changed hash is parsed and rewritten.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path

from .config import Settings
from .model import FAILED, INDEXED, SKIP_SECRET, SKIPPED, FileRecord, file_key
from .parse import detect_language, parse_source
from .parse.code import take_clock
from .procs import die_with_parent
from .scan.listing import RepoRules
from .scan.reader import Skip, read_source, real_stat_key
from .stat_sidecar import extractor_version
from .store import FileWrite, Store
from .store.packed import pack
from .store.rows import entry_rows, link_columns, link_rows

log = logging.getLogger(__name__)

FEW_PATHS = 256            # path plans up to this size read only their own file rows
WRITE_BATCH = 256          # files per store commit (row dicts)
# Packed rows (the one-shot) are committed by size: each commit is a fragment
# per table, which the one-shot's final compaction rewrites (all of them when
# there are several), so the stdlib's 150 MB of rows go in one commit.
PACKED_BATCH_BYTES = 256 << 20
PACKED_BATCH_FILES = 50_000


EXTRACTOR_VERSION = extractor_version()   # stat_sidecar.py: the warm path needs it too


SINCE = "@since "   # extractor meta of a cut reparse: "<version>@since <unix time>"


def _parsed_since(recorded: str | None) -> float | None:
    """When a cut reparse with this extractor began (its files since are done)."""
    prefix = EXTRACTOR_VERSION + SINCE
    if not recorded or not recorded.startswith(prefix):
        return None
    try:
        return float(recorded[len(prefix):])
    except ValueError:
        return None


def extractor_key(realm: str, repo: str) -> str:
    return f"extractor:{realm}\x1f{repo}"
POOL_THRESHOLD = 64        # below this many files, parse inline


@dataclass(frozen=True)
class Job:
    realm: str
    repo: str
    path: str
    known_hash: str
    known_status: str
    known_reason: str
    max_size: int
    allow: tuple
    known_entries: int = 0
    summaries: bool = True          # summarize = "off": rows carry none
    shared_hash: str = ""           # a shared index holds this path with this content


@dataclass
class Outcome:
    record: FileRecord | None = None
    write: FileWrite | None = None     # entries/links to replace
    touched: bool = False              # same content, only the stat changed
    vanished: bool = False
    shared: bool = False               # content as the shared index holds it: rows copied
    cpu: tuple = ()                    # the worker's CPU s in (read, parse, rows)


@dataclass
class Plan:
    realm: str
    repo: str
    jobs: list[Job] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)      # file keys
    listed: int = 0
    unchanged: int = 0
    skipped: list[FileRecord] = field(default_factory=list)
    repaired: int = 0                  # files forced to reparse by the count check
    full: bool = False                 # the whole tree was planned (not some paths)
    outdated: bool = False             # the repo's rows came from another extractor
    seconds: tuple = (0.0, 0.0)        # (wall, CPU) spent planning
    real_root: str = ""                # the repo root resolved, once per plan


WORKER_STAGES = ("read", "tree_sitter", "query", "extract", "rows")


@dataclass
class Stages:
    """Seconds per stage of one run, for ``done`` events and bench/index_cold.py.

    ``wall``: time this process spent in the stage. ``cpu``: CPU seconds,
    this process's for its own stages, summed over the workers for the
    worker stages (read = stat, read, hash, secrets, decode; tree_sitter =
    its parse; query = its query matches, Python objects included; extract =
    entries and references from the matches, and the markdown, config and
    text parsers; rows = row building and packing), whose wall time is the
    writer's ``workers`` stage (waiting for them).
    """

    wall: Counter = field(default_factory=Counter)
    cpu: Counter = field(default_factory=Counter)

    @contextmanager
    def timed(self, name: str):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[name] += time.perf_counter() - wall
            self.cpu[name] += time.process_time() - cpu

    def add_worker(self, cpu: tuple) -> None:
        for name, seconds in zip(WORKER_STAGES, cpu):
            self.cpu[name] += seconds

    def to_json(self) -> dict:
        names = [n for n in ("plan", *WORKER_STAGES, "workers", "store", "fts", "compact")
                 if n in self.wall or n in self.cpu]
        names += sorted((set(self.wall) | set(self.cpu)) - set(names))
        return {n: {"wall_s": round(self.wall[n], 3) if n in self.wall else None,
                    "cpu_s": round(self.cpu[n], 3)} for n in names}


@dataclass
class Report:
    files: int = 0
    unchanged: int = 0
    hashed: int = 0
    parsed: int = 0
    touched: int = 0
    deleted: int = 0
    failed: int = 0
    entries: int = 0
    repaired: int = 0
    shared: int = 0                    # files whose rows were copied from a shared index
    shared_notes: list = field(default_factory=list)   # repos whose shard could not be used
    skipped: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    changed_paths: list = field(default_factory=list)  # (realm, repo, path) written or deleted
    vanished: list = field(default_factory=list)       # keys of known files gone mid-run
    removed_repos: list = field(default_factory=list)  # (realm, repo) no realm names: rows gone
    cut: int = 0                       # jobs left undone: the run was told to stop (should_stop)
    stages: Stages = field(default_factory=Stages)

    def to_json(self) -> dict:
        return {"files": self.files, "unchanged": self.unchanged, "hashed": self.hashed,
                "parsed": self.parsed, "touched": self.touched, "deleted": self.deleted,
                "failed": self.failed, "entries": self.entries, "repaired": self.repaired,
                "shared": self.shared, "shared_notes": self.shared_notes,
                "skipped": dict(self.skipped), "seconds": round(self.seconds, 3),
                "removed_repos": [{"realm": r, "repo": p} for r, p in self.removed_repos],
                "cut": self.cut, "stages": self.stages.to_json()}


def process_file(job: Job, packed: bool = False) -> Outcome:
    """Read, hash and (when the hash changed) parse one file. Runs in workers.

    ``packed``: the rows travel as Arrow IPC bytes (store/packed.py) for a
    writer that needs no row dicts (the one-shot)."""
    started = time.thread_time()
    root = Path(job.repo)
    src = read_source(root, job.path, job.max_size, job.allow)
    base = FileRecord(realm=job.realm, repo=job.repo, path=job.path, indexed_at=time.time())
    if isinstance(src, Skip):
        if src.detail == "vanished":
            return Outcome(vanished=True)
        rec = replace(base, size=src.size, mtime_ns=src.mtime_ns, inode=src.inode,
                      status=SKIPPED, reason=f"{src.reason}: {src.detail}")
        return Outcome(record=rec, write=FileWrite(rec, [], []),
                       cpu=(time.thread_time() - started,))
    language = detect_language(job.path, src.text[:256])
    rec = replace(base, hash=src.hash, size=src.size, mtime_ns=src.mtime_ns,
                  inode=src.inode, language=language)
    if src.hash == job.known_hash and job.known_status != SKIPPED:
        rec = replace(rec, status=job.known_status, reason=job.known_reason,
                      entries=job.known_entries)
        return Outcome(record=rec, touched=True, cpu=(time.thread_time() - started,))
    if job.shared_hash and src.hash == job.shared_hash:
        # The writer copies this content's rows from the shared index
        # (shared_index/rows.py) instead of a parse here.
        rec = replace(rec, status=INDEXED, reason=src.redacted or "")
        return Outcome(record=rec, shared=True, cpu=(time.thread_time() - started,))

    def exists(rel: str) -> bool:
        return (root / rel).exists()

    read_at = time.thread_time()
    take_clock()
    result = parse_source(job.path, src.text, language, exists)
    parsed_at = time.thread_time()
    tree_sitter, query = take_clock()
    rec = replace(rec, status=FAILED if result.error else INDEXED,
                  reason="; ".join(r for r in (src.redacted, result.error) if r))
    rows = entry_rows(rec, result, src.text, job.summaries)
    rec = replace(rec, entries=len(rows))
    write = (FileWrite(rec, [], [], packed=pack(rows, link_columns(result))) if packed
             else FileWrite(rec, rows, link_rows(rec, result)))
    extract = parsed_at - read_at - tree_sitter - query
    return Outcome(record=rec, write=write, cpu=(read_at - started, tree_sitter, query,
                                                 extract, time.thread_time() - parsed_at))


def dropped_for_a_secret_value(rec: FileRecord) -> bool:
    """Skipped whole for a secret in its text by an indexd that did not mask values yet."""
    return rec.status == SKIPPED and rec.reason.startswith(f"{SKIP_SECRET}: content:")


def _workers(settings: Settings) -> int:
    return settings.workers or os.cpu_count() or 1


def _new_pool(workers: int) -> ProcessPoolExecutor:
    # spawn, not fork: the parent holds LanceDB threads, which fork would
    # copy in an undefined state. Not forkserver either: its workers are
    # the forkserver's children, and it, they and the resource tracker
    # outlived a SIGKILLed parent (each kept the others alive). Spawned
    # workers are ours and die with us; the tracker then sees EOF and exits.
    ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                               initializer=die_with_parent, initargs=(os.getpid(),))


def _warm() -> None:
    """A worker's first task: unpickling it imports this module (parsers, rows)."""


def enough_files_for_a_pool(settings: Settings, realm: str | None) -> bool:
    """Whether the realm's trees hold at least POOL_THRESHOLD files (ignore
    rules not applied: an upper bound, counted only as far as the threshold).

    Below it no batch is big enough to go to workers, so starting them would
    only cost each its imports (0.35 s of CPU) and the one-shot its wait for
    them to exit; a small repo's cold one-shot ran 1.6 s with two workers
    and 1.3 s with none.
    """
    seen = 0
    for _, repo in settings.realm_repos(realm):
        for _, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git"]
            seen += len(files)
            if seen >= POOL_THRESHOLD:
                return True
    return False


@contextmanager
def parse_pool(settings: Settings, start: bool = True):
    """Parse workers started now, for every run of an Indexer given them.

    The one-shot starts them before it opens the store, so their start-up
    (0.35 s of CPU each) runs beside the parent's import of lancedb (1.7 s)
    instead of after it. ``start`` False (or one core): None, and the
    Indexer starts a pool per big batch as before. The pool is shut down
    when the block ends, on every path.
    """
    workers = _workers(settings)
    if not start or workers <= 1:
        yield None
        return
    pool = _new_pool(workers)
    try:
        for _ in range(workers):
            pool.submit(_warm)
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


SHARED_BATCH = 1000        # files whose shared rows are copied in one go


def _shared_job(job: Job, shards: dict) -> Job:
    shard = shards.get((job.realm, job.repo))
    wanted = shard.hashes.get(job.path, "") if shard is not None else ""
    return replace(job, shared_hash=wanted) if wanted else job


class SharedCopy:
    """Files whose content a shared index holds, waiting for their rows to be
    copied; and those that must be parsed after all (a shard that failed
    mid-run, rows a local parse would not give)."""

    def __init__(self, shards: dict, packed: bool):
        self.shards, self.packed = shards, packed
        self._waiting: dict[tuple, list[tuple[Job, FileRecord]]] = {}
        self.parse: list[Job] = []

    @property
    def waiting(self) -> int:
        return sum(map(len, self._waiting.values()))

    def add(self, job: Job, record: FileRecord) -> None:
        self._waiting.setdefault((job.realm, job.repo), []).append((job, record))

    def take(self) -> list[FileWrite]:
        out: list[FileWrite] = []
        for key, items in self._waiting.items():
            jobs = {rec.path: job for job, rec in items}
            try:
                writes, again = self.shards[key].writes([rec for _, rec in items], self.packed,
                                                        items[0][0].summaries)
            except Exception as exc:  # noqa: BLE001 - an object store's failure: parse instead
                log.warning("shared rows not read realm=%s repo=%s error=%s: parsing locally",
                            key[0], key[1], exc)
                writes, again = [], list(jobs)
            out.extend(writes)
            self.parse.extend(replace(jobs[p], shared_hash="") for p in again)
        self._waiting.clear()
        return out


class Indexer:
    """Plans and runs reindex work against one store."""

    def __init__(self, settings: Settings, store: Store,
                 on_progress: Callable[[dict], None] | None = None,
                 pool: ProcessPoolExecutor | None = None):
        self.settings = settings
        self.store = store
        self.pool = pool        # parse_pool()'s workers, else one per big batch
        self.on_progress = on_progress or (lambda event: None)
        self._rules: dict[str, RepoRules] = {}
        # Called with the batch's entry rows just before each store write (the
        # daemon gives them their annotations here: words the keyword index needs).
        self.before_write: Callable[[list[dict]], object] | None = None
        # Called with them once the hot keyword index has them, before the
        # table's commits (the daemon fills unchanged entries' vectors from the
        # cache here: a save is keyword-searchable without waiting for that read).
        self.before_table: Callable[[list[dict]], object] | None = None
        # Batches that changed fewer files than this leave the table's full-text
        # index to later (the daemon: its upkeep; it answers from its hot index).
        self.fts_min_files = 1
        # Asked before each file: true ends the run early (the daemon is stopping).
        # What was parsed is written; the rest is left as it was, so the next
        # reconcile finds it changed and nothing is lost (Report.cut counts it).
        self.should_stop: Callable[[], bool] = lambda: False

    # -- planning ----------------------------------------------------------
    def rules(self, repo: str, fresh: bool = False) -> RepoRules:
        """Ignore rules per repo, kept between calls (reloaded on a full plan)."""
        rules = self._rules.get(repo)
        if rules is None or fresh:
            rules = self._rules[repo] = RepoRules(Path(repo), self.settings)
        return rules

    def plan_repo(self, realm: str, repo: str, only: Iterable[str] | None = None) -> Plan:
        """Compare the tree (or only these repo-relative paths) with the store."""
        wall, cpu = time.perf_counter(), time.process_time()
        plan = self._plan_repo(realm, repo, only)
        plan.seconds = (time.perf_counter() - wall, time.process_time() - cpu)
        return plan

    def _plan_repo(self, realm: str, repo: str, only: Iterable[str] | None) -> Plan:
        if only is not None:
            only = sorted(set(only))
        # A few dirty paths (a save) read only their own file rows.
        few = only if only is not None and len(only) <= FEW_PATHS else None
        known = self.store.file_records(realm=realm, repo=repo, paths=few)
        plan = Plan(realm=realm, repo=repo, full=only is None)
        recorded = self.store.get_meta(extractor_key(realm, repo))
        if known and recorded != EXTRACTOR_VERSION:
            # Rows of an older parser: every file is parsed again, changed or not,
            # but those a cut run already parsed with this one (_cut_short).
            since = _parsed_since(recorded)
            old = {p for p, rec in known.items() if since is None or rec.indexed_at < since}
            if old:
                log.info("extractor changed, reparsing realm=%s repo=%s files=%d", realm, repo,
                         len(old))
            plan.outdated = bool(old)
            known = {p: replace(rec, size=-1, hash="") if p in old else rec
                     for p, rec in known.items()}
        if not Path(repo).is_dir():
            log.warning("repo missing realm=%s repo=%s", realm, repo)
            plan.deleted = [file_key(realm, repo, p) for p in known]
            return plan
        if only is None:
            self._plan_full(plan, known)
        else:
            self._plan_paths(plan, known, only)
        return plan

    def _plan_full(self, plan: Plan, known: dict) -> None:
        self._force_torn(plan, known)
        listing = self.rules(plan.repo, fresh=True).list()
        for path, reason, detail in listing.skipped:
            plan.skipped.append(FileRecord(plan.realm, plan.repo, path, status=SKIPPED,
                                           reason=f"{reason}: {detail}", indexed_at=time.time()))
        for path in listing.files:
            self._plan_file(plan, known.get(path), plan.realm, plan.repo, path)
        present = set(listing.files) | {r.path for r in plan.skipped}
        plan.deleted += [file_key(plan.realm, plan.repo, p) for p in sorted(set(known) - present)]
        plan.listed = len(listing.files)

    def _force_torn(self, plan: Plan, known: dict) -> None:
        """Reparse files whose entry rows do not number what their file row says.

        A kill between an entry batch's delete and its add (the enrich stage
        rewrites rows to set vectors) leaves a file row that matches the disk
        over missing entries; only a count check can see it.
        """
        counts = self.store.entry_counts(plan.realm, plan.repo)
        for path, rec in list(known.items()):
            if counts.get(rec.key, 0) != rec.entries:
                log.warning("torn entries repaired realm=%s repo=%s path=%s want=%d have=%d",
                            plan.realm, plan.repo, path, rec.entries, counts.get(rec.key, 0))
                known[path] = replace(rec, size=-1, hash="")
                plan.repaired += 1

    def _plan_paths(self, plan: Plan, known: dict, paths: list[str]) -> None:
        """Dirty paths from the watcher or the command line: no tree walk."""
        rules = self.rules(plan.repo)
        for path in paths:
            if rules.is_ignored(path):
                if path in known:   # became ignored: its rows must go
                    plan.deleted.append(known[path].key)
                continue
            plan.listed += 1
            self._plan_file(plan, known.get(path), plan.realm, plan.repo, path)

    def _plan_file(self, plan: Plan, rec: FileRecord | None, realm, repo, path) -> None:
        if not plan.real_root:
            plan.real_root = os.path.realpath(repo)
        stat = real_stat_key(plan.real_root, path)
        if stat is None:
            if rec is not None:
                plan.deleted.append(rec.key)
            return
        if rec is not None and (rec.size, rec.mtime_ns, rec.inode) == stat \
                and not dropped_for_a_secret_value(rec):
            plan.unchanged += 1
            return
        plan.jobs.append(Job(realm, repo, path, rec.hash if rec else "",
                             rec.status if rec else "", rec.reason if rec else "",
                             self.settings.max_file_size, tuple(self.settings.secret_allow),
                             rec.entries if rec else 0,
                             summaries=self.settings.summarize != "off"))

    # -- running -----------------------------------------------------------
    def run(self, plans: list[Plan]) -> Report:
        started = time.monotonic()
        report = Report()
        jobs = [job for plan in plans for job in plan.jobs]
        report.files = sum(p.listed for p in plans)
        report.unchanged = sum(p.unchanged for p in plans)
        report.repaired = sum(p.repaired for p in plans)
        stages = report.stages
        stages.wall["plan"] += sum(p.seconds[0] for p in plans)
        stages.cpu["plan"] += sum(p.seconds[1] for p in plans)
        self.on_progress({"event": "plan", "files": report.files, "to_check": len(jobs),
                          "unchanged": report.unchanged,
                          "deleted": sum(len(p.deleted) for p in plans)})
        pending: list[FileWrite] = []
        touched: list[FileRecord] = []
        for plan in plans:
            pending.extend(FileWrite(rec, [], []) for rec in plan.skipped)
            report.skipped.update(rec.reason.split(":")[0] for rec in plan.skipped)
        shards = self._shards(plans, report)
        if shards:
            jobs = [_shared_job(job, shards) for job in jobs]
        copying = SharedCopy(shards, self._packed())
        outcomes = self._outcomes(jobs)
        packed_bytes = 0
        try:
            for i, job in enumerate(jobs, 1):
                if self.should_stop():
                    report.cut = len(jobs) - i + 1
                    break
                with stages.timed("workers"):
                    outcome = next(outcomes)
                stages.add_worker(outcome.cpu)
                if outcome.shared:
                    report.hashed += 1
                    copying.add(job, outcome.record)
                    if copying.waiting >= SHARED_BATCH:
                        with stages.timed("shared"):
                            packed_bytes += self._copy(copying, report, pending)
                else:
                    self._account(outcome, report, pending, touched, job)
                if outcome.write is not None and outcome.write.packed:
                    packed_bytes += sum(map(len, outcome.write.packed))
                if (packed_bytes >= PACKED_BATCH_BYTES or len(pending) >= PACKED_BATCH_FILES
                        or (not packed_bytes and len(pending) >= WRITE_BATCH)):
                    with stages.timed("store"):
                        self._flush(pending, touched)
                    packed_bytes = 0
                if i % 50 == 0 or i == len(jobs):
                    self.on_progress({"event": "progress", "done": i, "total": len(jobs),
                                      "parsed": report.parsed,
                                      "shared": report.shared + copying.waiting})
        finally:
            outcomes.close()   # the pool shuts down here on every path
        with stages.timed("shared"):
            self._copy(copying, report, pending)
        if report.cut:
            return self._cut_short(plans, report, pending, touched, started)
        again = self._outcomes(copying.parse)   # the shard's files it could not give
        try:
            for job in copying.parse:
                self._account(next(again), report, pending, touched, job)
        finally:
            again.close()
        with stages.timed("store"):
            self._flush(pending, touched)
            deleted = [key for plan in plans for key in plan.deleted]
            deleted += report.vanished
            self.store.delete_files(deleted)
            self._record_extractor(plans)
        report.deleted = len(deleted)
        report.changed_paths.extend(tuple(k.split("\x1f")) for k in deleted)
        if report.parsed + report.shared + report.deleted >= self.fts_min_files:
            with stages.timed("fts"):
                self.store.ensure_fts()
        report.seconds = time.monotonic() - started
        self.on_progress({"event": "done", **report.to_json()})
        return report

    def _cut_short(self, plans: list[Plan], report: Report, pending, touched,
                   started: float) -> Report:
        """Write what was parsed and stop: no deletes, as the plans were not
        carried out in full (the next reconcile plans again). A realm's reparse
        resumes: files written since ``since`` hold this extractor's rows."""
        since = time.time() - (time.monotonic() - started)
        with report.stages.timed("store"):
            self._flush(pending, touched)
            for plan in plans:
                key = extractor_key(plan.realm, plan.repo)
                recorded = self.store.get_meta(key)
                if plan.full and recorded != EXTRACTOR_VERSION:
                    # an earlier cut's time stands: its files are this extractor's too
                    since_then = _parsed_since(recorded) or since
                    self.store.set_meta(key, f"{EXTRACTOR_VERSION}{SINCE}{since_then!r}")
        report.seconds = time.monotonic() - started
        log.info("run cut short: %d of %d files left for the next reconcile", report.cut,
                 report.cut + report.hashed + report.touched + report.shared)
        self.on_progress({"event": "done", **report.to_json()})
        return report

    def _record_extractor(self, plans: list[Plan]) -> None:
        """A repo whose whole tree was just planned holds this extractor's rows
        (or none yet): recorded so the next run parses only what changed."""
        for plan in plans:
            key = extractor_key(plan.realm, plan.repo)
            if plan.full and self.store.get_meta(key) != EXTRACTOR_VERSION:
                self.store.set_meta(key, EXTRACTOR_VERSION)

    def _account(self, outcome: Outcome, report: Report, pending, touched, job: Job) -> None:
        if outcome.vanished:
            if job.known_hash or job.known_status:
                report.vanished.append(file_key(job.realm, job.repo, job.path))
            return
        report.hashed += outcome.record.status != SKIPPED
        if outcome.touched:
            report.touched += 1
            touched.append(outcome.record)
            return
        rec = outcome.record
        if rec.status == SKIPPED:
            report.skipped[rec.reason.split(":")[0]] += 1
        else:
            report.parsed += 1
            report.entries += rec.entries
            report.failed += rec.status == FAILED
        report.changed_paths.append((rec.realm, rec.repo, rec.path))
        pending.append(outcome.write)

    def _flush(self, pending: list[FileWrite], touched: list[FileRecord]) -> None:
        # The words first, outside the writer lock: the embed stage holds it while
        # it writes a step's vectors (hundreds of ms on a big realm), which keyword
        # search need not wait for. The write below rewrites only what changed
        # since (an annotation), as the hot index keeps a fingerprint per row.
        self.store.write_words(pending)
        with self.store.writer:     # an annotation written meanwhile is not lost
            if pending and self.before_write is not None:
                self.before_write([row for w in pending for row in w.entries])
            if pending:
                self.store.write(pending, before_table=self.before_table)
                pending.clear()
        if touched:
            self.store.write_records(touched)
            touched.clear()

    def _packed(self) -> bool:
        """Packed rows for a writer that never looks at them (the one-shot): the
        daemon's hook and hot indexes take row dicts."""
        return (self.before_write is None and self.before_table is None
                and self.store.text_index is None
                and self.store.vector_index is None)

    def _shards(self, plans: list[Plan], report: Report) -> dict:
        """Shared-index shards whose rows may replace parses in this run: only
        for realms that name one, and only for big batches (a cold start, a
        branch switch), never for a save's few files."""
        repos = [(p.realm, p.repo) for p in plans
                 if p.realm in self.settings.shared and len(p.jobs) >= POOL_THRESHOLD]
        if not repos:
            return {}
        from .shared_index.rows import open_shards

        shards, notes = open_shards(self.settings, repos)
        report.shared_notes.extend(notes)
        return shards

    def _copy(self, copying: "SharedCopy", report: Report, pending: list[FileWrite]) -> int:
        """The waiting shared files' rows into ``pending``; packed bytes added."""
        writes = copying.take()
        for write in writes:
            report.shared += 1
            report.entries += write.record.entries
            report.changed_paths.append((write.record.realm, write.record.repo, write.record.path))
            pending.append(write)
        return sum(len(b) for w in writes if w.packed for b in w.packed)

    def _outcomes(self, jobs: list[Job]):
        workers = _workers(self.settings)
        packed = self._packed()
        if len(jobs) < POOL_THRESHOLD or workers <= 1:
            for job in jobs:
                yield process_file(job, packed)
            return
        if self.pool is not None:
            yield from self.pool.map(process_file, jobs, repeat(packed), chunksize=8)
            return
        with _new_pool(workers) as pool:
            yield from pool.map(process_file, jobs, repeat(packed), chunksize=8)

    # -- convenience -------------------------------------------------------
    def index(self, realm: str | None = None, only: dict | None = None) -> Report:
        """One-shot: drop the rows of repos no realm names, plan every repo of the realm
        (or all realms) and run."""
        removed = purge_unknown_repos(self.settings, self.store) if only is None else []
        plans = []
        for name, repo in self.settings.realm_repos(realm):
            paths = None if only is None else only.get((name, repo))
            if only is not None and paths is None:
                continue
            plans.append(self.plan_repo(name, repo, paths))
        report = self.run(plans)
        report.removed_repos = removed
        log.info("index done files=%s parsed=%s deleted=%s s=%.2f", report.files,
                 report.parsed, report.deleted, report.seconds)
        return report


def purge_unknown_repos(settings, store) -> list[tuple[str, str]]:
    """Delete the rows of every repo no realm names (removed by `indexctl realm remove` or
    from config.toml, with or without a daemon running): no ghost rows in search."""
    wanted = set(settings.realm_repos(None))
    gone = sorted(store.stored_repos(besides=wanted))
    for realm, repo in gone:
        store.delete_repo(realm, repo)
        log.info("repo removed realm=%s repo=%s: its rows left the index", realm, repo)
    return gone
