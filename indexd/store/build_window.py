"""Writes that reach a hot index while it builds wait in a queue, not on a lock.

A hot index (text_index.py, vector_index.py) is rebuilt by reading the entries
table under the store's read lock, and the store applies some writes to it
while holding the table's write lock (``update_entries``: the matrix takes
vectors together with the rows it read, so no later write can overtake them).
A build that held the index's lock across its read would wait for that writer
while the writer waited for it: a daemon restarted with an embed backlog hung
so (CI, 2026-12-06). So an index's own lock is the innermost one: its build
takes it per batch only, and a write arriving while the build reads is queued
and replayed, in order, after the last batch (replaying a write the scan has
already seen changes nothing: every write says what rows now are).
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager


class BuildWindow:
    """Mixin: ``self._lock`` and the queue of writes held during a build."""

    def _init_window(self) -> None:
        self._lock = threading.Lock()
        self._queued: list | None = None

    @contextmanager
    def _building(self, clear):
        """Run ``clear`` and queue writes until the block ends, then replay them."""
        with self._lock:
            clear()
            self._queued = []
        try:
            yield
        finally:
            with self._lock:
                queued, self._queued = self._queued, None
                for method, args in queued:
                    method(self, *args)


def held_while_building(method):
    """A write method: applied under the index's lock, or queued while it builds."""
    @functools.wraps(method)
    def write(self, *args):
        with self._lock:
            if self._queued is not None:
                self._queued.append((method, args))
                return None
            return method(self, *args)
    return write
