"""Uncommitted (or since-REV) changes -> the symbols they touch (pygit2).

``changed_symbols`` diffs HEAD (or REV) against the working tree, staged and
unstaged edits alike (``git diff HEAD`` semantics: untracked files count only
once they are staged), and maps every changed line range onto the innermost
definitions containing it: new-side lines onto the working-tree version's
symbols, deleted lines onto the old version's. Lines outside any symbol map
to the file itself (symbol None). Definitions come from ``defs_for(path,
text)``, by default the real parser. A deleted definition whose body reappears
under another name in the same file is ``renamed`` (``renamed_to``; the new one
is ``added`` with ``renamed_from``).

Deleted and renamed symbols are gone from the warm graph, which follows the
working tree: ``committed_facts`` parses the base version of their file so
their dependents can still be found (Graph.impact_as_committed).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from ..errors import RealmError
from .model import Def, FileFacts

RENAME_SIMILARITY = 0.8    # body likeness, the old name read as the new one


def parse_defs(path: str, text: str) -> list[Def]:
    from ..parse import detect_language, parse_source

    result = parse_source(path, text, detect_language(path, text[:200]))
    return [Def(e.kind, e.qualname, e.name, e.start_line, e.end_line)
            for e in result.entries if e.kind != "file"]


def changed_paths(repo, base_tree, staged: bool = False) -> dict[str, str]:
    """path -> old path, for every file changed in the index or worktree
    (``staged``: in the index only)."""
    index = repo.index
    out: dict[str, str] = {}
    diffs = [] if staged else [index.diff_to_workdir()]
    diffs.append(index.diff_to_tree(base_tree) if base_tree is not None else None)
    for diff in diffs:
        if diff is None:
            continue
        for delta in diff.deltas:
            # diff_to_tree runs tree -> index reversed; take both sides' paths.
            for p in {delta.new_file.path, delta.old_file.path}:
                out.setdefault(p, p)
    if base_tree is None:
        for entry in index:
            out.setdefault(entry.path, entry.path)
    return out


def line_changes(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(new-side ranges, old-side deleted ranges), 1-based inclusive."""
    import pygit2

    patch = pygit2.Patch.create_from(old.encode(), new.encode(), context_lines=0)
    added, removed = [], []
    for hunk in patch.hunks:
        if hunk.new_lines:
            added.append((hunk.new_start, hunk.new_start + hunk.new_lines - 1))
        if hunk.old_lines:
            removed.append((hunk.old_start, hunk.old_start + hunk.old_lines - 1))
    return added, removed


def symbols_for(defs: list[Def], ranges: list[tuple[int, int]]) -> dict[str | None, tuple]:
    """Innermost definition per changed range -> (def or None, [ranges])."""
    out: dict[str | None, tuple] = {}
    ordered = sorted(defs, key=lambda d: (d.start, -d.end))
    for lo, hi in ranges:
        hits = [d for d in ordered if d.start <= hi and lo <= d.end]
        inner = [d for d in hits if not any(o is not d and d.start <= o.start and o.end <= d.end
                                            and (o.start, o.end) != (d.start, d.end)
                                            for o in hits)]
        for d in inner or [None]:
            key = d.qualname if d else None
            out.setdefault(key, (d, []))[1].append((lo, hi))
    return out


def _open(repo_path: str):
    import pygit2

    try:
        return pygit2.Repository(str(repo_path))
    except pygit2.GitError:
        raise RealmError(f"{repo_path} is not a git repository (a plain folder): changes and "
                         "tests affected read git's diff; name what changed instead: indexctl "
                         "impact PATH, indexctl tests affected PATH::SYMBOL") from None


def changed_symbols(repo_path: str, since: str | None = None,
                    defs_for: Callable[[str, str], list[Def]] | None = None,
                    staged: bool = False) -> list[dict]:
    """Changed symbols of a repo: [{path, symbol, kind, start_line, end_line, change, lines}].

    ``staged``: the index against HEAD (``git diff --cached``), the new side
    read from the index's blobs, so unstaged edits on top are not counted."""
    import pygit2

    repo = _open(repo_path)
    defs_for = defs_for or parse_defs
    base_tree = None
    if since is not None:
        base_tree = repo.revparse_single(since).peel(pygit2.Tree)
    elif not repo.head_is_unborn:
        base_tree = repo.head.peel(pygit2.Tree)
    out = []
    workdir = Path(repo.workdir)
    for path in sorted(changed_paths(repo, base_tree, staged)):
        old = _blob_text(base_tree, path)
        new = _index_text(repo, path) if staged else _work_text(workdir / path)
        if old == new:
            continue
        out += _file_changes(path, old, new, defs_for)
    return out


def base_text(repo_path: str, since: str | None, path: str) -> str | None:
    """The file as it was in REV (default HEAD); None when it did not exist."""
    import pygit2

    repo = pygit2.Repository(str(repo_path))
    if since is None and repo.head_is_unborn:
        return None
    ref = repo.revparse_single(since) if since is not None else repo.head
    return _blob_text(ref.peel(pygit2.Tree), path)


def committed_facts(realm: str, repo: str, path: str, text: str) -> FileFacts:
    """Graph facts of a file's committed text, parsed as the indexer would."""
    from ..parse import detect_language, parse_source
    from .loader import facts_from_parse

    lang = detect_language(path, text[:256])
    result = parse_source(path, text, lang, lambda rel: (Path(repo) / rel).exists())
    return facts_from_parse(realm, repo, path, lang, result,
                            status="failed" if result.error else "indexed", text=text)


def _work_text(fp: Path) -> str | None:
    return fp.read_text(encoding="utf-8", errors="replace") if fp.is_file() else None


def _index_text(repo, path: str) -> str | None:
    try:
        entry = repo.index[path]
    except KeyError:   # staged deletion
        return None
    return repo[entry.id].data.decode("utf-8", "replace")


def _blob_text(tree, path: str) -> str | None:
    if tree is None:
        return None
    try:
        return tree[path].data.decode("utf-8", "replace")
    except KeyError:
        return None


def _file_changes(path, old, new, defs_for) -> list[dict]:
    change = "added" if old is None else "deleted" if new is None else "modified"
    added, removed = line_changes(old or "", new or "")
    old_defs = defs_for(path, old) if old is not None else []
    new_defs = defs_for(path, new) if new is not None else []
    old_q = {d.qualname for d in old_defs}
    new_q = {d.qualname for d in new_defs}
    found: dict = {}
    for key, (d, rs) in symbols_for(new_defs, added).items():
        how = change if key is None else "modified" if key in old_q else "added"
        found[key] = (d, rs, how)
    for key, (d, rs) in symbols_for(old_defs, removed).items():
        if key in found:
            found[key][1].extend(rs)
        else:
            how = change if key is None else "modified" if key in new_q else "deleted"
            found[key] = (d, rs, how)
    rows = [{"path": path, "symbol": key, "kind": d.kind if d else "file",
             "start_line": d.start if d else 1, "end_line": d.end if d else 0,
             "change": how, "lines": sorted(set(rs))} for key, (d, rs, how) in found.items()]
    _mark_renames(rows, old or "", new or "")
    return sorted(rows, key=lambda r: (r["path"], r["start_line"], r["symbol"] or ""))


def _mark_renames(rows: list[dict], old: str, new: str) -> None:
    """Pair deleted with added definitions of one kind whose bodies match once
    the old name is read as the new one (best pair first)."""
    gone = [r for r in rows if r["change"] == "deleted" and r["symbol"]]
    born = [r for r in rows if r["change"] == "added" and r["symbol"]]
    if not gone or not born:
        return
    old_lines, new_lines = old.splitlines(), new.splitlines()
    pairs = []
    for g in gone:
        g_body = "\n".join(old_lines[g["start_line"] - 1:g["end_line"]])
        g_name = g["symbol"].rsplit(".", 1)[-1]
        for b in born:
            if b["kind"] != g["kind"]:
                continue
            b_body = "\n".join(new_lines[b["start_line"] - 1:b["end_line"]])
            ratio = difflib.SequenceMatcher(
                None, g_body.replace(g_name, b["symbol"].rsplit(".", 1)[-1]), b_body).ratio()
            if ratio >= RENAME_SIMILARITY:
                pairs.append((-ratio, g["symbol"], b["symbol"], g, b))
    taken: set[int] = set()
    for _, _, _, g, b in sorted(pairs, key=lambda p: p[:3]):
        if id(g) in taken or id(b) in taken:
            continue
        taken |= {id(g), id(b)}
        g["change"], g["renamed_to"] = "renamed", b["symbol"]
        b["renamed_from"] = g["symbol"]
