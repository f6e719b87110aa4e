"""A save's plan (a few dirty paths) reads those files' rows, not the repo's:
real pipeline, real LanceDB; the store's answers are recorded, not faked."""

from __future__ import annotations

from testlib import indexed_repo

from indexd.query.search import SearchRequest, keyword_search


def test_a_one_file_plan_reads_one_file_row(git_repo, make_store):
    settings, store, indexer, realm, repo = indexed_repo(git_repo, make_store, 40)

    read = []
    real = store.file_records

    def recording(*args, **kw):
        out = real(*args, **kw)
        read.append(len(out))
        return out

    store.file_records = recording
    git_repo.write("pkg/m07.py", "def fn_7():\n    return 7\n\n\ndef saved_later():\n    return 8\n")
    git_repo.write("pkg/new.py", "def brand_new():\n    return 9\n")
    report = indexer.run([indexer.plan_repo(realm, repo, ["pkg/m07.py", "pkg/new.py", "pkg/m07.py"])])
    assert read == [1]                       # m07's row; new.py has none yet
    assert report.parsed == 2 and report.unchanged == 0
    for name in ("saved_later", "brand_new", "fn_3"):
        hits = keyword_search(store, SearchRequest(query=name, mode="keyword"))["results"]
        assert any(h["symbol"] == name for h in hits), name

    # A path that left the disk still loses its rows through a one-path plan.
    git_repo.rm("pkg/m07.py")
    report = indexer.run([indexer.plan_repo(realm, repo, ["pkg/m07.py"])])
    assert report.deleted == 1
    assert not keyword_search(store, SearchRequest(query="saved_later", mode="keyword"))["results"]
