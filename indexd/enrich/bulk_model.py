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
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..procs import die_with_parent

log = logging.getLogger(__name__)

LOAD_TIMEOUT_S = 300.0

_model = None   # the child's embedder


def _start(parent_pid: int, settings, threads: int) -> None:
    die_with_parent(parent_pid)
    global _model
    from .embedder import load_embedder

    _model = load_embedder(settings, threads=threads, bulk=True)


def _describe() -> dict:
    return {"model_id": _model.model_id, "dim": _model.dim, "runtime": _model.runtime,
            "precision": getattr(_model, "precision", ""), "threads": getattr(_model, "threads", None)}


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
        self.started = time.monotonic()
        self.model_id = self.dim = self.runtime = self.precision = self.threads = None
        self.batch_size = settings.embed_batch
        self.max_tokens = getattr(steady, "max_tokens", 512)
        self._info = self._pool.submit(_describe)

    def ready(self) -> bool:
        """True once the child's model is loaded; raises what its load raised, or
        TimeoutError past LOAD_TIMEOUT_S."""
        if not self._info.done():
            if time.monotonic() - self.started > LOAD_TIMEOUT_S:
                raise TimeoutError(f"the bulk model did not load in {LOAD_TIMEOUT_S:.0f} s")
            return False
        if self.model_id is None:
            info = self._info.result()
            self.model_id, self.dim = info["model_id"], info["dim"]
            self.runtime, self.precision, self.threads = info["runtime"], info["precision"], info["threads"]
        return True

    def _lengths(self, texts: list[str]) -> list[int]:
        measure = getattr(self._steady, "_lengths", None)
        return measure(texts) if measure else [len(t) for t in texts]

    def encode(self, texts: list[str], interruptible: bool = False):
        if self.broken is None:
            try:
                return list(self._pool.submit(_encode, texts).result())
            except BrokenProcessPool as exc:   # killed (out of memory?): the steady model goes on
                self.broken = f"bulk model process died: {exc}"
                log.warning("%s; the steady model embeds the rest", self.broken)
        return self._steady.encode(texts)

    def encode_query(self, text: str):
        return self._steady.encode_query(text)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
