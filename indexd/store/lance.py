"""The LanceDB store: the only module that imports lancedb.

Tables: ``files`` (one row per file, also the stat cache), ``entries``
(symbols, sections, keys, files), ``links`` (document links and code
references; edges later), ``meta`` (schema version, model id).

Atomicity: a batch of files is written as delete-then-add on ``entries`` and
``links`` and then on ``files``, all under the store's write lock, so readers
in this process (the daemon's queries) see a file's rows either all old or
all new. merge_insert would make each table's swap one commit, but measured
10x slower (250 ms vs 25 ms for one 300-symbol file in a 76k-row table), and
freshness is the product. Entries go before files: if we die in between, the
files row still holds the old stat/hash and the next reconcile reparses the
file; the reverse order could leave a new hash pointing at old entries.
``update_entries`` (vectors, summaries) is a delete-then-add too: a kill in
between loses rows under a files row that still matches the disk, which the
pipeline's full plan detects by comparing ``files.entries`` with
``entry_counts`` and heals by reparsing.
Readers in other processes (the CLI without a daemon) may glimpse a file
between two commits while a one-shot index is running.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from contextlib import contextmanager
import warnings
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

from ..errors import StoreError, Stopping
from ..model import FileRecord
from . import schema as S
from .file_cache import FileRecordCache

log = logging.getLogger(__name__)

# LanceDB cache budgets (measured: docs/benchmarks.md, "Daemon memory").
INDEX_CACHE_BYTES = 64 << 20
METADATA_CACHE_BYTES = 32 << 20

# Rebuild the FTS index once this many rows are not covered by it; rows added
# after a build are still found (flat scan) so this is about speed only.
FTS_REBUILD_UNINDEXED = 2000


@dataclass
class FileWrite:
    """Everything stored for one file: its record, entry rows and link rows."""

    record: FileRecord
    entries: list[dict]
    links: list[dict]
    # Or the same rows as Arrow IPC (entries, links) from a parse worker
    # (store/packed.py); the one-shot's writer never builds their dicts.
    packed: tuple[bytes, bytes] | None = None


class RWLock:
    """Many readers or one writer (readers never see a half-replaced file)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextmanager
    def read(self):
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self):
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._writer = True
            while self._readers:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _drop_vectors(rows: list[dict]) -> None:
    """Vectors a model switch made stale between the fill and the write (the
    switch holds the write lock): those rows are written without one and the
    new model's embed stage gives them theirs."""
    for row in rows:
        row["vector"] = row["embed_hash"] = None


def _in_list(column: str, values) -> str:
    return f"{column} IN ({', '.join(_sql(v) for v in values)})"


KEY_INDEXES = (("entries", "file_key"), ("links", "file_key"))
CACHE_CHUNK = 4000   # keys per vector-cache lookup
# What an entry's embedding text is made of (summary_source: the recipe adds a model
# summary to the text, texts.embed_text), and what the embed stage checks rows by.
EMBED_COLUMNS = ["id", "path", "lang", "kind", "name", "qualname", "signature", "doc", "summary",
                 "summary_source", "body", "content_hash", "file_key"]
WRITER_HOT_OPS = ("replace_files", "delete_files", "delete_repo")
FILE_FIELDS = ("realm", "repo", "path", "hash", "size", "mtime_ns", "inode", "language",
               "status", "reason", "indexed_at", "entries")


class Store:
    def __init__(self, path: Path, *, dim: int | None = None, retention_s: int = 300,
                 fault_hook=None):
        from indexd.store.lancedb_import import lancedb as import_lancedb

        lancedb = import_lancedb()

        self.path = Path(path)
        self.dim = dim or S.DEFAULT_DIM
        self.retention = timedelta(seconds=retention_s)
        # Tests inject failures here (disk full, read-only) to prove the
        # callers report and retry instead of corrupting anything.
        self.fault_hook = fault_hook
        self.lock = RWLock()
        self.file_cache = FileRecordCache()   # files rows by repo, per table version
        self._meta_cache: tuple[int, dict] | None = None
        # The one writer's mutex: a unit of work that reads rows and then writes
        # what it derived from them (a batch's annotations + rows, an annotation
        # and its entry) holds it, so no other writer slips in between.
        self.writer = threading.RLock()
        # Index builds from two threads (the writer, a query finding no index
        # yet, a model switch) race on LanceDB's temp files: one at a time.
        self._index_lock = threading.Lock()
        # The daemon's hot keyword index (text_index.py), kept in step with
        # every entries write below; None in one-shot and offline readers.
        self.text_index = None
        self.vector_index = None   # the same for vectors (vector_index.py)
        # Tests: called with a hot index's name once it is published and before
        # its build reads the table, the window other threads' writes reach first.
        self.before_hot_build_reads = None
        # The writer's hot keyword index refreshes: seconds in all and when the
        # last one committed (a batch's "searchable" time, batch_timing.py).
        self.hot_s = 0.0
        self.hot_at = 0.0
        self.vectors_at = 0.0   # the last write's end (write())
        try:
            self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
            # A consistency interval of 0 makes readers in other processes see
            # new commits; the default pins them to the version they opened.
            # LanceDB's default caches (6 GB of index, 1 GB of metadata) grow
            # with every version the enrich stage commits: the daemon went from
            # 640 to 960 MB over 10 minutes of embedding the stdlib. Bounded here.
            self.session = lancedb.Session(index_cache_size_bytes=INDEX_CACHE_BYTES,
                                           metadata_cache_size_bytes=METADATA_CACHE_BYTES)
            self.db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(0),
                                      session=self.session)
            self._open_tables()
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreError(f"cannot open store at {self.path}: {exc}; "
                             f"remove it to rebuild: indexd reset") from exc

    # -- setup -------------------------------------------------------------
    def _open_tables(self) -> None:
        names = set(self._table_names())
        self.meta = self._table("meta", S.META, names)
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", str(S.SCHEMA_VERSION))
        elif int(version) > S.SCHEMA_VERSION:
            raise StoreError(f"store schema v{version} is newer than this indexd "
                             f"(v{S.SCHEMA_VERSION}); upgrade indexd or run: indexd reset")
        elif int(version) < S.SCHEMA_VERSION:
            self._migrate(int(version), names)
        self.files = self._table("files", S.FILES, names)
        self.entries = self._table("entries", S.entries_schema(self.dim), names)
        self.links = self._table("links", S.LINKS, names)
        # The table decides: a store made for another model keeps its dimension
        # until switch_model() rebuilds it.
        self.dim = self.entries.schema.field("vector").type.list_size
        self.vector_cache = self._table(f"vector_cache_{self.dim}", S.vector_cache_schema(self.dim), names)
        self.summary_cache = self._table("summary_cache", S.SUMMARY_CACHE, names)
        self.annotations = self._table("annotations", S.ANNOTATIONS, names)
        self.coverage = self._table("coverage", S.COVERAGE, names)
        self.shared_files = self._table("shared_files", S.SHARED_FILES, names)
        self._origins: dict[str, dict] | None = None   # shared_files by key, read once
        self._other_caches: dict[int, object] = {}      # vector caches of other dimensions
        self.models_switched = 0   # switch_model's changes: a write filled before one drops its vectors

    def _table_names(self) -> list[str]:
        try:
            result = self.db.list_tables()
            return list(getattr(result, "tables", result))
        except AttributeError:  # older lancedb
            return list(self.db.table_names())

    def _table(self, name: str, schema: pa.Schema, names: set):
        if name in names:
            return self.db.open_table(name)
        return self.db.create_table(name, schema=schema, exist_ok=True)

    def _migrate(self, version: int, names: set) -> None:
        # v1 is the first schema; later versions add steps here. Tables whose
        # content is derived from source can be dropped and rebuilt.
        log.info("store migrate from=%s to=%s", version, S.SCHEMA_VERSION)
        self.set_meta("schema_version", str(S.SCHEMA_VERSION))

    # -- meta --------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A meta value: the small table is read whole once per version (a save's
        plan asks for its extractor's on every batch)."""
        version = self.meta.version
        if self._meta_cache is None or self._meta_cache[0] != version:
            rows = self.meta.search().limit(None).to_list()
            self._meta_cache = (version, {r["key"]: r["value"] for r in rows})
        return self._meta_cache[1].get(key)

    def set_meta(self, key: str, value: str) -> None:
        data = pa.Table.from_pylist([{"key": key, "value": value}], schema=S.META)
        (self.meta.merge_insert("key").when_matched_update_all()
         .when_not_matched_insert_all().execute(data))

    # -- files -------------------------------------------------------------
    def file_records(self, realm: str | None = None, repo: str | None = None,
                     paths: list[str] | None = None) -> dict[str, FileRecord]:
        """Records keyed by repo-relative path (when repo given) or by key;
        ``paths``: only these (a save's batch reads its files, not the repo's)."""
        if realm is not None and repo is not None:
            return self._repo_records(realm, repo, paths)
        where = []
        if realm is not None:
            where.append(f"realm = {_sql(realm)}")
        if repo is not None:
            where.append(f"repo = {_sql(repo)}")
        if paths is not None:
            where.append(_in_list("path", paths) if paths else "false")
        with self.lock.read():
            table = self._scan(self.files, " AND ".join(where) or None)
        records = map(_file_record, table.to_pylist())
        return {rec.path if repo is not None else rec.key: rec for rec in records}

    def _repo_records(self, realm: str, repo: str, paths: list[str] | None) -> dict[str, FileRecord]:
        """One repo's records from memory while the table is at the copy's version
        (store/file_cache.py), else read whole, which refills the copy.

        From memory without the read lock: a writer halfway through a swap has
        committed its delete, so the table is past the copy's version and the
        read takes the locked path; one that has not, leaves the copy as the
        table is. So a plan or a status call does not wait for the enrich
        thread's vector writes, which hold the write lock."""
        held = self.file_cache.get(self.files.version, realm, repo, paths)
        if held is not None:
            return held
        with self.lock.read():
            version = self.files.version
            held = self.file_cache.get(version, realm, repo, paths)
            if held is not None:
                return held
            where = f"realm = {_sql(realm)} AND repo = {_sql(repo)}"
            records = {rec.path: rec for rec in map(_file_record,
                                                    self._scan(self.files, where).to_pylist())}
        self.file_cache.fill(version, realm, repo, records)
        return records if paths is None else {p: records[p] for p in paths if p in records}

    def entry_counts(self, realm: str, repo: str) -> dict[str, int]:
        """Entry rows per file key in one repo (to check files' ``entries``)."""
        where = f"realm = {_sql(realm)} AND repo = {_sql(repo)}"
        with self.lock.read():
            keys = self._scan(self.entries, where, ["file_key"]).column("file_key")
        counts = pa.compute.value_counts(keys).to_pylist() if len(keys) else []
        return {c["values"]: c["counts"] for c in counts}

    def _scan(self, table, where: str | None, columns=None) -> pa.Table:
        query = table.search()
        if where:
            query = query.where(where)
        if columns:
            query = query.select(columns)
        return query.limit(None).to_arrow() if hasattr(query, "to_arrow") else query.to_arrow()

    # -- writes ------------------------------------------------------------
    def write(self, writes: list[FileWrite], before_table=None) -> None:
        """Replace the rows of these files (entries, links, then file rows).

        The hot keyword index first: searches answer from it, and the table's
        commits take longer than its update (a save is searchable that much
        sooner). ``before_table(rows)`` then runs on the entry rows (the daemon's
        vector cache fill, which keyword search does not wait for). A table
        write that fails puts the hot index back to what the table holds."""
        if not writes:
            return
        keys = [w.record.key for w in writes]
        entries, links = self._batch_tables(writes)
        files = [_file_row(w.record) for w in writes]
        rows = None
        if self.text_index is not None or self.vector_index is not None or before_table:
            rows = entries.to_pylist() if isinstance(entries, pa.Table) else entries
        self._hot("text_index", "replace_files", keys, rows)
        models = self.models_switched
        if before_table is not None and rows:
            before_table(rows)
            entries = rows
        try:
            self._fault("write")
            with self.lock.write():
                if rows and self.models_switched != models:
                    _drop_vectors(rows)
                self._swap(self.entries, "file_key", keys, entries, S.entries_schema(self.dim))
                self._swap(self.links, "file_key", keys, links, S.LINKS)
                self._swap_files(keys, files)
        except Exception as exc:
            self._resync_text_index(keys)   # whatever failed: the index must not run ahead
            if isinstance(exc, (OSError, RuntimeError, ValueError)):
                raise StoreError(f"store write failed: {exc}", {"retryable": True}) from exc
            raise
        self._hot("vector_index", "replace_files", keys, rows)
        self.vectors_at = time.time()   # the rows' vectors, where they had them, answer from here
        self._drop_origins([w.record.key for w in writes
                            if self.shared_origin(w.record.key, w.record.hash) is None])

    def write_words(self, writes: list[FileWrite]) -> None:
        """These files' rows into the hot keyword index now, ahead of ``write``
        (which takes the writer lock and brings the index in step again)."""
        if self.text_index is None or not writes or any(w.packed for w in writes):
            return
        self._hot("text_index", "replace_files", [w.record.key for w in writes],
                  [row for w in writes for row in w.entries])

    def _resync_text_index(self, keys: list[str]) -> None:
        """The hot keyword index holds these files as the table does again."""
        if self.text_index is None:
            return
        from .text_index import COLUMNS

        try:
            held = self.entries_where(_in_list("file_key", keys), COLUMNS)
        except Exception as exc:  # noqa: BLE001 - the table is unreadable: stop trusting the index
            log.warning("keyword index not put back after a failed write, searching the table: %s", exc)
            _turn_off(self.text_index, exc)
            return
        self._hot("text_index", "replace_files", keys, held)

    # -- the hot keyword and vector indexes ---------------------------------
    def build_text_index(self, stop=None) -> int:
        """Build the daemon's keyword index from the entries table (the writer
        calls this before its first batch; searches use it once built).
        ``stop``: asked per batch read; true raises errors.Stopping."""
        from .text_index import COLUMNS, TextIndex

        index = TextIndex()
        self.text_index = index   # writes from now on reach it (after the build's lock)
        self._hot_build_window("text_index")
        batches = _until(self.scan_batches("entries", None, COLUMNS), stop)
        return index.build(b.to_pylist() for b in batches)

    def build_vector_index(self, stop=None) -> int:
        """The same for vectors: exact search over a matrix in memory."""
        from .vector_index import COLUMNS, VectorIndex

        index = VectorIndex(self.dim)
        self.vector_index = index
        self._hot_build_window("vector_index")
        total = self.count("entries", "vector IS NOT NULL")
        return index.build(_until(self.scan_batches("entries", "vector IS NOT NULL", COLUMNS),
                                  stop), total)

    def _hot_build_window(self, name: str) -> None:
        if self.before_hot_build_reads is not None:
            self.before_hot_build_reads(name)

    def _hot(self, name: str, op: str, *args) -> None:
        """Apply a write to a hot index (its lock is the innermost, so this may
        run under the table's: store/build_window.py). A failure turns it off:
        searches fall back to the table's own indexes, nothing is lost, and the
        daemon builds it again (Engine._heal_hot_indexes)."""
        index = getattr(self, name)
        if index is None:
            return
        started = time.perf_counter()
        changed = None
        try:
            changed = getattr(index, op)(*args)
        except Exception as exc:  # noqa: BLE001 - the table stays the truth
            log.warning("%s update failed, searching the table instead: %s", name, exc)
            _turn_off(index, exc)
        if op in WRITER_HOT_OPS:   # the enrich thread's upserts are not a batch's
            self.hot_s += time.perf_counter() - started
            if name == "text_index" and changed is not False:   # False: nothing to write
                self.hot_at = time.time()

    def _batch_tables(self, writes: list[FileWrite]):
        """A batch's entry and link rows: dict lists, or one Arrow table each
        when some came packed from the workers (the two are never mixed in
        one table: dict rows are converted and concatenated)."""
        entries = [row for w in writes for row in w.entries]
        links = [row for w in writes for row in w.links]
        if not any(w.packed for w in writes):
            return entries, links
        from .packed import unpack_entries, unpack_links

        etables = [unpack_entries([w.packed[0] for w in writes if w.packed], self.dim)]
        ltables = [unpack_links([(w.record, w.packed[1]) for w in writes if w.packed])]
        if entries:
            etables.append(pa.Table.from_pylist(entries, schema=S.entries_schema(self.dim)))
        if links:
            ltables.append(pa.Table.from_pylist(links, schema=S.LINKS))
        return pa.concat_tables(etables), pa.concat_tables(ltables)

    def _swap(self, table, column: str, keys: list[str], rows, schema) -> None:
        """Delete these keys' rows, then add ``rows`` (dicts or an Arrow table)."""
        for start in range(0, len(keys), 500):
            table.delete(_in_list(column, keys[start:start + 500]))
        if not isinstance(rows, pa.Table):
            rows = pa.Table.from_pylist(rows, schema=schema) if rows else None
        if rows is not None and rows.num_rows:
            table.add(rows, on_bad_vectors="null")

    def _swap_files(self, keys: list[str], rows: list[dict]) -> None:
        self._commit_files(lambda: self._swap(self.files, "key", keys, rows, S.FILES),
                           put=map(_file_record, rows))

    def _commit_files(self, commit, put=(), drop=()) -> None:
        """Commit to the files table (under the write lock) and move the in-memory
        copy along: ``put`` records, ``drop`` keys; a failed commit drops the copy."""
        before = self.files.version
        try:
            commit()
        except BaseException:
            self.file_cache.clear()
            raise
        self.file_cache.wrote(before, self.files.version, put=put, drop=drop)

    def write_records(self, records: list[FileRecord]) -> None:
        """Refresh file rows only (stat changed, content did not)."""
        if not records:
            return
        try:
            self._fault("write")
            with self.lock.write():
                self._swap_files([r.key for r in records], [_file_row(r) for r in records])
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"store write failed: {exc}", {"retryable": True}) from exc

    def delete_files(self, keys: list[str]) -> None:
        if not keys:
            return
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            try:
                self._fault("delete")
                with self.lock.write():
                    self.entries.delete(_in_list("file_key", chunk))
                    self.links.delete(_in_list("file_key", chunk))
                    self._commit_files(lambda: self.files.delete(_in_list("key", chunk)),
                                       drop=chunk)
            except (OSError, RuntimeError, ValueError) as exc:
                raise StoreError(f"store delete failed: {exc}", {"retryable": True}) from exc
            self._hot("text_index", "delete_files", chunk)
            self._hot("vector_index", "delete_files", chunk)
            self._drop_origins(chunk)

    def stored_repos(self, besides=()) -> set[tuple[str, str]]:
        """Every (realm, repo) that has rows in files, entries or links, but those in
        ``besides``: filtered inside the scan, since reading the two columns of every
        row took 0.7 s on the stdlib copy (a million links) and ~4 s of the daemon's
        first batch while the warm-up read the store too; filtered, 0.07 s."""
        out: set[tuple[str, str]] = set()
        where = " OR ".join(f"(realm = {_sql(realm)} AND repo = {_sql(repo)})"
                            for realm, repo in sorted(besides))
        where = f"NOT ({where})" if where else None
        with self.lock.read():
            for table in (self.files, self.entries, self.links):
                pairs = self._scan(table, where, ["realm", "repo"])
                if len(pairs):
                    out |= set(zip(pairs.column("realm").to_pylist(),
                                   pairs.column("repo").to_pylist()))
        return out

    def delete_repo(self, realm: str, repo: str) -> None:
        """Drop every row of one repo of one realm (annotations, user data, stay)."""
        where = f"realm = {_sql(realm)} AND repo = {_sql(repo)}"
        try:
            self._fault("delete")
            with self.writer, self.lock.write():
                self.file_cache.clear()   # refilled from the table by the next read
                for table in (self.entries, self.links, self.files):
                    table.delete(where)
                self.coverage.delete(f"realm = {_sql(realm)} AND (src_repo = {_sql(repo)} "
                                     f"OR dst_repo = {_sql(repo)})")
                self.shared_files.delete(where)
                self._origins = None
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"store delete failed: {exc}", {"retryable": True}) from exc
        self._hot("text_index", "delete_repo", realm, repo)
        self._hot("vector_index", "delete_repo", realm, repo)

    # -- what came from a team's shared index ----------------------------------
    def shared_origins(self) -> dict[str, dict]:
        """shared_files rows by file key (read once, then kept in step)."""
        if self._origins is None:
            with self.lock.read():
                rows = self._scan(self.shared_files, None).to_pylist()
            self._origins = {r["key"]: r for r in rows}
        return self._origins

    def shared_origin(self, key: str, content_hash: str | None) -> dict | None:
        """The shared index's row for this file while it holds the content it had."""
        row = self.shared_origins().get(key)
        return row if row is not None and row["hash"] == content_hash else None

    def put_shared_origins(self, realm: str, repo: str, rows: list[dict]) -> None:
        """One repo's shared_files rows become ``rows``."""
        where = f"realm = {_sql(realm)} AND repo = {_sql(repo)}"
        try:
            with self.writer, self.lock.write():
                self.shared_files.delete(where)
                if rows:
                    self.shared_files.add(pa.Table.from_pylist(rows, schema=S.SHARED_FILES))
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"store write failed: {exc}", {"retryable": True}) from exc
        self._origins = None

    def _drop_origins(self, keys: list[str]) -> None:
        """Files written again with other content, or gone: no longer the shard's."""
        held = self.shared_origins()
        gone = [k for k in keys if k in held]
        if not gone:
            return
        for start in range(0, len(gone), 500):
            chunk = gone[start:start + 500]
            try:
                with self.lock.write():
                    self.shared_files.delete(_in_list("key", chunk))
            except (OSError, RuntimeError, ValueError) as exc:
                raise StoreError(f"store write failed: {exc}", {"retryable": True}) from exc
            for k in chunk:
                held.pop(k, None)

    def _fault(self, op: str) -> None:
        if self.fault_hook is not None:
            self.fault_hook(op)

    # -- reads -------------------------------------------------------------
    def entry_hashes(self, file_keys: list[str]) -> dict[str, str]:
        """Entry id -> content hash of these files' rows as the table holds them."""
        if not file_keys:
            return {}
        return {r["id"]: r["content_hash"]
                for r in self.entries_where(_in_list("file_key", file_keys), ["id", "content_hash"])}

    def entries_where(self, where: str | None, columns=None, limit: int | None = None) -> list[dict]:
        query = self.entries.search()
        if where:
            query = query.where(where)
        if columns:
            query = query.select(columns)
        with self.lock.read():
            return query.limit(limit).to_list()

    def scan_batches(self, table: str, where: str | None, columns: list[str],
                     batch_size: int = 16_384):
        """A table's rows as Arrow record batches, streamed under the read lock.

        For whole-table readers (the graph build): the whole links table as one
        Arrow table plus its sorted copies was the daemon's largest transient.
        """
        query = getattr(self, table).search()
        if where:
            query = query.where(where)
        with self.lock.read():
            yield from query.select(columns).limit(None).to_batches(batch_size)

    def fts(self, text: str, where: str | None, limit: int, columns=None) -> list[dict]:
        for attempt in range(4):
            query = self.entries.search(text, query_type="fts", fts_columns="search_text")
            if where:
                query = query.where(where, prefilter=True)
            if columns:
                query = query.select(columns)
            try:
                with self.lock.read():
                    return query.limit(limit).to_list()
            except (ValueError, RuntimeError) as exc:
                msg = str(exc).lower()
                if "not found" in msg and attempt < 3:
                    # An index rebuild replaced the files this query had
                    # resolved; the next attempt sees the new version.
                    time.sleep(0.05 * (attempt + 1))
                    continue
                if "index" not in msg or attempt >= 3:
                    raise
                self.ensure_fts()
        raise StoreError("full-text search failed after retries", {"retryable": True})

    def count(self, table: str, where: str | None = None) -> int:
        with self.lock.read():
            return getattr(self, table).count_rows(where)

    # -- upkeep ------------------------------------------------------------
    def ensure_fts(self, force: bool = False) -> None:
        """Build the full-text index if missing, or rebuild it when much is unindexed."""
        with self._index_lock:
            with self.lock.read():
                stats = self._fts_stats()
                empty = self.entries.count_rows() == 0
            if stats is not None and not force and stats.num_unindexed_rows < FTS_REBUILD_UNINDEXED:
                return
            if stats is None and empty and not force:
                return
            try:
                from lancedb.index import FTS   # lancedb is loaded by now (open_store)

                self.entries.create_index("search_text", replace=True,
                                          config=FTS(with_position=False))
            except (OSError, RuntimeError, ValueError) as exc:
                # The rows are stored; unindexed rows are still searched (flat
                # scan), so a failed build is retried later, not fatal.
                log.warning("fts index build failed, will retry: %s", exc)

    def ensure_key_indexes(self) -> None:
        """BTREE indexes on the columns a file's rows are replaced by (the daemon
        calls this; a one-shot does not pay for them). Without one, deleting a
        saved file's links scanned every link row: 161 ms (31 ms CPU) on the
        stdlib's 810k links at load 15, 11 ms (3 ms CPU) with it. Rows added
        later are scanned until compaction (``optimize``) folds them in."""
        with self._index_lock, self.lock.write():
            for name, column in KEY_INDEXES:
                table = getattr(self, name)
                try:
                    if any(column in idx.columns for idx in table.list_indices()):
                        continue
                    if table.count_rows():
                        from lancedb.index import BTree

                        table.create_index(column, config=BTree())
                except (OSError, RuntimeError, ValueError) as exc:
                    # Deletes still work (a scan); retried at the next upkeep.
                    log.warning("key index on %s.%s not built: %s", name, column, exc)

    def _fts_stats(self):
        try:
            return self.entries.index_stats("search_text_idx")
        except Exception:  # noqa: BLE001 - missing index reads as "build it"
            return None

    def optimize(self, purge: bool = False) -> None:
        """Compact fragments and drop old versions (all of them when purge).

        A purge also rewrites the text tables whose live version still has
        deletion files: compaction leaves a big fragment with a few deleted
        rows as it is (it rewrites one past 10 % deleted), so a deleted file's
        text stayed in a live data file (measured: one file of 300 deleted).
        The rewrite drops the full-text index: callers run ensure_fts after.
        """
        older = timedelta(0) if purge else self.retention
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for table in (self.entries, self.links, self.files, self.meta, self.vector_cache,
                          self.summary_cache, self.annotations, self.coverage):
                table.optimize(cleanup_older_than=older)
                # The vector cache holds hashes and vectors, no text, and is the big one.
                if purge and table is not self.vector_cache and self._has_deletions(table):
                    self._rewrite_live_rows(table)
                    table.optimize(cleanup_older_than=older)

    def _has_deletions(self, table) -> bool:
        """True while a live fragment still holds rows marked deleted (Lance's _deletions/)."""
        try:
            return any((self.path / f"{table.name}.lance" / "_deletions").iterdir())
        except OSError:   # no deletion ever: the folder does not exist
            return False

    def _rewrite_live_rows(self, table) -> None:
        """Replace the table by its live rows, streamed, in one commit (atomic)."""
        rows = table.search().limit(None).to_batches()
        table.add(rows, mode="overwrite", on_bad_vectors="null")

    def stats(self) -> dict:
        size = 0
        for p in self.path.rglob("*"):
            try:
                size += p.stat().st_size if p.is_file() else 0
            except OSError:
                pass   # removed by a concurrent cleanup
        return {
            "path": str(self.path), "bytes": size,
            "schema_version": S.SCHEMA_VERSION,
            "versions": self._versions(),
            "rows": {name: self.count(name) for name in ("files", "entries", "links")},
            "cache_bytes": self.session.size_bytes,
        }

    def _versions(self) -> dict:
        with self.lock.read():
            return {name: len(getattr(self, name).list_versions())
                    for name in ("files", "entries", "links")}

    # -- vectors (the semantic layer) ---------------------------------------
    def switch_model(self, model_id: str, dim: int, recipe: str = "default",
                     spec: str | None = None) -> bool:
        """Make the store hold vectors of this model and text recipe only; True
        when it changed.

        A new dimension rebuilds the entries table without vectors; the same
        dimension with another model, or the same model over another recipe's
        texts (enrich/texts.py), clears every vector. Either way no query can
        mix two kinds of vectors; the embed stage refills in the background.
        A store from before the recipe was recorded was made with "default".
        """
        same = (self.get_meta("embed_model") == model_id and dim == self.dim
                and (self.get_meta("embed_recipe") or "default") == recipe)
        # The config's name for the model (enrich/later_model.py); another model
        # that a caller names by no config leaves it unknown ("").
        name = spec if spec is not None else (None if same else "")
        if name is not None and (self.get_meta("embed_spec") or "") != name:
            self.set_meta("embed_spec", name)
        if same:
            return False
        with self._index_lock, self.lock.write():
            self.models_switched += 1
            if dim != self.dim:
                # Columns, not row dicts: a big realm's entries as Python dicts took
                # several times the table's size (7.4 GB of RSS for 250 repos).
                keep = _without_vectors(self.entries.search().limit(None).to_arrow(),
                                        S.entries_schema(dim))
                # One overwrite commit, not a drop and a create: a reader in another
                # process that opened the store in between found no entries table.
                self.dim = dim
                self.entries = self.db.create_table("entries", data=keep, schema=S.entries_schema(dim),
                                                    mode="overwrite", on_bad_vectors="null")
                del keep
                names = set(self._table_names())
                self.vector_cache = self._table(f"vector_cache_{dim}", S.vector_cache_schema(dim), names)
            elif self.entries.count_rows("vector IS NOT NULL"):
                self.entries.update(where="vector IS NOT NULL", values={"vector": None, "embed_hash": None})
            if self.shared_files.count_rows():   # the shard's vectors were the old model's
                self.shared_files.delete("true")
            self._origins = None
        self.set_meta("embed_model", model_id)
        self.set_meta("embed_recipe", recipe)
        if self.vector_index is not None:   # no vector of the old model may answer
            from .vector_index import VectorIndex

            fresh = VectorIndex(dim)
            fresh.ready = True
            self.vector_index = fresh
        log.info("store model switched model=%s dim=%s recipe=%s", model_id, dim, recipe)
        self.ensure_fts(force=True)   # the table may have been rebuilt
        return True

    def rows_needing_vectors(self, limit: int, file_keys: list[str] | None = None) -> list[dict]:
        where = "vector IS NULL"
        if file_keys:
            where += " AND " + _in_list("file_key", file_keys)
        with self.lock.read():
            return self.entries.search().where(where).select(EMBED_COLUMNS).limit(limit).to_list()

    def count_missing_vectors(self) -> int:
        with self.lock.read():
            return self.entries.count_rows("vector IS NULL")

    def _cache_of(self, dim: int | None):
        """The vector cache of ``dim`` (default: the store's): another model's
        vectors are computed into theirs before it takes over (later_model.py)."""
        if dim is None or dim == self.dim:
            return self.vector_cache
        table = self._other_caches.get(dim)
        if table is None:
            table = self._other_caches[dim] = self._table(
                f"vector_cache_{dim}", S.vector_cache_schema(dim), set(self._table_names()))
        return table

    def cache_get(self, hashes: list[str], dim: int | None = None) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        cache = self._cache_of(dim)
        for start in range(0, len(hashes), CACHE_CHUNK):   # each chunk scans the cache once
            chunk = hashes[start:start + CACHE_CHUNK]
            rows = (cache.search().where(_in_list("embed_hash", chunk))
                    .select(["embed_hash", "vector"]).limit(None).to_list())
            out.update((r["embed_hash"], r["vector"]) for r in rows if r["vector"] is not None)
        return out

    def cache_put(self, model_id: str, items: dict[str, list[float]], dim: int | None = None) -> None:
        if not items:
            return
        now = time.time()
        rows = [{"embed_hash": h, "model_id": model_id, "vector": v, "used_at": now}
                for h, v in items.items()]
        cache = self._cache_of(dim)
        cache.delete(_in_list("embed_hash", list(items)))
        cache.add(pa.Table.from_pylist(rows, schema=S.vector_cache_schema(dim or self.dim)))

    def entry_ids(self) -> list[str]:
        with self.lock.read():
            return self.entries.search().select(["id"]).limit(None).to_arrow()["id"].to_pylist()

    def rows_for_embedding(self, ids: list[str]) -> list[dict]:
        """These entries' columns an embedding text is made of (texts.embed_text)."""
        with self.lock.read():
            return (self.entries.search().where(_in_list("id", ids)).select(EMBED_COLUMNS)
                    .limit(None).to_list())

    def set_vectors(self, items: dict[str, tuple[str, list[float]]],
                    expect: dict[str, str] | None = None, on_searchable=None) -> int:
        """items: entry id -> (embed_hash, vector). Rows replaced meanwhile are skipped.
        ``on_searchable(at)``: see ``update_entries``."""
        updates = {i: {"embed_hash": h, "vector": v} for i, (h, v) in items.items()}
        return self.update_entries(updates, guard="vector IS NULL", expect=expect,
                                   on_searchable=on_searchable)

    def update_entries(self, updates: dict[str, dict], guard: str | None = None,
                       expect: dict[str, str] | None = None, on_searchable=None) -> int:
        """Set some columns of some entry rows (only those still matching guard).

        ``expect`` maps id -> content_hash the update was computed from: ids are
        stable across edits, so a row rewritten meanwhile must not receive a
        vector or summary of its old text. ``on_searchable(at)``: called after a
        successful write with the time a semantic search began to find the rows
        (the daemon's matrix takes them before the table does).
        """
        if not updates:
            return 0
        where = _in_list("id", list(updates)) + (f" AND ({guard})" if guard else "")
        vectors = any("vector" in u for u in updates.values())
        with self.writer:
            with self.lock.write():
                rows = self.entries.search().where(where).limit(None).to_list()
                if expect is not None:
                    rows = [r for r in rows if expect.get(r["id"]) == r["content_hash"]]
                    where = (_in_list("id", [r["id"] for r in rows])
                             + (f" AND ({guard})" if guard else ""))
                before = [dict(r) for r in rows] if vectors else []
                for row in rows:
                    row.pop("_distance", None)
                    row.update(updates[row["id"]])
                if rows and vectors:
                    # the matrix first, as a save's words go first (write())
                    self._hot("vector_index", "set_vectors", rows)
                searchable_at = time.time()
                if rows:
                    try:
                        self._fault("vectors" if vectors else "update")
                        self.entries.delete(where)
                        self.entries.add(pa.Table.from_pylist(rows, schema=S.entries_schema(self.dim)))
                    except Exception:
                        if vectors:   # the rows as the table still holds them
                            self._hot("vector_index", "set_vectors", before)
                        raise
                if rows and on_searchable is not None:
                    # Told once the table holds them too (a failed write took them
                    # back out), with the moment the matrix began to serve them.
                    on_searchable(searchable_at if self.vector_index is not None else time.time())
            # Vectors leave the words alone; summaries and annotations do not.
            if rows and any({"summary", "search_text"} & set(u) for u in updates.values()):
                self._hot("text_index", "upsert", rows)
        return len(rows)

    def rows_needing_summary(self, limit: int, files: bool = False) -> list[dict]:
        cols = ["id", "path", "lang", "kind", "name", "qualname", "signature", "doc", "body",
                "content_hash", "file_key"]
        kind = "kind = 'file'" if files else "kind != 'file'"
        with self.lock.read():
            return (self.entries.search().where(f"summary_source IN ('', 'docstring') AND {kind}")
                    .select(cols).limit(limit).to_list())

    def summary_cache_get(self, keys: list[str]) -> dict[str, tuple[str, str]]:
        out = {}
        for start in range(0, len(keys), 500):
            rows = (self.summary_cache.search().where(_in_list("key", keys[start:start + 500]))
                    .limit(None).to_list())
            out.update((r["key"], (r["summary"], r["source"])) for r in rows)
        return out

    def summary_cache_put(self, items: dict[str, tuple[str, str]]) -> None:
        if not items:
            return
        now = time.time()
        rows = [{"key": k, "summary": s, "source": src, "used_at": now} for k, (s, src) in items.items()]
        self.summary_cache.delete(_in_list("key", list(items)))
        self.summary_cache.add(pa.Table.from_pylist(rows, schema=S.SUMMARY_CACHE))

    def vector_search(self, vector: list[float], where: str | None, limit: int, columns=None) -> list[dict]:
        if len(vector) != self.dim:   # embedded by the model the store just switched from
            return []
        clause = "vector IS NOT NULL" + (f" AND ({where})" if where else "")
        query = (self.entries.search(vector, vector_column_name="vector")
                 .distance_type("cosine").where(clause, prefilter=True))
        if columns:
            query = query.select(columns)
        with self.lock.read():
            return query.limit(limit).to_list()

    def purge_cache(self, max_rows: int, keep_model: str | None = None) -> int:
        """Drop cached vectors no entry uses, oldest first, down to max_rows;
        never ``keep_model``'s (a later model's, computed before it takes over)."""
        total = self.vector_cache.count_rows()
        if total <= max_rows:
            return 0
        with self.lock.read():
            used = {r["embed_hash"] for r in self.entries.search().where("embed_hash IS NOT NULL")
                    .select(["embed_hash"]).limit(None).to_list()}
        rows = (self.vector_cache.search().select(["embed_hash", "used_at", "model_id"])
                .limit(None).to_list())
        unused = sorted((r["used_at"] or 0, r["embed_hash"]) for r in rows
                        if r["embed_hash"] not in used and r["model_id"] != keep_model)
        drop = [h for _, h in unused[: max(0, total - max_rows)]]
        for start in range(0, len(drop), 500):
            self.vector_cache.delete(_in_list("embed_hash", drop[start:start + 500]))
        return len(drop)

    # -- annotations (agents' and people's notes; precious, never derived) ---
    def put_annotation(self, row: dict) -> None:
        """Insert or replace one note by id in a single commit (merge_insert).

        Not delete-then-add like the derived tables: a kill in between lost the
        note, which no reindex can bring back. One row per call, so merge_insert's
        cost (10x a plain add on big tables) does not matter here.
        """
        data = pa.Table.from_pylist([row], schema=S.ANNOTATIONS)
        with self.lock.write():
            (self.annotations.merge_insert("id").when_matched_update_all()
             .when_not_matched_insert_all().execute(data))

    def annotations_for(self, where: str | None = None) -> list[dict]:
        query = self.annotations.search()
        if where:
            query = query.where(where)
        with self.lock.read():
            return query.limit(None).to_list()

    # -- coverage edges (indexctl tests ingest) ------------------------------
    def replace_coverage(self, test_file_keys: list[str], rows: list[dict]) -> None:
        """The coverage edges of these test files become ``rows`` (one ingest).

        Delete-then-add like the derived tables: a kill in between loses those
        files' edges until the next ingest, never mixes two ingests' edges."""
        try:
            self._fault("write")
            with self.writer, self.lock.write():
                self._swap(self.coverage, "src_file_key", test_file_keys, rows, S.COVERAGE)
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"store write failed: {exc}", {"retryable": True}) from exc

    def coverage_rows(self, where: str | None = None) -> list[dict]:
        with self.lock.read():
            return self._scan(self.coverage, where).to_pylist()

    @staticmethod
    def destroy(path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)


def _file_record(row: dict) -> FileRecord:
    return FileRecord(**{k: row[k] for k in FILE_FIELDS})


def _file_row(rec: FileRecord) -> dict:
    return {"key": rec.key, "realm": rec.realm, "repo": rec.repo, "path": rec.path,
            "hash": rec.hash, "size": rec.size, "mtime_ns": rec.mtime_ns, "inode": rec.inode,
            "language": rec.language, "status": rec.status, "reason": rec.reason,
            "indexed_at": rec.indexed_at or time.time(), "entries": rec.entries}


def _without_vectors(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s rows in ``schema`` (another vector size) with no vector and no embed hash."""
    n = table.num_rows
    columns = [pa.nulls(n, f.type) if f.name in ("vector", "embed_hash") else
               table.column(f.name).cast(f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _turn_off(index, exc: BaseException) -> None:
    """A hot index that missed a write answers no more; ``failed`` says why
    until it is built again."""
    index.ready = False
    index.failed = f"{type(exc).__name__}: {exc}"


def _until(batches, stop):
    """``batches``, asking ``stop`` before each: true raises errors.Stopping."""
    for batch in batches:
        if stop is not None and stop():
            raise Stopping("a hot index build was stopped (shutdown)")
        yield batch
