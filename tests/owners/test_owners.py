"""Owners from git blame on real pygit2 repos made by the tests, two authors each."""

from __future__ import annotations

import json
import os
import random

import pygit2
import pytest
from testlib import GitRepo, run_cli, settings_with_realm

from indexd.owners import Owners
from indexd.owners.blame import old_lines_of
from owners_fixtures import ALICE, BOB, MODULE_V1, MODULE_V2, people, two_authors  # noqa: F401

@pytest.fixture
def owners(git_repo):
    two_authors(git_repo)
    settings_with_realm("work", git_repo.path)
    from indexd.config import load_settings

    return Owners(load_settings)


def test_file_owners_by_lines_with_share_and_latest_commit(owners, git_repo):
    res = owners.target(str(git_repo.path / "text.py"))
    assert res["available"] and res["lines"] == 8
    assert people(res) == {"Alice Able": 5, "Bob Baker": 3}
    alice, bob = res["owners"]
    assert (alice["share"], bob["share"]) == (0.625, 0.375)
    assert alice["email"] == "alice@example.com" and alice["last_time"] == ALICE.time
    assert bob["last_commit"] == str(git_repo.repo.head.target)
    assert [c["summary"] for c in res["recent_commits"]] == ["render with a separator",
                                                            "parse and render"]
    assert res["uncommitted_lines"] == 0 and res["partial"] is False


def test_uncommitted_lines_belong_to_nobody(owners, git_repo):
    git_repo.write("text.py", "# a header\n" + MODULE_V2.replace("    return words\n",
                                                                "    return list(words)\n"))
    res = owners.target(str(git_repo.path / "text.py"))
    assert res["lines"] == 9 and res["uncommitted_lines"] == 2
    assert people(res) == {"Alice Able": 4, "Bob Baker": 3}


def test_a_file_not_committed_yet_is_all_uncommitted(owners, git_repo):
    git_repo.write("new.py", "x = 1\ny = 2\n")
    res = owners.target(str(git_repo.path / "new.py"))
    assert res["available"] and res["owners"] == [] and res["uncommitted_lines"] == 2
    assert res["reason"] == "not committed yet"


def test_history_bound_says_partial_and_names_no_one_for_older_lines(git_repo):
    two_authors(git_repo)
    for i in range(3):
        git_repo.write(f"other{i}.txt", f"{i}\n")
        git_repo.commit(f"other {i}", author=BOB)
    settings_with_realm("work", git_repo.path)
    from indexd.config import load_settings

    res = Owners(load_settings, max_commits=2).target(str(git_repo.path / "text.py"))
    assert res["partial"] and res["older_lines"] == 8 and res["owners"] == []
    assert "last 2 commits" in res["partial_reason"]
    whole = Owners(load_settings, max_commits=10).target(str(git_repo.path / "text.py"))
    assert not whole["partial"] and people(whole) == {"Alice Able": 5, "Bob Baker": 3}


def test_mailmap_merges_an_author_with_two_addresses(owners, git_repo):
    other = pygit2.Signature("bob", "bob@laptop.local", 1_700_600_000, 0)
    git_repo.write("text.py", MODULE_V2 + "# bob again\n")
    git_repo.write(".mailmap", "Bob Baker <bob@example.com> <bob@laptop.local>\n")
    git_repo.commit("a note", author=other)
    res = owners.target(str(git_repo.path / "text.py"))
    assert people(res) == {"Alice Able": 5, "Bob Baker": 4}


def test_plain_folder_and_binary_files_have_no_owners_and_say_why(tmp_path, git_repo):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# a\n")
    git_repo.write("logo.bin", b"\x89PNG\0\0\x01binary")
    git_repo.commit("logo", author=ALICE)
    settings_with_realm("work", folder, git_repo.path)
    from indexd.config import load_settings

    owners = Owners(load_settings)
    plain = owners.target(str(folder / "a.md"))
    assert not plain["available"] and "not in a git repository" in plain["reason"]
    binary = owners.target(str(git_repo.path / "logo.bin"))
    assert not binary["available"] and binary["reason"] == "binary file"


def test_repo_name_and_repo_relative_targets(owners, git_repo):
    by_name = owners.target(f"{git_repo.path.name}/text.py")
    by_rel = owners.target("text.py")
    assert by_name["path"] == by_rel["path"] == "text.py"
    assert people(by_name) == people(by_rel) == {"Alice Able": 5, "Bob Baker": 3}


def test_unknown_target_is_a_clear_error(owners):
    from indexd.errors import RealmError

    with pytest.raises(RealmError, match="no file matches"):
        owners.target("nowhere/missing.py")


def test_new_line_origins_agree_with_the_text(tmp_path):
    """old_lines_of maps every kept line of the new text to the same old line."""
    repo = pygit2.init_repository(str(tmp_path / "r"))
    rng = random.Random(7)
    old = [f"line {i}\n" for i in range(200)]
    blob = repo[repo.create_blob("".join(old).encode())]
    for _ in range(30):
        new = list(old)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(new))
            op = rng.choice("adr")
            if op == "a":
                new.insert(at, f"added {rng.random()}\n")
            elif op == "d":
                del new[at]
            else:
                new[at] = f"changed {rng.random()}\n"
        origin = old_lines_of(blob.diff_to_buffer("".join(new).encode()), len(new))
        assert len(origin) == len(new)
        for n, o in enumerate(origin, 1):
            if o is None:
                assert new[n - 1].startswith(("added", "changed"))
            else:
                assert new[n - 1] == old[o - 1]
        kept = [o for o in origin if o is not None]
        assert kept == sorted(set(kept))        # in order, each old line at most once
        assert len(kept) == sum(not line.startswith(("added", "changed")) for line in new)


def test_blame_work_is_bounded_by_the_history_cut_not_the_history(tmp_path):
    """4x the history, the same cut: blame costs about the same (< 2x), where an
    uncut blame walks it all."""
    from testlib import cost_ratio

    from indexd.owners.blame import blame_committed, history_bound

    def repo_with(n: int) -> GitRepo:
        repo = GitRepo(tmp_path / f"r{n}")
        body = ""
        for i in range(n):
            body += f"line {i}\n"
            repo.write("grow.txt", body)
            repo.commit(f"c{i}", author=ALICE if i % 2 else BOB)
        return repo

    def blamer(repo: GitRepo):
        head = repo.repo.head.target
        oldest = history_bound(repo.repo, head, 20)
        blob = repo.repo[repo.repo[head].tree["grow.txt"].id]
        return lambda: blame_committed(repo.repo, "grow.txt", blob, head, oldest)

    small, big = blamer(repo_with(60)), blamer(repo_with(240))
    assert sum(i == -2 for i in big().lines) == 240 - 20   # OLDER: nobody's
    assert cost_ratio(small, big, bound=2.0) < 2.0


def test_a_directory_target_says_it_is_no_file(owners, git_repo):
    (git_repo.path / "drafts").mkdir()            # untracked: not in HEAD's tree either
    git_repo.write("src/lib.py", "x = 1\n")
    git_repo.commit("src", author=ALICE)          # tracked: a tree in HEAD
    for folder in ("drafts", "src"):
        res = owners.target(str(git_repo.path / folder))
        assert not res["available"] and "directory" in res["reason"], res


def test_an_untracked_link_out_of_the_repo_is_not_followed(owners, git_repo, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n" * 5)
    (git_repo.path / "link.txt").symlink_to(outside)
    res = owners.target(f"{git_repo.path.name}/link.txt")
    assert not res["available"] and res["reason"] == "a symbolic link" and res["lines"] == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_repo_another_user_owns_says_why_without_a_traceback(git_repo):
    """A checkout owned by another user (an unpacked sdist, a shared volume): git refuses
    to open it (safe.directory), and `indexctl impact` printed the owners' traceback."""
    two_authors(git_repo)
    settings_with_realm("work", git_repo.path)
    for path in [git_repo.path, *git_repo.path.rglob("*")]:
        os.lchown(path, 65534, 65534)
    run_cli("index", "--json", tool="indexd", check=True)
    out = run_cli("impact", git_repo.path / "text.py", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    target = json.loads(out.stdout)["owners"]["target"]
    assert not target["available"] and "owned by" in target["reason"], target
