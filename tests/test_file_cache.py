"""The files table's records in memory (store/file_cache.py): a save's plan
reads no table, and what memory answers is what the table holds after every
kind of write, this connection's or another's. Real pipeline, real LanceDB."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

from testlib import indexed_repo

from indexd.store import Store


def _indexed_repo(git_repo, make_store):
    return indexed_repo(git_repo, make_store, 30, {"README.md": "# Title\n\nSome words.\n"})


def _scans(store) -> list[str]:
    """Record which tables ``store`` scans from now on."""
    seen: list[str] = []
    real = store._scan

    def recording(table, where, columns=None):
        seen.append(table.name)
        return real(table, where, columns)

    store._scan = recording
    return seen


def _from_table(settings, realm: str, repo: str) -> dict:
    """The records as a new connection to the same store reads them."""
    fresh = Store(settings.paths.store_dir)
    return fresh.file_records(realm=realm, repo=repo)


def test_a_save_plan_after_a_full_plan_reads_no_files_table(git_repo, make_store):
    settings, store, indexer, realm, repo = _indexed_repo(git_repo, make_store)
    indexer.run([indexer.plan_repo(realm, repo)])      # a reconcile: the copy is filled
    scans = _scans(store)

    git_repo.write("pkg/m07.py", "def fn_7():\n    return 7\n\n\ndef saved_later():\n    return 8\n")
    plan = indexer.plan_repo(realm, repo, ["pkg/m07.py"])
    assert "files" not in scans
    assert [j.path for j in plan.jobs] == ["pkg/m07.py"]
    assert plan.jobs[0].known_hash == _from_table(settings, realm, repo)["pkg/m07.py"].hash
    report = indexer.run([plan])
    assert report.parsed == 1

    # The next event on the same file finds the stat the last batch wrote.
    plan = indexer.plan_repo(realm, repo, ["pkg/m07.py"])
    assert "files" not in scans
    assert (plan.jobs, plan.unchanged) == ([], 1)


def test_memory_answers_what_the_table_holds_after_every_kind_of_write(git_repo, make_store):
    settings, store, indexer, realm, repo = _indexed_repo(git_repo, make_store)

    def same() -> None:
        assert store.file_records(realm=realm, repo=repo) == _from_table(settings, realm, repo)

    store.file_records(realm=realm, repo=repo)          # fills the copy
    git_repo.write("pkg/m01.py", "def fn_1():\n    return 'changed'\n")   # a batch's write
    indexer.run([indexer.plan_repo(realm, repo, ["pkg/m01.py"])])
    same()
    path = git_repo.path / "pkg/m02.py"                  # stat only: write_records
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))
    assert indexer.run([indexer.plan_repo(realm, repo, ["pkg/m02.py"])]).touched == 1
    same()
    git_repo.rm("pkg/m03.py")                            # delete_files
    indexer.run([indexer.plan_repo(realm, repo, ["pkg/m03.py"])])
    same()
    assert "pkg/m03.py" not in store.file_records(realm=realm, repo=repo)
    store.optimize()                                     # compaction: another version
    same()
    store.delete_repo(realm, repo)                       # the realm forgets the repo
    same()
    assert store.file_records(realm=realm, repo=repo) == {}


def test_another_connections_write_is_seen(git_repo, make_store):
    settings, store, indexer, realm, repo = _indexed_repo(git_repo, make_store)
    before = store.file_records(realm=realm, repo=repo, paths=["pkg/m05.py"])["pkg/m05.py"]

    other = Store(settings.paths.store_dir)              # as another process would
    other.write_records([replace(before, hash="another-hash", size=before.size + 1)])

    after = store.file_records(realm=realm, repo=repo, paths=["pkg/m05.py"])["pkg/m05.py"]
    assert (after.hash, after.size) == ("another-hash", before.size + 1)
    assert store.file_records(realm=realm, repo=repo) == _from_table(settings, realm, repo)


def test_meta_values_follow_writes_from_either_connection(tmp_path):
    store = Store(tmp_path / "store")
    assert store.get_meta("k") is None
    store.set_meta("k", "one")
    assert store.get_meta("k") == "one"
    Store(tmp_path / "store").set_meta("k", "two")
    assert store.get_meta("k") == "two"


def test_a_read_from_memory_does_not_wait_for_another_threads_write_lock(git_repo, make_store):
    """The enrich thread holds the store's write lock while it writes vectors; a
    save's plan and a status call read file records meanwhile."""
    settings, store, indexer, realm, repo = _indexed_repo(git_repo, make_store)
    want = store.file_records(realm=realm, repo=repo)    # fills the copy
    held, release = threading.Event(), threading.Event()

    def writer():
        with store.lock.write():
            held.set()
            release.wait(120)

    got: dict = {}
    reader = threading.Thread(target=lambda: got.update(
        few=store.file_records(realm=realm, repo=repo, paths=["pkg/m04.py"]),
        all=store.file_records(realm=realm, repo=repo)))
    t = threading.Thread(target=writer)
    t.start()
    try:
        assert held.wait(60)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "a read from memory waited for the write lock"
        assert got["few"] == {"pkg/m04.py": want["pkg/m04.py"]} and got["all"] == want
    finally:
        release.set()
        t.join(60)
        if reader.ident is not None:
            reader.join(60)
