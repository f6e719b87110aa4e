"""The LCOV tracefile reader and test-name readings, on tracefiles written here (pure:
no store, no daemon; tests/e2e/test_lcov_ingest.py runs them through the daemon)."""

from __future__ import annotations

import sqlite3

import pytest

from indexd.errors import InvalidParams
from indexd.lcov_ingest import Try, map_name, tries
from indexd.lcov_reader import is_tracefile, parse_tracefile, resolve_source, source_bases


def test_merged_tracefile_keeps_each_tests_lines(tmp_path):
    # lcov 2's VER line, a comment, CRLF endings, DA checksums, FN/BRDA records,
    # and one test's two runs of the same file (lcov -a): its lines add up.
    text = ("VER:2.0\r\n# merged\r\nTN:TestA\r\nSF:a.go\r\nFN:3,A\r\nFNDA:2,A\r\n"
            "DA:3,2,abc\r\nDA:4,0\r\nBRDA:3,0,0,1\r\nend_of_record\r\n"
            "TN:TestB\nSF:a.go\nDA:4,1\nend_of_record\nTN:TestA\nSF:a.go\nDA:5,1\nend_of_record\n")
    path = tmp_path / "merged.info"
    path.write_bytes(text.encode())
    assert is_tracefile(str(path))
    trace = parse_tracefile(str(path))
    assert trace.tests == {"TestA": {"a.go": {3, 5}}, "TestB": {"a.go": {4}}}
    assert trace.unnamed == set() and trace.sources == 3


def test_detection_is_by_content_not_extension(tmp_path):
    db = tmp_path / "lcov.info"            # a coverage.py-like SQLite file with an LCOV name
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    text = tmp_path / "notes.info"
    text.write_text("Some notes\nSF is short for source file\n")
    lcov = tmp_path / ".coverage"
    lcov.write_text("TN:t\nSF:a.py\nDA:1,1\nend_of_record\n")
    assert [is_tracefile(str(p)) for p in (db, text, lcov, tmp_path / "missing")] == [
        False, False, True, False]


def test_a_relative_sf_resolves_against_folder_then_cwd_then_parents(tmp_path):
    (tmp_path / "proj/cov").mkdir(parents=True)
    (tmp_path / "proj/src.go").write_text("package x\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/only_here.go").write_text("package x\n")
    bases = source_bases(str(tmp_path / "proj/cov/lcov.info"), str(tmp_path / "elsewhere"))
    assert resolve_source("src.go", bases) == str(tmp_path / "proj/src.go")
    assert resolve_source("./only_here.go", bases) == str(tmp_path / "elsewhere/only_here.go")
    assert resolve_source("../src.go", bases) == str(tmp_path / "proj/src.go")
    assert resolve_source("gone.go", bases) is None
    assert resolve_source("/abs/gone.go", bases) == "/abs/gone.go"   # the plan says why


@pytest.mark.parametrize("name, first", [
    ("tests/test_x.py::TestA::test_b[1-2]", Try(qualname="TestA.test_b", path="tests/test_x.py")),
    ("src/x_test.go:TestParse", Try(qualname="TestParse", path="src/x_test.go")),
    ("tests::test_parse", Try(qualname="tests.test_parse")),
    ("TestParse/empty_input", Try(bare="TestParse")),      # a Go subtest
    ("test_parse", Try(bare="test_parse")),
    ("tests.test_x.TestA.test_b", Try(qualname="test_b", module="tests.test_x.TestA")),
])
def test_test_name_readings(name, first):
    assert tries(name)[0] == first


def test_titles_and_production_names_do_not_map():
    rows = {"parse": [{"repo": "/r", "path": "src/parse.rs", "qualname": "parse"},
                      {"repo": "/r", "path": "src/app/parser.py", "qualname": "Parser.parse"}],
            "test_parse": [{"repo": "/r", "path": "src/lib.rs", "qualname": "tests.test_parse"}]}
    assert tries("adds two numbers") == [] and tries("add > adds") == []
    assert map_name("adds two numbers", rows)[1]["reason"].startswith("not a test function")
    # a suite label that happens to name a production function is no test
    assert map_name("parse", rows) == (None, {"context": "parse",
                                             "reason": "test function not indexed"})
    assert map_name("app.Parser.parse", rows)[1]["reason"] == "test function not indexed"
    assert map_name("test_parse", rows) == ("src/lib.rs::tests.test_parse", None)


@pytest.mark.parametrize("text", ["", "\n\n", "TN:x\n"])
def test_nothing_to_read_is_refused(tmp_path, text):
    path = tmp_path / "empty.info"
    path.write_text(text)
    with pytest.raises(InvalidParams, match="no source file records"):
        parse_tracefile(str(path))
