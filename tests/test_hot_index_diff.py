"""A save rewrites only the hot keyword index documents whose rows changed.

Before, every save deleted and re-added each entry of the saved file (277
documents for typing.py, most of a save's hot-index time in bench/freshness.py).
What it answers must not change: after any sequence of edits, the index holds
what a build from the table holds, word for word.
"""

from __future__ import annotations

from testlib import settings_with_realm

from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest
from indexd.store.text_index import TextIndex


def _module(bodies: dict[str, str]) -> str:
    return "".join(f"def {name}(x):\n    '''{doc}'''\n    return x\n\n\n"
                   for name, doc in bodies.items())


FUNCS = {f"step_{i:02d}": f"Move the gnu number {i} along." for i in range(30)}


def _hits(store, word: str) -> list[tuple]:
    res = fused_search(store, None, SearchRequest(query=word, mode="keyword", limit=50))["results"]
    return sorted((h["path"], h["symbol"] or "", h["start_line"]) for h in res)


def _rebuilt(store) -> TextIndex:
    from indexd.store.text_index import COLUMNS

    fresh = TextIndex()
    fresh.build(b.to_pylist() for b in store.scan_batches("entries", None, COLUMNS))
    return fresh


def test_a_one_function_save_writes_that_entry_only(git_repo, make_store):
    git_repo.write("walk.py", _module(FUNCS))
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    store.build_text_index()
    Indexer(settings, store).index()
    assert store.text_index.docs == store.count("entries") == 31
    before = store.text_index.added

    edited = dict(FUNCS, step_15="Move the okapi along.")   # same lines, other words
    git_repo.write("walk.py", _module(edited))
    Indexer(settings, store).index()

    # the file entry's document (its name, first line, head) is unchanged too
    assert store.text_index.added - before == 1, "step_15's document only, not all 31"
    assert [h[1] for h in _hits(store, "okapi")] == ["step_15"]
    assert "step_15" not in [h[1] for h in _hits(store, "number")]
    assert store.text_index.docs == store.count("entries")


def test_after_edits_moves_and_deletes_the_index_answers_as_a_rebuild(git_repo, make_store):
    git_repo.write("walk.py", _module(FUNCS))
    git_repo.write("other.py", _module({"gnu_helper": "Feed the gnu."}))
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    store.build_text_index()
    Indexer(settings, store).index()

    versions = [
        {**FUNCS, "step_03": "Now the okapi runs."},                        # a doc changes
        {"step_new": "A quagga first.", **FUNCS},                           # every line moves
        {k: v for k, v in FUNCS.items() if k not in ("step_07", "step_08")},  # two go
        {**{k.replace("step", "walk"): v for k, v in FUNCS.items()}},      # all renamed
    ]
    for version in versions:
        git_repo.write("walk.py", _module(version))
        Indexer(settings, store).index()
        assert store.text_index.docs == store.count("entries")
        fresh = _rebuilt(store)
        for word in ("gnu", "okapi", "quagga", "number", "walk", "step", "feed"):
            hot = sorted((r["path"], r["qualname"], r["_score"] > 0)
                         for r in store.text_index.search([word], {}, 100))
            built = sorted((r["path"], r["qualname"], r["_score"] > 0)
                           for r in fresh.search([word], {}, 100))
            assert hot == built, (version.keys(), word)
    (git_repo.path / "walk.py").unlink()
    Indexer(settings, store).index()
    assert _hits(store, "step") == [] and store.text_index.docs == store.count("entries")
