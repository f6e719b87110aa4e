"""Keyword search and file outlines over the store.

Full-text search (LanceDB's native BM25 index over ``search_text``) with
filters pushed down as SQL, plus the entries an identifier-like query names
exactly, scored together by ``ranking.keyword_score`` before any cut. Pure
apart from the store handle it is given.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, fields, replace

from .. import pathglob
from ..errors import InvalidParams
from ..model import SearchHit
from ..words import split_identifier
from .ranking import DEFAULT_PARAMS, RankParams, is_exact, keyword_score, query_class

MAX_LIMIT = 500
# "function" is what people type for methods too.
KIND_ALIASES = {"function": ("function", "method"), "symbol": None}
RESULT_COLUMNS = ["id", "realm", "repo", "path", "lang", "kind", "name", "qualname", "start_line",
                  "end_line", "signature", "doc", "summary", "summary_source", "body"]


@dataclass(frozen=True)
class SearchRequest:
    query: str
    realm: str | None = None
    repo: str | None = None
    kind: str | None = None        # comma-separated kinds
    lang: str | None = None        # comma-separated languages
    path: str | None = None        # a repo-relative file or folder, or a glob
    limit: int = 20
    mode: str | None = None        # keyword | semantic | hybrid; None: the best available
    context: int = 0
    files: bool = False            # rank files by their best entries instead of entries
    explain: bool = False          # each hit says why it ranks where it does (hybrid.explain)
    # What context lines may read, as indexing would (set from the settings by the
    # server, never by a client): the size cap and the secret_allow globs.
    context_max_size: int = 1 << 20
    context_allow: tuple = ()

    @classmethod
    def from_params(cls, params: dict) -> SearchRequest:
        known = {f.name for f in fields(cls)} - _SERVER_SET
        unknown = set(params) - known - {"sync", "timeout"}
        if unknown:
            raise InvalidParams(f"unknown search params: {', '.join(sorted(unknown))}")
        if not isinstance(params.get("query"), str) or not params["query"].strip():
            raise InvalidParams("search needs a non-empty string 'query'")
        req = cls(**{k: v for k, v in params.items() if k in known})
        if not isinstance(req.limit, int) or not 1 <= req.limit <= MAX_LIMIT:
            raise InvalidParams(f"limit must be an integer in 1..{MAX_LIMIT}")
        if not isinstance(req.files, bool):
            raise InvalidParams("files must be true or false")
        if not isinstance(req.explain, bool):
            raise InvalidParams("explain must be true or false")
        if not isinstance(req.context, int) or not 0 <= req.context <= 50:
            raise InvalidParams("context must be an integer in 0..50")
        if req.mode not in (None, "keyword", "semantic", "hybrid"):
            raise InvalidParams("mode must be keyword, semantic or hybrid")
        for name in ("realm", "repo", "kind", "lang", "path"):
            if getattr(req, name) is not None and not isinstance(getattr(req, name), str):
                raise InvalidParams(f"{name} must be a string")
        return replace(req, path=pathglob.normalize(req.path)) if req.path else req

    def reading_as(self, settings) -> SearchRequest:
        """This request with the settings' reading limits for context lines."""
        return replace(self, context_max_size=settings.max_file_size,
                       context_allow=tuple(settings.secret_allow))


_SERVER_SET = frozenset({"context_max_size", "context_allow"})


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def path_only(rows: list[dict], req: SearchRequest) -> list[dict]:
    """The rows a path pattern SQL could not say (a character class) admits."""
    if not req.path or pathglob.to_sql(req.path, _sql) is not None:
        return rows
    return [r for r in rows if pathglob.matches(req.path, r["path"])]


def _in(column: str, values) -> str:
    return f"{column} IN ({', '.join(_sql(v) for v in values)})"


def build_where(req: SearchRequest) -> str | None:
    clauses = []
    if req.realm:
        clauses.append(f"realm = {_sql(req.realm)}")
    if req.repo:
        clauses.append(f"(repo = {_sql(req.repo)} OR repo_name = {_sql(req.repo)})")
    if req.kind:
        kinds: list[str] = []
        for k in req.kind.split(","):
            k = k.strip()
            kinds.extend(KIND_ALIASES.get(k) or (k,))
        clauses.append(_in("kind", kinds))
    if req.lang:
        clauses.append(_in("lang", [x.strip() for x in req.lang.split(",")]))
    if req.path:
        clause = pathglob.to_sql(req.path, _sql)
        if clause is not None:
            clauses.append(clause)
    return " AND ".join(clauses) or None


def exact_where(query: str) -> str | None:
    """SQL for the rows ``is_exact`` can accept (a superset; is_exact decides)."""
    q = query.strip()
    if query_class(q) != "identifier":
        return None
    parts = q.lower().split(".")
    low, last = _sql(q.lower()), _sql(parts[-1])
    clauses = [f"lower(name) = {low}", f"lower(qualname) = {low}",
               f"(kind = 'file' AND lower(name) LIKE {_sql(parts[-1] + '.%')})"]
    if len(parts) == 1:
        clauses.append(f"lower(name) = {last}")
    else:   # the part before the name is its class or its module: narrows `subprocess.run`
        near = _sql("%" + parts[-2] + "%")
        clauses.append(f"(lower(name) = {last} AND (lower(qualname) LIKE {near} "
                       f"OR lower(path) LIKE {near}))")
    return "(" + " OR ".join(clauses) + ")"


def query_terms(query: str) -> list[str]:
    """Words for full-text search: the raw words plus split identifiers."""
    raw = re.findall(r"[A-Za-z0-9_]+", query)
    words = []
    for token in raw:
        words.append(token.lower())
        words.extend(split_identifier(token))
    seen, out = set(), []
    for w in words:
        w = w.strip("_")
        if w and w not in seen:
            seen.add(w)
            out.append(w)
    return out


def text_filters(req: SearchRequest) -> dict[str, list[str]]:
    """build_where's filters for the hot indexes: exact terms, and the path
    pattern under pathglob.FILTER_KEY (each index evaluates it, pathglob.py)."""
    out: dict[str, list[str]] = {}
    if req.path:
        out[pathglob.FILTER_KEY] = [req.path]
    if req.realm:
        out["realm"] = [req.realm]
    if req.repo:
        out["repo|repo_name"] = [req.repo]
    if req.kind:
        kinds: list[str] = []
        for k in req.kind.split(","):
            kinds.extend(KIND_ALIASES.get(k.strip()) or (k.strip(),))
        out["kind"] = kinds
    if req.lang:
        out["lang"] = [x.strip() for x in req.lang.split(",")]
    return out


def _hot_index(store, req: SearchRequest):
    index = getattr(store, "text_index", None)
    if index is None or not index.ready:
        return None, None
    return index, text_filters(req)


def in_memory(store, req: SearchRequest) -> bool:
    """A keyword answer needs nothing but the hot index: no table, no file read."""
    return _hot_index(store, req)[0] is not None and not req.context


def keyword_rows(store, req: SearchRequest, fetch: int,
                 params: RankParams = DEFAULT_PARAMS) -> tuple[list[dict], list[str]]:
    terms = query_terms(req.query)
    rows: list[dict] = []
    index, filters = _hot_index(store, req)
    if terms and index is not None:
        return index.search(terms, filters, fetch, params.field_boosts), terms
    if terms:
        rows = store.fts(" ".join(terms), build_where(req), fetch, RESULT_COLUMNS + ["_score"])
    rows = path_only(rows, req)
    return rows, terms


def exact_rows(store, req: SearchRequest, limit: int) -> list[dict]:
    """Entries an identifier-like query names exactly, whatever BM25 thinks of them."""
    clause = exact_where(req.query)
    if clause is None:
        return []
    index, filters = _hot_index(store, req)
    if index is not None:
        names = {req.query.strip().lower(), req.query.strip().lower().split(".")[-1]}
        if "." in req.query:   # Class.method under a dotted prefix: `http.client.HTTPResponse.read`
            parts = req.query.strip().lower().split(".")
            names |= {".".join(parts[i:]) for i in range(1, len(parts))}
        rows = index.exact(sorted(names), filters, limit)
        return [r for r in rows if is_exact(r, req.query)]
    where = build_where(req)
    rows = store.entries_where(f"{clause} AND ({where})" if where else clause, RESULT_COLUMNS,
                               limit=limit)
    rows = [r for r in rows if is_exact(r, req.query)]
    rows = path_only(rows, req)
    return rows


def keyword_leg(store, req: SearchRequest, params: RankParams = DEFAULT_PARAMS) -> list[tuple]:
    """(score, row) pairs, best first: the FTS pool and the exact-name rows,
    scored together before anything is cut to the request's limit."""
    fetch = min(MAX_LIMIT * 2, max(params.keyword_pool, req.limit * 5))
    rows, terms = keyword_rows(store, req, fetch, params)
    seen = {_row_key(r) for r in rows}
    for row in exact_rows(store, req, params.exact_pool):
        if _row_key(row) not in seen:
            seen.add(_row_key(row))
            rows.append(row)
    scored = [(keyword_score(r, terms, req.query, params), r) for r in rows]
    scored.sort(key=lambda x: -x[0])
    return scored


def _row_key(row: dict) -> str:
    return row["id"]


def keyword_search(store, req: SearchRequest, params: RankParams = DEFAULT_PARAMS) -> dict:
    from .hybrid import fused_search

    return fused_search(store, None, replace(req, mode="keyword"), params)


def hit_from_row(row: dict, score: float, match: tuple) -> SearchHit:
    kind = row.get("kind") or "file"
    symbol = None if kind == "file" else row.get("qualname")
    return SearchHit(
        realm=row.get("realm") or "", repo=row.get("repo") or "", path=row.get("path") or "",
        symbol=symbol, kind=kind, start_line=int(row.get("start_line") or 1),
        end_line=int(row.get("end_line") or 1), score=score, match=match,
        snippet=snippet(row), summary=summary(row), lang=row.get("lang") or "",
        summary_source=(row.get("summary_source") or "").split(":")[0])


def snippet(row: dict) -> str:
    sig = (row.get("signature") or "").strip()
    if sig and row.get("kind") not in ("section", "file"):
        return sig[:200]
    body = row.get("body") or ""
    for line in body.splitlines()[1 if row.get("kind") == "section" else 0:]:
        if line.strip():
            return line.strip()[:200]
    return sig[:200]


def summary(row: dict) -> str:
    text = (row.get("summary") or row.get("doc") or "").strip()
    return text.split("\n\n", 1)[0].replace("\n", " ")[:240]


def outline(store, realm: str, repo: str, path: str) -> list[dict]:
    """Entries of one file in file order (the ``symbols`` method)."""
    where = f"realm = {_sql(realm)} AND repo = {_sql(repo)} AND path = {_sql(path)}"
    rows = store.entries_where(where, RESULT_COLUMNS)
    rows.sort(key=lambda r: (r["start_line"], -r["end_line"], r["kind"] != "file"))
    return [hit_from_row(r, 0.0, ()).to_json() for r in rows]
