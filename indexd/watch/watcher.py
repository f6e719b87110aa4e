"""watchdog observers per repo -> callbacks with repo-relative paths.

An event only means "this path may be dirty": the pipeline stats and hashes
before doing anything. Events inside ``.git`` are reduced to git state
changes (index.lock appearing or going, HEAD or refs moving), which make the
engine hold events and reconcile the repo as one batch. Directory events
(a folder moved in, created, deleted) trigger a reconcile of the repo,
because inotify reports nothing for the files inside a moved-in folder.

A kernel queue overflow is only logged by watchdog; a logging handler turns
that log record into a reconcile request for the affected repo.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent, FileCreatedEvent,
    FileDeletedEvent, FileModifiedEvent, FileMovedEvent, FileSystemEventHandler,
)
from watchdog.observers import Observer

from ..model import inside

log = logging.getLogger(__name__)

EVENTS = [FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
          DirCreatedEvent, DirDeletedEvent, DirMovedEvent]
# Not "index": libgit2 may rewrite it while we list files, which would loop.
GIT_STATE_FILES = {"index.lock", "HEAD", "ORIG_HEAD", "MERGE_HEAD", "REBASE_HEAD"}
COOKIE_PREFIX = ".indexd-cookie-"
SKIP_DIRS = {"node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".tox"}


class RepoHandler(FileSystemEventHandler):
    def __init__(self, realm: str, repo: str, on_path: Callable, on_git: Callable,
                 on_dir: Callable):
        self.realm, self.repo = realm, repo
        self.root = os.path.realpath(repo)
        self.on_path, self.on_git, self.on_dir = on_path, on_git, on_dir

    def _rel(self, path) -> str | None:
        path = os.fsdecode(path)
        if not path.startswith(self.root):
            real = os.path.realpath(path)
            if not real.startswith(self.root):
                return None
            path = real
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        return None if rel.startswith("..") else rel

    def on_any_event(self, event) -> None:
        try:
            for raw in filter(None, (event.src_path, getattr(event, "dest_path", None))):
                rel = self._rel(raw)
                if rel is None:
                    continue
                if rel == ".":
                    # The repo root itself was moved or deleted: reconcile,
                    # which finds it missing and drops its rows.
                    self.on_dir(self.realm, self.repo, ".", event.event_type)
                    continue
                self._dispatch(event, rel)
        except Exception:  # noqa: BLE001 - a handler error must never kill the observer
            log.exception("watch handler failed repo=%s", self.repo)

    def _dispatch(self, event, rel: str) -> None:
        parts = rel.split("/")
        if parts[-1].startswith(COOKIE_PREFIX):
            self.on_path(self.realm, self.repo, rel, event.event_type)
            return
        if parts[0] == ".git":
            if parts[-1] in GIT_STATE_FILES or (len(parts) > 1 and parts[1] == "refs"):
                self.on_git(self.realm, self.repo, rel)
            return
        if any(p in SKIP_DIRS for p in parts[:-1]):
            return
        if event.is_directory:
            self.on_dir(self.realm, self.repo, rel, event.event_type)
            return
        self.on_path(self.realm, self.repo, rel, event.event_type)


class _OverflowLog(logging.Handler):
    """Turns watchdog's overflow warning into a rescan of the affected repo."""

    def __init__(self, on_overflow: Callable[[str], None]):
        super().__init__(level=logging.WARNING)
        self.on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "overflow" in msg.lower():
            path = record.args[0] if record.args else None
            self.on_overflow(str(path) if path else "")


class Watcher:
    """One observer thread with a recursive watch per repo."""

    def __init__(self, on_path, on_git, on_dir, on_overflow):
        self.on_path, self.on_git, self.on_dir = on_path, on_git, on_dir
        self.observer = Observer()
        self.watches: dict[tuple[str, str], object] = {}
        self.errors: dict[tuple[str, str], str] = {}
        self._overflow = _OverflowLog(on_overflow)
        logging.getLogger("watchdog.observers").addHandler(self._overflow)

    def start(self) -> None:
        self.observer.start()

    def sync(self, repos: list[tuple[str, str]]) -> None:
        """Watch exactly these (realm, repo) pairs."""
        wanted = set(repos)
        for key in list(self.watches):
            if key not in wanted:
                self.observer.unschedule(self.watches.pop(key))
        for key in wanted - set(self.watches):
            self._add(*key)

    def _add(self, realm: str, repo: str) -> None:
        if not Path(repo).is_dir():
            self.errors[(realm, repo)] = "missing"
            return
        handler = RepoHandler(realm, repo, self.on_path, self.on_git, self.on_dir)
        try:
            before = inotify_watch_count()
            self.watches[(realm, repo)] = self.observer.schedule(
                handler, repo, recursive=True, event_filter=EVENTS)
            self.errors.pop((realm, repo), None)
            self._check_complete(realm, repo, before)
        except OSError as exc:
            # inotify limit exhausted (ENOSPC) or the folder vanished: the
            # engine falls back to periodic reconciliation for this repo.
            self.errors[(realm, repo)] = f"cannot watch: {exc.strerror or exc}"
            log.warning("watch failed realm=%s repo=%s error=%s", realm, repo, exc)

    def _check_complete(self, realm: str, repo: str, before: int | None) -> None:
        """watchdog silently skips sub-directories it cannot watch (inotify limit):
        compare the watches it took with the directories there are."""
        after = inotify_watch_count()
        if before is None or after is None:
            return
        needed = self._new_dirs(realm, repo)
        got = after - before
        if got < needed:
            self.errors[(realm, repo)] = (
                f"partial: {got} of {needed} directories watched (inotify limit; raise "
                f"fs.inotify.max_user_watches); reconciled periodically instead")
            log.warning("watch partial realm=%s repo=%s watched=%d dirs=%d", realm, repo, got, needed)

    def _new_dirs(self, realm: str, repo: str) -> int:
        """The directories under ``repo`` no other watch covers: one inotify instance
        watches a directory once, so those others hold cannot raise the count (a repo
        inside a folder another realm watches adds none)."""
        others = [key[1] for key in self.watches if key != (realm, repo)]
        if not Path(repo).is_dir() or any(inside(o, repo) for o in others):
            return 0
        inner = [o for o in others if inside(repo, o)]
        count = 0
        for root, dirs, _files in os.walk(repo):
            if any(inside(o, root) for o in inner):
                dirs[:] = []
                continue
            count += 1
        return count

    def restart(self, realm: str, repo: str) -> None:
        """Drop and re-add one repo's watch (after it missed events)."""
        watch = self.watches.pop((realm, repo), None)
        if watch is not None:
            try:
                self.observer.unschedule(watch)
            except (KeyError, OSError):
                pass
        self._add(realm, repo)

    def state(self, realm: str, repo: str) -> str:
        if not Path(repo).is_dir():
            return "missing"
        if (realm, repo) in self.errors:
            return self.errors[(realm, repo)]
        return "ok" if (realm, repo) in self.watches else "off"

    def stop(self) -> None:
        logging.getLogger("watchdog.observers").removeHandler(self._overflow)
        self.observer.stop()
        self.observer.join(timeout=5)


def inotify_watch_count() -> int | None:
    """Inotify watches this process holds (Linux /proc); None elsewhere."""
    fd_dir = "/proc/self/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return None
    total = 0
    for fd in fds:
        try:
            if os.readlink(f"{fd_dir}/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                total += sum(1 for line in fh if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total
