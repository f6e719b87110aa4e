"""`indexctl tray`: the pure state mapping, and the real tray under Xvfb
following a real daemon through fresh -> indexing -> fresh -> down -> fresh.

The integration test observes the tray through its ``--state-file`` (one JSON
line per state change) and cross-checks the X window pystray created: its
WM_NAME is the tooltip, so the icon really was updated on the display.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from testlib import BIN, settings_with_realm, wait_until

from indexd.tray import COLORS, DOWN_TOOLTIP, TrayState, state_from, window_title

# ------------------------------------------------------------------ unit


def test_fresh_from_status_result():
    st = state_from({"daemon": {"pid": 1}, "state": "fresh", "pending": 0, "index_lag_s": 0.2})
    assert st == TrayState("fresh", COLORS["fresh"], "indexd: fresh, lag 0.2s")


def test_indexing_from_notification_shows_pending_and_lag():
    note = {"jsonrpc": "2.0", "method": "status",
            "params": {"state": "indexing", "pending": 12, "index_lag_s": 1.44, "paused": False}}
    st = state_from(note, None)
    assert st.name == "indexing" and st.color == COLORS["indexing"]
    assert st.tooltip == "indexd: indexing, 12 pending, lag 1.4s"


def test_error_shows_the_error_and_wins_over_pending():
    st = state_from({"state": "error", "pending": 3, "error": "StoreError: disk full"})
    assert (st.name, st.color) == ("error", COLORS["error"])
    assert st.tooltip == "indexd: error: StoreError: disk full"


def test_long_error_is_truncated():
    st = state_from({"state": "error", "error": "x" * 1000})
    assert st.name == "error" and len(st.tooltip) <= 120 and st.tooltip.endswith("…")


def test_paused():
    st = state_from({"state": "paused", "pending": 4, "paused": True, "index_lag_s": 9})
    assert (st.name, st.tooltip) == ("paused", "indexd: paused, 4 pending")


@pytest.mark.parametrize("msg,error", [
    (None, "indexd is not running (no socket at /x); start it with `indexd run`"),
    ({"state": "fresh", "pending": 0}, "connection to indexd lost"),
    (None, None),
    ({"daemon": None, "realms": []}, None),        # status answered from the store
])
def test_down(msg, error):
    assert state_from(msg, error) == TrayState("down", COLORS["down"], DOWN_TOOLTIP)
    assert DOWN_TOOLTIP == "indexd: daemon not running — start with `indexd run`"


@pytest.mark.parametrize("params,name", [
    ({"pending": 0, "index_lag_s": None}, "fresh"),
    ({"pending": 5}, "indexing"),
    ({"pending": 5, "error_state": "config: bad"}, "error"),
    ({"pending": 5, "paused": True}, "paused"),
    ({"state": "weird", "pending": None}, "fresh"),
])
def test_state_derived_when_daemon_sends_no_state(params, name):
    assert state_from(params).name == name


def test_icons_draw_for_every_state():
    pytest.importorskip("PIL", reason="Pillow not installed (pip install 'indexd[tray]')")
    from indexd.tray import draw_icon

    for name, color in COLORS.items():
        img = draw_icon(TrayState(name, color, "t"))
        assert img.size == (64, 64)
        edge = img.getpixel((6, 32))          # inside the disc, off the glyph
        assert "#%02x%02x%02x" % edge[:3] == color


def test_missing_extra_exits_2(monkeypatch, capsys):
    import indexd.tray as tray

    monkeypatch.setattr(tray.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pystray" else object())
    assert tray.main([]) == 2
    assert "pip install 'indexd[tray]'" in capsys.readouterr().err


def test_pause_not_supported_is_reported(monkeypatch, capsys):
    from indexd.errors import MethodNotFound
    from indexd.tray import NO_PAUSE, Tray

    t = Tray("/nonexistent.sock", "/nonexistent.log")

    def no_method(method, **params):
        raise MethodNotFound(f"unknown method {method!r}")

    monkeypatch.setattr(t, "_call", no_method)
    t.on_toggle_pause()
    assert NO_PAUSE in capsys.readouterr().out and t.paused is False


def test_state_file_gets_one_line_per_change(tmp_path):
    from indexd.tray import Tray

    f = tmp_path / "states.jsonl"
    t = Tray("/nonexistent.sock", "/nonexistent.log", f)
    for msg, err in [(None, "down"), (None, "still down"), ({"state": "fresh", "pending": 0}, None),
                     ({"state": "fresh", "pending": 0}, None), ({"state": "indexing", "pending": 2}, None)]:
        t.apply(msg, err)
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    assert [x["state"] for x in lines] == ["down", "fresh", "indexing"]
    assert lines[2]["pending"] == 2 and lines[0]["detail"] == "down"


# ------------------------------------------------------------------ Xvfb

@pytest.fixture
def xvfb(tmp_path):
    """A private X server; yields the DISPLAY string (":N")."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    if importlib.util.find_spec("pystray") is None:
        pytest.skip("pystray not installed (pip install 'indexd[tray]')")
    if importlib.util.find_spec("Xlib") is None:
        pytest.skip("python-xlib not installed (pip install 'indexd[tray]')")
    read_fd, write_fd = os.pipe()
    log = open(tmp_path / "xvfb.log", "wb")
    # -displayfd: the server picks a free display number and writes it to us.
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,), stdout=log,
                            stderr=subprocess.STDOUT)
    os.close(write_fd)
    try:
        number = _read_display_number(read_fd, proc, timeout=20)
        sock = Path(f"/tmp/.X11-unix/X{number}")
        wait_until(sock.exists, timeout=20, what=f"X socket {sock}")
        yield f":{number}"
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        log.close()


def _read_display_number(fd: int, proc: subprocess.Popen, timeout: float) -> int:
    import select

    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            pytest.fail(f"Xvfb did not start (rc={proc.poll()})")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 64)
            if not chunk:
                pytest.fail(f"Xvfb closed -displayfd without a number (rc={proc.poll()})")
            data += chunk
    return int(data.strip())


class TrayProc:
    def __init__(self, display: str, home: Path, tmp_path: Path):
        self.state_file = tmp_path / "tray-states.jsonl"
        self.out = tmp_path / "tray.out"
        self.display = display
        env = os.environ | {"DISPLAY": display, "PYSTRAY_BACKEND": "xorg",
                            "INDEXD_HOME": str(home)}
        self._out = open(self.out, "wb")
        self.proc = subprocess.Popen([str(BIN / "indexctl"), "tray", "--state-file",
                                      str(self.state_file)], env=env, stdout=self._out,
                                     stderr=subprocess.STDOUT)

    def states(self) -> list[dict]:
        if not self.state_file.exists():
            return []
        return [json.loads(x) for x in self.state_file.read_text().splitlines() if x.strip()]

    def wait_for(self, name: str, after: int = 0, timeout: float = 60.0, where=None) -> int:
        """Index of the first state line named ``name`` at or after ``after``."""
        def found():
            if self.proc.poll() is not None:
                raise AssertionError(f"tray exited rc={self.proc.returncode}:\n{self.output()}")
            for i, s in enumerate(self.states()[after:], start=after):
                if s["state"] == name and (where is None or where(s)):
                    return i + 1     # never 0: wait_until wants truthy
            return None
        try:
            return wait_until(found, timeout=timeout, interval=0.1, what=f"tray state {name}") - 1
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nstates: {self.states()}\ntray output:\n"
                                 f"{self.output()[-3000:]}") from None

    def window_titles(self) -> list[str]:
        from Xlib import display as xdisplay

        d = xdisplay.Display(self.display)
        try:
            names = []
            for w in d.screen().root.query_tree().children:
                try:
                    name = w.get_wm_name()
                except Exception:  # noqa: BLE001 - a window may vanish meanwhile
                    continue
                if isinstance(name, bytes):
                    name = name.decode("utf-8", "replace")
                if name and name.startswith("indexd:"):
                    names.append(name)
            return names
        finally:
            d.close()

    def wait_for_title(self, tooltip: str, timeout: float = 10.0) -> None:
        title = window_title(tooltip, "xorg")    # what pystray's X backend can show
        try:
            wait_until(lambda: title in self.window_titles(), timeout=timeout,
                       what=f"an X window titled {title!r}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nwindows: {self.window_titles()}\nstates: "
                                 f"{self.states()[-5:]}\ntray output:\n{self.output()[-3000:]}") from None

    def output(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._out.close()


@pytest.fixture
def tray_proc(xvfb, indexd_home, tmp_path):
    started = []

    def start():
        t = TrayProc(xvfb, indexd_home, tmp_path)
        started.append(t)
        return t

    yield start
    for t in started:
        t.stop()


def test_tray_follows_daemon_under_xvfb(git_repo, daemon, tray_proc):
    env = {"INDEXD_DEBOUNCE_MS": "1000"}
    git_repo.write("a.py", "def a(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env=env)
    d.call("status", sync=True)

    tray = tray_proc()
    i = tray.wait_for("fresh")
    assert tray.states()[i]["color"] == COLORS["fresh"]
    assert tray.states()[i]["tooltip"].startswith("indexd: fresh, lag ")

    for n in range(300):
        git_repo.write(f"gen/mod_{n:03d}.py", f"def gen_{n}(x):\n    return x + {n}\n")
    i = tray.wait_for("indexing", after=i + 1, where=lambda s: (s.get("pending") or 0) > 0)
    assert "pending" in tray.states()[i]["tooltip"]
    i = tray.wait_for("fresh", after=i + 1, timeout=120)
    # The X window pystray made carries the tooltip: the icon itself followed.
    tray.wait_for_title(tray.states()[-1]["tooltip"])
    d.stop()
    i = tray.wait_for("down", after=i + 1)
    assert tray.states()[i]["tooltip"] == DOWN_TOOLTIP
    tray.wait_for_title(DOWN_TOOLTIP)

    daemon(extra_env=env)
    tray.wait_for("fresh", after=i + 1, timeout=90)
    assert tray.proc.poll() is None
    names = [s["state"] for s in tray.states()]
    assert names[0] == "fresh" and names[-1] == "fresh"
