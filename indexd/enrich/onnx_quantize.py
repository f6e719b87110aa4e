"""Quantize the exported ONNX sentence model to int8 weights, once.

Dynamic quantization (onnxruntime's own ``quantize_dynamic``): weights stored
as signed int8 per output channel, activations quantized per batch at run
time, so no calibration data is needed. Per-channel signed int8 is the variant
that keeps MiniLM's vectors close (cosine ~0.995 to fp32 on stdlib texts;
per-tensor: 0.945, unsigned: 0.978) and runs ~1.9x the texts per CPU-second
on these CPUs (AVX-512 VNNI); docs/decisions.md, "Embedding precision".

Run as its own process (``python -m indexd.enrich.onnx_quantize SRC DST``):
it loads the whole graph through ``onnx``, memory the daemon should not keep.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path


def quantize(src: Path, dst: Path) -> None:
    """Write ``dst`` (and its layout ``.json``) from ``src``; ``dst`` appears last."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)   # its "consider pre-processing" advice
    partial = dst.with_name(f"{dst.stem}.{os.getpid()}.partial.onnx")
    # The fused export's contrib ops (Attention, SkipLayerNormalization) have no
    # shape inference in onnx, so their outputs' type is stated: all are float.
    quantize_dynamic(str(src), str(partial), per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})
    layout = dst.with_suffix(f".{os.getpid()}.json.partial")
    shutil.copyfile(src.with_suffix(".json"), layout)
    os.replace(layout, dst.with_suffix(".json"))
    os.replace(partial, dst)   # last: a present model.int8.onnx is a finished one


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or (len(argv) == 3 and not argv[2].isdigit()):
        print("usage: python -m indexd.enrich.onnx_quantize SRC.onnx DST.onnx [PARENT_PID]",
              file=sys.stderr)
        return 2
    if len(argv) == 3:
        from ..procs import die_with_parent

        die_with_parent(int(argv[2]))
    src = Path(argv[0])
    if not src.is_file() or not src.with_suffix(".json").is_file():
        print(f"no exported model at {src}", file=sys.stderr)
        return 3
    quantize(src, Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
