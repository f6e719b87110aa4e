"""The coverage table: added to an existing store without a migration."""

from __future__ import annotations

from indexd.store import Store


def row(test: str) -> dict:
    return {"src_file_key": "k1", "realm": "work", "src_repo": "/r", "src_path": "tests/t.py",
            "src_symbol": test, "src_hash": "h", "dst_repo": "/r", "dst_path": "a.py",
            "dst_symbol": "f", "dst_hash": "h2", "lines": 3, "context": test, "how": "coverage",
            "ingested_at": 1.0}


def test_a_store_without_the_table_gets_it_empty_and_keeps_its_version(tmp_path):
    store = Store(tmp_path / "store")
    store.db.drop_table("coverage")      # as a store made before tests ingest existed
    version = store.get_meta("schema_version")
    reopened = Store(tmp_path / "store")
    assert reopened.coverage_rows() == [] and reopened.get_meta("schema_version") == version


def test_replace_coverage_swaps_one_test_files_edges(tmp_path):
    store = Store(tmp_path / "store")
    store.replace_coverage(["k1"], [row("test_a"), row("test_b")])
    store.replace_coverage(["k1"], [row("test_c")])
    store.replace_coverage(["k2"], [])
    assert [r["src_symbol"] for r in store.coverage_rows()] == ["test_c"]
