"""A connection holding a message that never completes is closed after
``message_timeout_s``; a quiet subscriber with nothing half-sent is kept.

The real daemon over its socket, with INDEXD_MESSAGE_TIMEOUT_S=1.
"""

from __future__ import annotations

import json
import socket

import pytest
from testlib import settings_with_realm, wait_until

STUCK = [
    pytest.param(b"\xff\xfe garbage", id="garbage-no-newline"),
    pytest.param(b"Content-Length: 50\r\n", id="header-never-completed"),
    pytest.param(b'Content-Length: 50\r\n\r\n{"jsonrpc"', id="body-never-completed"),
    pytest.param(b'{"jsonrpc": "2.0", "method": "sta', id="ndjson-line-never-ended"),
]
GENEROUS_S = 30     # far above the 1 s timeout: only a hang can reach it


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the daemon sends until it closes; socket.timeout if it never does."""
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


@pytest.fixture
def quick(git_repo, daemon):
    git_repo.write("a.py", "def alpha():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon({"INDEXD_MESSAGE_TIMEOUT_S": "1"})
    d.call("status", sync=True, timeout=60)
    return d


@pytest.mark.parametrize("payload", STUCK)
def test_incomplete_message_is_closed_after_the_timeout(quick, payload):
    d = quick
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(GENEROUS_S)
    s.connect(str(d.socket))
    try:
        s.sendall(payload)
        reply = read_until_closed(s)
    finally:
        s.close()
    body = reply.split(b"\r\n\r\n", 1)[-1] if reply.startswith(b"Content-Length") else reply
    err = json.loads(body.splitlines()[0])["error"]
    assert err["code"] == -32700 and "incomplete message" in err["message"], err
    wait_until(lambda: "incomplete message" in d.output(), what="the close in the daemon log")
    assert d.call("status")["daemon"]["pid"] == d.proc.pid


def test_idle_subscriber_is_kept(quick):
    d = quick
    with d.client(timeout=GENEROUS_S) as sub:
        assert sub.call("subscribe") == {"subscribed": True}
        # A stuck connection opened after the subscriber went quiet: once the
        # daemon has dropped it, the subscriber has been idle longer than the timeout.
        stuck = socket.socket(socket.AF_UNIX)
        stuck.settimeout(GENEROUS_S)
        stuck.connect(str(d.socket))
        try:
            stuck.sendall(b"Content-Length: 50\r\n")
            read_until_closed(stuck)
        finally:
            stuck.close()
        d.call("pause")
        try:
            got = next(n for n in sub.notifications(timeout=GENEROUS_S)
                       if n["params"].get("paused"))
        finally:
            d.call("resume")
        assert got["method"] == "status"
        assert sub.call("initialize")["pid"] == d.proc.pid
