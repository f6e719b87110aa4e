"""index_tests through a real MCP session and daemon: the same selection as
tests.affected, safe flag and fallback included."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from test_mcp_server import call, run  # noqa: E402
from e2e.test_tests_affected import A_EDIT, B_EDIT, make_package  # noqa: E402
from testlib import settings_with_realm  # noqa: E402


def test_index_tests_matches_tests_affected(git_repo, daemon, indexd_home):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/a.py", A_EDIT)
    git_repo.write("pkg/b.py", B_EDIT)
    d = daemon()
    d.call("status", sync=True)
    want = d.call("tests.affected", repo=str(git_repo.path))
    target = d.call("tests.affected", targets=[f"{git_repo.path}/pkg/a.py::bump"])

    async def body(s):
        listed = await s.list_tools()
        return ({t.name: t for t in listed.tools}, await call(s, "index_tests"),
                await call(s, "index_tests", targets=["pkg/a.py::bump"]))

    tools, (text, err), (one, one_err) = run(indexd_home, body, cwd=git_repo.path)
    assert "index_tests" in tools and not err and not one_err, text + one
    assert [t["path"] for t in want["tests"]] == [
        "tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]
    assert "safe=false" in text and want["safe"] is False
    for t in want["tests"]:
        assert f"{t['rank']}. {t['path']} — score {t['score']}" in text
    assert "run (from the repo): pytest " + " ".join(t["path"] for t in want["tests"]) in text
    assert "not safe: only name_match/git paths to tests for repo/pkg/b.py::Widget.frobnicate" \
        in text
    assert [t["path"] for t in target["tests"]] == ["tests/test_a.py"] and target["safe"]
    assert "safe=true" in one and "1. tests/test_a.py" in one and "test_c" not in one


def test_index_tests_says_what_coverage_ruled_out(git_repo, daemon, indexd_home, tmp_path):
    """An agent asking which tests to run sees the static reaches coverage dropped, as the
    CLI's human output does (graph/coverage.py rule_out)."""
    from e2e.test_coverage_ingest import record
    from e2e.test_tests_affected import OPS_FILES

    for path, text in OPS_FILES.items():
        git_repo.write(path, text)
    git_repo.commit("v1")
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "ops")))
    git_repo.write("pkg/ops.py", OPS_FILES["pkg/ops.py"].replace("x * 2", "x * 3"))
    d.call("status", sync=True)

    async def body(s):
        return await call(s, "index_tests")

    text, err = run(indexd_home, body, cwd=git_repo.path)
    assert not err, text
    assert "1. tests/test_double.py" in text and "test_negate.py —" not in text, text
    assert "ruled out by coverage (" in text and "test_negate.py::test_negate" in text, text
