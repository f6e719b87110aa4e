"""No ghost rows: a repo no realm names has no rows in the index, however it left.

Reproduces issue 10 part 3 as a user hit it: `indexctl realm add ghost DIR` and
`indexctl realm remove ghost` while that repo is being indexed left its rows in
search for good (the purge ran on the event loop while the worker wrote the
batch it had planned). Also: a repo dropped from config.toml while the daemon
was down keeps no rows once the daemon reconciles at start.
"""

from __future__ import annotations

import os
import subprocess

from testlib import BIN, settings_with_realm, wait_until


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
