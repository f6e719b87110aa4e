"""Coverage edges in impact answers (graph/coverage.py) and coverage contexts
(coverage_ingest.parse_context): pure parts, no store."""

from __future__ import annotations

from indexd.coverage_ingest import NamedTest, parse_context
from indexd.graph.coverage import (IMPORT_WHY, CovEdge, CoverageIndex, covering_tests,
                                   merge_tests, observed_tests)
from indexd.graph.impact import Visit
from indexd.graph.model import Edge

R = "/src/app"


def edge(test: str, dst: str | None, src_hash="t1", dst_hash="d1") -> CovEdge:
    return CovEdge("work", R, "tests/test_a.py", test, src_hash, R, "pkg/a.py", dst, dst_hash,
                   2, f"test_a.{test}")


def index(*edges: CovEdge) -> CoverageIndex:
    idx = CoverageIndex(list(edges))
    idx.hashes = {("work", R, "tests/test_a.py"): {"test_x": "t1", "test_y": "t1"},
                  ("work", R, "pkg/a.py"): {"bump": "d1", "K": "dk", "K.m": "d1"}}
    return idx


def static_test(symbol=None) -> dict:
    return {"realm": "work", "repo": R, "path": "tests/test_a.py", "symbol": symbol,
            "kind": "file", "distance": 1, "score": 0.9, "confidence": 1.0,
            "via": [{"kind": "references", "how": "resolved"}]}


def test_covering_tests_come_first_and_say_so():
    covered = covering_tests(index(edge("test_x", "bump")), [("work", R, "pkg/a.py", "bump")])
    result = merge_tests({"tests": [static_test()], "tests_total": 1, "limit": 200}, covered)
    assert [(t["symbol"], t["how"]) for t in result["tests"]] == [("test_x", "coverage"),
                                                                  (None, "resolved")]
    assert result["tests_from"] == "coverage" and result["tests_total"] == 2
    assert result["tests_counts"] == {"coverage": 1, "stale": 0, "static": 1}


def test_static_tests_remain_for_an_uncovered_symbol():
    covered = covering_tests(index(edge("test_x", "bump")), [("work", R, "pkg/a.py", "other")])
    result = merge_tests({"tests": [static_test()], "tests_total": 1, "limit": 200}, covered)
    assert covered == [] and result["tests_from"] == "static" and len(result["tests"]) == 1


def test_a_changed_end_makes_the_edge_stale_and_weaker():
    idx = index(edge("test_x", "bump", dst_hash="old"), edge("test_y", "bump"))
    covered = covering_tests(idx, [("work", R, "pkg/a.py", "bump")])
    by_test = {t["symbol"]: t for t in covered}
    assert by_test["test_x"]["stale"] and not by_test["test_y"]["stale"]
    assert by_test["test_x"]["confidence"] < by_test["test_y"]["confidence"]
    assert [t["symbol"] for t in covered] == ["test_y", "test_x"]     # fresh first
    assert idx.counts() == {"edges": 2, "stale": 1}


def test_a_class_target_collects_edges_into_its_methods_and_a_repeat_is_one_test():
    covered = covering_tests(index(edge("test_x", "K.m"), edge("test_x", "K.m")),
                             [("work", R, "pkg/a.py", "K")])
    result = merge_tests({"tests": [static_test("test_x")], "tests_total": 1, "limit": 200},
                         covered)
    assert [t["symbol"] for t in result["tests"]] == ["test_x"]   # not listed twice
    assert result["tests_total"] == 1 and result["tests_counts"]["static"] == 0


def test_contexts_pytest_cov_and_coverage_forms():
    assert parse_context("tests/test_a.py::TestK::test_m|run") == NamedTest(
        path="tests/test_a.py", qualname="TestK.test_m")
    assert parse_context("tests/test_a.py::test_p[1-a]|setup") == NamedTest(
        path="tests/test_a.py", qualname="test_p")
    assert parse_context("test_a.TestK.test_m") == NamedTest(dotted="test_a.TestK.test_m")
    assert NamedTest(dotted="test_a.TestK.test_m").candidates()[0] == ("test_m", "test_a.TestK")
    assert NamedTest(dotted="test_a.test_x").matches("tests/test_a.py", "test_a")
    assert not NamedTest(dotted="test_a.test_x").matches("tests/other_test_a.py", "test_a")
    for label in ("", "ci", "run 3"):
        assert parse_context(label) is None, label


def test_merging_coverage_into_a_bounded_walk_keeps_it_truncated():
    # a walk stopped by its edge budget found 1 static test of perhaps many: however
    # few the merged list holds, the answer must not read as the whole set
    covered = covering_tests(index(edge("test_x", "bump")), [("work", R, "pkg/a.py", "bump")])
    bounded = {"tests": [static_test()], "tests_total": 1, "tests_total_exact": False,
               "tests_truncated": True, "truncated": True, "limit": 200}
    result = merge_tests(bounded, covered)
    assert result["tests_total"] == 2 and len(result["tests"]) == 2
    assert result["tests_truncated"] is True and result["truncated"] is True


def import_run(dst: str, dst_hash="d1") -> CovEdge:
    """A function coverage saw run outside every test: from its module's import."""
    return CovEdge("work", R, "pkg/a.py", None, "", R, "pkg/a.py", dst, dst_hash, 1, "")


def importers(stopped_at=None):
    """The graph's import walk, faked: two test files import pkg/a.py."""
    from indexd.graph.import_time import Found

    def walk(modules):
        (module, start), = modules.items()
        edge_in = Edge("imports", R, "tests/test_b.py", None, R, module[2], None, 1, "resolved",
                       1.0, "work")
        tests = {("work", R, p, None): Visit(start.distance + 1, start.confidence,
                                             [edge_in._replace(src_path=p)] + start.via)
                 for p in ("tests/test_a.py", "tests/test_b.py")}
        return Found(tests, stopped_at=stopped_at)
    return walk


def test_an_import_time_run_lists_the_importing_test_files_not_repeating_a_covering_one():
    idx = index(edge("test_x", "bump"), import_run("bump"))
    seeds = [("work", R, "pkg/a.py", "bump")]
    got, exact = observed_tests(idx, seeds, None, importers())
    assert exact and [(t["path"], t["symbol"], t.get("why")) for t in got] == [
        ("tests/test_a.py", "test_x", None),                        # coverage saw it run
        ("tests/test_b.py", None, IMPORT_WHY)]                       # imports its module
    chain = got[1]["via"]
    assert [v["kind"] for v in chain] == ["imports", "import_time"]
    assert chain[-1]["how"] == "coverage" and chain[-1]["to"].endswith("pkg/a.py::bump")
    assert got[1]["stale"] is False and got[1]["confidence"] == 1.0
    # a module target gets none (its importers are the static graph's), an unrelated one none
    assert observed_tests(idx, [("work", R, "pkg/a.py", None)], None, importers())[0][1:] == []
    assert observed_tests(idx, [("work", R, "pkg/a.py", "K")], None, importers()) == ([], True)
    assert idx.counts() == {"edges": 2, "stale": 0}


def test_an_import_time_run_goes_stale_with_its_function_only_and_a_cut_walk_says_so():
    idx = index(import_run("bump", dst_hash="old"))
    got, exact = observed_tests(idx, [("work", R, "pkg/a.py", "bump")], None, importers(0.2))
    assert not exact and all(t["stale"] and t["confidence"] < 1.0 for t in got)
    result = merge_tests({"tests": [], "tests_total": 0, "tests_total_exact": exact,
                          "limit": 200}, got)
    assert result["tests_truncated"] is True and result["tests_total"] == 2
