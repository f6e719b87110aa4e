"""Latency of `impact` and `refs` over the socket on a stdlib index.

Copies the standard library, indexes it, starts the daemon (keyword only: the
graph does not need the model), waits for the graph, then times N requests of
each kind against deterministic random targets.

    .venv/bin/python bench/impact_latency.py [--n 200] [--corpus DIR] [--no-doc]
    .venv/bin/python bench/impact_latency.py --home HOME --corpus DIR --no-doc

--home: an INDEXD_HOME that has already indexed DIR (copy it first: the daemon
runs on it and may write there); no copy, no indexing, just the requests.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table, replace_region  # noqa: E402
from freshness import copy_corpus, pct  # noqa: E402

from indexd.client import Client  # noqa: E402

BIN = Path(sys.executable).parent


def timed(client: Client, method: str, **params) -> float:
    t0 = time.perf_counter()
    client.call(method, **params)
    return (time.perf_counter() - t0) * 1000


def _load(avg) -> str:
    return " / ".join(f"{x:.2f}" for x in avg)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--home", type=Path, help="an INDEXD_HOME that already indexed --corpus")
    args = ap.parse_args(argv)
    if args.home and not args.corpus:
        ap.error("--home needs --corpus (the folder that home indexed)")

    work = Path(tempfile.mkdtemp(prefix="ixi"))
    corpus = args.corpus or work / "stdlib"
    if not corpus.exists() or not any(corpus.iterdir()):
        print(f"copying {copy_corpus(corpus)} stdlib files", flush=True)
    home = args.home or work / "home"
    env = os.environ | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "off", "INDEXD_SUMMARIZE": "off"}
    if not args.home:
        home.mkdir(mode=0o700)
        subprocess.run([str(BIN / "indexctl"), "realm", "add", "std", str(corpus)], env=env,
                       check=True, capture_output=True)
        subprocess.run([str(BIN / "indexd"), "index"], env=env, check=True, capture_output=True)
    load_before = os.getloadavg()   # 2 shared cores: the numbers move with the load
    log = open(work / "daemon.log", "wb")
    daemon = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        client = Client(home / "indexd.sock", timeout=600)
        t0 = time.perf_counter()
        while True:
            try:
                st = client.call("status", sync=True, timeout=300)
                if st["graph"]["ready"]:
                    break
            except Exception:  # noqa: BLE001 - still starting
                pass
            time.sleep(0.2)
        ready_s = time.perf_counter() - t0
        graph = st["graph"]
        py = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.py"))
        rng = random.Random(7)
        files = [str(corpus / p) for p in rng.sample(py, min(args.n, len(py)))]
        rows = []
        for depth in (1, 2, 3):
            lat = [timed(client, "impact", target=f, depth=depth) for f in files]
            rows.append((f"impact depth {depth}", len(lat), f"{statistics.median(lat):.1f}",
                         f"{pct(lat, 95):.1f}", f"{max(lat):.0f}"))
        # the rows above ask each target at depth 1, 2, then 3, so depth 3 reuses the edge
        # lists the shallower answers built (graph/edge_cache.py): modules never asked
        # before show a first answer's cost
        others = [str(corpus / p) for p in rng.sample(sorted(set(py) - {
            Path(f).relative_to(corpus).as_posix() for f in files}), min(args.n, len(py) - len(files)))]
        lat = [timed(client, "impact", target=f, depth=3) for f in others]
        rows.append(("impact depth 3, new targets", len(lat), f"{statistics.median(lat):.1f}",
                     f"{pct(lat, 95):.1f}", f"{max(lat):.0f}"))
        symbols = []
        for f in files:
            outline = client.call("symbols", path=f)["results"]
            funcs = [h["symbol"] for h in outline if h["kind"] == "function"]
            if funcs:
                symbols.append(f"{f}::{rng.choice(funcs)}")
        lat = [timed(client, "refs", target=t) for t in symbols]
        rows.append(("refs (one function)", len(lat), f"{statistics.median(lat):.1f}",
                     f"{pct(lat, 95):.1f}", f"{max(lat):.0f}"))
        lat = [timed(client, "status") for _ in range(50)]
        rows.append(("status (reference)", len(lat), f"{statistics.median(lat):.1f}",
                     f"{pct(lat, 95):.1f}", f"{max(lat):.0f}"))
        client.call("shutdown")
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        log.close()
    load = f"load average (1/5/15 min) {_load(load_before)} before, {_load(os.getloadavg())} after"
    table = format_table(rows, ("request (socket round trip, ms)", "n", "median", "p95", "max"))
    print(table)
    print(load)
    print(f"graph: {graph['edges']} edges, built in {graph['build_s']} s; daemon ready in {ready_s:.1f} s")
    if not args.no_doc:
        body = (f"Machine: {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}. Corpus: stdlib copy "
                f"({len(py)} .py files); graph {graph['edges']} edges built in {graph['build_s']} s. "
                f"Targets: {len(files)} random modules (seed 7); {load}.\n\n```\n{table}\n```\n\n"
                f"Reproduce: `.venv/bin/python bench/impact_latency.py"
                + (f" --home COPY_OF_HOME --corpus DIR --n {args.n}" if args.home else "") + "`\n")
        replace_region(HERE.parent / "docs" / "benchmarks.md", "impact_latency", body,
                       "## Impact latency (bench/impact_latency.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
