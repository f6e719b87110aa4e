"""Which ONNX graph of the default model embeds fastest, with the same vectors.

    .venv/bin/python bench/embed_graph.py [--texts 640] [--rounds 5] [--write]

Exports the installed MiniLM three ways, each in a child process (torch is
imported there only), as ``indexd.enrich.onnx_export`` can:

- ``default trace``: transformers' default attention traced (the graph served
  before graph version 2);
- ``eager trace``: the eager attention implementation traced, not optimized;
- ``eager + fused``: that graph through onnxruntime's transformer optimizer
  (fused Attention, SkipLayerNormalization, BiasGelu): what is served now.

Then runs all three through the daemon's own ``OnnxEmbedder`` (batches of 4,
texts handed over 16 at a time as the vector stage does) on evenly spaced
stdlib function texts (``indexd.enrich.texts.embed_text``), in interleaved
rounds so machine noise falls on all alike: with 1 thread texts per CPU-second
(what a busy machine can give), with 2 threads texts per wall-second (an idle
2-core machine). Medians of ``--rounds``; vectors are compared with the
default trace's, which tests/enrich holds equal to sentence-transformers'.
``--write`` puts the table in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

GRAPHS = {"default trace": (False, False), "eager trace": (True, False),
          "eager + fused": (True, True)}
STEP = 16   # texts per encode call: the vector stage's 4 x batch


def export_all(tmp: Path) -> dict[str, Path]:
    out = {}
    for name, (eager, fuse) in GRAPHS.items():
        path = tmp / name.replace(" ", "_").replace("+", "and") / "model.onnx"
        code = ("import sys; from pathlib import Path; "
                "from indexd.enrich.embedder import default_model_path; "
                "from indexd.enrich.onnx_export import export; "
                f"export(default_model_path(), Path(sys.argv[1]), eager={eager}, fuse={fuse})")
        subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=ROOT)
        out[name] = path
    return out


def op_counts(path: Path) -> dict:
    import collections

    import onnx

    return collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)


def texts(n: int) -> list[str]:
    from embed_speed import stdlib_rows

    from indexd.enrich.texts import embed_text

    rows = stdlib_rows(20 * n)
    step = max(1, len(rows) // n)
    return [embed_text(r, "default") for r in rows[::step][:n]]


def one_pass(emb, batch: list[str]) -> tuple[float, float, list]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = [v for i in range(0, len(batch), STEP) for v in emb.encode(batch[i:i + STEP])]
    return time.perf_counter() - wall, time.process_time() - cpu, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=640)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = ap.parse_args()
    import numpy as np

    from indexd.enrich.embedder import default_model_path
    from indexd.enrich.onnx_embedder import OnnxEmbedder

    corpus = texts(args.texts)
    with tempfile.TemporaryDirectory() as tmp:
        paths = export_all(Path(tmp))
        ops = {name: op_counts(p) for name, p in paths.items()}
        speed = {(name, t): [] for name in paths for t in (1, 2)}
        vectors = {}
        for threads in (1, 2):
            models = {name: OnnxEmbedder(default_model_path(), p, threads=threads, batch_size=4)
                      for name, p in paths.items()}
            for m in models.values():
                m.encode(corpus[:8])   # warm-up
            names = list(models)
            for r in range(args.rounds):
                for name in names[r % 3:] + names[:r % 3]:   # rotate who goes first
                    wall, cpu, vecs = one_pass(models[name], corpus)
                    speed[(name, threads)].append(len(corpus) / (cpu if threads == 1 else wall))
                    vectors[name] = np.asarray(vecs)
    base = vectors["default trace"]
    lines = [f"{len(corpus)} evenly spaced stdlib function texts, batches of 4, "
             f"median of {args.rounds} interleaved rounds; the installed all-MiniLM-L6-v2", "",
             "| ONNX graph | MatMul / Attention nodes | 1 thread (texts per CPU-s) "
             "| 2 threads (texts per wall-s) | cosine to the default trace (min) |",
             "|---|---|---|---|---|"]
    ref = {t: statistics.median(speed[("default trace", t)]) for t in (1, 2)}
    for name in paths:
        one, two = (statistics.median(speed[(name, t)]) for t in (1, 2))
        cos = ("reference" if name == "default trace"
               else f"{float((vectors[name] * base).sum(1).min()):.6f}")
        lines.append(f"| {name} | {ops[name]['MatMul']} / {ops[name].get('Attention', 0)} "
                     f"| {one:.1f} ({one / ref[1]:.2f}×) | {two:.1f} ({two / ref[2]:.2f}×) "
                     f"| {cos} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        from agreement import DOC_INTRO, replace_region

        body = ("## ONNX graph of the embedding model (bench/embed_graph.py)\n\n"
                "Generated by `bench/embed_graph.py`.\n\n" + table +
                f"\n\nReproduce: `.venv/bin/python bench/embed_graph.py --texts {args.texts} "
                f"--rounds {args.rounds} --write`")
        replace_region(ROOT / "docs" / "benchmarks.md", "embed_graph", body, DOC_INTRO)


if __name__ == "__main__":
    main()
