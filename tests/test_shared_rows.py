"""Copying a shard's rows (shared_index/rows.py): what a local parse would give them.

The end-to-end path (publish to moto's S3, a teammate's cold index, a store
identical to a local parse) is in tests/e2e/test_shared_index.py; this covers
the per-row rules that path rarely meets: summaries made by a model, files
published without summaries, same-named entries in one file.
"""

from __future__ import annotations

import pyarrow as pa

from indexd.model import FileRecord
from indexd.shared_index.rows import _by_path, _localized
from indexd.store.packed import ENTRY_COLUMNS
from indexd.store.rows import entry_id

SHARED = [c for c in ENTRY_COLUMNS if c not in ("realm", "repo", "repo_name", "file_key", "id")]


def _row(path, kind, qualname, line, source="docstring", summary="", doc=""):
    row = {c: None for c in SHARED}
    row.update(path=path, lang="python", kind=kind, name=qualname.split(".")[-1],
               qualname=qualname, start_line=line, end_line=line + 1, doc=doc,
               signature=f"def {qualname}()", summary=summary, summary_source=source, body="")
    return row


def _parts(rows_by_path: dict[str, list[dict]]):
    table = pa.Table.from_pylist([r for rows in rows_by_path.values() for r in rows])
    recs = {p: FileRecord(realm="work", repo="/home/me/app", path=p, language="python")
            for p in rows_by_path}
    return table, [(recs[p], part) for p, part in _by_path(table, sort=False)]


def test_same_named_entries_are_numbered_in_source_order_with_local_ids():
    table, parts = _parts({"a.py": [_row("a.py", "file", "a.py", 1),
                                    _row("a.py", "function", "twice", 3),
                                    _row("a.py", "function", "twice", 9)]})
    out, keep = _localized(table, parts, summaries=True)
    assert keep == [True]
    rec = parts[0][0]
    assert out["id"].to_pylist() == [entry_id(rec.key, "file", "a.py", 0),
                                     entry_id(rec.key, "function", "twice", 0),
                                     entry_id(rec.key, "function", "twice", 1)]
    assert set(out["file_key"].to_pylist()) == {rec.key}
    assert set(out["repo_name"].to_pylist()) == {"app"}
    assert out["embed_hash"].null_count == 3     # vectors come through the checked cache only


def test_a_model_summary_becomes_the_docstring_summary_a_parse_gives():
    table, parts = _parts({"a.py": [_row("a.py", "function", "load", 1, source="llm",
                                         summary="Loads the thing, says the model.",
                                         doc="Read the config file.\n\nMore.")]})
    out, keep = _localized(table, parts, summaries=True)
    assert keep == [True]
    assert out["summary"].to_pylist() == ["Read the config file."]
    assert out["summary_source"].to_pylist() == ["docstring"]


def test_files_whose_rows_a_parse_would_not_give_are_left_to_the_parse():
    table, parts = _parts({
        "a.py": [_row("a.py", "file", "a.py", 1, source="llm", summary="What a.py does.")],
        "b.py": [_row("b.py", "function", "f", 1, source="")],          # published unsummarized
        "c.py": [_row("c.py", "function", "g", 1)]})
    out, keep = _localized(table, parts, summaries=True)
    assert keep == [False, False, True]
    assert out["path"].to_pylist() == ["c.py"]
    # With summaries off here, every file can be copied, none carrying a summary.
    out, keep = _localized(table, parts, summaries=False)
    assert keep == [True, True, True]
    assert set(out["summary"].to_pylist()) == {""} and set(out["summary_source"].to_pylist()) == {""}


class _CountingDb:
    """A LanceDB database that counts the tables opened (each open is a read of it)."""

    def __init__(self, db):
        self.db, self.opened = db, []

    def open_table(self, name):
        self.opened.append(name)
        return self.db.open_table(name)


def test_a_shard_is_read_once_however_many_batches_ask_and_let_go_as_copied(tmp_path):
    import lancedb

    from indexd.shared_index.location import table_name
    from indexd.shared_index.rows import LINK_COLUMNS, ShardRows
    from indexd.store import schema as S

    db = lancedb.connect(str(tmp_path / "shared"))
    rows = [_row("a.py", "function", "f", 1), _row("b.py", "function", "g", 1),
            _row("b.py", "function", "h", 5)]
    entries = pa.Table.from_pylist(rows, schema=pa.schema(
        [S.entries_schema().field(c) for c in SHARED if c != "vector"]))
    links = pa.Table.from_pylist(
        [{"path": "b.py", "line": 6, "kind": "call", "target": "g", "scope": "h", "module": None,
          "broken": False, "how": "reference"}],
        schema=pa.schema([S.LINKS.field(c) for c in LINK_COLUMNS]))
    db.create_table(table_name("app", "entries"), entries)
    db.create_table(table_name("app", "links"), links)
    counting = _CountingDb(db)
    shard = ShardRows(realm="work", repo="/home/me/app", shard="app",
                      db=counting, hashes={"a.py": "h1", "b.py": "h2"})
    rec = {p: FileRecord(realm="work", repo="/home/me/app", path=p, language="python")
           for p in ("a.py", "b.py")}
    first, parse = shard.writes([rec["a.py"]], packed=False, summaries=True)
    second, parse2 = shard.writes([rec["b.py"]], packed=False, summaries=True)
    assert parse == parse2 == []
    assert [r["qualname"] for r in first[0].entries] == ["f"]
    assert [r["qualname"] for r in second[0].entries] == ["g", "h"]
    assert second[0].links[0]["file_key"] == rec["b.py"].key and second[0].links[0]["target"] == "g"
    assert first[0].links == []
    assert len(counting.opened) == 2            # entries and links, once each
    assert shard._entries == {} and shard._links == {}   # nothing held once handed out
