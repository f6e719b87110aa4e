"""The REST server (indexd/server/rest_app.py) in-process, over real TCP.

The e2e tests (tests/e2e/test_http_api.py, tests/ui/) run it inside the
daemon; these check what needs a server of its own: a short head timeout,
and that stopping it leaves no task, thread or listening socket behind.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading

from indexd.server.methods import Methods
from indexd.server.rest_app import RestApi


def _api(**kw) -> RestApi:
    return RestApi(Methods(lambda: None, store=None), "127.0.0.1", 0, "t" * 20, **kw)


async def _read_all(reader: asyncio.StreamReader, timeout: float) -> bytes:
    return await asyncio.wait_for(reader.read(), timeout)


def test_a_request_head_that_never_finishes_is_dropped():
    async def main():
        api = _api(head_timeout_s=0.3)
        await api.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", api.port)
            writer.write(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")    # no end of head
            await writer.drain()
            assert await _read_all(reader, timeout=30) == b""     # closed by the server
            writer.close()
            # A whole request still gets its answer, and keep-alive still works.
            reader, writer = await asyncio.open_connection("127.0.0.1", api.port)
            writer.write(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            assert head.startswith(b"HTTP/1.1 200 ")
            writer.close()
        finally:
            await api.stop()

    asyncio.run(main())


def test_stop_leaves_no_listener_task_or_thread():
    threads = set(threading.enumerate())

    async def main():
        api = _api()
        await api.start()
        port = api.port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)   # an idle keep-alive
        await api.stop()
        assert await _read_all(reader, timeout=30) == b""
        writer.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert others == [] or all(t.done() for t in others), others
        return port

    port = asyncio.run(main())
    assert set(threading.enumerate()) <= threads
    s = socket.socket()
    try:
        assert s.connect_ex(("127.0.0.1", port)) != 0      # nobody listens there now
    finally:
        s.close()


def _exchange(port: int, payload: bytes) -> bytes:
    """Send raw bytes, read until the server closes (every case here asks it to)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(payload)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_hostile_requests_get_json_errors_and_a_chunked_body_is_read():
    cases = [
        (b"garbage\r\n\r\n", b"HTTP/1.1 400 "),
        (b"GET /api/v1/health HTTP/2.0\r\nConnection: close\r\n\r\n", b"HTTP/1.1 505 "),
        (b"GET /api/v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", b"HTTP/1.1 400 "),
        (b"GET /api/v1/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\nX-Big: "
         + b"a" * (20 << 10) + b"\r\n\r\n", b"HTTP/1.1 431 "),
        (b"GET /api/v1/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
         + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n", b"HTTP/1.1 431 "),
        (b"POST /api/v1/rpc/realm.list HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
         b"Authorization: Bearer " + b"t" * 20 + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n", b"HTTP/1.1 400 "),     # read whole: not an object
    ]

    async def main():
        api = _api()
        await api.start()
        try:
            return [await asyncio.to_thread(_exchange, api.port, p) for p, _ in cases]
        finally:
            await api.stop()

    for (payload, want), reply in zip(cases, asyncio.run(main())):
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(want), (payload[:60], reply[:300])
        assert b"application/json" in head.lower(), reply[:300]
        assert json.loads(body)["error"]["message"], reply[:300]


def test_answers_are_not_held_back_by_nagle():
    """Each answer goes out as a head write and a body write; with Nagle on, the
    second waits for the client's delayed ACK (~40 ms per request, measured)."""
    async def main():
        api = _api()
        await api.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", api.port)
            writer.write(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            conns = list(api._server.server_state.connections)
            assert conns
            for conn in conns:
                sock = conn.transport.get_extra_info("socket")
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()
        finally:
            await api.stop()

    asyncio.run(main())
