"""list_files / is_ignored / RepoRules on real git repos and real folders."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel, FileMode, Option

from indexd.config import Paths, Settings
from indexd.model import SKIP_SYMLINK, SKIP_UNREADABLE
from indexd.scan.listing import RepoRules, is_ignored, list_files

SIG = pygit2.Signature("Test", "test@example.invalid")


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory):
    """Keep the machine's ~/.gitconfig (excludesFile etc.) out of these tests."""
    empty = str(tmp_path_factory.mktemp("gitconfig"))
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {lvl: pygit2.settings.search_path[lvl] for lvl in levels}
    for lvl in levels:
        pygit2.settings.search_path[lvl] = empty
    yield
    for lvl, value in saved.items():
        pygit2.settings.search_path[lvl] = value


def make_settings(**kw) -> Settings:
    return Settings(paths=Paths(*[Path("/nonexistent")] * 5), **kw)


def write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def git_repo(root: Path, tracked: dict, untracked: dict | None = None) -> pygit2.Repository:
    """A repo whose first commit holds exactly ``tracked``, plus ``untracked`` on disk."""
    repo = pygit2.init_repository(str(root))
    write(root, tracked)
    for rel in tracked:
        repo.index.add(rel)
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "init", repo.index.write_tree(), [])
    write(root, untracked or {})
    return repo


def assert_consistent(root: Path, listing, settings=None) -> None:
    """is_ignored() must agree with list_files() for every file on disk."""
    rules = RepoRules(root, settings)
    skipped = {s[0] for s in listing.skipped}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if rel in skipped:
                continue
            assert rules.is_ignored(rel) == (rel not in listing.files), rel


# --- git repos ---------------------------------------------------------------

def test_git_tracked_and_untracked(tmp_path):
    git_repo(tmp_path, {
        "README.md": "# r\n",
        ".gitignore": "*.log\nbuild/\n",
        "src/app.py": "x = 1\n",
        "src/.gitignore": "generated_*.py\n/local.cfg\n",
        "src/keep.log": "tracked although ignored\n",   # git tracks it anyway
    }, {
        "src/new.py": "untracked, not ignored\n",
        "src/debug.log": "ignored by root .gitignore\n",
        "src/generated_x.py": "ignored by nested .gitignore\n",
        "src/local.cfg": "anchored in src/.gitignore\n",
        "local.cfg": "anchor does not apply at the root\n",
        "build/out.py": "ignored directory\n",
        "docs/deep/new.md": "untracked directory, listed file by file\n",
    })
    got = list_files(tmp_path, make_settings())
    assert got.is_git
    assert got.files == [".gitignore", "README.md", "docs/deep/new.md", "local.cfg",
                         "src/.gitignore", "src/app.py", "src/keep.log", "src/new.py"]
    assert got.skipped == []
    assert_consistent(tmp_path, got)


def test_git_info_exclude_and_indexdignore(tmp_path):
    git_repo(tmp_path, {"a.py": "", "vendor/big.js": "", ".indexdignore": "vendor/\n*.min.js\n"},
             {"notes.txt": "", "scratch/x.py": "", "lib.min.js": ""})
    (tmp_path / ".git/info").mkdir(exist_ok=True)
    (tmp_path / ".git/info/exclude").write_text("scratch/\n")
    got = list_files(tmp_path)
    # .indexdignore applies to tracked files too; info/exclude only to untracked ones.
    assert got.files == [".indexdignore", "a.py", "notes.txt"]
    assert_consistent(tmp_path, got)


def test_git_deleted_tracked_file_not_listed(tmp_path):
    git_repo(tmp_path, {"a.py": "", "b.py": "", "d/c.py": ""})
    (tmp_path / "b.py").unlink()
    shutil.rmtree(tmp_path / "d")
    assert list_files(tmp_path).files == ["a.py"]


def test_git_default_excludes_apply_to_untracked(tmp_path):
    git_repo(tmp_path, {"a.py": "", "venv/tracked_on_purpose.py": ""}, {
        "node_modules/pkg/index.js": "", "sub/__pycache__/m.cpython-311.pyc": "",
        ".venv/lib/site.py": "", ".venv/pyvenv.cfg": "", ".tox/log.txt": "",
        ".mypy_cache/x.json": "", ".pytest_cache/v": "", "venv/bin/activate": "",
        "venv/pyvenv.cfg": "", ".hg/store": "", ".svn/entries": "", "src/ok.py": "",
        # a package named venv (the stdlib has one) is code, not a virtualenv
        "lib/venv/__init__.py": "",
    })
    got = list_files(tmp_path)
    assert got.files == ["a.py", "lib/venv/__init__.py", "src/ok.py", "venv/tracked_on_purpose.py"]
    assert_consistent(tmp_path, got)


def test_git_settings_include_exclude(tmp_path):
    git_repo(tmp_path, {"src/a.py": "", "src/a_test.py": "", "docs/x.md": "", "tool.sh": ""},
             {"src/b.py": "", "gen/c.py": ""})
    s = make_settings(include=("*.py", "*.md"), exclude=("*_test.py", "gen/"))
    got = list_files(tmp_path, s)
    assert got.files == ["docs/x.md", "src/a.py", "src/b.py"]
    assert_consistent(tmp_path, got, s)


def test_git_submodules_and_nested_repos_skipped(tmp_path):
    repo = git_repo(tmp_path, {"a.py": ""})
    # A submodule checkout: a gitlink entry in the index, a repo on disk.
    sub = git_repo(tmp_path / "libs/sub", {"s.py": ""})
    repo.index.add(pygit2.IndexEntry("libs/sub", sub.head.target, FileMode.COMMIT))
    repo.index.write()
    git_repo(tmp_path / "other", {"o.py": ""}, {"o2.py": ""})   # untracked nested repo
    got = list_files(tmp_path)
    assert got.files == ["a.py"]
    rules = RepoRules(tmp_path)
    assert rules.is_ignored("libs/sub/s.py") and rules.is_ignored("other/o2.py")
    assert rules.is_ignored("other", is_dir=True)


def test_git_file_symlinks(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours\n")
    root = tmp_path / "repo"
    git_repo(root, {"real.py": ""})
    (root / "alias.py").symlink_to("real.py")
    (root / "escape.txt").symlink_to(outside)
    (root / "dangling.py").symlink_to("missing.py")
    got = list_files(root)
    assert got.files == ["alias.py", "real.py"]
    assert got.skipped == [("dangling.py", SKIP_UNREADABLE, "dangling symlink"),
                           ("escape.txt", SKIP_SYMLINK, "symlink target outside the repo")]


def test_broken_git_dir_falls_back_to_plain_walk(tmp_path, caplog):
    write(tmp_path, {"a.py": "", ".gitignore": "*.log\n", "x.log": ""})
    (tmp_path / ".git").mkdir()          # empty: not a repository
    (tmp_path / ".git/HEAD").write_text("garbage")
    with caplog.at_level(logging.WARNING, logger="indexd.scan.listing"):
        got = list_files(tmp_path)
    assert not got.is_git
    assert got.files == [".gitignore", "a.py"]
    assert "plain folder" in caplog.text


def test_bare_repo_is_a_plain_folder(tmp_path):
    pygit2.init_repository(str(tmp_path / ".git"), bare=True)
    write(tmp_path, {"a.py": ""})
    got = list_files(tmp_path)
    assert not got.is_git and got.files == ["a.py"]


def test_reload_picks_up_changed_ignore_files(tmp_path):
    git_repo(tmp_path, {"a.py": ""}, {"b.py": "", "c.md": ""})
    rules = RepoRules(tmp_path)
    assert not rules.is_ignored("b.py") and not rules.is_ignored("c.md")
    (tmp_path / ".gitignore").write_text("b.py\n")
    (tmp_path / ".indexdignore").write_text("*.md\n")
    rules.reload()
    assert rules.is_ignored("b.py") and rules.is_ignored("c.md")
    assert not rules.is_ignored("a.py")


def test_is_ignored_tracks_index_changes(tmp_path):
    repo = git_repo(tmp_path, {"a.py": "", ".gitignore": "*.gen\n"}, {"x.gen": ""})
    rules = RepoRules(tmp_path)
    assert rules.is_ignored("x.gen")
    repo.index.add("x.gen")              # force-added: tracked wins over .gitignore
    repo.index.write()
    assert not rules.is_ignored("x.gen")


def test_is_ignored_rejects_paths_outside(tmp_path):
    write(tmp_path, {"a.py": ""})
    assert is_ignored(tmp_path, "../a.py", None)
    assert is_ignored(tmp_path, "/etc/passwd", None)
    assert not is_ignored(tmp_path, "./a.py", None)


# --- plain folders -------------------------------------------------------------

def test_plain_nested_gitignore(tmp_path):
    write(tmp_path, {
        ".gitignore": "*.log\n/out/\ndata/\n",
        "keep.log": "", "a.py": "", "out/x.py": "", "lib/out/y.py": "",
        "lib/.gitignore": "!important.log\n/local.py\n",
        "lib/important.log": "", "lib/other.log": "", "lib/local.py": "",
        "lib/deep/local.py": "",
        "data/.gitignore": "!*\n", "data/x.csv": "",   # cannot re-include in an ignored dir
        "node_modules/m/index.js": "", "__pycache__/a.pyc": "",
    })
    got = list_files(tmp_path)
    assert not got.is_git
    assert got.files == [".gitignore", "a.py", "lib/.gitignore", "lib/deep/local.py",
                         "lib/important.log", "lib/out/y.py"]
    assert_consistent(tmp_path, got)


def test_plain_indexdignore_and_settings(tmp_path):
    write(tmp_path, {".indexdignore": "secret_stuff/\n", "secret_stuff/a.py": "",
                     "a.py": "", "b.md": "", "c_test.py": "", "gen/d.py": ""})
    s = make_settings(include=("*.py",), exclude=("*_test.py", "gen/"))
    got = list_files(tmp_path, s)
    assert got.files == ["a.py"]
    assert_consistent(tmp_path, got, s)


def test_plain_symlinks_do_not_hang_or_escape(tmp_path):
    root = tmp_path / "root"
    write(root, {"a/file.py": "", "b/c/d.py": ""})
    (root / "a/up").symlink_to("..", target_is_directory=True)      # directory loop
    (root / "b/c/self").symlink_to(root / "b", target_is_directory=True)
    (root / "ring1").symlink_to("ring2")                            # symlink loop
    (root / "ring2").symlink_to("ring1")
    (root / "dangling.py").symlink_to("nowhere.py")
    (tmp_path / "outside.py").write_text("")
    (root / "escape.py").symlink_to(tmp_path / "outside.py")
    (root / "ext").symlink_to(tmp_path, target_is_directory=True)
    (root / "alias.py").symlink_to("a/file.py")
    # In a thread, waited for: a walk that followed the loops would never come back.
    found = {}
    walker = threading.Thread(target=lambda: found.update(got=list_files(root)), daemon=True)
    walker.start()
    walker.join(timeout=120)
    assert not walker.is_alive(), "list_files did not come back from the symlink loops"
    got = found["got"]
    assert got.files == ["a/file.py", "alias.py", "b/c/d.py"]
    assert got.skipped == [
        ("dangling.py", SKIP_UNREADABLE, "dangling symlink"),
        ("escape.py", SKIP_SYMLINK, "symlink target outside the repo"),
        ("ext", SKIP_SYMLINK, "symlink target outside the repo"),
        ("ring1", SKIP_UNREADABLE, "symlink loop"),
        ("ring2", SKIP_UNREADABLE, "symlink loop"),
    ]


def test_plain_fifo_is_not_listed(tmp_path):
    write(tmp_path, {"a.py": ""})
    os.mkfifo(tmp_path / "pipe")
    assert list_files(tmp_path).files == ["a.py"]


# --- permission denied (real, as an unprivileged user) --------------------------------

# Root ignores file modes, so the listing runs in a forked child that drops to
# nobody; the tree lives in a /tmp folder that nobody may traverse.
@pytest.fixture
def shared_tmp():
    path = Path(tempfile.mkdtemp(prefix="indexd-listing-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(path)


def run_unprivileged(fn):
    if os.geteuid() != 0:
        return fn()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        try:
            os.close(rfd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            # The repo belongs to root; libgit2 refuses foreign repos by default,
            # and fails on config dirs it may not stat (root's pytest tmp).
            pygit2.option(Option.SET_OWNER_VALIDATION, 0)
            for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
                pygit2.settings.search_path[level] = "/nonexistent-indexd-test"
            out = {"ok": fn()}
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = {"error": repr(exc)}
        with os.fdopen(wfd, "w") as fh:
            fh.write(json.dumps(out))
        os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd) as fh:
        out = json.loads(fh.read() or '{"error": "no output"}')
    os.waitpid(pid, 0)
    assert "error" not in out, out.get("error")
    return out["ok"]


def _listing_json(root):
    got = list_files(root)
    return {"files": got.files, "skipped": [list(s) for s in got.skipped], "git": got.is_git}


def test_plain_permission_denied_dir(shared_tmp):
    write(shared_tmp, {"a.py": "", "locked/x.py": "", "z/after.py": ""})
    (shared_tmp / "locked").chmod(0)
    got = run_unprivileged(lambda: _listing_json(shared_tmp))
    assert got["files"] == ["a.py", "z/after.py"]
    assert got["skipped"] == [["locked", SKIP_UNREADABLE, os.strerror(13)]]


def test_git_tracked_file_in_permission_denied_dir(shared_tmp):
    git_repo(shared_tmp, {"a.py": "", "locked/x.py": ""})
    (shared_tmp / "locked").chmod(0)
    got = run_unprivileged(lambda: _listing_json(shared_tmp))
    assert got["git"] and got["files"] == ["a.py"]
    assert got["skipped"] == [["locked/x.py", SKIP_UNREADABLE, os.strerror(13)]]
