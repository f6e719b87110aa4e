"""Owners' cost on a real repository, next to `git blame` on the same files.

In process (no daemon): an ``Owners`` over a temporary INDEXD_HOME whose realm
is ``--repo`` (default: this repository). Blames ``--files`` files tracked at
HEAD (spaced over the sorted list) cold, one by one, then asks each again
(the cached answer: a stat, the working tree laid over HEAD, the tally), then
sums up impact's owners over 50 of them as an impact answer would. The
baseline in the same run: ``git blame --porcelain`` on the same files, one
process each, as a user would. Prints medians, the slowest file, and the load
average; blame costs grow with each file's history, so quote the repo's commit
count too.

    .venv/bin/python bench/owners.py [--repo DIR] [--files 60] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def tracked_files(repo: str, n: int) -> list[str]:
    import pygit2

    git = pygit2.Repository(repo)
    paths = []

    def walk(tree, prefix=""):
        for e in tree:
            if e.type_str == "tree":
                walk(git[e.id], f"{prefix}{e.name}/")
            elif e.type_str == "blob" and e.name.endswith((".py", ".md", ".go", ".js", ".ts")):
                paths.append(prefix + e.name)

    walk(git.head.peel().tree)
    paths.sort()
    step = max(1, len(paths) // n)
    return paths[::step][:n], sum(1 for _ in git.walk(git.head.target))


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(repo: str, n: int, repeat: int) -> dict:
    home = tempfile.mkdtemp(prefix="ixown")
    os.environ["INDEXD_HOME"] = home
    try:
        return measure(repo, n, repeat)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def measure(repo: str, n: int, repeat: int) -> dict:
    from indexd.config import load_settings
    from indexd.owners import Owners
    from indexd.realms import add_repos

    add_repos(load_settings(), "bench", [repo])
    files, commits = tracked_files(repo, n)
    settings = load_settings()      # the daemon's provider hands out its loaded settings too
    owners = Owners(lambda: settings)
    cold = [timed(lambda f=f: owners.target(f"{repo}/{f}")) for f in files]
    cached = [timed(lambda f=f: owners.target(f"{repo}/{f}")) for _ in range(repeat)
              for f in files]
    answer = {"target": f"{repo}/{files[0]}",
              "affected": [{"repo": repo, "path": f} for f in files[1:51]]}
    impact = [timed(lambda: owners.for_impact(answer)) for _ in range(repeat)]
    git = [timed(lambda f=f: subprocess.run(["git", "-C", repo, "blame", "--porcelain", f],
                                            capture_output=True, check=True)) for f in files]
    slowest = max(range(len(files)), key=lambda i: cold[i])
    ms = lambda xs: round(statistics.median(xs) * 1000, 2)  # noqa: E731
    return {"repo": repo, "commits": commits, "files": len(files),
            "cold_median_ms": ms(cold), "cold_total_s": round(sum(cold), 2),
            "slowest": {"path": files[slowest], "ms": round(cold[slowest] * 1000)},
            "cached_median_ms": ms(cached), "impact_50_files_median_ms": ms(impact),
            "git_blame_median_ms": ms(git), "git_blame_total_s": round(sum(git), 2),
            "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=str(HERE.parent))
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = run(str(Path(args.repo).resolve()), args.files, args.repeat)
    if args.json:
        print(json.dumps(r))
        return
    print(f"{r['repo']}: {r['commits']} commits, {r['files']} files")
    print(f"cold blame (owners)   median {r['cold_median_ms']} ms, total {r['cold_total_s']} s, "
          f"slowest {r['slowest']['path']} {r['slowest']['ms']} ms")
    print(f"git blame --porcelain median {r['git_blame_median_ms']} ms, "
          f"total {r['git_blame_total_s']} s (baseline, one process per file)")
    print(f"cached answer         median {r['cached_median_ms']} ms")
    print(f"impact's owners, 50 cached files: median {r['impact_50_files_median_ms']} ms")
    print(f"load average at the end {r['load']}")


if __name__ == "__main__":
    main()
