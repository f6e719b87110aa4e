"""What the bounded impact walk gives up: its top results against the exhaustive walk's.

Opens the store of ``INDEXD_HOME`` (index the stdlib copy of bench/freshness.py
first, as bench/graph_memory.py does), builds the graph in this process and, for
N random modules (seed 7) at depth 3, compares ``impact`` at the default limit
(walk bounded by its edge budget) with ``limit=None`` (walks everything): how many
answers were cut, and for those the share of the exhaustive top 20 / top 200 of
``affected`` and ``tests`` that the bounded answer also lists in its top 20 / 200.
Also the CPU ms of the bounded answers, per edge budget given.

    INDEXD_HOME=/tmp/home .venv/bin/python bench/impact_bounded.py [--n 100] [--budgets 5000,10000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table  # noqa: E402
from freshness import pct  # noqa: E402


def overlap(bounded: list[dict], full: list[dict], n: int) -> float | None:
    want = [(i["path"], i["symbol"]) for i in full[:n]]
    if not want:
        return None
    got = {(i["path"], i["symbol"]) for i in bounded[:n]}
    return sum(k in got for k in want) / len(want)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--budgets", default="", help="edge budgets to try (default: the graph's)")
    args = ap.parse_args(argv)

    from indexd.config import load_settings
    from indexd.graph.graph import Graph
    from indexd.relations import Relations
    from indexd.store import Store

    settings = load_settings()
    rel = Relations(Store(settings.paths.store_dir), lambda: settings)
    rel.build()
    graph = rel.graph
    py = sorted(f"{k[1].rstrip('/')}/{k[2]}" for k in graph.facts if k[2].endswith(".py"))
    targets = random.Random(7).sample(py, min(args.n, len(py)))
    full = {t: graph.impact(t, depth=3, limit=None) for t in targets}
    default = Graph.walk_min_edges
    rows = []
    for budget in [int(b) for b in args.budgets.split(",") if b] or [default]:
        graph.walk_min_edges, graph.walk_edges_per_item = budget, budget // 200
        cpu, shares = [], {k: [] for k in ("affected 20", "affected 200", "tests 20", "tests 200")}
        for t in targets:
            t0 = time.process_time()
            res = graph.impact(t, depth=3)
            cpu.append((time.process_time() - t0) * 1000)
            if res["walk"]["exhaustive"]:
                continue
            for key in shares:
                bucket, n = key.split()
                share = overlap(res[bucket], full[t][bucket], int(n))
                if share is not None:
                    shares[key].append(share)
        cut = len(shares["affected 200"])
        rows.append((budget, f"{cut}/{len(targets)}", f"{statistics.median(cpu):.1f}",
                     f"{pct(cpu, 95):.1f}", f"{max(cpu):.0f}",
                     *(f"{statistics.mean(v):.2f}" if v else "-" for v in shares.values())))
    print(format_table(rows, ("edge budget", "cut", "cpu ms median", "p95", "max",
                              *(f"top {k}" for k in shares))))
    print(f"depth 3, {len(targets)} modules (seed 7), {len(graph.facts)} files; top N: the share of "
          "the exhaustive walk's top N the bounded answer lists in its top N (cut answers only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
