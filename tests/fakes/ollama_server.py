"""A fake Ollama HTTP server for tests: a STAND-IN, not the real thing.

No Ollama server can run in this environment (no binary, no model weights,
no network), so the enrich tests talk to this instead. It speaks the subset
of Ollama's REST API that indexd uses, with the real response shapes (as of
Ollama 0.6-0.12 and the official ``ollama`` Python client 0.6):

    GET  /api/tags      {"models": [{"name", "model", "modified_at", "size",
                          "digest", "details": {...}}]}
    POST /api/chat      non-streaming when "stream": false (the official client
                        always sends it): {"model", "created_at", "message":
                        {"role": "assistant", "content"}, "done": true,
                        "done_reason": "stop", durations, counts};
                        NDJSON chunks when "stream" is true or absent
    POST /api/generate  {"model", "created_at", "response", "done": true, ...}
    POST /api/embed     {"model", "embeddings": [[...]], durations, count};
                        deterministic unit vectors derived from the text
    unknown model       404 {"error": "model \\"x\\" not found, try pulling it first"}

Modes, switchable at run time with ``set_mode``: ``normal``; ``slow``
(sleeps ``slow_s`` before answering); ``garbage`` (``garbage_kind``:
"invalid_json", "wrong_shape", "empty_content", "huge_content",
"error_body"); ``error500``; ``down`` (the listening socket is closed and
kept-alive connections are dropped, so clients are refused; any other mode starts it again on the same port).
Requests are counted per endpoint in ``counts`` and logged in ``requests``
as (monotonic time, method, path, parsed body).
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("normal", "slow", "garbage", "error500", "down")
GARBAGE_KINDS = ("invalid_json", "wrong_shape", "empty_content", "huge_content", "error_body")


def _model_entry(name: str) -> dict:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {"name": name, "model": name,
            "modified_at": "2025-01-15T10:00:00.000000000Z", "size": 2019393189,
            "digest": digest,
            "details": {"parent_model": "", "format": "gguf", "family": "llama",
                        "families": ["llama"], "parameter_size": "3.2B",
                        "quantization_level": "Q4_K_M"}}


def fake_vector(text: str, dim: int) -> list[float]:
    """Deterministic unit vector for a text (what /api/embed returns)."""
    raw = b""
    counter = 0
    while len(raw) < 4 * dim:
        raw += hashlib.blake2b(f"{counter}\x1f{text}".encode(), digest_size=64).digest()
        counter += 1
    vals = [v / 2**31 - 1.0 for v in struct.unpack(f"<{dim}I", raw[:4 * dim])]
    norm = math.sqrt(sum(v * v for v in vals)) or 1.0
    return [v / norm for v in vals]


def default_reply(messages: list[dict]) -> str:
    """A short deterministic 'summary' naming the symbol from the prompt."""
    last = messages[-1].get("content", "") if messages else ""
    for line in last.splitlines():
        if line.startswith(("Symbol:", "File:")):
            name = line.split(":", 1)[1].strip().split(" ")[0]
            return f"Summarizes {name} for the index. It is deterministic."
    return f"Replies to {len(last)} characters of input."


class FakeOllama:
    """Start with ``FakeOllama().start()``; ``url`` is http://127.0.0.1:PORT."""

    def __init__(self, models=("llama3.2:latest", "all-minilm:latest"), embed_dim: int = 8):
        self.models = list(models)
        self.embed_dim = embed_dim
        self.mode = "normal"
        self.slow_s = 2.0
        self.garbage_kind = "invalid_json"
        self.reply = default_reply            # callable(messages) -> str
        self.counts: Counter = Counter()
        self.requests: list[tuple[float, str, str, object]] = []
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()   # open client connections (keep-alive)

    # -- lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeOllama:
        handler = type("Handler", (_Handler,), {"fake": self})
        server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        server.daemon_threads = True
        server.block_on_close = False   # slow handlers must not hold up stop()
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, name="fake-ollama",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None
        # a dead server drops the connections clients keep alive, not just the listener
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def set_mode(self, mode: str, **options) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        for key, value in options.items():
            setattr(self, key, value)
        self.mode = mode
        if mode == "down":
            self.stop()
        elif self._server is None:
            self.start()   # same port: HTTPServer sets SO_REUSEADDR

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- bookkeeping

    def record(self, method: str, path: str, body) -> None:
        with self._lock:
            self.counts[path] += 1
            self.requests.append((time.monotonic(), method, path, body))

    def times(self, path: str) -> list[float]:
        return [t for t, _, p, _ in self.requests if p == path]

    def known(self, name: str) -> bool:
        return name in self.models or f"{name}:latest" in self.models


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


_TIMINGS = {"total_duration": 5191566416, "load_duration": 2154458,
            "prompt_eval_count": 26, "prompt_eval_duration": 383809000,
            "eval_count": 18, "eval_duration": 4799921000}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOllama
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:   # keep pytest output clean
        pass

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._conns.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._conns.discard(self.connection)
        super().finish()

    def handle_one_request(self) -> None:
        if self.fake.mode == "down":   # a request that raced stop(): hang up unanswered
            self.close_connection = True
            return
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client timed out and hung up while we were "slow"

    # -- routing

    def do_GET(self) -> None:
        self._dispatch("GET", None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        self._dispatch("POST", body)

    def _dispatch(self, method: str, body) -> None:
        fake = self.fake
        fake.record(method, self.path, body)
        routes = {("GET", "/api/tags"): self._tags, ("POST", "/api/chat"): self._chat,
                  ("POST", "/api/generate"): self._generate, ("POST", "/api/embed"): self._embed,
                  ("GET", "/"): lambda _b: self._text(200, "Ollama is running")}
        route = routes.get((method, self.path))
        if route is None:
            return self._text(404, "404 page not found")
        if fake.mode == "slow":
            time.sleep(fake.slow_s)
        if fake.mode == "error500":
            return self._json(500, {"error": "llama runner process has terminated: exit status 2"})
        if method == "POST" and not isinstance(body, dict):
            return self._json(400, {"error": "invalid character 'x' looking for beginning of value"})
        if fake.mode == "garbage" and self._garbage():
            return None
        return route(body)

    # -- endpoints

    def _tags(self, _body) -> None:
        self._json(200, {"models": [_model_entry(m) for m in self.fake.models]})

    def _check_model(self, body: dict) -> str | None:
        name = body.get("model")
        if not name:
            self._json(400, {"error": "model is required"})
            return None
        if not self.fake.known(name):
            self._json(404, {"error": f'model "{name}" not found, try pulling it first'})
            return None
        return name

    def _chat(self, body: dict) -> None:
        name = self._check_model(body)
        if name is None:
            return
        content = self.fake.reply(body.get("messages") or [])
        if body.get("stream", True):
            return self._stream(name, [{"message": {"role": "assistant", "content": w}}
                                       for w in _pieces(content)],
                                {"message": {"role": "assistant", "content": ""}})
        self._json(200, {"model": name, "created_at": _now(),
                         "message": {"role": "assistant", "content": content},
                         "done": True, "done_reason": "stop", **_TIMINGS})

    def _generate(self, body: dict) -> None:
        name = self._check_model(body)
        if name is None:
            return
        content = self.fake.reply([{"role": "user", "content": body.get("prompt", "")}])
        if body.get("stream", True):
            return self._stream(name, [{"response": w} for w in _pieces(content)],
                                {"response": "", "context": [1, 2, 3]})
        self._json(200, {"model": name, "created_at": _now(), "response": content,
                         "done": True, "done_reason": "stop", "context": [1, 2, 3], **_TIMINGS})

    def _embed(self, body: dict) -> None:
        name = self._check_model(body)
        if name is None:
            return
        texts = body.get("input", "")
        texts = [texts] if isinstance(texts, str) else list(texts)
        self._json(200, {"model": name,
                         "embeddings": [fake_vector(t, self.fake.embed_dim) for t in texts],
                         "total_duration": 14143917, "load_duration": 1019500,
                         "prompt_eval_count": 8})

    def _garbage(self) -> bool:
        kind = self.fake.garbage_kind
        if kind == "invalid_json":
            self._raw(200, b'{"model": "x", "message": {"content": "trunc', "application/json")
        elif kind == "wrong_shape":
            self._json(200, {"result": [1, 2, 3], "embeddings": "nope", "message": 7})
        elif kind == "error_body":
            self._json(200, {"model": "x", "created_at": _now(), "done": True,
                             "message": {"role": "assistant",
                                         "content": '{"error": "something went wrong"}'},
                             "embeddings": [[]]})
        elif kind in ("empty_content", "huge_content"):
            content = "" if kind == "empty_content" else "word " * 5000
            self._json(200, {"model": "x", "created_at": _now(), "done": True,
                             "done_reason": "stop",
                             "message": {"role": "assistant", "content": content},
                             "embeddings": [[0.0] * 3]})
        else:
            return False
        return True

    # -- writers

    def _json(self, status: int, payload) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _text(self, status: int, text: str) -> None:
        self._raw(status, text.encode(), "text/plain; charset=utf-8")

    def _raw(self, status: int, data: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, name: str, parts: list[dict], final: dict) -> None:
        lines = [{"model": name, "created_at": _now(), **p, "done": False} for p in parts]
        lines.append({"model": name, "created_at": _now(), **final, "done": True,
                      "done_reason": "stop", **_TIMINGS})
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        self._raw(200, data, "application/x-ndjson")


def _pieces(content: str) -> list[str]:
    words = content.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
