"""Reading a shared index: teammates' vectors for the files you really have.

A realm that names a shared index (``[realms.NAME] shared = "s3://…"``) takes
from it what is expensive and decided by content alone: each entry's vector.
Before the embed stage runs, for each repo of the realm whose shard was
published with the local model and recipe, a shared entry's vector is put
into the local vector cache only when

- its file's (path, content hash) is the local file's, as the local index
  recorded it (so only blobs you have), and
- the entry's cache key, recomputed here from the shared row's own text and
  the local model id, is the key it was published under (so a row that does
  not hash to what it says is never trusted).

The embed stage then finds those vectors in the cache instead of running the
model; what is left (edited files, local branches, another extractor's rows)
is embedded locally as before. Vectors of another model cannot mix: the model
id is part of every cache key, and a shard of another model is not read at all.
Structure (parse, links, the graph) is still computed locally: it is ~20x
cheaper than embedding and depends on the local extractor's version.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..descriptions import model_key
from ..enrich.summaries import summary_key
from ..enrich.texts import embed_hash, embed_text
from ..model import INDEXED, file_key
from ..stat_sidecar import extractor_version
from .location import (SharedIndexError, connect, read_manifest, repo_identity, shard_name,
                       sql_literal, table_name, table_names)

log = logging.getLogger(__name__)

CACHE_CHUNK = 2000   # cache_put deletes by key first: one IN list per chunk
TEXT_COLUMNS = ["path", "lang", "kind", "name", "qualname", "signature", "doc", "summary",
                "summary_source", "body", "content_hash", "embed_hash", "vector"]


@dataclass
class ShardReport:
    repo: str
    shard: str
    status: str = ""           # used | not_published | model_mismatch | nothing_matched
    commit: str = ""
    published_at: float = 0.0
    files_matched: int = 0
    files_local: int = 0
    files_origin: int = 0      # files answers will name as the shard's (same parse, all vectors)
    vectors: int = 0           # put into the local cache
    summaries: int = 0         # LLM summaries put into the local summary cache
    rejected: int = 0          # rows whose key did not match their own text
    reason: str = ""

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class SeedReport:
    uri: str
    realm: str
    shards: list = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def vectors(self) -> int:
        return sum(s.vectors for s in self.shards)

    def to_json(self) -> dict:
        return {"uri": self.uri, "realm": self.realm, "vectors": self.vectors,
                "seconds": round(self.seconds, 2), "error": self.error,
                "shards": [s.to_json() for s in self.shards]}


def seed_realm(settings, store, realm: str, uri: str, model_id: str,
               repos: list[str] | None = None) -> SeedReport:
    """Fill the local vector cache from ``uri`` for ``realm``'s repos (or only
    ``repos``). A shared index that cannot be read is reported, not raised:
    local embedding follows."""
    report, started = SeedReport(uri=uri, realm=realm), time.monotonic()
    try:
        db, names = None, set()
        for _, repo in settings.realm_repos(realm):
            if repos is not None and repo not in repos:
                continue
            shard = ShardReport(repo=repo, shard=shard_name(repo_identity(repo)))
            report.shards.append(shard)
            if not store.count("entries", f"realm = {sql_literal(realm)} AND "
                                          f"repo = {sql_literal(repo)} AND vector IS NULL"):
                shard.status = "nothing_missing"   # e.g. a daemon's restart: no request at all
                continue
            if db is None:   # only once something lacks a vector
                db = connect(uri)
                names = set(table_names(db))
            _seed_repo(settings, store, db, names, realm, shard, model_id, uri)
    except SharedIndexError as exc:
        report.error = exc.message
    except Exception as exc:  # noqa: BLE001 - an object store's failure must not stop indexing
        report.error = f"{type(exc).__name__}: {exc}"
    if report.error:
        log.warning("shared index not used uri=%s error=%s", uri, report.error)
    report.seconds = time.monotonic() - started
    return report


def _seed_repo(settings, store, db, names: set[str], realm: str, out: ShardReport,
               model_id: str, uri: str) -> None:
    """Fill ``out`` (one repo's report) while taking its shard's vectors."""
    repo, shard = out.repo, out.shard
    manifest = read_manifest(db, shard, names)
    if manifest is None:
        out.status, out.reason = "not_published", "no shard for this repo in the shared index"
        return
    out.commit, out.published_at = manifest.get("commit") or "", manifest.get("published_at") or 0
    if manifest.get("model_id") != model_id or manifest.get("recipe") != settings.embed_recipe:
        out.status = "model_mismatch"
        out.reason = (f"published with {manifest.get('model_id')} ({manifest.get('recipe')}); "
                      f"this index uses {model_id} ({settings.embed_recipe}): embedding locally")
        return
    local = {path: rec.hash for path, rec in store.file_records(realm=realm, repo=repo).items()
             if rec.status == INDEXED}
    out.files_local = len(local)
    shared = _columns(db.open_table(table_name(shard, "files")), ["path", "hash"])
    matched = [p for p, h in zip(shared["path"].to_pylist(), shared["hash"].to_pylist())
               if local.get(p) == h]
    out.files_matched = len(matched)
    if not matched:
        out.status = "nothing_matched"
        return
    entries = _columns(db.open_table(table_name(shard, "entries")), TEXT_COLUMNS)
    entries = entries.filter(pc.is_in(entries["path"], value_set=pa.array(matched, pa.string())))
    vectors: dict[str, list[float]] = {}
    partial: set[str] = set()   # files not every vector of which could be taken
    for row in entries.to_pylist():
        if row["vector"] is None:
            partial.add(row["path"])
            continue
        key = embed_hash(embed_text(row, settings.embed_recipe), model_id)
        if key != row["embed_hash"]:
            out.rejected += 1
            partial.add(row["path"])
            continue
        vectors[key] = row["vector"]
    items = list(vectors.items())
    for start in range(0, len(items), CACHE_CHUNK):
        store.cache_put(model_id, dict(items[start:start + CACHE_CHUNK]))
    out.vectors = len(vectors)
    out.summaries = _seed_summaries(settings, store, manifest, entries, realm, repo)
    out.status = "used"
    # Which files an answer may say came from the shard: the same content, parsed
    # by the same extractor (so the same entries), every vector taken.
    same_parse = manifest.get("extractor_version") == extractor_version()
    origins = [{"key": file_key(realm, repo, p), "realm": realm, "repo": repo, "path": p,
                "hash": local[p], "uri": uri, "commit": out.commit,
                "published_at": float(out.published_at or 0)}
               for p in matched if same_parse and p not in partial]
    store.put_shared_origins(realm, repo, origins)
    out.files_origin = len(origins)


def _seed_summaries(settings, store, manifest: dict, entries: pa.Table, realm: str,
                    repo: str) -> int:
    """The shard's LLM summaries of the matched files, when both sides summarize
    with the same model: into the local summary cache (keyed, as the summary
    stage keys them, by the model and the entry's content hash, so an entry whose
    content differs here never gets the shard's summary) and onto the local rows
    still waiting for one. A model summary is part of the embedded text, so the
    rows get it before the embed stage runs: their keys are then the shard's,
    and its vectors are found instead of embedding a text about to change."""
    model = model_key(settings)
    if not model or manifest.get("summary_model") != model:
        return 0
    by_hash = {}
    for source, summary, entry_hash in zip(entries["summary_source"].to_pylist(),
                                           entries["summary"].to_pylist(),
                                           entries["content_hash"].to_pylist()):
        if source == "llm" and summary and entry_hash:
            by_hash[entry_hash] = summary
    pairs = [(summary_key(model, h), (s, "llm")) for h, s in by_hash.items()]
    for start in range(0, len(pairs), CACHE_CHUNK):
        store.summary_cache_put(dict(pairs[start:start + CACHE_CHUNK]))
    waiting = store.entries_where(f"realm = {sql_literal(realm)} AND repo = {sql_literal(repo)} "
                                  "AND summary_source IN ('', 'docstring')", ["id", "content_hash"])
    rows = [r for r in waiting if r["content_hash"] in by_hash]
    for start in range(0, len(rows), CACHE_CHUNK):
        chunk = rows[start:start + CACHE_CHUNK]
        store.update_entries({r["id"]: {"summary": by_hash[r["content_hash"]], "summary_source": "llm"}
                              for r in chunk}, guard="summary_source IN ('', 'docstring')",
                             expect={r["id"]: r["content_hash"] for r in chunk})
    return len(by_hash)


def _columns(table, columns: list[str]) -> pa.Table:
    """Only these columns are read from the object store (a shard's bodies stay there)."""
    return table.search().select(columns).limit(None).to_arrow()
