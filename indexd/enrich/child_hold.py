"""A model's child process stopped while a save is parsed, so the save has the cores.

The daemon's own model waits at a gate between batches and has the batch in
progress cut when a file changes (worker.Enricher.yield_to_save). A bulk or
later child's batch cannot be cut without losing it: it ran on through the
save, on both cores, and the save's read and parse took several times their
idle cost (docs/decisions.md, "The bulk child stops for a save"). SIGSTOP parks
the child where it is and SIGCONT lets it go on, nothing lost.

Bounds, so the child never starves: a hold ends by itself ``max_s`` after it
began, however many events extend it, and once released the child runs at
least as long as it was held before another hold may begin. The deadline is
enforced by whoever asks next (``release_if_due``: the waiting encode polls
it, and every new event does).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

_STOP = getattr(signal, "SIGSTOP", None)   # not on Windows: holds do nothing there
_CONT = getattr(signal, "SIGCONT", None)


class ChildHold:
    """Stop and continue the processes ``pids()`` names; thread-safe."""

    def __init__(self, pids: Callable[[], list[int]], max_s: float, clock=time.monotonic):
        self._pids = pids
        self._max_s = max_s
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None   # when the hold in force began
        self._until = 0.0                  # when it ends at the latest
        self._free_until = 0.0             # no new hold before this
        self._closed = False
        self.holds = 0                     # for status and tests
        self.held_s = 0.0

    @property
    def held(self) -> bool:
        return self._since is not None

    def hold(self, seconds: float) -> bool:
        """Stop the child for ``seconds`` (or until ``release``); an event during
        a hold extends it up to ``max_s`` from its start. False when the child's
        turn to run comes first, or nothing could be stopped."""
        if _STOP is None:
            return False
        now = self._clock()
        with self._lock:
            if self._closed:
                return False
            if self._since is not None:
                if now >= self._until:
                    self._release(now)
                    return False
                self._until = min(max(self._until, now + seconds), self._since + self._max_s)
                return True
            if now < self._free_until:
                return False
            if not self._signal(_STOP):
                return False
            self._since, self._until = now, now + min(seconds, self._max_s)
            self.holds += 1
            return True

    def release(self) -> None:
        with self._lock:
            if self._since is not None:
                self._release(self._clock())

    def release_if_due(self) -> None:
        with self._lock:
            if self._since is not None and self._clock() >= self._until:
                self._release(self._clock())

    def left(self) -> float | None:
        """Seconds until the hold in force ends by itself; None when none is."""
        with self._lock:
            return None if self._since is None else max(0.0, self._until - self._clock())

    def close(self) -> None:
        """The child is being ended: let it run (a stopped process cannot exit) and
        hold it no more."""
        with self._lock:
            self._closed = True
            if self._since is not None:
                self._release(self._clock())

    def _release(self, now: float) -> None:
        self._signal(_CONT)
        held = now - self._since
        self.held_s += held
        self._since = None
        self._free_until = now + held

    def _signal(self, sig) -> bool:
        sent = False
        for pid in self._pids():
            try:
                os.kill(pid, sig)
                sent = True
            except (ProcessLookupError, PermissionError):   # gone between the listing and the signal
                pass
        return sent
