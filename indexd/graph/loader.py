"""Store tables -> ``FileFacts`` (the graph layer's only store I/O).

``load_facts`` reads the ``files``, ``entries`` and ``links`` tables and the
few manifests import resolution needs (go.mod, package.json, tsconfig.json,
Cargo.toml) from disk. ``facts_from_parse`` builds the same facts straight
from a ParseResult, for tests and callers that parse in-process.
"""

from __future__ import annotations

import sys

import json
import re
import tomllib
from collections import defaultdict
from pathlib import Path, PurePosixPath

from .model import Def, FileFacts, LinkFact, Ref

_INTS: dict[int, int] = {}

MANIFESTS = ("go.mod", "package.json", "tsconfig.json", "jsconfig.json", "Cargo.toml")
ENTRY_COLUMNS = ["realm", "repo", "path", "lang", "kind", "qualname", "name",
                 "start_line", "end_line"]
LINK_COLUMNS = ["realm", "repo", "path", "line", "kind", "target", "scope", "module",
                "broken", "how"]


def is_manifest(path: str) -> bool:
    return PurePosixPath(path).name in MANIFESTS


def manifest_info(path: str, text: str) -> dict | None:
    """The resolution-relevant content of a manifest file, or None."""
    name = PurePosixPath(path).name
    try:
        if name == "go.mod":
            m = re.search(r"^\s*module\s+(\S+)", text, re.M)
            return {"go_module": m.group(1).strip('"')} if m else None
        if name == "package.json":
            data = json.loads(text)
            if not isinstance(data, dict):
                return None
            return {"js_package": data.get("name"),
                    "main": [data[k] for k in ("source", "types", "module", "main")
                             if isinstance(data.get(k), str)]}
        if name in ("tsconfig.json", "jsconfig.json"):
            from ..parse.configdoc import _strip_jsonc
            data = json.loads(_strip_jsonc(text))
            opts = data.get("compilerOptions") or {} if isinstance(data, dict) else {}
            return {"ts_base_url": opts.get("baseUrl"), "ts_paths": opts.get("paths") or {}}
        if name == "Cargo.toml":
            data = tomllib.loads(text)
            crate = (data.get("lib") or {}).get("name") or (data.get("package") or {}).get("name")
            return {"rust_crate": crate.replace("-", "_")} if crate else None
    except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        return None
    return None


def facts_from_parse(realm: str, repo: str, path: str, lang: str, parse_result,
                     status: str = "indexed", text: str | None = None) -> FileFacts:
    """FileFacts from an in-process ``ParseResult`` (text: for manifests)."""
    defs = [Def(e.kind, e.qualname, e.name, e.start_line, e.end_line)
            for e in parse_result.entries if e.kind != "file"]
    refs = [Ref(r.kind, r.name, r.module, r.line, r.scope) for r in parse_result.references]
    links = [LinkFact(ln.kind, ln.target, ln.line, ln.broken) for ln in parse_result.links]
    manifest = manifest_info(path, text) if text is not None and is_manifest(path) else None
    return FileFacts(realm=realm, repo=repo, path=path, lang=lang, status=status,
                     defs=defs, refs=refs, links=links, manifest=manifest)


def _sql_in(column: str, values) -> str:
    return f"{column} IN (" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def load_file_facts(store, keys: list[tuple]) -> list[FileFacts]:
    """Facts of some files only (realm, repo, path), for incremental updates."""
    from ..model import file_key

    out: list[FileFacts] = []
    for start in range(0, len(keys), 300):
        chunk = [file_key(*k) for k in keys[start:start + 300]]
        out.extend(load_facts(store, where=_sql_in("file_key", chunk), file_keys=set(chunk)))
    return out


def load_facts(store, realm: str | None = None, where: str | None = None,
               file_keys: set | None = None) -> list[FileFacts]:
    """Every file's facts from the store (optionally one realm, or some files)."""
    if where is None and realm is not None:
        where = "realm = '" + realm.replace("'", "''") + "'"
    facts: dict[tuple, FileFacts] = {}
    for rec in store.file_records(realm=realm).values():
        if file_keys is not None and rec.key not in file_keys:
            continue
        facts[(rec.realm, rec.repo, rec.path)] = FileFacts(
            realm=rec.realm, repo=rec.repo, path=rec.path, lang=rec.language,
            status=rec.status)
    defs: dict[tuple, list[Def]] = defaultdict(list)
    for row in store.entries_where(where, columns=ENTRY_COLUMNS, limit=None):
        if row["kind"] != "file":
            defs[(row["realm"], row["repo"], row["path"])].append(Def(
                _intern(row["kind"]), row["qualname"], _intern(row["name"]),
                _int(row["start_line"]), _int(row["end_line"])))
    query = store.links.search()
    if where:
        query = query.where(where)
    with store.lock.read():
        table = query.select(LINK_COLUMNS).limit(None).to_arrow()
    _add_links(facts, table)
    del table
    _release_arrow()
    for key, f in facts.items():
        f.defs = sorted(defs.get(key, []), key=lambda d: (d.start, -d.end))
        f.links.sort(key=lambda ln: ln.line)
        if is_manifest(f.path):
            f.manifest = _read_manifest(f.repo, f.path)
    return list(facts.values())


def _add_links(facts: dict[tuple, FileFacts], table) -> None:
    """Links and references of the ``links`` table onto their files' facts.

    References are grouped per file in Arrow (a stable sort by file, then line)
    and packed column-wise straight from each file's slice: no per-row dict or
    tuple is ever built for the half a million references of the stdlib.
    """
    import pyarrow.compute as pc

    if not table.num_rows:
        return
    is_link = pc.fill_null(pc.equal(table["how"], "link"), False)
    for row in _rows(table.filter(is_link)):
        f = facts.get((row["realm"], row["repo"], row["path"]))
        if f is not None:
            f.links.append(LinkFact(row["kind"], row["target"], row["line"], bool(row["broken"])))
    refs = table.filter(pc.invert(is_link))
    if not refs.num_rows:
        return
    refs = refs.take(pc.sort_indices(refs, [("realm", "ascending"), ("repo", "ascending"),
                                            ("path", "ascending"), ("line", "ascending")]))
    file_id = pc.binary_join_element_wise(refs["realm"], refs["repo"], refs["path"], "\x1f")
    cuts = pc.indices_nonzero(pc.not_equal(file_id[1:], file_id[:-1])).to_pylist()
    bounds = [0] + [c + 1 for c in cuts] + [refs.num_rows]
    for lo, hi in zip(bounds, bounds[1:]):
        part = refs.slice(lo, hi - lo).select(["realm", "repo", "path", "kind", "target",
                                               "module", "line", "scope"]).to_pydict()
        f = facts.get((part["realm"][0], part["repo"][0], part["path"][0]))
        if f is None:
            continue
        # Interned: half a million references repeat a few thousand names.
        f.set_refs(part["kind"], [_intern(v) for v in part["target"]],
                   [_intern(v) for v in part["module"]], part["line"],
                   [_intern(v) for v in part["scope"]])


def _rows(table, chunk: int = 20_000):
    """Rows of an Arrow table as dicts, a slice at a time."""
    for start in range(0, table.num_rows, chunk):
        part = table.slice(start, chunk).to_pydict()
        names = list(part)
        for values in zip(*(part[n] for n in names)):
            yield dict(zip(names, values))


def _release_arrow() -> None:
    """Hand Arrow's freed buffers back: its mimalloc/jemalloc pool keeps them (about
    200 MB after reading the stdlib's links table) and ``malloc_trim`` cannot reach them."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _int(value: int) -> int:
    """One shared int object per line number (ints above 256 are not cached)."""
    return _INTS.setdefault(value, value)


def _intern(value):
    return sys.intern(value) if value is not None else None


def _read_manifest(repo: str, path: str) -> dict | None:
    try:
        text = (Path(repo) / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return manifest_info(path, text)
