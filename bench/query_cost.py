"""CPU cost of each pattern of a language's tree-sitter query, run alone.

Parses a fixed sample of the stdlib once (every Nth file of bench/agreement.py's
sorted list), keeps the trees, then for each pattern of ``<lang>.scm`` +
``<lang>.refs.scm`` builds a query of that pattern alone and times, in thread
CPU seconds, ``QueryCursor.matches`` over every tree (the C matching, the
predicates and the match objects) and ``code._collect`` over its matches (the
Python that reads them). Also the whole query, as indexd runs it.

    .venv/bin/python bench/query_cost.py [--every 6] [--top 25] [--reps 3] [--whole] [--leave-one-out]

Times are the minimum of ``--reps`` runs (the machine is shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement import stdlib_files, stdlib_root  # noqa: E402

from indexd.parse import code  # noqa: E402
from indexd.parse.languages import grammar  # noqa: E402
from indexd.parse.limits import NO_DEADLINE  # noqa: E402


def sample_trees(every: int) -> list[tuple[bytes, object]]:
    import tree_sitter

    parser = tree_sitter.Parser(grammar("python"))
    out = []
    for path in stdlib_files(stdlib_root())[::every]:
        data = path.read_bytes().decode("utf-8", "replace").encode("utf-8", "surrogatepass")
        out.append((data, parser.parse(data)))
    return out


def cost(query, trees, reps: int, ref_kinds=()) -> tuple[float, float, int]:
    """(matches s, collect s, number of matches), the minimum over reps."""
    import tree_sitter

    best_m = best_c = float("inf")
    count = 0
    for _ in range(reps):
        m = c = 0.0
        count = 0
        for data, tree in trees:
            cursor = tree_sitter.QueryCursor(query)
            t0 = time.thread_time()
            matches = cursor.matches(tree.root_node)
            t1 = time.thread_time()
            code._collect(matches, data, NO_DEADLINE, *([ref_kinds] if ref_kinds else []))
            t2 = time.thread_time()
            m, c, count = m + t1 - t0, c + t2 - t1, count + len(matches)
            del matches
        best_m, best_c = min(best_m, m), min(best_c, c)
    return best_m, best_c, count


def main() -> int:
    import tree_sitter

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--every", type=int, default=6)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--leave-one-out", action="store_true",
                    help="time the whole query with each pattern disabled instead: "
                         "what a pattern costs in context (the walk is shared)")
    ap.add_argument("--whole", action="store_true", help="only the whole query")
    args = ap.parse_args()
    trees = sample_trees(args.every)
    source = code.query_source("python")
    # as extract_code runs it (older code: no _compiled, no ref_kinds); the
    # leave-one-out rows subtract from the plain query, as each is built
    whole, ref_kinds = (code._compiled("python")
                        if hasattr(code, "_compiled") and not args.leave_one_out
                        else (code._query("python"), ()))
    rows = []
    for i in range(0 if args.whole else whole.pattern_count):
        text = source[whole.start_byte_for_pattern(i):whole.end_byte_for_pattern(i)].strip()
        if args.leave_one_out:
            without = tree_sitter.Query(grammar("python"), source)
            without.disable_pattern(i)
            m, c, n = cost(without, trees, args.reps)
        else:
            m, c, n = cost(tree_sitter.Query(grammar("python"), text), trees, args.reps)
        rows.append((m + c, m, c, n, i, " ".join(text.split())))
    m, c, n = cost(whole, trees, args.reps, ref_kinds)
    if args.leave_one_out:   # a pattern's cost: the whole query less the query without it
        rows = [(m + c - r[0], m - r[1], c - r[2], n - r[3], *r[4:]) for r in rows]
    print(f"{len(trees)} files; whole query: matches {m:.3f} s, collect {c:.3f} s, "
          f"{n} matches; patterns alone sum to "
          f"{sum(r[1] for r in rows):.3f} s + {sum(r[2] for r in rows):.3f} s")
    print(f"{'#':>3} {'match s':>8} {'collect s':>9} {'matches':>8}  pattern")
    for total, m, c, n, i, text in sorted(rows, reverse=True)[:args.top]:
        print(f"{i:>3} {m:8.3f} {c:9.3f} {n:8d}  {text[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
