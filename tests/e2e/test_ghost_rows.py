"""No ghost rows: a repo no realm names has no rows in the index, however it left.

Reproduces issue 10 part 3 as a user hit it: `indexctl realm add ghost DIR` and
`indexctl realm remove ghost` while that repo is being indexed left its rows in
search for good (the purge ran on the event loop while the worker wrote the
batch it had planned). Also: a repo dropped from config.toml while the daemon
was down keeps no rows once the daemon reconciles at start.
"""

from __future__ import annotations

import json
import os
import subprocess

from testlib import BIN, run_cli, settings_with_realm, wait_until


def ghost_module(i: int) -> str:
    return "".join(f"def ghostword_{i}_{j}(x):\n    return x * {j}\n\n" for j in range(6))


def ghost_hits(d) -> list:
    res = d.call("search", query="ghostword", sync=True, timeout=120, limit=50)
    return [h for h in res["results"] if "ghostword" in (h.get("symbol") or "") or h["path"].startswith("g/")]


def realm_names(d) -> set:
    return {r["name"] for r in d.call("status")["realms"]}


def test_realm_removed_while_indexing_leaves_no_rows(git_repo, daemon, tmp_path):
    git_repo.write("a.py", "def kept_function():\n    return 1\n")
    git_repo.commit()
    ghost = tmp_path / "ghost"
    for i in range(400):
        (ghost / "g").mkdir(parents=True, exist_ok=True)
        (ghost / "g" / f"m_{i:04d}.py").write_text(ghost_module(i))
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=120)
    d.call("realm.add", realm="ghost", paths=[str(ghost)])
    wait_until(lambda: "reconcile realm=ghost" in d.output(), timeout=60, what="ghost indexing")
    d.call("realm.remove", realm="ghost")
    # The answer of a search with sync waits for the worker to be idle.
    wait_until(lambda: "ghost" not in realm_names(d), timeout=60, what="realm gone from status")
    assert ghost_hits(d) == []
    d.call("reindex", wait=True)
    d.call("purge")
    assert ghost_hits(d) == []
    d.stop()
    d2 = daemon()
    assert ghost_hits(d2) == []
    assert d2.call("search", query="kept_function", sync=True, timeout=60)["results"]


def test_repo_dropped_from_config_while_down_loses_its_rows(git_repo, daemon, tmp_path):
    git_repo.write("a.py", "def kept_function():\n    return 1\n")
    git_repo.commit()
    ghost = tmp_path / "ghost"
    (ghost / "g").mkdir(parents=True)
    for i in range(3):
        (ghost / "g" / f"m_{i}.py").write_text(ghost_module(i))
    settings = settings_with_realm("work", git_repo.path)
    settings_with_realm("ghost", ghost)
    env = os.environ | {"INDEXD_EMBED_MODEL": "hash"}
    subprocess.run([str(BIN / "indexd"), "index"], env=env, check=True, capture_output=True)
    # Edited by hand while no daemon runs: the realm is gone, its rows are not.
    subprocess.run([str(BIN / "indexctl"), "realm", "remove", "ghost"], env=env, check=True,
                   capture_output=True)
    assert "ghost" not in settings.paths.config_file.read_text()
    d = daemon()
    assert ghost_hits(d) == []
    assert d.call("search", query="kept_function", sync=True, timeout=60)["results"]


def test_a_repo_removed_without_a_daemon_leaves_search_at_the_next_index(tmp_path):
    """No daemon at all: `indexctl realm remove` then `indexd index` kept the removed
    repo's rows, and `indexctl search` (which reads the store) went on finding them."""
    ghost, kept = tmp_path / "ghost", tmp_path / "kept"
    (ghost / "g").mkdir(parents=True)
    kept.mkdir()
    for i in range(3):
        (ghost / "g" / f"m_{i}.py").write_text(ghost_module(i))
    (kept / "k.py").write_text("def kept_function():\n    return 1\n")
    run_cli("realm", "add", "work", kept, ghost, check=True)
    run_cli("index", "--json", tool="indexd", check=True)

    def found(word: str) -> list:
        out = run_cli("search", word, "--mode", "keyword", "--json")
        hits = json.loads(out.stdout)["results"] if out.returncode == 0 else []
        return [h for h in hits if h.get("symbol") == word]

    assert found("ghostword_1_2") and found("kept_function")
    run_cli("realm", "remove", "work", ghost, check=True)
    done = json.loads(run_cli("index", "--json", tool="indexd", check=True).stdout.splitlines()[-1])
    assert done["removed_repos"] == [{"realm": "work", "repo": str(ghost)}]
    assert found("ghostword_1_2") == [] and found("kept_function")
    # a realm removed whole, and the run after it (which a stat sidecar could answer alone)
    run_cli("realm", "add", "other", ghost, check=True)
    run_cli("index", "--json", tool="indexd", check=True)
    assert found("ghostword_1_2")
    run_cli("realm", "remove", "other", check=True)
    done = json.loads(run_cli("index", "--json", tool="indexd", check=True).stdout.splitlines()[-1])
    assert done["removed_repos"] == [{"realm": "other", "repo": str(ghost)}]
    assert found("ghostword_1_2") == [] and found("kept_function")
