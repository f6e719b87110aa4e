"""Copying a shard's rows for files the checkout really has: structure without a parse.

``subscribe.py`` takes a shard's vectors; this takes its entries and links,
so a cold index of a realm a teammate (or CI) published reads and hashes each
file but parses only those the shard does not hold as they are here. A file's
rows are copied only when

- the shard was written by the same extractor and store schema (the same
  parser, queries and row builder: the rows are what a local parse yields),
- the local file's content hash, computed by the parse worker that would
  otherwise parse it, is the hash the shard recorded for that path, and
- its rows carry the summaries a local parse would give them (an LLM summary
  of a code file's own entry cannot be rebuilt without the file: that file
  is parsed).

What names this machine's copy (realm, repo, file key, entry ids) is rebuilt
here the way ``store/rows.py`` builds it. Vectors are not copied: they reach
the store through the vector cache (``subscribe.seed_realm``), where each is
checked against its own text and the local model. A shard that cannot be
read leaves those files to be parsed: the caller falls back, nothing is lost.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import pyarrow as pa
import pyarrow.compute as pc

from ..enrich.summarizer import docstring_summary
from ..model import INDEXED, FileRecord
from ..parse.languages import is_code
from ..stat_sidecar import extractor_version
from ..store.packed import ENTRY_COLUMNS, pack_arrow
from ..store.rows import entry_id
from ..store.schema import SCHEMA_VERSION
from .location import (SharedIndexError, connect, read_manifest, repo_identity, shard_name,
                       table_name, table_names)

log = logging.getLogger(__name__)

LINK_COLUMNS = ("path", "line", "kind", "target", "scope", "module", "broken", "how")


class ShardUnusable(Exception):
    """Why a shard's rows cannot stand in for a local parse (said, never raised out)."""


@dataclass
class ShardRows:
    """One repo's shard, opened for copying: its files' hashes now, its rows on first use."""

    realm: str
    repo: str
    uri: str
    shard: str
    commit: str
    db: object
    hashes: dict[str, str] = field(default_factory=dict)   # path -> content hash (indexed files)
    _entries: dict | None = None     # path -> rows (dicts, as published)
    _links: dict | None = None       # path -> Arrow slice of the links table

    def writes(self, records: list[FileRecord], packed: bool, summaries: bool):
        """(FileWrite per copied file, paths to parse after all) for these
        local records, each of which matched ``hashes``."""
        from ..store import FileWrite

        self._load([r.path for r in records])
        out, parse = [], []
        for rec in records:
            rows = self._rows(rec, summaries)
            if rows is None:
                parse.append(rec.path)
                continue
            rec = _with_counts(rec, len(rows))
            links = self._links.get(rec.path) or _empty_links()
            if packed:
                out.append(FileWrite(rec, [], [], packed=pack_arrow(rows, links)))
            else:
                out.append(FileWrite(rec, rows, _link_dicts(rec, links)))
        return out, parse

    def _load(self, paths: list[str]) -> None:
        """The shard's rows of these paths (the first call reads every wanted
        path's rows; later calls only what is new)."""
        if self._entries is None:
            self._entries, self._links = {}, {}
        wanted = [p for p in paths if p not in self._entries]
        if not wanted:
            return
        value_set = pa.array(wanted, pa.string())
        entries = _read(self.db, table_name(self.shard, "entries"),
                        [c for c in ENTRY_COLUMNS if c not in LOCAL_ENTRY_COLUMNS])
        entries = entries.filter(pc.is_in(entries["path"], value_set=value_set))
        for row in entries.to_pylist():
            self._entries.setdefault(row["path"], []).append(row)
        links = _read(self.db, table_name(self.shard, "links"), list(LINK_COLUMNS))
        links = links.filter(pc.is_in(links["path"], value_set=value_set))
        for path, part in _by_path(links):
            self._links[path] = part
        for path in wanted:
            self._entries.setdefault(path, [])

    def _rows(self, rec: FileRecord, summaries: bool) -> list[dict] | None:
        shared = self._entries.get(rec.path) or []
        if not shared:
            return None          # the shard lists the file but holds no row of it
        repo_name = PurePosixPath(rec.repo).name
        code = is_code(rec.language)
        rows = []
        # ids as store/rows.py numbers them: the nth entry of a (kind, qualname)
        # in the file, in source order.
        seen: dict[tuple, int] = {}
        for row in sorted(shared, key=lambda r: (r["start_line"] or 0, r["end_line"] or 0)):
            row = dict(row)
            if not _summary_fits(row, summaries, code):
                return None
            key = (row["kind"], row["qualname"])
            nth = seen.get(key, 0)
            seen[key] = nth + 1
            row.update(id=entry_id(rec.key, row["kind"], row["qualname"], nth),
                       file_key=rec.key, realm=rec.realm, repo=rec.repo, repo_name=repo_name,
                       embed_hash=None, vector=None)
            rows.append(row)
        return rows


# What the publisher drops (publish.LOCAL_COLUMNS) and the reader rebuilds.
LOCAL_ENTRY_COLUMNS = ("realm", "repo", "repo_name", "file_key", "id")


def _summary_fits(row: dict, summaries: bool, code: bool) -> bool:
    """Give ``row`` the summary a local parse would (in place); False where
    that cannot be rebuilt from the row alone."""
    source = row.get("summary_source") or ""
    if not summaries:
        row["summary"], row["summary_source"] = "", ""
        return True
    if source == "docstring":
        return True
    if source == "llm" and not (code and row.get("kind") == "file"):
        # The LLM summary comes back through the summary cache when this
        # machine summarizes with the same model (subscribe._seed_summaries).
        row["summary"], row["summary_source"] = docstring_summary(row), "docstring"
        return True
    return False   # published without summaries, or a code file's model summary


def _with_counts(rec: FileRecord, entries: int) -> FileRecord:
    from dataclasses import replace

    return replace(rec, status=INDEXED, entries=entries)


def _link_dicts(rec: FileRecord, links: pa.Table) -> list[dict]:
    base = {"file_key": rec.key, "realm": rec.realm, "repo": rec.repo}
    return [base | row for row in links.to_pylist()]


def _empty_links() -> pa.Table:
    from ..store import schema as S

    return S.LINKS.empty_table().select(list(LINK_COLUMNS))


def _by_path(table: pa.Table):
    """(path, that path's rows) for each path of ``table``, one slice each."""
    if not table.num_rows:
        return
    table = table.sort_by("path")
    paths = table["path"].to_pylist()
    start = 0
    for i in range(1, len(paths) + 1):
        if i == len(paths) or paths[i] != paths[start]:
            yield paths[start], table.slice(start, i - start)
            start = i


def _read(db, name: str, columns: list[str]) -> pa.Table:
    return db.open_table(name).search().select(columns).limit(None).to_arrow()


def open_shard(realm: str, repo: str, uri: str, db=None) -> ShardRows:
    """The repo's shard, if its rows can stand in for a local parse; raises
    ShardUnusable (or SharedIndexError) saying why not."""
    db = db if db is not None else connect(uri)
    shard = shard_name(repo_identity(repo))
    names = set(table_names(db))
    manifest = read_manifest(db, shard, names)
    if manifest is None:
        raise ShardUnusable("no shard for this repo in the shared index")
    if manifest.get("extractor_version") != extractor_version():
        raise ShardUnusable("published by another extractor version: parsing locally")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise ShardUnusable(f"store schema {manifest.get('schema_version')}, "
                            f"this index uses {SCHEMA_VERSION}: parsing locally")
    files = _read(db, table_name(shard, "files"), ["path", "hash", "status"])
    hashes = {p: h for p, h, s in zip(files["path"].to_pylist(), files["hash"].to_pylist(),
                                      files["status"].to_pylist()) if s == INDEXED and h}
    return ShardRows(realm=realm, repo=repo, uri=uri, shard=shard,
                     commit=manifest.get("commit") or "", db=db, hashes=hashes)


def open_shards(settings, repos: list[tuple[str, str]]) -> tuple[dict, list[dict]]:
    """{(realm, repo): ShardRows} for those repos whose realm names a shared
    index and whose shard is usable, and a note per repo that is not."""
    out, notes, dbs = {}, [], {}
    for realm, repo in repos:
        uri = settings.shared.get(realm)
        if not uri:
            continue
        try:
            if uri not in dbs:
                dbs[uri] = connect(uri)
            out[(realm, repo)] = open_shard(realm, repo, uri, dbs[uri])
        except (ShardUnusable, SharedIndexError) as exc:
            notes.append({"realm": realm, "repo": repo,
                          "reason": getattr(exc, "message", None) or str(exc)})
        except Exception as exc:  # noqa: BLE001 - an object store's failure must not stop indexing
            notes.append({"realm": realm, "repo": repo, "reason": f"{type(exc).__name__}: {exc}"})
    for note in notes:
        log.info("shared rows not used realm=%s repo=%s reason=%s", note["realm"], note["repo"],
                 note["reason"])
    return out, notes
