"""Which parts of an answer came from a team's shared index, and of which commit.

``subscribe.seed_realm`` records, per file, the shard's commit when the file's
content, its parse (the extractor version) and every one of its vectors are
the shard's (``Store.put_shared_origins``); the store drops a file's record as
soon as the file is written with other content. An answer's result rows are
marked here from those records: an in-memory lookup, no object-store request.
"""

from __future__ import annotations

from ..model import file_key


SEARCH_LISTS = ("results",)
IMPACT_LISTS = ("affected", "tests", "docs")


def mark(store, result: dict, lists=SEARCH_LISTS) -> dict:
    """Add ``shared`` to each item of ``result``'s ``lists`` that came from a
    shared index, and a ``shared`` summary to ``result`` (only where this store
    took anything from one)."""
    origins = store.shared_origins()
    if not origins:
        return result
    rows = [row for name in lists for row in (result.get(name) or []) if isinstance(row, dict)]
    commits: dict[str, str] = {}
    uris: set[str] = set()
    count = 0
    for row in rows:
        if not (row.get("realm") and row.get("repo") and row.get("path")):
            continue
        origin = origins.get(file_key(row["realm"], row["repo"], row["path"]))
        if origin is None:
            continue
        row["shared"] = {"commit": origin["commit"], "uri": origin["uri"]}
        commits[row["repo"]] = origin["commit"]
        uris.add(origin["uri"])
        count += 1
    result["shared"] = {"results": count, "of": len(rows), "uris": sorted(uris), "commits": commits}
    return result
