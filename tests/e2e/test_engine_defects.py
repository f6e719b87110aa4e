"""Defects of the daemon's engine found by trying it as a user would (issue 10 part 6):
a stale git lock froze a repo, status said "indexed 23m ago" after a batch, and
`indexd index` / `indexd reset` ran beside a live daemon without its lock."""

from __future__ import annotations

import json
import os
import subprocess
import time

from testlib import BIN, settings_with_realm, wait_until


def _repo(status, path):
    return next(r for realm in status["realms"] for r in realm["repos"] if r["repo"] == str(path))


def test_git_lock_left_by_a_crashed_git_goes_stale(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_GIT_LOCK_STALE_S": "2"})
    d.call("status", sync=True, timeout=60)
    # git crashed holding the lock: it is fresh when seen, nobody ever removes it.
    (git_repo.path / ".git" / "index.lock").write_text("")
    wait_until(lambda: _repo(d.call("status"), git_repo.path)["git_busy"], timeout=30,
               what="the repo to be seen busy")
    git_repo.write("b.py", "def after_the_crash(): pass\n")
    wait_until(lambda: any(h["symbol"] == "after_the_crash"
                           for h in d.call("search", query="after_the_crash")["results"]),
               timeout=60, what="the stale lock to be ignored and b.py indexed")
    assert not _repo(d.call("status"), git_repo.path)["git_busy"]
    assert "stale" in d.output()


def test_status_last_indexed_follows_the_latest_batch(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.write("b.py", "def b(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    env = os.environ | {"INDEXD_EMBED_MODEL": "hash"}
    subprocess.run([str(BIN / "indexd"), "index"], env=env, check=True, capture_output=True)
    indexed_at = time.time()
    wait_until(lambda: time.time() > indexed_at + 2, timeout=5, what="the clock to move on")
    d = daemon()
    d.call("status", sync=True, timeout=60)
    before_touch = time.time()
    os.utime(git_repo.path / "a.py")            # stat changed, content did not
    (git_repo.path / "b.py").unlink()            # a deletion only
    repo = _repo(d.call("status", sync=True, timeout=60), git_repo.path)
    assert repo["last_indexed"] >= before_touch, (repo["last_indexed"], before_touch)


def test_index_beside_a_live_daemon_hands_the_work_over(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    git_repo.write("c.py", "def handed_over(): pass\n")
    out = subprocess.run([str(BIN / "indexd"), "index", "--json"], env=d.env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last.get("daemon", {}).get("pid") == d.proc.pid, last
    res = d.call("search", query="handed_over")      # no sync: the index call waited
    assert any(h["symbol"] == "handed_over" for h in res["results"])
    text = subprocess.run([str(BIN / "indexd"), "index"], env=d.env, capture_output=True,
                          text=True, timeout=120)
    assert text.returncode == 0 and "daemon" in text.stdout + text.stderr


def test_reset_beside_a_live_daemon_is_refused(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    out = subprocess.run([str(BIN / "indexd"), "reset", "--yes"], env=d.env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0
    assert "running" in out.stderr and "indexctl shutdown" in out.stderr, out.stderr
    assert settings.paths.store_dir.is_dir()
    assert d.call("search", query="a", sync=True)["results"]
