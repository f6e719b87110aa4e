"""The per-file time limit every parser honours. Pure; imports nothing from indexd.

One ``Deadline`` per file covers all of its work: tree-sitter's parse, the query,
and the Python that turns matches (or markdown lines, or config keys) into
entries. A parser checks it between steps and inside its long loops; on expiry
``ParseTimeout`` unwinds to ``parse_source``, which records the file as a parse
failure (kept as a file-level entry) instead of wedging the worker.

The clock is the parsing thread's CPU time, not the wall clock: a busy machine
must not turn a normal file into a "timed out" one, and the limit is about the
parser's own work.
"""

from __future__ import annotations

import time

PARSE_TIMEOUT_S = 5.0
CHECK_EVERY = 4096   # loop iterations between two clock reads in the hot loops


class ParseTimeout(Exception):
    """A file's time is up; parse_source turns this into ParseResult.error."""

    def __init__(self, limit_s: float):
        super().__init__(timed_out_message(limit_s))
        self.limit_s = limit_s


def timed_out_message(limit_s: float) -> str:
    return f"parse timed out after {limit_s:g}s (file kept as a file entry)"


class Deadline:
    __slots__ = ("limit_s", "_at")

    def __init__(self, limit_s: float = PARSE_TIMEOUT_S):
        self.limit_s = limit_s
        self._at = time.thread_time() + limit_s

    def expired(self) -> bool:
        # Never raises: tree-sitter calls this from C, where an exception crashes.
        return time.thread_time() >= self._at

    def left(self) -> float:
        """CPU seconds left (inf without a limit)."""
        return self._at - time.thread_time()

    def check(self) -> None:
        if self.expired():
            raise ParseTimeout(self.limit_s)

    def every(self, i: int) -> None:
        """``check`` once per CHECK_EVERY iterations of a loop counter."""
        if i % CHECK_EVERY == 0:
            self.check()


NO_DEADLINE = Deadline(float("inf"))
