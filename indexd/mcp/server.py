"""`indexd mcp`: the Model Context Protocol server for AI agents (stdio).

A THIN client of the running daemon: every tool is one JSON-RPC call over the
daemon's Unix socket (``indexd.client.Client``); nothing is indexed, loaded or
cached here, so it starts in about a second and stays small. When the daemon
is not running each tool answers an error text that says to run
``indexd run``.

stdout carries the MCP protocol; logs go to stderr only.

Answers are compact for a model's context: one line per hit
``path:start-end kind symbol — summary`` (code only when ``context`` > 0) and
a one-line footer with freshness (``index_lag_s``, ``stale``, ``pending``).

Built on the official SDK, mcp>=2 (``mcp.server.mcpserver.MCPServer``; it was
``FastMCP`` in mcp<2).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Literal

try:
    from pydantic import Field      # comes with the MCP SDK
except ImportError:                 # main() says how to install it
    def Field(*args, **kwargs):     # noqa: N802
        return None

from .. import __version__
from ..errors import (DaemonNotRunning, IndexdError, MethodNotFound,
                      NotImplementedYet, RequestTimeout)
from ..graph.model import EDGE_KINDS
from ..server import params
from ..server.params import Param

log = logging.getLogger("indexd.mcp")

# Seconds to wait for one daemon answer; reindex with wait=true gets the long one.
CALL_TIMEOUT_S = float(os.environ.get("INDEXD_MCP_TIMEOUT", "60"))
WAIT_TIMEOUT_S = float(os.environ.get("INDEXD_MCP_WAIT_TIMEOUT", "300"))
SUMMARY_CHARS = 160
MAX_LIST = 50          # items shown per impact bucket / status list
MAX_LIMIT = 1000       # the most an agent may ask per impact bucket (the daemon allows 10000)
MAX_JSON_CHARS = 4000  # fallback rendering of an unknown result shape
# Sent in `initialize` on each connection, so the daemon's audit log marks this
# server's requests transport "mcp" (indexd/audit.py MCP_CLIENT).
CLIENT_INFO = {"name": "indexd-mcp", "version": __version__}

INSTRUCTIONS = (
    "indexd is a local, always-fresh code index of the user's repositories (symbols, "
    "keyword and semantic search, an import/reference graph). Prefer index_search over "
    "grep for finding where something is defined or implemented, index_symbols for a "
    "file's outline, index_impact before changing a function or file, index_changes to "
    "see what the current diff may break, index_tests for the tests to run for it. Each "
    "answer ends with a freshness footer; if it says stale, results may miss the newest "
    "edits (index_file reindexes one file now)."
)


# ---------------------------------------------------------------- daemon calls

class ToolFailure(Exception):
    """An anticipated failure: its text is what the model reads."""


_SOCKET: Path | None = None   # `indexd mcp --socket PATH`


def _socket_path():
    if _SOCKET is not None:
        return _SOCKET
    from ..config import load_settings

    return load_settings().paths.socket


def _call(method: str, timeout: float = CALL_TIMEOUT_S, **params: Any) -> dict:
    """One request to the daemon; typed errors become ToolFailure texts."""
    from ..client import Client

    params = {k: v for k, v in params.items() if v is not None}
    try:
        path = _socket_path()
    except IndexdError as exc:
        raise ToolFailure(f"indexd config error: {exc.message}") from None
    try:
        with Client(path, timeout=timeout) as client:
            client.call("initialize", client_info=CLIENT_INFO)
            result = client.call(method, **params)
    except DaemonNotRunning:
        raise ToolFailure(
            f"the indexd daemon is not running (no daemon at {path}). Start it with "
            f"`indexd run` in a terminal (or install the user service once: "
            f"`indexctl service install`), then retry.") from None
    except (MethodNotFound, NotImplementedYet) as exc:
        raise ToolFailure(f"indexd {method}: not available in this daemon yet: "
                          f"{exc.message}") from None
    except RequestTimeout as exc:
        raise ToolFailure(f"indexd {method}: timed out after {timeout:.0f}s ({exc.message}); "
                          f"the daemon may be busy, retry shortly") from None
    except IndexdError as exc:
        hint = " (retryable)" if exc.retryable else ""
        raise ToolFailure(f"indexd {method} error{hint}: {exc.message}") from None
    return result if isinstance(result, dict) else {"result": result}


def _local_path(p: str | None) -> str | None:
    """The daemon resolves relative paths against ITS cwd; ours is the agent's
    project, so a relative path that exists here is sent absolute. Anything
    else (repo-relative, 'repo_name/path') goes as given."""
    if not p or os.path.isabs(p):
        return p
    return os.path.abspath(p) if os.path.exists(p) else p


def _target(t: str) -> str:
    path, sep, symbol = t.partition("::")
    return _local_path(path) + sep + symbol


# ---------------------------------------------------------------- formatting

def _one_line(text: Any, limit: int = SUMMARY_CHARS) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _lines(hit: dict) -> str:
    start, end = hit.get("start_line"), hit.get("end_line")
    if start is None:
        return ""
    return f":{start}" if end in (None, start) else f":{start}-{end}"


def _freshness(res: dict) -> str:
    lag = res.get("index_lag_s")
    if lag is None and res.get("stale") is None:
        return "index_lag_s=? stale=?"
    stale = bool(res.get("stale"))
    out = f"index_lag_s={lag if lag is not None else 0} stale={'true' if stale else 'false'}"
    if stale:
        out += f" pending={res.get('pending')} (results may miss the newest edits)"
    return out


def _repo_label(hits: list[dict]) -> tuple[str, bool]:
    repos = sorted({h.get("repo") for h in hits if h.get("repo")})
    return (", ".join(repos), len(repos) > 1)


def _hit_line(hit: dict, multi_repo: bool) -> str:
    path = hit.get("path") or "?"
    if multi_repo and hit.get("repo"):
        path = f"{os.path.basename(str(hit['repo']).rstrip('/'))}/{path}"
    parts = [f"{path}{_lines(hit)}", str(hit.get("kind") or "")]
    if hit.get("symbol"):
        parts.append(str(hit["symbol"]))
    if hit.get("also_at"):   # the symbol's other definitions in the file (overloads)
        parts.append("(also at lines " + ", ".join(map(str, sorted(hit["also_at"]))) + ")")
    line = " ".join(p for p in parts if p)
    summary = hit.get("summary") or hit.get("snippet")
    if summary:
        line += " — " + _one_line(summary)
    return line


def _code_block(code: str) -> list[str]:
    return ["    " + ln for ln in code.rstrip("\n").splitlines()]


def format_search(res: dict, context: int = 0) -> str:
    hits = res.get("results") or []
    repos, multi = _repo_label(hits)
    out = [f"repo {repos}" if repos and not multi else ""]
    for hit in hits:
        out.append(_hit_line(hit, multi))
        if context > 0 and hit.get("context"):
            out.extend(_code_block(hit["context"]))
    if not hits:
        out.append(f"no results for {res.get('query')!r}")
    total = res.get("total", len(hits))
    out.append(f"[{len(hits)} of {total} results · mode={res.get('mode')} · "
               f"{res.get('took_ms', '?')} ms · {_freshness(res)}{_shared(res)}]")
    return "\n".join(x for x in out if x)


def _shared(res: dict) -> str:
    """How many results came from the team's shared index, and of which commits."""
    shared = res.get("shared")
    if not shared:
        return ""
    commits = ",".join(f"{os.path.basename(r.rstrip('/'))}@{c[:12]}"
                       for r, c in sorted((shared.get("commits") or {}).items()))
    return f" · shared={shared.get('results', 0)}/{shared.get('of', 0)}" + (f" ({commits})" if commits else "")


def format_symbols(res: dict) -> str:
    out = [f"{res.get('repo')}/{res.get('path')}"]
    for hit in res.get("results") or []:
        sym = hit.get("symbol")
        depth = sym.count(".") if sym else 0
        label = f"{hit.get('kind')} {sym}" if sym else f"{hit.get('kind')}"
        line = f"{hit.get('start_line')}-{hit.get('end_line')} {'  ' * depth}{label}"
        if hit.get("summary"):
            line += " — " + _one_line(hit["summary"], 100)
        out.append(line)
    out.append(f"[{res.get('total', len(res.get('results') or []))} entries · {_freshness(res)}]")
    return "\n".join(out)


def _age(ts: Any) -> str:
    if not ts:
        return "never"
    s = max(0.0, time.time() - float(ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s / size:.0f}{unit} ago"
    return f"{s:.0f}s ago"


def format_status(res: dict) -> str:
    out = []
    d = res.get("daemon")
    if d:
        out.append(f"daemon pid {d.get('pid')} up {float(d.get('uptime_s') or 0):.0f}s · "
                   f"state {res.get('state', '?')} · index_lag_s={res.get('index_lag_s')} · "
                   f"pending {res.get('pending')}")
    emb = res.get("embedding") or {}
    if emb:
        ready = "ready" if emb.get("ready") else ("off" if not emb.get("enabled") else "loading")
        line = f"semantic: {ready} (model {emb.get('model')})"
        if emb.get("error"):
            line += f" error: {_one_line(emb['error'], 120)}"
        out.append(line)
    if res.get("error"):
        out.append(f"error: {_one_line(res['error'], 200)}")
    for realm in res.get("realms") or []:
        for repo in realm.get("repos") or []:
            pending = repo.get("pending", 0) or 0
            fresh = f"stale ({pending} pending)" if pending else "fresh"
            line = (f"{realm.get('name')}: {repo.get('repo')} — {repo.get('files', 0)} files, "
                    f"{repo.get('entries', 0)} entries, {fresh}, indexed "
                    f"{_age(repo.get('last_indexed'))}")
            if repo.get("watcher"):
                line += f", watcher {repo['watcher']}"
            if repo.get("failed"):
                line += f", {repo['failed']} parse failures"
            if repo.get("exists") is False:
                line += ", MISSING on disk"
            out.append(line)
    if not res.get("realms"):
        out.append("no realms configured; add one with index_realm action=add")
    out.append(f"[{_freshness(res)}]")
    return "\n".join(out)


def _impact_item(it: dict, multi: bool, said_before: set | None = None) -> str:
    path = it.get("path") or "?"
    if multi and it.get("repo"):
        path = f"{os.path.basename(str(it['repo']).rstrip('/'))}/{path}"
    line = ""
    for edge in it.get("via") or []:
        if isinstance(edge, dict) and edge.get("line") and str(edge.get("from", "")).endswith(
                it.get("path", "") + (f"::{it['symbol']}" if it.get("symbol") else "")):
            line = f":{edge['line']}"
            break
    if not line:
        line = _lines(it)
    parts = [f"{path}{line}", str(it.get("kind") or "")]
    if it.get("symbol"):
        parts.append(str(it["symbol"]))
    text = " ".join(p for p in parts if p)
    extra = []
    if it.get("distance") is not None:
        extra.append(f"d{it['distance']}")
    if it.get("score") is not None:
        extra.append(f"score {it['score']}")
    via = [e.get("kind") for e in it.get("via") or [] if isinstance(e, dict) and e.get("kind")]
    if via:
        extra.append("via " + ">".join(via))
    text += " — " + ", ".join(extra) if extra else ""
    # in words: what the file is for, and how the nearest hop uses the target
    if it.get("summary"):
        text += "\n      " + _one_line(it["summary"], 160)
    first = (it.get("via") or [None])[0]
    said = first.get("describe") if isinstance(first, dict) else None
    if said and said not in (said_before or ()):   # once per answer: tokens are the agent's
        text += "\n      " + _one_line(said, 200)
        if said_before is not None:
            said_before.add(said)
    return text


def format_impact(res: dict) -> str:
    out = []
    if "changed" in res:
        changed = res.get("changed") or []
        out.append(f"{len(changed)} changed in {res.get('repo')} since "
                   f"{res.get('since') or 'HEAD (uncommitted)'}:")
        for ch in changed[:MAX_LIST]:
            change = f" ({ch['change']})" if ch.get("change") else ""
            out.append("  " + _hit_line(ch, False) + change)
    elif res.get("target"):
        resolved = f" ({res['resolved']})" if res.get("resolved") else ""
        out.append(f"impact of {res['target']}{resolved}:")
    buckets = [b for b in ("affected", "tests", "docs") if b in res]
    items = [it for b in buckets for it in (res.get(b) or []) if isinstance(it, dict)]
    _, multi = _repo_label(items)
    said_before: set[str] = set()
    for b in buckets:
        rows = [it for it in (res.get(b) or []) if isinstance(it, dict)]
        total = res.get(f"{b}_total", len(rows))
        out.append((f"{b} ({len(rows)} of {total}):" if total > len(rows) else
                    f"{b} ({len(rows)}):") if rows else f"{b}: none")
        for it in rows[:MAX_LIMIT]:
            out.append("  " + _impact_item(it, multi, said_before))
        if total > min(len(rows), MAX_LIMIT):
            # the daemon's limit cut the list: say so, and how to see more
            out.append(f"  … and {total - min(len(rows), MAX_LIMIT)} more "
                       f"(raise limit, up to {MAX_LIMIT})")
    if not buckets and "changed" not in res:
        return format_generic(res)
    unresolved = res.get("unresolved") or []
    foot = [f"complete={'true' if res.get('complete', True) else 'false'}"]
    if res.get("incomplete_reason"):
        foot.append(f"({_one_line(res['incomplete_reason'], 160)})")
    if unresolved:
        foot.append(f"{res.get('unresolved_total', len(unresolved))} unresolved references")
    if res.get("took_ms") is not None:
        foot.append(f"{res['took_ms']} ms")
    if "index_lag_s" in res or "stale" in res:
        foot.append(_freshness(res))
    reviewers = (res.get("owners") or {}).get("reviewers") or []
    if reviewers:
        out.append("who should review: " + ", ".join(
            f"{p['name']} <{p['email']}> ({p['files']} files)" for p in reviewers))
    out.append("[" + " · ".join(foot) + "]")
    return "\n".join(out)


def format_tests(res: dict) -> str:
    """One line per test file (rank, path, score, why), the safety verdict, a pytest line."""
    what = ("targets " + ", ".join(res.get("targets") or []) if res.get("targets") else
            "staged changes" if res.get("staged") else
            f"changes since {res['since']}" if res.get("since") else "uncommitted changes")
    rows = [t for t in res.get("tests") or [] if isinstance(t, dict)]
    safe = "true" if res.get("safe") else "false"
    if not res.get("changed") and not res.get("targets") and not rows:
        return f"nothing changed ({what}) in {res.get('repo')}: no tests to run"
    out = [f"tests to run for {what} in {res.get('repo') or 'the targets'}: {len(rows)} file(s)"
           f" of {res.get('tests_total', len(rows))}, safe={safe}"]
    for t in rows:
        mark = "fallback" if t.get("fallback") else "trusted" if t.get("trusted") else "weak"
        ev = (t.get("evidence") or [{}])[0]
        how = ">".join(ev.get("how") or []) or "-"
        out.append(f"  {t.get('rank')}. {t['path']} — score {t.get('score')}, {mark}: "
                   f"{ev.get('changed')} <- {ev.get('test')} ({how})")
    if res.get("untested"):
        out.append("no tests at all: " + ", ".join(res["untested"]))
    if res.get("ruled_out"):
        gone = res["ruled_out"]
        out.append(f"ruled out by coverage ({len(gone)} reached by the graph, recorded on "
                   "unchanged code, never ran the change): " + ", ".join(gone[:10])
                   + (f" and {len(gone) - 10} more" if len(gone) > 10 else ""))
    if res.get("fallback"):
        out.append("not safe: " + _one_line(res["fallback"].get("reason") or "", 300))
    if rows:
        out.append("run (from the repo): pytest " + " ".join(t["path"] for t in rows))
    foot = [f"complete={'true' if res.get('complete', True) else 'false'}"]
    if res.get("incomplete_reason"):
        foot.append(f"({_one_line(res['incomplete_reason'], 160)})")
    if "index_lag_s" in res or "stale" in res:
        foot.append(_freshness(res))
    out.append("[" + " · ".join(foot) + "]")
    return "\n".join(out)


def _person(o: dict) -> str:
    share = f" {o['share'] * 100:.0f}%" if "share" in o else ""
    return f"{o.get('name')} <{o.get('email')}>{share}"


def format_owners(res: dict) -> str:
    """One line per author (lines, share, last commit day), then the recent commits."""
    where = f"{res.get('path')}" + (f"::{res['symbol']}" if res.get("symbol") else "")
    if not res.get("available"):
        return f"no owners for {where}: {res.get('reason')}"
    out = [f"owners of {where} ({res.get('lines')} lines):"]
    for o in res.get("owners") or []:
        day = time.strftime("%Y-%m-%d", time.gmtime(o["last_time"])) if o.get("last_time") else "?"
        out.append(f"  {o['lines']} lines {_person(o)}, last {day}")
    if res.get("uncommitted_lines"):
        out.append(f"  {res['uncommitted_lines']} lines uncommitted")
    if res.get("partial"):
        out.append(f"  partial: {res.get('partial_reason')}")
    for c in res.get("recent_commits") or []:
        day = time.strftime("%Y-%m-%d", time.gmtime(c["time"]))
        out.append(f"  {c['id'][:10]} {day} {c['author']}: {_one_line(c['summary'], 80)}")
    return "\n".join(out)


def format_summary(res: dict) -> str:
    out = [f"{res['path']}: {res.get('summary') or '(no summary yet)'}"]
    for name, title in (("uses", "uses"), ("used_by", "used by")):
        rows = res.get(name) or []
        out.append(f"{title} ({len(rows)}):" if rows else f"{title}: none")
        out += [f"  {r['path']} — {_one_line(r.get('describe') or '', 200)}" for r in rows]
    return "\n".join(out)


def format_context(res: dict) -> str:
    """A context pack: per item its place, view, tokens and why, then its text."""
    out = [f"context for {res.get('query')!r}:"]
    for it in res.get("items") or []:
        name = it.get("symbol") or it.get("kind") or ""
        out.append(f"{it.get('path')}{_lines(it)} {name} ({it.get('view')}, "
                   f"{it.get('tokens')} tokens) — {_one_line(it.get('why'), 200)}")
        out.extend(_code_block(it.get("text") or ""))
    if not res.get("items"):
        out.append("nothing found for this task")
    out.append(f"[{res.get('tokens')} of {res.get('budget')} tokens ({res.get('tokenizer')}) · "
               f"{len(res.get('items') or [])} items, {res.get('bodies', 0)} bodies, "
               f"{res.get('left_out', 0)} left out · {_freshness(res)}]")
    return "\n".join(out)


def format_generic(res: dict) -> str:
    text = json.dumps(res, separators=(",", ":"), default=str)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + "…"
    return text


def format_annotate(res: dict) -> str:
    if "annotated" not in res:
        return "annotated: " + format_generic(res)
    from ..cli.render import annotation_line

    return annotation_line(res, str(res.get("repo")))


def format_realm(res: dict) -> str:
    if "realms" in res:
        if not res["realms"]:
            return ("no realms configured; add one with index_realm action=add realm=NAME "
                    "paths=[DIR]")
        out = []
        for r in res["realms"]:
            repos = r.get("repos") or []
            out.append(f"{r.get('name')}: " + (", ".join(map(str, repos)) or "(no repos)"))
        return "\n".join(out)
    if "added" in res:
        added = ", ".join(map(str, res.get("added") or [])) or "nothing new"
        return (f"realm {res.get('realm')}: added {added}; repos now: "
                f"{', '.join(map(str, res.get('repos') or []))}. Indexing runs in the background "
                f"(index_status shows progress).")
    if "queued" in res:
        waited = "true" if res.get("waited") else "false"
        return f"reindex queued: {res['queued']} (waited={waited}) [{_freshness(res)}]"
    return format_generic(res)


def _render(fmt, res: dict, *args) -> str:
    """A result shape this formatter does not know still reaches the model."""
    try:
        return fmt(res, *args)
    except Exception:  # noqa: BLE001 - fall back to compact JSON
        log.exception("formatting %s failed", getattr(fmt, "__name__", fmt))
        return format_generic(res)


# ---------------------------------------------------------------- tool params
# A tool's params are its method's rows in server/params.py, the table the
# daemon validates with and the OpenAPI document is built from. What a tool
# offers differently is an override on top of a row (a smaller limit keeps an
# agent's answer short; paths are relative to the agent's project here), or a
# Param of its own for what the method does not take.

_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool,
          "strings": list[str], "kinds": str | list[Literal[EDGE_KINDS]],
          "object": dict[str, Any]}


def _annotation(p: Param):
    """A row as the type the SDK builds the tool's input schema from and checks calls
    against (pydantic), so a bound outside the row is refused before any request."""
    base = Literal[p.enum] if p.enum else _TYPES[p.type]
    if not p.required and p.default is None:
        base = base | None            # absent; _call drops it, as the daemon reads None
    return Annotated[base, Field(description=p.description or None, ge=p.lo, le=p.hi,
                                 min_length=1 if p.nonempty else None)]


def _params_from(method: str, **overrides: dict | Param):
    """Give a tool function (plain names, no defaults) its annotations and defaults
    from ``method``'s rows, each updated by ``overrides[name]`` (a dict of Param
    fields) or replaced by a Param of the tool's own."""
    def apply(fn):
        names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        rows = [o if isinstance(o := overrides.get(name, {}), Param)
                else dataclasses.replace(params.param(method, name), **o) for name in names]
        optional = [p for p in rows if not p.required]
        if rows[len(rows) - len(optional):] != optional:
            raise TypeError(f"{fn.__name__}: required params must come first")
        fn.__annotations__ = {p.name: _annotation(p) for p in rows} | {"return": str}
        fn.__defaults__ = tuple(p.default for p in optional) or None
        fn.params_from = (method, overrides)    # what tests/mcp/test_mcp_params.py checks
        return fn

    return apply


_BUCKETS = dict(default=MAX_LIST, hi=MAX_LIMIT, description=(
    "items per bucket (affected, tests, docs); each says how many exist"))
_PROJECT_FILE = "(absolute, or relative to the project)"


# ---------------------------------------------------------------- tools


# Smaller limits and depths than the daemon's keep an agent's answer short.
@_params_from("search", limit=dict(default=10, hi=200))
def index_search(query, mode, realm, repo, kind, lang, path, limit, context) -> str:
    res = _call("search", query=query, mode=mode, realm=realm, repo=_local_path(repo), kind=kind,
                lang=lang, path=path, limit=limit, context=context)
    return _render(format_search, res, context)


@_params_from("impact", depth=dict(default=2), limit=_BUCKETS)
def index_impact(target, depth, kinds, limit) -> str:
    res = _call("impact", target=_target(target), depth=depth, kinds=kinds, limit=limit)
    return _render(format_impact, res)


@_params_from("symbols", path=dict(description=f"file path {_PROJECT_FILE}"))
def index_symbols(path) -> str:
    res = _call("symbols", path=_local_path(path))
    return _render(format_symbols, res)


@_params_from("summary")
def index_summary(path, top) -> str:
    res = _call("summary", path=_target(path), top=top)
    return _render(format_summary, res)


@_params_from("owners", limit=dict(default=5, description="owners listed"))
def index_owners(target, limit) -> str:
    res = _call("owners", target=_target(target), limit=limit)
    return _render(format_owners, res)


@_params_from("status")
def index_status() -> str:
    res = _call("status")
    return _render(format_status, res)


@_params_from("realm.add", action=Param(
    "action", "string", "list realms; add repos to a realm (created if new); reindex a realm, "
                        "some paths, or everything",
    default="list", enum=("add", "list", "reindex")),
    realm=dict(required=False, description="realm name (required for add)"),
    paths=dict(required=False, description="repo folders for add; files/folders for reindex"))
def index_realm(action, realm, paths) -> str:
    if action == "list":
        return _render(format_realm, _call("realm.list"))
    if action == "add":
        if not realm or not paths:
            raise ToolFailure("index_realm add needs realm and paths (repo folders)")
        res = _call("realm.add", realm=realm, paths=[_local_path(p) for p in paths])
        return _render(format_realm, res)
    res = _call("reindex", realm=realm, paths=[_local_path(p) for p in paths] if paths else None,
                wait=False)
    return _render(format_realm, res)


@_params_from("reindex", path=Param(
    "path", "string", f"file to reindex now {_PROJECT_FILE}; inside a configured realm",
    required=True))
def index_file(path) -> str:
    res = _call("reindex", timeout=WAIT_TIMEOUT_S, paths=[_local_path(path)], wait=True)
    return f"reindexed {path} [{_freshness(res)}]"


@_params_from("annotate")
def index_annotate(target, text, author) -> str:
    res = _call("annotate", target=_target(target), text=text, author=author)
    return _render(format_annotate, res)


@_params_from("changes", limit=_BUCKETS,
              repo=dict(required=True, description=f"repo folder {_PROJECT_FILE}"))
def index_changes(repo, since, limit) -> str:
    res = _call("changes", repo=_local_path(repo), since=since, limit=limit)
    return _render(format_impact, res)


@_params_from("tests.affected", limit=dict(_BUCKETS, description="test files listed"),
              repo=dict(description=f"repo folder {_PROJECT_FILE}; default: the project"))
def index_tests(repo, since, staged, targets, limit) -> str:
    res = _call("tests.affected", repo=_local_path(repo or "."), since=since,
                staged=staged or None, targets=[_target(t) for t in targets] if targets else None,
                limit=limit)
    return _render(format_tests, res)


@_params_from("context", files=dict(description=(
    "files or 'path::Qualified.name' the task is about (absolute, or relative to the "
    "project): their neighbours rank higher")))
def index_context(query, files, budget, realm) -> str:
    res = _call("context", query=query, files=[_target(f) for f in files] if files else None,
                budget=budget, realm=realm)
    return _render(format_context, res)


TOOLS = [
    (index_context, "The code to read for a task, within a token budget: the best search hits, "
                    "then their callers, callees, tests and docs ranked by PageRank over the "
                    "relationship graph (seeded by the hits and the files you name), as "
                    "signatures plus the most relevant bodies, each with why it is there. Use "
                    "it first on a new task instead of several searches."),
    (index_search, "Search the code index of the user's repositories. Returns one line per hit: "
                   "`path:start-end kind symbol — summary` (code with context>0), then a "
                   "freshness footer. Faster and more precise than grep for definitions."),
    (index_impact, "What may break if a file or symbol changes: files/symbols that import, call "
                   "or reference it (transitively up to depth), plus the tests and docs that "
                   "cover it, ranked by score."),
    (index_symbols, "Outline of one file: every class/function/method with its line range, in "
                    "file order."),
    (index_summary, "What a file is for (its summary) and how it relates to the files it uses "
                    "and that use it, one sentence each (e.g. 'app.py imports Blueprint from "
                    "blueprints.py and calls register 3 times'). Read it before opening a file."),
    (index_owners, "Who wrote a file or symbol, from git blame: authors by lines and share, "
                   "their latest commit, the recent commits; uncommitted lines are nobody's. "
                   "Use it to say who should review a change."),
    (index_status, "Index health: per repo file/entry counts, pending changes, staleness, "
                   "watcher state; plus daemon lag and the semantic model's state."),
    (index_realm, "Manage realms (named groups of repos): list them, add repo folders (they get "
                  "indexed and watched), or queue a reindex of a realm or some paths."),
    (index_file, "Reindex one file right now and wait until it is searchable (use after writing "
                 "a file when the footer says stale)."),
    (index_annotate, "Attach a note to a file or symbol (e.g. a finding, a gotcha) so later "
                     "searches show it."),
    (index_changes, "Impact of a repo's git diff: the changed symbols (uncommitted, or since a "
                    "revision) and what they may break, with affected tests and docs."),
    (index_tests, "The test files to run for a change (uncommitted, staged, since a revision, "
                  "or given files/symbols), ranked, each with its evidence chain, and whether "
                  "the selection is safe (every changed symbol reached by a resolved or "
                  "covered path); when not, every test file importing the changed module."),
]


def _wrap(fn):
    """ToolFailure -> a CallToolResult with is_error=True and just our text (a
    raised ToolError would get the SDK's "Error executing tool ..." prefix)."""
    import functools

    from mcp.types import CallToolResult, TextContent

    @functools.wraps(fn)
    def tool(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ToolFailure as exc:
            log.info("%s: %s", fn.__name__, exc)
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)

    return tool


def build_server():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("indexd", instructions=INSTRUCTIONS, version=__version__,
                       log_level="WARNING")
    for fn, description in TOOLS:
        # Blocking functions: the SDK runs them in a worker thread.
        server.add_tool(_wrap(fn), name=fn.__name__, description=description,
                        structured_output=False)
    return server


def main(socket: str | None = None) -> int:
    global _SOCKET
    if socket:
        _SOCKET = Path(socket).expanduser()
    # stdout is the protocol: everything we log goes to stderr.
    level = os.environ.get("INDEXD_MCP_LOG", "WARNING").upper()
    if not isinstance(logging.getLevelName(level), int):
        level = "WARNING"
    logging.basicConfig(stream=sys.stderr, level=level,
                        format="indexd-mcp %(levelname)s %(name)s: %(message)s")
    try:
        server = build_server()
    except ImportError as exc:
        print(f"indexd mcp: the MCP SDK is missing ({exc}); install it with: "
              f"pip install 'indexd[mcp]' (or pip install 'mcp>=2')", file=sys.stderr)
        return 4
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
