"""A newcomer's first minutes (issue 15, part 4): what `status` and friends show
right after the first start must be coherent and machine-readable."""

from __future__ import annotations

import json
from pathlib import Path

from testlib import GitRepo, run_cli, settings_with_realm, wait_until


def _repo_pending(status: dict) -> int:
    return sum(r.get("pending", 0) for realm in status["realms"] for r in realm["repos"])


def test_status_pending_adds_up_while_a_new_repo_waits(tmp_path, daemon):
    """The header said `pending 1` above a repo line saying `pending 0, indexed never`."""
    first = GitRepo(tmp_path / "first")
    first.write("a.py", "def alpha():\n    return 1\n")
    first.commit()
    second = GitRepo(tmp_path / "second")
    second.write("b.py", "def beta():\n    return 2\n")
    second.commit()
    settings_with_realm("work", first.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    assert d.call("pause") == {"paused": True}
    assert run_cli("realm", "add", "work", second.path, env=d.env).returncode == 0

    def waiting():
        st = d.call("status")
        repos = {r["repo"]: r for realm in st["realms"] for r in realm["repos"]}
        return st if str(second.path) in repos and st["pending"] else None

    st = wait_until(waiting, timeout=30, what="the new repo's scan to be queued")
    new = next(r for realm in st["realms"] for r in realm["repos"] if r["repo"] == str(second.path))
    assert new["pending"] >= 1, new
    assert _repo_pending(st) == st["pending"], st
    out = run_cli("status", env=d.env).stdout
    assert f"{second.path}: 0 files" in out and "pending 0" not in out.split(str(second.path))[1]

    d.call("resume")
    st = d.call("status", sync=True, timeout=60)
    assert st["pending"] == 0 and _repo_pending(st) == 0


def test_store_figures_are_current_after_the_first_index(git_repo, daemon):
    """`store 0.0 MB` stayed on screen for 30 s after the first index."""
    settings_with_realm("work", git_repo.path)
    d = daemon()
    early = d.call("status")   # maybe before anything was written
    for i in range(30):
        git_repo.write(f"m{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    st = d.call("status", sync=True, timeout=60)
    assert sum(r["files"] for r in st["realms"][0]["repos"]) == 30
    # Refreshed within seconds of the batch (it was cached for 30 s).
    wait_until(lambda: d.call("status")["store"]["bytes"] > early["store"]["bytes"], timeout=15,
               what="the store's size to include the first index")
    out = run_cli("status", env=d.env).stdout
    assert "versions {" not in out, out   # a Python dict's repr is not for people


def test_status_oneline_json_is_json(git_repo, daemon):
    settings_with_realm("work", git_repo.path)
    down = run_cli("status", "--oneline", "--json")
    assert down.returncode == 0, down.stderr
    doc = json.loads(down.stdout)
    assert doc["daemon"] is False and doc["state"] == "down" and doc["text"].startswith("indexd")
    d = daemon()
    d.call("status", sync=True, timeout=60)
    up = json.loads(run_cli("status", "--oneline", "--json", env=d.env).stdout)
    assert up["daemon"] is True and up["state"] == "fresh" and up["pending"] == 0
    assert up["text"] == run_cli("status", "--oneline", env=d.env).stdout.strip()


def test_unknown_filter_values_are_errors_not_empty_results(git_repo, daemon):
    """`--kind functon` answered `0 results`, so a typo looked like a missing symbol."""
    git_repo.write("pkg/graph.py", "def build_graph(edges):\n    return dict(edges)\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("realm", "add", "other", git_repo.path)   # a second realm: --repo is per realm
    bad = (("--kind", "functon", "function"), ("--lang", "pyton", "python"),
           ("--repo", "/nope/repo", str(git_repo.path)))
    assert run_cli("index", "--no-embed", tool="indexd").returncode == 0
    for flag, value, hint in bad:   # no daemon: the CLI reads the store itself
        out = run_cli("search", "build graph", flag, value, "--mode", "keyword")
        assert out.returncode != 0 and value in out.stderr and hint in out.stderr, (flag, out)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    for flag, value, hint in bad:
        out = run_cli("search", "build graph", flag, value, "--json", env=d.env)
        error = json.loads(out.stdout or out.stderr)["error"]
        assert out.returncode != 0 and value in error["message"] and hint in error["message"], error
    for flag, good in (("--kind", "function,class"), ("--repo", git_repo.path.name)):
        out = run_cli("search", "build graph", flag, good, "--lang", "python", "--json", env=d.env)
        assert out.returncode == 0, (flag, good, out.stderr)
        assert [r["symbol"] for r in json.loads(out.stdout)["results"]][:1] == ["build_graph"]


def test_a_new_indexd_home_made_by_realm_add_is_one_the_daemon_accepts(tmp_path):
    """`INDEXD_HOME=/new/dir indexctl realm add …` made the home with the umask's
    755; the home is also the socket's directory, so `indexd run` then refused
    to start ("has mode 755 … Run `chmod 700`"): `make run` hit it."""
    import os
    import shutil
    import tempfile

    from testlib import Daemon, GitRepo

    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "def alpha():\n    return 1\n")
    repo.commit()
    parent = Path(tempfile.mkdtemp(prefix="ix"))   # short: a socket path is ≤ 107 bytes
    home = parent / "home"
    env = os.environ | {"INDEXD_HOME": str(home)}
    old = os.umask(0o022)
    try:
        added = run_cli("realm", "add", "work", repo.path, env=env)
    finally:
        os.umask(old)
    d = Daemon(home)
    try:
        assert added.returncode == 0, added.stderr
        assert (home.stat().st_mode & 0o777) == 0o700
        d.start()
        st = d.call("status", sync=True, timeout=60)
        assert sum(r["files"] for r in st["realms"][0]["repos"]) == 1
    finally:
        d.stop()
        shutil.rmtree(parent, ignore_errors=True)


def test_a_daemon_with_no_realm_says_how_to_add_one(daemon):
    d = daemon()
    out = run_cli("status", env=d.env).stdout
    assert "no realms yet: add one with: indexctl realm add NAME DIR" in out, out
    assert "None threads" not in out   # the hash embedder (tests) has no thread count
