"""Owners of a line range: authors by lines, their latest commit, the recent commits.

Pure: per-line attributions (commit indexes, ``UNCOMMITTED``, ``OLDER``) and
the commits they name in, JSON-ready dicts out. The answer's shape is in
docs/protocol.md (``owners``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .blame import OLDER, UNCOMMITTED

RECENT_COMMITS = 5


@dataclass(frozen=True)
class Commit:
    id: str
    name: str       # the author, through the repo's .mailmap
    email: str
    time: int       # author time, epoch seconds
    summary: str

    def to_json(self) -> dict:
        return {"id": self.id, "author": self.name, "email": self.email, "time": self.time,
                "summary": self.summary}


def tally(lines, commits: list[Commit], start: int = 1, end: int | None = None,
          limit: int = 10) -> dict:
    """Owners of lines ``start..end`` (1-based, inclusive; end None: to the last)."""
    span = lines[max(start, 1) - 1:len(lines) if end is None else end]
    counts = Counter(span)
    total = len(span)
    people: dict[str, dict] = {}
    for idx, n in counts.items():
        if idx < 0:
            continue
        c = commits[idx]
        key = c.email.lower() or c.name
        p = people.setdefault(key, {"name": c.name, "email": c.email, "lines": 0, "commits": 0,
                                    "last_time": 0, "last_commit": None})
        p["lines"] += n
        p["commits"] += 1
        if c.time >= p["last_time"]:
            p["name"], p["last_time"], p["last_commit"] = c.name, c.time, c.id
    owners = sorted(people.values(), key=lambda p: (-p["lines"], -p["last_time"], p["name"]))
    for p in owners:
        p["share"] = round(p["lines"] / total, 3) if total else 0.0
    recent = sorted({commits[i] for i in counts if i >= 0}, key=lambda c: (-c.time, c.id))
    return {"lines": total, "owners": owners[:limit], "owners_total": len(owners),
            "uncommitted_lines": counts.get(UNCOMMITTED, 0), "older_lines": counts.get(OLDER, 0),
            "recent_commits": [c.to_json() for c in recent[:RECENT_COMMITS]]}


def merge_reviewers(tallies: list[dict], limit: int = 5) -> list[dict]:
    """People owning lines across several files: in how many they own lines, then lines."""
    people: dict[str, dict] = {}
    for t in tallies:
        for o in t.get("owners", []):
            key = (o["email"] or "").lower() or o["name"]
            p = people.setdefault(key, {"name": o["name"], "email": o["email"], "files": 0,
                                        "lines": 0, "last_time": 0})
            p["files"] += 1
            p["lines"] += o["lines"]
            p["last_time"] = max(p["last_time"], o["last_time"])
    return sorted(people.values(),
                  key=lambda p: (-p["files"], -p["lines"], -p["last_time"]))[:limit]
