"""Coverage edges in impact answers (graph/coverage.py) and coverage contexts
(coverage_ingest.parse_context): pure parts, no store."""

from __future__ import annotations

from indexd.coverage_ingest import NamedTest, class_bases, parse_context
from indexd.graph.coverage import (IMPORT_WHY, CovEdge, CoverageIndex, covering_tests,
                                   merge_tests, observed_tests, rule_out)
from indexd.graph.impact import Visit
from indexd.graph.model import Edge

R = "/src/app"


def edge(test: str, dst: str | None, src_hash="t1", dst_hash="d1") -> CovEdge:
    return CovEdge("work", R, "tests/test_a.py", test, src_hash, R, "pkg/a.py", dst, dst_hash,
                   2, f"test_a.{test}")


def index(*edges: CovEdge) -> CoverageIndex:
    idx = CoverageIndex(list(edges))
    idx.hashes = {("work", R, "tests/test_a.py"): {"test_x": {"t1"}, "test_y": {"t1"}},
                  ("work", R, "pkg/a.py"): {"bump": {"d1"}, "K": {"dk"}, "K.m": {"d1"}}}
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
    assert result["tests_counts"] == {"coverage": 1, "stale": 0, "static": 1, "ruled_out": 0}


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


# rule_out: a static test coverage shows never ran the change, on code that has not changed
BUMP = ("work", R, "pkg/a.py", "bump")


def seen(dst: str, dst_hash: str, path="pkg/a.py", lines=0) -> CovEdge:
    """A measured file's symbol's hash at the ingest (``lines`` 0; -1: a tests' folder's)."""
    return CovEdge("work", R, path, None, "", R, path, dst, dst_hash, lines, "")


def chain_test(symbol: str, via_to: str = "K.m") -> dict:
    """A static test reaching bump through pkg/a.py::<via_to>."""
    return {"realm": "work", "repo": R, "path": "tests/test_a.py", "symbol": symbol,
            "kind": "function", "distance": 2, "score": 0.5, "confidence": 1.0,
            "via": [{"kind": "calls", "from": f"app/tests/test_a.py::{symbol}",
                     "to": f"app/pkg/a.py::{via_to}", "how": "resolved"},
                    {"kind": "calls", "from": f"app/pkg/a.py::{via_to}",
                     "to": "app/pkg/a.py::bump", "how": "resolved"}]}


def ruled(idx, tests, changing=(), spawns=lambda *a: False):
    result = {"tests": tests, "tests_total": len(tests)}
    out = rule_out(idx, result, [BUMP], lambda n: "function", list(changing), spawns)
    return out, [t["symbol"] for t in result["tests"]], result["tests_total"]


def ruling_index(*extra: CovEdge) -> CoverageIndex:
    # test_x ran bump; test_y ran K.m only; both files measured, nothing changed since
    return index(edge("test_x", "bump"), edge("test_y", "K.m"), seen("K", "dk"), *extra)


def test_a_recorded_test_that_never_ran_the_change_on_unchanged_code_is_ruled_out():
    out, kept, total = ruled(ruling_index(), [chain_test("test_y"), chain_test("test_x")])
    assert out == ["app/tests/test_a.py::test_y"] and kept == ["test_x"] and total == 1


def test_what_coverage_cannot_vouch_for_keeps_the_static_test():
    idx = ruling_index()
    # a chain through a symbol the ingest never saw (new since)
    assert ruled(idx, [chain_test("test_y", via_to="K.new")])[0] == []
    # a test file that starts other processes (code there is no coverage of this run)
    assert ruled(idx, [chain_test("test_y")], spawns=lambda *a: True)[0] == []
    # a test function the ingest did not record (deselected, a partial run)
    assert ruled(idx, [chain_test("test_z")])[0] == []
    # the change ran outside every test (a fixture's teardown, at import): nothing goes
    assert ruled(ruling_index(import_run("bump")), [chain_test("test_y")])[0] == []


def test_anything_recorded_that_changed_since_keeps_every_static_test_unless_it_is_the_change():
    idx = ruling_index()
    idx.hashes[("work", R, "pkg/a.py")]["K.m"] = {"edited"}
    idx._changed = None
    assert ruled(idx, [chain_test("test_y", via_to="K")])[0] == []
    # K.m is part of the same change (and K, holding it, changed with it)
    idx.hashes[("work", R, "pkg/a.py")]["K"] = {"edited"}
    idx._changed = None
    assert ruled(idx, [chain_test("test_y", via_to="K")],
                 changing=[(None, R, "pkg/a.py", "K.m")])[0] == []   # K on the chain changed
    out = ruled(idx, [chain_test("test_y", via_to="bump")], changing=[(None, R, "pkg/a.py", "K.m")])
    assert out[0] == ["app/tests/test_a.py::test_y"]


def test_a_change_that_stores_module_state_rules_nothing_out():
    # humanize's deactivate: `_CURRENT.locale = None`, read by later tests that never ran it
    writes = lambda node: node == BUMP   # noqa: E731
    result = {"tests": [chain_test("test_y")], "tests_total": 1}
    assert rule_out(ruling_index(), result, [BUMP], lambda n: "function", [], writes=writes) == []
    assert len(result["tests"]) == 1


def test_class_bases_reads_the_names_a_class_statement_derives_from():
    assert class_bases("class TestTimestampSigner(FreezeMixin, TestSigner)") == [
        "FreezeMixin", "TestSigner"]
    assert class_bases("class A(mod.Base, Generic[K, V], metaclass=Meta, **kw)") == [
        "Base", "Generic"]
    assert class_bases("class Plain") == [] and class_bases("def f(a, b)") == []
