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

from .model import Def, FileFacts, LinkFact, Ref, ref_code

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
    for batch in store.scan_batches("entries", where, ENTRY_COLUMNS):
        cols = batch.to_pydict()
        for realm, repo, path, kind, qualname, name, start, end in zip(
                cols["realm"], cols["repo"], cols["path"], cols["kind"], cols["qualname"],
                cols["name"], cols["start_line"], cols["end_line"]):
            if kind != "file":
                defs[(realm, repo, path)].append(Def(_intern(kind), qualname, _intern(name),
                                                     _int(start), _int(end)))
    _add_links(facts, store.scan_batches("links", where, LINK_COLUMNS))
    _release_arrow()
    for key, f in facts.items():
        f.defs = sorted(defs.get(key, []), key=lambda d: (d.start, -d.end))
        f.links.sort(key=lambda ln: ln.line)
        if is_manifest(f.path):
            f.manifest = _read_manifest(f.repo, f.path)
    return list(facts.values())


def _add_links(facts: dict[tuple, FileFacts], batches) -> None:
    """Links and references of the ``links`` table onto their files' facts.

    Streamed a batch at a time (reading the whole table into Arrow and sorting
    it there was +390 MB at the peak of a stdlib build). Each string column is
    dictionary-encoded per batch and its values interned once, so a row costs
    integer ids in numpy arrays rather than Python work (the loop per row was
    2.7 s of a stdlib build's store read); references are then ordered by file
    and line (stably, as stored) and packed column-wise per file.
    """
    import numpy as np

    strings = _Interned()
    parts: dict[str, list] = {c: [] for c in LINK_COLUMNS}
    for batch in batches:
        for c in LINK_COLUMNS:
            column = batch.column(c)
            if c in ("line", "broken"):
                parts[c].append(column.to_numpy(zero_copy_only=False))
            else:
                parts[c].append(strings.ids(column))
    if not parts["line"]:
        return
    col = {c: np.concatenate(v) for c, v in parts.items()}
    del parts
    values = np.array(strings.values, dtype=object)
    is_link = col["how"] == strings.id_of("link")
    for i in np.flatnonzero(is_link).tolist():
        f = facts.get((values[col["realm"][i]], values[col["repo"][i]], values[col["path"][i]]))
        if f is not None:
            f.links.append(LinkFact(values[col["kind"][i]], values[col["target"][i]],
                                    int(col["line"][i]), bool(col["broken"][i])))
    refs = np.flatnonzero(~is_link)
    # by file (realm, repo, path ids), then line; lexsort is stable: stored order kept
    order = refs[np.lexsort(tuple(col[c][refs] for c in ("line", "path", "repo", "realm")))]
    codes = np.zeros(len(values), dtype=np.uint8)     # kind id -> its packed reference code
    for k in np.unique(col["kind"][refs]).tolist():
        codes[k] = ref_code(values[k])
    new_file = np.zeros(max(len(order) - 1, 0), dtype=bool)
    for c in ("realm", "repo", "path"):
        new_file |= np.diff(col[c][order]) != 0
    for run in np.split(order, np.flatnonzero(new_file) + 1):
        if not len(run):
            continue
        first = run[0]
        f = facts.get((values[col["realm"][first]], values[col["repo"][first]],
                       values[col["path"][first]]))
        if f is None:
            continue
        f.set_refs(codes[col["kind"][run]].tobytes(), values[col["target"][run]].tolist(),
                   values[col["module"][run]].tolist(), col["line"][run].tolist(),
                   values[col["scope"][run]].tolist())


class _Interned:
    """String values -> small integer ids, each value interned once (half a million
    references repeat a few thousand names)."""

    def __init__(self):
        self.values: list = []
        self._ids: dict = {}

    def id_of(self, value) -> int:
        got = self._ids.get(value)
        if got is None:
            got = self._ids[value] = len(self.values)
            self.values.append(_intern(value))
        return got

    def ids(self, column):
        """numpy ids of an Arrow string column's values (None included)."""
        import numpy as np

        encoded = column.dictionary_encode(null_encoding="encode")
        mapping = np.array([self.id_of(v) for v in encoded.dictionary.to_pylist()],
                           dtype=np.int64)
        return mapping[encoded.indices.to_numpy(zero_copy_only=False)]


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
