"""Search latency over the socket, per mode, next to ripgrep on the same files.

Uses an indexed and embedded ``--home`` (an INDEXD_HOME whose realm is a
stdlib copy, e.g. the one ``bench/search_quality.py --keep`` leaves), or
builds one: copies the stdlib (as bench/freshness.py does), ``indexd index``
(which embeds: tens of minutes on 2 cores). Starts ``indexd run``, waits until
nothing is pending and the hot keyword index is built, then asks every query
of bench/queries/stdlib.json per mode (after a warm-up on the click set; "new query" rows embed a text the daemon has not seen, "repeated" ones hit its query cache; "--path" rows scope each query to its target's top folder, as an editor scoping search to a package does) and times
the socket round trip. ripgrep runs each query's words (3+ characters,
``-i -w -F -c``) over the same corpus, one process per query, as a user
would. Prints p50/p95 per mode and the ratio to ripgrep's p50, and writes the
table into docs/benchmarks.md (region ``search_latency``).

    .venv/bin/python bench/search_latency.py [--home HOME] [--corpus DIR] [--no-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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
MODES = ("keyword", "semantic", "hybrid")


def setup_home(args, work: Path) -> tuple[Path, Path]:
    if args.home:
        env = os.environ | {"INDEXD_HOME": str(args.home)}
        out = subprocess.run([str(BIN / "indexctl"), "realm", "list", "--json"], env=env,
                             capture_output=True, text=True, check=True)
        realms = {r["name"]: r["repos"] for r in json.loads(out.stdout)["realms"]}
        if args.realm not in realms:
            raise SystemExit(f"no realm {args.realm!r} in {args.home}: {', '.join(realms)}")
        return args.home, Path(realms[args.realm][0])
    corpus = args.corpus or work / "stdlib"
    if not corpus.exists() or not any(corpus.iterdir()):
        print(f"copying {copy_corpus(corpus)} stdlib files", flush=True)
    home = work / "home"
    home.mkdir(mode=0o700)
    env = os.environ | {"INDEXD_HOME": str(home)}
    subprocess.run([str(BIN / "indexctl"), "realm", "add", args.realm, str(corpus)], env=env, check=True,
                   capture_output=True)
    print("indexing and embedding (indexd index) ...", flush=True)
    subprocess.run([str(BIN / "indexd"), "index"], env=env, check=True)
    return home, corpus


def wait_ready(client: Client) -> dict:
    while True:
        try:
            st = client.call("status", sync=True, timeout=300)
            if st["keyword_index"]["hot"] and not st["queues"]["embed"] and st["embedding"]["ready"]:
                return st
        except Exception:  # noqa: BLE001 - still starting
            pass
        time.sleep(0.5)


def timed(client: Client, **params) -> float:
    t0 = time.perf_counter()
    client.call("search", **params)
    return (time.perf_counter() - t0) * 1000


def rg_words(query: str) -> list[str]:
    return sorted({w.lower() for w in re.findall(r"[A-Za-z0-9_]+", query) if len(w) >= 3})


def rg_time(corpus: Path, query: str) -> float | None:
    words = rg_words(query)
    if not words:
        return None
    cmd = ["rg", "-i", "-w", "-F", "-c", "--type", "py"] + [a for w in words for a in ("-e", w)]
    t0 = time.perf_counter()
    subprocess.run(cmd + [str(corpus)], capture_output=True)
    return (time.perf_counter() - t0) * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--realm", default="std", help="with --home: the realm holding the stdlib copy")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args(argv)
    spec = json.loads((HERE / "queries" / "stdlib.json").read_text())["queries"]
    queries = [q["query"] for q in spec]
    # an editor scoping search to the package it is in: the target's top folder or file
    scope = {q["query"]: q["expected"][0]["path"].split("/")[0] for q in spec}
    work = Path(tempfile.mkdtemp(prefix="ixsl"))
    home, corpus = setup_home(args, work)
    env = os.environ | {"INDEXD_HOME": str(home)}
    log = open(work / "daemon.log", "wb")
    daemon = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=log, stderr=subprocess.STDOUT)
    rows = []
    try:
        client = Client(home / "indexd.sock", timeout=600)
        st = wait_ready(client)
        # Warm-up on other texts (model, page cache), so that every measured
        # "new query" really embeds: the daemon caches recent query vectors.
        warm = [q["query"] for q in json.loads((HERE / "queries" / "click.json").read_text())["queries"]]
        for q in warm:
            client.call("search", query=q, mode="hybrid", limit=10, realm=args.realm)
        # The model is uncased: upper case embeds the same, under another cache key.
        none = {}
        passes = [("keyword", "keyword", lambda q: q, none),
                  ("semantic, new query", "semantic", str.upper, none),
                  ("hybrid, new query", "hybrid", lambda q: q, none),
                  ("hybrid, repeated query", "hybrid", lambda q: q, none),
                  ("keyword, --path its package", "keyword", lambda q: q, scope),
                  ("hybrid, new query, --path its package", "hybrid", str.title, scope)]
        for label, mode, text, paths in passes:
            lat = [timed(client, query=text(q), mode=mode, limit=10, realm=args.realm,
                         **({"path": paths[q]} if q in paths else {}))
                   for q in queries]
            rows.append([f"indexd {label} (socket)", len(lat), f"{statistics.median(lat):.1f}",
                         f"{pct(lat, 95):.1f}"])
        client.call("shutdown")
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        log.close()
    if shutil.which("rg"):
        lat = [t for t in (rg_time(corpus, q) for q in queries) if t is not None]
        rg50 = statistics.median(lat)
        rows.append(["ripgrep (one process per query)", len(lat), f"{rg50:.1f}", f"{pct(lat, 95):.1f}"])
        for row in rows[:-1]:
            row.append(f"{float(row[2]) / rg50:.2f}x")
        rows[-1].append("1.00x")
    shutil.rmtree(work, ignore_errors=True)   # the daemon's log, and a corpus and home it built
    table = format_table([tuple(r) for r in rows],
                         ("search, top 10", "queries", "p50 ms", "p95 ms", "p50 vs rg"))
    entries = sum(r.get("entries", 0) for realm in st["realms"] if realm["name"] == args.realm
                  for r in realm["repos"])
    facts = (f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} "
             f"at the end; corpus {corpus.name} ({entries} entries), "
             f"{len(queries)} queries of bench/queries/stdlib.json; keyword index: "
             f"{st['keyword_index']['answers_from']}")
    print(table)
    print(facts)
    if not args.no_doc:
        body = (f"{facts}.\n\n```\n{table}\n```\n\n"
                "Reproduce: `.venv/bin/python bench/search_latency.py [--home HOME]`\n")
        replace_region(HERE.parent / "docs" / "benchmarks.md", "search_latency", body,
                       "## Search latency (bench/search_latency.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
