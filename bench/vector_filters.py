"""The daemon's hot vector index at scale: search time per filter (issue 16 part 3).

Random unit vectors (MiniLM's 384 dimensions) for ``--entries`` rows spread
over 200 repos, then ``--rounds`` searches per filter set; prints the median
ms. Compare two versions of the code by running it under each (``PYTHONPATH``
on an export of the older commit):

    .venv/bin/python bench/vector_filters.py [--entries 270000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexd.store.vector_index import VectorIndex  # noqa: E402

FILTERS = (("none", {}), ("realm", {"realm": ["work"]}),
           ("realm + kind", {"realm": ["work"], "kind": ["function", "method"]}),
           ("repo", {"repo|repo_name": ["r17"]}))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=270_000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    mat = rng.standard_normal((args.entries, 384)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    index = VectorIndex(384)
    index.build([])
    index.set_vectors([{"id": f"e{i}", "file_key": f"f{i // 30}", "realm": "work",
                        "repo": f"/src/r{i % 200}", "repo_name": f"r{i % 200}",
                        "kind": ("function", "method", "class")[i % 3], "lang": "python",
                        "vector": mat[i]} for i in range(args.entries)])
    print(f"{'filter':14} {'median ms':>9}  ({args.entries} entries, {args.rounds} searches, top 100)")
    for label, filters in FILTERS:
        times = []
        for r in range(args.rounds):
            started = time.perf_counter()
            index.search(mat[r], filters, 100, 0.2)
            times.append((time.perf_counter() - started) * 1000)
        print(f"{label:14} {statistics.median(times):9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
