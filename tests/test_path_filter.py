"""Search's path filter means the same wherever it is evaluated (pathglob.py).

`--path tests` answered 0 results (only a glob matched), and any path filter
sent search from the daemon's hot indexes to the table (3-4x slower on the
stdlib). Now the table's SQL, the hot keyword index's regular expression and
Python's check answer a plain folder, a file and globs alike.
"""

from __future__ import annotations

import pytest
from testlib import settings_with_realm

from indexd import pathglob
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest, in_memory

FILES = ["src/a.py", "src/deep/b.py", "srcs/c.py", "my-lib/_x.py", "tests/test_1.py",
         "n(1)/z.py", "top.py", "a_b/x.py", "aXb/y.py"]
PATTERNS = ["src", "src/", "./src", "src/deep", "src/a.py", "srcs/c.py", "sr", "src/**",
            "src/*.py", "*.py", "my-lib", "my-lib/_*", "[s]rc/*", "[!s]*", "n(1)",
            "tests/test_?.py", "a_b", "nowhere"]


def _request(pattern: str) -> SearchRequest:
    return SearchRequest.from_params({"query": "gnu", "mode": "keyword", "limit": 100,
                                      "path": pattern})


def _hits(store, pattern: str) -> set[str]:
    req = _request(pattern)
    return {h["path"] for h in fused_search(store, None, req)["results"]}


def test_the_table_and_the_hot_index_answer_every_pattern_alike(git_repo, make_store):
    for i, path in enumerate(FILES):
        git_repo.write(path, f"def gnu_{i}():\n    '''Feed the gnu.'''\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    from_table = {p: _hits(store, p) for p in PATTERNS}
    assert not in_memory(store, _request("src"))
    store.build_text_index()
    for pattern in PATTERNS:
        assert in_memory(store, _request(pattern)), pattern
        expected = {f for f in FILES if pathglob.matches(pathglob.normalize(pattern), f)}
        assert from_table[pattern] == expected, pattern
        assert _hits(store, pattern) == expected, pattern
    assert from_table["src"] == {"src/a.py", "src/deep/b.py"}
    assert from_table["sr"] == set() and from_table["a_b"] == {"a_b/x.py"}


@pytest.mark.parametrize("pattern,path,hit", [
    ("src", "src/a.py", True), ("src", "src", True), ("src", "srcs/a.py", False),
    ("src/*.py", "src/a/b.py", True), ("[!t]*", "tests/x.py", False), ("a_b", "a_b/x", True),
    ("a_b", "aXb/x", False), ("50%", "50%/x", True), ("50%", "500/x", False),
])
def test_one_pattern_one_meaning(pattern, path, hit):
    assert pathglob.matches(pattern, path) is hit
