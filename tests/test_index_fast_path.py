"""The one-shot's fast path (issue 13) writes the store the row-dict path writes.

Packed rows (Arrow IPC from the workers, store/packed.py), pre-started parse
workers (pipeline.parse_pool) and size-bounded commits must change how fast a
cold index is, never what it holds: every column of entries, links and files
(the time a file was indexed and the empty vectors aside) is compared.
"""

from __future__ import annotations

import json
import shutil
import sysconfig
from dataclasses import replace
from pathlib import Path

import pytest
from testlib import run_cli, settings_with_realm, wait_until

from indexd import pipeline
from indexd.errors import StoreError
from indexd.cli import indexd_main
from indexd.pipeline import Indexer, parse_pool
from indexd.store import Store

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = ("json", "email", "html", "http")   # real code, ~40 files, one with syntax errors


def real_tree(git_repo):
    """A few real stdlib packages plus markdown, config, and files that are skipped."""
    for package in PACKAGES:
        for src in sorted((STDLIB / package).rglob("*.py")):
            target = git_repo.path / "lib" / src.relative_to(STDLIB)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
    git_repo.write("README.md", "# Lib\n\nSee [json](lib/json/__init__.py) and [gone](x.md).\n")
    git_repo.write("conf/app.toml", "[server]\nport = 8080\n")
    git_repo.write("conf/app.yaml", "retry:\n  max: 3\n")
    git_repo.write("blob.bin", b"\x00\x01binary")
    git_repo.write(".env", "API_KEY=" + "k" * 30 + "\n")
    git_repo.write("broken.py", "def ok():\n    pass\n\ndef broken(:\n")
    git_repo.commit("init")
    return git_repo


def full_rows(store) -> dict[str, list]:
    """Every stored value, sorted: entries without vectors, files without the time."""
    out = {}
    for name, drop in (("entries", {"vector"}), ("links", set()), ("files", {"indexed_at"})):
        table = getattr(store, name).to_arrow()
        columns = [c for c in table.column_names if c not in drop]
        out[name] = sorted(json.dumps([row[c] for c in columns])
                           for row in table.select(columns).to_pylist())
    return out


def variant(settings, name: str | None = None, **changes):
    """Settings with changes (frozen), and a store of its own when ``name``."""
    if name is not None:
        data_dir = settings.paths.data_dir.parent / f"data-{name}"
        changes["paths"] = replace(settings.paths, data_dir=data_dir)
    return replace(settings, **changes)


def index_with(settings, store, *, dicts: bool, pool=None):
    indexer = Indexer(settings, store, pool=pool)
    if dicts:   # the daemon's path: a hook that takes row dicts (annotations, vectors)
        indexer.before_write = lambda rows: None
    return indexer.index()


@pytest.fixture
def pool_for_small_batches(monkeypatch):
    monkeypatch.setattr(pipeline, "POOL_THRESHOLD", 1)


def test_packed_parallel_rows_equal_the_serial_row_dicts(git_repo, make_store, monkeypatch,
                                                         pool_for_small_batches):
    real_tree(git_repo)
    serial = variant(settings_with_realm("work", git_repo.path), workers=1)
    want_store = make_store(serial)
    want = index_with(serial, want_store, dicts=True)
    assert want.parsed > 40 and want.failed >= 1 and want.skipped == {"binary": 1, "secret": 1}

    for name, dicts in (("packed", False), ("dicts", True)):
        settings = variant(serial, name, workers=2)
        store = make_store(settings)
        with parse_pool(settings) as pool:
            got = index_with(settings, store, dicts=dicts, pool=pool)
        assert (got.parsed, got.entries, got.failed) == (want.parsed, want.entries, want.failed)
        assert full_rows(store) == full_rows(want_store), f"{name} rows differ from serial dicts"


def test_packed_commits_are_split_by_size(git_repo, make_store, monkeypatch):
    """A batch over the byte budget is committed as several; the rows are the same."""
    real_tree(git_repo)
    settings = variant(settings_with_realm("work", git_repo.path), workers=1)
    want_store = make_store(settings)
    index_with(settings, want_store, dicts=True)

    settings = variant(settings, "small")
    monkeypatch.setattr(pipeline, "PACKED_BATCH_BYTES", 64 << 10)
    store = make_store(settings)
    writes = []
    real_write = store.write
    monkeypatch.setattr(store, "write", lambda batch, **kw: (writes.append(len(batch)), real_write(batch, **kw)))
    index_with(settings, store, dicts=False)
    assert len(writes) > 3, writes
    assert full_rows(store) == full_rows(want_store)


def test_one_shot_done_event_has_the_stage_breakdown(git_repo):
    real_tree(git_repo)
    run_cli("realm", "add", "work", git_repo.path, check=True)
    proc = run_cli("index", "--json", "--no-embed", tool="indexd", check=True)
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    stages = done["stages"]
    assert {"plan", "read", "tree_sitter", "query", "extract", "rows", "workers", "store", "fts",
            "compact"} <= set(stages)
    for name in ("read", "tree_sitter", "query", "extract", "rows"):   # in the workers
        assert stages[name]["cpu_s"] > 0 and stages[name]["wall_s"] is None, (name, stages)
    assert stages["store"]["wall_s"] > 0
    assert sum(s["wall_s"] or 0 for s in stages.values()) <= done["seconds"] + \
        stages["plan"]["wall_s"] + stages["compact"]["wall_s"] + 0.5

    again = json.loads(run_cli("index", "--json", "--no-embed", tool="indexd",
                               check=True).stdout.strip().splitlines()[-1])
    assert again["parsed"] == 0 and "tree_sitter" not in again["stages"], again["stages"]


def test_started_workers_are_gone_when_a_run_fails(git_repo, make_store, monkeypatch,
                                                   pool_for_small_batches):
    """A store write failing mid-run: the error reaches the caller and the
    pre-started workers exit (the session fixture also fails any left behind)."""
    real_tree(git_repo)
    settings = variant(settings_with_realm("work", git_repo.path), workers=2)
    store = make_store(settings)

    def disk_full(op):
        if op == "write":
            raise OSError(28, "No space left on device")
    store.fault_hook = disk_full
    with pytest.raises(StoreError, match="No space left"):
        with parse_pool(settings) as pool:
            workers = list(wait_until(lambda: pool._processes and dict(pool._processes),
                                      timeout=30).values())
            Indexer(settings, store, pool=pool).index()
    assert len(workers) == 2
    assert wait_until(lambda: not any(p.is_alive() for p in workers), timeout=30)


def test_parse_workers_start_only_for_trees_with_enough_files(tmp_path, monkeypatch):
    """A cold one-shot of a small repo parses inline: no worker is started for it."""
    small, big = tmp_path / "small", tmp_path / "big"
    for root, n in ((small, pipeline.POOL_THRESHOLD - 1), (big, pipeline.POOL_THRESHOLD)):
        for i in range(n):
            (root / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
            (root / f"d{i % 3}" / f"f{i}.py").write_text("x = 1\n")
    (small / ".git" / "objects").mkdir(parents=True)   # git's own files are not counted
    for i in range(pipeline.POOL_THRESHOLD):
        (small / ".git" / "objects" / f"o{i}").write_text("blob")
    started = []
    monkeypatch.setattr(pipeline, "_new_pool", lambda workers: started.append(workers))
    settings = settings_with_realm("s", small)
    assert not pipeline.enough_files_for_a_pool(settings, "s")
    assert indexd_main.main(["index", "--no-embed", "--realm", "s"]) == 0
    assert started == [] and len(Store(settings.paths.store_dir).files.to_arrow()) == 63

    settings = settings_with_realm("b", big)
    assert pipeline.enough_files_for_a_pool(settings, "b")
    assert pipeline.enough_files_for_a_pool(settings, None)   # all realms
