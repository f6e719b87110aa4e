"""A reader opening the store while the daemon switches to a model of another
dimension (CI saw `Table 'entries' was not found` from a test's reader at a
daemon's first start: the switch dropped the table, then made it again).
Real LanceDB; the reader opens the store as another process's reader would."""

from __future__ import annotations

import threading

from testlib import settings_with_realm

from indexd.pipeline import Indexer
from indexd.store import Store


def test_readers_never_find_the_entries_table_missing_during_a_dimension_switch(git_repo,
                                                                               make_store):
    git_repo.write("a.py", "".join(f"def fn_{i}(x):\n    return x + {i}\n\n\n" for i in range(40)))
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    entries = store.count("entries")
    stop, errors, seen = threading.Event(), [], []

    def read():
        while not stop.is_set():
            try:
                seen.append(Store(store.path).count("entries"))
            except Exception as exc:  # noqa: BLE001 - what the reader hit is the point
                errors.append(f"{type(exc).__name__}: {exc}")
                return

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(12):
            dim = 32 if i % 2 == 0 else 64
            store.switch_model(f"model-{i}/{dim}", dim)
    finally:
        stop.set()
        reader.join(timeout=60)
    assert not errors, errors[0]
    assert seen and set(seen) == {entries}, set(seen)   # never an empty table either
    assert store.count("entries") == entries and store.dim == 64
