"""The named params of every socket method, declared once.

One `Spec` per method in `SPECS`: each param's name, type, bounds, default,
whether it is required, and what it means. The same table answers
three questions, so they cannot drift apart:

* `validate` — what `Methods.call` checks before any handler runs (socket,
  REST and the CLI fallback alike): a typed `InvalidParams` naming the param;
* `json_schema` — the request body the OpenAPI document publishes for
  ``/api/v1/rpc/{method}`` (and the REST routes built on them).
* the MCP tools' input schemas (`indexd/mcp/server.py` builds each tool's
  signature from its method's rows, plus the tool's declared overrides).

Handlers keep their own checks of meaning (a path inside a realm, one of
since/staged/targets); types, bounds and required names live here. ``None``
counts as absent, as the handlers have always read it. Pure: imports only
errors, the graph's edge kinds and the query modules' bounds, never the store
or the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidParams
from ..graph.model import EDGE_KINDS
# Bounds owned by the modules that use them, imported so the two cannot drift apart.
from ..query.context import BUDGET_DEFAULT, BUDGET_MAX, BUDGET_MIN, HITS_MAX
from ..query.search import MAX_LIMIT as SEARCH_LIMIT_MAX

# Items per list in impact/deps/refs/changes answers; each list says its total
# and whether it was cut, so the bound hides nothing (docs/protocol.md).
LIST_LIMIT = 200
LIST_LIMIT_MAX = 10_000
TIMEOUT_MAX_S = 3600
MODES = ("keyword", "semantic", "hybrid")


@dataclass(frozen=True)
class Param:
    name: str
    type: str            # string | integer | number | boolean | strings | kinds | object
    description: str = ""
    required: bool = False
    default: object = None
    lo: float | None = None
    hi: float | None = None
    enum: tuple = ()
    nonempty: bool = False   # a string with something in it
    unit: str = ""           # said after the bounds: "budget must be ... in 64..200000 (tokens)"


@dataclass(frozen=True)
class Spec:
    summary: str
    params: tuple[Param, ...] = ()
    closed: bool = False     # unknown names refused; the other methods ignore them, as always
    note: str = ""


def _target(desc: str = "a file ('path', absolute, repo-relative or 'repo_name/path') or a "
                        "symbol ('path::Qualified.name', or its name alone where it names one: "
                        "'urlsplit', 'Queue.put', 'urllib.parse.urlsplit'; several: the error "
                        "lists them)") -> Param:
    return Param("target", "string", desc, required=True, nonempty=True)


def _limit(default=LIST_LIMIT, hi=LIST_LIMIT_MAX,
           desc="items per list; each list has <list>_total and <list>_truncated") -> Param:
    return Param("limit", "integer", desc, default=default, lo=1, hi=hi)


def _depth(default: int, hi: int = 10, desc: str = "how many hops to follow") -> Param:
    return Param("depth", "integer", desc, default=default, lo=1, hi=hi)


_SYNC = Param("sync", "boolean", "wait for pending edits first")
_TIMEOUT = Param("timeout", "number", "seconds to wait with sync", default=10, lo=0,
                 hi=TIMEOUT_MAX_S, unit="seconds")
_REALM = Param("realm", "string")
_REPO = Param("repo", "string", "a repository path or name")
_KINDS = Param("kinds", "kinds", "edge kinds to follow (default: all): a list, or one "
                                 "comma-separated string")
_REPO_DIR = Param("repo", "string", "a path inside a realm (default '.')")
_SINCE = Param("since", "string",
               "git revision to diff against (default: uncommitted changes vs HEAD)")
_IN_REALM = Param("realm", "string", "only this realm (group of repos)")

SPECS: dict[str, Spec] = {
    "initialize": Spec("Protocol version, server version and capabilities", (
        Param("client_info", "object", 'who asks, like {"name": "my-editor"}'),)),
    "search": Spec("Search the index (the socket method's params)", (
        Param("query", "string", "what to find: identifiers, words, or a natural-language "
                                 "description of the code", required=True, nonempty=True),
        _IN_REALM, _REPO,
        Param("kind", "string", "comma-separated kinds, e.g. function,class,method (function "
                                "includes methods)"),
        Param("lang", "string", "comma-separated languages, e.g. python,go"),
        Param("path", "string", "a repo-relative file or folder (tests), or a glob (src/**/*.py)"),
        Param("limit", "integer", "max results", default=20, lo=1, hi=SEARCH_LIMIT_MAX),
        Param("mode", "string", "keyword (exact names/words), semantic (meaning), hybrid "
                                "(both); absent: the best the daemon has", enum=MODES),
        Param("context", "integer", "lines of code around each hit (0: no code, just the hit "
                                    "line)", default=0, lo=0, hi=50),
        Param("files", "boolean", "rank files by their best entries", default=False),
        Param("explain", "boolean", "each hit says why it ranks where it does: each leg's rank "
                                    "and score, the second pass's largest terms", default=False),
        _SYNC, _TIMEOUT), closed=True),
    "symbols": Spec("Outline of one file: its symbols in order", (
        Param("path", "string", "absolute path, or repo-relative with realm and repo",
              required=True, nonempty=True), _REALM, _REPO)),
    "status": Spec("Daemon, realm, queue and store status", (_SYNC, _TIMEOUT)),
    "impact": Spec("What depends on a file or symbol",
                   (_target(), _depth(3), _KINDS, _limit())),
    "deps": Spec("What a file or symbol depends on", (_target(), _depth(1), _KINDS, _limit())),
    "refs": Spec("References to a symbol", (_target(), _limit())),
    "owners": Spec("Who wrote a file or symbol, by lines, from git blame (who should review)", (
        _target(), _limit(10, 100, "owners listed; owners_total says how many own lines"))),
    "summary": Spec("What a file is for, and its strongest relationships both ways in words", (
        Param("path", "string", "a file: absolute, repo-relative (unique) or repo_name/path",
              required=True, nonempty=True),
        Param("top", "integer", "relationships listed each way", default=5, lo=1, hi=50))),
    "changes": Spec("Files changed since a revision and what they affect",
                    (_REPO_DIR, _SINCE, _depth(2), _limit())),
    "graph.export": Spec("The relationship graph as text (json, dot, ...)", (
        Param("format", "string", default="json"), Param("scope", "string"))),
    "annotate": Spec("Attach a note to a file, symbol or edge", (
        _target("file 'path', symbol 'path::Qualified.name', or a relationship 'a -> b' "
                "between two of those"),
        Param("text", "string", "the note to attach (shown to later searches)", required=True,
              nonempty=True),
        Param("author", "string", "who wrote the note", default="agent"))),
    "annotations": Spec("Notes, for one path or all", (Param("path", "string"),)),
    "skipped": Spec("Files withheld from the index, or indexed with secrets masked, with "
                    "reasons", (_REALM, _limit(1000, 100_000, "paths listed per repo"))),
    "realm.add": Spec("Add repositories to a realm (created if new)", (
        Param("realm", "string", required=True, nonempty=True),
        Param("paths", "strings", required=True))),
    "realm.remove": Spec("Remove repositories, or a whole realm", (
        Param("realm", "string", required=True, nonempty=True),
        Param("paths", "strings", "absent: the whole realm"))),
    "realm.list": Spec("Realms and their repositories"),
    "reindex": Spec("Queue files, a realm or everything for re-indexing", (
        Param("paths", "strings"), _REALM,
        Param("wait", "boolean", "answer when they are indexed", default=False))),
    "subscribe": Spec("Status notifications (socket only)",
                      note="socket only: answers 501 over HTTP"),
    "shutdown": Spec("Stop the daemon"),
    "pause": Spec("Pause indexing (edits queue up until resume)"),
    "resume": Spec("Resume indexing after pause"),
    "purge": Spec("Drop old table versions now (zero retention) to reclaim disk"),
    "tests.ingest": Spec("Covers edges (test -> symbol) from a per-test coverage.py data file "
                         "or LCOV tracefile", (
        Param("path", "string", "a coverage.py data file recorded with per-test contexts, or an "
                                "LCOV tracefile with one TN: section per test, as the daemon "
                                "sees it (absolute)", required=True, nonempty=True),
        Param("cwd", "string", "the caller's current folder: a relative LCOV SF: path is tried "
                               "against the tracefile's folder, then this, then the tracefile's "
                               "parents"))),
    "context": Spec("The code to read for a task within a token budget: search hits, then "
                    "their graph neighbours ranked by personalised PageRank", (
        Param("query", "string", "the task in words: what you are about to change or need to "
                                 "understand", required=True, nonempty=True),
        Param("files", "strings", "paths or path::Qualified.name the task is about "
                                  "(absolute, repo-relative or repo_name/path): they seed "
                                  "the ranking"),
        Param("budget", "integer", "tokens the pack may use (the embedding model's tokenizer)",
              default=BUDGET_DEFAULT, lo=BUDGET_MIN, hi=BUDGET_MAX, unit="tokens"),
        _IN_REALM, _REPO, Param("mode", "string", enum=MODES),
        Param("hits", "integer", "search hits that seed the graph (default: grows with the "
                                 "budget, 10 to 50)", lo=1, hi=HITS_MAX),
        _depth(2, 3, "graph hops from the seeds"),
        Param("graph", "boolean", "false: the search hits alone, fitted alike", default=True),
        _SYNC, _TIMEOUT), closed=True),
    "tests.affected": Spec("Test files to run for a diff or targets, ranked, with evidence "
                           "and a safe flag", (
        _REPO_DIR, _SINCE,
        Param("staged", "boolean", "only the staged changes (index vs HEAD)", default=False),
        Param("targets", "strings", "files or 'path::Qualified.name' to select tests for, "
                                    "instead of a diff"),
        _depth(3), _limit())),
}


# ------------------------------------------------------------------ checking

def validate(method: str, params: dict) -> None:
    """Refuse params that break `SPECS[method]`: InvalidParams naming the param."""
    spec = SPECS.get(method)
    if spec is None:
        return
    if spec.closed:
        unknown = set(params) - {p.name for p in spec.params}
        if unknown:
            raise InvalidParams(f"unknown {method} params: {', '.join(sorted(unknown))}",
                                {"known": sorted(p.name for p in spec.params)})
    for p in spec.params:
        value = params.get(p.name)
        if value is None:
            if p.required:
                raise InvalidParams(_needs(method, p), {"param": p.name})
            continue
        problem = _problem(p, value)
        if problem and p.required and p.type == "string":
            raise InvalidParams(_needs(method, p), {"param": p.name})
        if problem:
            raise InvalidParams(f"{p.name} must be {problem}", {"param": p.name})


def _needs(method: str, p: Param) -> str:
    what = f"a non-empty string '{p.name}'" if p.type == "string" else f"'{p.name}'"
    return f"{method} needs {what}" + (f": {p.description}" if p.description else "")


def _problem(p: Param, value) -> str | None:
    """What ``value`` should have been, in words; None when it is fine."""
    if p.type in ("integer", "number"):
        ok = type(value) is int or (p.type == "number" and type(value) is float)
        unit = f" ({p.unit})" if p.unit else ""
        if not ok or (p.lo is not None and value < p.lo) or (p.hi is not None and value > p.hi):
            return f"{'an integer' if p.type == 'integer' else 'a number'} in {p.lo}..{p.hi}{unit}"
    elif p.type == "string":
        if not isinstance(value, str) or (p.nonempty and not value.strip()):
            return "a non-empty string" if p.nonempty else "a string"
        if p.enum and value not in p.enum:
            return ", ".join(p.enum[:-1]) + " or " + p.enum[-1]
    elif p.type == "boolean":
        if not isinstance(value, bool):
            return "true or false"
    elif p.type == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "a list of strings"
    elif p.type == "kinds":
        if not isinstance(value, str) and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return "a list of strings or a comma-separated string"
    elif p.type == "object" and not isinstance(value, dict):
        return "an object"
    return None


# ------------------------------------------------------------------ publishing

def param_schema(p: Param) -> dict:
    """One param as JSON Schema (the OpenAPI 3.0 dialect)."""
    if p.type == "strings":
        out: dict = {"type": "array", "items": {"type": "string"}}
    elif p.type == "kinds":
        out = {"oneOf": [{"type": "string"},
                         {"type": "array", "items": {"type": "string",
                                                     "enum": list(EDGE_KINDS)}}]}
    elif p.type == "object":
        out = {"type": "object", "additionalProperties": True}
    else:
        out = {"type": p.type}
    if p.nonempty:
        out["minLength"] = 1
    if p.enum:
        out["enum"] = list(p.enum)
    if p.lo is not None:
        out["minimum"] = p.lo
    if p.hi is not None:
        out["maximum"] = p.hi
    if p.default is not None:
        out["default"] = p.default
    if p.description:
        out["description"] = p.description
    return out


def json_schema(method: str) -> dict:
    """The params object of ``method`` as JSON Schema."""
    spec = SPECS[method]
    out: dict = {"type": "object",
                 "properties": {p.name: param_schema(p) for p in spec.params}}
    required = [p.name for p in spec.params if p.required]
    if required:
        out["required"] = required
    if spec.closed:
        out["additionalProperties"] = False
    if spec.note:
        out["description"] = spec.note
    return out


def param(method: str, name: str) -> Param:
    return next(p for p in SPECS[method].params if p.name == name)
