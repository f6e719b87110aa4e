"""A hot index that missed a write is built again while the daemon runs.

Before, a failed update turned the daemon's in-memory keyword index off for good:
every search after it went to the table's slower index until a restart, and
status only said `answers_from: table`. The engine now builds it again in the
background (at most once a minute) and says why it was off.

Real engine, store and repo in temp dirs. The failure itself is injected (one
`replace_files` call raises): tantivy gives no way to make a write fail on demand.
"""

from __future__ import annotations

from testlib import wait_until

from indexd.store.text_index import TextIndex


def _words(engine, word):
    from indexd.query.search import SearchRequest, keyword_search

    hits = keyword_search(engine.store, SearchRequest(query=word, mode="keyword", limit=5))
    return [h["symbol"] for h in hits["results"] if h["symbol"]]   # not the file's own entry


def test_a_keyword_index_whose_update_failed_is_built_again_and_says_why(engine, git_repo,
                                                                        monkeypatch):
    wait_until(lambda: engine.status()["keyword_index"]["hot"], timeout=120,
               what="the keyword index built")
    assert engine.status()["keyword_index"]["failed"] is None
    real = TextIndex.replace_files
    calls = []

    def fail_once(self, keys, rows):
        calls.append(keys)
        if len(calls) == 1:
            raise RuntimeError("injected: the index's writer refused the document")
        return real(self, keys, rows)

    monkeypatch.setattr(TextIndex, "replace_files", fail_once)
    git_repo.write("ship.py", "def dispatch_parcel(box):\n    return box\n")
    # the failed write turns the index off; the engine builds it again on its own
    wait_until(lambda: calls, timeout=60, what="the save reached the hot index")
    state = wait_until(lambda: (s := engine.status()["keyword_index"])["hot"] and s,
                       timeout=120, what="the keyword index hot again")
    assert state["failed"] is None and state["rebuilds"] == 1, state
    assert "injected" in state["rebuilt_after"], state    # why it was built again
    assert state["answers_from"] == "memory"
    # the new index has the file whose write it missed, and the rest
    assert _words(engine, "dispatch_parcel") == ["dispatch_parcel"]
    assert _words(engine, "settle_invoice") == ["settle_invoice"]
    assert engine.store.text_index.docs == engine.store.count("entries")
