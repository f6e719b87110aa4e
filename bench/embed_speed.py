"""Cost of the default embedding model on this machine (prints; writes nothing).

    .venv/bin/python bench/embed_speed.py [--texts 300] [--batch 32] [--repeat 2]

Reports: import time of torch + sentence_transformers, model load time
(including the weights hash for model_id), RSS after load from
/proc/self/statm, encode throughput for real stdlib function texts built by
``indexd.enrich.texts.embed_text`` with 1 and 2 torch threads, and
single-query latency with 1 and 2 threads, alone and while another thread
encodes batches (the daemon indexing while a search comes in). Best of
``--repeat`` runs, since the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import sysconfig
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUERIES = ["parse a url into its components", "read chunked http response",
           "start a thread pool", "compare two json documents", "open a gzip file"]


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def stdlib_rows(limit: int) -> list[dict]:
    """Function rows shaped like indexd.store.rows entry rows, from the stdlib."""
    root = Path(sysconfig.get_paths()["stdlib"])
    rows: list[dict] = []
    for path in sorted(root.glob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError):
            continue
        lines = source.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = "\n".join(lines[node.lineno - 1:node.end_lineno])[:2000]
                rows.append({"kind": "function", "name": node.name, "qualname": node.name,
                             "signature": lines[node.lineno - 1].strip().rstrip(":"),
                             "doc": ast.get_docstring(node) or "", "body": body,
                             "path": path.name, "lang": "python", "summary": ""})
                if len(rows) >= limit:
                    return rows
    return rows


def best_of(repeat: int, fn) -> float:
    return min(_timed(fn) for _ in range(repeat))


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def query_latency_ms(embedder, rounds: int = 5) -> float:
    embedder.encode_query("warm up")
    times = [_timed(lambda q=q: embedder.encode_query(q)) for _ in range(rounds) for q in QUERIES]
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    rss0 = rss_mib()
    t0 = time.perf_counter()
    import sentence_transformers  # noqa: F401
    import torch
    t_import = time.perf_counter() - t0

    from indexd.enrich.embedder import SentenceTransformerEmbedder, default_model_path
    from indexd.enrich.texts import embed_text

    t0 = time.perf_counter()
    emb = SentenceTransformerEmbedder(default_model_path(), threads=1, batch_size=args.batch,
                                      name="all-MiniLM-L6-v2")
    t_load = time.perf_counter() - t0
    rss_load = rss_mib()

    texts = [embed_text(r, "default") for r in stdlib_rows(args.texts)]
    chars = statistics.mean(len(t) for t in texts)
    print(f"model_id        {emb.model_id} (max_tokens {emb.max_tokens})")
    print(f"import          {t_import:.2f} s (torch + sentence_transformers)")
    print(f"load            {t_load:.2f} s (includes weights hash)")
    print(f"rss             {rss0:.0f} MiB at start, {rss_load:.0f} MiB after load")
    print(f"texts           {len(texts)} stdlib functions, mean {chars:.0f} chars, "
          f"batch {args.batch}")
    emb.encode(texts[:args.batch])  # warm-up: first call allocates
    for threads in (1, 2):
        torch.set_num_threads(threads)
        secs = best_of(args.repeat, lambda: emb.encode(texts))
        q_ms = query_latency_ms(emb)
        print(f"threads={threads}       {len(texts) / secs:6.1f} texts/s "
              f"({secs:.2f} s), single query median {q_ms:.1f} ms")
    torch.set_num_threads(1)
    print(f"during indexing single query median {query_during_encode_ms(emb, texts):.1f} ms "
          f"(threads=1, another thread encoding batches of {args.batch})")
    print(f"rss             {rss_mib():.0f} MiB after encoding")


def query_during_encode_ms(embedder, texts: list[str]) -> float:
    """Query latency while an indexing thread encodes: queries wait for <= one batch."""
    import threading

    stop = threading.Event()

    def index():
        while not stop.is_set():
            embedder.encode(texts[:embedder.batch_size * 2])

    worker = threading.Thread(target=index, daemon=True)
    worker.start()
    times = []
    try:
        for i in range(12):
            # Spaced out like real searches, so they land at random points of
            # a batch rather than right behind the previous query.
            time.sleep(0.25 + 0.1 * (i % 3))
            times.append(_timed(lambda q=QUERIES[i % len(QUERIES)]: embedder.encode_query(q)))
        return statistics.median(times) * 1000
    finally:
        stop.set()
        worker.join()


if __name__ == "__main__":
    main()
