"""The stat cache's sidecar: a warm ``indexd index`` that opens no store.

The ``files`` table is the stat cache, but reading it means importing
lancedb and pyarrow (1.5 s of a 2 s warm re-run). After each successful
one-shot run the writer copies what planning compares (per repo: every
file's ``(size, mtime_ns, inode)``, the listing's skip reasons) into
``stat_cache.json`` in the store folder, written atomically, together with
the store's *fingerprint*: every table's manifest files (name, size,
mtime_ns, inode). Every Lance commit adds a manifest, so any write after the
sidecar (the daemon, an enrich step killed half-way, a store replaced or
restored) changes the fingerprint and the sidecar is ignored. The next
run then plans from the store as before, including its torn-entries check.

``unchanged()`` answers only "nothing to do": the listing and one stat per
file match the sidecar exactly, under the same code (a new parser or
planner changes ``code_digest`` and falls back). Anything else (a change, a
missing, stale or unreadable sidecar) returns None and the caller takes the
ordinary path, which sees every change it always saw.

Must not import lancedb, pyarrow, the parsers or the pipeline at module level
(they are what the warm path avoids); ``write()`` runs after a real run, when
they are loaded anyway.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

SIDECAR = "stat_cache.json"
FORMAT = 1
PACKAGE = Path(__file__).parent
# What decides how a tree is planned and stored, beyond the extractor.
PLANNING_CODE = ("pipeline.py", "stat_sidecar.py", "model.py", "store/lance.py",
                 "store/schema.py", "scan/listing.py", "scan/reader.py", "scan/secrets.py")


def extractor_version() -> str:
    """A digest of everything that decides what a file yields (parsers, their
    tree-sitter queries, the row builder, identifier splitting): an upgrade
    that changes any of it re-parses files whose content did not change."""
    parts = sorted((PACKAGE / "parse").rglob("*.py")) + sorted((PACKAGE / "parse").rglob("*.scm"))
    parts += [PACKAGE / "store" / "rows.py", PACKAGE / "words.py",
              PACKAGE / "enrich" / "file_summary.py"]
    return files_digest(parts)


def code_digest() -> str:
    """The extractor plus the planning and store code: a sidecar written by
    other code is not trusted (that code may plan differently)."""
    return extractor_version() + files_digest([PACKAGE / p for p in PLANNING_CODE])


def files_digest(paths) -> str:
    """Names (relative to the package) and bytes of source files, as 16 hex digits
    (also the graph snapshot's code check: graph/snapshot.py)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def store_fingerprint(store_dir: Path) -> dict[str, list] | None:
    """Each table's manifests as [name, size, mtime_ns, inode]; None when unreadable."""
    out = {}
    try:
        for table in sorted(store_dir.glob("*.lance")):
            out[table.name] = sorted([e.name, s.st_size, s.st_mtime_ns, s.st_ino]
                                     for e in os.scandir(table / "_versions")
                                     if e.name.endswith(".manifest") for s in [e.stat()])
    except OSError:
        return None
    return out or None


# -- writing (after a successful run) -------------------------------------
def write(store, settings, repos: list[tuple[str, str]]) -> None:
    """Record the store's state for these fully planned repos. Call it after the
    run's last commit; a repo whose rows came from another extractor is left
    out (it is not current, so it must not look unchanged)."""
    from .errors import IndexdError

    try:
        data = _state(store, repos)
    except (OSError, ValueError, RuntimeError, IndexdError) as exc:
        # The index itself is written; only the next warm run is slower.
        log.warning("stat sidecar not written: %s", exc)
        data = None
    if data is None:
        discard(store.path)
    else:
        _write_atomic(Path(store.path) / SIDECAR, data)


def _state(store, repos: list[tuple[str, str]]) -> dict | None:
    from .model import SKIPPED
    from .pipeline import EXTRACTOR_VERSION, dropped_for_a_secret_value, extractor_key

    entries = []
    for realm, repo in repos:
        if store.get_meta(extractor_key(realm, repo)) != EXTRACTOR_VERSION:
            continue
        records = store.file_records(realm=realm, repo=repo)
        entries.append({
            "realm": realm, "repo": repo,
            # A record the planner always re-reads gets no stat: it never matches.
            "files": {p: None if dropped_for_a_secret_value(r) else [r.size, r.mtime_ns, r.inode]
                      for p, r in records.items()},
            "skipped": {p: r.reason for p, r in records.items() if r.status == SKIPPED},
        })
    fingerprint = store_fingerprint(Path(store.path))   # after every commit of the run
    if fingerprint is None:
        return None
    return {"format": FORMAT, "code": code_digest(), "store": fingerprint, "repos": entries}


def discard(store_dir) -> None:
    """Remove the sidecar (best effort: a stale one is ignored anyway)."""
    try:
        (Path(store_dir) / SIDECAR).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("stat sidecar not removed: %s", exc)


def _write_atomic(path: Path, data: dict) -> None:
    """Temp file, fsync, rename: a reader sees the old sidecar or the new one."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{SIDECAR}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("stat sidecar not written: %s", exc)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        discard(path.parent)


# -- reading (the warm path) -----------------------------------------------
def unchanged(settings, realm: str | None = None) -> dict | None:
    """The one-shot's ``done`` event when nothing changed since the last run, judged
    without the store; None whenever that cannot be shown (then plan as usual)."""
    started, cpu = time.perf_counter(), time.process_time()
    repos = settings.realm_repos(realm)
    side = _load(settings.paths.store_dir)
    if side is None or not repos:
        return None
    try:
        counted = _compare(settings, side["repos"], repos)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # Only this code writes the sidecar; a hand-edited one is not trusted.
        log.warning("stat sidecar malformed, planning from the store: %r", exc)
        return None
    if counted is None:
        return None
    known = set(settings.realm_repos(None))
    if any((r["realm"], r["repo"]) not in known for r in side["repos"]):
        return None     # a repo left the realms: the store path drops its rows
    files, skip_reasons = counted
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    stages = {"plan": {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}}
    return {"event": "done", "files": files, "unchanged": files, "hashed": 0, "parsed": 0,
            "touched": 0, "deleted": 0, "failed": 0, "entries": 0, "repaired": 0,
            "skipped": skip_reasons, "seconds": round(wall, 3), "stages": stages,
            "stat_cache": "sidecar"}


def _compare(settings, entries: list, repos) -> tuple[int, dict[str, int]] | None:
    """(files listed, skips by reason) over these repos, or None at the first difference."""
    by_repo = {(r["realm"], r["repo"]): r for r in entries}
    files, skip_reasons = 0, {}
    for name, repo in repos:
        known = by_repo.get((name, repo))
        listed = _repo_unchanged(settings, repo, known) if known else None
        if listed is None:
            return None
        files += listed[0]
        for reason in listed[1]:
            skip_reasons[reason] = skip_reasons.get(reason, 0) + 1
    return files, skip_reasons


def _load(store_dir: Path) -> dict | None:
    """The sidecar, if it describes this store as it is now and this code."""
    try:
        side = json.loads((store_dir / SIDECAR).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        if not isinstance(exc, FileNotFoundError):
            log.warning("stat sidecar unreadable, planning from the store: %s", exc)
        return None
    if not isinstance(side, dict) or side.get("format") != FORMAT or \
            not isinstance(side.get("repos"), list):
        return None
    if side.get("store") != store_fingerprint(store_dir) or side.get("code") != code_digest():
        return None     # the store moved on (or other code wrote it): not trusted
    return side


def _repo_unchanged(settings, repo: str, known: dict) -> tuple[int, list[str]] | None:
    """(files listed, skip reasons of the listing) when the repo matches its
    sidecar entry file for file; None at the first difference."""
    from .scan.listing import RepoRules
    from .scan.reader import real_stat_key

    if not Path(repo).is_dir():
        return None
    listing = RepoRules(Path(repo), settings).list()
    stats, reasons = known.get("files") or {}, known.get("skipped") or {}
    present = set(listing.files) | {path for path, _, _ in listing.skipped}
    if present != stats.keys():
        return None     # a file added or deleted
    for path, reason, detail in listing.skipped:
        if reasons.get(path) != f"{reason}: {detail}":
            return None
    real_root = os.path.realpath(repo)
    for path in listing.files:
        want = stats[path]
        # The planner's own test: a listed file with the same stat is not read.
        if want is None or list(real_stat_key(real_root, path) or ()) != want:
            return None
    return len(listing.files), [reason for _, reason, _ in listing.skipped]
