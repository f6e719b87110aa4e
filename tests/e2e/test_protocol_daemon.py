"""Every method in both framings against the real daemon, then a battery of bad input."""

from __future__ import annotations

import json
import socket

import pytest
from testlib import settings_with_realm
from hypothesis import HealthCheck, given, settings, strategies as st

from indexd.errors import InvalidParams, MethodNotFound, RealmError


@pytest.fixture
def served(git_repo, daemon):
    git_repo.write("svc/retry.py", "def retry_backoff(n):\n    '''Back off.'''\n    return n\n")
    git_repo.write("README.md", "# Service\n\n## Retry\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    return d, git_repo


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_every_method_in_both_framings(served, framing, tmp_path):
    d, repo = served
    with d.client(framing=framing, timeout=60) as c:
        init = c.call("initialize")
        assert init["protocol_version"] == 1 and "search" in init["capabilities"]["methods"]
        res = c.call("search", query="retry backoff", sync=True)
        assert res["results"][0]["symbol"] == "retry_backoff"
        sym = c.call("symbols", path=str(repo.path / "svc/retry.py"))
        assert [h["symbol"] for h in sym["results"]] == [None, "retry_backoff"]
        assert c.call("status")["realms"][0]["name"] == "work"
        assert c.call("realm.list")["realms"][0]["repos"] == [str(repo.path)]
        extra = tmp_path / f"extra-{framing}"
        extra.mkdir()
        assert c.call("realm.add", realm="more", paths=[str(extra)])["added"] == [str(extra)]
        assert c.call("realm.remove", realm="more")["removed"] == [str(extra)]
        assert c.call("reindex", paths=[str(repo.path / "svc/retry.py")], wait=True)["waited"]
        assert c.call("reindex", wait=True)["queued"] == "all"
        impact = c.call("impact", target=str(repo.path / "svc/retry.py"), depth=1)
        assert impact["complete"] is True and "affected" in impact
        assert c.call("refs", target=f"{repo.path / 'svc/retry.py'}::retry_backoff")["refs"] == []
        assert c.call("pause") == {"paused": True} and c.call("resume") == {"paused": False}
        note = c.call("annotate", target=f"{repo.path / 'svc/retry.py'}::retry_backoff", text="Backs off.")
        assert note["annotated"] == "symbol"
        assert c.call("subscribe") == {"subscribed": True}
        with pytest.raises(MethodNotFound):
            c.call("no.such.method")
        with pytest.raises(InvalidParams):
            c.call("search", query="")
        with pytest.raises(InvalidParams):
            c.call("search", query="x", limit=-1)
        with pytest.raises(RealmError):
            c.call("search", query="x", realm="nope")
        with pytest.raises(RealmError):
            c.call("symbols", path="/etc/passwd")


def raw_exchange(path, payload: bytes, read=True) -> bytes:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(str(path))
    try:
        s.sendall(payload)
        if read:
            s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server closed on an oversized message; read what it said
    if not read:
        s.close()
        return b""
    chunks = []
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return b"".join(chunks)


BAD_INPUTS = [
    b"{not json}\n",
    b'{"jsonrpc": "2.0", "method": 5, "id": 1}\n',
    b'{"jsonrpc": "1.0", "method": "status", "id": 1}\n',
    b'{"jsonrpc": "2.0", "method": "search", "params": [1, 2], "id": 1}\n',
    b"[]\n",
    b"[1, 2]\n",
    b'{"jsonrpc": "2.0", "method": "search", "params": {"query": 7}, "id": 1}\n',
    b"Content-Length: abc\r\n\r\n{}",
    b"Content-Length: 99999999999\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x00\xff\xfe garbage",
    b"{" + b"a" * (2 << 20),
    b'{"jsonrpc": "2.0", "method": "status", "id": 1',
    b'[' * 10000 + b"\n",
]


def test_malformed_inputs_get_errors_and_daemon_stays_up(served):
    d, _ = served
    for payload in BAD_INPUTS:
        reply = raw_exchange(d.socket, payload)
        if reply.strip():
            first = reply.split(b"\n")[0] if reply.startswith((b"{", b"[")) else reply.split(b"\r\n\r\n", 1)[-1]
            msg = json.loads(first)
            msgs = msg if isinstance(msg, list) else [msg]
            assert all("error" in m for m in msgs), (payload[:40], msg)
        assert d.call("status")["daemon"]["pid"] == d.proc.pid
    # early disconnect mid-message
    raw_exchange(d.socket, b'{"jsonrpc": "2.0", "method": "sea', read=False)
    raw_exchange(d.socket, b"Content-Length: 50\r\n\r\n{\"jsonrpc\"", read=False)
    assert d.call("search", query="retry")["results"]


def test_good_request_after_bad_on_same_connection(served):
    d, _ = served
    reply = raw_exchange(d.socket, b'{bad}\n{"jsonrpc": "2.0", "method": "initialize", "id": 7}\n')
    lines = [json.loads(x) for x in reply.splitlines() if x.strip()]
    assert lines[0]["error"]["code"] == -32700
    assert lines[1]["id"] == 7 and lines[1]["result"]["protocol_version"] == 1


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=st.one_of(
    st.binary(max_size=300),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
                 max_leaves=12).map(lambda v: json.dumps(v).encode() + b"\n"),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.integers(),
                           "method": st.sampled_from(["search", "symbols", "status", "realm.add", "reindex", "impact", "x"]),
                           "params": st.dictionaries(st.sampled_from(["query", "path", "limit", "realm", "paths", "mode", "context"]),
                                                     st.none() | st.integers() | st.text(max_size=10) | st.lists(st.text(max_size=5), max_size=2),
                                                     max_size=4)}).map(lambda v: json.dumps(v).encode() + b"\n"),
))
def test_hypothesis_inputs_never_kill_the_daemon(served_once, payload):
    d = served_once
    raw_exchange(d.socket, payload)
    assert d.call("initialize")["protocol_version"] == 1


@pytest.fixture
def served_once(served):
    return served[0]
