"""Per-path debouncing with a quiet period and a maximum delay. Pure.

A path becomes due once it has been quiet for ``quiet_s`` or first touched
``max_delay_s`` ago, so a file saved continuously is still indexed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable


class Debouncer:
    def __init__(self, quiet_s: float, max_delay_s: float,
                 clock: Callable[[], float] = time.monotonic):
        self.quiet_s = quiet_s
        self.max_delay_s = max(max_delay_s, quiet_s)
        self.clock = clock
        self._first: dict[Hashable, float] = {}
        self._last: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def touch(self, key: Hashable, now: float | None = None) -> None:
        now = self.clock() if now is None else now
        with self._lock:
            self._first.setdefault(key, now)
            self._last[key] = now

    def due(self, now: float | None = None) -> dict[Hashable, float]:
        """Pop every key that is ready; maps key -> time it was first touched."""
        now = self.clock() if now is None else now
        with self._lock:
            ready = {k: self._first[k] for k, last in self._last.items()
                     if now - last >= self.quiet_s or now - self._first[k] >= self.max_delay_s}
            for k in ready:
                del self._last[k]
                del self._first[k]
        return ready

    def next_deadline(self) -> float | None:
        with self._lock:
            if not self._last:
                return None
            return min(min(last + self.quiet_s, self._first[k] + self.max_delay_s)
                       for k, last in self._last.items())

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
                del self._last[k]
                del self._first[k]
