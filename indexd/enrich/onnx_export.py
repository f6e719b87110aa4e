"""Export a local sentence-transformers model directory to one ONNX file.

Run as its own process (``python -m indexd.enrich.onnx_export SRC DST``) so
the daemon that later serves the ONNX file never imports torch: torch alone
costs ~260 MB of RSS, and encoding batches through it left the daemon at
~760 MB where onnxruntime stays at ~170 MB (docs/benchmarks.md).

The exported graph is the whole sentence embedding: transformer, pooling
(mean or CLS, read from the model's ``1_Pooling/config.json``) and L2
normalisation, so the runtime side only tokenizes and calls it. Reads local
files only; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17


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


def export(directory: Path, out: Path) -> dict:
    """Write ``out`` (model.onnx) and ``out``.json (its layout); returns the layout."""
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
    model = AutoModel.from_pretrained(str(directory), local_files_only=True).eval()
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
    layout |= {"inputs": inputs}
    meta = out.with_suffix(f".{os.getpid()}.json.partial")
    meta.write_text(json.dumps(layout))
    os.replace(meta, out.with_suffix(".json"))
    os.replace(partial, out)   # last: a present model.onnx means a finished export
    return layout


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
