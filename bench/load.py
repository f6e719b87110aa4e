"""Load on the real daemon: many clients (both framings) while a burst is indexed.

Clients issue search / impact / status in a loop (half newline-delimited JSON,
half LSP framing) while a burst of new files lands in the watched repo.
Every answer must arrive without an error. Reports p50/p99 latency, the
daemon's RSS before and after, and writes the table to docs/reliability.md
between the ``load`` markers.

    .venv/bin/python bench/load.py [--clients 50] [--requests 10000] [--burst 1000]

tests/e2e/test_load.py runs the short variant through ``run_load``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from indexd.client import Client  # noqa: E402

QUERIES = ["handler", "retry backoff", "parse config", "fn_3", "load data", "Widget",
           "compute total", "missing thing", "burst", "render"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def module(i: int) -> str:
    return (f"import os\n\n\nclass Widget{i}:\n    def render(self):\n        return {i}\n\n\n"
            f"def handler_{i}(x):\n    '''Retry with backoff {i}.'''\n    return compute_total(x)\n\n\n"
            f"def compute_total(x):\n    return x + {i}\n")


def seed_repo(root: Path, n: int = 60) -> list[Path]:
    """A small repo to query: n modules importing each other."""
    from testlib import GitRepo

    repo = GitRepo(root)
    for i in range(n):
        repo.write(f"pkg/mod_{i:03d}.py", f"from pkg.mod_{(i + 1) % n:03d} import handler_{(i + 1) % n}\n"
                   + module(i))
    repo.write("pkg/__init__.py", "")
    repo.commit()
    return [root / f"pkg/mod_{i:03d}.py" for i in range(n)]


def write_burst(root: Path, n: int, done: threading.Event | None = None) -> None:
    for i in range(n):
        p = root / "burst" / f"b_{i:04d}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(module(10_000 + i).replace("Widget", "BurstWidget"))
    if done is not None:
        done.set()


def run_load(sock: Path, targets: list[str], clients: int, *, seconds: float | None = None,
             requests: int | None = None, seed: int = 0) -> dict:
    """Run ``clients`` threads until ``seconds`` pass or ``requests`` are answered in all."""
    lock = threading.Lock()
    latencies: list[float] = []
    errors: list[str] = []
    count = [0]
    stop = threading.Event()
    deadline = time.monotonic() + seconds if seconds else None

    def worker(n: int) -> None:
        rnd = random.Random(seed * 1000 + n)
        framing = "lsp" if n % 2 else "ndjson"
        with Client(sock, timeout=60, framing=framing) as c:
            while not stop.is_set():
                method = rnd.choice(("search", "search", "impact", "status"))
                if method == "search":
                    params = {"query": rnd.choice(QUERIES), "limit": 20}
                elif method == "impact":
                    params = {"target": rnd.choice(targets), "depth": 2}
                else:
                    params = {}
                t0 = time.perf_counter()
                try:
                    c.call(method, **params)
                except Exception as exc:  # noqa: BLE001 - every error counts
                    with lock:
                        errors.append(f"{method} {params}: {type(exc).__name__}: {exc}")
                    c.close()
                dt = time.perf_counter() - t0
                with lock:
                    latencies.append(dt)
                    count[0] += 1
                    if requests and count[0] >= requests:
                        stop.set()
                if deadline and time.monotonic() >= deadline:
                    stop.set()

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    lat = sorted(latencies)
    return {"requests": len(lat), "clients": clients, "errors": len(errors),
            "error_samples": errors[:5], "wall_s": round(wall, 1),
            "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
            "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1) if lat else None,
            "rps": round(len(lat) / wall, 1) if wall else None}


def hammer(sock: Path, n: int, clients: int = 4) -> int:
    """n extra status/search requests (for the RSS check); returns the error count."""
    errors = [0]

    def worker(k: int) -> None:
        with Client(sock, timeout=60, framing="lsp" if k % 2 else "ndjson") as c:
            for i in range(k, n, clients):
                try:
                    if i % 2:
                        c.call("status")
                    else:
                        c.call("search", query=QUERIES[i % len(QUERIES)], limit=20)
                except Exception:  # noqa: BLE001
                    errors[0] += 1
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--doc", default=str(HERE.parent / "docs" / "reliability.md"))
    args = ap.parse_args()

    from agreement import format_table, replace_region
    from testlib import Daemon, settings_with_realm

    home = Path(tempfile.mkdtemp(prefix="ixload"))
    os.environ["INDEXD_HOME"] = str(home)
    work = Path(tempfile.mkdtemp(prefix="ixloadrepo"))
    files = seed_repo(work / "repo")
    settings_with_realm("load", work / "repo")
    d = Daemon(home).start()
    try:
        d.call("status", sync=True, timeout=120)
        rss_before = rss_mb(d.proc.pid)
        done = threading.Event()
        burst = threading.Thread(target=write_burst, args=(work / "repo", args.burst, done))
        burst.start()
        res = run_load(d.socket, [str(p) for p in files], args.clients, requests=args.requests)
        burst.join()
        d.call("status", sync=True, timeout=300)
        extra_errors = hammer(d.socket, 2000)
        rss_after = rss_mb(d.proc.pid)
        st = d.call("status")
        indexed = st["realms"][0]["repos"][0]["files"]
    finally:
        d.stop()
    res |= {"rss_before_mb": round(rss_before, 1), "rss_after_mb": round(rss_after, 1),
            "extra_errors": extra_errors, "indexed_files": indexed}
    for k, v in res.items():
        print(f"{k:15} {v}")
    rows = [("requests", res["requests"]), ("clients (half ndjson, half LSP)", res["clients"]),
            ("burst files indexed meanwhile", args.burst), ("p50 latency ms", res["p50_ms"]),
            ("p99 latency ms", res["p99_ms"]), ("requests/s", res["rps"]),
            ("errors", res["errors"] + extra_errors),
            ("daemon RSS before MB", res["rss_before_mb"]),
            ("daemon RSS after burst + load + 2,000 status/search MB", res["rss_after_mb"])]
    body = ("```\n" + format_table(rows, ("bench/load.py", "value")) + "\n```\n"
            f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores; "
            f"files indexed at the end: {indexed}.")
    replace_region(Path(args.doc), "load", body, "# Reliability\n")
    return 0 if res["errors"] == 0 and extra_errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
