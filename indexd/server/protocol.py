"""JSON-RPC 2.0 codec for the daemon socket: framing, decoding, validation, encoding.

Owns: the two wire framings (newline-delimited JSON and LSP-style
``Content-Length`` headers), the incremental `Decoder`, request validation
(-32700 / -32600) and the builders for result, error and notification objects.

Pure: no sockets, no asyncio, no I/O. Must not import the engine (store,
parse, lancedb, torch) nor `socket_server`; only `indexd.errors`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from indexd.errors import IndexdError, ParseError, ProtocolError

JSONRPC = "2.0"
NDJSON = "ndjson"
LSP = "lsp"
FRAMINGS = (NDJSON, LSP)

DEFAULT_MAX_MESSAGE = 1 << 20
# A header block larger than this is garbage, not a slow client.
MAX_HEADER_BYTES = 8192

_WHITESPACE = b" \t\r\n"
_HEADER_END = b"\r\n\r\n"


@dataclass(frozen=True)
class Request:
    """One valid JSON-RPC request or notification (``notification``: no "id" key)."""

    method: str
    params: Union[dict, list] = field(default_factory=dict)
    id: Union[str, int, float, None] = None
    notification: bool = False


@dataclass(frozen=True)
class DecodeFailure:
    """Something that must be answered with an error instead of dispatched.

    ``fatal``: the stream can no longer be framed (oversized message, bad
    headers); the server sends the error and closes the connection.
    """

    error: IndexdError
    id: Union[str, int, float, None] = None
    fatal: bool = False

    def response(self) -> dict:
        return error(self.id, self.error)


@dataclass(frozen=True)
class Message:
    """One decoded frame: a single request (``batch`` False) or a batch.

    Batch elements that are invalid stay in place as `DecodeFailure`s, so the
    batch response can carry their errors next to the other results.
    """

    items: tuple[Union[Request, DecodeFailure], ...]
    batch: bool = False


Decoded = Union[Message, DecodeFailure]


# ---------------------------------------------------------------- builders

def request(id: Any, method: str, params: dict | list | None = None) -> dict:
    msg = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result(id: Any, value: Any) -> dict:
    return {"jsonrpc": JSONRPC, "id": id, "result": value}


def error(id: Any, err: IndexdError) -> dict:
    return {"jsonrpc": JSONRPC, "id": id, "error": err.to_rpc()}


def notification(method: str, params: dict | list | None = None) -> dict:
    msg = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


# ---------------------------------------------------------------- encoding

def dumps(message: Any) -> bytes:
    """Serialize one JSON value to compact UTF-8 JSON.

    ensure_ascii keeps lone surrogates (valid in JSON escapes, invalid in
    UTF-8) encodable; allow_nan=False refuses to emit non-JSON NaN/Infinity.
    Raises TypeError/ValueError/RecursionError for values JSON cannot carry.
    """
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def frame(body: bytes, framing: str) -> bytes:
    """Wrap an already serialized JSON body in the connection's framing."""
    if framing == NDJSON:
        # json.dumps escapes newlines inside strings, so a body is one line.
        return body + b"\n"
    if framing == LSP:
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    raise ValueError(f"unknown framing {framing!r}")


def encode(message: Any, framing: str) -> bytes:
    return frame(dumps(message), framing)


def detect_framing(first_byte: int) -> str:
    """`{` or `[` opens JSON, so NDJSON; anything else is taken as a header."""
    return NDJSON if first_byte in b"{[" else LSP


# ---------------------------------------------------------------- validation

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _valid_id(value: Any) -> bool:
    # bool is an int subclass but not a JSON-RPC id.
    return value is None or (isinstance(value, (str, int, float))
                             and not isinstance(value, bool))


def _invalid(reason: str, id: Any = None) -> DecodeFailure:
    return DecodeFailure(ProtocolError(f"invalid request: {reason}"), id=id)


def validate_request(obj: Any) -> Request | DecodeFailure:
    """Check one request object; the failure carries its id when readable."""
    if not isinstance(obj, dict):
        return _invalid("a request must be a JSON object")
    has_id = "id" in obj
    rid = obj.get("id")
    if not _valid_id(rid):
        return _invalid("id must be a string, a number or null")
    if obj.get("jsonrpc") != JSONRPC:
        return _invalid('"jsonrpc" must be "2.0"', rid)
    method = obj.get("method")
    if not isinstance(method, str):
        return _invalid('"method" must be a string', rid)
    params = obj.get("params", {})
    if not isinstance(params, (dict, list)):
        return _invalid('"params" must be an object or an array', rid)
    return Request(method=method, params=params, id=rid, notification=not has_id)


def parse_payload(raw: bytes) -> Decoded:
    """Turn one frame's bytes into a Message, or a -32700 / -32600 failure."""
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # RecursionError: deeply nested arrays; ValueError covers JSONDecodeError
        # and the int-digits limit.
        return DecodeFailure(ParseError(f"parse error: {_short(exc)}"))
    if isinstance(value, list):
        if not value:
            return _invalid("empty batch")
        return Message(tuple(validate_request(v) for v in value), batch=True)
    item = validate_request(value)
    if isinstance(item, DecodeFailure):
        return item
    return Message((item,), batch=False)


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


# ---------------------------------------------------------------- decoder

class Decoder:
    """Incremental decoder for one connection.

    The framing is chosen from the first non-whitespace byte ever received.
    After a fatal failure the decoder is dead: ``feed`` returns nothing, the
    caller is expected to close the connection.
    """

    def __init__(self, max_message: int = DEFAULT_MAX_MESSAGE):
        self.max_message = max_message
        self.framing: str | None = None
        self.dead = False
        self._buf = bytearray()
        self._scanned = 0             # NDJSON: bytes already searched for "\n"
        self._body_len: int | None = None  # LSP: length once headers are read

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered (early disconnect check)."""
        return len(self._buf)

    @property
    def partial(self) -> bool:
        """A message has begun but not ended (headers read and no body yet included);
        whitespace between messages does not count."""
        if self.dead:
            return False
        return self._body_len is not None or bool(self._buf.strip(_WHITESPACE))

    def feed(self, data: bytes) -> list[Decoded]:
        if self.dead:
            return []
        self._buf += data
        if self.framing is None and not self._detect():
            return []
        step = self._next_line if self.framing == NDJSON else self._next_frame
        out: list[Decoded] = []
        while not self.dead:
            item = step()
            if item is None:
                break
            if item is not _SKIP:
                out.append(item)
        return out

    def _detect(self) -> bool:
        stripped = self._buf.lstrip(_WHITESPACE)
        if not stripped:
            self._buf.clear()   # never buffer unbounded whitespace
            return False
        self._buf = bytearray(stripped)
        self.framing = detect_framing(stripped[0])
        return True

    def _fatal(self, err: IndexdError) -> DecodeFailure:
        self.dead = True
        self._buf.clear()
        return DecodeFailure(err, fatal=True)

    def _too_large(self, size: int | None = None) -> DecodeFailure:
        what = f"{size} bytes" if size is not None else "more bytes"
        return self._fatal(ProtocolError(
            f"message too large: {what} exceeds the limit of {self.max_message}",
            {"limit": self.max_message}))

    # NDJSON: one message per line, blank lines ignored.
    def _next_line(self) -> Decoded | object | None:
        nl = self._buf.find(b"\n", self._scanned)
        if nl < 0:
            self._scanned = len(self._buf)
            if len(self._buf) > self.max_message:
                return self._too_large()
            return None
        line = bytes(self._buf[:nl])
        del self._buf[:nl + 1]
        self._scanned = 0
        if len(line) > self.max_message:
            return self._too_large(len(line))
        if not line.strip(_WHITESPACE):
            return _SKIP
        return parse_payload(line)

    # LSP: header block, blank line, Content-Length bytes of JSON.
    def _next_frame(self) -> Decoded | object | None:
        if self._body_len is None:
            failure = self._read_headers()
            if failure is not None or self._body_len is None:
                return failure
        if len(self._buf) < self._body_len:
            return None
        body = bytes(self._buf[:self._body_len])
        del self._buf[:self._body_len]
        self._body_len = None
        return parse_payload(body)

    def _read_headers(self) -> DecodeFailure | None:
        # Tolerate stray CR/LF between frames (some clients add one).
        while self._buf[:1] in (b"\r", b"\n"):
            del self._buf[:1]
        end = self._buf.find(_HEADER_END)
        if end < 0:
            if len(self._buf) > MAX_HEADER_BYTES:
                return self._fatal(ParseError("bad header: header block too long"))
            return None
        block = bytes(self._buf[:end])
        del self._buf[:end + len(_HEADER_END)]
        length = _content_length(block)
        if isinstance(length, str):
            return self._fatal(ParseError(f"bad header: {length}"))
        if length > self.max_message:
            return self._too_large(length)
        self._body_len = length
        return None


_SKIP = object()


def _content_length(block: bytes) -> int | str:
    """The Content-Length of a header block, or a reason string if unusable."""
    found: int | None = None
    for line in block.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            return "expected 'Name: value' header lines"
        if name.strip().lower() != b"content-length":
            continue    # Content-Type and friends are ignored
        value = value.strip()
        if not value.isdigit() or len(value) > 20:
            return "Content-Length must be a non-negative integer"
        if found is not None and found != int(value):
            return "conflicting Content-Length headers"
        found = int(value)
    if found is None:
        return "missing Content-Length header"
    return found
