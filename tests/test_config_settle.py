"""config.toml read halfway through an editor's save must not drop a realm.

Hit while benchmarking (2026-12-07): a script rewrote config.toml in place (truncate,
then write, as nano, VS Code and Python's write_text do) and the daemon's check
landed between the two. It read an empty config, removed the realm's repo and
deleted its rows ("repo removed ... its rows left the index"), then re-indexed
all 1,790 files when the next check read the whole file: 86 s in which search
found nothing. The daemon now reads a config.toml only once it has rested for
CONFIG_SETTLE_S; one that stays as written is still obeyed.

Real engine, store and repo in temp dirs; the check is called at the moment the
file is empty, as the daemon's worker did.
"""

from __future__ import annotations

import os
import time

from testlib import wait_until

import indexd.engine


def _check(engine) -> None:
    with engine.cond:
        engine._check_config()


def test_a_config_caught_halfway_through_a_save_is_not_read(engine, monkeypatch):
    # a longer rest than the daemon's, so a stalled test machine cannot let the
    # empty file rest that long between the two writes
    settle = 3.0
    monkeypatch.setattr(indexd.engine, "CONFIG_SETTLE_S", settle, raising=False)
    cfg = engine.settings.paths.config_file
    whole = cfg.read_text()
    generation = engine.config_generation
    cfg.write_text("")                 # the editor truncated it: the write is yet to come
    _check(engine)
    assert "work" in engine.settings.realms
    cfg.write_text(whole)              # the save completes
    wait_until(lambda: time.time() - cfg.stat().st_mtime > settle, what="the file at rest")
    _check(engine)                     # (or the worker's own check got there first)
    assert engine.config_generation == generation + 1   # read once, whole
    assert "work" in engine.settings.realms
    assert engine.store.count("entries") > 0


def test_a_config_that_stays_as_written_is_obeyed(engine):
    cfg = engine.settings.paths.config_file
    cfg.write_text("")                 # every realm removed, on purpose this time
    wait_until(lambda: (_check(engine), not engine.settings.realms)[1], timeout=30,
               what="the empty config read once at rest")
    wait_until(lambda: engine.store.count("entries") == 0, timeout=60, what="the repo's rows gone")


def test_a_config_stamped_in_the_future_is_not_waited_for(engine):
    cfg = engine.settings.paths.config_file
    cfg.write_text("")
    ahead = time.time() + 3600         # a clock set back, or touch -d
    os.utime(cfg, (ahead, ahead))
    _check(engine)
    assert not engine.settings.realms


def test_a_config_missing_for_a_moment_as_an_editor_renames_it_away_is_not_read(engine,
                                                                               monkeypatch):
    # vim (backupcopy=no, writebackup): the file is renamed to its backup, then
    # written anew; between the two there is no config.toml at all.
    settle = 3.0
    monkeypatch.setattr(indexd.engine, "CONFIG_SETTLE_S", settle, raising=False)
    cfg = engine.settings.paths.config_file
    backup = cfg.with_name(cfg.name + "~")
    os.rename(cfg, backup)
    _check(engine)
    assert "work" in engine.settings.realms
    cfg.write_text(backup.read_text())
    backup.unlink()
    wait_until(lambda: time.time() - cfg.stat().st_mtime > settle, what="the file at rest")
    _check(engine)
    assert "work" in engine.settings.realms
    assert engine.store.count("entries") > 0


def test_a_config_deleted_for_good_is_obeyed(engine):
    cfg = engine.settings.paths.config_file
    cfg.unlink()
    wait_until(lambda: (_check(engine), not engine.settings.realms)[1], timeout=30,
               what="the missing config read once it stayed missing")
