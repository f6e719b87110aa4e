"""`indexctl`: the client command line. The only place that prints.

Talks to the daemon over its socket; when none runs, `search`, `symbols` and
`status` fall back to reading the store directly (read-only) and `realm`
edits the config file. Must stay fast: no lancedb, torch or engine import
at module level (`indexctl --help` and `status` start in well under 150 ms).

Exit codes: 0 ok, 1 no results, 2 usage, 3 daemon unreachable, 4 request error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import load_settings
from ..errors import ConfigError, DaemonNotRunning, IndexdError, InvalidParams, StoreError
from . import render

EXIT_OK, EXIT_EMPTY, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_ERROR = 0, 1, 2, 3, 4
# Methods that still answer from the store when the daemon is down.
LOCAL_OK = {"search", "symbols", "status", "realm.add", "realm.remove", "realm.list", "purge",
            "impact", "deps", "refs", "changes", "graph.export", "annotate", "annotations",
            "skipped", "tests.ingest", "tests.affected", "context", "owners", "summary"}


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _limit_flag(p: argparse.ArgumentParser) -> None:
    # None: the daemon's default (200); it checks the bound (1..10000) and says so
    p.add_argument("--limit", type=int, help="items per list (default 200, at most 10000); "
                   "the answer says how many exist")


TARGET_HELP = "a path, path::Qualified.name, or a symbol's name alone (urlsplit, Queue.put)"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="indexctl", description="Query and control the indexd daemon.")
    sub = p.add_subparsers(dest="cmd", required=True)

    realm = sub.add_parser("realm", help="manage realms (named sets of repos and folders)")
    rsub = realm.add_subparsers(dest="realm_cmd", required=True)
    ra = rsub.add_parser("add", help="add repos/folders to a realm (creating it)")
    ra.add_argument("name")
    ra.add_argument("paths", nargs="+")
    rr = rsub.add_parser("remove", help="remove a realm, or some of its repos")
    rr.add_argument("name")
    rr.add_argument("paths", nargs="*")
    rl = rsub.add_parser("list", help="list realms")
    for q in (ra, rr, rl):
        _json_flag(q)

    s = sub.add_parser("search", help="search symbols, sections and files")
    s.add_argument("query", nargs="+", help="words, an identifier or a sentence (quotes optional)")
    s.add_argument("--realm")
    s.add_argument("--repo", help="repo path or folder name")
    s.add_argument("--kind", help="function, class, method, section, key, file... (comma list)")
    s.add_argument("--lang", help="python, go, markdown... (comma list)")
    s.add_argument("--path", help="a repo-relative file or folder ('tests'), or a glob "
                                  "('src/**/*.py')")
    s.add_argument("--limit", type=int, default=20)
    s.add_argument("--mode", choices=["keyword", "semantic", "hybrid"], default=None)
    s.add_argument("--context", type=int, default=0, help="lines of code around each hit")
    s.add_argument("--files", action="store_true", help="rank files by their best entries")
    s.add_argument("--explain", action="store_true",
                   help="say why each hit ranks where it does (legs' ranks, second pass)")
    s.add_argument("--sync", action="store_true", help="wait until every change made so far is indexed")
    _json_flag(s)

    sy = sub.add_parser("symbols", help="outline of one file")
    sy.add_argument("path")
    _json_flag(sy)

    su = sub.add_parser("summary", help="what a file is for, and how it relates to the files "
                                        "it uses and that use it, in words")
    su.add_argument("path")
    su.add_argument("--top", type=int, help="relationships each way (default 5, at most 50)")
    _json_flag(su)

    cx = sub.add_parser("context", help="the code to read for a task within a token budget: "
                                        "search hits, then their callers, callees, tests, docs")
    cx.add_argument("query", nargs="+", help="the task in words (quotes optional)")
    cx.add_argument("--files", nargs="+", metavar="PATH",
                    help="files (or path::Symbol) the task is about: they seed the ranking")
    cx.add_argument("--budget", type=int, help="tokens (default 4000, at least 64)")
    cx.add_argument("--realm")
    cx.add_argument("--repo", help="repo path or folder name")
    cx.add_argument("--mode", choices=["keyword", "semantic", "hybrid"], default=None)
    _json_flag(cx)

    st = sub.add_parser("status", help="what is indexed, pending, skipped; index lag")
    st.add_argument("--watch", action="store_true", help="live view")
    st.add_argument("--oneline", action="store_true", help="one line for status bars")
    st.add_argument("--format", choices=["text", "waybar"], default="text")
    st.add_argument("--sync", action="store_true")
    _json_flag(st)

    ri = sub.add_parser("reindex", help="reindex paths (or everything) now")
    ri.add_argument("paths", nargs="*")
    ri.add_argument("--realm")
    ri.add_argument("--wait", action="store_true", help="return when done")
    _json_flag(ri)

    im = sub.add_parser("impact", help="what may break if TARGET changes (path, path::Symbol "
                                       "or a symbol's name)")
    im.add_argument("target", help=TARGET_HELP)
    im.add_argument("--depth", type=int, default=3)
    im.add_argument("--kinds", help="imports,references,tests,documents,config,co_change")
    _limit_flag(im)
    _json_flag(im)
    de = sub.add_parser("deps", help="what TARGET depends on")
    de.add_argument("target", help=TARGET_HELP)
    de.add_argument("--depth", type=int, default=1)
    de.add_argument("--kinds")
    _limit_flag(de)
    _json_flag(de)
    ow = sub.add_parser("owners", help="who wrote TARGET (path, path::Symbol or a symbol's name), "
                                       "by lines, from git blame: who should review a change to it")
    ow.add_argument("target", help=TARGET_HELP)
    ow.add_argument("--limit", type=int, help="owners listed (default 10, at most 100)")
    _json_flag(ow)
    rf = sub.add_parser("refs", help="references to one symbol: path::Qualified.name or its "
                                     "name alone")
    rf.add_argument("target", help=TARGET_HELP)
    _limit_flag(rf)
    _json_flag(rf)
    ch = sub.add_parser("changes", help="impact of the uncommitted (or since REV) git diff")
    ch.add_argument("repo", nargs="?", default=".")
    ch.add_argument("--since", help="a git revision (default: HEAD, i.e. staged + unstaged)")
    ch.add_argument("--depth", type=int, default=2)
    _limit_flag(ch)
    _json_flag(ch)
    gr = sub.add_parser("graph", help="export the relationship graph")
    gsub = gr.add_subparsers(dest="graph_cmd", required=True)
    ge = gsub.add_parser("export", help="edges as json, dot or graphml")
    ge.add_argument("--format", choices=["json", "dot", "graphml"], default="json")
    ge.add_argument("--scope", help="a realm, or a path (repo or folder or file)")
    _json_flag(ge)

    an = sub.add_parser("annotate", help="attach a note to a file, symbol (path::Sym) or edge ('a -> b')")
    an.add_argument("target")
    an.add_argument("text")
    an.add_argument("--author", default="user")
    _json_flag(an)
    al = sub.add_parser("annotations", help="list notes (optionally of one file), with stale flags")
    al.add_argument("path", nargs="?")
    _json_flag(al)

    sk = sub.add_parser("skipped", help="files withheld from the index (skipped, or secrets masked)"
                                         ", with the reason")
    sk.add_argument("--realm")
    sk.add_argument("--limit", type=int, default=1000, help="paths listed per repo")
    _json_flag(sk)

    te = sub.add_parser("tests", help="tests from real coverage")
    tsub = te.add_subparsers(dest="tests_cmd", required=True)
    ti = tsub.add_parser("ingest", help="covers edges from a coverage.py data file recorded with "
                                        "per-test contexts (--cov-context=test), or an LCOV "
                                        "tracefile with one TN: section per test")
    ti.add_argument("path", help="the data file, e.g. .coverage or lcov.info (told by content)")
    _json_flag(ti)
    ta = tsub.add_parser("affected", help="test files to run for the uncommitted diff (or "
                                          "--since REV, --staged, or TARGETs), ranked, with "
                                          "evidence and whether the selection is safe")
    ta.add_argument("targets", nargs="*", help="files or path::Symbol instead of a diff")
    what = ta.add_mutually_exclusive_group()
    what.add_argument("--since", help="a git revision (default: HEAD, staged + unstaged)")
    what.add_argument("--staged", action="store_true", help="the index vs HEAD only")
    ta.add_argument("--repo", default=".", help="the repo to diff (default: the current folder)")
    ta.add_argument("--depth", type=int, default=3)
    ta.add_argument("--format", choices=["text", "pytest"], default="text",
                    help="pytest: only the test file paths, relative to the current folder, "
                         "one a line (for pytest $(indexctl tests affected --format pytest))")
    _limit_flag(ta)
    _json_flag(ta)

    for name, text in (("pause", "stop indexing (changes are still collected)"),
                       ("resume", "resume indexing"),
                       ("purge", "drop old store versions now: deleted files' data leaves the disk")):
        _json_flag(sub.add_parser(name, help=text))

    sd = sub.add_parser("shutdown", help="stop the daemon")
    _json_flag(sd)

    sv = sub.add_parser("service", help="install/uninstall/status of the user service")
    sv.add_argument("action", choices=["install", "uninstall", "status"])
    sv.add_argument("--dry-run", action="store_true", help="print what would be written")
    _json_flag(sv)

    hk = sub.add_parser("hooks", help="git hooks that tell the daemon about commits and checkouts")
    hk.add_argument("action", choices=["install", "uninstall", "status"])
    hk.add_argument("repo", nargs="?", default=".", help="the git repository (default: .)")
    _json_flag(hk)

    dr = sub.add_parser("doctor", help="check the daemon, socket, limits, store, models, service")
    _json_flag(dr)

    tr = sub.add_parser("tray", help="system-tray icon that follows the daemon (extra: indexd[tray])")
    tr.add_argument("--state-file", help="append each state change as a JSON line to this file")

    au = sub.add_parser("audit", help="the query audit log (audit_log = true), newest last; "
                                      "reads the file, no daemon needed")
    au.add_argument("--since", type=_since, help="a duration (30s, 10m, 2h, 1d) or an ISO time")
    au.add_argument("--limit", type=int, default=100, help="at most this many (the newest)")
    _json_flag(au)

    ui = sub.add_parser("ui", help="open the web UI (needs indexd run --http), signed in with "
                                   "a one-time code")
    ui.add_argument("--url", action="store_true",
                    help="print the sign-in address instead of opening a browser (single use, "
                         "valid for a minute)")
    _json_flag(ui)
    return p


def _since(text: str):
    from ..audit import parse_since

    try:
        return parse_since(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code not in (0, None) else EXIT_OK
    if isinstance(getattr(args, "query", None), list):   # nargs="+": unquoted words
        args.query = " ".join(args.query)
    try:
        return dispatch(args)
    except DaemonNotRunning as exc:
        return _fail(args, exc, EXIT_UNREACHABLE)
    except IndexdError as exc:
        return _fail(args, exc, EXIT_ERROR)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _fail(args, exc: IndexdError, code: int) -> int:
    if getattr(args, "json", False):
        print(json.dumps({"error": exc.to_rpc()}))
    else:
        print(f"indexctl: {exc.message}", file=sys.stderr)
    return code


def dispatch(args) -> int:
    settings = _settings()
    if args.cmd == "realm":
        method = f"realm.{args.realm_cmd}"
        params = {} if args.realm_cmd == "list" else {
            "realm": args.name, "paths": [_abs_path(p) for p in args.paths]}
        result = call(settings, method, params)
        return _emit(args, result, render.realm)
    if args.cmd == "search":
        params = {k: getattr(args, k) for k in ("query", "realm", "repo", "kind", "lang", "path",
                                                  "limit", "mode", "context", "files", "explain", "sync")
                  if getattr(args, k) is not None and getattr(args, k) is not False}   # 0 is a value
        if "repo" in params:
            params["repo"] = _repo_arg(settings, params["repo"])
        if "path" in params:
            params |= _path_arg(settings, params.pop("path"), params.get("realm"))
        result = call(settings, "search", params)
        _emit(args, result, render.search)
        return EXIT_OK if result.get("results") else EXIT_EMPTY
    if args.cmd == "symbols":
        result = call(settings, "symbols", {"path": _abs_target(args.path)})
        _emit(args, result, render.symbols)
        return EXIT_OK if result.get("results") else EXIT_EMPTY
    if args.cmd == "summary":
        params = {"path": _abs_target(args.path), "top": args.top}
        result = call(settings, "summary", {k: v for k, v in params.items() if v is not None})
        return _emit(args, result, render.summary)
    if args.cmd == "context":
        params = {"query": args.query, "budget": args.budget, "realm": args.realm,
                  "mode": args.mode, "files": [_abs_target(f) for f in args.files or []] or None,
                  "repo": _repo_arg(settings, args.repo) if args.repo else None}
        result = call(settings, "context", {k: v for k, v in params.items() if v is not None})
        _emit(args, result, render.context)
        return EXIT_OK if result.get("items") else EXIT_EMPTY
    if args.cmd == "status":
        return _status(settings, args)
    if args.cmd == "reindex":
        params = {"paths": [_abs_path(p) for p in args.paths] or None, "realm": args.realm,
                  "wait": args.wait}
        return _control(args, call(settings, "reindex", params))
    if args.cmd in ("impact", "deps", "refs"):
        params = {"target": _abs_target(args.target), "limit": args.limit}
        if args.cmd != "refs":
            params |= {"depth": args.depth, "kinds": args.kinds}
        result = call(settings, args.cmd, {k: v for k, v in params.items() if v is not None})
        _emit(args, result, getattr(render, args.cmd))
        return EXIT_OK
    if args.cmd == "owners":
        params = {"target": _abs_target(args.target), "limit": args.limit}
        result = call(settings, "owners", {k: v for k, v in params.items() if v is not None})
        _emit(args, result, render.owners)
        return EXIT_OK if result.get("owners") else EXIT_EMPTY
    if args.cmd == "changes":
        params = {"repo": str(Path(args.repo).resolve()), "since": args.since, "depth": args.depth,
                  "limit": args.limit}
        result = call(settings, "changes", {k: v for k, v in params.items() if v is not None})
        _emit(args, result, render.changes)
        return EXIT_OK
    if args.cmd == "graph":
        scope = args.scope
        if scope and scope not in settings.realms:
            scope = _abs_target(scope)
        result = call(settings, "graph.export", {"format": args.format, "scope": scope})
        if args.json:
            print(json.dumps(result))
        else:
            print(result["text"])
        return EXIT_OK
    if args.cmd == "annotate":
        path, sep, sym = args.target.partition("::")
        target = _abs_target(path) + sep + sym if " -> " not in args.target else args.target
        result = call(settings, "annotate", {"target": target, "text": args.text, "author": args.author})
        return _emit(args, result, render.annotate)
    if args.cmd == "annotations":
        params = {"path": _abs_target(args.path)} if args.path else {}
        return _emit(args, call(settings, "annotations", params), render.annotations)
    if args.cmd == "skipped":
        params = {"limit": args.limit} | ({"realm": args.realm} if args.realm else {})
        return _emit(args, call(settings, "skipped", params), render.skipped)
    if args.cmd == "tests" and args.tests_cmd == "affected":
        return _tests_affected(settings, args)
    if args.cmd == "tests":
        params = {"path": _abs_path(args.path), "cwd": str(Path.cwd())}
        result = call(settings, "tests.ingest", params, timeout=600.0)
        return _emit(args, result, render.tests_ingest)
    if args.cmd in ("shutdown", "pause", "resume", "purge"):
        return _control(args, call(settings, args.cmd, {}))
    if args.cmd == "service":
        from ..service import service_command

        return _emit(args, service_command(settings, args.action, dry_run=args.dry_run),
                     render.generic)
    if args.cmd == "hooks":
        from .. import hooks

        action = {"install": hooks.install_hooks, "uninstall": hooks.uninstall_hooks,
                  "status": hooks.hooks_status}[args.action]
        return _emit(args, action(args.repo), _render_hooks)
    if args.cmd == "doctor":
        return _doctor(settings, args)
    if args.cmd == "audit":
        return _audit(settings, args)
    if args.cmd == "ui":
        return _ui(settings, args)
    if args.cmd == "tray":
        from .. import tray   # lazy: pystray and Pillow are the optional tray extra

        return tray.main(["--state-file", args.state_file] if args.state_file else [])
    return EXIT_USAGE


def _tests_affected(settings, args) -> int:
    """Exit 1 when no test file is selected (stdout then empty with --format pytest:
    note that a bare ``pytest $(...)`` would then run the whole suite)."""
    if args.targets and (args.since or args.staged):
        raise InvalidParams("give TARGETs, --since or --staged, not several")
    params = {"depth": args.depth, "limit": args.limit}
    if args.targets:
        params["targets"] = [_abs_target(t) for t in args.targets]
    else:
        params |= {"repo": str(Path(args.repo).resolve()), "since": args.since,
                   "staged": args.staged}
    result = call(settings, "tests.affected", {k: v for k, v in params.items() if v is not None})
    if args.format == "pytest" and not args.json:
        for line in render.pytest_args(result):
            print(line)
    else:
        _emit(args, result, render.tests_affected)
    return EXIT_OK if result.get("tests") else EXIT_EMPTY


def _settings():
    """A bad setting is the daemon's (or `indexd index`'s) to refuse; the client
    says so and carries on, so status and doctor still work."""
    try:
        return load_settings()
    except ConfigError as exc:
        if "key" not in exc.data:
            raise    # unreadable TOML or realms: nothing sensible to fall back on
        print(f"indexctl: warning: {exc.message}", file=sys.stderr)
        return load_settings(strict=False)


# The daemon runs in its own directory: every path argument is made absolute
# here, against the client's, before it is sent.
def _abs_path(path: str) -> str:
    """A filesystem path (symbols, reindex, realm): relative means the client's cwd."""
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else Path.cwd() / p)


def _repo_arg(settings, repo: str) -> str:
    """``--repo``: a folder name stays a name unless it is, from here, a repo of a realm."""
    full = str(Path(repo).expanduser().resolve())
    known = {r for repos in settings.realms.values() for r in repos}
    return full if full in known else repo


def _path_arg(settings, path: str, realm: str | None) -> dict:
    """``--path`` as the shell sees it: an absolute path, or one relative to here that
    exists, in a realm's repo is that repo and its repo-relative path; anything else
    (a glob, ``tests`` from a folder without one) is the repo-relative pattern as typed."""
    from ..pathglob import is_glob
    from ..realms import locate

    local = Path(path).expanduser()
    if is_glob(path) or not (local.is_absolute() or local.exists()):
        return {"path": path}
    try:
        found, repo, rel = locate(settings, str(local))
    except IndexdError:
        return {"path": path}
    if realm and found != realm:   # here is another realm's: the pattern is the asked realm's
        return {"path": path}
    return {"repo": repo} | ({"path": rel} if rel not in ("", ".") else {})   # a repo: all of it


def _abs_target(target: str) -> str:
    """Paths relative to the current directory become absolute; symbols stay."""
    path, sep, symbol = target.partition("::")
    p = Path(path).expanduser()
    if not p.is_absolute() and p.exists():
        path = str(p.resolve())
    return path + sep + symbol


def _render_hooks(result: dict) -> None:
    print(f"{result.get('repo')}: hooks in {result['hooks_dir']} ({result['hooks_dir_from']})")
    for h in result["hooks"]:
        state = h.get("action") or ("installed" if h["installed"] else
                                    "other hook" if h.get("other_hook") else "not installed")
        if h.get("installed") and not h.get("current"):
            state += ", outdated"
        chained = f" (chains {h['chained']})" if h.get("chained") else ""
        print(f"  {h['name']:14} {state}{chained}")
        if h.get("note"):
            print(f"    {h['note']}")
    if result.get("note"):
        print(result["note"])


def _doctor(settings, args) -> int:
    from ..doctor import FAIL, run_checks, summary

    checks = run_checks(settings)
    if args.json:
        print(json.dumps(summary(checks), indent=2))
    else:
        marks = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "-"}
        for c in checks:
            print(f"{marks.get(c.status, '?')} {c.name}: {c.detail}")
            if c.status != "ok" and c.fix:
                print(f"    fix: {c.fix}")
    return EXIT_ERROR if any(c.status == FAIL for c in checks) else EXIT_OK


def _audit(settings, args) -> int:
    from ..audit import audit_path, read_audit

    if args.limit < 1:
        print("indexctl: --limit must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    result = read_audit(audit_path(settings.paths), args.since, args.limit)
    result["enabled"] = settings.audit_log
    _emit(args, result, render.audit)
    return EXIT_OK if result["records"] else EXIT_EMPTY


def _ui(settings, args) -> int:
    from .ui import open_ui

    result = open_ui(settings, print_only=args.url)
    if args.json:
        print(json.dumps(result))
    elif args.url or not result["opened"]:
        print(result["url"])
    else:
        print(f"indexctl: opened the web UI (sign-in link valid {result['expires_in_s']:.0f} s)",
              file=sys.stderr)
    return EXIT_OK


def _control(args, result: dict) -> int:
    """A control command's answer; one that says it failed (a purge's upkeep) exits 4."""
    _emit(args, result, render.control)
    return EXIT_ERROR if result.get("error") else EXIT_OK


def _emit(args, result: dict, human) -> int:
    if args.json:
        print(json.dumps(result, indent=None if args.cmd == "search" else 2))
    else:
        human(result)
    return EXIT_OK


def call(settings, method: str, params: dict, timeout: float = 60.0, local: bool = True) -> dict:
    """Ask the daemon; fall back to the local store where that makes sense."""
    from ..client import Client

    try:
        with Client(settings.paths.socket, timeout=timeout) as client:
            return client.call(method, **params)
    except DaemonNotRunning:
        if not local or method not in LOCAL_OK or params.get("sync"):
            raise
    from .local import call_local

    result = call_local(settings, method, params)
    if isinstance(result, dict):
        result.setdefault("daemon", None)
    return result


def _status(settings, args) -> int:
    if args.watch:
        return render.watch_status(lambda: call(settings, "status", {}))
    quick = args.oneline or args.format == "waybar"   # status bars poll: stay cheap
    try:
        result = call(settings, "status", {"sync": True} if args.sync else {}, local=not quick)
    except DaemonNotRunning as exc:
        if not (args.oneline or args.format == "waybar"):
            raise
        result = {"daemon": None, "error": exc.message}
    except StoreError:
        if settings.paths.store_dir.exists():
            raise
        result = _first_run(settings)   # no daemon and no index yet: where to start
    if result.get("indexed") is False and not (args.json or quick):
        render.first_run(result)
        return EXIT_OK
    if args.oneline and args.json:
        print(json.dumps(render.oneline_json(result)))
    elif args.oneline:
        print(render.oneline(result))
    elif args.format == "waybar":
        print(json.dumps(render.waybar(result)))
    elif args.json:
        print(json.dumps(result, indent=2))
    else:
        render.status(result)
    return EXIT_OK


def _first_run(settings) -> dict:
    return {"daemon": None, "indexed": False, "store": str(settings.paths.store_dir),
            "realms": [{"name": name, "repos": [{"path": str(p)} for p in paths]}
                       for name, paths in sorted(settings.realms.items())]}


if __name__ == "__main__":
    sys.exit(main())
