"""The enrich thread: embed what lacks a vector, then summarize, behind the index.

Loads the embedding model in the background (the socket is up at once and
keyword search works meanwhile), switches the store to that model, then
loops: vectors first (search by meaning), summaries second, sleeping when
there is nothing to do and woken by the indexer after each batch.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace

from ..memory import trim
from .embedder import BatchInterrupted
from .priority import lower_this_thread

log = logging.getLogger(__name__)

TRIM_EVERY = 1024   # embedded texts between heap trims
PENDING_TTL_S = 0.5
SAVE_YIELD_S = 1.0   # a changed file holds the model this long at most, unless written sooner
MAX_YIELD_S = 1.0    # and no batch waits longer than this, whatever keeps arriving
SAVE_EMBED_MAX = 8   # new texts a write embeds itself (~50-100 ms with the default model)
NO_BULK = {"active": None, "loading": False, "runs": [], "off": None}   # status before a model


class Enricher:
    def __init__(self, store, settings_provider, notify, embed: bool = True, relations=None):
        self.store = store
        self.relations = relations   # the warm graph, for relationship descriptions
        self._settings = settings_provider
        self.notify = notify
        settings = settings_provider()
        self.embed_enabled = embed and settings.embed_model != "off"
        self.enabled = self.embed_enabled or settings.summarize == "llm"
        self.embedder = None
        self.vectors = None
        self.summaries = None
        self.relation_stage = None
        self.embed_error: str | None = None
        self.error: str | None = None
        self.nice: int | None = None     # the enrich thread's nice value, where lowered
        self._pending_cache: tuple[float, int | None] | None = None
        # Writes whose every row had a vector (or not) once before_table ran:
        # the engine tells from them whether a batch was embedded with its write.
        self.written_with_vectors = 0
        self.written_without_vectors = 0
        self._trimmed_at = 0           # texts embedded at the last heap trim
        self.bulk = None               # a cold backlog's bulk model (bulk_model.py)
        self.later = None              # embed_model filling in behind embed_first (later_model.py)
        self.took_over: dict | None = None   # when and how that model took over
        # Team shared indexes (shared_index/subscribe.py): repos whose vectors to
        # take from one before embedding them here, and what the last reads found.
        self._seed_queue: dict[tuple[str, str], None] = {}
        self._seed_lock = threading.Lock()
        # the engine: the start's hot index build, or a shared realm's reconcile being
        # written (its team vectors and summaries come first): no model work meanwhile
        self.hold_vectors = False
        self.shared: dict[str, dict] = {}
        self._wake = threading.Event()
        # A save in progress: the model waits between batches until its entries
        # are written (yield_to_save / save_written), so the parse has the cores.
        self._yield_until = 0.0
        self._yield_open = threading.Event()
        self._yield_open.set()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="indexd-enrich", daemon=True)

    def start(self) -> None:
        if self.enabled:
            self._thread.start()

    def request_stop(self) -> None:
        """Any thread: stop now. The model batch in progress is cut (the steady
        model's run is terminated, a bulk or later child killed); vectors are
        derived data, embedded again after the next start."""
        self._stopping = True
        self._wake.set()
        self._yield_open.set()
        interrupt = getattr(self.embedder, "interrupt", None)
        if interrupt is not None:
            interrupt()
        for child in (self.bulk, self.later):
            if child is not None:
                child.abort()

    def stop(self) -> None:
        self.request_stop()
        if self._thread.is_alive():
            self._thread.join(timeout=60)

    def wake(self) -> None:
        self._wake.set()

    def yield_to_save(self) -> None:
        """A file changed: hold the next batch until save_written (or SAVE_YIELD_S)."""
        self._yield_until = time.monotonic() + SAVE_YIELD_S
        self._yield_open.clear()
        # The batch already running would hold both cores for up to a second
        # under load: stop it (it runs again after the save, never stopped twice).
        interrupt = getattr(self.embedder, "interrupt", None)
        if interrupt is not None:
            interrupt()
        # A child's batch cannot be cut without losing it: the child stops where it is.
        if self._settings().embed_hold_for_saves:
            for child in self._children():
                child.hold.hold(SAVE_YIELD_S)

    def save_written(self) -> None:
        self._yield_until = 0.0
        self._yield_open.set()
        for child in self._children():
            child.hold.release()

    def _children(self) -> list:
        """The model processes alive now (a bulk child loading or embedding, a
        later model's); read from the watcher's thread while the enrich thread
        may swap them, which is why each hold is thread-safe and refuses once closed."""
        found = []
        if self.bulk is not None:
            found += [c for c in (self.bulk.active, self.bulk.loading) if c is not None]
        if self.later is not None and self.later.child is not None:
            found.append(self.later.child)
        return found

    def wait_for_saves(self) -> None:
        """Between two model batches (and between files of a graph build): wait
        while a save is being parsed and written, at most MAX_YIELD_S per call so
        a stream of events cannot starve the model (docs/decisions.md, "Embedding
        yields to a save")."""
        started = time.monotonic()
        while not self._stopping:
            left = min(self._yield_until, started + MAX_YIELD_S) - time.monotonic()
            if left <= 0:
                return
            self._yield_open.wait(left)

    def prioritize(self, file_keys) -> None:
        if self.vectors is not None:
            self.vectors.prioritize(file_keys)
        self._wake.set()

    def seed_shared(self, realm: str, repo: str) -> None:
        """Read the realm's shared index for this repo before embedding it here."""
        with self._seed_lock:
            self._seed_queue[(realm, repo)] = None
        self._wake.set()

    def _seed_pending(self) -> None:
        with self._seed_lock:
            queued, self._seed_queue = list(self._seed_queue), {}
        if not queued:
            return
        from ..shared_index.subscribe import seed_realm

        settings = self._settings()
        by_realm: dict[str, list[str]] = {}
        for realm, repo in queued:
            if realm in settings.shared:
                by_realm.setdefault(realm, []).append(repo)
        for realm, repos in by_realm.items():
            report = seed_realm(settings, self.store, realm, settings.shared[realm],
                                self.vectors.model_id, repos)
            with self._seed_lock:   # status() copies it from another thread
                state = self.shared.setdefault(realm, {"uri": report.uri, "repos": {}})
                state["error"] = report.error
                for shard in report.shards:
                    prior = state["repos"].get(shard.repo)
                    if shard.status == "nothing_missing" and prior is not None:
                        # a later reconcile asked nothing of it: what it gave still stands
                        prior["checked_at"] = time.time()
                        continue
                    state["repos"][shard.repo] = shard.to_json() | {"at": time.time()}
            log.info("shared index realm=%s uri=%s vectors=%d error=%s", realm, report.uri,
                     report.vectors, report.error)

    def _shared_copy(self) -> dict:
        with self._seed_lock:
            return {realm: state | {"repos": dict(state["repos"])} for realm, state in self.shared.items()}

    def before_table(self, rows: list[dict]) -> None:
        """The indexer's hook before its table commits: cached vectors, and a
        save's few new texts embedded by this process's model (not the bulk
        child's), unless a shared realm's reconcile holds the vectors."""
        if self.vectors is None:
            return
        now = None if self.hold_vectors else getattr(self.embedder, "encode_now", None)
        if self.vectors.fill_before_write(rows, now=now, limit=SAVE_EMBED_MAX):
            self.written_with_vectors += 1
        else:
            self.written_without_vectors += 1

    # -- the loop ------------------------------------------------------------
    def _loop(self) -> None:
        # before the model loads: its runtime's threads inherit this thread's priority
        self.nice = lower_this_thread(self._settings().embed_nice)
        if self.embed_enabled:
            self._load_embedder()
        summaries = self._summary_stage()
        while not self._stopping:
            try:
                if self.vectors is not None:
                    self._seed_pending()
                held = self.hold_vectors
                if self.bulk is not None and not held:
                    self.bulk.before_step(self._settings())
                done = self.vectors.step() if self.vectors is not None and not held else 0
                if self.bulk is not None and not held:
                    self.bulk.after_step(done)
                if done == 0 and summaries is not None and not held:
                    # held: a teammate's summaries are on their way (shared index)
                    done = summaries.step()
                if done == 0 and self.relation_stage is not None:
                    done = self.relation_stage.step()
                if done == 0 and self.later is not None and not held:
                    done = self.later.step()
                    if self.later.complete:
                        self._take_over()
                self.error = None
            except BatchInterrupted:
                if self._stopping:   # request_stop cut the batch: nothing of it was kept
                    log.info("embed batch cut for shutdown")
                    break
                done = 0   # a save stopped a later model's batch: it runs again
            except Exception as exc:  # noqa: BLE001 - retry later, keep the daemon up
                self.error = f"{type(exc).__name__}: {exc}"
                log.exception("enrich batch failed; will retry")
                done = 0
                self._wake.wait(5.0)
            if done == 0:
                self.notify()
                trim()
                self._wake.wait(2.0)
                self._wake.clear()
            elif self.vectors is not None and self.vectors.embedded - self._trimmed_at >= TRIM_EVERY:
                self._trimmed_at = self.vectors.embedded
                trim()
        if self.bulk is not None:   # this thread started the child: it ends it (procs.py)
            self.bulk.close()
        if self.later is not None:
            self.later.close()

    def _load_embedder(self) -> None:
        from .later_model import LaterModel, first_spec, holds

        settings = self._settings()
        first = first_spec(settings)
        try:
            if first is not None and holds(self.store, settings.embed_model):
                first = None   # the store already holds (some of) embed_model's vectors
            embedder, first = self._load_first(settings, first)
            spec = first or settings.embed_model
            self.store.switch_model(embedder.model_id, embedder.dim, settings.embed_recipe, spec=spec)
        except Exception as exc:  # noqa: BLE001 - keyword search keeps working
            self.embed_error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            log.error("embedding disabled: %s", self.embed_error)
            return
        self._serve(embedder, settings)
        if first is not None:
            self.later = LaterModel(self.store, settings, embedder, settings.embed_recipe)
            log.info("embedding with %s first; %s fills in behind it", first, settings.embed_model)

    @staticmethod
    def _load_first(settings, first: str | None):
        """(the model that answers now, the first model's name or None). A first
        model that cannot load leaves embed_model to load as it would alone."""
        from .embedder import load_embedder

        if first is not None:
            try:
                return load_embedder(replace(settings, embed_model=first)), first
            except Exception as exc:  # noqa: BLE001 - embed_model may still load
                log.warning("embed_first %r did not load (%s); loading embed_model %r alone",
                            first, getattr(exc, "message", None) or exc, settings.embed_model)
        return load_embedder(settings), None

    def _serve(self, embedder, settings, from_cache: bool = False) -> None:
        """This model's vectors answer from now on. ``from_cache``: its vectors
        wait in the cache (a take-over), so steps grow while they come from it."""
        from .bulk_model import BulkSwitch
        from .vectors import VectorStage

        self.embedder = embedder   # first: a query that finds the stage ready needs the model
        self.vectors = VectorStage(self.store, embedder, recipe=settings.embed_recipe,
                                   batch=settings.embed_batch, step_rows=settings.embed_step,
                                   pause=self.wait_for_saves, grow_cached=from_cache)
        self.vectors.stopped = lambda: self._stopping
        self.bulk = BulkSwitch(self.store, self.vectors, embedder)
        log.info("embedder ready model=%s dim=%s", embedder.model_id, embedder.dim)

    def _take_over(self) -> None:
        """embed_model has a vector for every entry in its cache: load it here,
        switch the store to it (rows refill from the cache) and end the child.
        A failed load leaves the first model serving and says why."""
        from .embedder import load_embedder

        later, settings = self.later, self._settings()
        started = time.time()
        later.close()   # its child's memory goes back before this process loads the model
        try:
            embedder = load_embedder(settings)
        except Exception as exc:  # noqa: BLE001 - the first model keeps serving
            later.fail(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
            return
        if self.bulk is not None:
            self.bulk.close()
        first = self.embedder.model_id
        self.store.switch_model(embedder.model_id, embedder.dim, settings.embed_recipe,
                                spec=settings.embed_model)
        self._serve(embedder, settings, from_cache=True)
        self.later = None
        self.took_over = {"model": settings.embed_model, "model_id": embedder.model_id,
                          "from": first, "embedded": later.embedded, "at": time.time(),
                          "load_s": round(time.time() - started, 1)}
        log.info("%s took over from %s (%d texts embedded behind it)", embedder.model_id, first,
                 later.embedded)

    def _summary_stage(self):
        from .summaries import SummaryStage
        from .summarizer import make_summarizer

        settings = self._settings()
        if settings.summarize != "llm":
            return None    # docstring summaries are made while parsing
        try:
            summarizer = make_summarizer(settings)
        except Exception as exc:  # noqa: BLE001 - summaries are optional
            self.error = getattr(exc, "message", None) or str(exc)
            log.error("summaries disabled: %s", self.error)
            return None
        key = settings.ollama_model if settings.summarize == "llm" else ""
        self.summaries = SummaryStage(self.store, summarizer, key)
        if self.relations is not None:
            from .relation_stage import RelationStage

            self.relation_stage = RelationStage(self.store, summarizer, key, self.relations)
        return self.summaries

    # -- status --------------------------------------------------------------
    def pending(self, max_age_s: float = 0.0) -> int | None:
        """Entries still without a vector; None when embedding is off or failed.

        ``max_age_s``: a count this recent may answer. Searches pass
        PENDING_TTL_S: the count scans the table (20-30 ms on the stdlib) and
        every semantic answer reports it; status always counts afresh."""
        now = time.monotonic()
        cached = self._pending_cache
        if cached is not None and now - cached[0] < max_age_s:
            return cached[1]
        value = self._count_pending()
        self._pending_cache = (now, value)
        return value

    def _count_pending(self) -> int | None:
        if not self.embed_enabled or (self.vectors is None and self.embed_error):
            return None
        try:
            missing = self.store.count_missing_vectors()
        except Exception:  # noqa: BLE001 - status must answer anyway
            return None
        # While the model loads nothing is semantically searchable yet.
        return missing if self.vectors is not None else max(1, missing)

    def status(self) -> dict:
        v, sm = self.vectors, self.summaries
        return {"enabled": self.embed_enabled, "ready": v is not None,
                "model": self.embedder.model_id if self.embedder else self._settings().embed_model,
                "runtime": getattr(self.embedder, "runtime", "") if self.embedder else "",
                "threads": getattr(self.embedder, "threads", None),
                "precision": getattr(self.embedder, "precision", "") if self.embedder else "",
                "bulk": self.bulk.status() if self.bulk is not None else dict(NO_BULK),
                "later": self.later.status() if self.later is not None else self.took_over,
                "nice": self.nice,
                "error": self.embed_error or self.error,
                "embedded": v.embedded if v else 0, "reused": v.reused if v else 0,
                "interrupted": v.interrupted if v else 0,
                "shared": self._shared_copy(),
                "summaries": {"mode": self._settings().summarize,
                              "enabled": self._settings().summarize != "off",
                              "done": sm.summarized if sm else 0,
                              "reused": sm.reused if sm else 0,
                              "error": _llm_error(sm),
                              "relations": self.relation_stage.status()
                              if self.relation_stage is not None else None}}


def _llm_error(stage) -> str | None:
    """Why the model is not answering now (Ollama down, model not pulled), or None."""
    stats = getattr(getattr(stage, "summarizer", None), "stats", None)
    return getattr(stats, "error", None)
