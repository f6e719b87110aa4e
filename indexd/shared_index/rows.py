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
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..enrich.summarizer import docstring_summary
from ..model import INDEXED, FileRecord
from ..parse.languages import is_code
from ..stat_sidecar import extractor_version
from ..store.packed import ENTRY_COLUMNS, pack_tables
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
    shard: str
    db: object
    hashes: dict[str, str] = field(default_factory=dict)   # path -> content hash (indexed files)
    _entries: dict | None = None     # path -> Arrow slice of the entries, in source order
    _links: dict | None = None       # path -> Arrow slice of the links table
    # Paths whose rows were handed out: dropped from the dicts above, so a
    # repo's tables leave memory once its files are copied.
    _taken: set = field(default_factory=set)

    def writes(self, records: list[FileRecord], packed: bool, summaries: bool):
        """(FileWrite per copied file, paths to parse after all) for these
        local records, each of which matched ``hashes``. Columnar: one pass
        over the batch's rows, then a slice per file."""
        from ..store import FileWrite

        self._load([r.path for r in records])
        parts = [(rec, self._entries.pop(rec.path, None)) for rec in records]
        links_of = {rec.path: self._links.pop(rec.path, None) for rec in records}
        self._taken.update(links_of)
        parse = [rec.path for rec, part in parts if part is None or not part.num_rows]
        parts = [(rec, part) for rec, part in parts if part is not None and part.num_rows]
        if not parts:
            return [], parse
        table = pa.concat_tables([part for _, part in parts])
        table, keep = _localized(table, parts, summaries)
        out, at = [], 0
        for (rec, part), ok in zip(parts, keep):
            n = part.num_rows
            if not ok:
                parse.append(rec.path)
                continue
            rows = table.slice(at, n)
            at += n
            rec = _with_counts(rec, n)
            links = links_of[rec.path] or _empty_links()
            if packed:
                out.append(FileWrite(rec, [], [], packed=pack_tables(rows, links)))
            else:
                out.append(FileWrite(rec, [r | {"vector": None} for r in rows.to_pylist()],
                                     _link_dicts(rec, links)))
        return out, parse

    def _load(self, paths: list[str]) -> None:
        """The shard's rows: on first use, those of every file it lists (one
        read of each table per run, however many batches ask)."""
        if self._entries is None:
            self._entries, self._links = {}, {}
            self._read_rows(sorted(self.hashes))
        missing = [p for p in paths if p not in self._entries and p not in self._taken]
        if missing:   # not listed when the shard was opened: read them now
            self._read_rows(missing)

    def _read_rows(self, wanted: list[str]) -> None:
        value_set = pa.array(wanted, pa.string())
        entries = _read(self.db, table_name(self.shard, "entries"),
                        [c for c in ENTRY_COLUMNS if c not in LOCAL_ENTRY_COLUMNS])
        entries = entries.filter(pc.is_in(entries["path"], value_set=value_set))
        # Source order within a file: what a parse numbers same-named entries by.
        entries = entries.sort_by([("path", "ascending"), ("start_line", "ascending"),
                                   ("end_line", "ascending")])
        self._entries.update(_by_path(entries, sort=False))
        links = _read(self.db, table_name(self.shard, "links"), list(LINK_COLUMNS))
        links = links.filter(pc.is_in(links["path"], value_set=value_set))
        self._links.update(_by_path(links))
        for path in wanted:
            self._entries.setdefault(path, None)


def _localized(table: pa.Table, parts: list, summaries: bool) -> tuple[pa.Table, list[bool]]:
    """The batch's shared rows with this machine's columns (ids numbered as
    store/rows.py numbers them: the nth entry of a (kind, qualname) in the
    file, in source order) and the summaries a local parse gives, minus the
    files whose rows cannot be made so (False in the list)."""
    kinds = table["kind"].to_pylist()
    quals = table["qualname"].to_pylist()
    summary = table["summary"].to_pylist()
    source = table["summary_source"].to_pylist()
    ids, keys, realms, repos, names, mask, keep = [], [], [], [], [], [], []
    i = 0
    for rec, part in parts:
        n = part.num_rows
        code = is_code(rec.language)
        seen: dict[tuple, int] = {}
        ok = True
        for j in range(i, i + n):
            fits = _summary_fits(j, table, summary, source, summaries, code)
            ok = ok and fits
            key = (kinds[j], quals[j])
            nth = seen.get(key, 0)
            seen[key] = nth + 1
            ids.append(entry_id(rec.key, kinds[j], quals[j], nth))
        keep.append(ok)
        mask.extend([ok] * n)
        keys.extend([rec.key] * n)
        realms.extend([rec.realm] * n)
        repos.extend([rec.repo] * n)
        names.extend([PurePosixPath(rec.repo).name] * n)
        i += n
    columns = {"id": ids, "file_key": keys, "realm": realms, "repo": repos, "repo_name": names,
               "summary": summary, "summary_source": source,
               "embed_hash": pa.nulls(len(ids), pa.string())}
    for name, values in columns.items():
        col = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, col)
        else:
            table = table.append_column(name, col)
    return table.filter(pa.array(mask, pa.bool_())), keep


# What the publisher drops (publish.LOCAL_COLUMNS) and the reader rebuilds.
LOCAL_ENTRY_COLUMNS = ("realm", "repo", "repo_name", "file_key", "id")


def _summary_fits(j: int, table: pa.Table, summary: list, source: list, summaries: bool,
                  code: bool) -> bool:
    """Give row ``j`` the summary a local parse would (in ``summary`` /
    ``source``); False where that cannot be rebuilt from the row alone."""
    if not summaries:
        summary[j], source[j] = "", ""
        return True
    if source[j] == "docstring":
        return True
    if source[j] == "llm":
        row = table.slice(j, 1).to_pylist()[0]
        if code and row.get("kind") == "file":
            return False   # a code file's own summary needs the file's text
        # The LLM summary comes back through the summary cache when this
        # machine summarizes with the same model (subscribe._seed_summaries).
        summary[j], source[j] = docstring_summary(row), "docstring"
        return True
    return False   # published without summaries


def _with_counts(rec: FileRecord, entries: int) -> FileRecord:
    return replace(rec, status=INDEXED, entries=entries)


def _link_dicts(rec: FileRecord, links: pa.Table) -> list[dict]:
    base = {"file_key": rec.key, "realm": rec.realm, "repo": rec.repo}
    return [base | row for row in links.to_pylist()]


def _empty_links() -> pa.Table:
    from ..store import schema as S

    return S.LINKS.empty_table().select(list(LINK_COLUMNS))


def _by_path(table: pa.Table, sort: bool = True):
    """(path, that path's rows) for each path of ``table``, one slice each
    (the boundaries found by Arrow: a link table has ~1,000 rows a file)."""
    if not table.num_rows:
        return
    if sort:
        table = table.sort_by("path")
    paths = table["path"]
    changed = pc.not_equal(paths.slice(1), paths.slice(0, len(paths) - 1))
    starts = [0] + [int(i) + 1 for i in np.flatnonzero(changed.to_numpy(zero_copy_only=False))]
    ends = starts[1:] + [len(paths)]
    for start, end in zip(starts, ends):
        yield paths[start].as_py(), table.slice(start, end - start)


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
    return ShardRows(realm=realm, repo=repo, shard=shard, db=db, hashes=hashes)


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
