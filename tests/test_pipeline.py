"""One-shot indexing through the real pipeline into a real LanceDB store."""

from __future__ import annotations

import os

from testlib import settings_with_realm

from indexd.pipeline import Indexer
from indexd.query.search import SearchRequest, keyword_search
from indexd.server.methods import store_status

PY = '''"""Module doc."""

class Client:
    """HTTP client."""

    def retry_with_backoff(self, attempts):
        """Retry a request with exponential backoff."""
        return attempts * 2

    def close(self):
        pass


def parse_header(line):
    return line.split(":")
'''

GO = '''package main

// Serve starts the server.
func Serve(addr string) error {
\treturn nil
}
'''

MD = '''# Guide

See [setup](setup.md) and [missing](nowhere.md).

## Retry policy

We back off exponentially.
'''


def make_repo(git_repo):
    git_repo.write("src/client.py", PY)
    git_repo.write("cmd/main.go", GO)
    git_repo.write("docs/guide.md", MD)
    git_repo.write("docs/setup.md", "# Setup\n")
    git_repo.write("config/app.toml", "[server]\nport = 8080\n[retry]\nmax = 3\n")
    git_repo.write(".gitignore", "build/\n*.log\n")
    git_repo.write("build/out.py", "def ignored(): pass\n")
    git_repo.write("debug.log", "noise\n")
    git_repo.write("blob.bin", b"\x00\x01\x02binary")
    git_repo.write("big.txt", "x" * (2 << 20))
    git_repo.write(".env", "API_KEY=" + "k" * 30 + "\n")
    git_repo.write("latin.txt", b"\xff\xfe\x00\x00\x81\x8d\x8f")
    git_repo.commit("init")
    git_repo.write("untracked.py", "def fresh_untracked(): pass\n")
    return git_repo


def index(settings, store):
    return Indexer(settings, store).index()


def snapshot(store):
    rows = store.entries_where(None, ["path", "kind", "qualname", "start_line", "end_line",
                                      "content_hash", "id"])
    return sorted((r["path"], r["kind"], r["qualname"], r["start_line"], r["end_line"],
                   r["content_hash"], r["id"]) for r in rows)


def test_index_stores_symbols_docs_keys_and_skips(git_repo, make_store):
    make_repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    report = index(settings, store)

    paths = set(store.file_records(realm="work", repo=str(git_repo.path)))
    assert "untracked.py" in paths and "src/client.py" in paths
    assert "build/out.py" not in paths and "debug.log" not in paths
    quals = {(r["path"], r["kind"], r["qualname"]) for r in store.entries_where(None, ["path", "kind", "qualname"])}
    assert ("src/client.py", "method", "Client.retry_with_backoff") in quals
    assert ("cmd/main.go", "function", "Serve") in quals
    assert ("docs/guide.md", "section", "Guide > Retry policy") in quals
    assert ("config/app.toml", "key", "server.port") in quals
    reasons = {p: r.reason.split(":")[0] for p, r in store.file_records(realm="work", repo=str(git_repo.path)).items()
               if r.status == "skipped"}
    assert reasons == {"blob.bin": "binary", "big.txt": "too_large", ".env": "secret",
                       "latin.txt": "encoding"}
    assert report.skipped == {"binary": 1, "too_large": 1, "secret": 1, "encoding": 1}
    status = store_status(settings, store)
    repo = status["realms"][0]["repos"][0]
    assert repo["skipped"] == {"binary": 1, "too_large": 1, "secret": 1, "encoding": 1}
    links = store.links.search().where("kind = 'file'").to_list()
    broken = {row["target"]: row["broken"] for row in links}
    assert broken == {"setup.md": False, "nowhere.md": True}


def test_rerun_parses_nothing_and_one_edit_rewrites_one_file(git_repo, make_store):
    make_repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    index(settings, store)
    before = snapshot(store)

    again = index(settings, store)
    assert again.parsed == 0 and again.hashed == 0 and again.deleted == 0
    assert snapshot(store) == before

    # touch without change: re-hashed, not re-parsed
    os.utime(git_repo.path / "cmd/main.go", ns=(1, 1))
    touched = index(settings, store)
    assert touched.hashed == 1 and touched.parsed == 0 and touched.touched == 1

    assert index(settings, store).repaired == 0, "a touched file keeps its entry count"

    git_repo.write("src/client.py", PY.replace("attempts * 2", "attempts * 3"))
    edited = index(settings, store)
    assert edited.parsed == 1 and edited.hashed == 1
    after = snapshot(store)
    changed = {row for row in set(after) ^ set(before)}
    assert {row[0] for row in changed} == {"src/client.py"}
    changed_quals = {row[2] for row in changed}
    # the edited method, its class and the file entry changed; close() did not
    assert "Client.retry_with_backoff" in changed_quals
    assert "Client.close" not in changed_quals
    old_ids = {(r[0], r[2]): r[6] for r in before}
    new_ids = {(r[0], r[2]): r[6] for r in after}
    assert old_ids == new_ids  # ids are stable across runs


def test_torn_entry_rows_are_reparsed_by_the_next_full_plan(git_repo, make_store):
    """A kill between an entries delete and its add leaves the file row matching the
    disk over missing rows (the enrich stage rewrites rows); the count check heals it."""
    make_repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    index(settings, store)
    before = snapshot(store)
    torn = [r for r in before if r[0] == "src/client.py"]
    assert len(torn) > 3
    store.entries.delete(f"id = '{torn[1][6]}'")      # one row lost
    store.entries.delete(f"path = 'docs/guide.md'")   # every row of another file lost
    report = index(settings, store)
    assert report.repaired == 2 and report.parsed == 2
    assert snapshot(store) == before
    assert index(settings, store).repaired == 0


def test_deleted_file_rows_are_purged_from_disk(git_repo, make_store):
    marker = "zqxjmarker" + "1234567"
    git_repo.write("a.py", f"def {marker}():\n    pass\n")
    git_repo.write("b.py", "def keep(): pass\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    index(settings, store)
    assert keyword_search(store, SearchRequest(query=marker))["total"] >= 1

    git_repo.rm("a.py")
    report = index(settings, store)
    assert report.deleted == 1
    assert keyword_search(store, SearchRequest(query=marker))["total"] == 0
    store.optimize(purge=True)
    needle = marker.encode()
    for root, _dirs, files in os.walk(settings.paths.store_dir):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                assert needle not in fh.read(), f"{name} still holds the deleted symbol"


def test_search_filters(git_repo, tmp_path, make_store):
    make_repo(git_repo)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "retry.md").write_text("# Retry notes\n\nretry with backoff is good\n")
    settings = settings_with_realm("work", git_repo.path)
    from indexd.realms import add_repos
    from indexd.config import load_settings
    add_repos(settings, "personal", [str(other)])
    settings = load_settings()
    store = make_store(settings)
    index(settings, store)

    def hits(**kw):
        res = keyword_search(store, SearchRequest(query="retry backoff", **kw))
        return {(h["realm"], h["path"], h["symbol"], h["kind"]) for h in res["results"]}

    assert ("work", "src/client.py", "Client.retry_with_backoff", "method") in hits()
    assert all(h[0] == "personal" for h in hits(realm="personal"))
    assert hits(realm="personal")
    assert all(h[3] in ("function", "method") for h in hits(kind="function"))
    assert hits(kind="function")
    assert all(h[1].endswith(".md") for h in hits(lang="markdown"))
    assert {h[1] for h in hits(path="src/*")} == {"src/client.py"}
    assert all(h[0] == "personal" for h in hits(repo="notes"))
    assert hits(repo="notes")
    # split identifiers: words find the identifier
    res = keyword_search(store, SearchRequest(query="parse header"))
    assert res["results"][0]["symbol"] == "parse_header"
    res = keyword_search(store, SearchRequest(query="Client.retry_with_backoff"))
    assert res["results"][0]["symbol"] == "Client.retry_with_backoff"
