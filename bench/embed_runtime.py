"""torch vs onnxruntime for the default model: speed, memory, agreement.

    .venv/bin/python bench/embed_runtime.py [--texts 300] [--batch 16] [--repeat 3]

Each runtime runs in its own fresh process (so RSS is that runtime's alone),
loading the model the way the daemon does (``load_embedder`` with
``embed_runtime`` torch or onnx), on the same real stdlib function texts
(``bench/embed_speed.py``'s rows through ``indexd.enrich.texts.embed_text``).
Reports import+load seconds, RSS after load, its peak while encoding and after encoding (after
``malloc_trim``, as the daemon does after a burst), encode throughput with one
thread (the daemon's default on 2 cores), the median single-query latency, and
the cosine between the two runtimes' vectors. Medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def child(runtime: str, n: int, batch: int, repeat: int, out: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from embed_speed import QUERIES, rss_mib, stdlib_rows

    rss0 = rss_mib()
    t0 = time.perf_counter()
    from indexd.config import load_settings
    from indexd.enrich.embedder import load_embedder
    from indexd.enrich.texts import embed_text
    from indexd.memory import trim

    settings = load_settings(flags={"embed_model": "default", "embed_runtime": runtime,
                                    "embed_batch": batch})
    emb = load_embedder(settings)
    load_s = time.perf_counter() - t0
    rss_load = rss_mib()
    texts = [embed_text(r, "default") for r in stdlib_rows(n)]
    emb.encode(texts[:batch])   # warm-up
    secs, vectors = [], None
    peak_base = rss_mib()
    with open("/proc/self/clear_refs", "w") as fh:   # resets VmHWM to the current RSS
        fh.write("5")
    for _ in range(repeat):
        start = time.perf_counter()
        # as the daemon's vector stage calls it: 4 x embed_batch rows per call
        vectors = [v for i in range(0, len(texts), 4 * batch)
                   for v in emb.encode(texts[i:i + 4 * batch])]
        secs.append(time.perf_counter() - start)
    peak = peak_rss_mib()
    queries = []
    for _ in range(3):
        for q in QUERIES:
            start = time.perf_counter()
            emb.encode_query(q)
            queries.append(time.perf_counter() - start)
    trim()
    import numpy as np

    np.save(out, np.asarray(vectors, dtype="float32"))
    print(json.dumps({"runtime": emb.runtime, "model_id": emb.model_id, "load_s": load_s,
                      "rss_start": rss0, "rss_load": rss_load, "rss_after": rss_mib(),
                      "rss_peak": peak, "rss_before_encode": peak_base,
                      "texts": len(texts), "texts_s": len(texts) / statistics.median(secs),
                      "query_ms": statistics.median(queries) * 1000,
                      "torch_imported": "torch" in sys.modules}))


def peak_rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.texts, args.batch, args.repeat, args.out)
        return
    import numpy as np

    results, vectors = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for runtime in ("torch", "onnx"):
            out = f"{tmp}/{runtime}.npy"
            # The ONNX export (once per weights) is made before timing, so the
            # onnx row's load is what every later daemon start pays.
            if runtime == "onnx":
                subprocess.run([sys.executable, __file__, "--child", "onnx", "--texts", "4",
                                "--repeat", "1", "--out", out], check=True, capture_output=True)
            proc = subprocess.run([sys.executable, __file__, "--child", runtime, "--texts",
                                   str(args.texts), "--batch", str(args.batch), "--repeat",
                                   str(args.repeat), "--out", out],
                                  check=True, capture_output=True, text=True)
            results[runtime] = json.loads(proc.stdout.strip().splitlines()[-1])
            vectors[runtime] = np.load(out)
    cos = (vectors["torch"] * vectors["onnx"]).sum(axis=1)
    t, o = results["torch"], results["onnx"]
    print(f"{t['texts']} stdlib function texts, batch {args.batch}, 1 thread, "
          f"median of {args.repeat}; model {t['model_id']}")
    print(f"{'':24}{'torch':>10}{'onnx':>10}{'onnx/torch':>12}")
    for label, key, fmt in (("import+load (s)", "load_s", "{:.2f}"),
                            ("RSS after load (MiB)", "rss_load", "{:.0f}"),
                            ("RSS peak encoding (MiB)", "rss_peak", "{:.0f}"),
                            ("RSS after encode (MiB)", "rss_after", "{:.0f}"),
                            ("encode (texts/s)", "texts_s", "{:.1f}"),
                            ("one query (ms)", "query_ms", "{:.1f}")):
        print(f"{label:24}{fmt.format(t[key]):>10}{fmt.format(o[key]):>10}"
              f"{o[key] / t[key]:>11.2f}x")
    print(f"torch imported          {str(t['torch_imported']):>10}{str(o['torch_imported']):>10}")
    print(f"cosine onnx vs torch    min {cos.min():.6f}, median {np.median(cos):.6f}")


if __name__ == "__main__":
    main()
