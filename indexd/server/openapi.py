"""The OpenAPI 3.0 document of the REST API (``GET /api/v1/openapi.json``).

The request bodies of ``/api/v1/rpc/{method}`` (and the bounds of the REST
routes built on them) come from the one param table the socket methods
validate with (params.py), so the document and the methods cannot disagree;
tests/e2e/test_http_api.py probes every stated bound against the daemon.
"""

from __future__ import annotations

from . import params
from .http_api import API
from .rest_mapping import DEFAULT_CONTEXT_WINDOW

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string"}}
_OBJ = {"type": "object", "additionalProperties": True}

# The rpc/{method} bodies, from the one param table the socket methods
# validate with (params.py): the document cannot disagree with the methods.
RPC_PARAMS: dict[str, dict] = {name: params.json_schema(name) for name in params.SPECS}
RPC_SUMMARIES = {name: spec.summary for name, spec in params.SPECS.items()}
_SEARCH_LIMIT = params.param_schema(params.param("search", "limit"))
_SEARCH_CONTEXT = params.param("search", "context")


def _context_schema() -> dict:
    item = {"type": "object", "additionalProperties": True,
            "required": ["repo", "path", "symbol", "start_line", "end_line", "text", "why"],
            "properties": {
                "realm": _STR, "repo": _STR, "path": _STR,
                "symbol": {"type": "string", "nullable": True}, "kind": _STR,
                "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                "view": {"type": "string", "enum": ["body", "signature"]}, "text": _STR,
                "tokens": {"type": "integer"}, "why": _STR, "score": {"type": "number"}}}
    return {"type": "object", "additionalProperties": True,
            "required": ["query", "budget", "tokens", "items"], "properties": {
                "query": _STR, "budget": {"type": "integer"},
                "tokens": {"type": "integer", "description": "the items' tokens, summed"},
                "tokenizer": _STR, "items": {"type": "array", "items": item}}}


def _schemas() -> dict:
    hit = {"type": "object", "additionalProperties": True, "properties": {
        "realm": _STR, "repo": _STR, "path": _STR,
        "symbol": {"type": "string", "nullable": True}, "kind": _STR,
        "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
        "score": {"type": "number"}, "match": _STRS, "snippet": _STR, "summary": _STR,
        "lang": _STR, "context": {"description": "lines around the hit (include_context)"},
        "also_at": {"type": "array", "items": {"type": "integer"},
                    "description": "start lines of the symbol's other definitions in the file"}}}
    fresh = {"index_lag_s": {"type": "number", "nullable": True},
             "pending": {"type": "integer", "nullable": True},
             "stale": {"type": "boolean", "nullable": True}}
    return {
        "SearchRequest": {
            "type": "object", "required": ["query"], "additionalProperties": False,
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "words or an identifier"},
                "search_type": {"type": "string", "enum": ["fts", "semantic", "graph", "hybrid"],
                                "description": "fts = keyword; graph = hybrid for now; "
                                               "absent = the best the daemon has"},
                "filters": {"type": "object", "additionalProperties": False, "properties": {
                    "realm": _STR, "repo": {"type": "string", "description": "path or name"},
                    "kind": {"oneOf": [_STR, {**_STRS, "minItems": 1}]},
                    "lang": {"oneOf": [_STR, {**_STRS, "minItems": 1}]},
                    "path": {"type": "string", "description": "a repo-relative file or folder, or a glob"}}},
                "limit": _SEARCH_LIMIT,
                "include_context": {"type": "boolean", "default": False},
                "context_window": {"type": "integer", "minimum": _SEARCH_CONTEXT.lo,
                                   "maximum": _SEARCH_CONTEXT.hi,
                                   "default": DEFAULT_CONTEXT_WINDOW,
                                   "description": "lines around each hit when include_context"},
                "sync": {"type": "boolean", "description": "wait for pending edits first"}}},
        "SearchHit": hit,
        "SearchResult": {"type": "object", "additionalProperties": True,
                         "required": ["query", "mode", "total", "results"], "properties": {
                             "query": _STR, "mode": _STR, "took_ms": {"type": "number"},
                             "total": {"type": "integer"},
                             "results": {"type": "array",
                                         "items": {"$ref": "#/components/schemas/SearchHit"}},
                             **fresh}},
        "ImpactRequest": RPC_PARAMS["impact"] | {"additionalProperties": False},
        "ImpactResult": _OBJ,
        "ContextResult": _context_schema(),
        "StatusResult": {"type": "object", "additionalProperties": True, "properties": {
            "daemon": {"type": "object", "nullable": True, "additionalProperties": True},
            "realms": {"type": "array", "items": _OBJ}, "store": _OBJ}},
        "Health": {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
        "Result": _OBJ,
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer", "description": "the JSON-RPC error code"},
                "message": _STR,
                "data": {"type": "object", "additionalProperties": True, "properties": {
                    "type": _STR, "retryable": {"type": "boolean"}}}}}}},
    }


def _err(desc: str) -> dict:
    return {"description": desc,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


_ERRORS = {
    "400": _err("Invalid params, malformed JSON or a bad request"),
    "401": _err("Missing or wrong bearer token"),
    "404": _err("Unknown realm, repo, path or method"),
    "405": _err("Method not allowed"),
    "413": _err("Request body over 1 MiB"),
    "500": _err("Internal error"),
    "501": _err("Not implemented yet"),
    "503": _err("Index not ready or model unavailable (retryable)"),
}


def _op(summary: str, op_id: str, result_ref: str, body_schema: dict | None,
        body_required: bool = True, tags=("api",)) -> dict:
    op = {"summary": summary, "operationId": op_id, "tags": list(tags), "responses": {
        "200": {"description": "OK", "content": {"application/json": {"schema": result_ref}}},
        **_ERRORS}}
    if body_schema is not None:
        op["requestBody"] = {"required": body_required,
                             "content": {"application/json": {"schema": body_schema}}}
    return op


def openapi_document(methods: list[str]) -> dict:
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    from .. import __version__

    public = {"security": []}
    paths = {
        f"{API}/health": {"get": {**_op("Liveness (no auth)", "health", ref("Health"), None),
                                  **public, "responses": {"200": {
                                      "description": "OK", "content": {"application/json": {
                                          "schema": ref("Health")}}}}}},
        f"{API}/openapi.json": {"get": {**public, "summary": "This document (no auth)",
                                        "operationId": "openapi", "tags": ["meta"],
                                        "responses": {"200": {
                                            "description": "The OpenAPI document",
                                            "content": {"application/json": {
                                                "schema": {"type": "object"}}}}}}},
        f"{API}/search": {"post": _op("Search code (keyword, semantic or hybrid)", "search",
                                      ref("SearchResult"), ref("SearchRequest"))},
        f"{API}/impact": {"post": _op("What depends on a file or symbol", "impact",
                                      ref("ImpactResult"), ref("ImpactRequest"))},
        f"{API}/context": {"post": _op("The code to read for a task, within a token budget",
                                       "context", ref("ContextResult"), RPC_PARAMS["context"])},
        f"{API}/status": {
            "get": _op("Daemon status", "status", ref("StatusResult"), None),
            "post": _op("Daemon status", "statusPost", ref("StatusResult"),
                        RPC_PARAMS["status"], body_required=False)},
    }
    for name in methods:
        schema = RPC_PARAMS.get(name, {"type": "object", "additionalProperties": True})
        required = bool(schema.get("required"))
        paths[f"{API}/rpc/{name}"] = {"post": _op(
            RPC_SUMMARIES.get(name, f"The {name} method"),
            "rpc_" + name.replace(".", "_"), ref("Result"), schema,
            body_required=required, tags=("rpc",))}
    return {
        "openapi": "3.0.3",
        "info": {"title": "indexd REST API", "version": __version__,
                 "description": "Loopback REST API of the indexd daemon. The same methods as "
                                "the JSON-RPC socket. Authenticate with the bearer token in "
                                "the http_token file of the config directory (indexd paths)."},
        "servers": [{"url": "/"}],
        "security": [{"bearerAuth": []}],
        "tags": [{"name": "api"}, {"name": "rpc", "description": "every socket method by name"},
                 {"name": "meta"}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer",
                                               "description": "contents of the http_token file"}},
            "schemas": _schemas(),
        },
    }
