"""The git side of one owners request: the repo that holds a realm folder, HEAD, its blobs.

pygit2 objects are not shared across threads, so each request (and the owners
thread) opens its own. No store, no engine.
"""

from __future__ import annotations

import os

from .blame import BlameUnavailable


class GitFile:
    """One repo's git side for one request (pygit2 objects are not shared across threads)."""

    def __init__(self, repo: str):
        import pygit2

        found = pygit2.discover_repository(repo)
        if found is None:
            raise BlameUnavailable("not in a git repository: a plain folder has no history")
        try:
            self.git = pygit2.Repository(found)
        except pygit2.GitError as exc:
            # git refuses a checkout another user owns (safe.directory; an unpacked sdist,
            # a shared volume): no history to blame, said as one line, never a traceback
            raise BlameUnavailable(f"git cannot open the repository: {exc}") from None
        if self.git.workdir is None:
            raise BlameUnavailable("a bare repository has no working tree")
        # A realm folder inside a bigger repo: its paths are below a prefix there.
        self.prefix = os.path.relpath(os.path.realpath(repo),
                                      os.path.realpath(self.git.workdir))
        self.head = None if self.git.head_is_unborn else self.git.head.target
        self.tree = None if self.head is None else self.git[self.head].tree

    def git_path(self, rel: str) -> str:
        return rel if self.prefix == "." else f"{self.prefix}/{rel}"

    def head_entry(self, rel: str):
        """HEAD's tree entry of the file ``rel`` (its ``id`` is the blob's, read without
        loading the blob); None when HEAD has no such file (or no commit yet)."""
        import pygit2

        if self.tree is None:
            return None
        try:
            entry = self.tree[self.git_path(rel)]
        except KeyError:
            return None
        if entry.filemode == pygit2.enums.FileMode.LINK:
            raise BlameUnavailable("a symbolic link")
        if entry.type_str != "blob":
            raise BlameUnavailable(f"not a file in git ({entry.type_str})")
        return entry
