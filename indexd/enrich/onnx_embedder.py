"""Running a local sentence-transformers model through onnxruntime.

``onnx_model`` finds (or makes once, in a child process) the ONNX export of
a model directory under the cache dir, keyed by the weights' hash;
``OnnxEmbedder`` tokenizes with the model's own ``tokenizer.json`` and runs
the export, which already pools and normalises. torch is never imported in
this process. Measured on the stdlib (docs/benchmarks.md): the same vectors
as sentence-transformers (cosine >= 0.9999) at ~170 MB of RSS instead of
~760 MB after encoding.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from ..errors import ModelUnavailable
from .embedder import LocalModelEmbedder, default_threads, model_id
from .onnx_export import GRAPH_VERSION, UnsupportedModel, model_layout

log = logging.getLogger(__name__)

EXPORT_TIMEOUT_S = 600
# Measured on 300 stdlib function texts, 1 thread (docs/benchmarks.md): batches
# of 8 ran 28 texts/s at a 361 MB peak, 16 ran 24/s at 511 MB, 32 ran 19/s at
# 747 MB: attention memory grows with batch x length^2 and padding wastes more.
# 2026-12-02, bench/embed_batch.py (320 stdlib entry texts, length-ordered as
# the daemon does): 4 ran 30.3 vs 28.1 texts/s (1 thread) and 50.4 vs 48.0 (2
# threads), 2 no faster than 4; and a save waits for half as long a batch.
MAX_BATCH = 4


def onnx_model(directory: Path, weights: str, cache_dir: Path, label: str,
               precision: str = "fp32") -> Path:
    """The cached export of ``directory`` (made now when missing); for int8 its
    quantized copy beside it (made now when missing)."""
    out = _fp32_model(directory, weights, cache_dir, label)
    return out if precision != "int8" else _int8_model(out)


def _int8_model(fp32: Path) -> Path:
    out = fp32.with_name("model.int8.onnx")
    if out.is_file() and out.with_suffix(".json").is_file():
        return out
    log.info("quantizing the ONNX embedding model to int8 (once) from=%s to=%s", fp32, out)
    return _made_by_child("indexd.enrich.onnx_quantize", [str(fp32), str(out)], out,
                          f"int8 quantization of {fp32}")


def _fp32_model(directory: Path, weights: str, cache_dir: Path, label: str) -> Path:
    try:
        import onnxruntime  # noqa: F401 - probe before spending an export
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise ModelUnavailable(f"onnxruntime is not installed ({exc.name})") from exc
    try:
        model_layout(directory)   # refuse unsupported models before spawning an export
    except UnsupportedModel as exc:
        raise ModelUnavailable(f"cannot run {directory} through ONNX: {exc}") from exc
    # The graph version in the name: an older export (unfused) is made again.
    stem = f"{_safe(label)}-{weights[:16]}"
    out = cache_dir / f"{stem}-g{GRAPH_VERSION}" / "model.onnx"
    if out.is_file() and out.with_suffix(".json").is_file():
        return out
    log.info("exporting embedding model to ONNX (once) model=%s to=%s", directory, out)
    made = _made_by_child("indexd.enrich.onnx_export", [str(directory), str(out)], out,
                          f"ONNX export of {directory}")
    _drop_older_graphs(cache_dir, stem)
    return made


def _drop_older_graphs(cache_dir: Path, stem: str) -> None:
    """Remove this model's exports by older graph versions (~90 MB each). A
    daemon still serving one holds it in memory, so removing it is safe."""
    older = [cache_dir / stem] + [cache_dir / f"{stem}-g{v}" for v in range(2, GRAPH_VERSION)]
    for path in older:
        if path.is_dir():
            log.info("removing an older ONNX export path=%s", path)
            shutil.rmtree(path, ignore_errors=True)


def _made_by_child(module: str, args: list[str], out: Path, what: str) -> Path:
    """``python -m module ARGS... OUR_PID`` must leave ``out``, else ModelUnavailable."""
    try:
        # Our pid lets the child die with us (indexd/procs.py): a killed daemon
        # must not leave a ~1 GB torch process behind.
        proc = subprocess.run([sys.executable, "-m", module, *args, str(os.getpid())],
                              capture_output=True, text=True,
                              timeout=EXPORT_TIMEOUT_S, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelUnavailable(f"{what} failed: {exc}") from exc
    if proc.returncode != 0 or not out.is_file():
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelUnavailable(f"{what} failed: {detail}")
    return out


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:60]


class OnnxEmbedder(LocalModelEmbedder):
    runtime = "onnx"

    def __init__(self, directory: Path, onnx_path: Path, threads: int | None = None,
                 batch_size: int = 32, name: str | None = None, weights: str = "",
                 max_tokens: int | None = None, precision: str = "fp32"):
        super().__init__(min(batch_size, MAX_BATCH))
        self.path = Path(directory)
        self.onnx_path = Path(onnx_path)      # the export it runs (doctor, tests)
        try:
            layout = json.loads(onnx_path.with_suffix(".json").read_text())
            limit = int(layout["max_seq_length"])
            self.max_tokens = min(limit, max_tokens or limit)
            self.threads = threads or default_threads()
            self._session = _session(onnx_path, self.threads)
            self._tokenizer = _tokenizer(self.path, self.max_tokens)
            # A second instance, unpadded, for the lengths only: a fast tokenizer
            # must not be shared between threads, and queries use the first one.
            self._counter = _tokenizer(self.path, self.max_tokens, pad=False)
            self._counter_lock = threading.Lock()
        except Exception as exc:  # noqa: BLE001 - any loader failure means "no model"
            raise ModelUnavailable(f"ONNX model {onnx_path} could not be loaded: "
                                   f"{type(exc).__name__}: {exc}") from exc
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._run_options = _run_options()
        # Background batches run under options of their own, so stopping one
        # (``interrupt``: a save wants the cores) can never stop a query.
        self._background_options = _run_options()
        self._options = self._run_options
        self.dim = int(self._session.get_outputs()[0].shape[-1] or layout["dim"])
        self.precision = precision
        self.model_id = model_id(name or self.path.name, weights, self.dim, self.max_tokens, limit,
                                 precision)

    def _lengths(self, texts: list[str]) -> list[int]:
        # Word-pieces after the cut, as the model sees them: ordered by
        # characters, the daemon's 64-text steps of stdlib texts padded the
        # attention work to 1.206x, by word-pieces to 1.131x (docs/decisions.md,
        # "Embedding speed"); tokenizing twice costs ~1% of a batch.
        with self._counter_lock:
            return [len(e.ids) for e in self._counter.encode_batch(texts)]

    def _run(self, batch: list[str]):
        import numpy as np

        encoded = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids,
                 "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                 "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}
        return self._session.run(None, {k: feeds[k] for k in self._inputs}, self._options)[0]

    # Under LocalModelEmbedder's turn lock: one run at a time.
    def _prepare_run(self, interruptible: bool) -> None:
        if interruptible:
            self._background_options.terminate = False
        self._options = self._background_options if interruptible else self._run_options

    def _stop_run(self) -> bool:
        self._background_options.terminate = True   # onnxruntime checks it between nodes
        return True

    def _run_stopped(self, exc: Exception) -> bool:
        return bool(self._background_options.terminate)


def _session(path: Path, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Measured: the arena makes a run 1.4-2x faster than plain malloc, but
    # keeps its peak (~470 MB); shrinking it after every run (_run_options)
    # keeps the speed and returns to ~170 MB. Memory patterns only pay off for
    # repeated shapes, and text batches rarely repeat one.
    options.enable_cpu_mem_arena = True
    options.enable_mem_pattern = False
    options.log_severity_level = 3
    # Spinning workers burn the core a busy machine needs elsewhere: with two
    # threads beside other load, 160 stdlib functions ran 7.0 texts/s spinning
    # and 10.8 without (indexd index, 2 cores, load 5).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _run_options():
    import onnxruntime as ort

    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


def _tokenizer(directory: Path, max_len: int, pad: bool = True):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tok.enable_truncation(max_length=max_len)
    if not pad:
        tok.no_padding()
        return tok
    pad = tok.padding or {}
    pad_token = pad.get("pad_token") or _pad_token(directory)
    pad_id = tok.token_to_id(pad_token)
    tok.enable_padding(pad_id=pad_id if pad_id is not None else 0, pad_token=pad_token)
    return tok


def _pad_token(directory: Path) -> str:
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        try:
            value = json.loads((directory / name).read_text()).get("pad_token")
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            return value
    return "[PAD]"
