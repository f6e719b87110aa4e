"""Co-change edges from git history (pygit2): files that change together.

Walks the last ``max_commits`` commits reachable from HEAD, skipping merge
commits and commits touching more than ``max_files`` files (mass renames,
formatting sweeps). Every pair changed together in at least ``min_support``
commits gives two edges, kind ``co_change``, how ``git``: an edge A -> B
carries ``weight`` = P(A changed | B changed) (so walking edges into B, as
impact does, yields the chance that A needs a change too) and ``support``.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from .model import Edge


def changed_paths(repo, commit) -> list[str]:
    """Paths a non-merge commit touched (against its parent or the empty tree)."""
    if commit.parents:
        diff = repo.diff(commit.parents[0].tree, commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    paths = set()
    for delta in diff.deltas:
        paths.add(delta.new_file.path)
        paths.add(delta.old_file.path)
    return sorted(paths)


def history(repo_path: str, max_commits: int = 500, max_files: int = 50) -> list[list[str]]:
    """Changed path lists of the usable commits, newest first."""
    import pygit2

    repo = pygit2.Repository(repo_path)
    if repo.head_is_unborn:
        return []
    out = []
    for n, commit in enumerate(repo.walk(repo.head.target, pygit2.enums.SortMode.TIME)):
        if n >= max_commits:
            break
        if len(commit.parents) > 1:
            continue
        paths = changed_paths(repo, commit)
        if 0 < len(paths) <= max_files:
            out.append(paths)
    return out


def pair_counts(commits: list[list[str]]) -> tuple[Counter, Counter]:
    files: Counter = Counter()
    pairs: Counter = Counter()
    for paths in commits:
        files.update(paths)
        pairs.update(combinations(sorted(paths), 2))
    return files, pairs


def co_change_edges(repo_path: str, realm: str = "", *, max_commits: int = 500,
                    max_files: int = 50, min_support: int = 3,
                    exists=None) -> list[Edge]:
    """Co-change edges of one repo (``exists(path)`` filters deleted files)."""
    repo = str(repo_path).rstrip("/")
    files, pairs = pair_counts(history(repo, max_commits, max_files))
    edges = []
    for (a, b), support in sorted(pairs.items()):
        if support < min_support:
            continue
        if exists is not None and not (exists(a) and exists(b)):
            continue
        for src, dst in ((a, b), (b, a)):
            conf = support / files[dst]
            edges.append(Edge("co_change", repo, src, None, repo, dst, None, 0, "git",
                              round(conf, 4), realm, support))
    return edges
