"""Pure codec tests for indexd.server.protocol (no sockets)."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from indexd.errors import InvalidParams, RealmError
from indexd.server import protocol
from indexd.server.protocol import (LSP, NDJSON, Decoder, DecodeFailure, Message,
                                    Request)

GOOD = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}'


def lsp(body: bytes, extra: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), extra) + body


def only(items):
    assert len(items) == 1, items
    return items[0]


def code_of(item) -> int:
    assert isinstance(item, DecodeFailure), item
    return item.response()["error"]["code"]


# ---------------------------------------------------------------- framing

def test_ndjson_detected_and_decoded():
    d = Decoder()
    msg = only(d.feed(b"  \n" + GOOD + b"\n"))
    assert d.framing == NDJSON
    assert msg == Message((Request("echo", {"a": 1}, 1, False),), batch=False)


def test_ndjson_split_across_feeds_and_crlf():
    d = Decoder()
    assert d.feed(GOOD[:10]) == []
    assert d.pending == 10
    msg = only(d.feed(GOOD[10:] + b"\r\n"))
    assert msg.items[0].method == "echo"


def test_ndjson_blank_lines_ignored_and_many_per_chunk():
    d = Decoder()
    out = d.feed(GOOD + b"\n\n   \n" + GOOD + b"\n" + GOOD + b"\n")
    assert len(out) == 3 and all(isinstance(m, Message) for m in out)


def test_lsp_with_content_type_header():
    d = Decoder()
    out = d.feed(lsp(GOOD, b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n") * 2)
    assert d.framing == LSP
    assert len(out) == 2 and out[0].items[0].id == 1


def test_lsp_byte_at_a_time():
    d = Decoder()
    data = lsp(GOOD) + lsp(GOOD)
    out = []
    for i in range(len(data)):
        out += d.feed(data[i:i + 1])
    assert len(out) == 2 and all(isinstance(m, Message) for m in out)


def test_lsp_header_case_insensitive():
    d = Decoder()
    assert isinstance(only(d.feed(b"content-length:  %d\r\n\r\n" % len(GOOD) + GOOD)), Message)


# ---------------------------------------------------------------- failures

def test_bad_json_is_parse_error_and_stream_continues():
    d = Decoder()
    out = d.feed(b'{"jsonrpc": oops\n' + GOOD + b"\n")
    assert code_of(out[0]) == -32700
    assert out[0].id is None and not out[0].fatal
    assert isinstance(out[1], Message)


def test_bad_json_in_lsp_consumes_frame():
    d = Decoder()
    out = d.feed(lsp(b"{nope}") + lsp(GOOD))
    assert code_of(out[0]) == -32700 and not out[0].fatal
    assert isinstance(out[1], Message)


def test_non_json_constants_and_bad_utf8_are_parse_errors():
    d = Decoder()
    d.feed(GOOD + b"\n")
    for line in (b'{"id": NaN}', b"[Infinity]", b'{"a": "\xff"}', b"[" * 100000):
        assert code_of(only(d.feed(line + b"\n"))) == -32700


def test_invalid_requests():
    d = Decoder()
    d.feed(GOOD + b"\n")
    cases = [
        (b"1", None),
        (b'"x"', None),
        (b'{"jsonrpc":"1.0","id":3,"method":"m"}', 3),
        (b'{"id":4,"method":"m"}', 4),
        (b'{"jsonrpc":"2.0","id":5,"method":7}', 5),
        (b'{"jsonrpc":"2.0","id":6,"method":"m","params":"x"}', 6),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', None),
        (b'{"jsonrpc":"2.0","id":{},"method":"m"}', None),
        (b'{"jsonrpc":"2.0","id":7,"result":1}', 7),
        (b"[]", None),
    ]
    for line, rid in cases:
        item = only(d.feed(line + b"\n"))
        assert code_of(item) == -32600, line
        assert item.id == rid and not item.fatal, line


def test_notification_and_default_params():
    d = Decoder()
    d.feed(GOOD + b"\n")
    req = only(d.feed(b'{"jsonrpc":"2.0","method":"ping"}\n')).items[0]
    assert req == Request("ping", {}, None, notification=True)
    req = only(d.feed(b'{"jsonrpc":"2.0","id":null,"method":"ping","params":[1]}\n')).items[0]
    assert req.notification is False and req.params == [1] and req.id is None


def test_batch_keeps_invalid_elements_in_place():
    d = Decoder()
    msg = only(d.feed(b'[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, [], '
                      b'{"jsonrpc":"2.0","method":"n"}]\n'))
    assert msg.batch and len(msg.items) == 4
    assert isinstance(msg.items[0], Request)
    assert code_of(msg.items[1]) == -32600 and code_of(msg.items[2]) == -32600
    assert msg.items[3].notification


def test_oversized_line_is_fatal_without_newline():
    d = Decoder(max_message=100)
    assert d.feed(b"{" + b" " * 50) == []
    item = only(d.feed(b" " * 60))
    assert code_of(item) == -32600 and item.fatal
    assert d.dead and d.feed(GOOD + b"\n") == []


def test_oversized_line_with_newline_is_fatal():
    d = Decoder(max_message=100)
    item = only(d.feed(b"[" + b" " * 200 + b"]\n"))
    assert item.fatal


def test_oversized_content_length_is_fatal():
    d = Decoder(max_message=100)
    item = only(d.feed(b"Content-Length: 101\r\n\r\n"))
    assert item.fatal and item.error.data["limit"] == 100


def test_garbage_headers_are_fatal():
    for data in (b"hello\r\n\r\n", b"Content-Length: abc\r\n\r\n",
                 b"Content-Type: x\r\n\r\n", b"Content-Length: -1\r\n\r\n",
                 b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n",
                 b"X" * (protocol.MAX_HEADER_BYTES + 10)):
        d = Decoder()
        item = only(d.feed(data))
        assert item.fatal and code_of(item) == -32700, data


# ---------------------------------------------------------------- encoding

def test_builders_and_encode_roundtrip():
    err = protocol.error(3, RealmError("no realm", {"realm": "x"}))
    assert err["error"]["code"] == -32001
    assert err["error"]["data"] == {"realm": "x", "type": "RealmError", "retryable": False}
    assert protocol.result(1, {"ok": True}) == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    note = protocol.notification("changed", {"n": 1})
    assert "id" not in note and note["method"] == "changed"
    assert json.loads(protocol.encode(note, NDJSON)) == note
    framed = protocol.encode(protocol.error(None, InvalidParams("bad")), LSP)
    assert framed.startswith(b"Content-Length: ")
    body = framed.split(b"\r\n\r\n", 1)[1]
    assert int(framed.split(b"\r\n")[0].split(b":")[1]) == len(body)


def test_encode_is_one_line_and_ascii():
    msg = protocol.result(1, {"s": "a\nb\u2028\ud800é"})
    data = protocol.encode(msg, NDJSON)
    assert data.count(b"\n") == 1 and data.endswith(b"\n")
    assert json.loads(data) == msg


# ---------------------------------------------------------------- properties

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20)

requests = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.text(max_size=20)},
    optional={"id": st.none() | st.integers() | st.text(max_size=10),
              "params": st.dictionaries(st.text(max_size=8), json_values, max_size=4)})


def _valid_output(items):
    assert isinstance(items, list)
    for item in items:
        assert isinstance(item, (Message, DecodeFailure))
        if isinstance(item, DecodeFailure):
            json.dumps(item.response())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=6))
def test_random_bytes_never_raise_and_chunking_is_irrelevant(data, cuts):
    whole = Decoder(max_message=256).feed(data)
    _valid_output(whole)
    d = Decoder(max_message=256)
    pieces = []
    prev = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        pieces += d.feed(data[prev:cut])
        prev = max(prev, cut)
    _valid_output(pieces)
    assert [repr(p) for p in pieces] == [repr(w) for w in whole]


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_random_json_values_give_exactly_one_item(value):
    d = Decoder()
    d.feed(GOOD + b"\n")
    out = d.feed(json.dumps(value).encode() + b"\n")
    _valid_output(out)
    assert len(out) == 1
    if not isinstance(value, (dict, list)) or value == []:
        assert code_of(out[0]) == -32600


@settings(max_examples=200, deadline=None)
@given(requests, st.sampled_from([NDJSON, LSP]))
def test_encoded_requests_roundtrip(req, framing):
    item = only(Decoder().feed(protocol.encode(req, framing)))
    assert isinstance(item, Message)
    got = item.items[0]
    assert got.method == req["method"]
    assert got.params == req.get("params", {})
    assert got.id == req.get("id") and got.notification == ("id" not in req)


def test_partial_is_true_only_inside_a_message():
    # The socket server times only begun messages (message_timeout_s).
    for framing_bytes in (GOOD + b"\n", lsp(GOOD)):
        d = Decoder()
        assert not d.partial
        for cut in range(1, len(framing_bytes)):
            d = Decoder()
            d.feed(framing_bytes[:cut])
            assert d.partial, (framing_bytes, cut)
            assert len(d.feed(framing_bytes[cut:])) == 1
            assert not d.partial
    d = Decoder()
    d.feed(b" \r\n\t")           # whitespace between messages
    assert not d.partial
    d.feed(GOOD + b"\n  \n ")
    assert not d.partial
    d = Decoder()
    d.feed(b"Content-Length: 99999999999\r\n\r\n")   # fatal: the connection closes anyway
    assert not d.partial
