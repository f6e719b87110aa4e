"""A query that meets a graph rebuild waits for the new graph and never blocks it.

CI hit this under load (tests/e2e/test_load.py): 11 of 296 `impact` requests
got no answer for 60 s while 300 files were written. `impact` waited for the
rebuilt graph while holding the graph lock that the rebuild needs to publish
the new graph, so both waited until the query's 60 s wait ran out.

The interleaving is made deterministic: the rebuild is started, and held in
its store read, exactly after the query's static part has run.
"""

from __future__ import annotations

import threading

import indexd.relations as relations_mod
from indexd.pipeline import Indexer
from indexd.relations import Relations
from indexd.store import Store
from testlib import settings_with_realm, wait_until


def test_impact_meeting_a_rebuild_does_not_block_it(git_repo, monkeypatch):
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/core.py", "def total(x):\n    return x\n")
    git_repo.write("tests/test_core.py", "from pkg.core import total\n\n\n"
                                         "def test_total():\n    assert total(1)\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = Store(settings.paths.store_dir)
    Indexer(settings, store).index()
    rel = Relations(store, lambda: settings)
    rel.build()
    # Without the fix both threads wait for this long; bounded so a failing run ends.
    monkeypatch.setattr(relations_mod, "REBUILD_WAIT_S", 20)

    release = threading.Event()
    real_load = relations_mod.load_facts

    def held_load(store_):
        release.wait(30)
        return real_load(store_)

    monkeypatch.setattr(relations_mod, "load_facts", held_load)
    rebuild = threading.Thread(target=rel.build, kwargs={"replace": True}, daemon=True)
    static = rel._graph_impact

    def static_then_rebuild(target, **kw):
        result = static(target, **kw)
        rebuild.start()   # the mass change lands between the two halves of impact
        assert wait_until(lambda: rel.graph is None, timeout=10, what="the rebuild to start")
        threading.Timer(0.2, release.set).start()   # the rebuild goes on meanwhile
        return result

    monkeypatch.setattr(rel, "_graph_impact", static_then_rebuild)
    answers, errors = [], []

    def query():
        try:
            answers.append(rel.impact(str(git_repo.path / "pkg/core.py"), depth=1))
        except Exception as exc:  # noqa: BLE001 - recorded for the assert
            errors.append(exc)

    q = threading.Thread(target=query, daemon=True)
    q.start()
    # The rebuild needs well under a second here; 10 s is for a busy machine.
    assert wait_until(lambda: not rebuild.is_alive() and not q.is_alive(), timeout=10,
                      what="the rebuild and the query to finish (the lock was held while waiting)")
    assert not errors, errors
    assert rel.graph is not None
    assert "tests/test_core.py" in {t["path"] for t in answers[0]["tests"]}
