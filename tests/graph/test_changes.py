"""changed_symbols on a real git repo: staged, unstaged, added, deleted, since REV."""

from __future__ import annotations

from indexd.graph.changes import changed_symbols

V1 = ("import os\n\n"
      "def alpha():\n    return 1\n\n"
      "def beta():\n    return 2\n\n"
      "class Gamma:\n    def one(self):\n        return 1\n\n    def two(self):\n        return 2\n")


def rows(repo, since=None):
    return {(r["path"], r["symbol"], r["change"]) for r in changed_symbols(repo.path, since)}


def test_staged_and_unstaged_edits(git_repo):
    git_repo.write("mod.py", V1)
    git_repo.write("gone.py", "def old():\n    pass\n")
    first = git_repo.commit("v1")
    assert rows(git_repo) == set()
    # Unstaged: edit beta's body.
    git_repo.write("mod.py", V1.replace("return 2\n\nclass", "return 22\n\nclass"))
    assert rows(git_repo) == {("mod.py", "beta", "modified")}
    # Staged: edit Gamma.two and stage it; then an unstaged edit of alpha on top.
    staged = V1.replace("return 2\n\nclass", "return 22\n\nclass").replace(
        "        return 2\n", "        return 3\n")
    git_repo.write("mod.py", staged)
    git_repo.repo.index.add("mod.py")
    git_repo.repo.index.write()
    git_repo.write("mod.py", staged.replace("return 1\n\ndef beta", "return 11\n\ndef beta"))
    assert rows(git_repo) == {("mod.py", "alpha", "modified"), ("mod.py", "beta", "modified"),
                              ("mod.py", "Gamma.two", "modified")}
    # A staged new file and a deleted file.
    git_repo.write("new.py", "def fresh():\n    pass\n")
    git_repo.repo.index.add("new.py")
    git_repo.repo.index.write()
    git_repo.rm("gone.py")
    got = rows(git_repo)
    assert ("new.py", "fresh", "added") in got
    assert ("gone.py", "old", "deleted") in got
    # Untracked files do not count until staged.
    git_repo.write("scratch.py", "def tmp():\n    pass\n")
    assert not any(p == "scratch.py" for p, _, _ in rows(git_repo))
    # Removing a function is a deleted symbol.
    git_repo.write("mod.py", V1.replace("def beta():\n    return 2\n\n", ""))
    assert ("mod.py", "beta", "deleted") in rows(git_repo)
    # Against a revision: committed changes count too.
    git_repo.write("mod.py", V1 + "\ndef delta():\n    return 4\n")
    git_repo.commit("v2")
    assert rows(git_repo) == set()
    assert rows(git_repo, first) == {("mod.py", "delta", "added"), ("new.py", "fresh", "added"),
                                     ("scratch.py", "tmp", "added"), ("gone.py", "old", "deleted")}


def test_changed_lines_outside_symbols(git_repo):
    git_repo.write("mod.py", V1)
    git_repo.commit("v1")
    git_repo.write("mod.py", "import sys\n" + V1[len("import os\n"):])
    out = changed_symbols(git_repo.path)
    assert [(r["symbol"], r["kind"], r["lines"]) for r in out] == [(None, "file", [(1, 1)])]


def test_staged_only_sees_the_index(git_repo):
    """--staged: the index against HEAD; unstaged edits on top, and unstaged
    deletions, are not counted."""
    git_repo.write("mod.py", V1)
    git_repo.write("gone.py", "def old():\n    pass\n")
    git_repo.commit("v1")
    git_repo.write("mod.py", V1.replace("return 2\n\nclass", "return 22\n\nclass"))
    git_repo.repo.index.add("mod.py")
    git_repo.repo.index.write()
    git_repo.write("mod.py", V1.replace("return 2\n\nclass", "return 22\n\nclass")
                   .replace("return 1\n\ndef beta", "return 11\n\ndef beta"))
    git_repo.rm("gone.py")
    staged = {(r["path"], r["symbol"], r["change"])
              for r in changed_symbols(git_repo.path, staged=True)}
    assert staged == {("mod.py", "beta", "modified")}
    assert rows(git_repo) == {("mod.py", "alpha", "modified"), ("mod.py", "beta", "modified"),
                              ("gone.py", "old", "deleted")}
    git_repo.repo.index.remove("gone.py")
    git_repo.repo.index.write()
    assert ("gone.py", "old", "deleted") in {
        (r["path"], r["symbol"], r["change"]) for r in changed_symbols(git_repo.path, staged=True)}
