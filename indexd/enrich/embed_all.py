"""One-shot embedding: give every stored entry without a vector its vector now.

What ``indexd index`` runs after the structural pass, so a CI job or a fresh
user gets search by meaning from one command. It drives the daemon's own
``VectorStage`` (same texts, same cache, same model id), so the store it
leaves is the one the daemon would have produced; only the pacing differs:
nothing else runs, so the model gets every core and bigger steps.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Callable

from ..memory import trim
from .embedder import load_embedder
from .vectors import VectorStage

log = logging.getLogger(__name__)

# Rows fetched per step = batch x 4 (VectorStage); bigger steps mean fewer store
# versions to compact afterwards, and no query waits behind them here.
ONESHOT_BATCH = 64
MAX_THREADS = 4   # MiniLM's matrices stop scaling past 4 (embedder.default_threads)
# Below this many rows to embed the one-shot loads the steady model (onnxruntime,
# fp32), as the daemon does for a small backlog: torch's bf16 model costs ~5 s more to
# import and load, which its speed wins back only past ~800 rows (docs/decisions.md,
# "bf16 products": 3 rows 7.8 s vs 2.4 s; 820 rows 20.5-24.2 s vs 21.7-25.1 s).
BULK_MIN_ROWS = 1000


@dataclass
class EmbedReport:
    model: str = ""
    runtime: str = ""       # e.g. "torch bf16", "onnx fp32": how the vectors were computed
    total: int = 0          # entries that lacked a vector at the start
    embedded: int = 0       # texts sent to the model
    reused: int = 0         # vectors taken from the cache
    seconds: float = 0.0
    error: str | None = None
    shared: list | None = None   # shared_index.subscribe reports, when a realm names one

    def to_json(self) -> dict:
        out = {"model": self.model, "runtime": self.runtime, "total": self.total, "embedded": self.embedded,
               "reused": self.reused, "seconds": round(self.seconds, 2), "error": self.error}
        return out | ({"shared": self.shared} if self.shared is not None else {})


def rows_to_embed(store, settings) -> int:
    """Rows the model may have to embed: those without a vector, or every row when
    the store holds another model's or another recipe's vectors (switch_model)."""
    same = ((store.get_meta("embed_spec") or "") == (settings.embed_model or "default")
            and (store.get_meta("embed_recipe") or "default") == settings.embed_recipe)
    return store.count_missing_vectors() if same else store.count("entries")


def oneshot_threads() -> int:
    return max(1, min(MAX_THREADS, os.cpu_count() or 1))


def embed_missing(store, settings, on_progress: Callable[[dict], None] | None = None,
                  threads: int | None = None,
                  seed: Callable[[str], list] | None = None) -> EmbedReport:
    """Embed until no entry lacks a vector. A model that cannot load is reported,
    not raised: the keyword index just written stays valid and searchable.
    ``seed(model_id)``, once the model is known: fills the vector cache first
    (a team's shared index); its answer is the report's ``shared``."""
    report, started = EmbedReport(), time.monotonic()
    try:
        # An explicit embed_threads wins; else every core: nothing else runs.
        threads = threads or getattr(settings, "embed_threads", 0) or oneshot_threads()
        bulk = rows_to_embed(store, settings) >= BULK_MIN_ROWS
        embedder = load_embedder(settings, threads=threads, bulk=bulk)
        store.switch_model(embedder.model_id, embedder.dim, settings.embed_recipe,
                           spec=settings.embed_model)
    except Exception as exc:  # noqa: BLE001 - keyword search works without a model
        report.error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        log.warning("not embedding: %s", report.error)
        return report
    report.model = embedder.model_id
    report.runtime = " ".join(filter(None, (getattr(embedder, "runtime", ""),
                                            getattr(embedder, "precision", ""))))
    if seed is not None:
        report.shared = seed(embedder.model_id)
    stage = VectorStage(store, embedder, recipe=settings.embed_recipe, batch=ONESHOT_BATCH,
                        grow_cached=True)
    report.total = store.count_missing_vectors()
    emit = on_progress or (lambda event: None)
    emit({"event": "embed_plan", "total": report.total, "model": report.model})
    done = 0
    while True:
        n = stage.step()
        if n == 0:
            break
        done += n
        trim()   # torch's freed batch buffers pile up in the heap otherwise
        emit({"event": "embed_progress", "done": min(done, report.total), "total": report.total})
    report.embedded, report.reused = stage.embedded, stage.reused
    report.seconds = time.monotonic() - started
    return report
