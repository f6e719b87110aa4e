"""The embedding thread gives way to saves: a higher nice value for it alone.

While a realm embeds, the model keeps both cores busy, and a save's parse,
store write and hot-index update wait behind it for CPU (docs/benchmarks.md,
freshness: the stages of a save take several times their idle cost). Linux
keeps a nice value per thread and a new thread inherits its creator's, so
raising the enrich thread's before the model loads also lowers the model
runtime's worker threads (ONNX Runtime creates its pool with the session;
torch's OpenMP pool starts on first use, from the same thread). The daemon's
other threads keep their priority; with nothing else to run, a niced thread
still gets every idle cycle, so an idle machine embeds as fast as before.

Elsewhere (macOS), ``setpriority`` on a thread id would name a process, so
nothing is changed there and the caller is told so.
"""

from __future__ import annotations

import os
import sys
import threading


def lower_this_thread(by: int) -> int | None:
    """Raise the calling thread's nice value by ``by`` (capped at 19); returns the
    new value, or None where it was not changed (``by`` 0, not Linux, refused)."""
    if by <= 0 or not sys.platform.startswith("linux"):
        return None
    tid = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + by))
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


def lower_this_process(by: int) -> int | None:
    """Raise a child process's nice value by ``by`` (capped at 19): every thread it
    has now, and so every thread they start later. Returns the new value, or None
    where it was not changed (``by`` 0, refused)."""
    if by <= 0:
        return None
    try:
        if sys.platform.startswith("linux"):   # nice values are per thread there
            for task in os.listdir("/proc/self/task"):
                tid = int(task)
                os.setpriority(os.PRIO_PROCESS, tid,
                               min(19, os.getpriority(os.PRIO_PROCESS, tid) + by))
            return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return os.nice(min(by, 19 - os.nice(0)))
    except OSError:
        return None
