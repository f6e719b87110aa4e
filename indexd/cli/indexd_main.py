"""`indexd`: the engine's command line (index, run, reset, mcp).

This side may import the engine; `indexctl` (cli/indexctl.py) must not.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from contextlib import contextmanager

from ..config import load_settings
from ..errors import IndexdError

EXIT_OK, EXIT_USAGE, EXIT_ERROR = 0, 2, 4
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as a shell reports Ctrl-C


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="indexd", description="Local code index daemon.")
    sub = p.add_subparsers(dest="cmd", required=True)
    ix = sub.add_parser("index", help="index once and exit")
    ix.add_argument("paths", nargs="*", help="only these files/folders (inside a realm)")
    ix.add_argument("--realm", help="only this realm (default: all)")
    ix.add_argument("--json", action="store_true", help="JSON lines progress and result")
    ix.add_argument("--workers", type=int, help="parser processes (default: one per core)")
    ix.add_argument("--max-file-size", type=int, help="skip files larger than this (bytes)")
    ix.add_argument("--no-embed", action="store_true",
                    help="structure and keywords only: do not compute vectors")
    run = sub.add_parser("run", help="run the daemon in the foreground")
    run.add_argument("--json", action="store_true", help="log JSON lines to stderr")
    run.add_argument("--http", help="also serve the REST API on HOST:PORT (loopback)")
    run.add_argument("--http-allow-remote", action="store_true", help="allow a non-loopback --http host")
    run.add_argument("--no-embed", action="store_true", help="keyword only: do not load the model")
    pb = sub.add_parser("publish", help="write a realm's index, as committed, to a shared index")
    pb.add_argument("--realm", required=True, help="the realm to publish")
    pb.add_argument("--to", required=True, metavar="URI",
                    help="s3://bucket/prefix (credentials from the AWS environment) or a path")
    pb.add_argument("--repo", action="append", metavar="PATH",
                    help="only this repo of the realm (repeatable); default: every repo")
    pb.add_argument("--force", action="store_true", help="rewrite shards that are unchanged")
    pb.add_argument("--purge", metavar="PATH", action="append",
                    help="instead: remove this file or folder (a path in the realm) from the "
                         "published index, history included (repeatable)")
    pb.add_argument("--json", action="store_true", help="JSON lines: one per repo, then done")
    rs = sub.add_parser("reset", help="delete the index (config and caches are kept)")
    rs.add_argument("--yes", action="store_true", help="do not ask")
    rs.add_argument("--json", action="store_true")
    sub.add_parser("paths", help="print where config, data, logs and socket live").add_argument(
        "--json", action="store_true")
    mcp = sub.add_parser("mcp", help="MCP server over stdio for AI agents (needs the daemon)")
    mcp.add_argument("--socket", help="the daemon's socket (for MCP hosts that start this "
                                      "with a bare environment); default: as indexctl finds it")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "index":
            return cmd_index(args)
        if args.cmd == "run":
            from ..daemon import run_daemon

            return run_daemon(load_settings(), http=args.http, embed=not args.no_embed,
                              http_allow_remote=args.http_allow_remote)
        if args.cmd == "reset":
            return cmd_reset(args)
        if args.cmd == "publish":
            from .publish_cmd import cmd_publish

            return cmd_publish(args)
        if args.cmd == "mcp":
            from ..mcp.server import main as mcp_main

            return mcp_main(socket=args.socket)
        if args.cmd == "paths":
            paths = load_settings().paths.to_json()
            print(json.dumps(paths, indent=2) if args.json else
                  "\n".join(f"{k:12} {v}" for k, v in paths.items()))
            return EXIT_OK
    except IndexdError as exc:
        _error(exc, getattr(args, "json", False))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return EXIT_USAGE


def _error(exc: IndexdError, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"error": exc.to_rpc()}), flush=True)
    else:
        print(f"indexd: error: {exc.message}", file=sys.stderr)


def _instance_lock(settings):
    """Take the daemon's instance lock for a one-shot command: (fd, None), or
    (None, the live daemon's pid) when a daemon holds it."""
    from ..daemon import take_instance_lock

    try:
        return take_instance_lock(settings), None
    except IndexdError as exc:
        pid = exc.data.get("pid")
        if pid is None:
            raise
        return None, pid


def cmd_index(args) -> int:
    import os

    settings = load_settings(flags={"workers": args.workers, "max_file_size": args.max_file_size})
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if not settings.realms:
        raise IndexdError("no realms configured; add one first: indexctl realm add NAME DIR...")
    # Two writers on one store would race: beside a live daemon, the daemon does the work.
    fd, pid = _instance_lock(settings)
    if fd is None:
        return _index_by_daemon(settings, args, pid)
    try:
        return _index_here(settings, args)
    finally:
        os.close(fd)


def _index_by_daemon(settings, args, pid) -> int:
    import os

    from ..client import Client

    params = {"wait": True, "realm": args.realm}
    if args.paths:
        params["paths"] = [os.path.abspath(p) for p in args.paths]
    if not args.json:
        print(f"indexd: a daemon is running (pid {pid}): it indexes; waiting for it to finish",
              file=sys.stderr)
    with Client(settings.paths.socket, timeout=900) as client:
        result = client.call("reindex", **params)
    result = {"event": "done", "daemon": {"pid": int(pid) if str(pid).isdigit() else pid}} | result
    print(json.dumps(result) if args.json else
          f"indexd: the daemon (pid {pid}) reindexed; pending {result.get('pending', 0)}, "
          f"lag {result.get('index_lag_s', 0)}s")
    return EXIT_OK


def _index_here(settings, args) -> int:
    embed = not args.no_embed and settings.embed_model != "off"
    # Nothing changed (the sidecar proves it): answer without importing the store.
    if not args.paths and not embed and _unchanged(settings, args):
        return EXIT_OK
    from .. import stat_sidecar
    from ..pipeline import Indexer, enough_files_for_a_pool, parse_pool
    from ..realms import locate
    from ..store import Store
    only = None
    if args.paths:
        only = {}
        for path in args.paths:
            realm, repo, rel = locate(settings, path)
            only.setdefault((realm, repo), []).extend(_expand(repo, rel))
    done_events: list[dict] = []
    # JSON: "done" stays the last line (scripts read it), with the embed result in it.
    progress = (_json_progress_holding(done_events) if args.json else _tty_progress())
    # A store without a files table parses everything: its workers start
    # before the store opens (they import while lancedb imports), if the
    # trees hold enough files for any batch to go to them.
    cold = (not (settings.paths.store_dir / "files.lance").exists()
            and enough_files_for_a_pool(settings, args.realm))
    with parse_pool(settings, start=cold) as pool, _first_ctrl_c_stops(args.json) as stop:
        store = Store(settings.paths.store_dir, retention_s=settings.version_retention_s)
        indexer = Indexer(settings, store, on_progress=progress, pool=pool)
        indexer.should_stop = stop.is_set
        report = indexer.index(args.realm, only)
    if report.cut:
        return _interrupted(report, progress, done_events, args.json)
    with report.stages.timed("compact"):
        _compact(store)
    for event in done_events:   # held back: the compaction is part of the breakdown
        event["stages"] = report.stages.to_json()
        event["removed_repos"] = report.to_json()["removed_repos"]
    if not args.json:
        progress.close()
        _print_report(report)
    embedded = None
    if embed:
        embedded = _embed_here(settings, store, args.json, args.realm)
    if only is None:   # after the run's last commit: the next warm run may trust it
        stat_sidecar.write(store, settings, settings.realm_repos(args.realm))
    if args.json:
        for event in done_events:
            print(json.dumps(event | ({"embed": embedded} if embedded else {})), flush=True)
    return EXIT_OK


@contextmanager
def _first_ctrl_c_stops(as_json: bool):
    """An Event the first Ctrl-C sets (the run then writes the files it parsed and
    stops); a second one interrupts at once, as Ctrl-C does elsewhere."""
    stop = threading.Event()

    def first(signum, frame):
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if not as_json:
            print("\nindexd: stopping after the files in hand (Ctrl-C again to quit at once)",
                  file=sys.stderr, flush=True)

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    before = signal.signal(signal.SIGINT, first)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, before)


def _interrupted(report, progress, done_events: list, as_json: bool) -> int:
    """A run a Ctrl-C cut: what was parsed is stored; the next run does the rest."""
    if as_json:
        for event in done_events:
            print(json.dumps(event | {"interrupted": True}), flush=True)
    else:
        progress.close()
        print(f"indexd: interrupted: {report.parsed} files parsed and stored, {report.cut} left; "
              "run `indexd index` again to finish", file=sys.stderr)
    return EXIT_INTERRUPTED


def _unchanged(settings, args) -> bool:
    """Report "nothing changed" from the stat cache's sidecar, if it can show it."""
    from ..stat_sidecar import unchanged

    done = unchanged(settings, args.realm)
    if done is None:
        return False
    if args.json:   # the events a planned run prints, in the same order
        plan = {"event": "plan", "files": done["files"], "to_check": 0,
                "unchanged": done["unchanged"], "deleted": 0}
        print(json.dumps(plan), json.dumps(done), sep="\n", flush=True)
    else:
        print(f"indexd: nothing changed: {done['files']} files, none parsed "
              f"({done['seconds']:.2f}s)")
    return True


def _shared_seeder(settings, store, realm: str | None, as_json: bool):
    """Before the model runs: vectors from the realms' shared indexes (shared_index/)."""
    wanted = {r: uri for r, uri in settings.shared.items() if realm in (None, r)}
    if not wanted:
        return None

    def seed(model_id: str) -> list[dict]:
        from ..shared_index.subscribe import seed_realm

        out = []
        for name, uri in sorted(wanted.items()):
            report = seed_realm(settings, store, name, uri, model_id)
            out.append(report.to_json())
            if as_json:
                print(json.dumps({"event": "shared"} | report.to_json()), flush=True)
            else:
                print(_shared_line(report), flush=True)
        return out
    return seed


def _shared_line(report) -> str:
    if report.error:
        return f"indexd: shared index {report.uri} not used ({report.error}); embedding locally"
    parts = []
    for s in report.shards:
        what = (f"{s.vectors} vectors for {s.files_matched} of {s.files_local} files, "
                f"commit {s.commit[:12] or '-'}" if s.status == "used" else
                f"{s.status.replace('_', ' ')}" + (f": {s.reason}" if s.reason else ""))
        parts.append(f"  {s.repo}: {what}")
    return f"indexd: shared index {report.uri}:\n" + "\n".join(parts)


def _embed_here(settings, store, as_json: bool, realm: str | None = None) -> dict:
    """Vectors for every entry that lacks one, as the daemon would compute them."""
    from ..enrich.embed_all import embed_missing

    progress = _json_progress if as_json else _tty_progress("embedding")
    report = embed_missing(store, settings, on_progress=progress,
                           seed=_shared_seeder(settings, store, realm, as_json))
    if report.total:
        _compact(store)
    if as_json:
        return report.to_json()
    progress.close()
    if report.error:
        print(f"indexd: not embedded ({report.error}); keyword search works, and the daemon "
              "embeds when it can load the model", file=sys.stderr)
    elif report.total:
        # texts, not entries: a documented entry has two (enrich/texts.py, "pooled")
        rate = report.embedded / report.seconds if report.seconds else 0.0
        print(f"indexd: embedded {report.total} entries: {report.embedded} texts computed, "
              f"{report.reused} entries from the cache ({report.seconds:.1f}s, {rate:.0f} texts/s"
              + (f", {report.runtime})" if report.runtime else ")"))
    return report.to_json()


def _compact(store) -> None:
    """Compact the store and drop every old version.

    Here the one-shot holds the instance lock: no daemon reads this store, so
    there are no readers to protect, and deleted files' text leaves the disk
    now rather than at some later purge.
    """
    store.optimize(purge=True)
    store.ensure_fts()   # a purge that rewrote the entries dropped the index


def _expand(repo: str, rel: str) -> list[str]:
    """A folder argument means every file under it (the planner filters)."""
    from pathlib import Path

    root = Path(repo)
    target = root / rel if rel != "." else root
    if target.is_dir():
        return [p.relative_to(root).as_posix() for p in target.rglob("*") if p.is_file()]
    return [rel]


def _json_progress(event: dict) -> None:
    print(json.dumps(event), flush=True)


def _json_progress_holding(held: list):
    """JSON lines progress that keeps the "done" event back for the caller."""
    def emit(event: dict) -> None:
        if event.get("event") == "done":
            held.append(event)
        else:
            _json_progress(event)
    return emit


class _tty_progress:
    """A rich progress bar on a terminal (with an ETA); quiet otherwise."""

    def __init__(self, label: str = "indexing"):
        self.bar = None
        self.task = None
        self.label = label
        if sys.stderr.isatty():
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress("[progress.description]{task.description}", BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                transient=True)

    def __call__(self, event: dict) -> None:
        if self.bar is None:
            return
        if event["event"] in ("plan", "embed_plan"):
            total = event.get("to_check", event.get("total"))
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        elif event["event"] in ("progress", "embed_progress") and self.task is not None:
            self.bar.update(self.task, completed=event["done"])

    def close(self) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.stop()


def _print_report(report) -> None:
    r = report
    for note in r.shared_notes:
        print(f"indexd: shared rows not used for {note['repo']}: {note['reason']}")
    for realm, repo in r.removed_repos:
        print(f"indexd: {repo} is in no realm now ({realm} before): its rows left the index")
    if r.parsed == 0 and r.shared == 0 and r.deleted == 0 and r.touched == 0:
        print(f"indexd: nothing changed: {r.files} files, none parsed ({r.seconds:.2f}s)")
        return
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(r.skipped.items())) or "none"
    copied = f"{r.shared} copied from the shared index, " if r.shared else ""
    print(f"indexd: {r.files} files: {r.parsed} parsed, {copied}{r.unchanged} unchanged, "
          f"{r.touched} touched, {r.deleted} deleted, {r.failed} with parse errors; "
          f"{r.entries} entries; skipped: {skipped} ({r.seconds:.2f}s)")


def cmd_reset(args) -> int:
    from ..store import Store

    import os

    settings = load_settings()
    fd, pid = _instance_lock(settings)
    if fd is None:
        raise IndexdError(f"indexd is running (pid {pid}) and uses this index; stop it first "
                          "with: indexctl shutdown (then run indexd reset again)", {"pid": pid})
    try:
        if not args.yes and sys.stdin.isatty():
            answer = input(f"delete the index at {settings.paths.store_dir}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                return EXIT_OK
        Store.destroy(settings.paths.store_dir)
    finally:
        os.close(fd)
    print(json.dumps({"reset": str(settings.paths.store_dir)}) if args.json
          else f"indexd: removed {settings.paths.store_dir}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
