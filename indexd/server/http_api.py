"""The loopback REST API's ground rules: address, binding, token, endpoint file.

``indexd run --http HOST:PORT`` starts the REST API (rest_app.py: an ASGI app
served by uvicorn on the daemon's loop) next to the socket server. This
module holds what the daemon needs before and after serving, and what the
server is bound by:

    GET       /api/v1/health          no auth   {"ok": true}
    GET       /api/v1/openapi.json    no auth   the OpenAPI 3.0 document (openapi.py)
    POST      /api/v1/search          the seeds' search shape, mapped to `search`
    POST      /api/v1/impact          {target, depth, kinds} -> `impact`
    POST      /api/v1/context         {query, files, budget, ...} -> `context`
    GET|POST  /api/v1/status          -> `status`
    POST      /api/v1/rpc/{method}    the method's named params as the body
    GET       /api/v1/events          status notifications as server-sent events
    POST      /api/v1/ui/code         a one-time sign-in code for the web UI (bearer only)
    GET       /ui/...                 the web UI's pages and static files (`indexd.web`)

Everything but health and the document needs ``Authorization: Bearer TOKEN``;
the token lives in ``config_dir/http_token`` (0600, see `load_or_create_token`).
The web UI's pages authenticate with the session cookie `indexd.web.auth`
hands out for a one-time code instead (same-origin requests only).
Errors are ``{"error": {code, message, data}}`` with the JSON-RPC code of the
typed error and an HTTP status from `rest_mapping.http_status`.

Binding is loopback only (127.0.0.0/8, ::1, localhost) unless the caller
passes ``allow_remote=True`` (``--http-allow-remote``).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import stat
from pathlib import Path

from ..errors import ConfigError

API = "/api/v1"
TOKEN_FILE = "http_token"
ENDPOINT_FILE = "http.json"
MAX_BODY = 1 << 20
# a refused body up to this size is read and dropped before the 413, so a client that
# sends it whole (requests, http.client) reads the answer instead of a reset connection
MAX_DRAIN = 16 << 20
MAX_HEADER_BYTES = 16 << 10
MAX_HEADERS = 100
HEADER_TIMEOUT_S = 30.0      # a request head must arrive within this (slowloris)
BODY_TIMEOUT_S = 30.0
KEEPALIVE_TIMEOUT_S = 30.0


# ------------------------------------------------------------ token, binding

def load_or_create_token(settings) -> str:
    """The bearer token, created once (0600, O_EXCL) in the config directory.

    An existing file readable or writable by group/other is refused: the fix
    is a chmod, and the error says so.
    """
    path = Path(settings.paths.config_dir) / TOKEN_FILE
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
    except FileExistsError:
        return _read_token(path)
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return token


def _read_token(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the HTTP token: {exc.strerror}; "
                          f"delete it to make a new one", {"path": str(path)}) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path} is not a regular file; delete it to make a new token",
                              {"path": str(path)})
        if st.st_uid != os.getuid():
            raise ConfigError(f"{path} belongs to uid {st.st_uid}, not to you; delete it to "
                              f"make a new token", {"path": str(path)})
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise ConfigError(f"{path} is accessible by other users (mode {mode:04o}); fix it "
                              f"with: chmod 600 {path}", {"path": str(path), "mode": f"{mode:04o}"})
        token = os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if len(token) < 16:
        raise ConfigError(f"{path} holds no usable token; delete it to make a new one",
                          {"path": str(path)})
    return token


def parse_http_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[::1]:PORT`` or ``:PORT`` (127.0.0.1) -> (host, port)."""
    host, sep, port = (value or "").strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http wants HOST:PORT (e.g. 127.0.0.1:7878), not {value!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "127.0.0.1", int(port)


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str, allow_remote: bool) -> None:
    """Loopback only unless asked (--http-allow-remote), and never without a token."""
    if not allow_remote and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve the REST API on {host!r}: it is not a loopback address "
            f"(127.0.0.1, ::1, localhost). Anyone who can reach it and steals the token can "
            f"read your code; if you mean it, add --http-allow-remote",
            {"host": host})
    if not token:
        raise ConfigError("the REST API needs a token")


def publish_endpoint(runtime_dir: Path, api, token_file: Path) -> Path:
    """Write runtime_dir/http.json ({url, host, port, pid, token_file}, 0600):
    how clients (and tests) find a server started on port 0."""
    path = Path(runtime_dir) / ENDPOINT_FILE
    tmp = path.with_suffix(".json.tmp")
    # A fresh file, never one found there: a planted tmp link is removed, not
    # written through (unlink and rename act on the link itself).
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": api.url, "host": api.host, "port": api.port, "pid": os.getpid(),
                   "token_file": str(token_file)}, fh)
    os.replace(tmp, path)
    return path


def unpublish_endpoint(runtime_dir: Path) -> None:
    path = Path(runtime_dir) / ENDPOINT_FILE
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
