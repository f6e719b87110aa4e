"""The loopback REST API: HTTP/1.1 + JSON over the same `Methods` as the socket.

``indexd run --http HOST:PORT`` starts it next to the socket server. Stdlib
only (``asyncio.start_server`` and a minimal request parser): no framework,
nothing to download. Every request is answered by ``Methods.call``, so each
method has exactly one implementation whoever asks.

Endpoints (all JSON; see ``GET /api/v1/openapi.json``):

    GET       /api/v1/health          no auth   {"ok": true}
    GET       /api/v1/openapi.json    no auth   the OpenAPI 3.0 document
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
typed error and an HTTP status from `http_status`.

Binding is loopback only (127.0.0.0/8, ::1, localhost) unless the caller
passes ``allow_remote=True`` (``--http-allow-remote``).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import os
import secrets
import stat
from pathlib import Path

from ..audit import Origin
from . import params
from ..web import assets as web_assets
from ..web import auth as web_auth
from ..web import events as web_events
from ..errors import (ConfigError, IndexdError, IndexNotReady, InvalidParams, MethodNotFound,
                      ModelUnavailable, NotImplementedYet, ParseError, ProtocolError, RealmError)

log = logging.getLogger(__name__)

API = "/api/v1"
TOKEN_FILE = "http_token"
ENDPOINT_FILE = "http.json"
MAX_BODY = 1 << 20
MAX_HEADER_BYTES = 16 << 10
MAX_HEADERS = 100
HEADER_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 30.0
KEEPALIVE_TIMEOUT_S = 30.0
SEARCH_TYPES = {"fts": "keyword", "keyword": "keyword", "semantic": "semantic",
                "graph": "hybrid", "hybrid": "hybrid"}   # graph -> hybrid until the graph lands
SEARCH_FILTERS = ("realm", "repo", "kind", "lang", "path")
DEFAULT_CONTEXT_WINDOW = 3
_REASONS = {200: "OK", 204: "No Content", 303: "See Other", 400: "Bad Request", 401: "Unauthorized",
            404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
            411: "Length Required", 413: "Content Too Large", 431: "Request Header Fields Too Large",
            500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
            505: "HTTP Version Not Supported"}


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


def http_status(exc: BaseException) -> int:
    if isinstance(exc, (InvalidParams, ParseError, ConfigError)):
        return 400          # ConfigError from a request: a bad realm name and the like
    if isinstance(exc, (RealmError, MethodNotFound)):
        return 404
    if isinstance(exc, ProtocolError):
        return 400
    if isinstance(exc, (IndexNotReady, ModelUnavailable)):
        return 503
    if isinstance(exc, NotImplementedYet):
        return 501
    return 500


class HttpError(Exception):
    """An answer decided by the HTTP layer itself (not by a method)."""

    def __init__(self, status: int, message: str, code: int = -32600, data: dict | None = None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code
        self.data = dict(data or {})
        self.headers = headers or {}

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message,
                          "data": {"type": "HttpError", "retryable": False, "status": self.status}
                          | self.data}}


# ------------------------------------------------------------------ server

class HttpApi:
    def __init__(self, methods, host: str, port: int, token: str, allow_remote: bool = False,
                 max_body: int = MAX_BODY):
        if not allow_remote and not is_loopback(host):
            raise ConfigError(
                f"refusing to serve the REST API on {host!r}: it is not a loopback address "
                f"(127.0.0.1, ::1, localhost). Anyone who can reach it and steals the token can "
                f"read your code; if you mean it, add --http-allow-remote",
                {"host": host})
        if not token:
            raise ConfigError("the REST API needs a token")
        self.methods = methods
        self.host = host
        self.port = port
        self.allow_remote = allow_remote
        self.max_body = max_body
        self._token = token.encode()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._openapi: bytes | None = None
        self.assets = web_assets.Assets()
        self.events = web_events.EventHub()
        self.ui_auth = web_auth.UiAuth(port)

    def publish(self, params: dict) -> None:
        """A status notification, for the open event streams (on the loop)."""
        self.events.publish("status", params)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{API}"

    async def start(self) -> None:
        try:
            self._server = await asyncio.start_server(self._on_connect, self.host, self.port,
                                                      limit=MAX_HEADER_BYTES, reuse_address=True)
        except OSError as exc:
            raise ConfigError(f"cannot serve the REST API on {self.host}:{self.port}: "
                              f"{exc.strerror or exc}", {"host": self.host, "port": self.port}) from None
        socks = self._server.sockets or []
        if socks:
            self.port = socks[0].getsockname()[1]
            self.ui_auth.port = self.port
        log.info("http api listening url=%s", self.url)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        self.events.close_all()
        for w in list(self._writers):
            w.close()
        try:
            await asyncio.wait_for(self._server.wait_closed(), 5)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - shutting down anyway
            pass
        self._server = None

    # -------------------------------------------------------- connections

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._writers.add(writer)
        try:
            first = True
            while True:
                keep = await self._one_request(reader, writer, first)
                first = False
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - never let one connection hurt the daemon
            log.exception("http connection failed")
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one_request(self, reader, writer, first: bool) -> bool:
        """Read, answer; True to keep the connection for another request."""
        timeout = HEADER_TIMEOUT_S if first else KEEPALIVE_TIMEOUT_S
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                await self._send_error(writer, HttpError(400, "incomplete request"), False)
            return False
        except asyncio.LimitOverrunError:
            await self._send_error(writer, HttpError(431, "request headers too large"), False)
            return False
        except asyncio.TimeoutError:
            return False
        try:
            method, target, version, headers = _parse_head(head)
        except HttpError as err:
            await self._send_error(writer, err, False)
            return False
        keep = _keep_alive(version, headers)
        length, state = 0, {"body_read": False}
        origin = Origin.http(writer.get_extra_info("peername"))   # for the audit log
        try:
            length = _content_length(headers)
            status, body, extra = await self._dispatch(method, target, headers, length, reader,
                                                       state, origin)
            if isinstance(body, _Stream):
                await self._stream(writer, body)
                return False
        except HttpError as err:
            unread = length > 0 and not state["body_read"]
            # A body we did not read leaves the stream unframed: answer, close.
            await self._send_error(writer, err, keep and not unread)
            if unread:
                await _discard(reader, length)
            return keep and not unread
        except asyncio.TimeoutError:
            await self._send_error(writer, HttpError(408, "timed out reading the request body"),
                                   False)
            return False
        await self._send(writer, status, body, keep, extra)
        return keep

    async def _dispatch(self, method: str, target: str, headers: dict, length: int, reader,
                        state: dict, origin: Origin):
        path = target.split("?", 1)[0].split("#", 1)[0]
        if len(path) > 1:
            path = path.rstrip("/")
        if self.assets.owns(path):
            return self._web_page(method, path, target, length)
        route, allowed, rpc_name = _route(path)
        if route is None:
            raise HttpError(404, f"no such endpoint: {path}", data={"path": path})
        if route not in ("health", "openapi"):
            self._check_auth(headers, cookie_ok=route != "ui/code")
        if method not in allowed:
            raise HttpError(405, f"{method} is not allowed on {path}; use {', '.join(allowed)}",
                            data={"allow": list(allowed)}, headers={"Allow": ", ".join(allowed)})
        if length > self.max_body:
            raise HttpError(413, f"request body too large: {length} bytes (max {self.max_body})",
                            data={"max_body": self.max_body})
        raw = b""
        if length:
            raw = await asyncio.wait_for(reader.readexactly(length), BODY_TIMEOUT_S)
            state["body_read"] = True
        if route == "health":
            return 200, {"ok": True}, {}
        if route == "openapi":
            return 200, self.openapi_bytes(), {}
        if route == "ui/code":
            code = self.ui_auth.new_code()
            return 200, {"code": code, "expires_in_s": web_auth.CODE_TTL_S,
                         "url": f"{self.origin}/ui/login?code={code}"}, {}
        if route == "events":
            return await self._open_stream(origin)
        body = _json_body(raw) if method == "POST" else {}
        try:
            if route == "search":
                result = await self.methods.call("search", search_params(body), origin=origin)
            elif route == "impact":
                result = await self.methods.call("impact", impact_params(body), origin=origin)
            elif route == "context":
                check_types(RPC_PARAMS["context"], body)
                result = await self.methods.call("context", body, origin=origin)
            elif route == "status":
                check_types(RPC_PARAMS["status"], body)
                result = await self.methods.call("status", body, origin=origin)
            else:
                check_types(RPC_PARAMS.get(rpc_name), body)
                result = await self.methods.call(rpc_name, body, origin=origin)
        except HttpError:
            raise
        except IndexdError as exc:
            return http_status(exc), {"error": exc.to_rpc()}, {}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in a handler: 500, logged
            log.exception("http %s %s failed", method, path)
            err = IndexdError(f"internal error: {type(exc).__name__}: {exc}")
            return 500, {"error": err.to_rpc()}, {}
        return 200, result, {}

    def _check_auth(self, headers: dict, cookie_ok: bool = True) -> None:
        value = headers.get("authorization", "")
        scheme, _, given = value.partition(" ")
        ok = scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("utf-8", "surrogateescape"), self._token)
        if not ok and cookie_ok and "authorization" not in headers:
            ok = (self.ui_auth.session_ok(headers.get("cookie", ""))
                  and web_auth.same_origin(headers, self.host, self.port))
        if not ok:
            raise HttpError(401, "missing or wrong bearer token (Authorization: Bearer TOKEN; "
                            "the token is in the http_token file of the config directory)",
                            headers={"WWW-Authenticate": 'Bearer realm="indexd"'})

    @property
    def origin(self) -> str:
        return self.url[:-len(API)]

    # ------------------------------------------------------------- web UI

    def _web_page(self, method: str, path: str, target: str, length: int):
        if method != "GET":
            raise HttpError(405, f"{method} is not allowed on {path}; use GET",
                            data={"allow": ["GET"]}, headers={"Allow": "GET"})
        if length:
            raise HttpError(400, "a page request has no body")
        if path == web_assets.PREFIX + "/login":
            return self._login(target)
        return self.assets.answer(path)

    def _login(self, target: str):
        """Trade a one-time code for a session cookie, then a clean URL. The
        code is never logged: this server logs no request lines or queries."""
        from urllib.parse import parse_qs, urlsplit

        code = (parse_qs(urlsplit(target).query).get("code") or [""])[0]
        session = self.ui_auth.redeem(code) if code else None
        if session is None:
            return web_assets.page_error(401, "This sign-in link was used already or has "
                                              "expired. Run `indexctl ui` for a new one.")
        return web_assets.redirect(web_assets.PREFIX + "/",
                                   {"Set-Cookie": self.ui_auth.set_cookie(session)})

    async def _open_stream(self, origin: Origin):
        queue = self.events.open()
        if queue is None:
            raise HttpError(503, f"too many event streams (at most {web_events.MAX_STREAMS})")
        try:
            status = await self.methods.call("status", {}, origin=origin)
        except IndexdError as exc:
            self.events.close(queue)
            raise HttpError(http_status(exc), exc.message, exc.code, exc.data) from None
        except BaseException:
            self.events.close(queue)
            raise
        return 200, _Stream(queue, web_events.encode("status", status)), {}

    async def _stream(self, writer, stream: "_Stream") -> None:
        head = [f"HTTP/1.1 200 {_REASONS[200]}", "Content-Type: text/event-stream",
                "Cache-Control: no-store", "X-Content-Type-Options: nosniff",
                "Connection: close"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        try:
            await web_events.relay(stream.queue, writer, stream.first)
        except (ConnectionError, OSError):
            pass        # the page was closed: the usual way a stream ends
        finally:
            self.events.close(stream.queue)

    def openapi_bytes(self) -> bytes:
        if self._openapi is None:
            self._openapi = json.dumps(openapi_document(sorted(self.methods.table))).encode()
        return self._openapi

    # -------------------------------------------------------------- writing

    async def _send_error(self, writer, err: HttpError, keep: bool) -> None:
        await self._send(writer, err.status, err.body(), keep, err.headers)

    async def _send(self, writer, status: int, body, keep: bool, extra: dict) -> None:
        if isinstance(body, bytes):
            data = body
        else:
            try:
                data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
            except (TypeError, ValueError) as exc:
                log.exception("http response not JSON-serialisable")
                status = 500
                data = json.dumps({"error": IndexdError(f"internal error: {exc}").to_rpc()}).encode()
        # A page or static file brings its own Content-Type and Cache-Control.
        fields = {"Content-Type": "application/json; charset=utf-8",
                  "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} | extra
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
                f"Content-Length: {len(data)}",
                f"Connection: {'keep-alive' if keep else 'close'}"]
        head += [f"{k}: {v}" for k, v in fields.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()


class _Stream:
    """An answer that stays open: server-sent events from ``queue``."""

    def __init__(self, queue: asyncio.Queue, first: bytes):
        self.queue, self.first = queue, first


# ------------------------------------------------------------- request bits

async def _discard(reader: asyncio.StreamReader, length: int) -> None:
    """Read (and drop) a refused body for a moment before closing, so the
    client reads our answer instead of a connection reset. Bounded in bytes
    and time."""
    left = min(length, 4 * MAX_BODY)
    try:
        async with asyncio.timeout(2.0):
            while left > 0:
                chunk = await reader.read(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
    except (TimeoutError, ConnectionError):
        pass


def _parse_head(head: bytes) -> tuple[str, str, str, dict]:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes anything
        raise HttpError(400, "undecodable request head") from None
    lines = text.split("\r\n")
    while lines and not lines[0]:          # tolerate stray CRLFs between requests
        lines.pop(0)
    parts = lines[0].split(" ") if lines else []
    if len(parts) != 3 or not parts[0].isalpha() or not parts[1]:
        raise HttpError(400, "malformed request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505, f"unsupported protocol {version!r}; use HTTP/1.1")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or " " in name:
            raise HttpError(400, "malformed header line")
        key = name.lower()
        if key in headers and key in ("content-length", "authorization", "host"):
            raise HttpError(400, f"duplicate {name} header")
        headers[key] = value.strip()
        if len(headers) > MAX_HEADERS:
            raise HttpError(431, "too many headers")
    return method.upper(), target, version, headers


def _keep_alive(version: str, headers: dict) -> bool:
    conn = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in conn
    return "close" not in conn


def _content_length(headers: dict) -> int:
    if "transfer-encoding" in headers:
        raise HttpError(411, "chunked request bodies are not supported; send Content-Length")
    value = headers.get("content-length")
    if value is None:
        return 0
    if not value.isdigit():
        raise HttpError(400, f"bad Content-Length {value!r}")
    return int(value)


def _route(path: str) -> tuple[str | None, tuple[str, ...], str | None]:
    if not path.startswith(API + "/"):
        return None, (), None
    rest = path[len(API) + 1:]
    simple = {"health": ("GET",), "openapi.json": ("GET",), "search": ("POST",),
              "impact": ("POST",), "context": ("POST",), "status": ("GET", "POST"), "events": ("GET",),
              "ui/code": ("POST",)}
    if rest in simple:
        return ("openapi" if rest == "openapi.json" else rest), simple[rest], None
    if rest.startswith("rpc/") and len(rest) > 4 and "/" not in rest[4:]:
        return "rpc", ("POST",), rest[4:]
    return None, (), None


def _json_body(raw: bytes) -> dict:
    if not raw.strip():
        return {}
    # Content-Type is not enforced (curl -d sends a form type): the body is
    # JSON or it is a 400. Browsers cannot add the bearer header cross-site
    # without a preflight this server never grants, so this opens no CSRF.
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HttpError(400, f"malformed JSON body: {exc}", code=ParseError.code) from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object with named fields",
                        code=InvalidParams.code)
    return body


# ---------------------------------------------------------- request mapping

def search_params(body: dict) -> dict:
    """The seeds' search request -> the `search` method's params."""
    known = {"query", "search_type", "filters", "limit", "include_context", "context_window",
             "sync"}
    unknown = set(body) - known
    if unknown:
        raise InvalidParams(f"unknown search fields: {', '.join(sorted(unknown))}",
                            {"known": sorted(known)})
    params: dict = {"query": body.get("query")}
    st = body.get("search_type")
    if st is not None:
        if not isinstance(st, str) or st not in SEARCH_TYPES:
            raise InvalidParams("search_type must be fts, semantic, graph or hybrid")
        params["mode"] = SEARCH_TYPES[st]
    filters = body.get("filters")
    if filters is not None:
        if not isinstance(filters, dict):
            raise InvalidParams("filters must be an object")
        bad = set(filters) - set(SEARCH_FILTERS)
        if bad:
            raise InvalidParams(f"unknown filters: {', '.join(sorted(bad))}",
                                {"known": list(SEARCH_FILTERS)})
        for name in SEARCH_FILTERS:
            value = filters.get(name)
            if value is None:
                continue
            if name in ("kind", "lang") and isinstance(value, list) and value \
                    and all(isinstance(v, str) for v in value):
                value = ",".join(value)
            if not isinstance(value, str):
                raise InvalidParams(f"filters.{name} must be a string"
                                    + (" or a list of strings" if name in ("kind", "lang") else ""))
            params[name] = value
    if "limit" in body and body["limit"] is not None:
        if isinstance(body["limit"], bool):
            raise InvalidParams("limit must be an integer")
        params["limit"] = body["limit"]
    include = body.get("include_context", False)
    if not isinstance(include, bool):
        raise InvalidParams("include_context must be a boolean")
    window = body.get("context_window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
        raise InvalidParams("context_window must be an integer")
    if include:
        params["context"] = DEFAULT_CONTEXT_WINDOW if window is None else window
    if body.get("sync") is not None:
        if not isinstance(body["sync"], bool):
            raise InvalidParams("sync must be a boolean")
        params["sync"] = body["sync"]
    return params


def impact_params(body: dict) -> dict:
    known = {"target", "depth", "kinds", "limit"}
    unknown = set(body) - known
    if unknown:
        raise InvalidParams(f"unknown impact fields: {', '.join(sorted(unknown))}",
                            {"known": sorted(known)})
    target = body.get("target")
    if not isinstance(target, str) or not target:
        raise InvalidParams("impact needs 'target' (a path or a symbol)")
    params: dict = {"target": target}
    if body.get("depth") is not None:
        depth = body["depth"]
        if isinstance(depth, bool) or not isinstance(depth, int):
            raise InvalidParams("depth must be an integer")
        params["depth"] = depth
    if body.get("kinds") is not None:
        kinds = body["kinds"]
        if not isinstance(kinds, str) and not (
                isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
            raise InvalidParams("kinds must be a list of strings (or one comma-separated string)")
        params["kinds"] = kinds
    if body.get("limit") is not None:
        params["limit"] = body["limit"]     # the method checks its type and bound
    return params


_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
               "array": (list,), "object": (dict,)}


def _type_ok(schema: dict, value) -> bool:
    if "oneOf" in schema:
        return any(_type_ok(s, value) for s in schema["oneOf"])
    kind = schema.get("type")
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if not isinstance(value, _JSON_TYPES[kind]):
        return False
    if kind == "array" and "items" in schema:
        return all(_type_ok(schema["items"], v) for v in value)
    return True


def check_types(schema: dict | None, body: dict) -> None:
    """The published param types, enforced at the REST boundary (400, not a
    handler's TypeError). Only types: ranges, required fields and unknown
    names stay the method's own checks, so both transports answer alike."""
    for name, sub in ((schema or {}).get("properties") or {}).items():
        if name in body and body[name] is not None and not _type_ok(sub, body[name]):
            want = " or ".join(s.get("type", "?") for s in sub["oneOf"]) if "oneOf" in sub \
                else sub.get("type")
            if want == "array" and "items" in sub:
                want = f"array of {sub['items'].get('type')}"
            raise InvalidParams(f"{name} must be {want}", {"param": name})


def publish_endpoint(runtime_dir: Path, api: HttpApi, token_file: Path) -> Path:
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


# ------------------------------------------------------------------ OpenAPI

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string"}}
_OBJ = {"type": "object", "additionalProperties": True}

# The rpc/{method} bodies, from the one param table the socket methods
# validate with (params.py): the document cannot disagree with the methods.
RPC_PARAMS: dict[str, dict] = {name: params.json_schema(name) for name in params.SPECS}
RPC_SUMMARIES = {name: spec.summary for name, spec in params.SPECS.items()}
_SEARCH_LIMIT = params.param_schema(params.param("search", "limit"))
_SEARCH_CONTEXT = params.param("search", "context")


def _context_schema() -> dict:
    item = {"type": "object", "additionalProperties": True,
            "required": ["repo", "path", "symbol", "start_line", "end_line", "text", "why"],
            "properties": {
                "realm": _STR, "repo": _STR, "path": _STR,
                "symbol": {"type": "string", "nullable": True}, "kind": _STR,
                "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                "view": {"type": "string", "enum": ["body", "signature"]}, "text": _STR,
                "tokens": {"type": "integer"}, "why": _STR, "score": {"type": "number"}}}
    return {"type": "object", "additionalProperties": True,
            "required": ["query", "budget", "tokens", "items"], "properties": {
                "query": _STR, "budget": {"type": "integer"},
                "tokens": {"type": "integer", "description": "the items' tokens, summed"},
                "tokenizer": _STR, "items": {"type": "array", "items": item}}}


def _schemas() -> dict:
    hit = {"type": "object", "additionalProperties": True, "properties": {
        "realm": _STR, "repo": _STR, "path": _STR,
        "symbol": {"type": "string", "nullable": True}, "kind": _STR,
        "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
        "score": {"type": "number"}, "match": _STRS, "snippet": _STR, "summary": _STR,
        "lang": _STR, "context": {"description": "lines around the hit (include_context)"}}}
    fresh = {"index_lag_s": {"type": "number", "nullable": True},
             "pending": {"type": "integer", "nullable": True},
             "stale": {"type": "boolean", "nullable": True}}
    return {
        "SearchRequest": {
            "type": "object", "required": ["query"], "additionalProperties": False,
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "words or an identifier"},
                "search_type": {"type": "string", "enum": ["fts", "semantic", "graph", "hybrid"],
                                "description": "fts = keyword; graph = hybrid for now; "
                                               "absent = the best the daemon has"},
                "filters": {"type": "object", "additionalProperties": False, "properties": {
                    "realm": _STR, "repo": {"type": "string", "description": "path or name"},
                    "kind": {"oneOf": [_STR, {**_STRS, "minItems": 1}]},
                    "lang": {"oneOf": [_STR, {**_STRS, "minItems": 1}]},
                    "path": {"type": "string", "description": "glob over repo-relative paths"}}},
                "limit": _SEARCH_LIMIT,
                "include_context": {"type": "boolean", "default": False},
                "context_window": {"type": "integer", "minimum": _SEARCH_CONTEXT.lo,
                                   "maximum": _SEARCH_CONTEXT.hi,
                                   "default": DEFAULT_CONTEXT_WINDOW,
                                   "description": "lines around each hit when include_context"},
                "sync": {"type": "boolean", "description": "wait for pending edits first"}}},
        "SearchHit": hit,
        "SearchResult": {"type": "object", "additionalProperties": True,
                         "required": ["query", "mode", "total", "results"], "properties": {
                             "query": _STR, "mode": _STR, "took_ms": {"type": "number"},
                             "total": {"type": "integer"},
                             "results": {"type": "array",
                                         "items": {"$ref": "#/components/schemas/SearchHit"}},
                             **fresh}},
        "ImpactRequest": RPC_PARAMS["impact"] | {"additionalProperties": False},
        "ImpactResult": _OBJ,
        "ContextResult": _context_schema(),
        "StatusResult": {"type": "object", "additionalProperties": True, "properties": {
            "daemon": {"type": "object", "nullable": True, "additionalProperties": True},
            "realms": {"type": "array", "items": _OBJ}, "store": _OBJ}},
        "Health": {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
        "Result": _OBJ,
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer", "description": "the JSON-RPC error code"},
                "message": _STR,
                "data": {"type": "object", "additionalProperties": True, "properties": {
                    "type": _STR, "retryable": {"type": "boolean"}}}}}}},
    }


def _err(desc: str) -> dict:
    return {"description": desc,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


_ERRORS = {
    "400": _err("Invalid params, malformed JSON or a bad request"),
    "401": _err("Missing or wrong bearer token"),
    "404": _err("Unknown realm, repo, path or method"),
    "405": _err("Method not allowed"),
    "413": _err("Request body over 1 MiB"),
    "500": _err("Internal error"),
    "501": _err("Not implemented yet"),
    "503": _err("Index not ready or model unavailable (retryable)"),
}


def _op(summary: str, op_id: str, result_ref: str, body_schema: dict | None,
        body_required: bool = True, tags=("api",)) -> dict:
    op = {"summary": summary, "operationId": op_id, "tags": list(tags), "responses": {
        "200": {"description": "OK", "content": {"application/json": {"schema": result_ref}}},
        **_ERRORS}}
    if body_schema is not None:
        op["requestBody"] = {"required": body_required,
                             "content": {"application/json": {"schema": body_schema}}}
    return op


def openapi_document(methods: list[str]) -> dict:
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    from .. import __version__

    public = {"security": []}
    paths = {
        f"{API}/health": {"get": {**_op("Liveness (no auth)", "health", ref("Health"), None),
                                  **public, "responses": {"200": {
                                      "description": "OK", "content": {"application/json": {
                                          "schema": ref("Health")}}}}}},
        f"{API}/openapi.json": {"get": {**public, "summary": "This document (no auth)",
                                        "operationId": "openapi", "tags": ["meta"],
                                        "responses": {"200": {
                                            "description": "The OpenAPI document",
                                            "content": {"application/json": {
                                                "schema": {"type": "object"}}}}}}},
        f"{API}/search": {"post": _op("Search code (keyword, semantic or hybrid)", "search",
                                      ref("SearchResult"), ref("SearchRequest"))},
        f"{API}/impact": {"post": _op("What depends on a file or symbol", "impact",
                                      ref("ImpactResult"), ref("ImpactRequest"))},
        f"{API}/context": {"post": _op("The code to read for a task, within a token budget",
                                       "context", ref("ContextResult"), RPC_PARAMS["context"])},
        f"{API}/status": {
            "get": _op("Daemon status", "status", ref("StatusResult"), None),
            "post": _op("Daemon status", "statusPost", ref("StatusResult"),
                        RPC_PARAMS["status"], body_required=False)},
    }
    for name in methods:
        schema = RPC_PARAMS.get(name, {"type": "object", "additionalProperties": True})
        required = bool(schema.get("required"))
        paths[f"{API}/rpc/{name}"] = {"post": _op(
            RPC_SUMMARIES.get(name, f"The {name} method"),
            "rpc_" + name.replace(".", "_"), ref("Result"), schema,
            body_required=required, tags=("rpc",))}
    return {
        "openapi": "3.0.3",
        "info": {"title": "indexd REST API", "version": __version__,
                 "description": "Loopback REST API of the indexd daemon. The same methods as "
                                "the JSON-RPC socket. Authenticate with the bearer token in "
                                "the http_token file of the config directory (indexd paths)."},
        "servers": [{"url": "/"}],
        "security": [{"bearerAuth": []}],
        "tags": [{"name": "api"}, {"name": "rpc", "description": "every socket method by name"},
                 {"name": "meta"}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer",
                                               "description": "contents of the http_token file"}},
            "schemas": _schemas(),
        },
    }
