"""Texts per second of the embedding model at several batch sizes, in the daemon's order.

320 evenly spaced entry texts of realm ``std`` of ``INDEXD_HOME`` (an embedded
stdlib home, e.g. the one ``bench/search_quality.py --keep`` leaves), ordered
by word-pieces and cut into the daemon's steps of 64, then into batches; three
interleaved rounds per setting, median printed. Chose ``MAX_BATCH`` in
indexd/enrich/onnx_embedder.py.

    INDEXD_HOME=... .venv/bin/python bench/embed_batch.py [--sizes 2,4,8] [--threads 1,2]
        [--precisions fp32,bf16]

``--precisions``: one row per precision and thread count (``embed_precision``;
bf16 runs torch on a CPU with AMX), with each row's cosine to the first
precision's vectors of the same texts (min / median).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexd.config import load_settings  # noqa: E402
from indexd.enrich.embedder import load_embedder  # noqa: E402
from indexd.enrich.texts import embed_text  # noqa: E402
from indexd.store import Store  # noqa: E402

COLUMNS = ["name", "qualname", "kind", "signature", "doc", "body", "path", "parent", "summary"]
STEP = 64   # the daemon's embed step (embed_batch x 4)


def sample_texts(n: int = 320) -> tuple[object, list[str]]:
    settings = load_settings()
    rows = Store(settings.paths.store_dir).entries_where("realm = 'std'", COLUMNS, limit=None)
    rows = rows[:: max(1, len(rows) // n)][:n]
    return settings, [embed_text(r, "default") for r in rows]


def rate(embedder, ordered: list[str], size: int) -> float:
    embedder.batch_size = size
    started = time.perf_counter()
    for i in range(0, len(ordered), STEP):
        step = ordered[i:i + STEP]
        for j in range(0, len(step), size):
            embedder.encode(step[j:j + size])
    return len(ordered) / (time.perf_counter() - started)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2,4,8")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--precisions", default="fp32")
    args = ap.parse_args(argv)
    settings, texts = sample_texts()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{'precision':>9}  {'runtime':>7}  {'threads':>7}  " + "  ".join(
        f"{'batch ' + str(s):>22}" for s in sizes) + "  cosine to the first min / median")
    reference = None
    for precision in args.precisions.split(","):
        for threads in (int(x) for x in args.threads.split(",")):
            embedder = load_embedder(replace(settings, embed_precision=precision), threads=threads)
            lengths = embedder._lengths(texts)
            ordered = [t for _, t in sorted(zip(lengths, texts), key=lambda x: x[0])]
            embedder.encode(ordered[:16])   # warm-up
            runs: dict[int, list[float]] = {s: [] for s in sizes}
            for _ in range(3):
                for size in sizes:
                    runs[size].append(rate(embedder, ordered, size))
            vectors = np.asarray(embedder.encode(texts), dtype=np.float32)
            reference = vectors if reference is None else reference
            cos = (vectors * reference).sum(1)
            print(f"{embedder.precision:>9}  {embedder.runtime:>7}  {threads:>7}  " + "  ".join(
                f"{statistics.median(v):6.1f} texts/s ({' '.join(f'{x:.1f}' for x in v)})"
                for v in runs.values()) + f"  {cos.min():.6f} / {np.median(cos):.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
