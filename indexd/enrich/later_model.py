"""A better, slower model that embeds behind a fast one and then takes over.

``embed_model = "mpnet"`` ranks better than the default model but embeds ten
times slower (docs/decisions.md, "A second packaged model"): a realm the
default model makes searchable by meaning in three minutes would wait half an
hour. With ``embed_first`` (auto: the default model under mpnet) the daemon
serves the first model's vectors at once, and once that model's backlog is
empty this stage computes embed_model's vectors into embed_model's own vector
cache (vector_cache_<dim>, keyed by text and model id), in a child process
whose memory goes back when it ends (bulk_model.BulkEmbedder). When one whole
pass over the entries finds every vector there, the enrich thread switches
the store to embed_model (worker.Enricher._take_over): the refill comes from
the cache, so nothing is embedded twice. The store records the config's name
of the model it holds (meta ``embed_spec``), so a restart after the switch
loads embed_model directly and one before it goes on from the cache.
"""

from __future__ import annotations

import logging

from .embedder import BatchInterrupted
from .vectors import cached

log = logging.getLogger(__name__)

CHUNK = 16          # entries per step: one model batch, ~1.5 s of mpnet on 2 cores
MAX_CHUNK = 1024    # while whole chunks come from the cache (a restart, a pass that checks)


def first_spec(settings) -> str | None:
    """The model that answers while embed_model fills in, or None (no second tier)."""
    target = (settings.embed_model or "default").strip()
    first = (getattr(settings, "embed_first", "auto") or "auto").strip()
    if first == "auto":
        first = "default" if target == "mpnet" else "off"
    if first in ("off", "") or first == target or target == "off":
        return None
    return first


def label_of(spec: str) -> str:
    """The name a model id starts with, for the config's name of a model."""
    from pathlib import Path

    from .embedder import DEFAULT_NAME
    from .split_model import SPLIT_MODELS

    if spec == "default":
        return DEFAULT_NAME
    if spec in SPLIT_MODELS:
        return SPLIT_MODELS[spec].name
    if spec == "hash":
        return "hash-embedder"
    return Path(spec).expanduser().name


def holds(store, spec: str) -> bool:
    """Whether the store's vectors are (being) made by this configured model.
    Stores from before ``embed_spec`` was recorded are judged by the model id's name."""
    recorded = store.get_meta("embed_spec")
    if recorded:
        return recorded == spec
    held = store.get_meta("embed_model") or ""
    return bool(held) and held.split("@")[0].split("/")[0] == label_of(spec)


class LaterModel:
    def __init__(self, store, settings, steady, recipe: str = "pooled"):
        self.store, self.steady, self.recipe = store, steady, recipe
        self.settings = settings
        self.spec = settings.embed_model
        self.child = None
        self.error: str | None = None
        self.complete = False
        self.embedded = 0            # texts this stage sent to the model
        self._ids: list[str] = []
        self._pos = 0
        self._pass_embedded = 0      # texts the current pass had to embed
        self._chunk = CHUNK

    @property
    def model_id(self) -> str | None:
        return self.child.model_id if self.child is not None else None

    def step(self) -> int:
        """Check (and embed where missing) the next chunk of entries; the
        number checked, 0 when waiting (the child loads) or done."""
        if self.error or self.complete:
            return 0
        if not self._child_ready():
            return 0
        if self._pos >= len(self._ids):
            if self._ids and self._pass_embedded == 0:
                self.complete = True   # a whole pass found every vector in the cache
                log.info("later model %s has every vector: %d embedded", self.spec, self.embedded)
                return 0
            self._ids, self._pos, self._pass_embedded = self.store.entry_ids(), 0, 0
            if not self._ids:
                return 0
        chunk = self._ids[self._pos:self._pos + self._chunk]
        self._pos += len(chunk)
        try:
            fresh = self._fill(chunk)
        except BatchInterrupted:   # aborted at shutdown: not a failure of the model
            raise
        except Exception as exc:  # noqa: BLE001 - the first model keeps serving
            self.fail(f"{type(exc).__name__}: {exc}")
            return 0
        self._chunk = CHUNK if fresh else min(self._chunk * 4, MAX_CHUNK)
        return len(chunk)

    def _child_ready(self) -> bool:
        from .bulk_model import BulkEmbedder
        from .embedder import settings_threads

        try:
            if self.child is None:
                self.child = BulkEmbedder(self.settings, self.steady,
                                          threads=settings_threads(self.settings))
                return False
            return self.child.ready()
        except Exception as exc:  # noqa: BLE001 - its load failed: the first model stays
            self.fail(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
            return False

    def _fill(self, ids: list[str]) -> int:
        plan = cached(self.store, self.store.rows_for_embedding(ids), self.recipe,
                      self.child.model_id, dim=self.child.dim)
        missing = plan.missing
        if not missing:
            if plan.pooled_from_cache:
                self.store.cache_put(self.child.model_id, plan.pooled_from_cache, dim=self.child.dim)
            return 0
        vectors = self.child.encode(list(missing.values()))
        if self.child.broken:   # the steady model finished the batch: not this model's vectors
            raise RuntimeError(self.child.broken)
        # the texts' vectors and the rows' pooled from them: the takeover finds rows by their key
        self.store.cache_put(self.child.model_id, plan.to_cache(dict(zip(missing, vectors))),
                             dim=self.child.dim)
        self.embedded += len(missing)
        self._pass_embedded += len(missing)
        return len(missing)

    def fail(self, why: str) -> None:
        self.error = why
        log.warning("later model %s stopped, %s keeps serving: %s", self.spec,
                    getattr(self.steady, "model_id", "the first model"), why)
        self.close()

    def abort(self) -> None:
        """Any thread, at shutdown: kill the child now (see BulkEmbedder.abort)."""
        child = self.child
        if child is not None:
            child.abort()

    def close(self) -> None:
        child, self.child = self.child, None
        if child is not None:
            child.close()

    def status(self) -> dict:
        state = ("failed" if self.error else "complete" if self.complete
                 else "loading" if self.child is None or self.child.model_id is None
                 else "embedding")
        return {"model": self.spec, "model_id": self.model_id, "state": state,
                "checked": self._pos, "total": len(self._ids), "embedded": self.embedded,
                "error": self.error}

