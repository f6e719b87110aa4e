"""Daemon lifecycle: single-instance lock, logging, signals, serve, shut down.

``indexd run`` lands here. Order matters on the way down: stop accepting
requests, stop the watcher and let the worker finish its batch (store writes
are atomic per batch, so abandoning is also safe), optimize, release the lock.
"""

from __future__ import annotations

import errno
import faulthandler
import fcntl
import logging
import logging.handlers
import os
import signal
import sys

from .config import Settings, load_settings
from .errors import ConfigError, IndexdError
from .rundir import open_file, secure_dir

log = logging.getLogger(__name__)


class KeyValueFormatter(logging.Formatter):
    """One line per event: time level logger event key=value..."""

    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        return base.replace("\n", "\n    ")


def setup_logging(settings: Settings, foreground: bool = True) -> None:
    settings.paths.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fmt = KeyValueFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for h in list(root.handlers):
        root.removeHandler(h)
    fh = logging.handlers.RotatingFileHandler(settings.paths.log_file, maxBytes=5 << 20,
                                              backupCount=3, encoding="utf-8")
    os.chmod(settings.paths.log_file, 0o600)
    fh.setFormatter(fmt)
    root.addHandler(fh)
    if foreground:
        sh = logging.StreamHandler(sys.stderr)
        sh.setFormatter(fmt)
        root.addHandler(sh)
    logging.getLogger("watchdog").setLevel(logging.WARNING)


def take_instance_lock(settings: Settings, private: bool = False) -> int:
    """One daemon per user: an flock held for the process lifetime.

    The runtime directory is checked before anything is opened in it, and the
    lock is opened without following links and only truncated once held
    (indexd/rundir.py): a planted ``indexd.lock -> ~/.bashrc`` is refused, not
    overwritten. ``private``: the daemon's socket will live there too (0700).
    """
    secure_dir(settings.paths.runtime_dir, private=private)
    fd = open_file(settings.paths.lock_file, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise ConfigError(f"indexd is already running (pid {pid}, socket "
                              f"{settings.paths.socket}); stop it with: indexctl shutdown",
                              {"pid": pid, "socket": str(settings.paths.socket)}) from None
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def fault_hook(spec: str):
    """Tests: ``write:N`` makes the first N store writes fail as a full disk would."""
    if not spec:
        return None
    op, _, count = spec.partition(":")
    left = [int(count or 1)]

    def hook(what: str) -> None:
        if what == op and left[0] > 0:
            left[0] -= 1
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
    return hook


def run_daemon(settings: Settings | None = None, http: str | None = None, embed: bool = True,
               http_allow_remote: bool = False) -> int:
    settings = settings or load_settings()
    from .memory import limit_arenas

    limit_arenas()   # before any thread starts
    try:
        lock_fd = take_instance_lock(settings, private=True)
    except IndexdError as exc:
        print(f"indexd: {exc.message}", file=sys.stderr)
        return 1
    try:
        setup_logging(settings)
        # `kill -USR1 PID` writes every thread's stack to stderr (the journal, or the log a
        # test reads): where a daemon that stopped answering is stuck
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        import asyncio   # here: `indexd index` imports this module only for the lock

        return asyncio.run(_serve(settings, http, embed, http_allow_remote))
    finally:
        os.close(lock_fd)


async def _serve(settings: Settings, http: str | None, embed: bool,
                 http_allow_remote: bool = False) -> int:
    import asyncio

    from .engine import Engine
    from .server.methods import Methods
    from .server.socket_server import SocketServer
    from .store import Store

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    store = Store(settings.paths.store_dir, retention_s=settings.version_retention_s,
                  fault_hook=fault_hook(settings.fault_injection))
    server_ref: list = []
    listeners: list = []      # the REST server's event streams, once it is up

    def push(params: dict) -> None:   # worker thread -> loop
        if server_ref:
            asyncio.run_coroutine_threadsafe(server_ref[0].notify("status", params), loop)
        for listener in listeners:
            loop.call_soon_threadsafe(listener, params)

    engine = Engine(settings, store, notify=push, embed=embed)
    engine._on_shutdown = lambda: loop.call_soon_threadsafe(stop.set)
    methods = Methods(lambda: engine.settings, store, engine)
    server = SocketServer(settings.paths.socket, methods,
                          message_timeout=settings.message_timeout_s)
    server_ref.append(server)
    try:
        await server.start()
    except IndexdError as exc:
        log.error("cannot listen: %s", exc.message)
        print(f"indexd: {exc.message}", file=sys.stderr)
        return 1
    api = None
    if http:
        from .server import http_api, rest_app

        try:
            host, port = http_api.parse_http_address(http)
            token = http_api.load_or_create_token(settings)
            api = rest_app.RestApi(methods, host, port, token, allow_remote=http_allow_remote)
            await api.start()
        except IndexdError as exc:
            log.error("cannot serve http: %s", exc.message)
            print(f"indexd: {exc.message}", file=sys.stderr)
            await server.stop()
            return 1
        listeners.append(api.publish)
        token_file = settings.paths.config_dir / http_api.TOKEN_FILE
        http_api.publish_endpoint(settings.paths.runtime_dir, api, token_file)
        log.info("http api url=%s token_file=%s", api.url, token_file)
        print(f"indexd: REST API on {api.url} (bearer token in {token_file})",
              file=sys.stderr, flush=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    engine.start()
    log.info("daemon started pid=%s socket=%s realms=%s", os.getpid(), settings.paths.socket,
             ",".join(sorted(settings.realms)) or "none")
    print(f"indexd: serving {len(settings.realm_repos(None))} repos on {settings.paths.socket}",
          file=sys.stderr, flush=True)
    await stop.wait()
    log.info("daemon stopping")
    if api is not None:
        await api.stop()
        http_api.unpublish_endpoint(settings.paths.runtime_dir)
    await server.stop()
    await asyncio.to_thread(engine.stop)
    try:
        store.optimize()
    except Exception:  # noqa: BLE001 - shutting down anyway
        log.exception("optimize at shutdown failed")
    log.info("daemon stopped")
    return 0
