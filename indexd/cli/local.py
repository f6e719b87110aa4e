"""Read-only answers from the store when no daemon runs (imports the store lazily)."""

from __future__ import annotations

from ..errors import StoreError


def call_local(settings, method: str, params: dict) -> dict:
    from ..server.methods import Methods

    store = None
    if method in ("search", "symbols", "status", "purge", "impact", "deps", "refs", "changes",
                  "graph.export", "annotate", "annotations", "skipped", "tests.ingest",
                  "tests.affected", "owners", "summary", "context"):
        store = _open_store(settings)
    methods = Methods(lambda: _reload(settings, method), store)
    return methods.call_sync(method, {k: v for k, v in params.items() if k != "sync"})


def _reload(settings, method):
    # realm edits must see the file as it is now, not as it was at start.
    if method.startswith("realm."):
        from ..config import load_settings

        return load_settings()
    return settings


def _open_store(settings):
    if not settings.paths.store_dir.exists():
        raise StoreError(f"no index yet at {settings.paths.store_dir}; "
                         f"build it with: indexd index (or start the daemon: indexd run)")
    from ..store import Store

    return Store(settings.paths.store_dir, retention_s=settings.version_retention_s)
