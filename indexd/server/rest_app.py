"""The loopback REST API as an ASGI app, served by uvicorn on the daemon's loop.

``indexd run --http HOST:PORT`` starts it next to the socket server. uvicorn
(h11) parses HTTP/1.1 — request lines, headers, chunked bodies, keep-alive,
pipelining — so none of that security-sensitive parsing is ours; starlette
gives the request and response objects. What stays here is policy: which
route, who may call it, how big a body, and how a typed error becomes an
HTTP status. Every request is answered by ``Methods.call``, so each method has
one implementation whoever asks; its params are checked against the one
param table (params.py) that the OpenAPI document is generated from.

Endpoints, auth, the token file and the error shape: see http_api.py's
docstring (the ground rules), rest_mapping.py (bodies and statuses) and ``GET /api/v1/openapi.json``. The web UI (``indexd.web``) is
served from here too: its pages, the one-time-code login and the event stream.

No thread or process: `RestApi.start` binds the socket itself (so a port 0
is known, and a bind error is a ConfigError before anything runs), then
runs ``uvicorn.Server.serve`` as a task; `stop` ends the event streams and
waits for the server to close its connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
from urllib.parse import parse_qs

import h11
import uvicorn
from starlette.responses import Response, StreamingResponse

from ..audit import Origin
from ..errors import ConfigError, IndexdError
from ..web import assets as web_assets
from ..web import auth as web_auth
from ..web import events as web_events
from uvicorn.protocols.http.h11_impl import H11Protocol
from .http_api import (API, BODY_TIMEOUT_S, HEADER_TIMEOUT_S, KEEPALIVE_TIMEOUT_S, MAX_BODY,
                       MAX_DRAIN, MAX_HEADER_BYTES, MAX_HEADERS, check_binding)
from .openapi import RPC_PARAMS, openapi_document
from .rest_mapping import (HttpError, check_types, http_status, impact_params, json_body, route,
                           search_params)

log = logging.getLogger(__name__)

JSON_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
SINGLE_HEADERS = (b"content-length", b"authorization", b"host")
SHUTDOWN_GRACE_S = 5


BODY_READ = "indexd.body_read"   # scope key: False while the request's body is unread


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the daemon owns SIGTERM/SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self):
        yield


class _Protocol(H11Protocol):
    """h11 as uvicorn runs it, with two additions: a request it cannot parse
    gets our JSON error shape, not a text/plain line; and a request head must
    arrive within `head_timeout_s` (uvicorn waits forever for one, so a client
    trickling bytes could hold a connection open: slowloris)."""

    head_timeout_s = HEADER_TIMEOUT_S
    _waits = 0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._wait_for_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._wait_for_head()

    def _wait_for_head(self) -> None:
        self._waits += 1
        self.loop.call_later(self.head_timeout_s, self._head_timeout, self._waits)

    def _head_timeout(self, wait: int) -> None:
        # Still the same wait, and h11 still has no complete head: give up.
        if wait == self._waits and self.conn.their_state is h11.IDLE \
                and not self.transport.is_closing():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        body = HttpError(400, f"malformed HTTP request: {msg}").body()
        data = json.dumps(body).encode()
        headers = [(b"content-type", b"application/json; charset=utf-8"),
                   (b"content-length", str(len(data)).encode()), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=data), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


class RestApi:
    def __init__(self, methods, host: str, port: int, token: str, allow_remote: bool = False,
                 max_body: int = MAX_BODY, head_timeout_s: float = HEADER_TIMEOUT_S):
        check_binding(host, token, allow_remote)
        # One protocol class per server, so the timeout is this server's own.
        self._protocol = type("_Protocol", (_Protocol,), {"head_timeout_s": head_timeout_s})
        self.methods, self.host, self.port = methods, host, port
        self.allow_remote, self.max_body = allow_remote, max_body
        self._token = token.encode()
        self._server: _Server | None = None
        self._task: asyncio.Task | None = None
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

    @property
    def origin(self) -> str:
        return self.url[:-len(API)]

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        sock = self._bind()
        self.port = sock.getsockname()[1]
        self.ui_auth.port = self.port
        config = uvicorn.Config(
            self, http=self._protocol, lifespan="off", log_config=None, access_log=False,
            server_header=False, timeout_keep_alive=int(KEEPALIVE_TIMEOUT_S),
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S)
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]), name="rest-api")
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)      # startup is a few loop turns; no timer to tune
        if self._task.done():
            self._task.result()            # raises what stopped it
        log.info("http api listening url=%s", self.url)

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            infos = socket.getaddrinfo(self.host, self.port, family, socket.SOCK_STREAM)
            family, kind, proto = infos[0][:3]
            # proto must say IPPROTO_TCP: asyncio turns Nagle off (TCP_NODELAY) only
            # then, and with it on every answer waits ~40 ms on the client's delayed ACK.
            sock = socket.socket(family, kind, proto)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(infos[0][4])
            sock.listen(128)
        except OSError as exc:
            raise ConfigError(f"cannot serve the REST API on {self.host}:{self.port}: "
                              f"{exc.strerror or exc}", {"host": self.host, "port": self.port}) from None
        sock.setblocking(False)
        return sock

    async def stop(self) -> None:
        if self._server is None:
            return
        self.events.close_all()      # open streams end now, not at their next heartbeat
        self._server.should_exit = True
        try:
            await asyncio.wait_for(self._task, SHUTDOWN_GRACE_S + 5)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - shutting down anyway
            self._task.cancel()
        self._server = None

    # ------------------------------------------------------------- requests

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        try:
            response = await self._answer(scope, receive)
        except HttpError as err:
            extra = dict(err.headers or {})
            if err.status == 505 or not scope.get(BODY_READ, True):
                # A body we will never read (refused on its headers, or cut off)
                # leaves h11 waiting for it on a kept-alive connection: the client
                # would hang until a timeout. Closing is what RFC 9112 9.6 asks.
                extra["Connection"] = "close"
            response = json_response(err.status, err.body(), extra)
        await response(scope, receive, send)

    async def _answer(self, scope, receive) -> Response:
        method = scope["method"]
        if scope.get("http_version") not in ("1.0", "1.1"):
            raise HttpError(505, f"unsupported protocol HTTP/{scope.get('http_version')}; "
                                 f"use HTTP/1.1")
        # The raw path, undecoded: a page or file is looked up by it in a table,
        # so %2e%2e and %2f name nothing (indexd/web/assets.py).
        path = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if len(path) > 1:
            path = path.rstrip("/")
        headers = _headers(scope)
        scope[BODY_READ] = False           # until _content_length has judged the header
        length = _content_length(headers)
        scope[BODY_READ] = not length and "transfer-encoding" not in headers   # nothing to read
        if self.assets.owns(path):
            return self._web_page(method, path, scope.get("query_string", b""), length)
        name, allowed, rpc_name = route(path)
        if name is None:
            raise HttpError(404, f"no such endpoint: {path}", data={"path": path})
        if name not in ("health", "openapi"):
            self._check_auth(headers, cookie_ok=name != "ui/code")
        if method not in allowed:
            raise HttpError(405, f"{method} is not allowed on {path}; use {', '.join(allowed)}",
                            data={"allow": list(allowed)}, headers={"Allow": ", ".join(allowed)})
        if length is not None and length > self.max_body:
            if length <= MAX_DRAIN and "100-continue" not in headers.get("expect", "").lower():
                scope[BODY_READ] = await self._drain(receive)
            raise HttpError(413, f"request body too large: {length} bytes (max {self.max_body})",
                            data={"max_body": self.max_body})
        raw = await self._body(receive)
        scope[BODY_READ] = True
        origin = Origin.http(scope.get("client"))      # for the audit log
        if name == "health":
            return json_response(200, {"ok": True})
        if name == "openapi":
            return json_response(200, self.openapi_bytes())
        if name == "ui/code":
            code = self.ui_auth.new_code()
            return json_response(200, {"code": code, "expires_in_s": web_auth.CODE_TTL_S,
                                       "url": f"{self.origin}/ui/login?code={code}"})
        if name == "events":
            return await self._open_stream(origin)
        body = json_body(raw) if method == "POST" else {}
        return await self._call(name, rpc_name, body, origin, f"{method} {path}")

    async def _body(self, receive) -> bytes:
        """The whole body, at most max_body bytes (a chunked one is counted as it comes)."""
        chunks, size = [], 0
        try:
            async with asyncio.timeout(BODY_TIMEOUT_S):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise HttpError(400, "the client went away mid-request")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body:
                        if message.get("more_body"):
                            await self._drain(receive, size)
                        raise HttpError(413, f"request body too large: over {self.max_body} "
                                             f"bytes", data={"max_body": self.max_body})
                    chunks.append(chunk)
                    if not message.get("more_body"):
                        return b"".join(chunks)
        except TimeoutError:
            raise HttpError(408, "timed out reading the request body") from None

    @staticmethod
    async def _drain(receive, size: int = 0) -> bool:
        """Read and drop the rest of a refused body, up to ``MAX_DRAIN`` bytes in all and
        ``BODY_TIMEOUT_S``: whether it was read whole (the connection can then stay)."""
        try:
            async with asyncio.timeout(BODY_TIMEOUT_S):
                while size <= MAX_DRAIN:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return False
                    size += len(message.get("body", b""))
                    if not message.get("more_body"):
                        return True
        except TimeoutError:
            pass
        return False

    async def _call(self, name: str, rpc_name: str | None, body: dict, origin: Origin,
                    what: str) -> Response:
        try:
            if name == "search":
                result = await self.methods.call("search", search_params(body), origin=origin)
            elif name == "impact":
                result = await self.methods.call("impact", impact_params(body), origin=origin)
            else:
                method = rpc_name or name        # context, status, rpc/{method}
                check_types(RPC_PARAMS.get(method), body)
                result = await self.methods.call(method, body, origin=origin)
        except HttpError:
            raise
        except IndexdError as exc:
            return json_response(http_status(exc), {"error": exc.to_rpc()})
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in a handler: 500, logged
            log.exception("http %s failed", what)
            err = IndexdError(f"internal error: {type(exc).__name__}: {exc}")
            return json_response(500, {"error": err.to_rpc()})
        return json_response(200, result)

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

    def openapi_bytes(self) -> bytes:
        if self._openapi is None:
            doc = openapi_document(sorted(self.methods.table))
            self._openapi = json.dumps(doc).encode()
        return self._openapi

    # ------------------------------------------------------------- web UI

    def _web_page(self, method: str, path: str, query: bytes, length: int | None) -> Response:
        if method != "GET":
            raise HttpError(405, f"{method} is not allowed on {path}; use GET",
                            data={"allow": ["GET"]}, headers={"Allow": "GET"})
        if length:
            raise HttpError(400, "a page request has no body")
        if path == web_assets.PREFIX + "/login":
            status, data, extra = self._login(query)
        else:
            status, data, extra = self.assets.answer(path)
        return Response(data, status, headers=extra)

    def _login(self, query: bytes):
        """Trade a one-time code for a session cookie, then a clean URL. The
        code is never logged: uvicorn's access log is off, and we log no queries."""
        code = (parse_qs(query.decode("latin-1")).get("code") or [""])[0]
        session = self.ui_auth.redeem(code) if code else None
        if session is None:
            return web_assets.page_error(401, "This sign-in link was used already or has "
                                              "expired. Run `indexctl ui` for a new one.")
        return web_assets.redirect(web_assets.PREFIX + "/",
                                   {"Set-Cookie": self.ui_auth.set_cookie(session)})

    async def _open_stream(self, origin: Origin) -> Response:
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
        return StreamingResponse(self._stream(queue, web_events.encode("status", status)),
                                 media_type="text/event-stream", headers=JSON_HEADERS)

    async def _stream(self, queue: asyncio.Queue, first: bytes):
        """The first status, then each event, a comment line per heartbeat so a
        dead client is noticed; ends when the hub closes the queue (stop)."""
        try:
            yield first
            while True:
                try:
                    data = await asyncio.wait_for(queue.get(), web_events.HEARTBEAT_S)
                except asyncio.TimeoutError:
                    data = b": keep-alive\n\n"
                if data is None:
                    return
                yield data
        finally:
            self.events.close(queue)


# ------------------------------------------------------------- request bits

def json_response(status: int, body, extra: dict | None = None) -> Response:
    if isinstance(body, bytes):
        data = body
    else:
        try:
            data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        except (TypeError, ValueError) as exc:
            log.exception("http response not JSON-serialisable")
            status = 500
            data = json.dumps({"error": IndexdError(f"internal error: {exc}").to_rpc()}).encode()
    return Response(data, status, headers=JSON_HEADERS | (extra or {}),
                    media_type="application/json; charset=utf-8")


def _headers(scope) -> dict[str, str]:
    """Lower-cased names -> values; a repeated Authorization, Host or
    Content-Length is refused (two values, two readings)."""
    out: dict[str, str] = {}
    if len(scope["headers"]) > MAX_HEADERS:
        raise HttpError(431, "too many headers")
    if sum(len(n) + len(v) + 4 for n, v in scope["headers"]) > MAX_HEADER_BYTES:
        raise HttpError(431, "request headers too large")
    for raw_name, raw_value in scope["headers"]:
        if raw_name in SINGLE_HEADERS and raw_name.decode("latin-1") in out:
            raise HttpError(400, f"duplicate {raw_name.decode('latin-1')} header")
        out[raw_name.decode("latin-1")] = raw_value.decode("latin-1").strip()
    return out


def _content_length(headers: dict) -> int | None:
    value = headers.get("content-length")
    if value is None:
        return None
    if not value.isdigit():
        raise HttpError(400, f"bad Content-Length {value!r}")
    return int(value)

