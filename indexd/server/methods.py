"""The method table: one implementation of every request, whoever asks.

The socket server, the REST API and the CLI's read-only fallback (no daemon
running) all call ``Methods.call``. Handlers validate params, raise typed
errors, and return JSON-ready dicts. The daemon-only parts (reindex,
subscribe, shutdown, live status) go through the optional ``engine``.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from .. import __version__
from ..audit import AuditLog, Origin, transport_of
from ..config import Settings
from ..errors import (InvalidParams, MethodNotFound, NotImplementedYet, RealmError, StoreError,
                      describe_store_error)
from ..graph.targets import looks_like_symbol
from ..model import REDACTED
from ..owners.targets import in_one_repo
from ..query.filters import check_filters, check_repo
from ..query.search import SearchRequest, keyword_search, outline
from ..realms import add_repos, list_realms, locate, remove_repos
from ..shared_index.provenance import IMPACT_LISTS, mark as mark_shared
from .params import LIST_LIMIT, LIST_LIMIT_MAX, TIMEOUT_MAX_S, validate

PROTOCOL_VERSION = 1
REALM_APPLY_WAIT_S = 30     # realm add/remove answer once the worker applied them
STATUS_COUNTS = ("indexed", "skipped", "failed")


class Methods:
    def __init__(self, settings_provider, store, engine=None):
        # settings_provider: () -> Settings, so config reloads are seen.
        self._settings = settings_provider
        self.store = store
        self.engine = engine
        self.audit = AuditLog(settings_provider)
        self.started = time.time()
        self.table = {
            "initialize": self.initialize, "search": self.search, "symbols": self.symbols,
            "status": self.status, "impact": self.impact, "deps": self.deps,
            "refs": self.refs, "changes": self.changes, "graph.export": self.graph_export,
            "annotate": self.annotate, "annotations": self.annotations,
            "owners": self.owners,
            "pause": self.pause, "resume": self.resume, "purge": self.purge,
            "skipped": self.skipped,
            "realm.add": self.realm_add, "realm.remove": self.realm_remove,
            "realm.list": self.realm_list, "reindex": self.reindex,
            "subscribe": self.subscribe, "shutdown": self.shutdown,
            "tests.ingest": self.tests_ingest, "tests.affected": self.tests_affected,
            "context": self.context,
            "summary": self.summary,
        }

    @property
    def settings(self) -> Settings:
        return self._settings()

    async def call(self, method: str, params: dict, conn=None,
                   origin: Origin | None = None) -> dict:
        """Answer one request; every door (socket, REST) comes through here, so this is
        where the audit log sees them all. ``origin``: who asked, when not ``conn``."""
        started, result, error = time.monotonic(), None, None
        try:
            result = await self._call(method, params, conn)
            return result
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.audit.record(origin or Origin.of(conn), method, params, result, error, started)

    async def _call(self, method: str, params: dict, conn) -> dict:
        handler = self.table.get(method)
        if handler is None:
            raise MethodNotFound(f"unknown method {method!r}",
                                 {"methods": sorted(self.table)})
        if not isinstance(params, dict):
            raise InvalidParams("params must be an object with named fields")
        check_no_nul(params)
        validate(method, params)    # types, bounds, required names: indexd/server/params.py
        return await self._run(handler, params, conn)

    async def _run(self, handler, params, conn):
        try:
            result = handler(params, conn)
            if hasattr(result, "__await__"):
                result = await result
        except (OSError, RuntimeError, ValueError) as exc:
            if "lance" not in str(exc).lower():
                raise
            # A store deleted or damaged under the daemon: say so, with the fix.
            raise StoreError(describe_store_error(exc), {"retryable": False}) from exc
        return result

    def call_sync(self, method: str, params: dict) -> dict:
        """For the CLI fallback: no event loop, no connection."""
        handler = self.table.get(method)
        if handler is None:
            raise MethodNotFound(f"unknown method {method!r}")
        check_no_nul(params)
        validate(method, params)
        result = handler(params, None)
        if hasattr(result, "__await__"):
            import asyncio

            result = asyncio.run(result)
        return result

    # -- handlers ----------------------------------------------------------
    def initialize(self, params, conn) -> dict:
        info = params.get("client_info", {})
        if not isinstance(info, dict) or not isinstance(info.get("name", ""), str):
            raise InvalidParams("client_info must be an object like {\"name\": \"my-editor\"}")
        if conn is not None and info.get("name"):
            # Names what this connection is in the audit log (the MCP server: "mcp").
            conn.client_name = info["name"][:64]
            conn.transport = transport_of(conn.client_name)
        return {"protocol_version": PROTOCOL_VERSION, "server_version": __version__,
                "pid": os.getpid(), "capabilities": {
                    "methods": sorted(self.table), "framings": ["ndjson", "lsp"],
                    "search_modes": self._search_modes(), "sync": self.engine is not None,
                    "subscribe": self.engine is not None}}

    def _search_modes(self) -> list[str]:
        if self.engine is not None and getattr(self.engine, "search_modes", None):
            return self.engine.search_modes()
        return ["keyword"]

    async def search(self, params, conn) -> dict:
        req = SearchRequest.from_params(params).reading_as(self.settings)
        if req.realm is not None and req.realm not in self.settings.realms:
            self.settings.realm_repos(req.realm)  # raises RealmError with the hint
        check_filters(req.kind, req.lang)   # a typo is an error, not "0 results"
        check_repo(req.repo, [r for _, r in self.settings.realm_repos(req.realm)])
        if params.get("sync") and self.engine is not None:
            await self.engine.sync(timeout=_timeout(params))
        if self.engine is not None and getattr(self.engine, "search", None):
            result = await self.engine.search(req)
        else:
            if req.mode not in (None, "keyword"):
                raise InvalidParams(f"search mode {req.mode!r} needs the daemon with a model: "
                                    f"indexd run")
            result = keyword_search(self.store, req)
        return mark_shared(self.store, result) | self._freshness()

    async def symbols(self, params, conn) -> dict:
        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise InvalidParams("symbols needs 'path'")
        if params.get("realm") and params.get("repo"):
            realm, repo, rel = params["realm"], params["repo"], path
        else:
            realm, repo, rel = _file_of(self.settings, path)
        results = outline(self.store, realm, repo, rel)
        if not results:
            rec = self.store.file_records(realm=realm, repo=repo).get(rel)
            if rec is None:
                raise RealmError(f"{rel} is not indexed (yet) in {repo}")
        result = {"realm": realm, "repo": repo, "path": rel, "total": len(results),
                  "results": results} | self._freshness()
        await asyncio.to_thread(self._owners().annotate_symbols, result)
        return result

    async def status(self, params, conn) -> dict:
        if self.engine is not None:
            if params.get("sync"):
                await self.engine.sync(timeout=_timeout(params))
            return await asyncio.to_thread(self.engine.status)
        return store_status(self.settings, self.store) | {"daemon": None}

    # -- annotations ---------------------------------------------------------
    def _annotations(self):
        if self.engine is not None:
            return self.engine.annotations
        from ..annotations import Annotations

        return Annotations(self.store, lambda: self.settings)

    async def annotate(self, params, conn) -> dict:
        target, text = params.get("target"), params.get("text")
        if not isinstance(target, str) or not isinstance(text, str):
            raise InvalidParams("annotate needs 'target' (path, path::Symbol or 'a -> b') and 'text'")
        return await asyncio.to_thread(self._annotations().annotate, target, text,
                                       params.get("author") or "agent")

    async def annotations(self, params, conn) -> dict:
        path = params.get("path")
        if path is not None and not isinstance(path, str):
            raise InvalidParams("path must be a string")
        return await asyncio.to_thread(self._annotations().list, path)

    # -- relationships (graph) ---------------------------------------------
    async def _graph(self, name: str, then=None, **kw) -> dict:
        """``then(result)``: more work on the answer in the same worker thread."""
        if self.engine is not None:
            return await self.engine.graph_call(name, then=then, **kw)
        # No daemon: build the graph from the store for this one answer.
        from ..relations import Relations

        rel = Relations(self.store, lambda: self.settings)
        rel.build()
        result = getattr(rel, name)(**kw)
        return result if then is None else then(result)

    async def impact(self, params, conn) -> dict:
        target, owners = _target(params), self._owners()

        def with_owners(result: dict) -> dict:
            result["owners"] = owners.for_impact(result)
            return mark_shared(self.store, result, IMPACT_LISTS)
        # owners in the graph's thread: one thread hop an answer, not two (each hop
        # waits for a wake-up, which a busy machine makes the slow part of a request)
        result = await self._graph("impact", then=with_owners, target=target,
                                   depth=_int(params, "depth", 3, 1, 10), kinds=_kinds(params),
                                   limit=_limit(params))
        result["owners"] = result.pop("owners")   # last, after index_lag_s, as before
        return result

    # -- owners (git blame, indexd/owners/) ------------------------------------
    def _owners(self):
        if self.engine is not None:
            return self.engine.owners
        if getattr(self, "_local_owners", None) is None:   # no daemon: blamed on demand
            from ..owners import Owners

            self._local_owners = Owners(self._settings, self.store)
        return self._local_owners

    async def owners(self, params, conn) -> dict:
        """Who wrote a file or symbol: authors by lines, their latest commits."""
        target = _target(params)
        limit = _int(params, "limit", 10, 1, 100)
        try:
            result = await asyncio.to_thread(self._owners().target, target, limit)
        except RealmError:
            if "::" in target or not looks_like_symbol(target):
                raise
            # no file of that name: a symbol's name alone, as impact takes it
            named = await self._graph("named_symbol", symbol=target)
            result = await asyncio.to_thread(self._owners().target, named, limit)
        return result | self._freshness()

    async def summary(self, params, conn) -> dict:
        """A file's summary and its strongest relationships in words (descriptions.py)."""
        path = params.get("path")
        if not isinstance(path, str) or not path.strip():
            raise InvalidParams("summary needs 'path': a file (absolute, repo-relative or "
                                "repo_name/path)")
        return await self._graph("summary", target=path, top=_int(params, "top", 5, 1, 50))

    async def deps(self, params, conn) -> dict:
        return await self._graph("deps", target=_target(params),
                                 depth=_int(params, "depth", 1, 1, 10), kinds=_kinds(params),
                                 limit=_limit(params))

    async def refs(self, params, conn) -> dict:
        return await self._graph("refs", target=_target(params), limit=_limit(params))

    async def changes(self, params, conn) -> dict:
        repo = params.get("repo") or "."
        if not isinstance(repo, str):
            raise InvalidParams("repo must be a path")
        realm, root, _rel = locate(self.settings, repo)
        since = params.get("since")
        if since is not None and not isinstance(since, str):
            raise InvalidParams("since must be a git revision string")
        result = await self._graph("changes", repo=root, since=since,
                                   depth=_int(params, "depth", 2, 1, 10), limit=_limit(params))
        result["owners"] = await asyncio.to_thread(self._owners().for_changes, result)
        return result

    async def tests_affected(self, params, conn) -> dict:
        """Test files to run for a diff (working tree, ``since`` REV or ``staged``) or for
        ``targets``; see indexd/tests_affected.py."""
        since, targets = params.get("since"), params.get("targets")
        staged = params.get("staged", False)
        if since is not None and not isinstance(since, str):
            raise InvalidParams("since must be a git revision string")
        if not isinstance(staged, bool):
            raise InvalidParams("staged must be true or false")
        if targets is not None and not (isinstance(targets, list) and targets
                                        and all(isinstance(t, str) and t for t in targets)):
            raise InvalidParams("targets must be a non-empty list of paths or path::Symbol")
        if sum((since is not None, staged, targets is not None)) > 1:
            raise InvalidParams("give one of since, staged or targets")
        root = None
        if targets is None:
            repo = params.get("repo") or "."
            if not isinstance(repo, str):
                raise InvalidParams("repo must be a path")
            _realm, root, _rel = locate(self.settings, repo)
        return await self._graph("tests_affected", repo=root, since=since, staged=staged,
                                 targets=targets, depth=_int(params, "depth", 3, 1, 10),
                                 limit=_limit(params))

    async def context(self, params, conn) -> dict:
        """A context pack: search hits and their graph neighbours fitted to a token
        budget (indexd/query/context.py)."""
        from ..query.context import ContextRequest, assemble, hit_seeds
        from ..query.tokens import token_counter

        req = ContextRequest.from_params(params)
        found = await self.search(req.search_params() | {
            k: params[k] for k in ("sync", "timeout") if k in params}, conn)
        hits = [h for h in found["results"] if h.get("realm")]
        seeds = hit_seeds(hits) + [_file_seed(self.settings, f) for f in req.files]
        nodes = (await self._graph("neighbourhood", seeds=seeds, depth=req.depth))["nodes"] \
            if seeds and req.graph else []
        pack = await asyncio.to_thread(assemble, req, hits, nodes, self.store, self.settings,
                                       token_counter(self.settings), found.get("mode"))
        return mark_shared(self.store, pack, ("items",)) | {"files": list(req.files)} | self._freshness()

    async def graph_export(self, params, conn) -> dict:
        fmt = params.get("format", "json")
        scope = params.get("scope")
        if not isinstance(fmt, str) or (scope is not None and not isinstance(scope, str)):
            raise InvalidParams("format and scope must be strings")
        text = await self._graph("export", fmt=fmt, scope=scope)
        return {"format": fmt, "scope": scope, "text": text}

    async def realm_add(self, params, conn) -> dict:
        name, paths = params.get("realm"), params.get("paths")
        if not isinstance(name, str) or not isinstance(paths, list):
            raise InvalidParams("realm.add needs 'realm' (string) and 'paths' (list)")
        result = add_repos(self.settings, name, [str(p) for p in paths])
        return result | await self._applied()

    async def realm_remove(self, params, conn) -> dict:
        name = params.get("realm")
        if not isinstance(name, str):
            raise InvalidParams("realm.remove needs 'realm'")
        result = remove_repos(self.settings, name, params.get("paths"))
        return result | await self._applied()

    async def _applied(self) -> dict:
        """The worker, the only store writer, applies config changes (and deletes a
        removed repo's rows) between batches: wait for it, within reason."""
        if self.engine is None:
            return {}
        generation = self.engine.request_reload()
        done = await asyncio.to_thread(self.engine.wait_reloaded, generation, REALM_APPLY_WAIT_S)
        return {"applied": done} if done else {
            "applied": False, "note": "the daemon applies this after its current batch"}

    def realm_list(self, params, conn) -> dict:
        return list_realms(self.settings)

    async def reindex(self, params, conn) -> dict:
        if self.engine is None:
            raise NotImplementedYet("reindex needs the daemon: indexd run (or indexd index)")
        paths = params.get("paths")
        if paths is not None and not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
            raise InvalidParams("paths must be a list of strings")
        return await self.engine.reindex(paths, params.get("realm"), bool(params.get("wait", False)))

    def subscribe(self, params, conn) -> dict:
        if conn is None:
            raise NotImplementedYet("subscribe needs a socket connection")
        conn.subscribed = True
        return {"subscribed": True}

    async def skipped(self, params, conn) -> dict:
        """Files withheld from the index (skipped whole) or indexed with secrets masked."""
        realm = params.get("realm")
        if realm is not None and not isinstance(realm, str):
            raise InvalidParams("realm must be a string")
        limit = _int(params, "limit", 1000, 1, 100_000)
        pairs = self.settings.realm_repos(realm)   # an unknown realm: RealmError with the hint
        return await asyncio.to_thread(withheld_files, self.store, pairs, limit)

    async def tests_ingest(self, params, conn) -> dict:
        """Coverage edges from a per-test coverage.py data file or LCOV tracefile
        (coverage_ingest.py)."""
        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise InvalidParams("tests.ingest needs 'path': a coverage.py data file or an "
                                "LCOV tracefile")
        from ..coverage_ingest import ingest

        # Under the store's writer mutex (inside ingest): the worker's batches
        # and this write never interleave; then the warm graph reloads the edges.
        result = await asyncio.to_thread(ingest, self.store, self.settings, path,
                                         params.get("cwd"))
        if self.engine is not None:
            await asyncio.to_thread(self.engine.relations.reload_coverage)
        return result

    def pause(self, params, conn) -> dict:
        if self.engine is None:
            raise NotImplementedYet("pause needs the daemon")
        self.engine.set_paused(True)
        return {"paused": True}

    def resume(self, params, conn) -> dict:
        if self.engine is None:
            raise NotImplementedYet("resume needs the daemon")
        self.engine.set_paused(False)
        return {"paused": False}

    async def purge(self, params, conn) -> dict:
        if self.engine is not None:
            return await asyncio.to_thread(self.engine.purge)
        # No daemon: nobody else reads this store, so zero retention is safe. The
        # graph's snapshot may hold deleted files' names: the next start builds.
        from ..graph import snapshot
        snapshot.discard(self.store.path)
        self.store.optimize(purge=True)
        self.store.ensure_fts()   # a purge that rewrote entries dropped the index
        return {"purged": True}

    def shutdown(self, params, conn) -> dict:
        if self.engine is None:
            raise NotImplementedYet("no daemon to shut down")
        self.engine.request_shutdown()
        return {"shutting_down": True}

    def _freshness(self) -> dict:
        if self.engine is None:
            return {"index_lag_s": None, "pending": None, "stale": None}
        return self.engine.freshness()


def check_no_nul(params: dict) -> None:
    """Refuse a NUL anywhere in the params: no path, name or query can hold one, and
    the OS would refuse it deep inside a handler (ValueError: embedded null byte)."""
    stack = [(name, value) for name, value in params.items()]
    while stack:     # iterative: params nest as deep as the JSON parser allows
        where, value = stack.pop()
        if isinstance(value, str) and "\x00" in value:
            raise InvalidParams(f"'{where}' contains a NUL byte (\\x00); no path, name or "
                                f"query may contain one", {"param": where})
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}", v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))


def _target(params: dict) -> str:
    target = params.get("target")
    if not isinstance(target, str) or not target.strip():
        raise InvalidParams("needs 'target': a path, or path::Qualified.name")
    return target


def _file_seed(settings, target: str) -> dict:
    """A given file (or path::Symbol) as a graph seed as strong as the top search hit."""
    path, _, symbol = target.partition("::")
    realm, repo, rel = _file_of(settings, path)
    return {"realm": realm, "repo": repo, "path": rel, "symbol": symbol or None, "weight": 1.0,
            "given": True}


def _timeout(params: dict) -> float:
    value = params.get("timeout", 10)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value <= TIMEOUT_MAX_S:
        raise InvalidParams(f"timeout must be a number of seconds in 0..{TIMEOUT_MAX_S}")
    return float(value)


def _kinds(params: dict):
    kinds = params.get("kinds")
    if kinds is None or isinstance(kinds, str):
        return kinds
    if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds):
        return kinds
    raise InvalidParams("kinds must be a list of strings or a comma-separated string")


def _limit(params: dict) -> int:
    return _int(params, "limit", LIST_LIMIT, 1, LIST_LIMIT_MAX)


def _int(params: dict, name: str, default: int, lo: int, hi: int) -> int:
    value = params.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidParams(f"{name} must be an integer in {lo}..{hi}")
    return value


def store_status(settings: Settings, store) -> dict:
    """Per realm and repo counts read from the store (no live daemon state)."""
    realms = []
    for realm, repos in sorted(settings.realms.items()):
        out = []
        for repo in repos:
            out.append(repo_status(store, realm, repo))
        realms.append({"name": realm, "repos": out})
    return {"realms": realms, "store": store.stats()}


WITHHELD_IN_STATUS = 100   # status lists this many withheld paths per repo; `skipped` has all


def withheld(rec) -> dict | None:
    """{path, status, reason} for a file skipped whole or indexed with secrets masked."""
    if rec.status == "skipped":
        return {"path": rec.path, "status": "skipped", "reason": rec.reason}
    if rec.reason.startswith(REDACTED + ":"):
        return {"path": rec.path, "status": REDACTED, "reason": rec.reason}
    return None


def withheld_files(store, pairs, limit: int) -> dict:
    realms: dict[str, list] = {}
    total = 0
    for realm, repo in pairs:
        items = [w for rec in sorted(store.file_records(realm=realm, repo=repo).values(),
                                     key=lambda r: r.path) if (w := withheld(rec))]
        total += len(items)
        realms.setdefault(realm, []).append({"repo": repo, "total": len(items),
                                             "files": items[:limit]})
    return {"realms": [{"name": n, "repos": r} for n, r in realms.items()], "total": total,
            "limit": limit}


def repo_status(store, realm: str, repo: str) -> dict:
    records = store.file_records(realm=realm, repo=repo).values()
    held = sorted((w for rec in records if (w := withheld(rec))), key=lambda w: w["path"])
    counts = {k: 0 for k in STATUS_COUNTS}
    skipped: dict[str, int] = {}
    failures = []
    last = 0.0
    entries = 0
    for rec in records:
        counts[rec.status] = counts.get(rec.status, 0) + 1
        last = max(last, rec.indexed_at or 0.0)
        entries += rec.entries or 0
        if rec.status == "skipped":
            reason = rec.reason.split(":")[0]
            skipped[reason] = skipped.get(reason, 0) + 1
        elif rec.status == "failed" and len(failures) < 20:
            failures.append({"path": rec.path, "error": rec.reason})
    return {"repo": repo, "name": Path(repo).name, "exists": Path(repo).is_dir(),
            "files": counts["indexed"] + counts["failed"], "failed": counts["failed"],
            "skipped": skipped, "parse_failures": failures, "entries": entries,
            "last_indexed": last or None,
            "redacted": sum(w["status"] == REDACTED for w in held),
            "withheld": held[:WITHHELD_IN_STATUS], "withheld_total": len(held)}


def _file_of(settings, path: str) -> tuple[str, str, str]:
    """(realm, repo, rel) of an absolute path, or of a repo-relative one found in
    one repo or 'repo_name/path' (impact's and owners' forms), else of a path
    relative to the daemon's own folder."""
    if not os.path.isabs(path):
        found = in_one_repo(settings, path)
        if found is not None:
            return found
    return locate(settings, path)
