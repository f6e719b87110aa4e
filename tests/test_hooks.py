"""Git hooks (indexd/hooks.py): installed with pygit2-made repos, fired by the git CLI.

Hooks only run under the git CLI (pygit2 never runs them), so commits and
checkouts here go through ``git`` with user.name/email passed by ``-c``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from testlib import BIN, GitRepo, run_cli, settings_with_realm, wait_until

from indexd.config import load_settings
from indexd.errors import ConfigError
from indexd.hooks import (BEGIN, CHAIN_SUFFIX, END, HOOKS, hooks_status, install_hooks,
                          uninstall_hooks)

USER_HOOK = b"#!/bin/sh\n# the user's own hook\nprintf '%s|' \"$@\" >> \"$MARKER\"\ncat >> \"$MARKER\"\nexit 3\n"


def git(repo: Path, *args: str, env: dict | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com",
           "-c", "commit.gpgsign=false", *args]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=60,
                          env=env or os.environ.copy(), check=check)


def listening_socket(path: Path) -> socket.socket:
    """A bound Unix socket at the daemon's path: the hook's `[ -S ]` test passes."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(1)
    return s


def fake_indexctl(tmp_path: Path) -> tuple[Path, Path]:
    """An `indexctl` stand-in that records its arguments and working folder."""
    log = tmp_path / "fake-indexctl.log"
    script = tmp_path / "fake-indexctl"
    script.write_text(f'#!/bin/sh\necho "$PWD $*" >> {log}\n')
    script.chmod(0o755)
    return script, log


def reindex_lines(d, repo: Path) -> int:
    return sum(1 for line in d.output().splitlines()
               if "reason=reindex requested" in line and f"repo={repo}" in line)


# -- install / status / update in place ----------------------------------------

def test_install_writes_executable_sh_hooks_with_absolute_paths(git_repo):
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    result = install_hooks(git_repo.path)
    hooks = git_repo.path / ".git" / "hooks"
    assert result["hooks_dir"] == str(hooks.resolve())
    assert [h["action"] for h in result["hooks"]] == ["installed"] * 3
    sock = str(load_settings().paths.socket)
    for name in HOOKS:
        path = hooks / name
        text = path.read_text()
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        assert text.startswith("#!/bin/sh\n") and BEGIN in text and END in text
        assert sock in text and str(BIN / "indexctl") in text
        assert '[ -S "$indexd_sock" ]' in text and "--json" in text
        proc = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr

    status = hooks_status(git_repo.path)
    assert status["installed"] is True and "note" not in status
    assert all(h["installed"] and h["current"] and h["chained"] is None for h in status["hooks"])

    again = install_hooks(git_repo.path)
    assert [h["action"] for h in again["hooks"]] == ["unchanged"] * 3


def test_reinstall_updates_our_block_in_place(git_repo, tmp_path):
    install_hooks(git_repo.path)
    path = git_repo.path / ".git" / "hooks" / "post-commit"
    # Someone added a line above our block: it survives an update.
    text = path.read_text().replace("#!/bin/sh\n", "#!/bin/sh\necho mine\n", 1)
    path.write_text(text)
    other, _ = fake_indexctl(tmp_path)
    result = install_hooks(git_repo.path, indexctl=str(other))
    assert [h["action"] for h in result["hooks"]] == ["updated"] * 3
    updated = path.read_text()
    assert "echo mine" in updated and str(other) in updated and updated.count(BEGIN) == 1
    assert not (path.parent / ("post-commit" + CHAIN_SUFFIX)).exists()
    assert hooks_status(git_repo.path)["hooks"][0]["current"] is False   # not the default indexctl

    out = uninstall_hooks(git_repo.path)
    assert out["hooks"][0]["action"].startswith("removed the indexd block")
    assert path.read_text() == "#!/bin/sh\necho mine\n"
    assert not (path.parent / "post-checkout").exists()


def test_bare_repo_refused(tmp_path):
    pygit2.init_repository(str(tmp_path / "bare.git"), bare=True)
    with pytest.raises(ConfigError, match="bare"):
        install_hooks(tmp_path / "bare.git")


def test_not_a_repo_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not inside a git repository"):
        install_hooks(tmp_path)


# -- firing against a real daemon ------------------------------------------------

def test_hooks_fire_on_commit_and_checkout_against_the_daemon(tmp_path, daemon):
    """The git dir lives outside the working tree (``.git`` is a file), so the
    watcher sees no ref or HEAD change: a ``reason=reindex requested``
    reconcile can only come from our hooks."""
    work = tmp_path / "work"
    repo = pygit2.init_repository(str(tmp_path / "gitdir"), workdir_path=str(work),
                                  initial_head="main")
    assert (work / ".git").is_file()
    (work / "app.py").write_text("def alpha_handler():\n    return 1\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    settings_with_realm("work", work)
    result = install_hooks(work)
    assert Path(result["hooks_dir"]) == (Path(repo.path) / "hooks").resolve()

    d = daemon()
    d.call("search", query="alpha", sync=True)
    base = reindex_lines(d, work)

    (work / "notes.md").write_text("# Notes\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "second")
    wait_until(lambda: reindex_lines(d, work) > base, timeout=20,
               what="a reconcile requested by the post-commit hook")
    after_commit = reindex_lines(d, work)

    # A branch that adds a function to an existing file; checking it out
    # must reach the daemon through post-checkout.
    git(work, "checkout", "-q", "-b", "feature")
    after_branch = wait_until(lambda: reindex_lines(d, work) > after_commit and
                              reindex_lines(d, work), timeout=20,
                              what="a reconcile requested by post-checkout (new branch)")
    (work / "app.py").write_text("def alpha_handler():\n    return 1\n\n\n"
                                 "def omega_feature_flag():\n    return 2\n")
    git(work, "commit", "-q", "-am", "feature")
    after_feature = wait_until(lambda: reindex_lines(d, work) > after_branch and
                               reindex_lines(d, work), timeout=20,
                               what="a reconcile requested by post-commit")
    git(work, "checkout", "-q", "main")
    wait_until(lambda: reindex_lines(d, work) > after_feature, timeout=20,
               what="a reconcile requested by post-checkout")
    res = d.call("search", query="omega feature flag", sync=True)
    assert not any(h["symbol"] == "omega_feature_flag" for h in res["results"])
    git(work, "checkout", "-q", "feature")
    wait_until(lambda: any(h["symbol"] == "omega_feature_flag" for h in
                           d.call("search", query="omega feature flag", sync=True)["results"]),
               timeout=20, what="the checked-out function in the index")


def test_hook_sends_reindex_of_the_work_tree(git_repo, tmp_path):
    """With a socket present the hook runs `indexctl reindex <worktree> --json`."""
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    ctl, log = fake_indexctl(tmp_path)
    install_hooks(git_repo.path, indexctl=str(ctl))
    with listening_socket(load_settings().paths.socket):
        git(git_repo.path, "commit", "-q", "--allow-empty", "-m", "empty")
        wait_until(log.exists, timeout=10, what="the hook to run indexctl")
    line = log.read_text().splitlines()[0]
    assert line == f"{git_repo.path.resolve()} reindex {git_repo.path.resolve()} --json"


# -- no daemon: quick and silent ---------------------------------------------------

def test_without_daemon_hook_exits_zero_fast(git_repo, tmp_path):
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    ctl, log = fake_indexctl(tmp_path)
    install_hooks(git_repo.path, indexctl=str(ctl))
    assert not load_settings().paths.socket.exists()
    hook = git_repo.path / ".git" / "hooks" / "post-checkout"
    empty = tmp_path / "empty-hook"
    empty.write_text("#!/bin/sh\nexit 0\n")
    empty.chmod(0o755)

    def least_wall_s(cmd: list[str]) -> float:
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            proc = subprocess.run(cmd, cwd=git_repo.path, capture_output=True, text=True,
                                  timeout=10)
            timings.append(time.perf_counter() - started)
            assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
        return min(timings)

    # Relative to a hook that does nothing, on the same machine (no seconds asserted):
    # a hook that started indexctl's Python or waited for a daemon costs tens of times more.
    hook_s = least_wall_s([str(hook), "0" * 40, "1" * 40, "1"])
    empty_s = least_wall_s([str(empty)])
    assert hook_s < 5 * empty_s, (hook_s, empty_s)
    git(git_repo.path, "commit", "-q", "--allow-empty", "-m", "no daemon")
    # indexctl was never started: once a socket exists, the same hook starts it and the
    # log gets exactly that one line (it runs in the background, so wait for it).
    with listening_socket(load_settings().paths.socket):
        subprocess.run([str(hook), "0" * 40, "1" * 40, "1"], cwd=git_repo.path, timeout=10,
                       check=True)
        wait_until(log.exists, timeout=10, what="the hook to run indexctl")
        wait_until(lambda: log.read_text().endswith("\n"), timeout=10, what="its line")
    assert len(log.read_text().splitlines()) == 1, log.read_text()


# -- an existing user hook keeps working, comes back byte-identical ----------------

def test_existing_hook_is_chained_and_restored(git_repo, tmp_path):
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    hooks = git_repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    user = hooks / "post-checkout"
    user.write_bytes(USER_HOOK)
    user.chmod(0o750)
    before = user.stat()
    marker = tmp_path / "marker"
    env = os.environ | {"MARKER": str(marker)}

    result = install_hooks(git_repo.path)
    item = next(h for h in result["hooks"] if h["name"] == "post-checkout")
    chained = hooks / ("post-checkout" + CHAIN_SUFFIX)
    assert item["chained"] == str(chained)
    assert chained.read_bytes() == USER_HOOK
    assert stat.S_IMODE(chained.stat().st_mode) == 0o750
    assert BEGIN in user.read_text()
    assert hooks_status(git_repo.path)["hooks"][1]["chained"] == str(chained)

    # Same arguments, same stdin, same exit code.
    proc = subprocess.run([str(user), "a", "b c", "1"], input="from stdin\n", env=env,
                          capture_output=True, text=True, timeout=10, cwd=git_repo.path)
    assert proc.returncode == 3
    assert marker.read_text() == "a|b c|1|from stdin\n"

    # And under git itself: git reports the chained hook's failure.
    marker.unlink()
    git_repo.branch("other")
    proc = git(git_repo.path, "checkout", "-q", "other", env=env, check=False)
    assert proc.returncode != 0
    assert marker.read_text().endswith("|1|")
    assert git_repo.repo.head.shorthand == "other"

    # Reinstalling does not chain our own hook.
    again = install_hooks(git_repo.path)
    assert next(h for h in again["hooks"] if h["name"] == "post-checkout")["action"] == "unchanged"
    assert chained.read_bytes() == USER_HOOK

    out = uninstall_hooks(git_repo.path)
    assert {h["name"]: h["action"] for h in out["hooks"]} == {
        "post-commit": "removed", "post-checkout": "removed, restored the chained hook",
        "post-merge": "removed"}
    assert user.read_bytes() == USER_HOOK
    after = user.stat()
    assert stat.S_IMODE(after.st_mode) == 0o750 and after.st_mtime_ns == before.st_mtime_ns
    assert not chained.exists()
    assert sorted(p.name for p in hooks.iterdir() if not p.name.endswith(".sample")) == [
        "post-checkout"]
    assert hooks_status(git_repo.path)["installed"] is False
    # Uninstalling twice touches nothing.
    assert [h["action"] for h in uninstall_hooks(git_repo.path)["hooks"]] == [
        "absent", "not ours, left alone", "absent"]


def test_chained_name_taken_refuses_instead_of_overwriting(git_repo):
    hooks = git_repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").write_text("#!/bin/sh\necho new\n")
    (hooks / ("post-merge" + CHAIN_SUFFIX)).write_text("#!/bin/sh\necho old\n")
    with pytest.raises(ConfigError, match="already exists"):
        install_hooks(git_repo.path)
    assert (hooks / "post-merge").read_text() == "#!/bin/sh\necho new\n"
    assert (hooks / ("post-merge" + CHAIN_SUFFIX)).read_text() == "#!/bin/sh\necho old\n"


# -- core.hooksPath ----------------------------------------------------------------

def test_core_hooks_path_is_respected(git_repo, tmp_path):
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    git_repo.repo.config["core.hooksPath"] = "githooks"       # relative to the work tree
    ctl, log = fake_indexctl(tmp_path)
    result = install_hooks(git_repo.path, indexctl=str(ctl))
    where = git_repo.path / "githooks"
    assert result["hooks_dir"] == str(where) and result["hooks_dir_from"] == "core.hooksPath"
    assert all((where / name).is_file() for name in HOOKS)
    assert not any((git_repo.path / ".git" / "hooks" / name).exists() for name in HOOKS)
    with listening_socket(load_settings().paths.socket):
        git(git_repo.path, "commit", "-q", "--allow-empty", "-m", "via hooksPath")
        wait_until(log.exists, timeout=10, what="the hook in core.hooksPath to run")
    assert "reindex" in log.read_text()

    absolute = tmp_path / "shared-hooks"
    git_repo.repo.config["core.hooksPath"] = str(absolute)
    assert hooks_status(git_repo.path)["hooks_dir"] == str(absolute)
    uninstall_hooks(git_repo.path)                      # nothing there: a no-op
    git_repo.repo.config["core.hooksPath"] = "githooks"
    uninstall_hooks(git_repo.path)
    assert not any((where / name).exists() for name in HOOKS)


# -- the CLI -----------------------------------------------------------------------

def test_cli_hooks_install_status_uninstall(git_repo):
    git_repo.write("a.py", "x = 1\n")
    git_repo.commit()
    proc = run_cli("hooks", "install", git_repo.path, "--json", check=True)
    data = json.loads(proc.stdout)
    assert data["repo"] == str(git_repo.path.resolve()) and len(data["hooks"]) == 3

    proc = subprocess.run([str(BIN / "indexctl"), "hooks", "status"], cwd=git_repo.path / ".git",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "post-commit" in proc.stdout and "installed" in proc.stdout

    proc = run_cli("hooks", "status", git_repo.path, "--json", check=True)
    assert json.loads(proc.stdout)["installed"] is True
    proc = run_cli("hooks", "uninstall", git_repo.path, check=True)
    assert "removed" in proc.stdout
    assert json.loads(run_cli("hooks", "status", git_repo.path, "--json").stdout)["installed"] is False

    bad = run_cli("hooks", "status", git_repo.path.parent / "nowhere")
    assert bad.returncode == 4 and "not inside a git repository" in bad.stderr


def test_other_worktree_repo_unaffected(tmp_path):
    """Hooks are per repository: installing in one leaves another alone."""
    a, b = GitRepo(tmp_path / "a"), GitRepo(tmp_path / "b")
    install_hooks(a.path)
    assert hooks_status(a.path)["installed"] and not hooks_status(b.path)["installed"]
