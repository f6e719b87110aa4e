"""The files table's records per (realm, repo), kept in memory by table version.

A save's plan asks the store for a few files' records and a status call for a
repo's. On a live daemon's table those are LanceDB scans over the fragments
that every batch adds (15-20 ms a plan, over 100 ms when the cores are busy:
the tail of save -> searchable, docs/decisions.md "A save's plan reads no
table"). The records change only through the store's own writes, so the store
keeps them here and answers from memory while the table's version is the one
the copy was made at.

Coherence: ``get`` answers only when the caller's version is
the copy's; a write inside this process moves the copy to the version its
commit made (``wrote``); any other version (another process's commit, a
compaction, a repo's removal) drops the copy and the next read of a repo fills
it from the table again, whole (a save's few paths then read the repo once).
No lancedb here: the store passes versions and records in.
"""

from __future__ import annotations

import threading

from ..model import FileRecord

Repo = tuple[str, str]


class FileRecordCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: int | None = None
        self._repos: dict[Repo, dict[str, FileRecord]] = {}

    def get(self, version: int, realm: str, repo: str,
            paths: list[str] | None = None) -> dict[str, FileRecord] | None:
        """One repo's records by path (only ``paths``' where given, absent ones left
        out), or None: not held at this version."""
        with self._lock:
            held = self._repos.get((realm, repo)) if version == self._version else None
            if held is None:
                return None
            return dict(held) if paths is None else {p: held[p] for p in paths if p in held}

    def fill(self, version: int, realm: str, repo: str, records: dict[str, FileRecord]) -> None:
        """One repo's records as the table held them at ``version`` (read
        before the scan: a commit in between leaves a newer copy under an older
        version, which the next check drops)."""
        with self._lock:
            if version != self._version:
                self._repos, self._version = {}, version
            self._repos[(realm, repo)] = dict(records)

    def wrote(self, before: int, after: int, put=(), drop=()) -> None:
        """This process committed ``before`` -> ``after``: records put, keys
        dropped. Called under the store's write lock."""
        with self._lock:
            if before != self._version:
                self._repos, self._version = {}, None
                return
            for rec in put:
                held = self._repos.get((rec.realm, rec.repo))
                if held is not None:
                    held[rec.path] = rec
            for key in drop:
                realm, repo, path = key.split("\x1f", 2)
                held = self._repos.get((realm, repo))
                if held is not None:
                    held.pop(path, None)
            self._version = after

    def clear(self) -> None:
        with self._lock:
            self._repos, self._version = {}, None
