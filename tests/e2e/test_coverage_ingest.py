"""Tests from real coverage: `indexctl tests ingest` over data files that coverage.py
really recorded, running pytest on a tiny real git repo, through the real daemon
and offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexd.errors import InvalidParams
from testlib import run_cli, settings_with_realm

A_PY = "def bump(x):\n    y = x + 1\n    return y\n\n\ndef unbump(x):\n    return x - 1\n"
A_PY_EDITED = "def bump(x):\n    y = x + 2\n    return y - 1\n\n\ndef unbump(x):\n    return x - 1\n"
TEST_A = ("import pytest\n\nfrom pkg.a import bump\n\n\ndef test_x():\n    assert bump(1) == 2\n\n\n"
          "class TestK:\n    def test_m(self):\n        assert bump(2) == 3\n\n\n"
          "@pytest.mark.parametrize('n', [1, 2])\ndef test_p(n):\n    assert bump(n) == n + 1\n")


def make_package(git_repo):
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/a.py", A_PY)
    git_repo.write("tests/test_a.py", TEST_A)
    git_repo.commit()


def record(repo: Path, tmp_path: Path, name: str, contexts: str = "test_function") -> Path:
    """Run the repo's tests under coverage with per-test contexts; the data file.
    contexts: test_function (coverage's dynamic context), nodeid (pytest-cov's
    form, written by indexd's pytest plugin) or a static --context label."""
    data = tmp_path / f"{name}.coverage"
    rc = tmp_path / f"{name}.rc"
    dynamic = "dynamic_context = test_function\n" if contexts == "test_function" else ""
    rc.write_text(f"[run]\ndata_file = {data}\n{dynamic}")
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}"]
    if contexts not in ("test_function", "nodeid"):
        cmd.append(f"--context={contexts}")
    cmd += ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    if contexts == "nodeid":
        cmd[-1:-1] = ["-p", "indexd.pytest_plugin"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDEXD_", "COV_", "PYTEST_"))}
    env["PYTHONPATH"] = str(repo)
    proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return data


def coverage_tests(result: dict) -> list[dict]:
    return [t for t in result["tests"] if t.get("how") == "coverage"]


def test_impact_lists_covering_tests_stale_after_edit_fresh_after_reingest(git_repo, daemon,
                                                                           tmp_path):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    report = d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "one")))
    assert report["tests"] == 3 and report["stale"] == 0     # test_x, TestK.test_m, test_p
    assert not [s for s in report["skipped"] if s["reason"] == "outside every realm"]

    target = f"{git_repo.path / 'pkg/a.py'}::bump"
    impact = d.call("impact", target=target)
    covered = coverage_tests(impact)
    assert impact["tests"][:len(covered)] == covered          # coverage first
    assert {(t["path"], t["symbol"]) for t in covered} == {
        ("tests/test_a.py", "test_x"), ("tests/test_a.py", "TestK.test_m"),
        ("tests/test_a.py", "test_p")}
    assert impact["tests_from"] == "coverage" and impact["tests_counts"]["coverage"] == 3
    assert all(t["stale"] is False and t["confidence"] == 1.0 for t in covered)
    first_edges = report["edges"]

    untested = d.call("impact", target=f"{git_repo.path / 'pkg/a.py'}::unbump")
    assert coverage_tests(untested) == [] and untested["tests_from"] != "coverage"

    # the covered function changes: its edges are kept, stale, with lower confidence
    git_repo.write("pkg/a.py", A_PY_EDITED)
    d.call("status", sync=True)
    stale = coverage_tests(d.call("impact", target=target))
    assert len(stale) == 3 and all(t["stale"] is True and t["confidence"] < 1.0 for t in stale)

    # the tests run again on the new code: fresh again, and the same edges once (idempotent)
    again = d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "two")))
    assert again["edges"] == first_edges and again["stale"] == 0
    fresh = d.call("impact", target=target)
    assert [t["stale"] for t in coverage_tests(fresh)] == [False] * 3
    assert fresh["tests_counts"] == {"coverage": 3, "stale": 0,
                                     "static": fresh["tests_counts"]["static"],
                                     "ruled_out": fresh["tests_counts"]["ruled_out"]}


def test_bad_data_files_are_refused_and_lose_nothing(git_repo, daemon, tmp_path):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "good")))
    target = f"{git_repo.path / 'pkg/a.py'}::bump"
    before = coverage_tests(d.call("impact", target=target))

    garbage = tmp_path / "garbage.coverage"
    garbage.write_bytes(os.urandom(512))
    empty = tmp_path / "empty.coverage"
    empty.write_bytes(b"")
    static = record(git_repo.path, tmp_path, "static", contexts="ci")
    for path, words in ((tmp_path / "missing.coverage", "no coverage data file"),
                        (garbage, "not a readable coverage.py data file"),
                        (empty, "no measured files"),
                        (static, "without per-test contexts")):
        with pytest.raises(InvalidParams) as err:
            d.call("tests.ingest", path=str(path))
        assert err.value.code == -32602 and words in err.value.message, err.value.message
    assert empty.read_bytes() == b""        # coverage would have written its schema into it
    assert coverage_tests(d.call("impact", target=target)) == before


def test_outside_the_realm_is_skipped_and_nothing_stored(git_repo, tmp_path):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    other = tmp_path / "elsewhere"
    for rel, text in (("pkg/__init__.py", ""), ("pkg/a.py", A_PY), ("tests/test_a.py", TEST_A)):
        (other / rel).parent.mkdir(parents=True, exist_ok=True)
        (other / rel).write_text(text)
    run_cli("index", "--json", tool="indexd", check=True)
    out = run_cli("tests", "ingest", record(other, tmp_path, "outside"), "--json", check=True)
    report = json.loads(out.stdout)
    assert report["edges"] == 0 and report["tests"] == 0 and report["files"] == 0
    assert {s["reason"] for s in report["skipped"]} == {"outside every realm"}
    assert any(s["path"].endswith("elsewhere/pkg/a.py") for s in report["skipped"])
    impact = json.loads(run_cli("impact", f"{git_repo.path / 'pkg/a.py'}::bump", "--json",
                                check=True).stdout)
    assert coverage_tests(impact) == [] and impact["tests_counts"]["coverage"] == 0


def test_pytest_nodeid_contexts_offline(git_repo, tmp_path):
    """pytest-cov's contexts (tests/test_a.py::TestK::test_m|run, test_p[1]|run), as
    `pytest -p indexd.pytest_plugin` records them; no daemon."""
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, "nodeid", contexts="nodeid")
    report = json.loads(run_cli("tests", "ingest", data, "--json", check=True).stdout)
    assert report["tests"] == 3 and report["skipped_contexts_total"] == 0, report
    # the plugin's own files ran under coverage too: indexd is not the user's code to report
    assert not [s for s in report["skipped"] if "pytest_plugin" in s["path"]
                or s["path"].endswith("indexd/__init__.py")], report["skipped"]
    impact = json.loads(run_cli("impact", f"{git_repo.path / 'pkg/a.py'}::bump", "--json",
                                check=True).stdout)
    assert {t["symbol"] for t in coverage_tests(impact)} == {"test_x", "TestK.test_m", "test_p"}
    assert [v["context"] for t in coverage_tests(impact) for v in t["via"]
            if t["symbol"] == "TestK.test_m"] == ["tests/test_a.py::TestK::test_m|run"]
    human = run_cli("tests", "ingest", data, check=True).stdout
    assert "coverage edges from 3 tests" in human


OVERLOADED = ("import typing as t\n\n\n@t.overload\ndef conv(x: int) -> int: ...\n\n\n"
              "@t.overload\ndef conv(x: str) -> str: ...\n\n\n"
              "def conv(x):\n    return x\n")


def test_an_overloaded_function_is_fresh_right_after_the_ingest_offline(git_repo, tmp_path):
    """jinja2's `do_map` and `Environment.compile` carry `@overload` stubs above the real
    definition: the ingest stamped the real one's hash, the check read the first stub's,
    so 889 of jinja2's edges were stale the moment they were stored."""
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/conv.py", OVERLOADED)
    git_repo.write("tests/test_conv.py", "from pkg.conv import conv\n\n\n"
                                         "def test_conv():\n    assert conv(1) == 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    report = json.loads(run_cli("tests", "ingest", str(record(git_repo.path, tmp_path, "o")),
                                "--json", check=True).stdout)
    assert report["edges"] >= 1 and report["stale"] == 0, report
    answer = json.loads(run_cli("impact", "pkg/conv.py::conv", "--json", check=True).stdout)
    covered = coverage_tests(answer)
    assert [(t["symbol"], t["stale"]) for t in covered] == [("test_conv", False)], covered


MIXIN_TESTS = ("import unittest\n\nfrom pkg.a import bump\n\n\n"
               "class BumpMixin:\n    def test_bump(self):\n        assert bump(self.n) == self.n + 1\n\n\n"
               "class TestOne(unittest.TestCase, BumpMixin):\n    n = 1\n\n\n"
               "class TestTwo(unittest.TestCase, BumpMixin):\n    n = 2\n")


def test_nodeid_contexts_of_inherited_test_methods_map_to_the_mixin_offline(git_repo, tmp_path):
    """boltons' test_ioutils.py: `class TestSpooledBytesIO(TestCase, BaseTestMixin)` runs the
    mixin's test methods; pytest-cov names them tests/test_ioutils.py::TestSpooledBytesIO::
    test_buf_property, which no function is, so 50 of boltons' contexts were "test function not
    indexed" and their coverage was dropped."""
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/a.py", A_PY)
    git_repo.write("tests/test_mixin.py", MIXIN_TESTS)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, "mixin", contexts="nodeid")
    report = json.loads(run_cli("tests", "ingest", data, "--json", check=True).stdout)
    assert report["skipped_contexts_total"] == 0, report["skipped_contexts"]
    assert report["tests"] == 1, report
    impact = json.loads(run_cli("impact", f"{git_repo.path / 'pkg/a.py'}::bump", "--json",
                                check=True).stdout)
    # the mixin's method, and its two runs (the classes deriving from it: an inherits hop)
    assert {t["symbol"] for t in coverage_tests(impact)} == {
        "BumpMixin.test_bump", "TestOne.test_bump", "TestTwo.test_bump"}


BASE_TESTS = ("from pkg.a import bump\n\n\n"
              "class TestBase:\n    n = 1\n\n    def test_bump(self):\n"
              "        assert bump(self.n) == self.n + 1\n")
DERIVED_TESTS = "from .test_base import TestBase\n\n\nclass TestDerived(TestBase):\n    n = 2\n"


@pytest.mark.parametrize("contexts", ["test_function", "nodeid"])
def test_impact_names_the_test_modules_running_an_inherited_test_offline(git_repo, tmp_path,
                                                                         contexts):
    """itsdangerous: test_timed.py's `class TestTimestampSigner(FreezeMixin, TestSigner)`
    runs test_signer.py's tests again. Coverage names those runs after TestSigner
    (`test_function`) or as test_timed.py contexts no function of that file is (`nodeid`),
    and impact listed test_signer.py alone: 34 (function, failing file) pairs missed, more
    than without coverage (29). `tests affected` had them."""
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/a.py", A_PY)
    git_repo.write("tests/__init__.py", "")
    git_repo.write("tests/test_base.py", BASE_TESTS)
    git_repo.write("tests/test_derived.py", DERIVED_TESTS)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)

    def impact_tests():
        impact = json.loads(run_cli("impact", f"{git_repo.path / 'pkg/a.py'}::bump", "--json",
                                    check=True).stdout)
        return {(t["path"], t["symbol"]) for t in impact["tests"]}, impact
    wanted = {("tests/test_base.py", "TestBase.test_bump"),
              ("tests/test_derived.py", "TestDerived.test_bump")}
    static, impact = impact_tests()
    assert wanted <= static, impact["tests"]
    data = record(git_repo.path, tmp_path, "inherited", contexts=contexts)
    report = json.loads(run_cli("tests", "ingest", data, "--json", check=True).stdout)
    assert report["skipped_contexts_total"] == 0, report["skipped_contexts"]
    covered, impact = impact_tests()
    assert wanted <= covered, impact["tests"]
    runner = next(t for t in impact["tests"] if t["path"] == "tests/test_derived.py")
    assert runner["how"] == "coverage" and runner["via"][0]["kind"] == "inherits", runner
