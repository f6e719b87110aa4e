"""Shared test helpers: real git repos, a real daemon, CLI runner, waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

REPO_ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def embedded(status: dict) -> bool:
    """A daemon's status says every entry has its vector: the writer idle (`pending`
    covers only it), the model loaded (a hybrid search is refused while it loads) and
    its queue empty. Vectors are made on another thread than the one that answers."""
    return status["pending"] == 0 and status["embedding"]["ready"] and not status["queues"]["embed"]


def cpu_s(fn, runs: int = 2, min_total_s: float = 0.05) -> float:
    """CPU seconds per call: the least of a few runs (the one the machine disturbed least),
    each repeating a fast call until its total is measurable."""
    best = float("inf")
    for _ in range(runs):
        calls, started = 0, time.process_time()
        while True:
            fn()
            calls += 1
            spent = time.process_time() - started
            if spent >= min_total_s:
                break
        best = min(best, spent / calls)
    return best


def cost_ratio(small, big, bound: float, rounds: int = 5) -> float:
    """CPU of ``big()`` over CPU of ``small()``, measured back to back in each round so
    a busy machine slows both alike; more rounds, and their median, only when the first
    is not under ``bound`` (complexity bounds on a loaded 2-core machine)."""
    import gc
    import statistics

    ratios = []
    # The cycle collector's full passes scan the whole heap, so the bigger input's
    # run pays for its bigger heap too (a linear update measured 8.4x for 4x on a
    # busy box): the bound is about the algorithm, so it is measured without them.
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            ratios.append(cpu_s(big, runs=1) / cpu_s(small, runs=1))
            if ratios[0] < bound:
                break
    finally:
        gc.enable()
    return statistics.median(ratios)


class GitRepo:
    """A real repository made with pygit2, with small helpers for tests."""

    def __init__(self, path: Path):
        self.path = path
        self.repo = pygit2.init_repository(str(path), initial_head="main")
        self.sig = pygit2.Signature("Test", "test@example.com", 1_700_000_000, 0)

    def write(self, rel: str, text: str | bytes) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return p

    def rm(self, rel: str) -> None:
        (self.path / rel).unlink()

    def commit(self, message: str = "commit", author: pygit2.Signature | None = None) -> str:
        """Commit everything; ``author`` (a pygit2.Signature) signs it instead of self.sig."""
        index = self.repo.index
        index.add_all()
        index.write()
        tree = index.write_tree()
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        sig = author or self.sig
        oid = self.repo.create_commit("HEAD", sig, sig, message, tree, parents)
        return str(oid)

    def branch(self, name: str) -> None:
        self.repo.branches.local.create(name, self.repo.head.peel())

    def checkout(self, name: str) -> None:
        branch = self.repo.branches.local[name]
        self.repo.checkout(branch, strategy=pygit2.GIT_CHECKOUT_FORCE)


def settings_with_realm(name: str, *paths: Path):
    from indexd.config import load_settings
    from indexd.realms import add_repos

    add_repos(load_settings(), name, [str(p) for p in paths])
    return load_settings()


def indexed_repo(git_repo, make_store, files: int, extra: dict[str, str] | None = None):
    """A committed repo of ``files`` one-function modules (and ``extra`` files),
    indexed once: (settings, store, indexer, realm, repo)."""
    from indexd.pipeline import Indexer

    for i in range(files):
        git_repo.write(f"pkg/m{i:02d}.py", f"def fn_{i}():\n    return {i}\n")
    for path, text in (extra or {}).items():
        git_repo.write(path, text)
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    indexer = Indexer(settings, store)
    indexer.index()
    realm, repo = settings.realm_repos("work")[0]
    return settings, store, indexer, realm, repo


def hash_embedded_store(git_repo, make_store, files: dict[str, str]):
    """A committed repo of ``files`` in realm "work", and its store made for
    the hash embedder: (settings, store, embedder); nothing indexed yet."""
    from indexd.enrich.embedder import HashEmbedder

    for rel, text in files.items():
        git_repo.write(rel, text)
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    embedder = HashEmbedder()
    store.switch_model(embedder.model_id, embedder.dim)
    return settings, store, embedder


def run_cli(*args, env=None, timeout=120, check=False, tool="indexctl"):
    cmd = [str(BIN / tool), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=env or os.environ.copy())
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


class Daemon:
    """`indexd run` as a real subprocess over a real socket."""

    def __init__(self, home: Path, extra_env: dict | None = None, args: tuple = ()):
        self.home = home
        self.args = tuple(args)       # more `indexd run` flags, e.g. ("--http", "127.0.0.1:0")
        # The deterministic hash embedder keeps most daemon tests fast; tests
        # about meaning pass INDEXD_EMBED_MODEL=default for the real model.
        self.env = (os.environ.copy() | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "hash"}
                    | (extra_env or {}))
        self.proc: subprocess.Popen | None = None
        self.log = home / "daemon.out"

    @property
    def socket(self) -> Path:
        return self.home / "indexd.sock"

    def start(self, wait: bool = True) -> Daemon:
        self._out = open(self.log, "ab")
        self.proc = subprocess.Popen([str(BIN / "indexd"), "run", *self.args], env=self.env,
                                     stdout=self._out, stderr=subprocess.STDOUT)
        if wait:
            wait_until(lambda: self.ready(), timeout=60, what="daemon socket")
        return self

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited rc={self.proc.returncode}:\n{self.output()}")
        try:
            self.call("initialize")
            return True
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def client(self, **kw):
        from indexd.client import Client

        return Client(self.socket, **kw)

    def call(self, method: str, **params):
        with self.client(timeout=60) as c:
            return c.call(method, **params)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self, sig=signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        """shutdown, then SIGTERM, then SIGKILL: never left running. One that ignored both
        first dumps its threads' stacks (SIGUSR1) and fails the test with them."""
        hung = None
        if self.proc and self.proc.poll() is None:
            try:
                self.call("shutdown")
                self.proc.wait(timeout=30)
            except Exception:  # noqa: BLE001 - fall back to a signal
                try:
                    self.kill(signal.SIGTERM)
                except subprocess.TimeoutExpired:
                    self.proc.send_signal(signal.SIGUSR1)
                    try:
                        wait_until(lambda: "most recent call first" in self.output(), timeout=10)
                    except AssertionError:
                        pass
                    hung = self.output()[-20000:]
        self.kill()
        if hasattr(self, "_out"):
            self._out.close()
        if hung is not None:
            raise AssertionError(f"indexd run stopped on neither shutdown nor SIGTERM; "
                                 f"its log and threads:\n{hung}")


# -- comparing a daemon's index with a fresh one-shot index -------------------

def fresh_snapshot(repo_path, tmp_path, name="fresh"):
    """A one-shot index of the same tree in a separate INDEXD_HOME."""
    home = tmp_path / name
    env = os.environ | {"INDEXD_HOME": str(home)}
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "work", str(repo_path)], env=env,
                   check=True, capture_output=True)
    subprocess.run([str(BIN / "indexd"), "index", "--json"], env=env, check=True,
                   capture_output=True)
    return store_snapshot(home)


def store_snapshot(home):
    from indexd.config import load_settings
    from indexd.store import Store

    settings = load_settings(env={"INDEXD_HOME": str(home)})
    store = Store(settings.paths.store_dir)
    entries = store.entries_where(None, ["path", "kind", "qualname", "start_line", "end_line",
                                         "content_hash"])
    files = store.file_records()
    return (sorted((r["path"], r["kind"], r["qualname"], r["start_line"], r["end_line"],
                    r["content_hash"]) for r in entries),
            sorted((f.path, f.hash, f.status) for f in files.values()))


def committed_file_rows(home) -> int:
    """Rows of the files table as committed so far, read without opening a Store (which
    may write its meta): 0 while the table does not exist yet."""
    import lancedb

    path = home / "data" / "lancedb"
    try:
        return lancedb.connect(str(path)).open_table("files").count_rows()
    except Exception:  # noqa: BLE001 - not created yet, or mid-commit: ask again
        return 0


def files_table_version(home) -> int:
    """The files table's version (one more per commit); 0 while it does not exist yet."""
    import lancedb

    try:
        return lancedb.connect(str(home / "data" / "lancedb")).open_table("files").version
    except Exception:  # noqa: BLE001 - not created yet, or mid-commit: ask again
        return 0


def assert_matches_fresh(home, repo_path, tmp_path, name="fresh"):
    got, want = store_snapshot(home), fresh_snapshot(repo_path, tmp_path, name)
    for i, what in ((1, "files"), (0, "entries")):
        extra, missing = set(got[i]) - set(want[i]), set(want[i]) - set(got[i])
        assert got[i] == want[i], (
            f"{what} differ from a fresh one-shot index: {len(extra)} extra, e.g. "
            f"{sorted(extra)[:3]}; {len(missing)} missing, e.g. {sorted(missing)[:3]}")


# -- processes (Linux /proc) ---------------------------------------------------

@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    start: int          # clock ticks after boot: tells the process from a later one reusing its pid
    cmdline: str

    def __str__(self) -> str:
        return f"pid {self.pid} (ppid {self.ppid}): {self.cmdline[:200]}"


def proc_info(pid: int) -> Proc | None:
    """The live process ``pid``; None when it is gone or a zombie (dead, waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()    # the name in (...) may hold spaces
    if fields[0] in ("Z", "X"):
        return None
    return Proc(pid, int(fields[1]), int(fields[19]), cmdline)


def children(pid: int) -> set[int]:
    """Direct children of ``pid``: a child is listed under the thread that forked it."""
    kids: set[int] = set()
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids.update(int(k) for k in fh.read().split())
        except OSError:
            pass    # the thread ended meanwhile
    return kids


def descendants(pid: int) -> list[Proc]:
    """Every live process below ``pid`` (children, their children, ...)."""
    seen: dict[int, Proc] = {}
    todo = [pid]
    while todo:
        for kid in children(todo.pop()):
            info = proc_info(kid)
            if kid not in seen and info is not None:
                seen[kid] = info
                todo.append(kid)
    return list(seen.values())


def still_alive(procs) -> list[Proc]:
    """Those of ``procs`` that still run (same pid *and* start time)."""
    alive = []
    for p in procs:
        now = proc_info(p.pid)
        if now is not None and now.start == p.start:
            alive.append(now)
    return alive


def kill_all(procs) -> None:
    for p in still_alive(procs):
        try:
            os.kill(p.pid, signal.SIGKILL)
        except OSError:
            pass


SPLIT_FOLDER = "minilm-split"


def install_split_model(site: Path, pieces: int, skip: tuple = ()):
    """The default model zipped under SPLIT_FOLDER/, cut in ``pieces``, each piece an
    installed distribution in ``site`` (those in ``skip`` left out), as the
    registry ships all-mpnet-base-v2 (indexd/enrich/split_model.py). ``site``
    must be on sys.path. Returns the SplitModel naming them."""
    import zipfile

    from indexd.enrich.embedder import default_model_path
    from indexd.enrich.split_model import SplitModel

    archive = site / "whole.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{SPLIT_FOLDER}/", "")
        for path in sorted(default_model_path().rglob("*")):
            if path.is_file():
                zf.write(path, f"{SPLIT_FOLDER}/{path.relative_to(default_model_path())}")
        zf.writestr(f"{SPLIT_FOLDER}/desktop.ini", "[.ShellClassInfo]\n")   # as the real zip has
    data = archive.read_bytes()
    archive.unlink()
    step = len(data) // pieces + 1
    parts = []
    for i in range(pieces):
        dist, member = f"indexd-test-part-{i:03d}", f"indexd_test_part_{i:03d}/whole.zip.{i:03d}"
        parts.append((dist, member))
        if i in skip:
            continue
        (site / member).parent.mkdir(parents=True)
        (site / member).write_bytes(data[i * step:(i + 1) * step])
        info = site / f"indexd_test_part_{i:03d}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
    return SplitModel("all-MiniLM-L6-v2", SPLIT_FOLDER, tuple(parts), "mpnet")
