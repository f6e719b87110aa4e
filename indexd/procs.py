"""Child processes that die with their parent.

A SIGKILLed daemon (or ``indexd index``) cannot stop its children, and
nothing else would: parser workers block forever on a queue whose write end
they hold themselves, and each weighs ~100 MB. So every child arranges its
own end as its first act, with ``die_with_parent(parent_pid)``:

- Linux: ``PR_SET_PDEATHSIG`` makes the kernel SIGKILL the child when its
  parent goes. The signal follows the parent *thread* that forked the child,
  so children must be started by a thread that outlives them (the pool's
  submitting thread does: the pool is closed before that thread returns).
- elsewhere (macOS): a thread polls the parent pid.

Either way the parent may already be gone when the child gets here, so the
parent pid is checked after arming. Stdlib only: children import this before
anything heavy.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1       # <linux/prctl.h>
POLL_S = 0.5               # the fallback's reaction time


def die_with_parent(parent_pid: int) -> None:
    """Exit this process when ``parent_pid``, its parent at start, exits."""
    if not _arm_death_signal():
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="indexd-parent-watch",
                         daemon=True).start()
    if os.getppid() != parent_pid:   # died before the signal was armed: already an orphan
        os._exit(1)


def _arm_death_signal() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    os._exit(1)
