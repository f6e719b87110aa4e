"""`indexctl tray`: a system-tray icon that follows the daemon's state.

The icon (a coloured disc with a glyph, drawn with Pillow) and its tooltip
follow what the daemon pushes on a `subscribe`d connection:

    fresh     green  ✓   "indexd: fresh, lag 0.2s"
    indexing  amber  ⟳   "indexd: indexing, 12 pending, lag 1.4s"
    paused    blue   ‖   "indexd: paused, 3 pending"
    error     red    !   "indexd: error: <the daemon's error>"
    down      grey   ×   "indexd: daemon not running — start with `indexd run`"

A background thread keeps one connection: on connect it asks `status` for
the initial state, then `subscribe`s and reads notifications; when the
daemon goes away it shows "down" and reconnects with backoff. Each state
change is logged to stderr and, with ``--state-file PATH``, appended to PATH
as one JSON line (for tests and scripts).

`state_from` is pure (no pystray, no socket). pystray and Pillow are only
imported by `main`: they are the optional ``tray`` extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .client import Client
from .errors import DaemonNotRunning, IndexdError, MethodNotFound

log = logging.getLogger("indexd.tray")

INSTALL_HINT = "install the tray extra: pip install 'indexd[tray]'"
DOWN_TOOLTIP = "indexd: daemon not running — start with `indexd run`"
NO_PAUSE = "pause not supported by this daemon"

COLORS = {"fresh": "#2e9d44", "indexing": "#e8a317", "paused": "#3b7dd8",
          "error": "#d0342c", "down": "#8c8c8c"}
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.5, 5.0
POLL_S = 5.0          # ask `status` when no notification came for this long
TOOLTIP_MAX = 120     # tray tooltips are short; errors can be long


@dataclass(frozen=True)
class TrayState:
    name: str       # fresh | indexing | paused | error | down
    color: str      # "#rrggbb"
    tooltip: str


def state_from(status_or_notification: dict | None, error: str | None = None) -> TrayState:
    """The tray state for a `status` result or a pushed ``status`` notification
    (``{"method": "status", "params": {...}}`` or just its params).

    ``error`` is a client-side failure (no daemon, connection lost): it wins.
    None for both also means "down" (not connected yet).
    """
    msg = status_or_notification
    if error is not None or not isinstance(msg, dict):
        return TrayState("down", COLORS["down"], DOWN_TOOLTIP)
    if msg.get("method") == "status" and isinstance(msg.get("params"), dict):
        msg = msg["params"]
    if "daemon" in msg and not msg["daemon"]:
        # `status` answered from the store (no daemon), or render's down shape.
        return TrayState("down", COLORS["down"], DOWN_TOOLTIP)
    pending = _int(msg.get("pending"))
    lag = _float(msg.get("index_lag_s"))
    err = msg.get("error") or msg.get("error_state")
    name = msg.get("state")
    if name not in COLORS or name == "down":
        name = ("error" if err else "paused" if msg.get("paused")
                else "indexing" if pending else "fresh")
    if name == "error":
        tip = f"indexd: error: {err or 'unknown error'}"
    elif name == "paused":
        tip = f"indexd: paused, {pending} pending"
    elif name == "indexing":
        tip = f"indexd: indexing, {pending} pending, lag {lag:.1f}s"
    else:
        tip = f"indexd: fresh, lag {lag:.1f}s"
    if len(tip) > TOOLTIP_MAX:
        tip = tip[:TOOLTIP_MAX - 1] + "…"
    return TrayState(name, COLORS[name], tip)


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def _float(v: Any) -> float:
    try:
        return float(v or 0.0)
    except (TypeError, ValueError):
        return 0.0


def window_title(tooltip: str, backend_module: str = "") -> str:
    """The tooltip as the backend can take it: pystray's X backend writes the
    title as a latin-1 WM_NAME, so "—" and "…" would raise there."""
    if "xorg" not in backend_module:
        return tooltip
    text = tooltip.replace("\u2014", "-").replace("\u2026", "...")
    return text.encode("latin-1", "replace").decode("latin-1")


# ---------------------------------------------------------------- drawing

def draw_icon(state: TrayState, size: int = 64):
    """A filled disc in the state's colour with a white glyph (no fonts)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    m = size // 16
    d.ellipse((m, m, size - m - 1, size - m - 1), fill=state.color)
    s = size / 64.0
    w = max(2, round(6 * s))
    white = "#ffffff"

    def pts(*xy):
        return [(x * s, y * s) for x, y in xy]

    if state.name == "fresh":
        d.line(pts((18, 33), (28, 43), (47, 22)), fill=white, width=w, joint="curve")
    elif state.name == "indexing":
        d.arc((16 * s, 16 * s, 48 * s, 48 * s), 30, 320, fill=white, width=w)
        d.polygon(pts((49, 19), (50, 34), (37, 28)), fill=white)
    elif state.name == "paused":
        d.rectangle((22 * s, 18 * s, 29 * s, 46 * s), fill=white)
        d.rectangle((35 * s, 18 * s, 42 * s, 46 * s), fill=white)
    elif state.name == "error":
        d.rectangle((28 * s, 14 * s, 36 * s, 38 * s), fill=white)
        d.ellipse((28 * s, 42 * s, 36 * s, 50 * s), fill=white)
    else:
        d.line(pts((21, 21), (43, 43)), fill=white, width=w)
        d.line(pts((21, 43), (43, 21)), fill=white, width=w)
    return img


# ---------------------------------------------------------------- the tray

class Tray:
    """State, the watcher thread and the menu actions; the pystray Icon is
    attached by `main` (tests can drive `apply` without one)."""

    def __init__(self, socket_path: str | os.PathLike, log_file: str | os.PathLike,
                 state_file: str | os.PathLike | None = None, poll_s: float = POLL_S):
        self.socket_path = Path(socket_path)
        self.log_file = Path(log_file)
        self.state_file = Path(state_file) if state_file else None
        self.poll_s = poll_s
        self.icon = None
        self.state: TrayState | None = None
        self.last: dict | None = None       # the last status/notification params
        self.paused = False
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    # -- state

    def apply(self, msg: dict | None, error: str | None = None) -> TrayState:
        if isinstance(msg, dict) and msg.get("method") == "status":
            msg = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        state = state_from(msg, error)
        with self._lock:
            self.last = msg if error is None else None
            paused = bool(msg.get("paused")) if error is None and isinstance(msg, dict) else False
            paused_changed = paused != self.paused
            self.paused = paused
            changed = state != self.state
            self.state = state
        if changed:
            self._record(state, msg if error is None else None, error)
            self._show(state)
        if paused_changed and self.icon is not None:
            self.icon.update_menu()
        return state

    def _record(self, state: TrayState, msg: dict | None, error: str | None) -> None:
        log.info("state %s: %s", state.name, state.tooltip)
        if self.state_file is None:
            return
        line = {"state": state.name, "color": state.color, "tooltip": state.tooltip,
                "time": round(time.time(), 3), "paused": self.paused}
        if msg:
            line |= {"pending": msg.get("pending"), "index_lag_s": msg.get("index_lag_s")}
        if error:
            line["detail"] = error
        try:
            with open(self.state_file, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
        except OSError as exc:
            log.warning("cannot write %s: %s", self.state_file, exc)

    def _show(self, state: TrayState) -> None:
        icon = self.icon
        if icon is None:
            return
        try:
            # Title first: pystray's X backend does not flush after a title
            # change, but an icon update flushes, so this order never leaves
            # the last title sitting in the output buffer.
            icon.title = window_title(state.tooltip, type(icon).__module__)
            icon.icon = draw_icon(state)
        except Exception:  # noqa: BLE001 - a tray glitch must not stop the watcher
            log.exception("cannot update the tray icon")

    # -- the watcher thread

    def watch(self) -> None:
        backoff = BACKOFF_MIN_S
        while not self.stopping.is_set():
            client = Client(self.socket_path, timeout=15.0)
            try:
                self.apply(client.call("status"))
                client.call("subscribe")
                backoff = BACKOFF_MIN_S
                log.info("subscribed to %s", self.socket_path)
                while not self.stopping.is_set():
                    for note in client.notifications(timeout=self.poll_s):
                        if note.get("method") == "status":
                            self.apply(note)
                        if self.stopping.is_set():
                            return
                    # Nothing pushed for poll_s: ask, so a quiet daemon stays honest.
                    self.apply(client.call("status"))
            except IndexdError as exc:
                was_up = self.state is None or self.state.name != "down"
                self.apply(None, error=exc.message)
                if was_up:
                    log.info("daemon unreachable (%s); retrying", exc.message)
            except Exception as exc:  # noqa: BLE001 - keep watching whatever happens
                log.exception("tray watcher failed; retrying")
                self.apply(None, error=f"{type(exc).__name__}: {exc}")
            finally:
                client.close()
            self.stopping.wait(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    # -- menu actions (run on the icon's thread; one Client each)

    def _call(self, method: str, **params: Any) -> dict:
        with Client(self.socket_path, timeout=15.0) as c:
            return c.call(method, **params)

    def say(self, text: str) -> None:
        """A short message: a desktop notification where the backend has
        them, else stdout (and the log)."""
        log.info("%s", text)
        icon = self.icon
        if icon is not None and getattr(icon, "HAS_NOTIFICATION", False):
            try:
                icon.notify(text, "indexd")
                return
            except Exception:  # noqa: BLE001 - fall back to printing
                log.debug("notify failed", exc_info=True)
        print(text, flush=True)

    def on_status(self, icon=None, item=None) -> None:
        from .cli.render import oneline

        try:
            result = self._call("status")
        except DaemonNotRunning as exc:
            result = {"daemon": None, "error": exc.message}
        except IndexdError as exc:
            self.say(f"indexd: {exc.message}")
            return
        self.say(oneline(result))

    def on_reindex(self, icon=None, item=None) -> None:
        try:
            self._call("reindex")
            self.say("indexd: reindex requested")
        except IndexdError as exc:
            self.say(f"indexd: reindex failed: {exc.message}")

    def on_toggle_pause(self, icon=None, item=None) -> None:
        method = "resume" if self.paused else "pause"
        try:
            result = self._call(method) or {}
        except MethodNotFound:
            self.say(NO_PAUSE)
            return
        except IndexdError as exc:
            self.say(f"indexd: {method} failed: {exc.message}")
            return
        with self._lock:
            self.paused = bool(result.get("paused", method == "pause"))
        if self.icon is not None:
            self.icon.update_menu()
        self.say("indexd: watching paused" if self.paused else "indexd: watching resumed")

    def on_open_log(self, icon=None, item=None) -> None:
        if not self.log_file.exists():
            self.say(f"indexd: no log yet at {self.log_file}")
            return
        try:
            if sys.platform == "darwin":
                subprocess.Popen(["open", str(self.log_file)])
            elif os.name == "nt":
                os.startfile(str(self.log_file))  # type: ignore[attr-defined]
            else:
                subprocess.Popen(["xdg-open", str(self.log_file)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.say(f"indexd: cannot open {self.log_file}: {exc}")

    def on_quit(self, icon=None, item=None) -> None:
        self.stopping.set()
        if self.icon is not None:
            self.icon.stop()

    def pause_label(self, item=None) -> str:
        return "Resume watching" if self.paused else "Pause watching"

    def menu(self, pystray):
        Item = pystray.MenuItem
        return pystray.Menu(
            Item("Status", self.on_status, default=True),
            Item("Reindex", self.on_reindex),
            Item(self.pause_label, self.on_toggle_pause),
            Item("Open log", self.on_open_log),
            pystray.Menu.SEPARATOR,
            Item("Quit tray", self.on_quit),
        )


class _OnceFilter(logging.Filter):
    """pystray's X backend logs "Failed to dock icon" with a traceback on every
    update when no tray manager runs: keep the first of each, without traceback."""

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if msg in self.seen:
            return False
        self.seen.add(msg)
        record.exc_info = record.exc_text = None
        return True


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="indexctl tray",
                                description="A system-tray icon showing the daemon's state.")
    p.add_argument("--state-file", help="append each state change as a JSON line to this file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if importlib.util.find_spec("pystray") is None or importlib.util.find_spec("PIL") is None:
        print(f"indexctl tray: {INSTALL_HINT}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s indexctl tray: %(message)s")
    logging.getLogger("pystray").addFilter(_OnceFilter())
    for name in ("pystray._xorg", "pystray._gtk", "pystray._appindicator", "pystray._base"):
        logging.getLogger(name).addFilter(_OnceFilter())
    try:
        import pystray
    except ImportError as exc:
        print(f"indexctl tray: {exc}; {INSTALL_HINT}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - e.g. Xlib's "Bad display name"
        print(f"indexctl tray: cannot reach a desktop tray ({type(exc).__name__}: {exc}); "
              "is DISPLAY set?", file=sys.stderr)
        return 4

    from .config import load_settings

    settings = load_settings()
    tray = Tray(settings.paths.socket, settings.paths.log_file, args.state_file)
    first = state_from(None, "connecting")
    icon = pystray.Icon("indexd", draw_icon(first), window_title(first.tooltip, pystray.Icon.__module__),
                        menu=tray.menu(pystray))
    tray.icon = icon

    def setup(icon) -> None:
        icon.visible = True
        threading.Thread(target=tray.watch, name="indexd-tray-watch", daemon=True).start()

    try:
        import signal

        signal.signal(signal.SIGTERM, lambda *_: tray.on_quit())
    except ValueError:
        pass  # not the main thread (tests calling main() from a thread)
    try:
        icon.run(setup=setup)
    except KeyboardInterrupt:
        pass
    finally:
        tray.stopping.set()
    return 0
