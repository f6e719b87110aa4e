"""Counts in the CLI's words: `1 changed symbol`, `(1 file)`, not `1 changed symbols` (attrs:
`indexctl changes` after a one-line edit printed "1 changed symbols" and "(1 files)")."""

from __future__ import annotations

from indexd.cli import render


def test_one_changed_symbol_and_one_file_read_as_one(capsys):
    result = {"repo": "/src/attrs", "changed": [
        {"change": "modified", "path": "src/attr/_make.py", "symbol": "attrs.wrap"}],
        "affected": [], "tests": [], "docs": [], "complete": True,
        "owners": {"reviewers": [{"name": "n", "email": "a@b", "files": 1}],
                   "changed": [{"name": "n", "email": "a@b", "lines": 1}]}}
    render.changes(result)
    out = capsys.readouterr().out
    assert "1 changed symbol in /src/attrs" in out and "symbols" not in out, out
    assert "(1 file)" in out and "(1 line)" in out, out
    result["changed"] *= 2
    result["owners"]["reviewers"][0]["files"] = 3
    render.changes(result)
    out = capsys.readouterr().out
    assert "2 changed symbols in /src/attrs" in out and "(3 files)" in out, out


def test_one_search_result_reads_as_one(capsys):
    hit = {"path": "lib/suggestSimilar.js", "start_line": 56, "kind": "function",
           "symbol": "suggestSimilar", "repo": "/src/commander", "signature": "", "score": 1.0}
    render.search({"results": [hit], "total": 1, "took_ms": 3})
    captured = capsys.readouterr()
    assert "1 result in 3 ms" in captured.out + captured.err, captured
    render.search({"results": [hit, hit], "total": 2, "took_ms": 3})
    captured = capsys.readouterr()
    assert "2 results in 3 ms" in captured.out + captured.err, captured
