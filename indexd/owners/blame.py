"""Who last changed each line of one file, as the working tree has it (pygit2).

``blame_committed`` runs libgit2's blame on HEAD's version of a file, cut at a
history bound (``history_bound``: the commit ``max_commits`` first parents back),
because blame walks the whole history and costs seconds on a long one. Lines the
cut hides are ``OLDER``, not the boundary commit's author. ``worktree_lines``
maps the file on disk onto HEAD's lines, so an edit not committed yet is
``UNCOMMITTED``, never a person's.

Pure over pygit2 objects: no store, no engine, no threads.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

UNCOMMITTED = -1     # a line that is not in HEAD's version
OLDER = -2           # a line older than the history bound


class BlameUnavailable(Exception):
    """No owners for this file, and why (said in the answer, not raised to clients)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class FileBlame:
    """HEAD's version of one file: per line, the commit that last changed it."""
    blob: str                 # HEAD's blob id of the file: the cache key with its path
    commits: tuple[str, ...]  # commit ids that ``lines`` index
    lines: array              # per line (0-based): an index into commits, or OLDER
    bounded: bool             # the history was cut (some lines may be OLDER)
    binary: bool = False      # no lines to own (kept so the blob is not read again)


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def history_bound(repo, head, max_commits: int):
    """The commit ``max_commits`` first parents back from ``head``, or None when the
    history is shorter (blame then runs to the root and nothing is OLDER)."""
    commit = repo[head]
    for _ in range(max_commits):
        if not commit.parents:
            return None
        commit = commit.parents[0]
    return commit.id


def blame_committed(repo, path: str, blob, head, oldest) -> FileBlame:
    """Blame of HEAD's ``path`` (``blob``: its blob there), cut at ``oldest`` (or None)."""
    kw = {"newest_commit": head}
    if oldest is not None:
        kw["oldest_commit"] = oldest
    blame = repo.blame(path, **kw)
    commits: dict[str, int] = {}
    lines = array("i", [OLDER]) * line_count(blob.data)
    for hunk in blame:
        cid = hunk.final_commit_id
        # At the cut libgit2 gives every older line to the boundary commit (flagged
        # boundary): they are older than the bound, not that commit's author's.
        if oldest is not None and hunk.boundary and cid == oldest:
            idx = OLDER
        else:
            idx = commits.setdefault(str(cid), len(commits))
        start = hunk.final_start_line_number - 1
        count = min(hunk.lines_in_hunk, len(lines) - start)
        lines[start:start + count] = array("i", [idx]) * count
    return FileBlame(str(blob.id), tuple(commits), lines, oldest is not None)


def worktree_lines(blob, disk: bytes, fb: FileBlame) -> array:
    """Per line of the file on disk: the commit index of HEAD's line it still is, or
    UNCOMMITTED for a line added or changed since HEAD."""
    patch = blob.diff_to_buffer(disk)
    if not patch.hunks:
        return fb.lines
    origin = old_lines_of(patch, line_count(disk))
    return array("i", (UNCOMMITTED if o is None or o > len(fb.lines) else fb.lines[o - 1]
                       for o in origin))


def old_lines_of(patch, new_count: int) -> list[int | None]:
    """For each new line (1-based order), its old line number, or None when added.
    Lines between hunks are unchanged, so old and new advance together there."""
    out: list[int | None] = []
    old = 1
    for hunk in patch.hunks:
        for line in hunk.lines:
            if line.new_lineno > 0:
                while len(out) < line.new_lineno - 1:
                    out.append(old)
                    old += 1
                if line.old_lineno > 0:
                    out.append(line.old_lineno)
                    old = line.old_lineno + 1
                else:
                    out.append(None)
            elif line.old_lineno > 0:   # deleted: the next new line comes after it
                old = line.old_lineno + 1
    while len(out) < new_count:
        out.append(old)
        old += 1
    return out[:new_count]
