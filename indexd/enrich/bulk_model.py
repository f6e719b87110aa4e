"""A cold backlog's bulk model, in a child process the daemon ends when it is done.

torch's bf16 products run 1.5-2x onnxruntime's fp32 where the CPU multiplies
bf16 in hardware (docs/decisions.md, "bf16 products"), but torch and its
kernel caches stay in a process once loaded: a daemon that ran the bulk model
in its own process kept ~950 MB after the drain against ~430 MB. In a child
that memory goes back when the child exits. The child only computes vectors:
the daemon's enrich thread still reads rows, writes vectors and updates its
hot indexes, one model batch per call, so a save still waits one batch.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from ..procs import die_with_parent
from .child_hold import ChildHold
from .embedder import BatchInterrupted
from .priority import lower_this_process

log = logging.getLogger(__name__)

LOAD_TIMEOUT_S = 300.0
CHECK_S = 10.0   # how often the backlog is counted while the steady model embeds it
HOLD_MAX_S = 1.0   # a save stops the child this long at most (the steady model's gate: worker.py)
POLL_S = 0.1       # how often a wait on the child looks whether its hold is due to end

_model = None   # the child's embedder
_load_error: str | None = None   # why it did not load, told by _describe
_nice: int | None = None         # the child's nice value, where it lowered it


def _start(parent_pid: int, settings, threads: int) -> None:
    die_with_parent(parent_pid)
    # A terminal's Ctrl-C or a unit's stop signals the whole group: the daemon
    # ends this child as it shuts down (and the kernel, should the daemon die).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _thread_lock_for_progress_bars()
    global _model, _load_error, _nice
    from .embedder import load_embedder

    # An initializer that raises breaks the pool, and the parent would only
    # learn "terminated abruptly": the reason goes back through _describe.
    try:
        _model = load_embedder(settings, threads=threads, bulk=True)
    except Exception as exc:  # noqa: BLE001 - told to the parent as it asks
        _load_error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    # After the load (a niced load on a busy machine took minutes), for every thread
    # it has and will start: a save's parse in the daemon runs ahead of the backlog
    # (docs/decisions.md, "The bulk child can run nicer").
    _nice = lower_this_process(settings.embed_bulk_nice)


def _thread_lock_for_progress_bars() -> None:
    """sentence-transformers' encode makes a tqdm bar (disabled, but made), and tqdm's
    first bar creates a multiprocessing lock: a named semaphore this child never
    unlinks when the daemon kills it on stop, so the resource tracker warned of a
    leaked semaphore as the daemon exited. One process needs a thread lock only."""
    try:
        import threading

        from tqdm import tqdm
    except ImportError:
        return
    tqdm.set_lock(threading.RLock())


def _describe() -> dict:
    if _model is None:
        raise RuntimeError(_load_error or "the model did not load")
    return {"model_id": _model.model_id, "dim": _model.dim, "runtime": _model.runtime,
            "precision": getattr(_model, "precision", ""), "threads": getattr(_model, "threads", None),
            "nice": _nice}


def _encode(texts: list[str]):
    import numpy as np

    return np.asarray(_model.encode(texts), dtype=np.float32)   # one buffer back, not lists


class BulkEmbedder:
    """The embedder protocol over a child process; ``close`` ends the child.

    ``steady``: the daemon's own model, which measures texts (the same tokenizer)
    and takes over a batch if the child dies (``broken`` then says why)."""

    def __init__(self, settings, steady, threads: int):
        # spawn, as the parse pool: the daemon holds LanceDB's threads. The child
        # starts now (from the calling thread, which must outlive it: procs.py) and
        # loads in the background; ``ready`` says when it may take batches.
        ctx = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_start,
                                         initargs=(os.getpid(), settings, threads))
        self._steady = steady
        self.broken: str | None = None
        self.aborted = False
        self.started = time.monotonic()
        self.model_id = self.dim = self.runtime = self.precision = self.threads = None
        self.nice = None
        self.batch_size = settings.embed_batch
        self.max_tokens = getattr(steady, "max_tokens", 512)
        self._info = self._pool.submit(_describe)
        # stopped while a save is parsed (Enricher.yield_to_save), whatever it is doing
        self.hold = ChildHold(self._pids, max_s=HOLD_MAX_S)

    def _pids(self) -> list[int]:
        # None once the child died or is being killed: its pid may be reaped and reused.
        if self.broken is not None or self.aborted:
            return []
        # The pool has no public list of its processes.
        return [proc.pid for proc in list((getattr(self._pool, "_processes", None) or {}).values())]

    def ready(self) -> bool:
        """True once the child's model is loaded; raises what its load raised, or
        TimeoutError past LOAD_TIMEOUT_S."""
        self.hold.release_if_due()
        if not self._info.done():
            if time.monotonic() - self.started > LOAD_TIMEOUT_S:
                raise TimeoutError(f"the bulk model did not load in {LOAD_TIMEOUT_S:.0f} s")
            return False
        if self.model_id is None:
            info = self._info.result()
            self.model_id, self.dim = info["model_id"], info["dim"]
            self.runtime, self.precision, self.threads = info["runtime"], info["precision"], info["threads"]
            self.nice = info.get("nice")
        return True

    def _lengths(self, texts: list[str]) -> list[int]:
        measure = getattr(self._steady, "_lengths", None)
        return measure(texts) if measure else [len(t) for t in texts]

    def encode(self, texts: list[str], interruptible: bool = False):
        if self.aborted:
            raise BatchInterrupted()
        if self.broken is None:
            try:
                return list(self._result(self._pool.submit(_encode, texts)))
            except BrokenProcessPool as exc:   # killed (out of memory?): the steady model goes on
                if self.aborted:
                    raise BatchInterrupted() from exc
                self.broken = f"bulk model process died: {exc}"
                log.warning("%s; the steady model embeds the rest", self.broken)
        return self._steady.encode(texts)

    def _result(self, future):
        """The batch's vectors; while waiting, a hold that outlived its deadline ends
        (nobody else may be there to end it: the events stopped coming)."""
        while True:
            left = self.hold.left()
            try:
                return future.result(timeout=POLL_S if left is None else max(left, 0.01))
            except FutureTimeout:
                self.hold.release_if_due()

    def abort(self) -> None:
        """The daemon is stopping: kill the child now, whatever it is doing (a
        batch, its model's load). Vectors are derived data; the batch in
        progress raises BatchInterrupted and is embedded after the next start."""
        self.aborted = True
        self.hold.close()
        # The pool has no public kill before Python 3.14 (kill_workers).
        for proc in list((getattr(self._pool, "_processes", None) or {}).values()):
            try:
                proc.kill()
            except (OSError, ValueError):   # already gone, or closed
                pass

    def close(self) -> None:
        self.hold.close()
        self._pool.shutdown(wait=True, cancel_futures=True)


class BulkSwitch:
    """When the embed stage hands its backlog to a bulk child, and takes it back.

    Before a step: a backlog of ``embed_bulk_rows`` or more (counted at most every
    CHECK_S), ``embed_precision = "auto"`` and bf16 in the CPU flags start a child,
    which loads while the steady model goes on; once loaded it takes the stage's
    batches. After a step that found nothing (or a dead child): the steady model
    again, the child shut down. Same model id both ways (docs/decisions.md)."""

    def __init__(self, store, stage, steady):
        self.store, self.stage, self.steady = store, stage, steady
        self.active: BulkEmbedder | None = None
        self.loading: BulkEmbedder | None = None
        self.runs: list[dict] = []        # finished runs, for status
        self.off: str | None = None       # why it cannot run here (found once)
        self._checked = 0.0               # monotonic time of the last backlog count
        self._from = 0                    # stage.embedded when the child took over

    def before_step(self, settings) -> None:
        if self.active is not None or self.off is not None:
            return
        if self.loading is not None:
            self._adopt()
        elif self._backlog_wants_it(settings):
            self._start(settings)

    def after_step(self, done: int) -> None:
        if self.active is not None and (done == 0 or self.active.broken):
            self._end()
        elif done == 0 and self.loading is not None:
            self._cancel()   # the backlog went before the child was ready

    def close(self) -> None:
        if self.active is not None:
            self._end()
        self._cancel()

    def abort(self) -> None:
        """Any thread, at shutdown: kill the child (loading or embedding) now;
        the enrich thread's ``close`` then finds it gone."""
        for child in (self.active, self.loading):
            if child is not None:
                child.abort()

    def status(self) -> dict:
        bulk = self.active
        now = ({"runtime": bulk.runtime, "precision": bulk.precision, "threads": bulk.threads,
                "nice": bulk.nice, "texts": self.stage.embedded - self._from,
                "held_for_saves": bulk.hold.holds, "held_s": round(bulk.hold.held_s, 2)}
               if bulk is not None else None)
        return {"active": now, "loading": self.loading is not None, "runs": list(self.runs),
                "off": self.off}

    def _backlog_wants_it(self, settings) -> bool:
        now = time.monotonic()
        if now - self._checked < CHECK_S:
            return False
        self._checked = now
        rows = settings.embed_bulk_rows
        if rows <= 0 or (settings.embed_precision or "auto") != "auto":
            return False
        return self.store.count_missing_vectors() >= rows

    def _start(self, settings) -> None:
        from .embedder import bf16_in_cpu_flags, settings_threads

        # The flags only: torch's own probe runs in the child (the import costs
        # this process ~200 MB for good); a child that finds bf16 slow loads fp32,
        # which _adopt refuses.
        if not bf16_in_cpu_flags():
            self.off = "no bf16 hardware"
            return
        try:
            self.loading = BulkEmbedder(settings, self.steady, threads=settings_threads(settings))
        except Exception as exc:  # noqa: BLE001 - the steady model goes on alone
            self._give_up(exc)

    def _adopt(self) -> None:
        pending = self.loading
        try:
            if not pending.ready():
                return
        except Exception as exc:  # noqa: BLE001 - its load failed: the steady model goes on
            self._cancel()
            self._give_up(exc)
            return
        self.loading = None
        if pending.precision != "bf16" or pending.model_id != self.stage.model_id:
            pending.close()
            self.off = f"bulk model {pending.model_id} {pending.precision}: not bf16 of the steady model"
            return
        self.active, self._from = pending, self.stage.embedded
        self.stage.embedder = pending
        log.info("bulk embedding: %s %s on %s threads in a child process",
                 pending.runtime, pending.precision, pending.threads)

    def _end(self) -> None:
        """The child exits and its memory goes back to the system."""
        bulk = self.active
        self.stage.embedder = self.steady
        run = {"runtime": bulk.runtime, "precision": bulk.precision, "threads": bulk.threads,
               "texts": self.stage.embedded - self._from, "ended_at": time.time(),
               "error": bulk.broken, "held_for_saves": bulk.hold.holds,
               "held_s": round(bulk.hold.held_s, 2)}
        self.runs = (self.runs + [run])[-5:]
        bulk.close()
        self.active = None   # after the child is gone: "not active" means no child
        self._checked = time.monotonic()
        log.info("bulk embedding done: %d texts; steady model again", run["texts"])

    def _cancel(self) -> None:
        pending, self.loading = self.loading, None
        if pending is not None:
            pending.close()

    def _give_up(self, exc: BaseException) -> None:
        self.off = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        log.warning("bulk embedding unavailable: %s", self.off)
