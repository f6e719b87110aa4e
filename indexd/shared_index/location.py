"""Where a shared index lives: a LanceDB database at a URI, and who a repo is there.

``s3://bucket/prefix``, ``gs://…``, ``az://…`` or a local path: LanceDB opens
them all. Credentials and endpoints come from the standard environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``,
``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``…), which LanceDB's object store reads
itself: indexd never sees, stores or logs them.

A repo's tables are named by its *shard*: the same repo on two machines (in
two different directories) must land on the same tables, so the shard comes
from the repo's ``origin`` remote when it has one, else from its directory
name.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import StoreError
from ..model import content_hash

TABLES = ("entries", "links", "files", "manifest")   # written in this order: manifest last
_REMOTE = ("s3://", "gs://", "az://", "abfs://", "memory://")


class SharedIndexError(StoreError):
    """A shared index that cannot be reached, read or written."""


def is_remote(uri: str) -> bool:
    return uri.startswith(_REMOTE)


def connect(uri: str, create: bool = False):
    """The LanceDB database at ``uri``; a local path must exist unless ``create``."""
    from indexd.store.lancedb_import import lancedb as import_lancedb

    lancedb = import_lancedb()

    if not uri:
        raise SharedIndexError("no shared index location given (s3://bucket/prefix or a path)")
    if not is_remote(uri):
        path = Path(uri).expanduser()
        if not path.is_dir():
            if not create:
                raise SharedIndexError(f"no shared index at {path}: nothing was published there",
                                       {"uri": uri})
            path.mkdir(parents=True, exist_ok=True)
        uri = str(path.absolute())
    try:
        return lancedb.connect(uri)
    except Exception as exc:  # noqa: BLE001 - any backend's failure, said plainly
        raise SharedIndexError(f"cannot open the shared index at {uri}: {exc}",
                               {"uri": uri}) from exc


def table_names(db) -> list[str]:
    lister = getattr(db, "list_tables", None)
    if lister is None:
        return list(db.table_names())
    names, token = [], None
    while True:   # list_tables pages its answer
        page = lister(page_token=token) if token else lister()
        names.extend(getattr(page, "tables", page))
        token = getattr(page, "page_token", None)
        if not token:
            return names


def repo_identity(repo: str) -> str:
    """What names a repo the same on every machine: its origin URL, normalised
    (``git@host:o/r.git`` and ``https://host/o/r`` agree), else its folder name."""
    try:
        import pygit2
        from pygit2.enums import RepositoryOpenFlag

        remotes = pygit2.Repository(repo, RepositoryOpenFlag.NO_SEARCH).remotes
        url = next((r.url for r in remotes if r.name == "origin"), None)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        url = None
    if url:
        url = re.sub(r"^[a-z+]+://", "", url.strip())
        url = re.sub(r"^[^@/]+@", "", url).replace(":", "/")
        return url.removesuffix("/").removesuffix(".git").lower()
    return Path(repo).name


def shard_name(identity: str) -> str:
    """A table-name-safe prefix for one repo's tables: readable and unique."""
    slug = re.sub(r"[^a-z0-9]+", "_", identity.lower()).strip("_")[-40:] or "repo"
    return f"{slug}_{content_hash(identity)[:8]}"


def table_name(shard: str, table: str) -> str:
    return f"{shard}__{table}"


def read_manifest(db, shard: str, names: set[str] | None = None) -> dict | None:
    """A shard's manifest row; None while the shard was never (fully) published."""
    full = table_name(shard, "manifest")
    if full not in (names if names is not None else set(table_names(db))):
        return None
    rows = db.open_table(full).to_arrow().to_pylist()
    return rows[0] if rows else None


def sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
