"""Faults against the real daemon: crashes, a broken store, a full disk, repos
that vanish, files that fight back, clock jumps, an exhausted inotify limit.

Each test ends, where it applies, with "the index equals a fresh one-shot
index of the same tree" (``store_snapshot == fresh_snapshot``).
Results and reproduction commands: docs/reliability.md.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from testlib import (BIN, Daemon, GitRepo, assert_matches_fresh, committed_file_rows,
                     files_table_version, settings_with_realm, wait_until)


# -- helpers (same as tests/e2e/test_daemon.py) -------------------------------

def repo_info(status, repo_path):
    for realm in status["realms"]:
        for repo in realm["repos"]:
            if repo["repo"] == str(repo_path):
                return repo
    raise AssertionError(f"{repo_path} not in status")


def paths_found(d, query, **kw):
    res = d.call("search", query=query, sync=True, timeout=60, limit=100, **kw)
    return {(h["repo"], h["path"]) for h in res["results"]}


def module(i: int, n: int = 4) -> str:
    return "".join(f"def fn_{i}_{j}(x):\n    return x + {j}\n\n" for j in range(n))


# -- SIGKILL ------------------------------------------------------------------

@pytest.mark.parametrize("kill_at", ["reconcile", "first rows"])
def test_sigkill_during_cold_index(git_repo, daemon, tmp_path, kill_at):
    """Killed as soon as the start reconcile is logged, or as soon as the first files' rows
    are committed (conditions, not delays: a fast machine finishes inside any fixed one)."""
    for i in range(400):
        git_repo.write(f"p/f_{i:04d}.py", module(i))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(wait=False)
    wait_until(lambda: "reconcile realm=work" in d.output(), timeout=60, what="the reconcile")
    if kill_at == "first rows":
        wait_until(lambda: committed_file_rows(d.home) > 0 or "batch done" in d.output(),
                   timeout=120, what="the first rows committed")
    d.kill(signal.SIGKILL)
    assert "batch done" not in d.output(), "the cold index finished before the kill"
    d2 = daemon()
    # the client waits as long as the sync may take (its default is 60 s); a daemon that
    # answers nothing at all says why in its log (one CI run on 2026-12-05: no answer for
    # 60 s, then SIGTERM not honoured in 30 s; not reproduced in 7 runs since)
    try:
        with d2.client(timeout=200) as c:
            c.call("status", sync=True, timeout=180)
    except Exception as exc:  # noqa: BLE001 - re-raised with the daemon's own account
        raise AssertionError(f"{exc}; the daemon's log ends:\n{d2.output()[-6000:]}") from exc
    d2.stop()
    assert_matches_fresh(d2.home, git_repo.path, tmp_path)


@pytest.mark.parametrize("kill_at", ["pending", "first rows"])
def test_sigkill_during_burst_of_500_files(git_repo, daemon, tmp_path, kill_at):
    """500 new files, then SIGKILL while the daemon still has them pending (as soon as
    status says so: mostly still debouncing) or in flight (as soon as the burst's first
    rows are committed: in the middle of the batch and its writes)."""
    git_repo.write("base.py", "def base(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    before = committed_file_rows(d.home)
    for i in range(500):
        git_repo.write(f"burst/b_{i:04d}.py", module(i, 2))
    wait_until(lambda: d.call("status")["pending"] > 0, timeout=20, what="pending > 0")
    if kill_at == "first rows":
        wait_until(lambda: committed_file_rows(d.home) > before, timeout=120,
                   what="the burst's first rows committed")
    d.kill(signal.SIGKILL)
    d2 = daemon()
    d2.call("status", sync=True, timeout=180)
    d2.stop()
    assert_matches_fresh(d2.home, git_repo.path, tmp_path)


def test_sigkill_repeatedly_during_writes(git_repo, daemon, indexd_home, tmp_path):
    """Three kills in a row, each at its round's first commit to the files table (while
    its batch is being written); then converge."""
    for i in range(300):
        git_repo.write(f"p/f_{i:04d}.py", module(i))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    for round_ in range(3):
        # change a third of the files between kills, so every restart has work
        for i in range(round_, 300, 3):
            git_repo.write(f"p/f_{i:04d}.py", module(i + 1000 * (round_ + 1)))
        version = files_table_version(indexd_home)
        d = daemon(wait=False)
        wait_until(lambda: d.output().count("reason=start") > round_, timeout=60,
                   what="the reconcile")
        wait_until(lambda: files_table_version(indexd_home) > version, timeout=120,
                   what="the round's first commit")
        d.kill(signal.SIGKILL)
    d2 = daemon()
    d2.call("status", sync=True, timeout=180)
    d2.stop()
    assert_matches_fresh(d2.home, git_repo.path, tmp_path)


# -- the store ------------------------------------------------------------------

def test_store_deleted_while_running_daemon_survives_and_restart_rebuilds(git_repo, daemon,
                                                                          tmp_path):
    """rm -rf data/lancedb under a running daemon: it stays up (requests answer, with errors);
    after a restart the start reconcile rebuilds the whole index from source."""
    git_repo.write("a.py", "def alpha_one(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    _rm_store(d.home)
    git_repo.write("b.py", "def beta_two(): pass\n")
    for method, params in (("status", {"sync": True, "timeout": 5}), ("status", {}),
                           ("search", {"query": "alpha"})):
        try:
            d.call(method, **params)
        except Exception:  # noqa: BLE001 - an error answer is fine; a dead daemon is not
            pass
    assert d.proc.poll() is None, "the daemon died when its store was deleted"
    d.stop()
    d2 = daemon()
    d2.call("status", sync=True, timeout=60)
    found = {h["symbol"] for h in d2.call("search", query="alpha one beta two")["results"]}
    assert {"alpha_one", "beta_two"} <= found
    d2.stop()
    assert_matches_fresh(d2.home, git_repo.path, tmp_path)


def test_store_deleted_while_running_is_reported_clearly(git_repo, daemon):
    git_repo.write("a.py", "def alpha_one(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    _rm_store(d.home)
    git_repo.write("b.py", "def beta_two(): pass\n")
    wait_until(lambda: _store_trouble_seen(d) or _found_both(d), timeout=60,
               what="a batch to run against the deleted store")
    try:
        st = d.call("status")
    except Exception as exc:  # noqa: BLE001
        assert "indexd reset" in str(exc) or "store" in str(exc).lower(), f"unclear: {exc!r}"
        return
    healed = {h["symbol"] for h in d.call("search", query="alpha one beta two",
                                          sync=True)["results"]} >= {"alpha_one", "beta_two"}
    assert healed or (st["state"] == "error" and "indexd reset" in (st["error"] or ""))


def test_store_deleted_while_stopped_is_rebuilt(git_repo, daemon, tmp_path):
    for i in range(50):
        git_repo.write(f"m/mod_{i}.py", module(i))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    d.stop()
    _rm_store(d.home)
    d2 = daemon()
    st = d2.call("status", sync=True, timeout=60)
    assert repo_info(st, git_repo.path)["files"] == 50
    d2.stop()
    assert_matches_fresh(d2.home, git_repo.path, tmp_path)


def _store_trouble_seen(d) -> bool:
    """A batch has run against the broken store: it failed (logged) or status says error."""
    if "batch failed" in d.output():
        return True
    try:
        return d.call("status")["state"] == "error"
    except Exception:  # noqa: BLE001 - an error answer is a report too
        return True


def _found_both(d) -> bool:
    try:
        found = {h["symbol"] for h in d.call("search", query="alpha one beta two")["results"]}
    except Exception:  # noqa: BLE001 - not healed (yet)
        return False
    return {"alpha_one", "beta_two"} <= found


def _rm_store(home: Path) -> None:
    """rm -rf data/lancedb while the daemon may be writing into it (retry until gone)."""
    store = home / "data" / "lancedb"
    for _ in range(50):
        shutil.rmtree(store, ignore_errors=True)
        if not store.exists():
            return
        time.sleep(0.05)
    raise AssertionError(f"could not delete {store}")


def _garble_store(home: Path) -> list[Path]:
    data = sorted((home / "data" / "lancedb" / "entries.lance" / "data").glob("*"))
    assert data, "no entries data files to garble"
    for p in data:
        size = p.stat().st_size
        with open(p, "r+b") as fh:
            fh.seek(0)
            fh.write(b"\xde\xad\xbe\xef" * (size // 8 + 1))
            fh.truncate(max(1, size // 2))
    return data


def _start_on_corrupted_store(git_repo, daemon):
    for i in range(30):
        git_repo.write(f"m/mod_{i}.py", module(i))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    d.stop()
    _garble_store(d.home)
    git_repo.write("m/mod_0.py", module(999))      # the restart has a write to do
    return daemon(wait=False)


def _collect_messages(d2) -> str:
    """Wait for the socket (or an exit), then gather what status/search/the log say."""
    deadline = time.monotonic() + 30
    up = False
    while time.monotonic() < deadline and d2.proc.poll() is None:
        try:
            d2.call("initialize")
            up = True
            break
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.1)
    messages = []
    if up:
        # Until the restart's write has been tried against the garbled store.
        wait_until(lambda: _store_trouble_seen(d2) or d2.proc.poll() is not None, timeout=60,
                   what="a write attempt on the corrupted store")
        for method, params in (("status", {}), ("search", {"query": "fn_1_1"})):
            try:
                res = d2.call(method, **params)
                messages.append(f"{method}: state={res.get('state')} error={res.get('error')}")
            except Exception as exc:  # noqa: BLE001 - collect the message
                messages.append(f"{method}: {type(exc).__name__}: {exc}")
    return "\n".join(messages)


def test_corrupted_store_no_crash_loop_and_reset_rebuilds(git_repo, daemon, tmp_path):
    """Garbled entries data files, daemon stopped. Restart: the daemon stays up and reports
    state error (no crash loop); `indexd reset --yes` + start rebuilds the index."""
    d2 = _start_on_corrupted_store(git_repo, daemon)
    text = _collect_messages(d2)
    assert d2.proc.poll() is None, f"the daemon died on a corrupted store:\n{d2.output()[-3000:]}"
    assert "state=error" in text or "Error" in text, text
    d2.stop()
    out = subprocess.run([str(BIN / "indexd"), "reset", "--yes"], env=d2.env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    d3 = daemon()
    st = d3.call("status", sync=True, timeout=60)
    assert repo_info(st, git_repo.path)["files"] == 30 and st["state"] == "fresh"
    d3.stop()
    assert_matches_fresh(d3.home, git_repo.path, tmp_path)


def test_corrupted_store_message_names_the_fix(git_repo, daemon):
    d2 = _start_on_corrupted_store(git_repo, daemon)
    text = _collect_messages(d2)
    assert "indexd reset" in text, f"no clear fix named for a corrupted store:\n{text}"


def test_disk_full_reports_error_then_recovers(git_repo, daemon, tmp_path):
    for i in range(40):
        git_repo.write(f"m/mod_{i}.py", module(i))
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_FAULT_INJECTION": "write:3"})
    seen = wait_until(lambda: (s := d.call("status"))["state"] == "error" and s, timeout=30,
                      what="state error")
    assert "No space left" in seen["error"] or "store write failed" in seen["error"]
    wait_until(lambda: d.call("status")["state"] == "fresh", timeout=60, what="recovery")
    assert d.output().count("batch failed; will retry") >= 1
    st = d.call("status", sync=True, timeout=60)
    assert st["state"] == "fresh" and st["error"] is None
    assert repo_info(st, git_repo.path)["files"] == 40
    git_repo.write("late.py", "def late_arrival(): pass\n")
    assert any(h["symbol"] == "late_arrival"
               for h in d.call("search", query="late arrival", sync=True, timeout=30)["results"])
    d.stop()
    assert_matches_fresh(d.home, git_repo.path, tmp_path)


# -- repos that go away -----------------------------------------------------------

MOVED_BUG = ("engine/watcher: renaming a watched repo's root emits no event inside it "
             "(RepoHandler drops rel == '.'), so nothing schedules a reconcile and its rows stay "
             "searchable until the 10-minute safety reconcile")


@pytest.mark.parametrize("how", ["removed",
                                 "moved"])
def test_repo_removed_or_moved_while_watched(tmp_path, daemon, how):
    keep, gone = GitRepo(tmp_path / "keep"), GitRepo(tmp_path / "gone")
    keep.write("k.py", "def keeper_func(): pass\n")
    keep.commit()
    gone.write("g.py", "def goner_func(): pass\n")
    gone.write("docs/g.md", "# Goner notes\n")
    gone.commit()
    settings_with_realm("work", keep.path, gone.path)
    d = daemon()
    assert (str(gone.path), "g.py") in paths_found(d, "goner func")
    if how == "removed":
        shutil.rmtree(gone.path)
    else:
        os.rename(gone.path, tmp_path / "gone-moved")
    wait_until(lambda: not [h for h in d.call("search", query="goner", limit=50)["results"]
                            if h["repo"] == str(gone.path)],
               timeout=10, what="the missing repo's files to leave search")
    st = d.call("status")
    info = repo_info(st, gone.path)
    assert info["exists"] is False
    assert info["files"] == 0
    # other repos are still served, and still watched
    keep.write("k2.py", "def keeper_second(): pass\n")
    assert (str(keep.path), "k2.py") in paths_found(d, "keeper second")
    assert d.proc.poll() is None


def test_missing_repo_watcher_state_says_missing(tmp_path, daemon):
    gone = GitRepo(tmp_path / "gone")
    gone.write("g.py", "def goner_func(): pass\n")
    gone.commit()
    settings_with_realm("work", gone.path)
    d = daemon()
    d.call("status", sync=True, timeout=30)
    shutil.rmtree(gone.path)
    wait_until(lambda: repo_info(d.call("status"), gone.path)["files"] == 0, timeout=30,
               what="rows of the deleted repo to go")
    info = repo_info(d.call("status"), gone.path)
    assert info["exists"] is False
    assert info["watcher"] != "ok", f"watcher state of a missing repo: {info['watcher']!r}"


# -- files that fight back ---------------------------------------------------------

def test_files_vanishing_between_stat_and_read(git_repo, daemon, tmp_path):
    git_repo.write("stable.py", "def stable_func(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    stop = threading.Event()

    def churn():
        n = 0
        while not stop.is_set():
            p = git_repo.path / "churn" / f"c_{n % 40}.py"
            try:
                p.parent.mkdir(exist_ok=True)
                p.write_text(f"def churn_{n}(): pass\n")
                p.unlink()
            except FileNotFoundError:   # the other thread removed it first
                pass
            n += 1

    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            d.call("reindex")           # forces full reconciles while the churn goes on
            time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join()
    shutil.rmtree(git_repo.path / "churn", ignore_errors=True)
    assert d.proc.poll() is None
    st = d.call("status", sync=True, timeout=60)
    assert st["state"] == "fresh", st.get("error")
    assert "batch failed" not in d.output()
    d.stop()
    assert_matches_fresh(d.home, git_repo.path, tmp_path)


def test_symlink_loops_and_links_outside(git_repo, daemon, tmp_path):
    git_repo.write("real.py", "def real_func(): pass\n")
    git_repo.commit()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_plans.py").write_text("def outside_func(): pass\n")
    os.symlink("b_link", git_repo.path / "a_link")
    os.symlink("a_link", git_repo.path / "b_link")
    os.symlink("self_link", git_repo.path / "self_link")
    os.symlink(str(outside / "secret_plans.py"), git_repo.path / "out.py")
    os.symlink(str(outside), git_repo.path / "outdir")
    os.symlink("/etc/passwd", git_repo.path / "passwd")
    os.symlink("real.py", git_repo.path / "inside_link.py")
    os.symlink("nowhere.py", git_repo.path / "dangling.py")
    os.mkfifo(git_repo.path / "pipe.py")
    settings_with_realm("work", git_repo.path)
    d = daemon()
    st = d.call("status", sync=True, timeout=60)
    info = repo_info(st, git_repo.path)
    assert info["skipped"].get("symlink_outside", 0) >= 2, info   # out.py, passwd
    assert info["skipped"].get("unreadable", 0) >= 3, info        # a_link, b_link, self_link
    hits = d.call("search", query="outside func", limit=100)["results"]
    assert not [h for h in hits if h["symbol"] == "outside_func" or h["path"] == "out.py"]
    hits = d.call("search", query="root", limit=100)["results"]
    assert not [h for h in hits if h["path"] in ("passwd", "outdir/secret_plans.py")]
    found = paths_found(d, "real func")
    assert (str(git_repo.path), "real.py") in found
    # a later edit still works: the daemon did not wedge on the loop or the FIFO
    git_repo.write("more.py", "def more_func(): pass\n")
    assert (str(git_repo.path), "more.py") in paths_found(d, "more func")
    assert d.proc.poll() is None


def _chown_tree(path: Path, uid: int) -> None:
    os.chown(path, uid, uid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)


NOBODY = 65534


def _call_as(uid: int, sock: Path, method: str, **params):
    """One request from a process running as ``uid`` (the daemon checks the peer uid)."""
    import json

    code = ("import json,sys; from indexd.client import Client; "
            "c=Client(sys.argv[1], timeout=60); "
            "print(json.dumps(c.call(sys.argv[2], **json.loads(sys.argv[3]))))")
    out = subprocess.run([str(BIN / "python"), "-c", code, str(sock), method, json.dumps(params)],
                         user=uid, group=uid, capture_output=True, text=True, timeout=120,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the daemon as another user; "
                    "as a normal user chmod 000 works directly")
def test_permission_denied_files_as_unprivileged_daemon():
    """root ignores chmod, so the daemon runs as nobody (uid 65534) on a repo with an
    unreadable file and an unreadable directory."""
    probe = subprocess.run([str(BIN / "python"), "-c", "pass"], user=NOBODY, group=NOBODY,
                           capture_output=True, cwd="/") if _can_exec_as_nobody() else None
    if probe is None or probe.returncode != 0:
        pytest.skip("the venv's interpreter is not executable by uid 65534 (it lives under a "
                    "0700 /root); root ignores chmod, so no permission-denied case can be made")
    base = Path(tempfile.mkdtemp(prefix="ixperm"))
    try:
        os.chmod(base, 0o755)
        home = base / "home"
        home.mkdir()
        repo = GitRepo(base / "repo")
        repo.write("ok.py", "def readable_func(): pass\n")
        repo.write("locked.py", "def locked_func(): pass\n")
        repo.write("closed/inner.py", "def closed_func(): pass\n")
        repo.commit()
        env = os.environ | {"INDEXD_HOME": str(home)}
        subprocess.run([str(BIN / "indexctl"), "realm", "add", "work", str(repo.path)], env=env,
                       check=True, capture_output=True)
        _chown_tree(base, NOBODY)
        os.chmod(repo.path / "locked.py", 0)
        os.chmod(repo.path / "closed", 0)
        d = Daemon(home)
        d._out = open(d.log, "ab")
        d.proc = subprocess.Popen([str(BIN / "indexd"), "run"], env=d.env, user=NOBODY,
                                  group=NOBODY, stdout=d._out, stderr=subprocess.STDOUT, cwd="/")
        try:
            wait_until(lambda: d.proc.poll() is not None or d.socket.exists(), timeout=60,
                       what="the socket")
            assert d.proc.poll() is None, d.output()
            st = wait_until(lambda: _try(lambda: _call_as(NOBODY, d.socket, "status", sync=True)),
                            timeout=60, what="status as nobody")
            info = repo_info(st, repo.path)
            assert info["skipped"].get("unreadable", 0) >= 1, info
            res = _call_as(NOBODY, d.socket, "search", query="readable func locked")
            paths = {h["path"] for h in res["results"]}
            assert "ok.py" in paths and "locked.py" not in paths
            # the file becomes readable: the next reconcile indexes it
            os.chmod(repo.path / "locked.py", 0o644)
            os.utime(repo.path / "locked.py")
            _call_as(NOBODY, d.socket, "reindex", wait=True)
            res = _call_as(NOBODY, d.socket, "search", query="locked func", sync=True)
            assert "locked.py" in {h["path"] for h in res["results"]}
            assert d.proc.poll() is None
        finally:
            if d.proc.poll() is None:
                d.proc.send_signal(signal.SIGTERM)
                d.proc.wait(timeout=30)
            d._out.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _can_exec_as_nobody() -> bool:
    try:
        subprocess.run([str(BIN / "python"), "-c", "pass"], user=NOBODY, group=NOBODY,
                       capture_output=True, cwd="/", timeout=30)
        return True
    except (PermissionError, OSError):
        return False


def _try(fn):
    try:
        return fn()
    except AssertionError:
        return None


# -- clock jumps ---------------------------------------------------------------------

def test_mtimes_in_the_future_and_past(git_repo, daemon, tmp_path):
    future = 4_102_444_800          # 2100-01-01
    past = 315_532_800              # 1980-01-01
    f = git_repo.write("future.py", "def chrono_future(): pass\n")
    p = git_repo.write("past.py", "def chrono_past(): pass\n")
    git_repo.commit()
    os.utime(f, (future, future))
    os.utime(p, (past, past))
    settings_with_realm("work", git_repo.path)
    d = daemon()
    found = {h["symbol"] for h in d.call("search", query="chrono", sync=True, timeout=60)["results"]}
    assert {"chrono_future", "chrono_past"} <= found
    # a normal edit (mtime = now) is seen
    git_repo.write("future.py", "def chrono_future(): pass\n\ndef edited_now(): pass\n")
    git_repo.write("past.py", "def chrono_past(): pass\n\ndef edited_too(): pass\n")
    found = {h["symbol"] for h in d.call("search", query="edited", sync=True, timeout=30)["results"]}
    assert {"edited_now", "edited_too"} <= found
    # an edit whose mtime is pinned back to the same far date (a tool restoring mtimes)
    git_repo.write("future.py", "def chrono_future(): pass\n\ndef pinned_again(): pass\n")
    os.utime(f, (future, future))
    git_repo.write("past.py", "def chrono_past(): pass\n\ndef pinned_past(): pass\n")
    os.utime(p, (past, past))
    found = {h["symbol"] for h in d.call("search", query="pinned", sync=True, timeout=30)["results"]}
    assert {"pinned_again", "pinned_past"} <= found
    d.stop()
    assert_matches_fresh(d.home, git_repo.path, tmp_path)


# -- inotify limit ---------------------------------------------------------------------

WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")


def _writable(path: Path) -> bool:
    try:
        with open(path, "r+"):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _writable(WATCHES), reason="/proc/sys/fs/inotify/max_user_watches is "
                    "not writable (not root, or a read-only /proc in this container)")
def test_inotify_limit_exhausted_falls_back_to_reconciliation(git_repo, daemon):
    for i in range(30):
        git_repo.write(f"d{i}/m.py", f"def in_dir_{i}(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    old = WATCHES.read_text().strip()
    try:
        WATCHES.write_text("1\n")      # below what any recursive watch needs
        d = daemon(extra_env={"INDEXD_UNWATCHED_RECONCILE_S": "3"})
        # the socket answers before the watches are scheduled: hold the limit until then
        wait_until(lambda: "daemon started" in d.output(), timeout=30, what="the watches")
    finally:
        WATCHES.write_text(old + "\n")  # restore at once: the limit is machine-wide
    assert d.proc.poll() is None
    st = d.call("status")
    info = repo_info(st, git_repo.path)
    assert info["watcher"] not in ("ok",), info
    assert "watch" in d.output().lower()
    # sync on an unwatched repo falls back to a reconcile, so changes are still seen
    git_repo.write("late.py", "def late_unwatched(): pass\n")
    res = d.call("search", query="late unwatched", sync=True, timeout=60)
    assert any(h["symbol"] == "late_unwatched" for h in res["results"])
    # and without sync, the periodic reconcile of unwatched repos (3 s here) picks changes up
    git_repo.write("later.py", "def later_periodic(): pass\n")
    wait_until(lambda: any(h["symbol"] == "later_periodic"
                           for h in d.call("search", query="later periodic")["results"]),
               timeout=45, interval=1.0, what="the periodic reconcile")
