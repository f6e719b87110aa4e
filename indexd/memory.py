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
