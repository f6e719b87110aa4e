"""index_owners through a real MCP session and daemon: the authors by lines of a
two-author file and symbol, as the owners method gives them."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from owners_fixtures import two_authors  # noqa: E402
from test_mcp_server import call, run  # noqa: E402
from testlib import settings_with_realm  # noqa: E402


def test_index_owners_matches_the_owners_method(git_repo, daemon, indexd_home):
    two_authors(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    want = d.call("owners", target=f"{git_repo.path}/text.py")

    async def body(s):
        listed = await s.list_tools()
        return ({t.name for t in listed.tools}, await call(s, "index_owners", target="text.py"),
                await call(s, "index_owners", target="text.py::render"),
                await call(s, "index_owners", target="text.py::nothing"))

    tools, (whole, err), (render, render_err), (bad, bad_err) = run(indexd_home, body,
                                                                    cwd=git_repo.path)
    assert "index_owners" in tools and not err and not render_err, whole + render
    assert whole.startswith("owners of text.py (8 lines):")
    for o in want["owners"]:
        assert f"{o['lines']} lines {o['name']} <{o['email']}> {o['share'] * 100:.0f}%" in whole
    assert "render with a separator" in whole
    assert "owners of text.py::render (3 lines):" in render and "Alice" not in render
    assert bad_err and "'nothing' is not defined" in bad
