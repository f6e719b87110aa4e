"""Resident memory of the warm relationship graph on an existing index.

Opens the store of ``INDEXD_HOME`` (index it first; the stdlib copy of
bench/freshness.py is the reference corpus), then in a fresh subprocess per
run measures RSS (after ``malloc_trim``) before and after
``Relations.build()`` and prints files, edges, build seconds and the RSS the
graph holds. ``--top N`` also lists tracemalloc's top allocation sites of the
built graph (slower: tracing doubles the build time). ``--digest`` prints a
hash of every edge and of a few query answers, to compare two checkouts.
Each run also times the restart path that replaces the build: the graph's
snapshot written and read back, the store's facts read and compared.

    INDEXD_HOME=/tmp/gm_home .venv/bin/python bench/graph_memory.py [--runs 3] [--top 15] [--digest]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _child(top: int, digest: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    import gc
    import time
    import tracemalloc

    from indexd.config import load_settings
    from indexd.memory import rss_bytes, trim
    from indexd.relations import Relations
    from indexd.store import Store

    settings = load_settings()
    store = Store(settings.paths.store_dir)
    store.file_records()            # warm the store's own caches outside the measurement
    gc.collect()
    trim()
    if top:
        tracemalloc.start(1)
    before = rss_bytes()
    t0 = time.perf_counter()
    rel = Relations(store, lambda: settings)
    # the build itself, as before the snapshot: none read, none written (timed below)
    rel._from_snapshot = lambda: (None, None, 0)
    rel._save_snapshot = lambda graph, build_s: None
    rel.build()
    took = time.perf_counter() - t0
    gc.collect()
    trim()
    after = rss_bytes()
    graph = rel.graph
    out = {"files": len(graph.facts), "edges": len(graph.edges()), "build_s": round(took, 2),
           "rss_mb": round((after - before) / 1e6, 1), "rss_total_mb": round(after / 1e6, 1)}
    if top:
        snap = tracemalloc.take_snapshot()
        out["top"] = [(f"{s.traceback[0].filename.rsplit('/', 2)[-1]}:{s.traceback[0].lineno}",
                       round(s.size / 1e6, 1), s.count) for s in snap.statistics("lineno")[:top]]
        out["traced_mb"] = round(sum(s.size for s in snap.statistics("filename")) / 1e6, 1)
    if digest:
        out["digest"] = _digest(graph)
    out |= _snapshot_times(graph, store, digest)
    return out


def _snapshot_times(graph, store, digest: bool) -> dict:
    """What a restart pays instead of the build (graph/snapshot.py): writing the
    snapshot, reading it back, reading the store's facts and comparing them."""
    import tempfile
    import time

    from indexd.graph import snapshot
    from indexd.graph.loader import load_facts

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        snapshot.save(graph, Path(tmp), 0.0)
        t1 = time.perf_counter()
        back, _ = snapshot.load(Path(tmp))
        t2 = time.perf_counter()
        facts = load_facts(store)
        t3 = time.perf_counter()
        changed = snapshot.changed_keys(back, facts)
        t4 = time.perf_counter()
        size = (Path(tmp) / snapshot.NAME).stat().st_size
    out = {"snap_write_s": round(t1 - t0, 2), "snap_read_s": round(t2 - t1, 2),
           "facts_s": round(t3 - t2, 2), "compare_s": round(t4 - t3, 2),
           "snap_mb": round(size / 1e6, 1), "snap_changed": len(changed)}
    if digest:
        same = {k: v for k, v in _digest(back).items() if k != "per_target"} == \
            {k: v for k, v in _digest(graph).items() if k != "per_target"}
        out["snap_same_digest"] = same
    return out


def _digest(graph) -> dict:
    """Hashes of the edge set and of impact/deps/refs/related/broken_links/export answers."""
    import hashlib
    import random

    def h(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def strip(res: dict) -> dict:
        return {k: v for k, v in res.items() if k != "took_ms"}

    keys = sorted(graph.facts)
    rnd = random.Random(7)
    files = rnd.sample(keys, 20)
    syms = [(k, d.qualname) for k in rnd.sample(keys, 60) for d in graph.facts[k].defs[:1]][:20]
    targets = [f"{k[1]}/{k[2]}" for k in files] + [f"{k[1]}/{k[2]}::{q}" for k, q in syms]
    answers = {}
    for t in targets:
        answers[t] = {"impact": strip(graph.impact(t, depth=2)), "deps": strip(graph.deps(t, depth=2)),
                      "refs": graph.refs(t)}
    for k in files:
        answers[f"related {k}"] = graph.related(f"{k[1]}/{k[2]}")
    return {"edges": h(sorted(map(tuple, graph.edges()), key=repr)),
            "answers": h(answers), "per_target": {t: h(a) for t, a in answers.items()},
            "broken_links": h(graph.broken_links()),
            "export": h(graph.export("json", scope=keys[0][2].split("/")[0]))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1, help="fresh processes (median reported)")
    ap.add_argument("--top", type=int, default=0, help="tracemalloc top N allocation sites")
    ap.add_argument("--digest", action="store_true", help="hash edges and query answers")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.top, args.digest)))
        return 0
    runs = []
    for i in range(args.runs):
        cmd = [sys.executable, __file__, "--child"]
        if args.top and i == 0:
            cmd += ["--top", str(args.top)]
        if args.digest and i == 0:
            cmd += ["--digest"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
        if done.returncode:
            sys.stderr.write(done.stderr)
            return done.returncode
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    # tracing inflates time and memory: report the untraced runs when there are any
    plain = [r for r in runs if "top" not in r] or runs
    print(f"{'files':>6} {'edges':>8} {'build s':>8} {'graph RSS MB':>13} {'process RSS MB':>15}")
    print(f"{plain[0]['files']:>6} {plain[0]['edges']:>8} "
          f"{statistics.median(r['build_s'] for r in plain):>8.2f} "
          f"{statistics.median(r['rss_mb'] for r in plain):>13.1f} "
          f"{statistics.median(r['rss_total_mb'] for r in plain):>15.1f}")
    med = lambda k: statistics.median(r[k] for r in plain)   # noqa: E731
    print(f"\nrestart from the snapshot instead (graph/snapshot.py), median: write "
          f"{med('snap_write_s'):.2f} s ({plain[0]['snap_mb']} MB), read {med('snap_read_s'):.2f} s, "
          f"store facts {med('facts_s'):.2f} s, compare {med('compare_s'):.2f} s "
          f"({plain[0]['snap_changed']} files differ): "
          f"{med('snap_read_s') + med('facts_s') + med('compare_s'):.2f} s against the build's "
          f"{med('build_s'):.2f} s" + (f"; same digest: {runs[0]['snap_same_digest']}"
                                       if "snap_same_digest" in runs[0] else ""))
    first = runs[0]
    if "top" in first:
        print(f"\ntracemalloc: {first['traced_mb']} MB traced; top sites (MB, blocks):")
        for site, mb, count in first["top"]:
            print(f"  {mb:>7.1f} {count:>9}  {site}")
    if "digest" in first:
        d = first["digest"]
        print("\ndigest: " + json.dumps({k: v for k, v in d.items() if k != "per_target"}))
        Path(os.environ.get("GM_DIGEST_OUT", "/tmp/graph_memory_digest.json")).write_text(
            json.dumps(d, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
