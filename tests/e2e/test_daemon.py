"""The real daemon over a real socket on a real git repo."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from testlib import (BIN, committed_file_rows, fresh_snapshot, run_cli, settings_with_realm,
                     store_snapshot, wait_until)


def symbols_found(d, query, **kw):
    res = d.call("search", query=query, sync=True, timeout=20, **kw)
    return {(h["path"], h["symbol"]) for h in res["results"]}


def test_edit_create_rename_delete_seen_with_sync(git_repo, daemon):
    git_repo.write("app.py", "def alpha_handler():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    assert ("app.py", "alpha_handler") in symbols_found(d, "alpha handler")

    git_repo.write("app.py", "def alpha_handler():\n    return 1\n\ndef beta_worker():\n    pass\n")
    assert ("app.py", "beta_worker") in symbols_found(d, "beta worker")

    git_repo.write("pkg/new_mod.py", "class GammaThing:\n    pass\n")
    assert ("pkg/new_mod.py", "GammaThing") in symbols_found(d, "gamma thing")

    os.rename(git_repo.path / "pkg/new_mod.py", git_repo.path / "pkg/renamed.py")
    found = symbols_found(d, "gamma thing")
    assert ("pkg/renamed.py", "GammaThing") in found and ("pkg/new_mod.py", "GammaThing") not in found

    git_repo.rm("app.py")
    assert not {s for s in symbols_found(d, "beta worker") if s[0] == "app.py"}

    status = d.call("status")
    repo = status["realms"][0]["repos"][0]
    assert repo["files"] == 1 and repo["watcher"] == "ok"
    assert status["pending"] == 0 and status["daemon"]["pid"] == d.proc.pid
    assert {"parse", "embed"} <= set(status["queues"])


def test_freshness_fields_and_second_instance_refused(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    res = d.call("search", query="a", sync=True)
    assert {"index_lag_s", "pending", "stale", "took_ms"} <= set(res)
    proc = subprocess.run([str(BIN / "indexd"), "run"], env=d.env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "already running" in proc.stderr and str(d.proc.pid) in proc.stderr
    sym = d.call("symbols", path=str(git_repo.path / "a.py"))
    assert [h["symbol"] for h in sym["results"]] == [None, "a"]
    assert "index_lag_s" in sym


def test_branch_switch_of_2000_files_converges(git_repo, daemon, tmp_path):
    for i in range(1000):
        git_repo.write(f"m/mod_{i:04d}.py", f"def f_{i}():\n    return {i}\n")
    git_repo.commit("base")
    git_repo.branch("feature")
    git_repo.checkout("feature")
    for i in range(0, 1000, 2):
        git_repo.write(f"m/mod_{i:04d}.py", f"def g_{i}(x):\n    return x + {i}\n")
    for i in range(1000, 2000):
        git_repo.write(f"n/new_{i:04d}.py", f"class C{i}:\n    pass\n")
    for i in range(1, 200, 2):
        git_repo.rm(f"m/mod_{i:04d}.py")
    git_repo.commit("feature")
    git_repo.checkout("main")
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=120)

    git_repo.checkout("feature")
    res = d.call("search", query="g_500", sync=True, timeout=120)
    assert any(h["symbol"] == "g_500" for h in res["results"])
    d.call("status", sync=True, timeout=120)
    d.stop()
    assert store_snapshot(d.home) == fresh_snapshot(git_repo.path, tmp_path)


def test_sigkill_mid_index_then_restart_matches_fresh(git_repo, daemon, tmp_path):
    for i in range(1500):
        git_repo.write(f"p/f_{i:04d}.py", "".join(f"def fn_{i}_{j}():\n    return {j}\n\n" for j in range(8)))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(wait=False)
    # Killed as soon as the first files' rows are committed, with the index not complete
    # (a condition, not a sleep: a fast machine could finish in any fixed delay).
    wait_until(lambda: committed_file_rows(d.home) > 0, timeout=120, what="the first rows committed")
    d.kill(signal.SIGKILL)
    partial = store_snapshot(d.home)[1] if (d.home / "data" / "lancedb" / "files.lance").exists() else []
    assert len(partial) < 1500, "the daemon finished before it was killed: nothing was tested"
    d2 = daemon()
    d2.call("status", sync=True, timeout=180)
    d2.stop()
    assert store_snapshot(d2.home) == fresh_snapshot(git_repo.path, tmp_path)


def test_realm_add_picked_up_without_restart(git_repo, tmp_path, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    other = tmp_path / "plain"
    other.mkdir()
    (other / "notes.md").write_text("# Deltaforce plans\n")
    d.call("realm.add", realm="notes", paths=[str(other)])
    res = d.call("search", query="deltaforce", sync=True, timeout=30)
    assert any(h["path"] == "notes.md" for h in res["results"])
    (other / "more.md").write_text("# Epsilonic\n")
    res = d.call("search", query="epsilonic", sync=True, timeout=30)
    assert any(h["path"] == "more.md" for h in res["results"])
    d.call("realm.remove", realm="notes")
    res = d.call("search", query="deltaforce", sync=True, timeout=30)
    assert not res["results"]


def test_git_index_lock_holds_events(git_repo, daemon, tmp_path):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    control = tmp_path / "control"          # a second repo of the realm, never locked
    control.mkdir()
    settings_with_realm("work", git_repo.path, control)
    d = daemon()
    d.call("status", sync=True)
    lock = git_repo.path / ".git" / "index.lock"
    lock.write_text("")
    git_repo.write("b.py", "def held_back(): pass\n")

    def held() -> bool:
        st = d.call("status")
        repo = next(r for r in st["realms"][0]["repos"] if r["repo"] == str(git_repo.path))
        return repo["git_busy"] and repo["pending"] >= 1
    wait_until(held, timeout=20, what="the repo busy with the event pending")
    # A change made after it, in the unlocked repo: once that one is searchable the
    # worker has taken every change due by then, b.py's included; it held b.py.
    (control / "later.py").write_text("def later_control(): pass\n")
    wait_until(lambda: d.call("search", query="later control")["results"], timeout=30,
               what="the later change in the other repo to be indexed")
    assert d.call("status")["pending"] >= 1
    assert not d.call("search", query="held back")["results"]
    lock.unlink()
    res = d.call("search", query="held back", sync=True, timeout=30)
    assert any(h["symbol"] == "held_back" for h in res["results"])


def test_subscribe_pushes_status(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    with d.client(timeout=30) as c:
        assert c.call("subscribe")["subscribed"] is True
        git_repo.write("b.py", "def b(): pass\n")
        note = next(c.notifications(timeout=20))
        assert note["method"] == "status"
        assert {"state", "pending", "index_lag_s"} <= set(note["params"])


def test_shutdown_on_sigterm_removes_socket(git_repo, daemon):
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=30) == 0
    assert not d.socket.exists()
    assert "daemon stopped" in d.output()


def test_cli_against_daemon(git_repo, daemon):
    git_repo.write("svc.py", "def retry_backoff():\n    '''Retry with backoff.'''\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    env = d.env
    out = subprocess.run([str(BIN / "indexctl"), "search", "retry backoff", "--json", "--sync"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["results"][0]["symbol"] == "retry_backoff" and data["stale"] is False
    none = subprocess.run([str(BIN / "indexctl"), "search", "zzzznothing", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert none.returncode == 1
    line = subprocess.run([str(BIN / "indexctl"), "status", "--oneline"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert line.stdout.startswith("indexd ✓")
    bar = json.loads(subprocess.run([str(BIN / "indexctl"), "status", "--format", "waybar"], env=env,
                                    capture_output=True, text=True, timeout=60).stdout)
    assert bar["class"] == "fresh"


def test_pause_and_resume(git_repo, daemon):
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    assert d.call("pause") == {"paused": True}
    git_repo.write("b.py", "def paused_change(): pass\n")
    wait_until(lambda: d.call("status")["pending"] >= 1, timeout=20, what="the change to be seen")
    # Overdue by the daemon's own clock (4x the 250 ms debounce): a running worker would
    # have taken it; a paused one takes nothing.
    wait_until(lambda: d.call("status")["index_lag_s"] > 1.0, timeout=20,
               what="the change to be overdue")
    status = d.call("status")
    assert status["state"] == "paused" and status["pending"] >= 1
    assert not d.call("search", query="paused change", mode="keyword")["results"]
    assert d.call("resume") == {"paused": False}
    res = d.call("search", query="paused change", mode="keyword", sync=True)
    assert any(h["symbol"] == "paused_change" for h in res["results"])

    # the command line says what happened in words (it printed `paused: True`)
    said = {cmd: run_cli(*cmd.split(), env=d.env, check=True).stdout.strip()
            for cmd in ("pause", "resume", "reindex", "purge")}
    assert said["pause"].startswith("indexing paused: changes are still collected"), said
    assert said["resume"] == "indexing resumed", said
    assert said["reindex"].startswith("reindexing everything"), said
    assert said["purge"].startswith("old versions purged"), said


def test_sigusr1_writes_every_threads_stack_and_the_daemon_goes_on(git_repo, daemon):
    """A daemon that stops answering says where it is stuck: `kill -USR1 PID` (the test
    helper sends it to a daemon that ignores shutdown and SIGTERM). SIGUSR1 killed it before."""
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    d.proc.send_signal(signal.SIGUSR1)
    wait_until(lambda: "most recent call first" in d.output(), timeout=30, what="a stack dump")
    assert "Thread 0x" in d.output()
    assert d.proc.poll() is None
    assert d.call("status")["realms"]
