"""Blocking JSON-RPC client for the indexd daemon socket.

THE client used by the CLI, the MCP server, the tray and the tests. It owns
its own tiny codec (both framings) on purpose: it is stdlib only (socket,
json) and must NOT import asyncio-heavy engine code, lancedb, torch, or
anything from indexd except `indexd.errors` and `indexd.model`, so that
`indexctl` starts instantly and keeps working when engine dependencies break.

Not thread-safe: use one Client per thread.
"""

from __future__ import annotations

import collections
import json
import os
import socket
import time
from pathlib import Path
from typing import Any, Iterator

from indexd.errors import (ConfigError, ConnectionLost, DaemonNotRunning,
                           RequestTimeout, from_rpc)

NDJSON = "ndjson"
LSP = "lsp"
_RECV = 1 << 16
_START_HINT = "start it with `indexd run`"


class Client:
    """One connection to the daemon. `call` connects lazily and reconnects
    after a lost connection; a timed-out call keeps the connection (its late
    answer is recognised by id and discarded)."""

    def __init__(self, path: str | os.PathLike, timeout: float = 30.0,
                 framing: str = NDJSON):
        if framing not in (NDJSON, LSP):
            raise ValueError(f"framing must be {NDJSON!r} or {LSP!r}, not {framing!r}")
        self.path = Path(path)
        self.timeout = timeout
        self.framing = framing
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._next_id = 0
        self._pending: collections.deque[dict] = collections.deque()

    # ------------------------------------------------------------ lifecycle

    def connect(self) -> "Client":
        if self._sock is not None:
            return self
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.path))
        except BaseException as exc:
            sock.close()
            raise self._connect_error(exc) from None
        self._sock = sock
        self._buf.clear()
        return self

    def _connect_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, FileNotFoundError):
            return DaemonNotRunning(
                f"indexd is not running (no socket at {self.path}); {_START_HINT}",
                {"path": str(self.path)})
        if isinstance(exc, ConnectionRefusedError):
            return DaemonNotRunning(
                f"indexd is not running (nothing listens on {self.path}); {_START_HINT}",
                {"path": str(self.path)})
        if isinstance(exc, TimeoutError):
            return RequestTimeout(f"timed out connecting to {self.path}",
                                  {"path": str(self.path)})
        if isinstance(exc, OSError):
            return ConfigError(f"cannot connect to {self.path}: {exc}",
                               {"path": str(self.path)})
        return exc

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buf.clear()

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # ------------------------------------------------------------ API

    def call(self, method: str, /, **params: Any) -> dict:
        """Call ``method``; raises the typed error from the daemon's answer,
        RequestTimeout after ``timeout`` seconds, ConnectionLost on EOF."""
        self.connect()
        self._next_id += 1
        rid = self._next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read(deadline, what=f"{method} (timeout {self.timeout}s)")
            if not isinstance(msg, dict):
                continue    # we never send batches
            if "method" in msg and "id" not in msg:
                self._pending.append(msg)
                continue
            rid_ok = msg.get("id") == rid
            # An error with id null is the daemon failing to read our request.
            if "error" in msg and (rid_ok or msg.get("id") is None):
                raise from_rpc(msg["error"] if isinstance(msg["error"], dict) else {})
            if rid_ok:
                return msg.get("result")

    def notify(self, method: str, /, **params: Any) -> None:
        """Send a notification (no id, no answer)."""
        self.connect()
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def notifications(self, timeout: float | None = None) -> Iterator[dict]:
        """Yield pushed notifications (``{"jsonrpc", "method", "params"}``).

        ``timeout``: stop when none arrives for that many seconds (0: only
        what is already there); None waits forever. Raises ConnectionLost on EOF.
        """
        self.connect()
        while True:
            while self._pending:
                yield self._pending.popleft()
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                msg = self._read(deadline, what="notification")
            except RequestTimeout:
                return
            if isinstance(msg, dict) and "method" in msg and "id" not in msg:
                yield msg

    # ------------------------------------------------------------ wire

    def _send(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        if self.framing == NDJSON:
            data = body + b"\n"
        else:
            data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert self._sock is not None
        try:
            self._sock.settimeout(self.timeout)
            self._sock.sendall(data)
        except TimeoutError:
            # A partial frame may have gone out: the stream is unusable now.
            self.close()
            raise RequestTimeout(f"timed out sending to {self.path}") from None
        except OSError as exc:
            self.close()
            raise ConnectionLost(f"connection to indexd lost: {exc}") from None

    def _read(self, deadline: float | None, what: str) -> Any:
        """Next decoded message; RequestTimeout at ``deadline`` (None: never)."""
        while True:
            msg = self._take_frame()
            if msg is not _NOTHING:
                return msg
            self._recv(deadline, what)

    def _recv(self, deadline: float | None, what: str) -> None:
        sock = self._sock
        if sock is None:
            raise ConnectionLost("not connected")
        if deadline is None:
            sock.settimeout(None)
        else:
            sock.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            data = sock.recv(_RECV)
        except (TimeoutError, BlockingIOError):
            raise RequestTimeout(f"no answer from indexd for {what}") from None
        except OSError as exc:
            self.close()
            raise ConnectionLost(f"connection to indexd lost: {exc}") from None
        if not data:
            self.close()
            raise ConnectionLost("indexd closed the connection")
        self._buf += data

    def _take_frame(self) -> Any:
        """Decode one complete frame from the buffer, or _NOTHING."""
        if self.framing == NDJSON:
            while True:
                nl = self._buf.find(b"\n")
                if nl < 0:
                    return _NOTHING
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                if line.strip():
                    return self._loads(line)
        while self._buf[:1] in (b"\r", b"\n"):
            del self._buf[:1]
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            return _NOTHING
        length = _content_length(bytes(self._buf[:end]))
        if length is None:
            self.close()
            raise ConnectionLost("indexd sent a frame without Content-Length")
        if len(self._buf) < end + 4 + length:
            return _NOTHING
        body = bytes(self._buf[end + 4:end + 4 + length])
        del self._buf[:end + 4 + length]
        return self._loads(body)

    def _loads(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError as exc:
            self.close()    # the stream can no longer be trusted
            raise ConnectionLost(f"indexd sent invalid JSON: {exc}") from None


_NOTHING = object()


def _content_length(block: bytes) -> int | None:
    for line in block.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return None
