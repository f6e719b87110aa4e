"""Resident memory of the running daemon on a copy of the standard library.

    .venv/bin/python bench/daemon_memory.py [--window 180] [--configs off,onnx,torch]

For each configuration, in one run on the same machine: a fresh INDEXD_HOME,
a one-shot ``indexd index`` of the stdlib copy, then ``indexd run``; once the
daemon has synced (warm graph built, model loaded), its RSS and PSS
(/proc/PID/smaps_rollup, so shared pages count once) are sampled every 0.5 s
for ``--window`` seconds while it embeds the stdlib's ~72k entries in the
background (the daemon's worst steady state: the model is running and the
graph is warm). Then 1,000 files are added at once and the peak while they
are indexed is recorded. Configurations:

  off    embed_model = off (keyword search only: the floor)
  onnx   default model, embed_runtime = onnx (the default)
  torch  default model, embed_runtime = torch (sentence-transformers)

Results go to docs/benchmarks.md between the memory markers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table, replace_region  # noqa: E402
from freshness import BIN, copy_corpus, wait_synced, write_burst  # noqa: E402

from indexd.client import Client  # noqa: E402

CONFIGS = {"off": {"INDEXD_EMBED_MODEL": "off"},
           "onnx": {"INDEXD_EMBED_MODEL": "default", "INDEXD_EMBED_RUNTIME": "onnx"},
           "torch": {"INDEXD_EMBED_MODEL": "default", "INDEXD_EMBED_RUNTIME": "torch"}}


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MB."""
    rss = pss = 0.0
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
    return rss, pss


def peak_mb(pid: int) -> float:
    """VmHWM: the highest RSS since the process started (start-up included)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Sampler:
    def __init__(self, pid: int):
        self.pid, self.samples, self._stop = pid, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append(memory_mb(self.pid))
            except OSError:
                return
            self._stop.wait(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_config(name: str, corpus: Path, work: Path, window: float, burst_files: int) -> dict:
    home = work / f"home-{name}"
    home.mkdir(mode=0o700)
    env = os.environ | {"INDEXD_HOME": str(home), "HF_HUB_OFFLINE": "1"} | CONFIGS[name]
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "std", str(corpus)], env=env,
                   check=True, capture_output=True)
    # --no-embed: the point is the daemon embedding in the background.
    subprocess.run([str(BIN / "indexd"), "index", "--no-embed"], env=env, check=True,
                   capture_output=True)
    log = open(work / f"daemon-{name}.log", "wb")
    t0 = time.perf_counter()
    daemon = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        client = Client(home / "indexd.sock", timeout=900)
        wait_synced(client, timeout=900)
        if name != "off":   # the model loads in the background: wait for it
            while "semantic" not in client.call("initialize")["capabilities"]["search_modes"]:
                time.sleep(0.2)
        ready_s = time.perf_counter() - t0
        at_ready = memory_mb(daemon.pid)
        embedded0 = client.call("status")["embedding"]["embedded"]
        with Sampler(daemon.pid) as steady:
            time.sleep(window)
        embedded = client.call("status")["embedding"]["embedded"] - embedded0
        with Sampler(daemon.pid) as during_burst:
            write_burst(corpus / f"burst_{name}", burst_files)
            time.sleep(1)
            wait_synced(client)
        status = client.call("status")
        lifetime_peak = peak_mb(daemon.pid)
        client.call("shutdown")
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        log.close()
    rss = [s[0] for s in steady.samples]
    pss = [s[1] for s in steady.samples]
    return {"ready_s": ready_s, "ready_rss": at_ready[0], "rss_median": statistics.median(rss),
            "rss_max": max(rss), "pss_median": statistics.median(pss),
            "burst_max": max(s[0] for s in during_burst.samples), "lifetime_peak": lifetime_peak,
            "embed_per_s": embedded / window, "runtime": status["embedding"].get("runtime", ""),
            "entries": sum(r["entries"] for realm in status["realms"] for r in realm["repos"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--window", type=float, default=180.0)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--configs", default="off,onnx,torch")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="ixm"))
    corpus = work / "stdlib"
    print(f"copying {copy_corpus(corpus)} stdlib files to {corpus}", flush=True)
    rows = []
    for name in args.configs.split(","):
        r = run_config(name, corpus, work, args.window, args.burst)
        print(name, r, flush=True)
        rows.append((name, f"{r['ready_s']:.0f}", f"{r['ready_rss']:.0f}", f"{r['rss_median']:.0f}",
                     f"{r['rss_max']:.0f}", f"{r['pss_median']:.0f}", f"{r['burst_max']:.0f}",
                     f"{r['lifetime_peak']:.0f}", f"{r['embed_per_s']:.1f}"))
    table = format_table(rows, ("config", "ready (s)", "RSS ready", "RSS median",
                                "RSS max", "PSS median", f"RSS max, {args.burst}-file burst",
                                "RSS peak, whole run", "embedded/s"))
    print(table)
    if not args.no_doc:
        body = (f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
                f"{time.strftime('%Y-%m-%d')}. Corpus: stdlib copy (one-shot indexed first). MB; "
                f"median/max over {args.window:.0f} s of 0.5 s samples after the daemon is ready "
                f"(synced, graph warm, model loaded) while it embeds the corpus in the "
                f"background; then the peak while {args.burst} new files are indexed; and the "
                f"kernel's high-water mark (VmHWM) over the daemon's whole run, start-up "
                f"included.\n\n"
                f"```\n{table}\n```\n\nReproduce: `.venv/bin/python bench/daemon_memory.py`\n")
        replace_region(HERE.parent / "docs" / "benchmarks.md", "memory", body,
                       "## Daemon memory (bench/daemon_memory.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
