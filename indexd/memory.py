"""Keeping the daemon's resident memory bounded (glibc only; no-ops elsewhere).

Measured on the stdlib index: encoding batches in a worker thread left
~150 MB of freed-but-held heap per arena; capping arenas and trimming after
bursts of work brings RSS back down (docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_ARENA_MAX = -8
_libc = None


def _lib():
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            _libc = ctypes.CDLL(name) if name else False
            _libc.malloc_trim  # noqa: B018 - probe: glibc only
        except (OSError, AttributeError):
            _libc = False
    return _libc


def limit_arenas(n: int = 2) -> None:
    """Fewer malloc arenas: each thread otherwise keeps its own freed memory."""
    lib = _lib()
    if lib:
        lib.mallopt(_M_ARENA_MAX, n)


def trim() -> None:
    """Give freed heap back to the OS after a burst of work: Arrow's own pool
    (which keeps freed buffers, ~200 MB after reading the stdlib's links, out
    of malloc_trim's reach), then the C heap."""
    import sys

    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    lib = _lib()
    if lib:
        lib.malloc_trim(0)


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            import os

            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -- the cycle collector ----------------------------------------------------
# The daemon holds millions of long-lived objects (the graph's facts, the hot
# keyword index's ranked rows), and each full collection walked all of them:
# ~200 ms with the GIL held, every 2-7 s while a realm embedded, finding
# nothing (bench/freshness.py: the saves that took 270 ms to parse instead of
# 55 were the ones a full collection stopped). Frozen objects are never walked;
# refcounting still frees them, so only cyclic garbage among them waits for
# the next ``refreeze`` (the store's upkeep, every 10 minutes).


_frozen_at: float | None = None   # wall time of the last freeze (status)


def freeze_heap() -> None:
    """Move every object alive now out of the collector's reach (a list splice,
    microseconds; counting them would walk them all: gc.get_freeze_count is not
    called here)."""
    import gc
    import time

    global _frozen_at
    gc.freeze()
    _frozen_at = time.time()


def refreeze() -> int:
    """Collect the cycles among frozen objects once, then freeze again; returns
    how many objects the collection found unreachable."""
    import gc

    gc.unfreeze()
    found = gc.collect()
    freeze_heap()
    return found


class GcPauses:
    """Full collections seen since start: how many, the longest and the last
    (ms). Installed once by the daemon; status shows it."""

    def __init__(self):
        self.full = 0
        self.max_ms = 0.0
        self.last_ms = 0.0
        self._started = 0.0

    def install(self) -> "GcPauses":
        import gc

        gc.callbacks.append(self._seen)
        return self

    def uninstall(self) -> None:
        import gc

        if self._seen in gc.callbacks:
            gc.callbacks.remove(self._seen)

    def _seen(self, phase: str, info: dict) -> None:
        import time

        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
            return
        ms = (time.perf_counter() - self._started) * 1000
        self.full += 1
        self.last_ms = ms
        self.max_ms = max(self.max_ms, ms)

    def to_json(self) -> dict:
        return {"frozen_at": _frozen_at, "full_collections": self.full,
                "last_full_ms": round(self.last_ms, 1), "max_full_ms": round(self.max_ms, 1)}
