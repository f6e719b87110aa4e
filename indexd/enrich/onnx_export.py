"""Export a local sentence-transformers model directory to one ONNX file.

Run as its own process (``python -m indexd.enrich.onnx_export SRC DST``) so
the daemon that later serves the ONNX file never imports torch: torch alone
costs ~260 MB of RSS, and encoding batches through it left the daemon at
~760 MB where onnxruntime stays at ~170 MB (docs/benchmarks.md).

The exported graph is the whole sentence embedding: transformer, pooling
(mean or CLS, read from the model's ``1_Pooling/config.json``) and L2
normalisation, so the runtime side only tokenizes and calls it. Reads local
files only; nothing is downloaded.

The model is traced with eager attention and the graph then goes through
onnxruntime's transformer optimizer, which fuses attention, layer norms and
GELU into single kernels: MiniLM's 48 MatMul become 18, and two threads embed
1.22x the texts per second with the same vectors (cosine 0.999999 on stdlib
texts; bench/embed_graph.py, docs/decisions.md "Embedding graph"). The default attention
is traced into a pattern no optimizer fuses. A fused graph that does not
reproduce the plain one on sample inputs is dropped for the plain one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
# Bump when the exported graph changes, so caches made by an older export are
# made again (onnx_embedder keys its cache directory by it).
GRAPH_VERSION = 2
FUSED_MIN_COSINE = 0.9999


class UnsupportedModel(Exception):
    """The directory is not a plain transformer + pooling (+ normalize) model."""


def model_layout(directory: Path) -> dict:
    """Pooling mode and input limit, or UnsupportedModel (torch is then used)."""
    try:
        modules = json.loads((directory / "modules.json").read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"no readable modules.json in {directory}") from exc
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k not in ("Normalize",) for k in kinds[2:]):
        raise UnsupportedModel(f"modules {kinds} (only Transformer, Pooling, Normalize export)")
    if not (directory / "tokenizer.json").is_file():
        raise UnsupportedModel(f"no tokenizer.json in {directory}")
    pool_dir = directory / modules[1].get("path", "1_Pooling")
    try:
        pooling = json.loads((pool_dir / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"no readable pooling config in {pool_dir}") from exc
    if pooling.get("pooling_mode_mean_tokens"):
        mode = "mean"
    elif pooling.get("pooling_mode_cls_token"):
        mode = "cls"
    else:
        raise UnsupportedModel(f"pooling {pooling} (only mean or CLS export)")
    try:
        max_len = int(json.loads((directory / "sentence_bert_config.json").read_text())
                      .get("max_seq_length") or 512)
    except (OSError, ValueError):
        max_len = 512
    return {"pooling": mode, "max_seq_length": max_len,
            "dim": int(pooling.get("word_embedding_dimension") or 0)}


def export(directory: Path, out: Path, eager: bool = True, fuse: bool = True) -> dict:
    """Write ``out`` (model.onnx) and ``out``.json (its layout); returns the layout.
    ``eager``/``fuse`` off reproduce the older graphs for bench/embed_graph.py."""
    layout = model_layout(directory)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import inspect
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    model = _load(AutoModel, directory, eager)
    accepts = inspect.signature(model.forward).parameters
    inputs = [name for name in INPUTS if name in accepts]
    wrapper = _sentence_module()(model, inputs, layout["pooling"])
    sample = tuple(torch.ones(2, 8, dtype=torch.long) if name != "token_type_ids"
                   else torch.zeros(2, 8, dtype=torch.long) for name in inputs)
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs} | {"embedding": {0: "batch"}}
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(f".{os.getpid()}.partial")   # two exporters never share one
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # tracer chatter about Python control flow
        torch.onnx.export(wrapper, sample, str(partial), dynamo=False, input_names=inputs,
                          output_names=["embedding"], dynamic_axes=axes, opset_version=OPSET)
    layout |= {"inputs": inputs, "graph_version": GRAPH_VERSION,
               "fused": fuse and _fuse(partial, model.config, inputs)}
    meta = out.with_suffix(f".{os.getpid()}.json.partial")
    meta.write_text(json.dumps(layout))
    os.replace(meta, out.with_suffix(".json"))
    os.replace(partial, out)   # last: a present model.onnx means a finished export
    return layout


def _load(auto_model, directory: Path, eager: bool):
    """The model with eager attention where it has that choice (see the module doc)."""
    if not eager:
        return auto_model.from_pretrained(str(directory), local_files_only=True).eval()
    try:
        model = auto_model.from_pretrained(str(directory), local_files_only=True,
                                           attn_implementation="eager")
    except (TypeError, ValueError):   # an architecture without the option
        model = auto_model.from_pretrained(str(directory), local_files_only=True)
    return model.eval()


def _fuse(path: Path, config, inputs: list[str]) -> bool:
    """Replace the graph at ``path`` by its fused form when that gives the same
    vectors on sample inputs; False (graph untouched) otherwise."""
    heads = int(getattr(config, "num_attention_heads", 0) or 0)
    hidden = int(getattr(config, "hidden_size", 0) or 0)
    if getattr(config, "model_type", "") not in FUSABLE or not heads or not hidden:
        return False
    import logging

    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    fused_path = path.with_name(path.name + ".fused")
    try:
        # Inside the try: the optimizer needs the onnx package, which a
        # minimal install may lack; the plain graph is served then.
        from onnxruntime.transformers.optimizer import optimize_model

        fused = optimize_model(str(path), model_type="bert", num_heads=heads,
                               hidden_size=hidden, opt_level=1, use_gpu=False)
        fused.save_model_to_file(str(fused_path))
        agrees = _agreement(path, fused_path, inputs) >= FUSED_MIN_COSINE
    except Exception:  # noqa: BLE001 - the optimizer is best effort: keep the plain graph
        agrees = False
    if not agrees:
        fused_path.unlink(missing_ok=True)
        return False
    os.replace(fused_path, path)
    return True


# Encoder families onnxruntime's "bert" optimizer patterns were written for.
FUSABLE = frozenset({"bert", "roberta", "xlm-roberta", "distilbert", "mpnet", "electra"})


def _agreement(plain: Path, fused: Path, inputs: list[str]) -> float:
    """The lowest cosine between the two graphs' vectors on padded random batches."""
    import numpy as np
    import onnxruntime as ort

    rng = np.random.default_rng(7)
    sessions = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
                for p in (plain, fused)]
    worst = 1.0
    for batch, tokens in ((1, 5), (3, 37), (4, 130)):
        ids = rng.integers(1000, 20000, size=(batch, tokens), dtype=np.int64)
        mask = np.ones_like(ids)
        mask[1:, tokens // 2:] = 0   # padded rows, as mixed-length batches are
        feeds = {"input_ids": ids, "attention_mask": mask,
                 "token_type_ids": np.zeros_like(ids)}
        a, b = (s.run(None, {k: feeds[k] for k in inputs})[0] for s in sessions)
        worst = min(worst, float((a * b).sum(1).min()))
    return worst


def _sentence_module():
    import torch

    class Sentence(torch.nn.Module):
        def __init__(self, model, inputs, pooling):
            super().__init__()
            self.model, self.inputs, self.pooling = model, inputs, pooling

        def forward(self, *args):
            named = dict(zip(self.inputs, args))
            hidden = self.model(**named).last_hidden_state
            if self.pooling == "cls":
                vec = hidden[:, 0]
            else:
                weight = named["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vec = (hidden * weight).sum(1) / weight.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(vec, p=2, dim=1)

    return Sentence


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or (len(argv) == 3 and not argv[2].isdigit()):
        print("usage: python -m indexd.enrich.onnx_export MODEL_DIR OUT.onnx [PARENT_PID]",
              file=sys.stderr)
        return 2
    if len(argv) == 3:
        from ..procs import die_with_parent

        die_with_parent(int(argv[2]))   # before torch: nobody waits for us once it is gone
    try:
        layout = export(Path(argv[0]), Path(argv[1]))
    except UnsupportedModel as exc:
        print(f"unsupported: {exc}", file=sys.stderr)
        return 3
    print(json.dumps(layout))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
