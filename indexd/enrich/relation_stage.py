"""The relationship stage (LLM mode only): one model sentence per strong file pair.

For each file, its ``TOP_PAIRS`` strongest outgoing pairs (graph/describe.py)
get a sentence from the summarizer, cached in the summary cache under
``relation_key(model, both files' paths and content hashes)``: never asked again while both
files are unchanged, across restarts and edits of other files. The graph
tells the stage which files an update touched (``Relations.listeners``);
a touched file and every file with edges into it are looked at again, since
either end's hash is part of the key. A fallback (Ollama down) is not
cached: answers show the evidence sentence, and the file's pairs are asked
again ``RETRY_S`` later (the summarizer's breaker keeps a dead server to one
request a minute), when one of its files changes, or at the next start.
"""

from __future__ import annotations

import logging
import threading
import time

from ..descriptions import file_infos, relation_key
from ..graph.describe import TOP_PAIRS, evidence_sentence, strongest

log = logging.getLogger(__name__)

RETRY_S = 60.0   # files whose pairs fell back are looked at again this much later
ASK_PER_STEP = 8  # model requests per step: the embed stage (new edits) waits no longer


class RelationStage:
    def __init__(self, store, summarizer, model_key: str, relations, top: int = TOP_PAIRS,
                 batch: int = 32, clock=time.monotonic):
        self.store, self.summarizer, self.model_key = store, summarizer, model_key
        self.relations, self.top, self.batch = relations, top, batch
        self.described = 0    # pairs the model described
        self.reused = 0       # pairs found in the cache
        self.fallbacks = 0    # pairs left with their evidence sentence
        self.looked = 0       # files whose pairs were looked at (tests wait on it)
        self._lock = threading.Lock()
        self._touched: set[tuple] = set()
        self._all = True      # the graph may have been built before this stage existed
        self._todo: dict[tuple, None] = {}   # ordered set of files to look at
        self._failed: set[tuple] = set()     # files with a pair that fell back
        self._retry_at = 0.0
        self._clock = clock
        relations.listeners.append(self.touched)

    def touched(self, keys) -> None:
        """Called by the graph after an update (None: a new graph)."""
        with self._lock:
            if keys is None:
                self._all = True
            else:
                self._touched.update(tuple(k) for k in keys)

    @property
    def queued(self) -> int:
        return len(self._todo) + len(self._touched)

    def step(self) -> int:
        graph = self.relations.graph
        if graph is None:
            return 0
        batch = self._next(graph)
        if not batch:
            return 0
        with self.relations.lock:
            work = [(key, other, evidence_sentence(key[2], other[2], edges))
                    for key in batch if key in graph.facts
                    for other, edges, _s in strongest(graph, key, "out", self.top)]
        unfinished = self._describe(work) if work else set()
        if unfinished:   # their turn again first, in the next step
            self._todo = dict.fromkeys([*sorted(unfinished), *self._todo])
        self.looked += len(batch) - len(unfinished)
        return len(batch)

    def _next(self, graph) -> list[tuple]:
        with self._lock:
            everything, self._all = self._all, False
            touched, self._touched = self._touched, set()
        if self._failed and self._clock() >= self._retry_at:
            touched |= self._failed   # (their importers too: harmless, all cached)
            self._failed = set()
        with self.relations.lock:
            if everything:
                self._todo.update(dict.fromkeys(graph.facts))
            for key in touched:
                self._todo[key] = None
                # files whose edges land in the changed file: their keys changed too
                self._todo.update(dict.fromkeys(
                    src[1:] if src[0] == "git" else src for src in graph.rev.get(key, {})))
        batch = []
        while self._todo and len(batch) < self.batch:
            key = next(iter(self._todo))
            del self._todo[key]
            batch.append(key)
        return batch

    def _describe(self, work: list[tuple]) -> set[tuple]:
        """Ask for the pairs not cached, at most ASK_PER_STEP; the files left unasked."""
        infos = file_infos(self.store, {k for src, dst, _ in work for k in (src, dst)})
        keyed = {}
        for src, dst, evidence in work:
            a, b = infos.get(src, {}).get("hash"), infos.get(dst, {}).get("hash")
            if a and b:   # a file being reindexed has no row yet: its turn comes
                keyed[relation_key(self.model_key, (src[2], a), (dst[2], b))] = (src, dst, evidence)
        cached = self.store.summary_cache_get(list(keyed))
        self.reused += len(cached)
        fresh, asked, unfinished = {}, 0, set()
        for key, (src, dst, evidence) in keyed.items():
            if key in cached:
                continue
            if asked >= ASK_PER_STEP:
                unfinished.add(src)
                continue
            asked += 1
            text, source = self.summarizer.describe_relation({
                "src": src[2], "dst": dst[2], "evidence": evidence,
                "src_summary": infos[src]["summary"], "dst_summary": infos[dst]["summary"]})
            if source == "llm":
                fresh[key] = (text, "llm")
            else:
                self.fallbacks += 1
                if not self._failed:
                    self._retry_at = self._clock() + RETRY_S
                self._failed.add(src)
        self.store.summary_cache_put(fresh)
        self.described += len(fresh)
        if fresh:
            log.info("relations described pairs=%d reused=%d", len(fresh), len(cached))
        return unfinished

    def status(self) -> dict:
        return {"described": self.described, "reused": self.reused,
                "fallbacks": self.fallbacks, "queued": self.queued, "looked": self.looked,
                "retrying": len(self._failed)}
