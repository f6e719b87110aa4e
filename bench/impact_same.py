"""Same impact answers before and after a change to the walk, in process.

Builds the graph from an INDEXD_HOME's store (copy it first: opening a store may
write), picks deterministic random targets (modules and functions), and writes
every impact answer at depths 1-3 (all buckets, order, scores; ``took_ms``
dropped) to ``--save``; ``--compare`` checks a saved file against this tree.
``--profile`` prints cProfile's top functions over the depth-3 answers.

    INDEXD_HOME=COPY .venv/bin/python bench/impact_same.py --save before.json
    INDEXD_HOME=COPY .venv/bin/python bench/impact_same.py --compare before.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def targets(graph, n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    py = sorted((f for f in graph.facts.values() if f.lang == "python" and f.defs),
                key=lambda f: (f.repo, f.path))
    picked = rng.sample(py, min(n, len(py)))
    out = []
    for i, f in enumerate(picked):
        path = str(Path(f.repo) / f.path)
        funcs = [d.qualname for d in f.defs if d.kind in ("function", "method")]
        out.append(f"{path}::{rng.choice(funcs)}" if i % 2 and funcs else path)
    return out


def answers(graph, names: list[str]) -> tuple[dict, dict]:
    got, ms = {}, {1: [], 2: [], 3: []}
    for depth in (1, 2, 3):
        for t in names:
            t0 = time.perf_counter()
            a = graph.impact(t, depth=depth)
            ms[depth].append((time.perf_counter() - t0) * 1000)
            a.pop("took_ms", None)
            got[f"{depth} {t}"] = a
    return got, ms


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    from indexd.config import load_settings
    from indexd.graph import Graph
    from indexd.graph.loader import load_facts
    from indexd.store import Store

    graph = Graph().build(load_facts(Store(load_settings().paths.store_dir)))
    names = targets(graph, args.n)
    got, ms = answers(graph, names)
    for d, lat in ms.items():
        lat.sort()
        print(f"depth {d}: n={len(lat)} median {statistics.median(lat):.1f} ms "
              f"p95 {lat[int(0.95 * (len(lat) - 1))]:.1f} ms (in process)")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for t in names:
            graph.impact(t, depth=3)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    if args.save:
        args.save.write_text(json.dumps(got, sort_keys=True))
    if args.compare:
        before = json.loads(args.compare.read_text())
        after = json.loads(json.dumps(got, sort_keys=True))
        differ = [k for k in before if before[k] != after.get(k)]
        print(f"{len(before)} answers ({len(names)} targets x 3 depths), "
              f"{len(differ)} differ" + "".join(f"\n  {k}" for k in differ[:10]))
        return 1 if differ or before.keys() != after.keys() else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
