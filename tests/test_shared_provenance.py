"""The store's record of which files came from a team's shared index stays true.

An answer says a file came from the shared index (shared_index/provenance.py)
only while the store holds that record; these run the real LanceDB store in a
temp dir and check every way a file's rows can change under the record.
"""

from __future__ import annotations

from indexd.model import FileRecord, file_key
from indexd.shared_index.provenance import IMPACT_LISTS, mark
from indexd.store.lance import FileWrite, Store

REPO = "/src/app"


def origin(path: str, content_hash: str, repo: str = REPO) -> dict:
    return {"key": file_key("work", repo, path), "realm": "work", "repo": repo, "path": path,
            "hash": content_hash, "uri": "s3://team/index", "commit": "c0ffee" * 6 + "abcd",
            "published_at": 1.0}


def write(store: Store, path: str, content_hash: str) -> None:
    store.write([FileWrite(FileRecord("work", REPO, path, hash=content_hash), [], [])])


def seeded(tmp_path) -> Store:
    store = Store(tmp_path / "store")
    for path, h in (("a.py", "h-a"), ("b.py", "h-b"), ("c.py", "h-c")):
        write(store, path, h)
    store.put_shared_origins("work", REPO, [origin("a.py", "h-a"), origin("b.py", "h-b"),
                                            origin("c.py", "h-c")])
    return store


def held(store_path) -> set[str]:
    """What a fresh reader (another process: indexctl without a daemon) sees."""
    return {r["path"] for r in Store(store_path).shared_origins().values()}


def test_a_write_with_other_content_drops_the_record_and_the_same_content_keeps_it(tmp_path):
    store = seeded(tmp_path)
    write(store, "a.py", "h-a")          # a re-parse of the same content (a touch)
    write(store, "b.py", "h-b-edited")   # a save
    assert set(r["path"] for r in store.shared_origins().values()) == {"a.py", "c.py"}
    assert held(tmp_path / "store") == {"a.py", "c.py"}
    store.delete_files([file_key("work", REPO, "c.py")])   # deleted on disk
    assert held(tmp_path / "store") == {"a.py"}


def test_a_removed_repo_and_a_model_switch_drop_every_record(tmp_path):
    store = seeded(tmp_path)
    store.put_shared_origins("work", "/src/other", [origin("x.py", "h-x", repo="/src/other")])
    store.delete_repo("work", REPO)
    assert held(tmp_path / "store") == {"x.py"}
    store.switch_model("another-model@1", 8)   # the shard's vectors were the old model's
    assert held(tmp_path / "store") == set()


def test_a_repos_records_are_replaced_not_added_to(tmp_path):
    store = seeded(tmp_path)
    store.put_shared_origins("work", REPO, [origin("a.py", "h-a")])   # the next seed matched one
    assert held(tmp_path / "store") == {"a.py"}


def test_answers_are_marked_from_the_records(tmp_path):
    store = seeded(tmp_path)
    write(store, "b.py", "h-b-edited")
    result = {"affected": [{"realm": "work", "repo": REPO, "path": "a.py"},
                           {"realm": "work", "repo": REPO, "path": "b.py"}],
              "tests": [{"realm": "work", "repo": REPO, "path": "c.py"}], "docs": []}
    mark(store, result, IMPACT_LISTS)
    assert [("shared" in i) for i in result["affected"] + result["tests"]] == [True, False, True]
    assert result["shared"]["results"] == 2 and result["shared"]["of"] == 3
    assert result["shared"]["commits"] == {REPO: "c0ffee" * 6 + "abcd"}
    # A store that never took anything from a shared index adds nothing to answers.
    plain = {"results": [{"realm": "work", "repo": REPO, "path": "a.py"}]}
    assert mark(Store(tmp_path / "other"), plain) == {"results": [{"realm": "work", "repo": REPO,
                                                                   "path": "a.py"}]}
