"""A vector reaches the daemon's hot vector index before the table's commits.

Semantic search answers from the hot matrix, and storing a vector costs a
read, a delete and an add on the entries table (the slowest part of a saved
file's embed step), so the matrix goes first. A table write that fails takes
the vectors out of the matrix again: it never holds what the table does not.
"""

from __future__ import annotations

import pytest
from testlib import hash_embedded_store

from indexd.enrich.vectors import VectorStage
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest

CODE = "def refund_order(order):\n    '''Give the customer their money back.'''\n    return -order\n"


def _semantic(store, embedder):
    req = SearchRequest(query="give the customer their money back", mode="semantic", limit=5)
    return [h["symbol"] for h in fused_search(store, embedder, req)["results"]]


def _ready(git_repo, make_store):
    settings, store, embedder = hash_embedded_store(git_repo, make_store, {"pay.py": CODE})
    store.build_text_index()
    store.build_vector_index()
    Indexer(settings, store).index()
    assert store.vector_index.vectors == 0 and store.count_missing_vectors() == 2
    return store, embedder, VectorStage(store, embedder)


def test_vectors_are_searchable_before_the_table_commits(git_repo, make_store):
    store, embedder, stage = _ready(git_repo, make_store)
    seen = []
    other = type(store)(store.path)   # another reader: this one's lock is the writer's now
    store.fault_hook = lambda op: op == "vectors" and seen.append(
        (_semantic(store, embedder), other.count("entries", "vector IS NOT NULL")))
    assert stage.step() == 2
    assert seen and "refund_order" in seen[0][0] and seen[0][1] == 0, seen
    assert "refund_order" in _semantic(store, embedder)
    assert store.vector_index.vectors == store.count("entries", "vector IS NOT NULL") == 2


def test_a_failed_vector_write_leaves_the_matrix_as_the_table(git_repo, make_store):
    store, embedder, stage = _ready(git_repo, make_store)

    def disk_full(op):
        if op == "vectors":
            raise OSError(28, "No space left on device")
    store.fault_hook = disk_full
    with pytest.raises(OSError, match="No space left"):
        stage.step()
    assert store.vector_index.vectors == 0 and store.count_missing_vectors() == 2
    assert _semantic(store, embedder) == []
    store.fault_hook = None
    assert stage.step() == 2 and "refund_order" in _semantic(store, embedder)
