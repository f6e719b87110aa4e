"""REST requests -> method params, and typed errors -> HTTP answers.

The REST routes' own shapes (``POST /api/v1/search`` takes the seeds'
``search_type`` and ``filters``; ``/impact`` a closed body) are mapped onto
the socket methods' named params here; everything else is checked once, by
the method table (params.py). Pure: no I/O, no server.
"""

from __future__ import annotations

import json

from ..errors import (ConfigError, IndexNotReady, InvalidParams, MethodNotFound,
                      ModelUnavailable, NotImplementedYet, ParseError, ProtocolError, RealmError)
from .http_api import API

SEARCH_TYPES = {"fts": "keyword", "keyword": "keyword", "semantic": "semantic",
                "graph": "hybrid", "hybrid": "hybrid"}   # graph -> hybrid until the graph lands
SEARCH_FILTERS = ("realm", "repo", "kind", "lang", "path")
DEFAULT_CONTEXT_WINDOW = 3


def http_status(exc: BaseException) -> int:
    if isinstance(exc, (InvalidParams, ParseError, ConfigError)):
        return 400          # ConfigError from a request: a bad realm name and the like
    if isinstance(exc, (RealmError, MethodNotFound)):
        return 404
    if isinstance(exc, ProtocolError):
        return 400
    if isinstance(exc, (IndexNotReady, ModelUnavailable)):
        return 503
    if isinstance(exc, NotImplementedYet):
        return 501
    return 500


class HttpError(Exception):
    """An answer decided by the HTTP layer itself (not by a method)."""

    def __init__(self, status: int, message: str, code: int = -32600, data: dict | None = None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code
        self.data = dict(data or {})
        self.headers = headers or {}

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message,
                          "data": {"type": "HttpError", "retryable": False, "status": self.status}
                          | self.data}}


def route(path: str) -> tuple[str | None, tuple[str, ...], str | None]:
    """(route name, allowed methods, rpc method name) for a path under /api/v1."""
    if not path.startswith(API + "/"):
        return None, (), None
    rest = path[len(API) + 1:]
    simple = {"health": ("GET",), "openapi.json": ("GET",), "search": ("POST",),
              "impact": ("POST",), "context": ("POST",), "status": ("GET", "POST"), "events": ("GET",),
              "ui/code": ("POST",)}
    if rest in simple:
        return ("openapi" if rest == "openapi.json" else rest), simple[rest], None
    if rest.startswith("rpc/") and len(rest) > 4 and "/" not in rest[4:]:
        return "rpc", ("POST",), rest[4:]
    return None, (), None


def json_body(raw: bytes) -> dict:
    if not raw.strip():
        return {}
    # Content-Type is not enforced (curl -d sends a form type): the body is
    # JSON or it is a 400. Browsers cannot add the bearer header cross-site
    # without a preflight this server never grants, so this opens no CSRF.
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HttpError(400, f"malformed JSON body: {exc}", code=ParseError.code) from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object with named fields",
                        code=InvalidParams.code)
    return body


# ---------------------------------------------------------- request mapping

def search_params(body: dict) -> dict:
    """The seeds' search request -> the `search` method's params."""
    known = {"query", "search_type", "filters", "limit", "include_context", "context_window",
             "sync"}
    unknown = set(body) - known
    if unknown:
        raise InvalidParams(f"unknown search fields: {', '.join(sorted(unknown))}",
                            {"known": sorted(known)})
    params: dict = {"query": body.get("query")}
    st = body.get("search_type")
    if st is not None:
        if not isinstance(st, str) or st not in SEARCH_TYPES:
            raise InvalidParams("search_type must be fts, semantic, graph or hybrid")
        params["mode"] = SEARCH_TYPES[st]
    filters = body.get("filters")
    if filters is not None:
        if not isinstance(filters, dict):
            raise InvalidParams("filters must be an object")
        bad = set(filters) - set(SEARCH_FILTERS)
        if bad:
            raise InvalidParams(f"unknown filters: {', '.join(sorted(bad))}",
                                {"known": list(SEARCH_FILTERS)})
        for name in SEARCH_FILTERS:
            value = filters.get(name)
            if value is None:
                continue
            if name in ("kind", "lang") and isinstance(value, list) and value \
                    and all(isinstance(v, str) for v in value):
                value = ",".join(value)
            if not isinstance(value, str):
                raise InvalidParams(f"filters.{name} must be a string"
                                    + (" or a list of strings" if name in ("kind", "lang") else ""))
            params[name] = value
    if "limit" in body and body["limit"] is not None:
        if isinstance(body["limit"], bool):
            raise InvalidParams("limit must be an integer")
        params["limit"] = body["limit"]
    include = body.get("include_context", False)
    if not isinstance(include, bool):
        raise InvalidParams("include_context must be a boolean")
    window = body.get("context_window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
        raise InvalidParams("context_window must be an integer")
    if include:
        params["context"] = DEFAULT_CONTEXT_WINDOW if window is None else window
    if body.get("sync") is not None:
        if not isinstance(body["sync"], bool):
            raise InvalidParams("sync must be a boolean")
        params["sync"] = body["sync"]
    return params


def impact_params(body: dict) -> dict:
    known = {"target", "depth", "kinds", "limit"}
    unknown = set(body) - known
    if unknown:
        raise InvalidParams(f"unknown impact fields: {', '.join(sorted(unknown))}",
                            {"known": sorted(known)})
    target = body.get("target")
    if not isinstance(target, str) or not target:
        raise InvalidParams("impact needs 'target' (a path or a symbol)")
    params: dict = {"target": target}
    if body.get("depth") is not None:
        depth = body["depth"]
        if isinstance(depth, bool) or not isinstance(depth, int):
            raise InvalidParams("depth must be an integer")
        params["depth"] = depth
    if body.get("kinds") is not None:
        kinds = body["kinds"]
        if not isinstance(kinds, str) and not (
                isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
            raise InvalidParams("kinds must be a list of strings (or one comma-separated string)")
        params["kinds"] = kinds
    if body.get("limit") is not None:
        params["limit"] = body["limit"]     # the method checks its type and bound
    return params


_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
               "array": (list,), "object": (dict,)}


def _type_ok(schema: dict, value) -> bool:
    if "oneOf" in schema:
        return any(_type_ok(s, value) for s in schema["oneOf"])
    kind = schema.get("type")
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if not isinstance(value, _JSON_TYPES[kind]):
        return False
    if kind == "array" and "items" in schema:
        return all(_type_ok(schema["items"], v) for v in value)
    return True


def check_types(schema: dict | None, body: dict) -> None:
    """The published param types, enforced at the REST boundary (400, not a
    handler's TypeError). Only types: ranges, required fields and unknown
    names stay the method's own checks, so both transports answer alike."""
    for name, sub in ((schema or {}).get("properties") or {}).items():
        if name in body and body[name] is not None and not _type_ok(sub, body[name]):
            want = " or ".join(s.get("type", "?") for s in sub["oneOf"]) if "oneOf" in sub \
                else sub.get("type")
            if want == "array" and "items" in sub:
                want = f"array of {sub['items'].get('type')}"
            raise InvalidParams(f"{name} must be {want}", {"param": name})
