"""A file event that reaches the engine before the `.git/index.lock` event (watchdog
delivers a repo's events from more than one place; on a loaded 2-core CI machine the lock's
came late and `tests/e2e/test_daemon.py::test_git_index_lock_holds_events` saw the file
indexed mid-operation). The lock on disk is what holds a repo's events, however late its
event comes."""

from __future__ import annotations

from testlib import settings_with_realm, wait_until


def _symbols(engine) -> set[str]:
    return {r["qualname"] for r in engine.store.entries_where(None, ["qualname"])}


def test_a_file_event_ahead_of_the_lock_event_is_held(git_repo, tmp_path, indexd_home,
                                                      make_store):
    from indexd.engine import Engine

    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    control = tmp_path / "control"          # a second repo of the realm, never locked
    control.mkdir()
    settings = settings_with_realm("work", git_repo.path, control)
    engine = Engine(settings, make_store(settings), embed=False)
    engine.watcher.on_git = lambda *args: None     # the lock's event has not arrived yet
    engine.start()
    try:
        wait_until(lambda: "a" in _symbols(engine), timeout=120, what="the repo indexed")
        lock = git_repo.path / ".git" / "index.lock"
        lock.write_text("")
        git_repo.write("b.py", "def held_back(): pass\n")
        # a change after it, in the unlocked repo: once indexed, the worker has taken every
        # change due by then, b.py's included; it held b.py
        (control / "later.py").write_text("def later_control(): pass\n")
        wait_until(lambda: "later_control" in _symbols(engine), timeout=60,
                   what="the later change in the other repo to be indexed")
        assert "held_back" not in _symbols(engine)
        lock.unlink()
        # no event says the lock went (on_git is silenced): the engine sees it on disk
        wait_until(lambda: "held_back" in _symbols(engine), timeout=120,
                   what="b.py indexed once the lock is gone")
    finally:
        engine.stop()
