"""`indexd publish`: a realm's local index, as of each repo's commit, to a shared index.

Per repo (one *shard*, location.py), four Lance tables, written in order:
``entries`` (with vectors), ``links``, ``files`` (path and content hash), then
``manifest`` (one row: commit, digest, model id, recipe, schema and extractor
versions, counts). What is published is what the commit holds: a file whose
content differs from its blob at HEAD (edited, untracked) is left out and
counted, so a CI checkout publishes everything and a dirty laptop nothing of
its own edits. Rows lose what names this machine (realm, absolute repo path,
file keys, ids) and are stored by repo-relative path. They are the local
store's rows, so secrets are already masked as they are locally.

One writer per shard, and each table replaced whole (Lance's overwrite is one
commit), so two repos published at once never touch each other's tables.
The ``digest`` (a hash of every published (path, hash) pair, the model, recipe
and versions) makes it idempotent and resumable: a shard whose manifest has
the digest is ``unchanged``; after an interruption, a table that already holds
the digest's rows is kept and the rest written, the manifest last.
"""

from __future__ import annotations

import json
import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta

import pyarrow as pa
import pyarrow.compute as pc

from .. import __version__
from ..descriptions import model_key
from ..model import INDEXED, content_hash
from ..stat_sidecar import extractor_version
from ..store.schema import SCHEMA_VERSION
from .location import (TABLES, SharedIndexError, connect, read_manifest, repo_identity, shard_name,
                       sql_literal, table_name, table_names)

log = logging.getLogger(__name__)
# An entry not embedded yet (the daemon still at work, a summary's re-embed in
# flight) is published without a vector: LanceDB counts a null vector as one of
# the wrong length and refuses the whole table unless told to keep it null.
KEEP_MISSING_VECTORS = "null"

# Columns that name this machine's copy: the reader rebuilds them from its own.
LOCAL_COLUMNS = ("realm", "repo", "repo_name", "file_key", "id")
FILE_COLUMNS = ("path", "hash", "size", "language", "status", "reason", "entries")


@dataclass
class RepoReport:
    repo: str
    shard: str
    identity: str
    commit: str = ""
    status: str = ""            # published | unchanged | resumed | empty
    files: int = 0              # published
    left_out: int = 0           # not as committed: edited, untracked, or not indexed
    entries: int = 0
    vectors: int = 0            # entries published with a vector
    links: int = 0
    tables_written: list = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self) | {"seconds": round(self.seconds, 2)}


def publish_realm(settings, store, realm: str, uri: str, force: bool = False,
                  repos: list[str] | None = None,
                  on_progress: Callable[[dict], None] | None = None) -> list[RepoReport]:
    """Publish each repo of ``realm`` (or only ``repos``) to ``uri``."""
    db = connect(uri, create=True)
    emit = on_progress or (lambda event: None)
    model = store.get_meta("embed_model") or ""
    reports = []
    for _, repo in settings.realm_repos(realm):
        if repos and repo not in repos:
            continue
        emit({"event": "publish_repo", "repo": repo})
        report = publish_repo(settings, store, db, realm, repo, model, force,
                              fault=settings.fault_injection)
        emit({"event": "published"} | report.to_json())
        reports.append(report)
    return reports


def publish_repo(settings, store, db, realm: str, repo: str, model: str, force: bool = False,
                 fault: str = "") -> RepoReport:
    started = time.monotonic()
    identity = repo_identity(repo)
    report = RepoReport(repo=repo, shard=shard_name(identity), identity=identity)
    records = store.file_records(realm=realm, repo=repo)
    commit, committed = _committed_hashes(repo)
    report.commit = commit
    clean = sorted(path for path, rec in records.items()
                   if rec.status == INDEXED and (committed is None or committed.get(path) == rec.hash))
    report.left_out = len(records) - len(clean)
    report.files = len(clean)
    tables = _tables(store, realm, repo, clean, records)
    digest = _digest(settings, model, [(p, records[p].hash) for p in clean], tables["entries"])
    tables = {name: _stamped(data, commit, digest) for name, data in tables.items()}
    names = set(table_names(db))
    manifest = read_manifest(db, report.shard, names)
    if manifest and manifest.get("digest") == digest and not force:
        report.status = "unchanged"
        for key in ("entries", "vectors", "links"):
            setattr(report, key, int(manifest.get(key) or 0))
        report.seconds = time.monotonic() - started
        return report
    report.entries = tables["entries"].num_rows
    report.vectors = tables["entries"].num_rows - tables["entries"]["vector"].null_count
    report.links = tables["links"].num_rows
    resumed = False
    for name in ("entries", "links", "files"):
        full = table_name(report.shard, name)
        if not force and full in names and _holds(db, full, digest, tables[name].num_rows):
            resumed = True   # an interrupted run wrote it already
            continue
        _fault(fault, name)
        db.create_table(full, tables[name], mode="overwrite" if full in names else "create",
                        on_bad_vectors=KEEP_MISSING_VECTORS)
        report.tables_written.append(name)
    row = {"shard": report.shard, "identity": identity, "repo_name": repo.rstrip("/").split("/")[-1],
           "commit": commit, "digest": digest, "model_id": model,
           "recipe": settings.embed_recipe, "summary_model": model_key(settings),
           "schema_version": SCHEMA_VERSION,
           "extractor_version": extractor_version(), "indexd_version": __version__,
           "files": report.files, "entries": report.entries, "vectors": report.vectors,
           "links": report.links, "published_at": time.time()}
    _fault(fault, "manifest")
    full = table_name(report.shard, "manifest")
    db.create_table(full, pa.Table.from_pylist([row]),
                    mode="overwrite" if full in names else "create")
    report.tables_written.append("manifest")
    report.status = "resumed" if resumed else ("published" if clean else "empty")
    report.seconds = time.monotonic() - started
    log.info("published shard=%s commit=%s files=%d entries=%d vectors=%d status=%s",
             report.shard, commit[:12], report.files, report.entries, report.vectors,
             report.status)
    return report


def purge_path(db, repo: str, path: str) -> dict:
    """Remove one repo-relative file (or folder) from the repo's published shard,
    history included: its tables are rewritten without the file's rows and every
    older version is deleted from the store. The manifest's digest is reset, so
    the next publish of a commit that still holds the file writes it again."""
    shard = shard_name(repo_identity(repo))
    names = set(table_names(db))
    manifest = read_manifest(db, shard, names)
    if manifest is None:
        raise SharedIndexError(f"nothing of {repo} is published there (no shard {shard})",
                               {"shard": shard})
    prefix = path.rstrip("/") + "/"
    removed = {}
    for name in ("entries", "links", "files"):
        full = table_name(shard, name)
        if full not in names:
            continue
        table = db.open_table(full)
        data = table.to_arrow()
        paths = data["path"]
        gone = pc.or_(pc.equal(paths, path), pc.starts_with(paths, prefix))
        removed[name] = int(pc.sum(gone.cast("int64")).as_py() or 0)
        db.create_table(full, data.filter(pc.invert(gone)), mode="overwrite",
                        on_bad_vectors=KEEP_MISSING_VECTORS)
    manifest.update(digest=f"purged:{time.time()}", purged_at=time.time())
    for key, name in (("files", "files"), ("entries", "entries"), ("links", "links")):
        manifest[key] = int(manifest.get(key) or 0) - removed.get(name, 0)
    db.create_table(table_name(shard, "manifest"), pa.Table.from_pylist([manifest]), mode="overwrite")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in TABLES:
            full = table_name(shard, name)
            if full in names or name == "manifest":
                db.open_table(full).optimize(cleanup_older_than=timedelta(0))
    log.info("purged shard=%s path=%s removed=%s", shard, path, removed)
    return {"shard": shard, "path": path, "removed": removed}


def _holds(db, full: str, digest: str, expected: int) -> bool:
    table = db.open_table(full)
    if "digest" not in table.schema.names or table.count_rows() != expected:
        return False
    if expected == 0:
        return True
    head = table.search().select(["digest"]).limit(1).to_list()
    return bool(head) and head[0]["digest"] == digest


def _committed_hashes(repo: str) -> tuple[str, dict[str, str] | None]:
    """HEAD's commit id and each committed file's content hash; ("", None) for
    a folder that is not a git repo (everything indexed is published)."""
    try:
        import pygit2
        from pygit2.enums import ObjectType, RepositoryOpenFlag

        git = pygit2.Repository(repo, RepositoryOpenFlag.NO_SEARCH)
        if git.head_is_unborn:
            return "", {}
        head = git.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return "", None
    hashes: dict[str, str] = {}
    stack = [(head.tree, "")]
    while stack:
        tree, prefix = stack.pop()
        for item in tree:
            path = f"{prefix}{item.name}"
            if item.type == ObjectType.TREE:
                stack.append((git[item.id], path + "/"))
            elif item.type == ObjectType.BLOB:
                hashes[path] = content_hash(git[item.id].data)
    return str(head.id), hashes


def _digest(settings, model: str, pairs: list[tuple[str, str]], entries: pa.Table) -> str:
    """Changes with any published file, and with what enrichment added since
    (a vector or an LLM summary that an earlier publish did not have yet)."""
    head = json.dumps([model, settings.embed_recipe, SCHEMA_VERSION, extractor_version()])
    files = "\n".join(f"{p}\x1f{h}" for p, h in pairs)
    enriched = "\n".join(sorted(f"{e or ''}\x1f{s or ''}" for e, s in zip(
        entries["embed_hash"].to_pylist(), entries["summary_source"].to_pylist())))
    return content_hash(f"{head}\n{files}\n{enriched}")


def _tables(store, realm: str, repo: str, paths: list[str], records) -> dict[str, pa.Table]:
    where = f"realm = {sql_literal(realm)} AND repo = {sql_literal(repo)}"
    wanted = pa.array(paths, pa.string())
    out = {}
    for name in ("entries", "links"):
        table = getattr(store, name)
        columns = [c for c in table.schema.names if c not in LOCAL_COLUMNS]
        batches = list(store.scan_batches(name, where, columns))
        data = (pa.Table.from_batches(batches) if batches else
                table.schema.empty_table().select(columns))
        data = data.filter(pc.is_in(data["path"], value_set=wanted))
        out[name] = data
    files = pa.Table.from_pylist(
        [{c: getattr(records[p], c) for c in FILE_COLUMNS} for p in paths],
        schema=pa.schema([store.files.schema.field(c) for c in FILE_COLUMNS]))
    out["files"] = files
    return out


def _stamped(data: pa.Table, commit: str, digest: str) -> pa.Table:
    n = data.num_rows
    data = data.append_column("commit", pa.array([commit] * n, pa.string()))
    return data.append_column("digest", pa.array([digest] * n, pa.string()))


def _fault(spec: str, table: str) -> None:
    """Tests: ``publish:links`` stops a publish just before it writes that table."""
    if spec == f"publish:{table}":
        raise SharedIndexError(f"publish interrupted before the {table} table (injected)")
