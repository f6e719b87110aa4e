"""The VS Code extension's client module (editors/vscode/out/client.js, vscode-jsonrpc
bundled in) run by node against the real daemon.

The VS Code binary cannot be downloaded here, so the editor side (extension.ts) is
type-checked (when editors/vscode/node_modules exists) but not run; the client and
the view model it feeds are run for real: `node --test` on
editors/vscode/test/client.test.js, which writes what it saw as JSON for the
assertions below. `INDEXD_TEST_NODE` picks another node binary.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from testlib import REPO_ROOT, wait_until

NODE = os.environ.get("INDEXD_TEST_NODE") or shutil.which("node")
EXT = REPO_ROOT / "editors" / "vscode"
NOT_RUNNING = "indexd is not running: start it with indexd run"

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed (apt-get install nodejs): the VS Code "
                         "extension's client tests run under node")

@pytest.fixture
def stale_socket():
    """A socket file nothing listens on (what a daemon killed with SIGKILL leaves)."""
    where = tempfile.mkdtemp(prefix="ixs")
    path = os.path.join(where, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    yield path
    shutil.rmtree(where, ignore_errors=True)


def socket_cases(tmp_path) -> list[dict]:
    """Environments and the socket indexd.config.default_paths gives for each."""
    from indexd.config import default_paths

    envs = [{"INDEXD_HOME": "ixrel"}, {"INDEXD_HOME": "~/ixh"}, {"INDEXD_HOME": str(tmp_path)},
            {"XDG_RUNTIME_DIR": str(tmp_path / "run")}, {"INDEXD_HOME": "", "XDG_RUNTIME_DIR": "/r"}]
    cases = []
    for env in envs:
        env = env | {"HOME": os.environ.get("HOME", "/root")}
        cwd = os.getcwd()
        cases.append({"env": env, "cwd": cwd, "expected": str(default_paths(env).socket)})
    return cases


class NodeRun:
    """`node --test` on some test files, in its own process group."""

    def __init__(self, files: list[str], env: dict):
        self.proc = subprocess.Popen([NODE, "--test", "--test-reporter=tap", *files], cwd=EXT,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def finish(self, timeout: float = 300) -> str:
        """The TAP output of a run that passed. A hung run is killed, never left behind."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        finally:
            self.kill()
        text = out.decode(errors="replace")
        assert self.proc.returncode == 0, text
        return text

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)    # node and each test file's process
            self.proc.communicate()


@pytest.fixture
def node_run():
    started = []

    def start(files: list[str], env: dict) -> NodeRun:
        started.append(NodeRun(files, env))
        return started[-1]

    yield start
    for run in started:                                 # a failed wait: still killed
        run.kill()


def tap_counts(text: str) -> dict:
    counts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#" and parts[2].isdigit():
            counts[parts[1]] = int(parts[2])
    return counts


def test_node_client_against_the_real_daemon(retry_repo, tmp_path, stale_socket, indexd_home,
                                             node_run):
    root, d = retry_repo
    out = tmp_path / "seen"
    out.mkdir()
    env = os.environ | {"INDEXD_HOME": str(indexd_home), "IX_TEST_REPO": str(root),
                        "IX_TEST_OUT": str(out), "IX_TEST_STALE_SOCKET": stale_socket,
                        "IX_TEST_SOCKETS": json.dumps(socket_cases(tmp_path))}
    try:
        text = node_run(["test/client.test.js"], env).finish()
    finally:
        d.proc.send_signal(signal.SIGCONT)          # the freeze test thaws it; never leave it stopped
    counts = tap_counts(text)
    assert counts["fail"] == 0 and counts["skipped"] == 0 and counts["pass"] == 7, text
    seen = json.loads((out / "client.test.json").read_text(encoding="utf-8"))

    assert seen["socket_cases"] == 7
    assert seen["search"]["pick"]["place"] == {"file": str(root / "pkg/retry.py"), "line": 4}
    assert (seen["search"]["symbol"], seen["search"]["start_line"]) == ("compute_backoff", 4)

    impact = seen["impact"]
    assert impact["target"] == f"{root}/pkg/retry.py::compute_backoff"
    assert impact["groups"][:2] == ["Affected", "Tests"]
    evidence = impact["main"]["children"][0]
    assert evidence["place"] == {"file": str(root / "app.py"), "line": 5}
    assert "calls compute_backoff" in evidence["tooltip"]
    assert impact["test"]["place"] == {"file": str(root / "tests/test_retry.py"), "line": 5}

    assert seen["subscribe"]["after"] > seen["subscribe"]["before"]
    assert seen["subscribe"]["top"] == "jitter_delay"
    assert seen["subscribe"]["text"].startswith("indexd ✓ ")
    assert seen["timeout"]["message"] == "indexd did not answer search within 0.5 s"
    assert seen["down"][1] == f"{NOT_RUNNING} (no daemon at {stale_socket})"
    assert seen["down"][0].startswith(NOT_RUNNING + " (no daemon at /tmp/")


def test_without_a_daemon_the_daemon_tests_skip_and_say_why(tmp_path, node_run):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IX_TEST_")}
    env["INDEXD_HOME"] = str(tmp_path)
    # the no-daemon test's folder was left in /tmp by every run: it goes under TMPDIR now
    # and is removed (this file's tests run one at a time, so /tmp is compared too)
    temp = Path(tempfile.mkdtemp(prefix="ixt"))     # short: the no-daemon test's socket path
    before = set(Path("/tmp").glob("ixv*"))
    try:
        env["TMPDIR"] = str(temp)
        text = node_run(["test/client.test.js", "test/reconnect.test.js"], env).finish(timeout=120)
        left = sorted(p.name for p in temp.iterdir())
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    counts = tap_counts(text)
    assert (counts["pass"], counts["skipped"], counts["fail"]) == (2, 6, 0), text
    assert left == [] and set(Path("/tmp").glob("ixv*")) == before
    assert "# SKIP needs the daemon: run tests/editors/test_vscode_client.py" in text
    assert "# SKIP needs a daemon that pytest restarts" in text


def test_status_watcher_follows_a_daemon_restart(retry_repo, daemon, tmp_path, indexd_home,
                                                node_run):
    _, d = retry_repo
    marks = tmp_path / "marks"
    marks.mkdir()
    run = node_run(["test/reconnect.test.js"],
                   os.environ | {"INDEXD_HOME": str(indexd_home), "IX_TEST_RECONNECT": str(marks)})

    def marked(name: str) -> bool:
        if run.proc.poll() is not None and not (marks / name).exists():
            raise AssertionError(f"node exited before {name!r}: {run.finish(0)}")
        return (marks / name).exists()

    wait_until(lambda: marked("up"), timeout=90, what="the watcher to hear the daemon")
    d.stop()
    wait_until(lambda: marked("down"), timeout=90, what="the watcher to see the daemon gone")
    daemon()
    counts = tap_counts(run.finish())
    assert (counts["pass"], counts["fail"], counts["skipped"]) == (1, 0, 0)
    assert (marks / "down").read_text().startswith(("indexd closed the connection", NOT_RUNNING))
    assert (marks / "back").read_text().startswith("indexd ")


def test_committed_build_matches_the_sources(tmp_path):
    """out/*.js is committed (CI has no npm); it must be what the sources build to."""
    if not (EXT / "node_modules" / ".bin" / "esbuild").exists():
        pytest.skip("editors/vscode/node_modules is absent (cd editors/vscode && npm ci): "
                    "the committed out/ cannot be rebuilt to compare")
    copy = tmp_path / "vscode"
    shutil.copytree(EXT, copy, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"),
                    symlinks=True)
    (copy / "node_modules").symlink_to(EXT / "node_modules")
    subprocess.run([NODE, "build.js"], cwd=copy, check=True, timeout=120, capture_output=True)
    for built in sorted((copy / "out").iterdir()):
        committed = EXT / "out" / built.name
        assert committed.read_bytes() == built.read_bytes(), f"out/{built.name} is stale: npm run build"
    assert sorted(p.name for p in (EXT / "out").iterdir()) == sorted(p.name for p in (copy / "out").iterdir())


def test_extension_type_checks(tmp_path):
    """The VS Code side cannot run here (no VS Code binary); tsc checks it against @types/vscode."""
    tsc = EXT / "node_modules" / ".bin" / "tsc"
    if not tsc.exists():
        pytest.skip("editors/vscode/node_modules is absent (cd editors/vscode && npm ci): "
                    "no tsc to type-check the extension")
    proc = subprocess.run([NODE, str(tsc), "--noEmit", "-p", str(EXT)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
