"""The query audit log: one JSON line per request the daemon answers.

Off by default; ``audit_log = true`` (or ``INDEXD_AUDIT_LOG=1``) turns it on, and
a config reload turns it on or off without a restart. Every request that reaches
the method table (``Methods.call``) is recorded, whichever door it came through:
the Unix socket (``transport`` "socket", or "mcp" when the MCP server named
itself in ``initialize``) or the REST API ("http"). A record says when, who
(peer uid/pid, or the HTTP client's address), which method with which params
(secret-looking values masked by the same detection that keeps secrets out of
the index, long strings cut), how many results, how long and the error code.
Results are counted, never logged, so no file content reaches the log.

The file is ``log_dir/audit.jsonl``, mode 0600 (also after each rotation),
rotated at 10 MB with 3 old files kept. ``read_audit`` reads it back for
``indexctl audit``, which needs no daemon.

Imports only the standard library, ``errors`` and ``scan.secrets``: the CLI
uses this module.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import logging.handlers
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .errors import ConfigError, IndexdError
from .scan.secrets import secret_content_reason

log = logging.getLogger(__name__)

MAX_BYTES = 10 << 20
BACKUPS = 3
MCP_CLIENT = "indexd-mcp"        # the name indexd/mcp/server.py gives in initialize
MASK = "«masked»"
MAX_STRING = 256                 # longer strings are cut: a param is not a place for text
MAX_ITEMS = 50                   # list items and object keys kept per level
MAX_DEPTH = 6
CANCELLED = "cancelled"          # `error` of a request whose client left, or at shutdown
# Param names whose values are always masked, whatever they look like.
_SENSITIVE_NAME = re.compile(r"passw|secret|token|api[_-]?key|auth|credential|private[_-]?key",
                             re.IGNORECASE)
_COUNTED = ("results", "affected", "refs", "deps", "changed", "annotations", "realms",
            "added", "removed")


@dataclass(frozen=True)
class Origin:
    """Who sent a request: ``transport`` socket | mcp | http, and the peer."""

    transport: str
    peer: dict = field(default_factory=dict)
    client: str | None = None

    @classmethod
    def of(cls, conn) -> "Origin":
        """The origin of a socket connection (or of an in-process call: conn None)."""
        if conn is None:
            return cls("local")
        return cls(getattr(conn, "transport", "socket"),
                   {"uid": getattr(conn, "peer_uid", None), "pid": getattr(conn, "peer_pid", None)},
                   getattr(conn, "client_name", None))

    @classmethod
    def http(cls, peername) -> "Origin":
        addr = peername if isinstance(peername, (tuple, list)) else (peername,)
        peer = {"addr": str(addr[0]) if addr else None}
        if len(addr) > 1:
            peer["port"] = addr[1]
        return cls("http", peer)


def transport_of(client_name: str | None) -> str:
    """The transport a socket client declares by its ``initialize`` client_info name."""
    return "mcp" if client_name == MCP_CLIENT else "socket"


# ---------------------------------------------------------------- writing

class AuditLog:
    """Writes records while ``settings.audit_log`` is on; opens the file lazily."""

    def __init__(self, settings_provider, max_bytes: int = MAX_BYTES, backups: int = BACKUPS):
        self._settings = settings_provider
        self.max_bytes = max_bytes
        self.backups = backups
        self._handler: _PrivateRotatingFileHandler | None = None

    @property
    def path(self) -> Path:
        return audit_path(self._settings().paths)

    def record(self, origin: Origin, method, params, result, error: BaseException | None,
               started: float) -> None:
        """Append one record; never fails the request it describes."""
        if not self._settings().audit_log:
            self.close()
            return
        try:
            line = json.dumps(make_record(origin, method, params, result, error, started),
                              ensure_ascii=False, separators=(",", ":"))
            self._open().handle(logging.makeLogRecord({"msg": line}))
        except Exception:  # noqa: BLE001 - an audit bug must not fail the query
            log.exception("audit record failed method=%s", method)

    def close(self) -> None:
        if self._handler is not None:
            self._handler.close()
            self._handler = None

    def _open(self) -> logging.Handler:
        path = self.path
        if self._handler is None or self._handler.baseFilename != str(path.absolute()):
            self.close()
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._handler = _PrivateRotatingFileHandler(path, self.max_bytes, self.backups)
        return self._handler


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files are 0600 from creation on (each rotation
    opens a new file through ``_open``), whatever the umask."""

    def __init__(self, path: Path, max_bytes: int, backups: int):
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.setFormatter(logging.Formatter("%(message)s"))

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                     0o600)
        try:
            os.fchmod(fd, 0o600)     # a file left by an older version, or made under umask 0
            return os.fdopen(fd, "a", encoding="utf-8")
        except BaseException:
            os.close(fd)
            raise


def audit_path(paths) -> Path:
    return Path(paths.audit_file)


def make_record(origin: Origin, method, params, result, error, started: float) -> dict:
    rec = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
           "transport": origin.transport, "peer": origin.peer}
    if origin.client:
        rec["client"] = mask_value(origin.client, "client")
    rec |= {"method": mask_value(method, "method"), "params": mask_value(params, ""),
            "count": result_count(result) if error is None else None,
            "took_ms": round((time.monotonic() - started) * 1000, 1),
            "error": error_code(error)}
    return rec


def error_code(error: BaseException | None):
    if error is None:
        return None
    if isinstance(error, IndexdError):
        return error.code
    if isinstance(error, asyncio.CancelledError):
        return CANCELLED
    return IndexdError.code      # the socket server answers anything else with -32603


def result_count(result) -> int | None:
    """How many things an answer holds: ``total``, else the length of its main list."""
    if not isinstance(result, dict):
        return None
    total = result.get("total")
    if isinstance(total, int) and not isinstance(total, bool):
        return total
    for key in _COUNTED:
        if isinstance(result.get(key), list):
            return len(result[key])
    return None


def mask_value(value, name: str, depth: int = 0):
    """A loggable copy of a param: secrets masked, strings cut, nesting bounded."""
    if isinstance(value, str):
        return _mask_string(value, name)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, dict):
        out = {}
        for i, (key, item) in enumerate(value.items()):
            if i == MAX_ITEMS:
                out["…"] = f"{len(value) - MAX_ITEMS} more"
                break
            key = _mask_string(str(key), "")
            out[key] = MASK if _SENSITIVE_NAME.search(key) else mask_value(item, key, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        out = [mask_value(item, name, depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            out.append(f"… {len(value) - MAX_ITEMS} more")
        return out
    return f"<{type(value).__name__}>"


def _mask_string(text: str, name: str) -> str:
    if name and _SENSITIVE_NAME.search(name):
        return MASK
    # Checked on the whole value, so no part of a secret survives the cut below.
    if secret_content_reason(text) is not None:
        return MASK
    if len(text) > MAX_STRING:
        return text[:MAX_STRING] + f"… (+{len(text) - MAX_STRING} chars)"
    return text


# ---------------------------------------------------------------- reading

def audit_files(path: Path) -> list[Path]:
    """The log and its rotated copies, oldest first (audit.jsonl.3 … .1, audit.jsonl)."""
    old = []
    for p in path.parent.glob(path.name + ".*"):
        suffix = p.name[len(path.name) + 1:]
        if suffix.isdigit():
            old.append((int(suffix), p))
    return [p for _, p in sorted(old, reverse=True)] + ([path] if path.exists() else [])


def read_audit(path: Path, since: datetime | None = None, limit: int | None = None) -> dict:
    """The newest ``limit`` records at or after ``since``, oldest first."""
    kept: collections.deque = collections.deque(maxlen=limit)
    total = unreadable = 0
    for f in audit_files(path):
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    rec = _parse_line(line)
                    if rec is None:
                        unreadable += bool(line.strip())
                        continue
                    if since is not None and rec["_time"] < since:
                        continue
                    del rec["_time"]
                    total += 1
                    kept.append(rec)
        except FileNotFoundError:
            continue    # rotated away between the listing and the open
        except OSError as exc:
            raise ConfigError(f"cannot read the audit log {f}: {exc.strerror}",
                              {"path": str(f)}) from None
    return {"file": str(path), "exists": path.exists(), "total": total,
            "records": list(kept), "unreadable_lines": unreadable}


def _parse_line(line: str) -> dict | None:
    """A record with its parsed time under ``_time``; None for a torn or foreign line."""
    try:
        rec = json.loads(line)
        when = datetime.fromisoformat(rec["time"])
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(rec, dict):
        return None
    rec["_time"] = when if when.tzinfo else when.astimezone()
    return rec


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``30s``, ``10m``, ``2h``, ``1d``, ``1h30m`` ago, or an ISO time (local if naive)."""
    text = text.strip()
    parts = _DURATION.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
        return (now or datetime.now(timezone.utc)) - timedelta(seconds=seconds)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--since {text!r}: use a duration (30s, 10m, 2h, 1d) or an ISO "
                         f"time (2026-01-31 or 2026-01-31T09:00)") from None
    return when if when.tzinfo else when.astimezone()
