"""The lock, socket and endpoint files are never opened through a planted link.

Without XDG_RUNTIME_DIR the runtime directory is /tmp/indexd-$UID, a name
anyone can take first, and a planted ``indexd.lock -> ~/.bashrc`` used to be
truncated and overwritten with the daemon's pid. Each test plants something
in a runtime directory (INDEXD_HOME, or XDG_RUNTIME_DIR with every other XDG
path in a temp dir: never the real /tmp/indexd-$UID), starts the real
``indexd run`` or ``indexd index``, and checks that it refuses with a clear
message and a non-zero exit, and that the victim file is unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from testlib import BIN, run_cli, settings_with_realm, wait_until

VICTIM_TEXT = "export PATH=$HOME/bin:$PATH  # the user's own file\n"
OTHER_UID = 65534    # nobody


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "bashrc"
    path.write_text(VICTIM_TEXT)
    return path


def refused(d) -> str:
    """Wait for the daemon to give up; its output."""
    wait_until(lambda: d.proc.poll() is not None, timeout=60, what="the daemon to refuse")
    assert d.proc.returncode != 0, d.output()
    return d.output()


def test_a_lock_file_linked_to_a_victim_is_refused_by_the_daemon(daemon, indexd_home, victim):
    (indexd_home / "indexd.lock").symlink_to(victim)
    out = refused(daemon(wait=False))
    assert "indexd.lock" in out and "symbolic link" in out, out
    assert victim.read_text() == VICTIM_TEXT
    assert not (indexd_home / "indexd.sock").exists()


def test_a_lock_file_linked_to_a_victim_is_refused_by_indexd_index(git_repo, indexd_home, victim):
    git_repo.write("a.py", "def a():\n    return 1\n")
    settings_with_realm("work", git_repo.path)
    (indexd_home / "indexd.lock").symlink_to(victim)
    proc = run_cli("index", tool="indexd")
    assert proc.returncode != 0
    assert "indexd.lock" in proc.stderr and "symbolic link" in proc.stderr, proc.stderr
    as_json = run_cli("index", "--json", tool="indexd")
    error = json.loads(as_json.stdout.splitlines()[-1])["error"]
    assert as_json.returncode != 0 and error["data"]["type"] == "UnsafePath", error
    assert victim.read_text() == VICTIM_TEXT


def test_a_dangling_lock_link_creates_nothing(daemon, indexd_home, tmp_path):
    """The socket's own lock: O_CREAT through a dangling link would make the target."""
    target = tmp_path / "made-by-indexd"
    (indexd_home / "indexd.sock.lock").symlink_to(target)
    out = refused(daemon(wait=False))
    assert "indexd.sock.lock" in out and "symbolic link" in out, out
    assert not os.path.lexists(target)


def test_a_socket_path_linked_to_a_victim_is_refused(daemon, indexd_home, victim):
    (indexd_home / "indexd.sock").symlink_to(victim)
    out = refused(daemon(wait=False))
    assert "indexd.sock" in out and "refusing" in out, out
    assert victim.read_text() == VICTIM_TEXT
    assert (indexd_home / "indexd.sock").is_symlink()    # not unlinked either


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o755])
def test_a_runtime_dir_open_to_others_is_refused_before_any_file_is_opened(
        daemon, indexd_home, victim, mode):
    (indexd_home / "indexd.lock").symlink_to(victim)
    os.chmod(indexd_home, mode)
    out = refused(daemon(wait=False))
    assert f"mode {mode:o}" in out and f"chmod 700 {indexd_home}" in out, out
    assert victim.read_text() == VICTIM_TEXT


def test_a_world_writable_runtime_dir_is_refused_by_indexd_index(git_repo, indexd_home, victim):
    git_repo.write("a.py", "def a():\n    return 1\n")
    settings_with_realm("work", git_repo.path)
    (indexd_home / "indexd.lock").symlink_to(victim)
    os.chmod(indexd_home, 0o777)
    proc = run_cli("index", tool="indexd")
    assert proc.returncode != 0 and "mode 777" in proc.stderr, proc.stderr
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_a_runtime_dir_owned_by_someone_else_is_refused(daemon, indexd_home, victim):
    (indexd_home / "indexd.lock").symlink_to(victim)
    os.chown(indexd_home, OTHER_UID, -1)
    out = refused(daemon(wait=False))
    assert f"owned by uid {OTHER_UID}" in out, out
    assert victim.read_text() == VICTIM_TEXT


def xdg_env(tmp_path) -> dict:
    """No INDEXD_HOME: the platform paths, every one of them under tmp_path."""
    env = {k: v for k, v in os.environ.items() if k != "INDEXD_HOME"}
    for name in ("CONFIG", "DATA", "CACHE", "STATE"):
        env[f"XDG_{name}_HOME"] = str(tmp_path / name.lower())
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    env["INDEXD_EMBED_MODEL"] = "hash"
    return env


def test_a_runtime_dir_that_is_a_link_is_refused(tmp_path, victim):
    """$XDG_RUNTIME_DIR/indexd planted as a link to a directory of the victim's."""
    env = xdg_env(tmp_path)
    (tmp_path / "run").mkdir(mode=0o700)
    elsewhere = tmp_path / "victims-dir"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "run" / "indexd").symlink_to(elsewhere)
    proc = subprocess.run([str(BIN / "indexd"), "run"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "symbolic link" in proc.stderr and str(tmp_path / "run" / "indexd") in proc.stderr, \
        proc.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_missing_runtime_dir_is_created_private(tmp_path):
    env = xdg_env(tmp_path)
    (tmp_path / "run").mkdir(mode=0o755)
    old = os.umask(0o022)
    try:
        proc = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    finally:
        os.umask(old)
    sock = tmp_path / "run" / "indexd" / "indexd.sock"
    try:
        wait_until(lambda: sock.exists() or proc.poll() is not None, timeout=60,
                   what="the daemon's socket")
        assert proc.poll() is None, proc.stderr.read()
        assert os.stat(sock.parent).st_mode & 0o777 == 0o700
        assert not (tmp_path / "run" / "indexd" / "indexd.lock").is_symlink()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        proc.stderr.close()


def test_the_http_endpoint_file_is_not_written_through_a_link(indexd_home, victim):
    """http.json is written via http.json.tmp; a planted tmp link must not be followed."""
    (indexd_home / "http.json.tmp").symlink_to(victim)
    env = os.environ | {"INDEXD_EMBED_MODEL": "hash"}
    log = open(indexd_home / "daemon.out", "wb")
    proc = subprocess.Popen([str(BIN / "indexd"), "run", "--http", "127.0.0.1:0"], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    endpoint = indexd_home / "http.json"
    try:
        wait_until(lambda: endpoint.exists() or proc.poll() is not None, timeout=60,
                   what="http.json")
        assert victim.read_text() == VICTIM_TEXT
        assert proc.poll() is None, (indexd_home / "daemon.out").read_text()
        assert not endpoint.is_symlink() and json.loads(endpoint.read_text())["port"] > 0
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()


def test_doctor_names_a_runtime_dir_that_is_a_link(tmp_path, monkeypatch):
    for name, value in xdg_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("INDEXD_HOME")
    (tmp_path / "run").mkdir(mode=0o700)
    (tmp_path / "run" / "indexd").symlink_to(tmp_path)
    from indexd.config import load_settings
    from indexd.doctor import run_checks

    sock = {c.name: c for c in run_checks(load_settings())}["socket"]
    assert sock.status == "fail" and "symbolic link" in sock.detail, sock
    assert sock.fix == f"remove the link and let indexd create the directory: rm {tmp_path}/run/indexd"
