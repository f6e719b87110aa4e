"""`changes` on a deleted or renamed function: the symbol is reported, and so is
what used it (from the committed version), through the real daemon.

Before, the daemon had already reindexed the working tree, so the graph knew no
`helper` any more: impact of the deleted symbol raised and was skipped, and the
answer was "nothing affected, complete" for a change that breaks two files.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from testlib import BIN, settings_with_realm, wait_until

A_PY = ("def helper(value):\n    '''Double a value.'''\n    total = value * 2\n    return total\n\n\n"
        "def other():\n    return 2\n")
B_PY = "from a import helper\n\n\ndef use():\n    return helper(21)\n"
TEST_B = "from a import helper\nfrom b import use\n\n\ndef test_use():\n    assert use() == helper(21)\n"


@pytest.fixture
def repo(git_repo, daemon):
    git_repo.write("a.py", A_PY)
    git_repo.write("b.py", B_PY)
    git_repo.write("tests/test_b.py", TEST_B)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    target = f"{git_repo.path / 'a.py'}::helper"
    before = wait_until(lambda: (r := d.call("impact", target=target, depth=2)) and r["affected"] and r,
                        timeout=30, what="the graph")
    assert "b.py" in {a["path"] for a in before["affected"]}    # what the answer must keep
    git_repo.daemon = d
    return git_repo


def changes(repo) -> dict:
    repo.daemon.call("status", sync=True, timeout=30)
    return repo.daemon.call("changes", repo=str(repo.path))


def paths(res, bucket) -> set[str]:
    return {x["path"] for x in res[bucket]}


def test_deleted_function_lists_its_callers_and_tests(repo):
    repo.write("a.py", A_PY[A_PY.index("def other"):])
    res = changes(repo)
    assert ("a.py", "helper", "deleted") in {(c["path"], c["symbol"], c["change"]) for c in res["changed"]}
    assert "b.py" in paths(res, "affected")
    assert ("b.py", "use") in {(a["path"], a["symbol"]) for a in res["affected"]}
    assert "tests/test_b.py" in paths(res, "tests")
    assert res["complete"] is True, res["incomplete_reason"]


def test_renamed_function_lists_its_callers_and_tests(repo):
    repo.write("a.py", A_PY.replace("def helper(", "def assist("))
    res = changes(repo)
    rows = {c["symbol"]: c for c in res["changed"] if c["path"] == "a.py"}
    assert rows["helper"]["change"] == "renamed" and rows["helper"]["renamed_to"] == "assist"
    assert rows["assist"]["change"] == "added" and rows["assist"]["renamed_from"] == "helper"
    assert "b.py" in paths(res, "affected") and "tests/test_b.py" in paths(res, "tests")
    out = subprocess.run([str(BIN / "indexctl"), "changes", "--json"], cwd=repo.path,
                         capture_output=True, text=True, timeout=60, env=repo.daemon.env)
    assert out.returncode == 0, out.stderr
    assert "tests/test_b.py" in {t["path"] for t in json.loads(out.stdout)["tests"]}
    human = subprocess.run([str(BIN / "indexctl"), "changes"], cwd=repo.path, capture_output=True,
                           text=True, timeout=60, env=repo.daemon.env)
    assert "renamed  a.py::helper -> assist" in human.stdout and "b.py" in human.stdout


def test_deleted_file_lists_its_importers(repo):
    repo.rm("a.py")
    res = changes(repo)
    changed = {(c["path"], c["symbol"], c["change"]) for c in res["changed"]}
    assert {("a.py", "helper", "deleted"), ("a.py", "other", "deleted")} <= changed
    assert "b.py" in paths(res, "affected") and "tests/test_b.py" in paths(res, "tests")
    # The warm graph is left as the working tree is: a.py is gone from it.
    with pytest.raises(Exception, match="no indexed file"):
        repo.daemon.call("impact", target=str(repo.path / "a.py"))


def test_cannot_tell_is_incomplete(repo):
    """The committed a.py did not parse: what it gave is a guess, and the answer says so."""
    repo.write("a.py", A_PY + "\n\ndef broken(:\n    pass\n")
    repo.commit("broken")
    repo.write("a.py", A_PY[A_PY.index("def other"):])
    res = changes(repo)
    assert ("a.py", "helper", "deleted") in {(c["path"], c["symbol"], c["change"]) for c in res["changed"]}
    assert res["complete"] is False and "a.py" in res["incomplete_reason"]


def test_graph_after_changes_is_the_working_trees(repo):
    """The committed version is only borrowed for the answer: impact afterwards is as before."""
    repo.write("a.py", A_PY.replace("def helper(", "def assist("))
    changes(repo)
    target = str(repo.path / "a.py")
    with pytest.raises(Exception, match="not defined"):
        repo.daemon.call("impact", target=f"{target}::helper")
    assert repo.daemon.call("impact", target=f"{target}::assist")["affected"] == []


def test_rename_pairs_only_like_bodies(git_repo):
    from indexd.graph.changes import changed_symbols

    git_repo.write("m.py", A_PY + "\n\nclass Box:\n    def open(self):\n        return 'lid up'\n")
    git_repo.commit()
    # helper renamed; other deleted and an unrelated function added; a method renamed.
    git_repo.write("m.py", A_PY.replace("def helper(", "def assist(").replace(
        "def other():\n    return 2\n", "def fresh(items):\n    return sorted(items)[::-1]\n")
        + "\n\nclass Box:\n    def unlock(self):\n        return 'lid up'\n")
    rows = {r["symbol"]: r for r in changed_symbols(git_repo.path)}
    assert (rows["helper"]["change"], rows["helper"]["renamed_to"]) == ("renamed", "assist")
    assert (rows["Box.open"]["change"], rows["Box.open"]["renamed_to"]) == ("renamed", "Box.unlock")
    assert rows["other"]["change"] == "deleted" and "renamed_to" not in rows["other"]
    assert rows["fresh"]["change"] == "added" and "renamed_from" not in rows["fresh"]


def test_deleted_function_without_a_daemon(git_repo):
    """The offline fallback builds the graph from the store: same answer."""
    git_repo.write("a.py", A_PY)
    git_repo.write("b.py", B_PY)
    git_repo.write("tests/test_b.py", TEST_B)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    git_repo.write("a.py", A_PY[A_PY.index("def other"):])
    subprocess.run([str(BIN / "indexd"), "index"], check=True, capture_output=True)
    out = subprocess.run([str(BIN / "indexctl"), "changes", "--json"], cwd=git_repo.path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert ("a.py", "helper", "deleted") in {(c["path"], c["symbol"], c["change"]) for c in res["changed"]}
    assert "b.py" in paths(res, "affected") and "tests/test_b.py" in paths(res, "tests")
