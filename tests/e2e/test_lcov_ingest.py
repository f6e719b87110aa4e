"""`indexctl tests ingest` of LCOV tracefiles: per-test line coverage of Go, Rust and
Python files on a real git repo, through one real daemon for the module. The
tracefiles are written here, as `lcov -a` merges of per-test runs write them."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from indexd.errors import InvalidParams
from testlib import Daemon, GitRepo, run_cli

PARSE_GO = ("package parse\n\nfunc Parse(s string) int {\n\treturn len(s)\n}\n\n"
            "func Unused() int {\n\treturn 2\n}\n")
PARSE_TEST_GO = ('package parse\n\nimport "testing"\n\nfunc TestParse(t *testing.T) {\n'
                 '\tif Parse("a") != 1 {\n\t\tt.Fatal("x")\n\t}\n}\n')
DUP_TEST_GO = 'package {pkg}\n\nimport "testing"\n\nfunc TestDup(t *testing.T) {{\n\tt.Log(1)\n}}\n'
LIB_RS = ("pub fn parse(s: &str) -> usize {\n    s.len()\n}\n\n#[cfg(test)]\nmod tests {\n"
          "    use super::*;\n    #[test]\n    fn test_parse() {\n        assert_eq!(parse(\"a\"), 1);\n"
          "    }\n}\n")
CALC_PY = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TEST_CALC = ("from pkg.calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
             "class TestCalc:\n    def test_sub(self):\n        assert sub(3, 1) == 2\n")
ADD_JS = "export function add(a, b) {\n  return a + b;\n}\n"
ADD_TEST_JS = ('import { add } from "./add.js";\ndescribe("add", () => {\n'
               '  it("adds two numbers", () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n')


def record(test: str, sf: str, *covered: int, uncovered: tuple = ()) -> str:
    """One TN/SF record as geninfo writes it (FN and totals included: ignored)."""
    das = [f"DA:{n},1" for n in covered] + [f"DA:{n},0" for n in uncovered]
    return (f"TN:{test}\nSF:{sf}\nFN:1,f\nFNDA:1,f\n" + "\n".join(das)
            + f"\nLF:{len(das)}\nLH:{len(covered)}\nend_of_record\n")


@pytest.fixture(scope="module")
def lcov_daemon():
    home = Path(tempfile.mkdtemp(prefix="ixlc"))
    repo = GitRepo(home / "repo")
    for rel, text in (("go/parse.go", PARSE_GO), ("go/parse_test.go", PARSE_TEST_GO),
                      ("dup/one/x_test.go", DUP_TEST_GO.format(pkg="one")),
                      ("dup/two/x_test.go", DUP_TEST_GO.format(pkg="two")),
                      ("rust/src/lib.rs", LIB_RS), ("pkg/__init__.py", ""),
                      ("pkg/calc.py", CALC_PY), ("tests/test_calc.py", TEST_CALC),
                      ("web/add.js", ADD_JS), ("web/add.test.js", ADD_TEST_JS)):
        repo.write(rel, text)
    repo.commit()
    d = Daemon(home)
    d.repo = repo
    d.cli = lambda *args: run_cli(*args, env=d.env)
    assert d.cli("realm", "add", "work", str(repo.path)).returncode == 0
    d.start()
    try:
        d.call("status", sync=True)
        yield d
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


def tracefile(d, name: str, text: str) -> Path:
    """A tracefile in the repo's coverage/ folder (SF: paths relative to the repo root
    resolve through its parent, ../ ones through the folder itself)."""
    path = d.repo.path / "coverage" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def per_test_lcov(d) -> str:
    calc = d.repo.path / "pkg/calc.py"
    return "".join([
        record("TestParse", "go/parse.go", 4, uncovered=(8,)),       # relative to the repo root
        record("TestParse", "go/parse_test.go", 5, 6),               # the test itself: no edge
        record("TestParse", "nowhere/gone.go", 1),                   # names no file
        record("tests::test_parse", "rust/src/lib.rs", 2, 10),       # cargo's test name
        record("tests/test_calc.py::test_add", str(calc), 2),        # pytest node id, absolute SF
        record("tests.test_calc.TestCalc.test_sub", "../pkg/calc.py", 6),   # dotted, ../
        record("TestDup", "go/parse.go", 4),                         # two test files define it
        record("add adds two numbers", "web/add.js", 2),             # a describe/it title
        record("", "go/parse.go", 4),                                # no test name
    ])


def coverage_tests(d, rel: str, symbol: str) -> list[dict]:
    impact = d.call("impact", target=f"{d.repo.path / rel}::{symbol}")
    return [t for t in impact["tests"] if t.get("how") == "coverage"]


def test_per_test_lcov_covers_go_rust_and_python_symbols(lcov_daemon):
    d = lcov_daemon
    out = d.cli("tests", "ingest", tracefile(d, "lcov.dat", per_test_lcov(d)), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["format"] == "lcov" and report["tests"] == 4, report
    assert report["edges"] == 4 and report["stale"] == 0, report
    assert [(s["path"], s["reason"].split(":")[0]) for s in report["skipped"]] == [
        ("nowhere/gone.go", "not found")]
    why = {s["context"]: s for s in report["skipped_contexts"]}
    assert set(why) == {"TestDup", "add adds two numbers", ""}, why
    assert why["TestDup"]["reason"].startswith("ambiguous") and why["TestDup"]["candidates"] == [
        "dup/one/x_test.go::TestDup", "dup/two/x_test.go::TestDup"]
    assert "describe/it" in why["add adds two numbers"]["reason"]
    assert "no per-test data" in why[""]["reason"]

    parse = coverage_tests(d, "go/parse.go", "Parse")
    assert [(t["path"], t["symbol"], t["stale"]) for t in parse] == [
        ("go/parse_test.go", "TestParse", False)]
    assert [v["context"] for v in parse[0]["via"]] == ["TestParse"]      # the name as recorded
    assert coverage_tests(d, "go/parse.go", "Unused") == []
    assert [t["symbol"] for t in coverage_tests(d, "pkg/calc.py", "add")] == ["test_add"]
    assert [t["symbol"] for t in coverage_tests(d, "pkg/calc.py", "sub")] == ["TestCalc.test_sub"]
    assert [t["symbol"] for t in coverage_tests(d, "rust/src/lib.rs", "parse")] == [
        "tests.test_parse"]

    affected = d.call("tests.affected", targets=[f"{d.repo.path / 'go/parse.go'}::Parse"])
    picked = {t["path"]: t for t in affected["tests"]}
    assert picked["go/parse_test.go"]["trusted"] is True, affected
    assert any("coverage" in e["how"] for e in picked["go/parse_test.go"]["evidence"])
    human = d.cli("tests", "ingest", d.repo.path / "coverage/lcov.dat").stdout
    assert "4 coverage edges from 4 tests" in human and "(lcov:" in human
    assert "TestDup: ambiguous: 2 test functions" in human


def test_edit_of_a_covered_go_function_marks_its_edge_stale(lcov_daemon):
    d = lcov_daemon
    d.call("tests.ingest", path=str(tracefile(d, "lcov.dat", per_test_lcov(d))))
    d.repo.write("go/parse.go", PARSE_GO.replace("return len(s)", "return len(s) + 0"))
    try:
        d.call("status", sync=True)
        stale = coverage_tests(d, "go/parse.go", "Parse")
        assert [(t["symbol"], t["stale"]) for t in stale] == [("TestParse", True)]
        assert stale[0]["confidence"] < 1.0
        assert [t["stale"] for t in coverage_tests(d, "pkg/calc.py", "add")] == [False]
    finally:
        d.repo.write("go/parse.go", PARSE_GO)
        d.call("status", sync=True)


def test_lcov_without_per_test_names_or_malformed_is_refused_and_loses_nothing(lcov_daemon):
    d = lcov_daemon
    d.call("tests.ingest", path=str(tracefile(d, "lcov.dat", per_test_lcov(d))))
    before = [coverage_tests(d, "go/parse.go", "Parse"), coverage_tests(d, "pkg/calc.py", "add")]
    one = record("TestParse", "go/parse.go", 4)
    cases = {
        "single-empty.info": (record("", "go/parse.go", 4), "carries no per-test data"),
        "absent.info": (one.replace("TN:TestParse\n", ""), "carries no per-test data"),
        "da-first.coverage": ("DA:4,1\n" + one, "DA: before any SF:"),    # told by content
        "garbage.info": (one.replace("LF:", "hello world\nLF:"), "not an LCOV record"),
        "truncated.info": (one.rsplit("end_of_record", 1)[0], "no end_of_record"),
        "bad-da.info": (one.replace("DA:4,1", "DA:four,1"), "DA: needs <line>,<count>"),
        "no-sf.info": ("TN:TestParse\n", "no source file records"),
    }
    for name, (text, words) in cases.items():
        with pytest.raises(InvalidParams) as err:
            d.call("tests.ingest", path=str(tracefile(d, name, text)))
        assert err.value.code == -32602 and words in err.value.message, (name, err.value.message)
    assert "geninfo --test-name" in _message(d, "single-empty.info")
    after = [coverage_tests(d, "go/parse.go", "Parse"), coverage_tests(d, "pkg/calc.py", "add")]
    assert after == before and before[0] and before[1]


def _message(d, name: str) -> str:
    with pytest.raises(InvalidParams) as err:
        d.call("tests.ingest", path=str(d.repo.path / "coverage" / name))
    return err.value.message
