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
