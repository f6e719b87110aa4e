"""Asyncio Unix-socket JSON-RPC server: the daemon's only door.

Owns: socket file security (0700 directory, 0600 socket, stale-socket
takeover, single-daemon lock, SO_PEERCRED uid check), per-connection framing,
request concurrency, bounded outgoing queues, the time a begun message has to
finish (``message_timeout``), server push (`notify`) and the mapping of
exceptions to JSON-RPC errors.

It does not know the method list: `dispatch.call(method, params, conn)` does.
Must not import the engine (store, parse, lancedb, torch); only
`indexd.errors`, `indexd.rundir` and `indexd.server.protocol`.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import fcntl
import logging
import os
import socket
import stat
import struct
import sys
import uuid
from pathlib import Path
from typing import Any, Protocol

from indexd.errors import ConfigError, IndexdError, InvalidParams, ParseError, UnsafePath
from indexd.rundir import open_file, secure_dir
from indexd.server import protocol
from indexd.server.protocol import DecodeFailure, Message, Request

log = logging.getLogger(__name__)

# sun_path is 108 bytes on Linux, 104 on the BSDs and macOS, NUL included.
MAX_SOCKET_PATH = 107 if sys.platform.startswith("linux") else 103
MAX_INFLIGHT = 32                # concurrent requests per connection
MAX_QUEUE_MESSAGES = 256         # outgoing messages waiting for a slow reader
MAX_QUEUE_BYTES = 8 << 20
FLUSH_TIMEOUT = 5.0              # time a closing connection gets to drain
MESSAGE_TIMEOUT = 30.0           # to finish a message once begun (config: message_timeout_s)
_READ_CHUNK = 1 << 16
_QUIET_ERRORS = (OSError,)   # resets, broken pipes, timeouts: peer gone


class Dispatch(Protocol):
    async def call(self, method: str, params: dict, conn: "Connection") -> dict: ...


class Connection:
    """One client connection as seen by the dispatcher.

    ``subscribed`` is set by the dispatcher (``subscribe``); `notify` pushes
    to those. Outgoing messages go through a bounded queue drained by a
    writer task, so a client that stops reading never blocks anyone else:
    when its queue overflows it is dropped.
    """

    def __init__(self, cid: int, writer: asyncio.StreamWriter, *,
                 peer_uid: int | None, peer_pid: int | None,
                 max_queue_messages: int, max_queue_bytes: int):
        self.id = cid
        self.peer_uid = peer_uid
        self.peer_pid = peer_pid
        self.subscribed = False
        self.framing: str | None = None
        # Set by `initialize` from the client's client_info (the audit log's transport).
        self.transport = "socket"
        self.client_name: str | None = None
        self._writer = writer
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued_bytes = 0
        self._max_messages = max_queue_messages
        self._max_bytes = max_queue_bytes
        self._wakeup = asyncio.Event()
        self._closing = False        # no more sends; flush and close
        self.closed = False          # aborted or fully closed

    def __repr__(self) -> str:
        return f"<Connection {self.id} uid={self.peer_uid} pid={self.peer_pid}>"

    @property
    def open(self) -> bool:
        return not (self.closed or self._closing)

    def send(self, message: Any) -> bool:
        """Queue one JSON-RPC message; False if the connection is gone/dropped."""
        return self.send_body(protocol.dumps(message))

    def send_body(self, body: bytes) -> bool:
        if not self.open:
            return False
        data = protocol.frame(body, self.framing or protocol.NDJSON)
        # An empty queue always accepts one message, however large, so a big
        # result is not mistaken for a slow client.
        if self._queue and (len(self._queue) >= self._max_messages
                            or self._queued_bytes + len(data) > self._max_bytes):
            log.warning("dropping %r: it is not reading its responses "
                        "(%d messages, %d bytes queued)",
                        self, len(self._queue), self._queued_bytes)
            self.abort()
            return False
        self._queue.append(data)
        self._queued_bytes += len(data)
        self._wakeup.set()
        return True

    def abort(self) -> None:
        """Close now, discarding queued output (the peer is slow or hostile)."""
        self.closed = True
        self._queue.clear()
        self._queued_bytes = 0
        self._wakeup.set()
        self._writer.transport.abort()

    def finish(self) -> None:
        """Accept no more messages; the writer flushes the queue and closes."""
        self._closing = True
        self._wakeup.set()

    async def write_loop(self) -> None:
        try:
            while not self.closed:
                while self._queue and not self.closed:
                    data = self._queue.popleft()
                    self._queued_bytes -= len(data)
                    self._writer.write(data)
                    # Blocks only this task while the peer is slow.
                    await self._writer.drain()
                if self._closing or self.closed:
                    break
                self._wakeup.clear()
                await self._wakeup.wait()
        except _QUIET_ERRORS as exc:
            log.debug("%r: write failed: %s", self, exc)
            self.closed = True


class SocketServer:
    """JSON-RPC over a Unix socket; see the module docstring.

    `notify` must be awaited on the server's event loop (from another thread
    use ``asyncio.run_coroutine_threadsafe``).
    """

    def __init__(self, path: Path, dispatch: Dispatch, *,
                 max_message: int = protocol.DEFAULT_MAX_MESSAGE,
                 allowed_uid: int | None = os.getuid(),
                 max_inflight: int = MAX_INFLIGHT,
                 max_queue_messages: int = MAX_QUEUE_MESSAGES,
                 max_queue_bytes: int = MAX_QUEUE_BYTES,
                 message_timeout: float | None = MESSAGE_TIMEOUT):
        self.path = Path(path)
        self.dispatch = dispatch
        self.max_message = max_message
        self.allowed_uid = allowed_uid
        self.max_inflight = max_inflight
        self.max_queue_messages = max_queue_messages
        self.max_queue_bytes = max_queue_bytes
        self.message_timeout = message_timeout or None    # 0: no limit
        self._listener: socket.socket | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._lock_fd: int | None = None
        self._inode: int | None = None
        self._handlers: set[asyncio.Task] = set()
        self._conns: set[Connection] = set()
        self._next_id = 0

    @property
    def connections(self) -> tuple[Connection, ...]:
        return tuple(c for c in self._conns if not c.closed)

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        try:
            check_path_length(self.path)
            prepare_directory(self.path.parent)
            self._lock_fd = take_lock(self.path)
            remove_stale_socket(self.path)
            self._listener = bind_socket(self.path)
            self._inode = os.stat(self.path).st_ino
        except BaseException:
            self._close_listener()
            self._release_lock()
            raise
        # Our own accept rather than asyncio.start_unix_server: on 3.11 a
        # connection accepted in the same loop turn as Server.close() trips an
        # assertion inside asyncio and its socket leaks, never reaching us.
        self._listen()
        log.info("listening on %s", self.path)

    async def stop(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
        # Connections still in the backlog get ECONNRESET when this closes.
        self._close_listener()
        for conn in list(self._conns):
            conn.abort()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        self._unlink_own_socket()
        self._release_lock()

    async def notify(self, method: str, params: dict | list | None = None) -> int:
        """Push a notification to every subscribed connection; returns how many."""
        body = protocol.dumps(protocol.notification(method, params))
        sent = 0
        for conn in list(self._conns):
            if conn.subscribed and conn.send_body(body):
                sent += 1
        return sent

    def _close_listener(self) -> None:
        if self._listener is not None:
            try:
                asyncio.get_running_loop().remove_reader(self._listener.fileno())
            except RuntimeError:
                pass    # not started on a loop
            self._listener.close()
            self._listener = None

    def _unlink_own_socket(self) -> None:
        # Only remove the file we bound: never another daemon's socket.
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        self._inode = None

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)   # closing drops the flock
            self._lock_fd = None

    # ------------------------------------------------------------ connections

    def _listen(self) -> None:
        if self._listener is not None:
            asyncio.get_running_loop().add_reader(self._listener.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        """Accept synchronously and hand each socket to a task at once.

        No await between accept() and task creation, so stop() can never miss
        an accepted socket (an awaited sock_accept() can be cancelled after it
        accepted, leaking the socket).
        """
        for _ in range(64):     # bounded: let other callbacks run
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                # EMFILE/ENFILE: the listener stays readable; pause instead of spinning.
                log.warning("accept failed: %s; retrying shortly", exc)
                loop = asyncio.get_running_loop()
                loop.remove_reader(self._listener.fileno())
                self._retry = loop.call_later(0.1, self._listen)
                return
            task = asyncio.create_task(self._on_connect(sock))
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
            # A task cancelled before its first step never runs its finally
            # blocks; closing here covers that (close() is idempotent).
            task.add_done_callback(lambda _t, s=sock: s.close())

    async def _on_connect(self, sock: socket.socket) -> None:
        uid, pid = peer_credentials(sock)
        self._next_id += 1
        cid = self._next_id
        if not self._uid_allowed(uid):
            log.warning("refusing connection %d (pid %s): uid %s is not allowed "
                        "(expected %s)", cid, pid, uid, self.allowed_uid)
            sock.close()
            return
        try:
            reader, writer = await asyncio.open_unix_connection(
                sock=sock, limit=_READ_CHUNK)
        except BaseException as exc:
            sock.close()     # idempotent if a transport already closed it
            if not isinstance(exc, OSError):
                raise
            log.debug("connection %d gone before setup: %s", cid, exc)
            return
        conn = Connection(cid, writer, peer_uid=uid, peer_pid=pid,
                          max_queue_messages=self.max_queue_messages,
                          max_queue_bytes=self.max_queue_bytes)
        self._conns.add(conn)
        try:
            await self._serve(conn, reader)
        except asyncio.CancelledError:
            conn.abort()
            raise
        except Exception:
            log.exception("%r: connection handler failed", conn)
            conn.abort()
        finally:
            self._conns.discard(conn)

    def _uid_allowed(self, uid: int | None) -> bool:
        if self.allowed_uid is None or uid == self.allowed_uid:
            return True
        # Unknown uid is only acceptable where the OS cannot tell us at all.
        return uid is None and not hasattr(socket, "SO_PEERCRED")

    async def _serve(self, conn: Connection, reader: asyncio.StreamReader) -> None:
        writer_task = asyncio.create_task(conn.write_loop())
        inflight: set[asyncio.Task] = set()
        slots = asyncio.Semaphore(self.max_inflight)
        try:
            graceful = await self._read_loop(conn, reader, inflight, slots)
            if graceful and inflight:
                # Half-closed client: it may still be waiting for answers.
                await asyncio.gather(*inflight, return_exceptions=True)
            conn.finish()
            try:
                await asyncio.wait_for(asyncio.shield(writer_task), FLUSH_TIMEOUT)
            except asyncio.TimeoutError:
                log.info("%r: could not flush before closing", conn)
        finally:
            leftovers = [t for t in (*inflight, writer_task) if not t.done()]
            if not writer_task.done():
                conn.abort()
            for task in leftovers:
                task.cancel()
            if leftovers:
                # Reap them so none outlives stop() (bounded: a dispatch that
                # ignores cancellation must not hang shutdown).
                await asyncio.wait(leftovers, timeout=FLUSH_TIMEOUT)
            await _close_quietly(conn)

    async def _read_loop(self, conn: Connection, reader: asyncio.StreamReader,
                         inflight: set, slots: asyncio.Semaphore) -> bool:
        """Read and start requests until EOF (True) or a fatal error (False)."""
        decoder = protocol.Decoder(self.max_message)
        budget = self.message_timeout
        while conn.open:
            # Only a begun message is timed: a quiet subscriber between messages is
            # legitimate, bytes that never end a message only hold a connection.
            timed = budget is not None and decoder.partial
            started = asyncio.get_running_loop().time()
            try:
                if timed:
                    data = await asyncio.wait_for(reader.read(_READ_CHUNK), budget)
                else:
                    data = await reader.read(_READ_CHUNK)
            except TimeoutError:     # before OSError, its base class
                self._drop_incomplete(conn, decoder)
                return False
            except _QUIET_ERRORS as exc:
                log.debug("%r: read failed: %s", conn, exc)
                return False
            if timed:
                # Time spent here only: waiting for a request slot is not the peer's fault.
                budget -= asyncio.get_running_loop().time() - started
            if not data:
                if decoder.pending:
                    log.debug("%r: disconnected mid-message (%d bytes)",
                              conn, decoder.pending)
                return True
            for item in decoder.feed(data):
                conn.framing = decoder.framing
                if isinstance(item, DecodeFailure):
                    conn.send(item.response())
                    if item.fatal:
                        log.info("%r: closing: %s", conn, item.error.message)
                        return False
                    continue
                # Waiting here stops reading: backpressure on a flooding client.
                await slots.acquire()
                task = asyncio.create_task(self._handle(conn, item, slots))
                inflight.add(task)
                task.add_done_callback(inflight.discard)
            if not decoder.partial:
                budget = self.message_timeout
        return False

    def _drop_incomplete(self, conn: Connection, decoder: protocol.Decoder) -> None:
        conn.framing = decoder.framing
        log.info("%r: closing: incomplete message (%d bytes) not finished within %gs",
                 conn, decoder.pending, self.message_timeout)
        conn.send(protocol.error(None, ParseError(
            f"parse error: incomplete message: not finished within "
            f"{self.message_timeout:g}s; closing the connection",
            {"timeout_s": self.message_timeout})))

    async def _handle(self, conn: Connection, message: Message,
                      slots: asyncio.Semaphore) -> None:
        try:
            if message.batch:
                parts = await asyncio.gather(*(self._answer(conn, i) for i in message.items))
                parts = [p for p in parts if p is not None]
                if parts:
                    conn.send_body(b"[" + b",".join(parts) + b"]")
            else:
                body = await self._answer(conn, message.items[0])
                if body is not None:
                    conn.send_body(body)
        finally:
            slots.release()

    async def _answer(self, conn: Connection, item: Request | DecodeFailure) -> bytes | None:
        """Run one request; its serialized response, or None for notifications."""
        if isinstance(item, DecodeFailure):
            return protocol.dumps(item.response())
        try:
            value = await self.dispatch.call(item.method, _params(item), conn)
            if item.notification:
                return None
            return protocol.dumps(protocol.result(item.id, value))
        except IndexdError as exc:
            if item.notification:
                log.debug("%r: notification %s failed: %s", conn, item.method, exc)
                return None
            return protocol.dumps(protocol.error(item.id, exc))
        except Exception:
            # Also covers results JSON cannot carry (TypeError/ValueError in dumps).
            request_id = uuid.uuid4().hex[:12]
            log.exception("internal error in %s (request_id=%s, %r)",
                          item.method, request_id, conn)
            if item.notification:
                return None
            err = IndexdError("internal error", {"request_id": request_id})
            return protocol.dumps(protocol.error(item.id, err))


def _params(req: Request) -> dict:
    if isinstance(req.params, dict):
        return req.params
    if not req.params:
        return {}
    raise InvalidParams("positional params are not supported; pass an object")


async def _close_quietly(conn: Connection) -> None:
    writer = conn._writer
    conn.closed = True
    try:
        writer.close()
        await writer.wait_closed()
    except _QUIET_ERRORS:
        pass


# ---------------------------------------------------------------- socket file

def check_path_length(path: Path) -> None:
    size = len(os.fsencode(str(path)))
    if size > MAX_SOCKET_PATH:
        raise ConfigError(
            f"socket path is too long ({size} bytes, the limit is {MAX_SOCKET_PATH}): "
            f"{path}; choose a shorter runtime directory",
            {"path": str(path), "limit": MAX_SOCKET_PATH})


def prepare_directory(directory: Path) -> None:
    """Create the socket directory 0700, or refuse one others can reach or that is a link."""
    secure_dir(directory, private=True)


def take_lock(path: Path) -> int:
    """Hold an flock next to the socket for the daemon's lifetime.

    Without it two daemons starting at once could both find the socket stale
    and each unlink the other's freshly bound one.
    """
    lock_path = path.with_name(path.name + ".lock")
    fd = open_file(lock_path, os.O_RDWR | os.O_CREAT)    # never through a planted link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise _already_listening(path) from None
        raise
    return fd


def remove_stale_socket(path: Path) -> None:
    """Remove a socket file nobody answers on; refuse a live one or a non-socket."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"{path} is a symbolic link; refusing to follow or replace it. "
                         "Nothing of indexd's is a link: remove it and start again",
                         {"path": str(path), "reason": "symlink"})
    if not stat.S_ISSOCK(st.st_mode):
        raise ConfigError(f"{path} exists and is not a socket; refusing to replace it",
                          {"path": str(path)})
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        log.info("removing stale socket %s", path)
        path.unlink(missing_ok=True)
        return
    except OSError as exc:
        # Timeout (backlog full) or permission: somebody is there, don't touch it.
        raise ConfigError(f"cannot probe existing socket {path}: {exc}",
                          {"path": str(path)}) from exc
    finally:
        probe.close()
    raise _already_listening(path)


def _already_listening(path: Path) -> ConfigError:
    return ConfigError(
        f"an indexd daemon is already listening on {path}; stop it first "
        f"(or use a different socket path)", {"path": str(path), "reason": "in_use"})


def bind_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # Between bind and chmod the mode follows the umask; the 0700 parent
        # directory keeps other users out during that window.
        sock.bind(str(path))
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def peer_credentials(sock: Any) -> tuple[int | None, int | None]:
    """(uid, pid) of the peer via SO_PEERCRED; (None, None) where unsupported."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or peercred is None:
        # Other platforms: rely on the 0700 directory and 0600 socket.
        return None, None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    except OSError:
        return None, None
    pid, uid, _gid = struct.unpack("3i", raw)
    return uid, pid
