"""The daemon's owners index: blame per file, cached, warmed in the background.

A file's blame is cached by (repo, path, HEAD's blob id of it): when HEAD moves,
only files whose blob changed are blamed again (``_scan_heads`` queues them; a
query that finds a stale entry blames that file at once). Blame costs tens to
hundreds of ms a file, growing with its history (bench/owners.py), so it runs on
this module's own thread, never the indexing worker; a query blames only the file
it is about, and impact's affected files come from the cache (0.5 s of blame at
most, the rest queued first and counted as ``pending``). The working tree is laid over HEAD's blame at query
time (cheap: a stat, and a diff when the file changed), so uncommitted edits are
always current.

Reads the store (which files are indexed, symbol line ranges); never writes it.
"""

from __future__ import annotations

import logging
import stat
import threading
import time
from collections import deque
from pathlib import Path

from ..errors import InvalidParams, RealmError
from .blame import (UNCOMMITTED, BlameUnavailable, FileBlame, blame_committed, history_bound,
                    line_count, worktree_lines)
from .gitrepo import GitFile
from .tally import Commit, merge_reviewers, tally
from .targets import resolve, symbol_range

log = logging.getLogger(__name__)

MAX_COMMITS = 2000        # blame looks this many first parents back; older lines are OLDER
HEAD_POLL_S = 30.0        # HEAD is checked this often even when nobody says it moved
MAX_WARM_FILES = 20_000   # files warmed per repo and HEAD (the rest are blamed when asked)
NOT_IN_HEAD = FileBlame("", (), None, False)   # every line is the working tree's
IMPACT_FILES = 50         # affected files whose owners an impact answer sums up
IMPACT_BLAME_S = 0.5      # ...blaming those not cached yet for this long, queueing the rest
SYMBOL_OWNERS = 3         # owners listed per symbol in `symbols`


class Owners:
    def __init__(self, settings_provider, store=None, max_commits: int = MAX_COMMITS):
        self._settings = settings_provider
        self.store = store
        self.max_commits = max_commits
        self.lock = threading.Lock()
        self.cache: dict[tuple[str, str], FileBlame] = {}
        self._worktree: dict[tuple[str, str], tuple] = {}   # (blob, stat) -> lines
        self._commits: dict[str, tuple[tuple, dict[str, Commit]]] = {}   # repo -> (stamp, ..)
        self._bounds: dict[str, tuple] = {}                 # repo -> (head, oldest)
        self._heads: dict[str, str] = {}                    # repo -> HEAD last warmed
        self._queue: deque = deque()
        self._queued: set = set()
        self._active: tuple | None = None
        self._wake = threading.Event()
        self._stopping = False
        # wake() asks for a scan of every repo, HEAD moved or not; a scan answers the asks
        # made before it began (a wake during a scan gets another).
        self._scans_wanted, self._scans_done = 1, 0
        self._thread: threading.Thread | None = None
        self.blamed = 0          # blame runs so far (the incremental test counts them)
        self.partial_repos: set[str] = set()

    # -- the background thread ----------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="indexd-owners", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            # A blame under way runs to its end in C; the daemon exits without waiting long.
            self._thread.join(timeout=5)

    def wake(self) -> None:
        """A repo was reconciled (HEAD may have moved, files may have been indexed for the
        first time): compare every indexed file's blob with the cache soon."""
        self._scans_wanted += 1
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                self._scan_heads()
            except Exception:  # noqa: BLE001 - owners are optional evidence; try again later
                log.exception("owners: looking for changed files failed")
            # A reconcile meanwhile: rescan first, HEAD may have moved.
            while not (self._stopping or self._scan_due()) and self._work_one():
                pass
            if not (self._scan_due() or self._queue):
                self._wake.wait(HEAD_POLL_S)   # an enqueue or a wake() ends it early

    def _work_one(self) -> bool:
        with self.lock:
            if not self._queue:
                return False
            job = self._queue.popleft()
            self._queued.discard(job)
            self._active = job      # still counted as queued until its blame is stored
        repo, rel = job
        try:
            self._committed(GitFile(repo), repo, rel, compute=True)
        except BlameUnavailable:
            pass
        except Exception as exc:  # noqa: BLE001 - one file's failure is that file's
            log.warning("owners: blame failed repo=%s path=%s error=%s", repo, rel, exc)
        finally:
            self._active = None
        return True

    def _enqueue(self, jobs, first: bool = False) -> None:
        with self.lock:
            for job in jobs:
                if job in self._queued:
                    continue
                self._queued.add(job)
                (self._queue.appendleft if first else self._queue.append)(job)
        self._wake.set()

    def _scan_heads(self) -> None:
        """Repos whose HEAD moved (every repo after a ``wake``): queue the indexed files
        whose blob at HEAD is not the one blamed."""
        wanted = self._scans_wanted
        force = self._scans_done < wanted
        try:
            self._scan_repos(force)
        finally:
            self._scans_done = wanted

    def _scan_due(self) -> bool:
        return self._scans_done < self._scans_wanted

    def _scan_repos(self, force: bool) -> None:
        for realm, repo in self._settings().realm_repos(None):
            try:
                ctx = GitFile(repo)
            except BlameUnavailable:
                continue
            head = str(ctx.head) if ctx.head is not None else None
            if head is None or (self._heads.get(repo) == head and not force):
                continue
            stale = self._stale_files(ctx, realm, repo)
            self._enqueue(((repo, rel) for rel in stale[:MAX_WARM_FILES]))
            (self.partial_repos.add if len(stale) > MAX_WARM_FILES
             else self.partial_repos.discard)(repo)
            self._heads[repo] = head
            if stale:
                log.info("owners: to blame repo=%s head=%s files=%d", repo, head[:12], len(stale))

    def _stale_files(self, ctx: GitFile, realm: str, repo: str) -> list[str]:
        if self.store is None:
            return []
        records = self.store.file_records(realm=realm, repo=repo)
        out = []
        for rel, rec in sorted(records.items()):
            if rec.status != "indexed":
                continue
            try:
                entry = ctx.head_entry(rel)
            except BlameUnavailable:
                continue
            cached = self.cache.get((repo, rel))
            if entry is None:
                with self.lock:
                    self.cache.pop((repo, rel), None)
            elif cached is None or cached.blob != str(entry.id):
                out.append(rel)
        return out

    # -- per file -----------------------------------------------------------
    def _committed(self, ctx: GitFile, repo: str, rel: str, compute: bool) -> FileBlame | None:
        """HEAD's blame of the file, cached by its blob; None when not cached and not
        ``compute`` (queued first instead). Raises BlameUnavailable with the reason."""
        entry = ctx.head_entry(rel)
        if entry is None:
            return NOT_IN_HEAD
        cached = self.cache.get((repo, rel))
        if cached is None or cached.blob != str(entry.id):
            if not compute:
                self._enqueue([(repo, rel)], first=True)
                return None
            cached = self._blame(ctx, repo, rel, ctx.git[entry.id])
        if cached.binary:
            raise BlameUnavailable("binary file")
        return cached

    def _blame(self, ctx: GitFile, repo: str, rel: str, blob) -> FileBlame:
        if blob.is_binary:
            fb = FileBlame(str(blob.id), (), None, False, binary=True)
        else:
            fb = blame_committed(ctx.git, ctx.git_path(rel), blob, ctx.head,
                                 self._bound(ctx, repo))
        with self.lock:
            self.cache[(repo, rel)] = fb
            self.blamed += 1
        return fb

    def _bound(self, ctx: GitFile, repo: str):
        head, oldest = self._bounds.get(repo, (None, None))
        if head != ctx.head:
            oldest = history_bound(ctx.git, ctx.head, self.max_commits)
            self._bounds[repo] = (ctx.head, oldest)
        return oldest

    def attribution(self, ctx: GitFile, repo: str, rel: str, compute: bool = True):
        """(per line of the file on disk: commit index or UNCOMMITTED/OLDER, the commits,
        notes) or None (not blamed yet, queued). Raises BlameUnavailable."""
        disk_path = Path(repo, rel)
        try:
            st = disk_path.lstat()   # a link is not followed out of the repo
        except OSError:
            raise BlameUnavailable("not in the working tree") from None
        if not stat.S_ISREG(st.st_mode):
            raise BlameUnavailable("a directory: ask for its files" if stat.S_ISDIR(st.st_mode)
                                   else "a symbolic link" if stat.S_ISLNK(st.st_mode)
                                   else "not a regular file")
        if st.st_size > self._settings().max_file_size:
            raise BlameUnavailable("larger than max_file_size")
        fb = self._committed(ctx, repo, rel, compute)
        if fb is None:
            return None
        notes = {"bounded": fb.bounded, "head": str(ctx.head) if ctx.head else None}
        if fb.lines is None:   # not in HEAD: every line is the working tree's
            disk = disk_path.read_bytes()
            if b"\0" in disk[:8192]:
                raise BlameUnavailable("binary file")
            notes["reason"] = "no commits yet" if ctx.head is None else "not committed yet"
            return [UNCOMMITTED] * line_count(disk), [], notes
        lines = self._on_disk(ctx, repo, rel, fb, (st.st_size, st.st_mtime_ns, st.st_ino))
        return lines, self._commit_infos(ctx, repo, fb), notes

    def _on_disk(self, ctx: GitFile, repo: str, rel: str, fb: FileBlame, stamp: tuple):
        key = (repo, rel)
        hit = self._worktree.get(key)
        if hit is not None and hit[0] == (fb.blob, stamp):
            return hit[1]
        disk = Path(repo, rel).read_bytes()
        if b"\0" in disk[:8192]:
            raise BlameUnavailable("binary file")
        import pygit2

        same = str(pygit2.hash(disk)) == fb.blob
        lines = fb.lines if same else worktree_lines(ctx.git[fb.blob], disk, fb)
        with self.lock:
            self._worktree[key] = ((fb.blob, stamp), lines)
        return lines

    def _commit_infos(self, ctx: GitFile, repo: str, fb: FileBlame) -> list[Commit]:
        """The blame's commits with their authors through .mailmap (cached per repo
        while HEAD and the working tree's .mailmap stay as they are)."""
        mailmap = Path(ctx.git.workdir, ".mailmap")
        stamp = (str(ctx.head), mailmap.stat().st_mtime_ns if mailmap.exists() else 0)
        seen_stamp, known = self._commits.get(repo, (None, {}))
        if seen_stamp != stamp:
            known = {}
            self._commits[repo] = (stamp, known)
        missing = [cid for cid in fb.commits if cid not in known]
        if missing:
            import pygit2

            mm = pygit2.Mailmap.from_repository(ctx.git)
            for cid in missing:
                commit = ctx.git[cid]
                name, email = mm.resolve(commit.author.name, commit.author.email)
                known[cid] = Commit(cid, name, email, commit.author.time,
                                    commit.message.split("\n", 1)[0][:200])
        return [known[cid] for cid in fb.commits]

    # -- answers ------------------------------------------------------------
    def target(self, target: str, limit: int = 10) -> dict:
        """The `owners` method: the owners of one file or symbol, blamed now if needed."""
        realm, repo, rel, symbol = resolve(self._settings(), target)
        start, end = symbol_range(self.store, realm, repo, rel, symbol) if symbol else (1, None)
        out = {"target": target, "realm": realm, "repo": repo, "path": rel, "symbol": symbol,
               "start_line": start, "end_line": end}
        return out | self._tally(repo, rel, start, end, limit)

    def _tally(self, repo: str, rel: str, start: int, end: int | None, limit: int,
               compute: bool = True, ctx: GitFile | None = None) -> dict:
        try:
            got = self.attribution(ctx or GitFile(repo), repo, rel, compute)
        except BlameUnavailable as exc:
            return unavailable(exc.reason)
        if got is None:
            return {"available": False, "pending": True, "owners": [], "lines": 0,
                    "reason": "not blamed yet (queued in the background)" if self._thread
                    else "not blamed: over this answer's time for blame"}
        lines, commits, notes = got
        t = tally(lines, commits, start, end, limit)
        partial = notes["bounded"] and t["older_lines"] > 0
        return {"available": True, "reason": notes.get("reason"), "head": notes["head"], **t,
                "partial": partial,
                "partial_reason": (f"history cut at the last {self.max_commits} commits: "
                                   f"{t['older_lines']} lines are older") if partial else None}

    def annotate_symbols(self, result: dict) -> None:
        """`symbols`: the file's owners, and each symbol's top owners (best effort: an
        outline is never refused for its owners)."""
        try:
            self._annotate_symbols(result)
        except Exception as exc:  # noqa: BLE001 - logged; the answer says owners failed
            log.exception("owners: symbols failed path=%s", result.get("path"))
            result["owners"] = unavailable(f"owners failed: {type(exc).__name__}: {exc}")
            for hit in result.get("results") or []:
                hit.setdefault("owners", [])

    def _annotate_symbols(self, result: dict) -> None:
        # An outline is asked for often (editors): with the owners thread running a file
        # not blamed yet is queued first, not blamed in the request (seconds on a long
        # history); without it (no daemon) there is no one else to do it.
        compute = self._thread is None
        repo, rel = result["repo"], result["path"]
        try:
            ctx = GitFile(repo)
            got = self.attribution(ctx, repo, rel, compute)
            result["owners"] = self._tally(repo, rel, 1, None, 10, compute, ctx)
        except BlameUnavailable as exc:
            got, result["owners"] = None, unavailable(exc.reason)
        if got is not None:
            lines, commits, _notes = got
        for hit in result.get("results") or []:
            hit["owners"] = [] if got is None else tally(
                lines, commits, hit.get("start_line") or 1, hit.get("end_line"),
                SYMBOL_OWNERS)["owners"]

    def for_impact(self, result: dict) -> dict:
        """Who should review: the target's owners and the people owning the most
        affected files (from the cache; files not blamed yet are queued, ``pending``).
        Best effort: an impact answer is never refused for its owners."""
        try:
            return self._for_impact(result)
        except Exception as exc:  # noqa: BLE001 - logged; the answer says owners failed
            log.exception("owners: impact failed target=%s", result.get("target"))
            return {"target": unavailable(f"owners failed: {type(exc).__name__}: {exc}"),
                    "reviewers": [], "complete": False}

    def _for_impact(self, result: dict) -> dict:
        try:
            target = self.target(result["target"], limit=5)
        except (RealmError, InvalidParams) as exc:
            target = unavailable(exc.message)
        files = _affected_files(result, {(target.get("repo"), target.get("path"))})
        spans = [(repo, rel, 1, None) for repo, rel in files[:IMPACT_FILES]]
        tallies, pending, missing = self._tallies(spans)
        return {"target": {k: target.get(k) for k in (
                    "available", "reason", "lines", "owners", "uncommitted_lines", "older_lines",
                    "partial") if k in target},
                "reviewers": merge_reviewers([target, *tallies]),
                "files": min(len(files), IMPACT_FILES), "files_total": len(files),
                "pending": pending, "unavailable": missing,
                "complete": pending == 0 and len(files) <= IMPACT_FILES}

    def for_changes(self, result: dict) -> dict:
        """`changes`: who wrote the changed symbols (the lines around an edit), and who
        should review, over them and the affected files. Best effort, like impact's."""
        try:
            repo = result["repo"]
            spans = [(repo, ch["path"], ch.get("start_line") or 1,
                      ch.get("end_line") if ch.get("symbol") else None)
                     for ch in result.get("changed") or [] if ch.get("change") != "deleted"]
            spans = list(dict.fromkeys(spans))[:IMPACT_FILES]
            changed, pending, missing = self._tallies(spans)
            files = _affected_files(result, {(s[0], s[1]) for s in spans})
            left = max(0, IMPACT_FILES - len(spans))
            affected, p2, m2 = self._tallies([(r, p, 1, None) for r, p in files[:left]])
        except Exception as exc:  # noqa: BLE001 - logged; the answer says owners failed
            log.exception("owners: changes failed repo=%s", result.get("repo"))
            return {"changed": [], "reviewers": [], "complete": False,
                    "reason": f"owners failed: {type(exc).__name__}: {exc}"}
        return {"changed": merge_reviewers(changed),
                "reviewers": merge_reviewers(changed + affected),
                "files": len(spans) + min(len(files), left), "pending": pending + p2,
                "unavailable": missing + m2, "complete": pending + p2 == 0 and len(files) <= left}

    def _tallies(self, spans) -> tuple[list[dict], int, int]:
        """Owners of (repo, rel, start, end) spans: blamed now for IMPACT_BLAME_S in all,
        then from the cache only (the rest queued first); with the pending and the
        unavailable counts."""
        tallies, pending, missing = [], 0, 0
        ctxs: dict[str, GitFile | None] = {}
        deadline = time.monotonic() + IMPACT_BLAME_S
        for repo, rel, start, end in spans:
            if repo not in ctxs:
                try:
                    ctxs[repo] = GitFile(repo)
                except BlameUnavailable:
                    ctxs[repo] = None
            compute = time.monotonic() < deadline
            t = (self._tally(repo, rel, start, end, 5, compute=compute, ctx=ctxs[repo])
                 if ctxs[repo] is not None else unavailable("not in git"))
            pending += bool(t.get("pending"))
            missing += not t["available"] and not t.get("pending")
            tallies.append(t)
        return tallies, pending, missing

    def status(self) -> dict:
        with self.lock:
            queued = len(self._queue) + (self._active is not None)
            return {"files": len(self.cache), "blamed": self.blamed, "queued": queued,
                    "rescan_due": self._scan_due(),
                    "heads": dict(self._heads), "partial_repos": sorted(self.partial_repos)}


def _affected_files(result: dict, skip: set) -> list[tuple[str, str]]:
    return [f for f in dict.fromkeys((i["repo"], i["path"]) for i in result.get("affected") or [])
            if f not in skip]


def unavailable(reason: str) -> dict:
    return {"available": False, "reason": reason, "owners": [], "lines": 0}
