"""Annotations are user data: a kill in the middle of rewriting one leaves the old
note or the new one, never none (and never both).

The kill is simulated deterministically: the annotations table is wrapped so
that its k-th write call raises a BaseException (nothing in the store catches
it, like a SIGKILL nothing runs after), for every k a rewrite makes; then the
store is opened afresh from disk, as a restarted daemon would.
"""

from __future__ import annotations

import pytest

from indexd.annotations import Annotations
from indexd.pipeline import Indexer
from indexd.store import Store
from testlib import settings_with_realm

WRITES = ("add", "delete", "update", "merge_insert")


class Killed(BaseException):
    """What a SIGKILL is to the code after it: nothing handles it."""


class KillAt:
    """Proxy for a LanceDB table: counts write calls, dies before the ``kill_at``-th."""

    def __init__(self, table, kill_at: int | None):
        self._table, self._kill_at, self.writes = table, kill_at, 0

    def __getattr__(self, name):
        attr = getattr(self._table, name)
        if name not in WRITES:
            return attr

        def write(*args, **kwargs):
            self.writes += 1
            if self.writes == self._kill_at:
                raise Killed(f"killed before write {self.writes} ({name})")
            return attr(*args, **kwargs)
        return write


def setup(git_repo):
    git_repo.write("pay.py", "def settle(ledger):\n    return sum(ledger)\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = Store(settings.paths.store_dir)
    Indexer(settings, store).index()
    notes = Annotations(store, lambda: settings)
    target = f"{git_repo.path / 'pay.py'}::settle"
    notes.annotate(target, "old note", author="me")
    return settings, store, notes, target


def stored_texts(settings) -> list[str]:
    return [a["text"] for a in Store(settings.paths.store_dir).annotations_for()]


def test_rewrite_normal_path(git_repo):
    settings, store, notes, target = setup(git_repo)
    notes.annotate(target, "new note", author="me")
    assert stored_texts(settings) == ["new note"]
    listed = notes.list(str(git_repo.path / "pay.py"))["annotations"]
    assert [(a["symbol"], a["text"], a["stale"]) for a in listed] == [("settle", "new note", False)]


def test_rewrite_killed_at_every_step_keeps_old_or_new(git_repo):
    settings, store, notes, target = setup(git_repo)
    counter = KillAt(store.annotations, None)
    store.annotations = counter
    notes.annotate(target, "counting note", author="me")
    store.annotations = counter._table
    steps = counter.writes
    assert steps >= 1
    for kill_at in range(1, steps + 1):
        notes.annotate(target, "old note", author="me")
        store.annotations = KillAt(store.annotations, kill_at)
        with pytest.raises(Killed):
            notes.annotate(target, "new note", author="me")
        store.annotations = store.annotations._table
        texts = stored_texts(settings)
        assert len(texts) == 1 and texts[0] in ("old note", "new note"), (kill_at, steps, texts)
