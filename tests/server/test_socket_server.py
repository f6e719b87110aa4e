"""Live tests: a real SocketServer on its own event loop thread, real clients."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from indexd.client import Client
from indexd.errors import (ConfigError, ConnectionLost, DaemonNotRunning, IndexdError,
                           InvalidParams, MethodNotFound, RealmError,
                           RequestTimeout)
from indexd.server import protocol
from indexd.server.socket_server import SocketServer

WAIT = 10.0


def wait_until(pred, timeout: float = WAIT, interval: float = 0.01):
    """Poll ``pred`` until truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {pred}")
        time.sleep(interval)


class EchoDispatch:
    """echo, sleep, raise (unexpected bug), fail (typed error), subscribe, ..."""

    def __init__(self):
        self.notes: list[str] = []

    async def call(self, method, params, conn):
        if method == "echo":
            return {"params": params}
        if method == "sleep":
            await asyncio.sleep(params.get("seconds", 0))
            return {"slept": params.get("seconds", 0), "tag": params.get("tag")}
        if method == "raise":
            raise ValueError("boom")
        if method == "fail":
            raise RealmError("no such realm", {"realm": params.get("realm")})
        if method == "need_int":
            if not isinstance(params.get("n"), int):
                raise InvalidParams("n must be an integer", {"param": "n"})
            return {"n": params["n"]}
        if method == "subscribe":
            conn.subscribed = True
            return {"subscribed": True}
        if method == "whoami":
            return {"uid": conn.peer_uid, "pid": conn.peer_pid}
        if method == "big":
            return {"data": "x" * params.get("size", 1 << 16)}
        if method == "unencodable":
            return {"x": object()}
        if method == "note":
            self.notes.append(params.get("text"))
            return {}
        raise MethodNotFound(f"unknown method {method!r}", {"method": method})


class ServerThread:
    """A SocketServer running in a background thread with its own loop."""

    def __init__(self, path: Path | None = None, dispatch=None, **kwargs):
        self.tmp = None
        if path is None:
            self.tmp = tempfile.mkdtemp(prefix="ix")
            path = Path(self.tmp) / "s"
        self.path = path
        self.dispatch = dispatch or EchoDispatch()
        self.server = SocketServer(path, self.dispatch, **kwargs)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="ix-server",
                                       daemon=True)

    def start(self) -> "ServerThread":
        self.thread.start()
        try:
            self.run(self.server.start())
        except BaseException:
            self._halt()
            raise
        return self

    def run(self, coro, timeout: float = WAIT):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        try:
            self.run(self.server.stop())
        finally:
            self._halt()

    def _halt(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.loop.close()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def client(self, **kw) -> Client:
        return Client(self.path, timeout=kw.pop("timeout", WAIT), **kw)

    def raw(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(WAIT)
        s.connect(str(self.path))
        return s

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = set(threading.enumerate())
    yield
    wait_until(lambda: not (set(threading.enumerate()) - before), timeout=5)


@pytest.fixture
def srv():
    with ServerThread() as s:
        yield s


def req(id, method, **params) -> dict:
    return protocol.request(id, method, params)


def ndjson(*msgs) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


def lsp_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\nContent-Type: application/json\r\n\r\n" % len(body) + body


class Reader:
    """Reads framed messages from a raw socket (test side)."""

    def __init__(self, sock: socket.socket, framing: str = "ndjson"):
        self.sock, self.framing, self.buf = sock, framing, b""

    def _fill(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        self.buf += data
        return bool(data)

    def next(self):
        while True:
            if self.framing == "ndjson" and b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                return json.loads(line)
            if self.framing == "lsp" and b"\r\n\r\n" in self.buf:
                head, rest = self.buf.split(b"\r\n\r\n", 1)
                n = int(head.split(b":")[1])
                if len(rest) >= n:
                    self.buf = rest[n:]
                    return json.loads(rest[:n])
            if not self._fill():
                raise EOFError(self.buf)

    def at_eof(self) -> bool:
        """True once the server closed (after everything it sent was read)."""
        while self._fill():
            pass
        return True


# ---------------------------------------------------------------- basics

@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_client_both_framings(srv, framing):
    with srv.client(framing=framing) as c:
        assert c.call("echo", a=1, method="m") == {"params": {"a": 1, "method": "m"}}
        assert c.call("echo") == {"params": {}}
        assert c.call("whoami")["uid"] == os.getuid()
        assert c.call("big", size=300_000)["data"] == "x" * 300_000


def test_raw_ndjson_and_lsp(srv):
    with srv.raw() as s:
        s.sendall(b"\n  " + ndjson(req(1, "echo", x=1), req("two", "echo")))
        r = Reader(s)
        got = {m["id"]: m for m in (r.next(), r.next())}
        assert got[1]["result"] == {"params": {"x": 1}}
        assert got["two"]["jsonrpc"] == "2.0"
    with srv.raw() as s:
        s.sendall(lsp_frame(json.dumps(req(7, "echo", y=2)).encode()))
        assert Reader(s, "lsp").next() == {"jsonrpc": "2.0", "id": 7,
                                           "result": {"params": {"y": 2}}}


def test_batch(srv):
    with srv.raw() as s:
        batch = [req(1, "echo", a=1), {"jsonrpc": "2.0", "method": "note", "params": {}},
                 5, req(2, "nope"), req(3, "sleep", seconds=0.01)]
        s.sendall(ndjson(batch))
        r = Reader(s)
        out = r.next()
        assert isinstance(out, list) and len(out) == 4
        by_id = {m["id"]: m for m in out if m["id"] is not None}
        assert by_id[1]["result"] == {"params": {"a": 1}}
        assert by_id[2]["error"]["code"] == -32601
        assert by_id[3]["result"]["slept"] == 0.01
        assert [m["error"]["code"] for m in out if m["id"] is None] == [-32600]
        s.sendall(b"[]\n")
        assert r.next()["error"]["code"] == -32600
        # A batch of notifications only gets no answer at all.
        s.sendall(ndjson([{"jsonrpc": "2.0", "method": "note", "params": {"text": "a"}}],
                         req(9, "echo")))
        assert r.next()["id"] == 9


def test_responses_in_completion_order_and_concurrent(srv):
    with srv.raw() as s:
        s.sendall(ndjson(req(1, "sleep", seconds=0.5), req(2, "echo")))
        r = Reader(s)
        assert [r.next()["id"], r.next()["id"]] == [2, 1]


def test_inflight_limit_applies_backpressure():
    with ServerThread(max_inflight=2) as srv, srv.raw() as s:
        s.sendall(ndjson(*[req(i, "sleep", seconds=0.05) for i in range(10)]))
        r = Reader(s)
        assert sorted(r.next()["id"] for _ in range(10)) == list(range(10))


# ---------------------------------------------------------------- errors

def test_typed_errors_through_client(srv):
    with srv.client() as c:
        with pytest.raises(MethodNotFound) as e:
            c.call("nope")
        assert e.value.code == -32601 and e.value.data["method"] == "nope"
        with pytest.raises(InvalidParams):
            c.call("need_int", n="x")
        with pytest.raises(RealmError) as e:
            c.call("fail", realm="r")
        assert e.value.data["realm"] == "r" and e.value.data["type"] == "RealmError"
        assert c.call("need_int", n=3) == {"n": 3}


def test_internal_error_is_logged_and_server_survives(srv, caplog):
    caplog.set_level(logging.ERROR, logger="indexd.server.socket_server")
    with srv.client() as c:
        with pytest.raises(IndexdError) as e:
            c.call("raise")
        assert e.value.code == -32603 and e.value.message == "internal error"
        rid = e.value.data["request_id"]
        with pytest.raises(IndexdError) as e2:
            c.call("unencodable")
        assert e2.value.code == -32603
        assert c.call("echo", ok=1) == {"params": {"ok": 1}}
    wait_until(lambda: any(rid in r.getMessage() and r.exc_info for r in caplog.records))


def test_bad_json_then_connection_continues(srv):
    with srv.raw() as s:
        s.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": \n' + ndjson(req(2, "echo")))
        r = Reader(s)
        err = r.next()
        assert err["id"] is None and err["error"]["code"] == -32700
        assert r.next()["id"] == 2


def test_invalid_request_and_positional_params(srv):
    with srv.raw() as s:
        s.sendall(b'{"jsonrpc":"1.0","id":1,"method":"echo"}\n'
                  b'{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}\n'
                  b'{"jsonrpc":"2.0","id":3,"method":"echo","params":[]}\n')
        r = Reader(s)
        out = {m["id"]: m for m in (r.next(), r.next(), r.next())}
        assert out[1]["error"]["code"] == -32600
        assert out[2]["error"]["code"] == -32602
        assert out[3]["result"] == {"params": {}}


def test_client_notifications_get_no_response(srv):
    with srv.raw() as s:
        s.sendall(ndjson({"jsonrpc": "2.0", "method": "note", "params": {"text": "n1"}},
                         {"jsonrpc": "2.0", "method": "nope"},
                         {"jsonrpc": "2.0", "method": "raise"},
                         req(1, "echo")))
        r = Reader(s)
        assert r.next()["id"] == 1
        wait_until(lambda: srv.dispatch.notes == ["n1"])
    with srv.client() as c:
        c.notify("note", text="n2")
        wait_until(lambda: srv.dispatch.notes == ["n1", "n2"])


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_oversized_message_gets_error_then_close(framing):
    with ServerThread(max_message=1000) as srv, srv.raw() as s:
        if framing == "ndjson":
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":"'
                      + b"y" * 5000)
        else:
            s.sendall(b"Content-Length: 5000\r\n\r\n")
        r = Reader(s, framing)
        err = r.next()
        assert err["error"]["code"] == -32600 and err["error"]["data"]["limit"] == 1000
        assert r.at_eof()
        with srv.client() as c:
            assert c.call("echo") == {"params": {}}


@pytest.mark.parametrize("garbage", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                                     b"Content-Length: nope\r\n\r\n{}",
                                     b"Content-Type: json\r\n\r\n{}"])
def test_garbage_headers_error_then_close(srv, garbage):
    with srv.raw() as s:
        s.sendall(garbage)
        r = Reader(s, "lsp")
        assert r.next()["error"]["code"] == -32700
        assert r.at_eof()
    with srv.client() as c:
        assert c.call("echo") == {"params": {}}


def test_early_disconnect_and_half_close(srv):
    for partial in (b'{"jsonrpc":"2.0","id":1,"met', b"Content-Length: 50\r\n\r\n{\"a\"",
                    b"Content-Len"):
        with srv.raw() as s:
            s.sendall(partial)
    # Half-closed: the answer to a request sent before shutdown still arrives.
    with srv.raw() as s:
        s.sendall(ndjson(req(1, "sleep", seconds=0.1)))
        s.shutdown(socket.SHUT_WR)
        r = Reader(s)
        assert r.next()["result"]["slept"] == 0.1
        assert r.at_eof()
    # Reset while a request is in flight.
    s = srv.raw()
    s.sendall(ndjson(req(1, "sleep", seconds=0.1), req(2, "big", size=1 << 20)))
    s.close()
    with srv.client() as c:
        assert c.call("echo") == {"params": {}}
    wait_until(lambda: len(srv.server.connections) == 0)


def test_client_imports_stay_light():
    code = ("import sys, indexd.client; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('asyncio', 'lancedb', 'torch', 'pyarrow') or "
            "(m.startswith('indexd.') and m not in ('indexd.client', 'indexd.errors', 'indexd.model'))]; "
            "print(heavy); sys.exit(bool(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_stop_with_requests_in_flight():
    srv = ServerThread().start()
    with srv.raw() as s:
        s.sendall(ndjson(req(1, "sleep", seconds=3600)))
        wait_until(lambda: len(srv.server.connections) == 1)
        # stop() waits up to WAIT for the server to stop: a stop that waited for the
        # hour-long request would raise there.
        srv.stop()
        assert Reader(s).at_eof() and not srv.path.exists()


def test_client_timeout_and_reuse(srv):
    with srv.client(timeout=0.2) as c:
        with pytest.raises(RequestTimeout):
            c.call("sleep", seconds=1.0)
        c.timeout = WAIT
        # The late answer to the timed-out call is skipped by id.
        assert c.call("sleep", seconds=0, tag="second")["tag"] == "second"


def test_client_connection_lost_and_daemon_not_running(tmp_path):
    missing = Client(tmp_path / "none.sock")
    with pytest.raises(DaemonNotRunning) as e:
        missing.connect()
    assert "indexd run" in str(e.value)
    srv = ServerThread().start()
    c = srv.client()
    c.connect()
    srv.stop()
    with pytest.raises((ConnectionLost, DaemonNotRunning)):
        c.call("echo")
    c.close()
    # Stale socket file (server gone) is "not running" too.
    d = tempfile.mkdtemp(prefix="ix")
    try:
        stale = Path(d) / "s"
        lone = socket.socket(socket.AF_UNIX)
        lone.bind(str(stale))
        lone.close()
        with pytest.raises(DaemonNotRunning):
            Client(stale).call("echo")
    finally:
        shutil.rmtree(d)


# ---------------------------------------------------------------- load

def test_slow_client_does_not_block_others_and_is_dropped(caplog):
    caplog.set_level(logging.WARNING, logger="indexd.server.socket_server")
    with ServerThread(max_queue_bytes=1 << 20, max_queue_messages=64) as srv:
        slow = srv.raw()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            # Two 400 KiB answers it will never read (together under its 1 MiB queue): the
            # first fills the socket, the second waits in the queue behind a writer
            # blocked for good.
            slow.sendall(ndjson(*[req(i, "big", size=400 << 10) for i in range(2)]))
            wait_until(lambda: any(c._queued_bytes for c in srv.server.connections))
            with srv.client() as c:
                for i in range(20):
                    assert c.call("echo", i=i) == {"params": {"i": i}}
                # ...answered while the slow one is still connected and still blocked.
                assert len(srv.server.connections) == 2
                assert any(c._queued_bytes for c in srv.server.connections)
                # ~30 MiB more overflows its queue: dropped, the others still served.
                slow.sendall(ndjson(*[req(i, "big", size=1 << 20) for i in range(2, 32)]))
                wait_until(lambda: any("not reading" in r.getMessage() for r in caplog.records))
                wait_until(lambda: len(srv.server.connections) == 1)
                assert c.call("echo") == {"params": {}}
        finally:
            slow.close()


def test_many_clients_at_once(srv):
    errors: list[BaseException] = []

    def worker(n: int):
        try:
            with srv.client(framing="lsp" if n % 2 else "ndjson") as c:
                for i in range(25):
                    assert c.call("echo", n=n, i=i) == {"params": {"n": n, "i": i}}
        except BaseException as exc:   # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 3)
    assert not errors and not any(t.is_alive() for t in threads)


# ---------------------------------------------------------------- notifications

def test_notifications_reach_subscribers_only(srv):
    with srv.client() as sub, srv.client() as other:
        assert sub.call("subscribe") == {"subscribed": True}
        assert other.call("echo") == {"params": {}}
        assert srv.run(srv.server.notify("index.changed", {"repo": "r"})) == 1
        got = next(sub.notifications(timeout=WAIT))
        assert got == {"jsonrpc": "2.0", "method": "index.changed", "params": {"repo": "r"}}
        # Anything pushed to `other` would have been queued before this answer.
        assert other.call("echo") == {"params": {}}
        assert list(other.notifications(timeout=0)) == []
        # Notifications that arrive during a call are kept for notifications().
        srv.run(srv.server.notify("a", {"i": 1}))
        assert sub.call("echo") == {"params": {}}
        assert [n["method"] for n in sub.notifications(timeout=0)] == ["a"]


def test_notifications_lsp_framing(srv):
    with srv.client(framing="lsp") as sub:
        sub.call("subscribe")
        srv.run(srv.server.notify("x", None))
        assert next(sub.notifications(timeout=WAIT))["method"] == "x"


# ---------------------------------------------------------------- socket file

def test_socket_and_directory_modes():
    d = tempfile.mkdtemp(prefix="ix")
    try:
        path = Path(d) / "run" / "s"
        with ServerThread(path):
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
            assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
            assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert not path.exists()
    finally:
        shutil.rmtree(d)


def test_refuses_open_or_foreign_directory():
    d = tempfile.mkdtemp(prefix="ix")
    try:
        os.chmod(d, 0o755)
        with pytest.raises(ConfigError, match="chmod 700"):
            ServerThread(Path(d) / "s").start()
        os.chmod(d, 0o700)
        if os.getuid() == 0:
            os.chown(d, 65534, 65534)
            with pytest.raises(ConfigError, match="owned by uid 65534"):
                ServerThread(Path(d) / "s").start()
    finally:
        shutil.rmtree(d)


def test_stale_socket_replaced_and_live_socket_refused():
    d = tempfile.mkdtemp(prefix="ix")
    try:
        path = Path(d) / "s"
        lone = socket.socket(socket.AF_UNIX)
        lone.bind(str(path))
        lone.close()
        with ServerThread(path) as first:
            with first.client() as c:
                assert c.call("echo") == {"params": {}}
            with pytest.raises(ConfigError, match="already listening"):
                ServerThread(path).start()
            # The refused second server must not have touched the live socket.
            with first.client() as c:
                assert c.call("echo") == {"params": {}}
    finally:
        shutil.rmtree(d)


def test_live_socket_of_unlocked_daemon_refused():
    """Even without the lock (e.g. an older daemon), a live socket is probed."""
    d = tempfile.mkdtemp(prefix="ix")
    try:
        path = Path(d) / "s"
        other = socket.socket(socket.AF_UNIX)
        other.bind(str(path))
        other.listen(1)
        try:
            with pytest.raises(ConfigError, match="already listening"):
                ServerThread(path).start()
            assert path.exists()
        finally:
            other.close()
        Path(d, "x").write_text("")
        with pytest.raises(ConfigError, match="not a socket"):
            ServerThread(Path(d) / "x").start()
    finally:
        shutil.rmtree(d)


def test_path_too_long():
    d = tempfile.mkdtemp(prefix="ix")
    try:
        with pytest.raises(ConfigError, match="too long"):
            ServerThread(Path(d) / ("a" * 150)).start()
    finally:
        shutil.rmtree(d)


def test_foreign_uid_is_refused(caplog):
    caplog.set_level(logging.WARNING, logger="indexd.server.socket_server")
    with ServerThread(allowed_uid=os.getuid() + 12345) as srv:
        with pytest.raises(ConnectionLost):
            srv.client().call("echo")
        wait_until(lambda: any("not allowed" in r.getMessage() for r in caplog.records))


# ---------------------------------------------------------------- fuzzing the live server

@pytest.fixture(scope="module")
def shared_srv():
    with ServerThread(max_message=4096) as s:
        yield s


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000))
def test_live_server_survives_random_bytes(shared_srv, data):
    with shared_srv.raw() as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            Reader(s).at_eof()       # the server must close its side
        except (BrokenPipeError, ConnectionResetError):
            pass
    with shared_srv.client() as c:
        assert c.call("echo", ok=True) == {"params": {"ok": True}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=15)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(["echo", "nope", "raise", "fail"])},
    optional={"id": json_values, "params": json_values}))
def test_live_server_answers_after_random_json(shared_srv, value):
    with shared_srv.raw() as s:
        s.sendall(ndjson(req(0, "echo")) + json.dumps(value).encode() + b"\n"
                  + ndjson(req("probe-☃-xyz", "echo", ok=1)))
        r = Reader(s)
        while True:
            msg = r.next()
            assert isinstance(msg, (dict, list))
            if isinstance(msg, dict) and msg.get("id") == "probe-☃-xyz":
                assert msg["result"] == {"params": {"ok": 1}}
                break
