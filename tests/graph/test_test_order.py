"""The order `tests affected` lists test files in: the likeliest to fail first.

The rule was chosen on the mutants of bench/impact_vs_tests.py (docs/benchmarks.md, "The
order of tests affected"): the best chain's score alone put marshmallow's failing files no
earlier than a random order, because long chains through a hub score every file alike."""

from __future__ import annotations

from indexd.graph.test_select import named_after, ranked, select_tests

CHANGE = {"repo": "/r/proj", "path": "src/proj/fields.py", "symbol": "Pluck._serialize",
          "change": "modified"}


def item(path: str, symbol: str, score: float, hops: int, how: str = "inferred") -> dict:
    via = [{"kind": "calls", "from": f"proj/{path}::{symbol}", "to": "x", "line": 1, "how": how}
           for _ in range(hops)]
    return {"repo": "/r/proj", "path": path, "symbol": symbol, "score": score,
            "distance": hops, "via": via}


def order(tests: list[dict]) -> list[str]:
    picked = select_tests([(CHANGE, {"tests": tests, "complete": True})], depth=3)
    return [r["path"] for r in ranked(picked["files"])]


def test_a_test_file_named_after_the_changed_module_runs_first():
    tests = [item("tests/test_serialization.py", "test_a", 0.245, 2),
             item("tests/test_fields.py", "test_b", 0.007, 4)]
    assert order(tests) == ["tests/test_fields.py", "tests/test_serialization.py"]


def test_then_the_shortest_chain_then_the_most_tests_then_the_score():
    tests = [item("tests/test_api.py", "test_a", 0.046, 4),
             item("tests/test_filters.py", "test_b", 0.004, 3),
             item("tests/test_ext.py", "test_c", 0.009, 6),
             item("tests/test_async.py", "test_d", 0.004, 6),
             item("tests/test_async.py", "test_e", 0.004, 6)]
    assert order(tests) == ["tests/test_filters.py", "tests/test_api.py",
                            "tests/test_async.py", "tests/test_ext.py"]
    rows = ranked(select_tests([(CHANGE, {"tests": tests, "complete": True})], 3)["files"])
    assert [(r["distance"], len(r["node_ids"])) for r in rows] == [(3, 1), (4, 1), (6, 2), (6, 1)]


def test_trusted_chains_still_come_before_name_matches():
    tests = [item("tests/test_fields.py", "test_a", 0.9, 1, how="name_match"),
             item("tests/test_schema.py", "test_b", 0.1, 3, how="resolved")]
    assert order(tests) == ["tests/test_schema.py", "tests/test_fields.py"]


def test_named_after_compares_whole_words():
    assert named_after("tests/test_fields.py", "src/m/fields.py")
    assert named_after("tests/test_compat.py", "src/click/_compat.py")
    assert named_after("tests/test_funcutils_fb.py", "boltons/funcutils.py")
    assert named_after("pkg/fields_test.py", "pkg/fields.py")
    assert not named_after("tests/test_core.py", "src/m/re.py")
    assert not named_after("tests/test_fieldset.py", "src/m/fields.py")
