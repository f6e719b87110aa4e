"""Freshness of the running daemon on a copy of the standard library.

Measures, in one run:
  * save-to-searchable latency for a one-function edit in a large file, N times
    (keyword search for a new identifier, polled every 5 ms; no `sync`);
  * with the semantic layer, the same for semantic search (when the daemon offers it);
  * time for the index to converge after a burst of 1,000 new files;
  * idle CPU seconds of the daemon over a quiet window, and its RSS.

    .venv/bin/python bench/freshness.py [--edits 50] [--idle 60] [--corpus DIR]

Results go to docs/benchmarks.md between the freshness markers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table, replace_region, stdlib_files, stdlib_root  # noqa: E402

from indexd.client import Client  # noqa: E402

BIN = Path(sys.executable).parent


def copy_corpus(dest: Path) -> int:
    root = stdlib_root()
    n = 0
    for src in stdlib_files(root):
        target = dest / src.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(src.read_bytes())
        n += 1
    return n


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def wait_found(client: Client, query: str, symbol: str, mode: str, timeout: float = 60) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        res = client.call("search", query=query, mode=mode, limit=5)
        if any(h["symbol"] == symbol for h in res["results"]):
            return time.perf_counter() - start
        time.sleep(0.005)
    raise TimeoutError(f"{symbol} not searchable after {timeout}s")


def edit_latencies(client: Client, target: Path, edits: int, mode: str) -> list[float]:
    original = target.read_text()
    out = []
    try:
        for i in range(edits):
            name = f"freshness_probe_{mode}_{i}_zq"
            target.write_text(original + f"\n\ndef {name}(value):\n    return value\n")
            t0 = time.perf_counter()
            wait_found(client, name, name, mode)
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        target.write_text(original)
    return out


def write_burst(folder: Path, files: int) -> None:
    """``files`` new one-function modules in a new folder, as fast as possible."""
    folder.mkdir()
    for i in range(files):
        (folder / f"m{i:04d}.py").write_text(f"def burst_fn_{i}(x):\n    return x + {i}\n")


def wait_synced(client: Client, timeout: float = 300) -> None:
    """Until the daemon answers a synced status (it may still be starting)."""
    deadline = time.time() + timeout
    while True:
        try:
            client.call("status", sync=True, timeout=timeout)
            return
        except Exception:  # noqa: BLE001 - still starting
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def burst(client: Client, corpus: Path, files: int) -> float:
    t0 = time.perf_counter()
    write_burst(corpus / "burst_pkg", files)
    last = f"burst_fn_{files - 1}"
    wait_found(client, last, last, "keyword", timeout=600)
    while client.call("status")["pending"]:
        time.sleep(0.05)
    return time.perf_counter() - t0


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--embed", action="store_true",
                    help="run the daemon with the embedding model (semantic latency is then measured "
                         "while the initial embedding of the corpus runs in the background)")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="ixf"))
    corpus = args.corpus or work / "stdlib"
    if not args.corpus:
        print(f"copying {copy_corpus(corpus)} stdlib files to {corpus}", flush=True)
    env = os.environ | {"INDEXD_HOME": str(work / "home"), "HF_HUB_OFFLINE": "1",
                        "INDEXD_EMBED_MODEL": "default" if args.embed else "off"}
    (work / "home").mkdir(mode=0o700)
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "std", str(corpus)], env=env, check=True,
                   capture_output=True)
    t0 = time.perf_counter()
    # --no-embed: with --embed the point is saving while the daemon embeds the corpus.
    subprocess.run([str(BIN / "indexd"), "index", "--no-embed"], env=env, check=True,
                   capture_output=True)
    print(f"one-shot index {time.perf_counter() - t0:.1f}s", flush=True)
    log = open(work / "daemon.log", "wb")
    daemon = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=log, stderr=subprocess.STDOUT)
    sock = work / "home" / "indexd.sock"
    rows = []
    try:
        client = Client(sock, timeout=600)
        wait_synced(client)
        modes = client.call("initialize")["capabilities"]["search_modes"]
        model_deadline = time.time() + 300
        while args.embed and "semantic" not in modes and time.time() < model_deadline:
            time.sleep(0.2)   # the model loads (and is exported once) in the background
            modes = client.call("initialize")["capabilities"]["search_modes"]
        if args.embed and "semantic" not in modes:
            print("warning: the model never became ready; no semantic row", flush=True)
        target = corpus / "typing.py"
        kw = edit_latencies(client, target, args.edits, "keyword")
        rows.append(("save → keyword-searchable (ms)", len(kw), f"{statistics.median(kw):.0f}",
                     f"{pct(kw, 95):.0f}", f"{max(kw):.0f}"))
        if "semantic" in modes:
            sem = edit_latencies(client, target, max(5, args.edits // 5), "semantic")
            rows.append(("save → semantic-searchable (ms)", len(sem), f"{statistics.median(sem):.0f}",
                         f"{pct(sem, 95):.0f}", f"{max(sem):.0f}"))
        client.call("status", sync=True, timeout=300)
        converge = burst(client, corpus, args.burst)
        rows.append((f"{args.burst}-file burst → converged (s)", 1, f"{converge:.1f}", "", ""))
        client.call("status", sync=True, timeout=300)
        time.sleep(3)
        cpu0 = proc_cpu_s(daemon.pid)
        time.sleep(args.idle)
        idle = proc_cpu_s(daemon.pid) - cpu0
        label = "CPU while embedding the corpus" if args.embed else "idle CPU"
        rows.append((f"{label} over {args.idle:.0f}s (s)", 1, f"{idle:.2f}", "", ""))
        rows.append(("daemon RSS (MB)", 1, f"{proc_rss_mb(daemon.pid):.0f}", "", ""))
        client.call("shutdown")
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        log.close()
    table = format_table(rows, ("measure", "n", "median", "p95", "max"))
    print(table)
    if not args.no_doc:
        body = (f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
                f"{time.strftime('%Y-%m-%d')}. Corpus: stdlib copy. Edits to `typing.py`. "
                f"Embedding model: {'all-MiniLM-L6-v2 through the default runtime (onnx), the initial embedding of the corpus running in the background' if args.embed else 'off'}.\n\n"
                f"```\n{table}\n```\n\nReproduce: `.venv/bin/python bench/freshness.py"
                f"{' --embed' if args.embed else ''}`\n")
        region = "freshness-embed" if args.embed else "freshness"
        replace_region(HERE.parent / "docs" / "benchmarks.md", region, body,
                       "## Freshness (bench/freshness.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
