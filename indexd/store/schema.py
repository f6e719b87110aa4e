"""Table schemas and the schema version. Pure pyarrow; no LanceDB here.

Bump SCHEMA_VERSION when a table's columns change and add a step to
``MIGRATIONS`` in store/lance.py (or mark the change as rebuild-only: the
store can always be rebuilt from source, only caches are precious).
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1
DEFAULT_DIM = 384

FILES = pa.schema([
    pa.field("key", pa.string(), nullable=False),
    pa.field("realm", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("path", pa.string()),
    pa.field("hash", pa.string()),
    pa.field("size", pa.int64()),
    pa.field("mtime_ns", pa.int64()),
    pa.field("inode", pa.int64()),
    pa.field("language", pa.string()),
    pa.field("status", pa.string()),
    pa.field("reason", pa.string()),
    pa.field("indexed_at", pa.float64()),
    pa.field("entries", pa.int32()),
])


def entries_schema(dim: int = DEFAULT_DIM) -> pa.Schema:
    return pa.schema([
        pa.field("id", pa.string(), nullable=False),
        pa.field("file_key", pa.string()),
        pa.field("realm", pa.string()),
        pa.field("repo", pa.string()),
        pa.field("repo_name", pa.string()),
        pa.field("path", pa.string()),
        pa.field("lang", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("name", pa.string()),
        pa.field("qualname", pa.string()),
        pa.field("parent", pa.string()),
        pa.field("start_line", pa.int32()),
        pa.field("end_line", pa.int32()),
        pa.field("level", pa.int32()),
        pa.field("signature", pa.string()),
        pa.field("doc", pa.string()),
        pa.field("summary", pa.string()),
        pa.field("summary_source", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("body", pa.string()),
        pa.field("search_text", pa.string()),
        # Reserved for the semantic layer: filled in the background.
        pa.field("embed_hash", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim), nullable=True),
    ])


LINKS = pa.schema([
    pa.field("file_key", pa.string()),
    pa.field("realm", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("path", pa.string()),
    pa.field("line", pa.int32()),
    pa.field("kind", pa.string()),       # file | anchor | url | import | call ...
    pa.field("target", pa.string()),
    pa.field("scope", pa.string()),
    pa.field("module", pa.string()),     # imports of names: the module they come from
    pa.field("broken", pa.bool_()),
    pa.field("how", pa.string()),        # link | reference
])

def vector_cache_schema(dim: int = DEFAULT_DIM) -> pa.Schema:
    """Vectors and summaries by content: (embed_hash) -> vector, summary."""
    return pa.schema([
        pa.field("embed_hash", pa.string(), nullable=False),   # hash(model_id, text)
        pa.field("model_id", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim), nullable=True),
        pa.field("used_at", pa.float64()),
    ])


SUMMARY_CACHE = pa.schema([
    pa.field("key", pa.string(), nullable=False),              # hash(model, content_hash)
    pa.field("summary", pa.string()),
    pa.field("source", pa.string()),
    pa.field("used_at", pa.float64()),
])

ANNOTATIONS = pa.schema([
    pa.field("id", pa.string(), nullable=False),       # hash of the target
    pa.field("realm", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("path", pa.string()),
    pa.field("symbol", pa.string()),                   # qualified name; null for a file
    pa.field("target_kind", pa.string()),              # file | symbol | edge
    pa.field("other", pa.string()),                    # edges: the other end ("path::sym")
    pa.field("text", pa.string()),
    pa.field("author", pa.string()),
    pa.field("content_hash", pa.string()),             # of the target when annotated
    pa.field("created_at", pa.float64()),
])

# Files whose index came from a team's shared index (shared_index/subscribe.py):
# the content hash the shard and the local file agreed on, and the shard's
# commit. A row is dropped when its file is written again with other content,
# so an answer's "from the shared index" claim is true of what it shows. A
# table of its own: a store without it gets it empty at open.
SHARED_FILES = pa.schema([
    pa.field("key", pa.string(), nullable=False),      # the file's key
    pa.field("realm", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("path", pa.string()),
    pa.field("hash", pa.string()),
    pa.field("uri", pa.string()),
    pa.field("commit", pa.string()),
    pa.field("published_at", pa.float64()),
])

# Test -> covered symbol edges from a coverage.py data file (indexctl tests
# ingest). A table of its own: adding it needs no migration (a store without it
# gets it empty at open); each end carries the content hash it had at ingest,
# so an edge whose test or target changed since reads as stale.
COVERAGE = pa.schema([
    pa.field("src_file_key", pa.string(), nullable=False),   # the test's file key
    pa.field("realm", pa.string()),
    pa.field("src_repo", pa.string()),
    pa.field("src_path", pa.string()),
    # the test function; null: the module's import (a function coverage saw run outside
    # every test; src_file_key is then the file's key + "\x1fimport", src_hash empty).
    # Rows of this kind need no migration: the column was nullable from the start.
    pa.field("src_symbol", pa.string()),
    pa.field("src_hash", pa.string()),
    pa.field("dst_repo", pa.string()),
    pa.field("dst_path", pa.string()),
    pa.field("dst_symbol", pa.string()),                      # null: the file (module level)
    pa.field("dst_hash", pa.string()),
    pa.field("lines", pa.int32()),                            # covered lines inside dst
    pa.field("context", pa.string()),                         # as recorded, e.g. nodeid|run
    pa.field("how", pa.string()),                             # coverage
    pa.field("ingested_at", pa.float64()),
])

META = pa.schema([
    pa.field("key", pa.string(), nullable=False),
    pa.field("value", pa.string()),
])
