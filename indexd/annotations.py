"""Agent annotations: notes attached to a file, symbol or relationship.

An annotation records the target's content hash when it was written. While
the target is unchanged it is applied to the entry (summary, summary_source
"agent", and its words join the searchable text), across reindexes; once the
content changes it is reported as stale and no longer applied.
"""

from __future__ import annotations

import time

from .errors import InvalidParams, RealmError
from .model import content_hash, file_key
from .realms import locate

MAX_TEXT = 4000


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class Annotations:
    def __init__(self, store, settings_provider):
        self.store = store
        self._settings = settings_provider

    def annotate(self, target: str, text: str, author: str = "agent") -> dict:
        if not isinstance(text, str) or not text.strip():
            raise InvalidParams("annotate needs non-empty 'text'")
        if len(text) > MAX_TEXT:
            raise InvalidParams(f"annotation text is limited to {MAX_TEXT} characters")
        src, arrow, dst = target.partition(" -> ")
        realm, repo, path, symbol = self._resolve(src)
        entry = self._entry(realm, repo, path, symbol)
        other = None
        if arrow:
            o_realm, o_repo, o_path, o_symbol = self._resolve(dst)
            other = f"{o_repo}/{o_path}" + (f"::{o_symbol}" if o_symbol else "")
        row = {"id": content_hash(f"{realm}\x1f{repo}\x1f{path}\x1f{symbol}\x1f{other}"),
               "realm": realm, "repo": repo, "path": path, "symbol": symbol,
               "target_kind": "edge" if other else ("symbol" if symbol else "file"),
               "other": other, "text": text.strip(), "author": str(author or "agent")[:100],
               "content_hash": entry["content_hash"], "created_at": time.time()}
        with self.store.writer:     # a batch must not rewrite the entry in between
            entry = self._entry(realm, repo, path, symbol)
            row["content_hash"] = entry["content_hash"]
            self.store.put_annotation(row)
            if not other:
                self._apply_to_store(entry, row)
        return {"annotated": row["target_kind"], "realm": realm, "repo": repo, "path": path,
                "symbol": symbol, "other": other, "stale": False}

    def _resolve(self, target: str) -> tuple[str, str, str, str | None]:
        path, _, symbol = target.strip().partition("::")
        realm, repo, rel = locate(self._settings(), path)
        return realm, repo, rel, symbol or None

    def _entry(self, realm, repo, path, symbol) -> dict:
        key = file_key(realm, repo, path)
        where = f"file_key = {_sql(key)} AND " + (
            f"qualname = {_sql(symbol)} AND kind != 'file'" if symbol else "kind = 'file'")
        rows = self.store.entries_where(where, ["id", "content_hash", "search_text", "kind"], limit=1)
        if not rows:
            what = f"symbol {symbol!r} in {path}" if symbol else path
            raise RealmError(f"{what} is not indexed (yet); check the name with: indexctl symbols {path}")
        return rows[0]

    def _apply_to_store(self, entry: dict, ann: dict) -> None:
        self.store.update_entries({entry["id"]: _fields(entry["search_text"], ann)},
                                  expect={entry["id"]: ann["content_hash"]})

    def apply(self, rows: list[dict]) -> int:
        """Before a store write: give rows their still-valid annotations."""
        if not rows:
            return 0
        keys = sorted({r["file_key"] for r in rows})
        found: dict[tuple, dict] = {}
        for start in range(0, len(keys), 300):
            chunk = keys[start:start + 300]
            paths = " OR ".join(f"(realm = {_sql(k.split(chr(31))[0])} AND repo = {_sql(k.split(chr(31))[1])}"
                                f" AND path = {_sql(k.split(chr(31))[2])})" for k in chunk)
            for ann in self.store.annotations_for(f"target_kind != 'edge' AND ({paths})"):
                found[(file_key(ann["realm"], ann["repo"], ann["path"]), ann["symbol"])] = ann
        applied = 0
        for row in rows:
            ann = found.get((row["file_key"], None if row["kind"] == "file" else row["qualname"]))
            if ann is not None and ann["content_hash"] == row["content_hash"]:
                row.update(_fields(row["search_text"], ann))
                applied += 1
        return applied

    def list(self, path: str | None = None) -> dict:
        where = None
        if path:
            realm, repo, rel, _ = self._resolve(path)
            where = f"realm = {_sql(realm)} AND repo = {_sql(repo)} AND path = {_sql(rel)}"
        out = []
        for ann in self.store.annotations_for(where):
            current = self._current_hash(ann)
            out.append({k: ann[k] for k in ("realm", "repo", "path", "symbol", "target_kind", "other",
                                            "text", "author", "created_at")}
                       | {"stale": current != ann["content_hash"]})
        out.sort(key=lambda a: (a["path"], a["symbol"] or "", a["created_at"]))
        return {"annotations": out}

    def _current_hash(self, ann: dict) -> str | None:
        try:
            return self._entry(ann["realm"], ann["repo"], ann["path"], ann["symbol"])["content_hash"]
        except RealmError:
            return None


def _fields(search_text: str, ann: dict) -> dict:
    marker = "\n[agent] "
    base = (search_text or "").split(marker, 1)[0]
    return {"summary": ann["text"][:600], "summary_source": "agent",
            "search_text": f"{base}{marker}{ann['text']}"}
