"""Browser tests of the web UI: a real daemon serving HTTP on a real git repo,
driven by Playwright through Debian's chromium (headless, never downloaded).

Without a chromium binary (or without playwright) the browser tests skip and
say why; .ci/run installs chromium. ``INDEXD_UI_SCREENSHOTS=DIR`` (see
bench/ui_screenshots.py) also writes each page's screenshot into DIR, as the
README's pictures are made.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from testlib import BIN, Daemon, GitRepo, wait_until

RETRY = ("import time\n\n\ndef retry_backoff(n):\n    '''Back off and retry after n seconds.'''\n"
         "    time.sleep(n)\n    return n\n\n\nclass Poller:\n    def poll(self):\n"
         "        '''Poll once, backing off.'''\n        return retry_backoff(2)\n")
MAIN = ("from svc.retry import retry_backoff\n\n\ndef main():\n    '''Entry point.'''\n"
        "    return retry_backoff(1)\n")
TEST = ("from svc.retry import retry_backoff\n\n\ndef test_retry_backoff():\n"
        "    assert retry_backoff(0) == 0\n")
README = "# Service\n\nRetries with backoff: see [retry](svc/retry.py).\n"


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class UiDaemon(Daemon):
    """The daemon with ``--http 127.0.0.1:0``; its port from ``http.json``."""

    def wait_http(self) -> "UiDaemon":
        endpoint = self.home / "http.json"
        wait_until(lambda: self.ready() and endpoint.exists(), timeout=60, what="http endpoint")
        info = json.loads(endpoint.read_text())
        self.port = info["port"]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.token = Path(info["token_file"]).read_text().strip()
        return self

    def indexctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(BIN / "indexctl"), *args], env=self.env, text=True,
                              capture_output=True, timeout=60)

    def login_url(self) -> str:
        out = self.indexctl("ui", "--url", "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["url"]


@pytest.fixture(scope="module")
def ui_daemon():
    home = Path(tempfile.mkdtemp(prefix="ixui"))
    repo = GitRepo(home / "repo")
    for rel, text in (("svc/retry.py", RETRY), ("svc/main.py", MAIN),
                      ("tests/test_retry.py", TEST), ("README.md", README)):
        repo.write(rel, text)
    repo.commit()
    for n in range(3):        # retry.py and main.py change together: a co-change pair
        repo.write("svc/retry.py", RETRY + f"\n# tuned {n}\n")
        repo.write("svc/main.py", MAIN + f"\n# tuned {n}\n")
        repo.commit(f"tune {n}")
    # The audit log on: the sign-in test checks no log holds a code or the token.
    d = UiDaemon(home, {"INDEXD_AUDIT_LOG": "1"}, args=("--http", "127.0.0.1:0"))
    d.repo = repo
    assert d.indexctl("realm", "add", "work", str(repo.path)).returncode == 0
    d.start(wait=False)
    try:
        d.wait_http()
        d.call("status", sync=True)
        yield d
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    exe = chromium_path()
    if exe is None:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install chromium; "
                    ".ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, ui_daemon):
    """A signed-in page (a fresh browser context: its own cookies), failing the
    test on any script error or CSP violation the page reports."""
    context = browser.new_context(viewport={"width": 1200, "height": 820})
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    pg.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}")
          if msg.type == "error" else None)
    pg.goto(ui_daemon.login_url())
    pg.problems = problems
    yield pg
    context.close()
    assert not problems, problems


@pytest.fixture
def shot(tmp_path):
    """page.screenshot into tmp (always, and checked to be a real picture) and
    into $INDEXD_UI_SCREENSHOTS when set."""
    def take(pg, name: str) -> Path:
        path = tmp_path / f"ui-{name}.png"
        pg.screenshot(path=str(path), full_page=True)
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, (name, len(data))
        out = os.environ.get("INDEXD_UI_SCREENSHOTS")
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(out) / path.name)
        return path
    return take
