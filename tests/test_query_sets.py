"""The search-quality query sets are valid, and their train/held-out split is the rule's.

bench/search_quality.py reports held-out numbers that must not have been tuned
on: these tests pin the split rule (stratified by kind, a function of the
texts only, stable when queries are added) and run bench/check_queries.py's
checks on the committed sets, so a target that stops existing or a split
edited by hand fails here, not in a 25-minute bench run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import check_queries  # noqa: E402
import query_sets  # noqa: E402


def _queries(n: int, kind: str) -> list[dict]:
    return [{"id": f"{kind}{i}", "query": f"{kind} query number {i}", "kind": kind,
             "expected": [{"path": "a.py", "symbol": "f"}]} for i in range(n)]


def test_split_rule_is_stratified_by_kind_and_half_heldout():
    queries = _queries(25, "meaning") + _queries(12, "mixed") + _queries(7, "identifier")
    rule = query_sets.assign_splits(queries)
    for kind, n in (("meaning", 25), ("mixed", 12), ("identifier", 7)):
        held = sum(rule[q["query"]] == "heldout" for q in queries if q["kind"] == kind)
        assert held == (n + 1) // 2, (kind, held)


def test_split_rule_depends_on_the_texts_only():
    queries = _queries(20, "meaning") + _queries(9, "mixed")
    shuffled = list(reversed(queries))
    assert query_sets.assign_splits(queries) == query_sets.assign_splits(shuffled)


def test_adding_a_query_moves_at_most_one_other():
    queries = _queries(30, "meaning")
    before = query_sets.assign_splits(queries)
    for extra in range(10):
        more = queries + [{"id": "new", "query": f"an added query {extra}", "kind": "meaning",
                           "expected": [{"path": "a.py", "symbol": "f"}]}]
        after = query_sets.assign_splits(more)
        moved = [t for t in before if before[t] != after[t]]
        assert len(moved) <= 1, moved


def _with_splits(queries: list[dict]) -> list[dict]:
    rule = query_sets.assign_splits(queries)
    return [q | {"split": rule[q["query"]]} for q in queries]


def test_check_reports_a_hand_edited_split(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    queries = _with_splits(_queries(4, "meaning"))
    errors, _ = check_queries.check(queries, tmp_path, use_indexd=False, corpus={"a.py"})
    assert errors == []
    flipped = queries[0]
    flipped["split"] = "train" if flipped["split"] == "heldout" else "heldout"
    errors, _ = check_queries.check(queries, tmp_path, use_indexd=False, corpus={"a.py"})
    assert len(errors) == 1 and flipped["id"] in errors[0] and "the rule says" in errors[0]


def test_write_splits_replaces_a_split_already_there(tmp_path):
    """A new set written with every query "train": --write-splits said "0
    split(s) changed" and left them so (the old field, after "kind", overwrote
    the rule's)."""
    queries = [q | {"split": "train"} for q in _queries(6, "meaning")]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"queries": queries}), encoding="utf-8")
    assert check_queries.write_splits(query_sets.load(path)) == 3
    written = query_sets.load(path).queries
    assert [q["split"] for q in written] == [query_sets.assign_splits(queries)[q["query"]]
                                             for q in written]
    assert list(written[0]) == ["id", "query", "kind", "split", "expected"]


def test_check_reports_an_unknown_kind(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    queries = _queries(3, "meaning")
    queries[1]["kind"] = "fuzzy"
    errors, _ = check_queries.check(_with_splits(queries), tmp_path, use_indexd=False,
                                    corpus={"a.py"})
    assert errors == [f"{queries[1]['id']}: kind must be one of {query_sets.KINDS}, not 'fuzzy'"]


def test_check_reports_a_target_outside_the_corpus(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    queries = [{"id": "x", "query": "f", "kind": "identifier", "split": "heldout",
                "expected": [{"path": "tests/a.py", "symbol": "f"}]}]
    errors, _ = check_queries.check(queries, tmp_path, use_indexd=False, corpus=set())
    assert errors == ["x: tests/a.py is not in the corpus the bench indexes"]


def _check_committed(name: str, root: Path) -> tuple[query_sets.QuerySet, list[str]]:
    qs = query_sets.load(name)
    files = query_sets.corpus_files(qs.source, root)
    corpus = {p.relative_to(root).as_posix() for p in files}
    errors, _ = check_queries.check(qs.queries, root, use_indexd=True, corpus=corpus)
    return qs, errors


def test_stdlib_set_targets_exist_and_splits_follow_the_rule():
    qs, errors = _check_committed("stdlib", query_sets.stdlib_root())
    assert errors == []
    kinds = {q["kind"] for q in qs.queries}
    assert kinds == set(query_sets.KINDS)
    assert sum(q["kind"] == "identifier" for q in qs.queries) >= 20


def test_second_stdlib_set_targets_exist_and_splits_follow_the_rule():
    qs, errors = _check_committed("stdlib2", query_sets.stdlib_root())
    assert errors == []
    assert {q["kind"] for q in qs.queries} == set(query_sets.KINDS) and len(qs.queries) >= 80
    first = {(e["path"], e["symbol"]) for q in query_sets.load("stdlib").queries
             for e in q["expected"]}
    assert not first & {(e["path"], e["symbol"]) for q in qs.queries for e in q["expected"]}


def test_click_set_targets_exist_and_splits_follow_the_rule(tmp_path):
    sdist = BENCH / "out" / "impact_vs_tests" / "click-8.1.8.tar.gz"
    if not sdist.is_file():
        pytest.skip(f"{sdist} not downloaded (bench/impact_vs_tests.py or "
                    "bench/check_queries.py click fetches it)")
    qs = query_sets.load("click")
    root = query_sets.source_root(qs.source, tmp_path)
    qs, errors = _check_committed("click", root)
    assert errors == []
    assert len(qs.queries) >= 40
    assert {q["kind"] for q in qs.queries} == set(query_sets.KINDS)
