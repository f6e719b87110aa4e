"""The embed stage: rows without a vector -> cached or freshly computed vectors.

Runs behind the keyword index (two-phase availability): the pipeline stores
rows with no vector, ``fill_before_write`` gives unchanged entries their vector
back before the write (so a reindex or a branch switch recomputes nothing)
and, for a save of a few new entries, their fresh vectors from the daemon's
own model; ``step`` embeds what is left in small batches. The model is called only
for texts whose (text, model) hash is not in the cache.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from .embedder import BatchInterrupted
from .texts import PART_SEP, embed_hash, embed_parts

log = logging.getLogger(__name__)

MAX_SCALE = 64         # grow_cached: at most 64x the usual step
EMBED_KINDS_SKIP = ()   # every entry kind is embedded; see docs/benchmarks.md


class VectorPlan:
    """Which vectors a set of rows needs. A row's vector is cached under its key
    (the hash of all its texts joined); a row of several texts (the ``pooled``
    recipe) pools its texts' vectors, each cached under its own text's key, so
    the text a row shares with the ``default`` recipe, or with its own older
    version, is never embedded twice.

    ``keys``: each row's key; ``found``: row key -> vector, as far as the cache
    (and pooling what it holds) goes; ``missing``: text key -> text, each text
    once: what the model has to embed."""

    def __init__(self, keys: list[str], found: dict, missing: dict[str, str],
                 parts: dict[str, list[str]], cached_texts: dict):
        self.keys, self.found, self.missing = keys, found, missing
        self._parts = parts   # row key -> its texts' keys, for rows not yet found
        self._vectors: dict = {}   # text key -> vector, found or fresh
        # rows pooled from texts the cache holds: their vectors are new to the cache
        self.pooled_from_cache = self.add(cached_texts)

    def add(self, fresh: dict) -> dict:
        """Take the model's vectors of missing texts; the rows complete now, by
        key -> vector (pooled rows' vectors are new to the cache: put them there)."""
        self._vectors.update(fresh)
        done: dict = {}
        for key, part_keys in list(self._parts.items()):
            if all(k in self._vectors for k in part_keys):
                done[key] = pool([self._vectors[k] for k in part_keys])
                del self._parts[key]
        self.found.update(done)
        return {k: v for k, v in done.items() if k not in fresh}

    def missing_of(self, key: str) -> list[str]:
        """The texts' keys a row (by its key) still needs from the model."""
        return [k for k in self._parts.get(key, ()) if k in self.missing]

    def to_cache(self, fresh: dict) -> dict:
        """Take the model's vectors; what the cache should get: them, and every row
        vector pooled here (from them or from cached texts)."""
        return fresh | self.pooled_from_cache | self.add(fresh)


def pool(vectors: list) -> list[float]:
    """One text: its vector as it is. Several: the normalised sum of their
    normalised vectors (equal weights; docs/decisions.md, "Embedding text recipe")."""
    if len(vectors) == 1:
        return vectors[0]
    import numpy as np

    arr = np.asarray(vectors, dtype=np.float32)
    arr /= np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)
    total = arr.sum(axis=0)
    return (total / max(float(np.linalg.norm(total)), 1e-12)).tolist()


def cached(store, rows: list[dict], recipe: str, model_id: str,
           dim: int | None = None) -> VectorPlan:
    """What the cache (of ``dim``) already holds for ``rows`` and what the model
    must embed: each row by its key, else pooled from its texts' keys; one lookup
    for both (it is on a save's path)."""
    texts = [embed_parts(r, recipe) for r in rows]
    keys = [embed_hash(PART_SEP.join(t), model_id) for t in texts]
    parts: dict[str, list[str]] = {}
    part_text: dict[str, str] = {}
    for key, row_texts in zip(keys, texts):
        if key in parts:
            continue
        part_keys = [key] if len(row_texts) == 1 else [embed_hash(t, model_id) for t in row_texts]
        parts[key] = part_keys
        part_text.update(zip(part_keys, row_texts))
    have = store.cache_get(sorted(set(keys) | set(part_text)), dim=dim)
    found = {k: have[k] for k in parts if k in have}
    for key in found:
        del parts[key]
    needed = {k for part_keys in parts.values() for k in part_keys}
    missing = {k: t for k, t in part_text.items() if k in needed and k not in have}
    return VectorPlan(keys, found, missing, parts, {k: have[k] for k in part_text if k in have})


class VectorStage:
    def __init__(self, store, embedder, recipe: str = "pooled", batch: int = 32,
                 grow_cached: bool = False, pause: Callable[[], None] | None = None,
                 step_rows: int | None = None):
        self.store = store
        # Rows per backlog step (default batch x 4). Each step scans the entries
        # table and rewrites its rows, a cost per step that grows as versions pile
        # up; a saved file's rows still go in steps of batch x 4.
        self.step_rows = step_rows or batch * 4
        self.pause = pause      # called before each model batch (the daemon: yield to a save)
        # True once the daemon is stopping: the step in progress raises
        # BatchInterrupted before its next model batch, keeping nothing of it.
        self.stopped: Callable[[], bool] = lambda: False
        # One-shot: while whole steps come from the cache (a team's shared index,
        # a re-index), take steps up to 64x bigger: each step scans the entries
        # table once, so on a realm of ~1M entries 256-row steps ran ~250 rows/s.
        self.grow_cached = grow_cached
        self._scale = 1
        self.embedder = embedder
        self.recipe = recipe
        self.batch = batch
        self.embedded = 0       # texts sent to the model
        self.reused = 0         # vectors taken from the cache
        self.interrupted = 0    # batches a save stopped (run again after it)
        self.last_error: str | None = None
        # Files just saved go first: their symbols should be searchable by
        # meaning within a second or two, not after a backlog of thousands.
        self._priority: dict[str, None] = {}
        self._priority_lock = threading.Lock()
        self.priority_done_at: float | None = None   # a prioritized step's vectors stored
        self._cache_later: dict[str, list[float]] = {}   # embedded before a save's write

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def fill_before_write(self, rows: list[dict], now=None, limit: int = 0) -> bool:
        """Before a write: cached vectors in place, then, where at most ``limit``
        texts are left and ``now`` (the daemon's own model, next in turn) is
        given, their fresh vectors too, so a save of a few new entries is
        searchable by meaning once it is written, without waiting for a backlog
        batch in progress (bench/freshness.py). True when every row has one."""
        if not rows:
            return True
        plan = cached(self.store, rows, self.recipe, self.model_id)
        keys, found, missing = plan.keys, plan.found, plan.missing
        self.reused += sum(1 for k in keys if k in found)
        fresh: dict = {}
        todo = missing
        if len(missing) > limit:   # a file the queue has not reached: this save's edit only
            todo = self._edited(rows, plan, limit) if now is not None else {}
        if todo and now is not None:
            try:
                fresh = dict(zip(todo, now(list(todo.values()))))
            except Exception as exc:  # noqa: BLE001 - the save is written anyway; the queue embeds it
                log.warning("a save's %d texts not embedded before its write: %s", len(todo), exc)
            else:
                self.embedded += len(fresh)
        later = plan.to_cache(fresh)
        if later:
            with self._priority_lock:   # to the cache by the embed thread, off the save's path
                self._cache_later.update(later)
        for row, key in zip(rows, keys):
            vec = found.get(key)
            if vec is not None:
                row["embed_hash"], row["vector"] = key, vec
        return all(key in found for key in keys)

    def _edited(self, rows: list[dict], plan: VectorPlan, limit: int) -> dict:
        """Too many texts to embed with the write: a file the backlog has not
        reached yet (its first save embedded all 277 entries of typing.py through
        the queue, 13-28 s while the bulk model ran). Those this save changed,
        against the table's rows of the same files, when they are ``limit`` texts or
        fewer: the edit is searchable by meaning once written; the rest of the file
        follows in the queue, first in line."""
        try:
            before = self.store.entry_hashes(sorted({r["file_key"] for r in rows}))
        except Exception as exc:  # noqa: BLE001 - the queue embeds them all, as before
            log.warning("a save's changed entries not found: %s", exc)
            return {}
        todo: dict = {}
        for row, key in zip(rows, plan.keys):
            if before.get(row["id"]) == row.get("content_hash"):
                continue   # as it was: the queue has it
            todo.update((k, plan.missing[k]) for k in plan.missing_of(key))
            if len(todo) > limit:
                return {}   # a big change (a new file, a rewrite): the queue, as before
        return todo

    def _put_cache_later(self) -> None:
        with self._priority_lock:
            later, self._cache_later = self._cache_later, {}
        if later:
            self.store.cache_put(self.model_id, later)

    def prioritize(self, file_keys) -> None:
        with self._priority_lock:
            for key in file_keys:
                self._priority[key] = None

    def _next_rows(self) -> tuple[list[dict], bool]:
        """The next rows to embed, and whether they are saved files' (priority)."""
        while True:
            with self._priority_lock:
                keys = list(self._priority)[:200]
            if not keys:
                return self.store.rows_needing_vectors(self.step_rows * self._scale), False
            rows = self.store.rows_needing_vectors(self.batch * 4, file_keys=keys)
            if rows:
                return rows, True
            with self._priority_lock:
                for key in keys:
                    self._priority.pop(key, None)

    def step(self) -> int:
        """Embed one batch of rows that lack a vector; returns rows updated."""
        self._put_cache_later()
        rows, priority = self._next_rows()
        if not rows:
            return 0
        plan = cached(self.store, rows, self.recipe, self.model_id)
        keys, vectors, missing = plan.keys, plan.found, plan.missing
        self.reused += sum(1 for k in keys if k in vectors)
        if self.grow_cached:
            self._scale = min(self._scale * 4, MAX_SCALE) if not missing else 1
        stop = None if priority else self._saved_waiting
        fresh = self._encode(list(missing.items()), stop=stop)
        self.embedded += len(fresh)
        if stop is not None and len(fresh) < len(missing) and stop():
            # A saved file waits: its rows go next, and this step's vectors go to
            # the cache only (the rows' write, ~100-150 ms on a big realm, waits
            # for the next backlog step, which finds them there).
            self.store.cache_put(self.model_id, plan.to_cache(fresh))
            return len(fresh)
        to_cache = plan.to_cache(fresh)   # vectors (plan.found) now holds every complete row
        done = [(r, k) for r, k in zip(rows, keys) if k in vectors]
        updates = {r["id"]: (k, vectors[k]) for r, k in done}
        searchable = []
        stored = self.store.set_vectors(updates, expect={r["id"]: r["content_hash"] for r, _ in done},
                                        on_searchable=searchable.append if priority else None)
        if priority:       # the batch's `embedded` time: when search began to find them
            self.priority_done_at = searchable[0] if searchable else time.time()
        # After the rows: they serve this search, the cache only later edits
        self.store.cache_put(self.model_id, to_cache)
        return stored

    def _saved_waiting(self) -> bool:
        with self._priority_lock:
            return bool(self._priority)

    def _encode(self, items: list[tuple[str, str]], stop=None) -> dict:
        """Vectors of (key, text) items in the embedder's batches, shortest first
        by the embedder's own measure (each batch is padded to its longest
        text). ``stop``: asked between two batches; when true the rest waits
        for a later step, so a file saved meanwhile is embedded after one
        batch, not after the whole step."""
        measure = getattr(self.embedder, "_lengths", None)
        lengths = measure([t for _, t in items]) if measure else [len(t) for _, t in items]
        items = [item for _, item in sorted(zip(lengths, items), key=lambda li: li[0])]
        size = max(1, int(getattr(self.embedder, "batch_size", 0) or self.batch))
        fresh: dict = {}
        for start in range(0, len(items), size):
            part = items[start:start + size]
            if self.stopped():
                raise BatchInterrupted()
            if self.pause is not None:
                self.pause()
                # a save written while this waited has queued its rows: they go first
                if fresh and stop is not None and stop():
                    break
            fresh.update(zip((k for k, _ in part), self._encode_part([t for _, t in part])))
            if stop is not None and start + size < len(items) and stop():
                break
        return fresh

    def _encode_part(self, texts: list[str]) -> list:
        """One model batch. Where the daemon can be told of saves (``pause``)
        and the runtime can stop a run, a save stops the batch in progress
        (``Enricher.yield_to_save``): it runs again once the save is written,
        and that second run is never stopped, so the model always moves on."""
        if self.pause is None or getattr(self.embedder, "interrupt", None) is None:
            return self.embedder.encode(texts)
        try:
            return self.embedder.encode(texts, interruptible=True)
        except BatchInterrupted:
            if self.stopped():
                raise
            self.interrupted += 1
            self.pause()
            return self.embedder.encode(texts)

    def drain(self, budget_s: float = 1e9) -> int:
        """Embed until nothing is missing or the time budget is spent."""
        done, deadline = 0, time.monotonic() + budget_s
        while time.monotonic() < deadline:
            n = self.step()
            if n == 0:
                break
            done += n
        return done
