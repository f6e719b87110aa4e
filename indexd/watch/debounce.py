"""Per-path debouncing with a quiet period and a maximum delay. Pure.

A path becomes due once it has been quiet for ``quiet_s`` or first touched
``max_delay_s`` ago, so a file saved continuously is still indexed.

A save is shorter: every pending path becomes due together once *all* of
them have been quiet for ``quick_s``, provided there are at most
``quick_max``. An editor's save is one burst of events a few ms long (write
in place, or write a temporary and rename; measured in docs/benchmarks.md),
so it is indexed 50 ms after its last event instead of 250 ms; a burst of
many files (a code generator, a tool run) has more than ``quick_max``
pending and keeps the per-path quiet period, so it still coalesces into few
batches, and a writer that never pauses for ``quick_s`` gets no shortcut.

A save written in place is due at once: when every path of the small set was
last closed after writing (inotify's close-write, Linux only) and none was
created or moved into place in this burst, the files are whole and nothing
more is coming. A rename-save (a temporary created, closed, then moved over
the file) and a new file keep the ``quick_s`` wait: the temporary closes before
its rename arrives (docs/decisions.md, "Save debounce").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable


class Debouncer:
    def __init__(self, quiet_s: float, max_delay_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 quick_s: float | None = None, quick_max: int = 8):
        self.quiet_s = quiet_s
        self.max_delay_s = max(max_delay_s, quiet_s)
        self.quick_s = quiet_s if quick_s is None else min(quick_s, quiet_s)
        self.quick_max = quick_max
        self.clock = clock
        self._first: dict[Hashable, float] = {}
        self._last: dict[Hashable, float] = {}
        self._closed: set[Hashable] = set()    # last event: closed after writing
        self._created: set[Hashable] = set()   # created or moved into place since pending
        self._lock = threading.Lock()

    def touch(self, key: Hashable, now: float | None = None, event: str = "modified") -> None:
        """``event``: the watcher's kind (``closed`` is a close after writing;
        ``created`` and ``moved`` mark a path that was not written in place)."""
        now = self.clock() if now is None else now
        with self._lock:
            self._first.setdefault(key, now)
            self._last[key] = now
            if event == "closed":
                self._closed.add(key)
            else:
                self._closed.discard(key)
            if event in ("created", "moved"):
                self._created.add(key)

    def due(self, now: float | None = None) -> dict[Hashable, float]:
        """Pop every key that is ready; maps key -> time it was first touched."""
        now = self.clock() if now is None else now
        with self._lock:
            if self._quick() is not None and now >= self._quick():
                ready = dict(self._first)
            else:
                ready = {k: self._first[k] for k, last in self._last.items()
                         if now - last >= self.quiet_s or now - self._first[k] >= self.max_delay_s}
            for k in ready:
                self._forget(k)
        return ready

    def next_deadline(self) -> float | None:
        with self._lock:
            if not self._last:
                return None
            per_path = min(min(last + self.quiet_s, self._first[k] + self.max_delay_s)
                           for k, last in self._last.items())
            quick = self._quick()
            return per_path if quick is None else min(per_path, quick)

    def _quick(self) -> float | None:
        """When the whole (small) pending set is due at once; None for a big one.
        Caller holds the lock."""
        if not self._last or len(self._last) > self.quick_max:
            return None
        last = max(self._last.values())
        if not self._created and len(self._closed) == len(self._last):
            return last   # written in place and closed: whole now
        return last + self.quick_s

    def _forget(self, key: Hashable) -> None:
        del self._last[key]
        del self._first[key]
        self._closed.discard(key)
        self._created.discard(key)

    def pending(self) -> int:
        with self._lock:
            return len(self._last)

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._last)

    def pending_for(self, predicate: Callable[[Hashable], bool]) -> int:
        with self._lock:
            return sum(1 for k in self._last if predicate(k))

    def oldest(self) -> float | None:
        with self._lock:
            return min(self._first.values()) if self._first else None

    def drop(self, predicate: Callable[[Hashable], bool]) -> None:
        with self._lock:
            for k in [k for k in self._last if predicate(k)]:
                self._forget(k)
