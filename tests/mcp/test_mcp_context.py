"""index_context through a real MCP session and daemon: the same pack as the
context method, rendered for a model, and its errors as tool errors."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from e2e.test_context import QUERY, make_repo  # noqa: E402
from test_mcp_server import call, run  # noqa: E402
from testlib import embedded, settings_with_realm, wait_until  # noqa: E402


def test_index_context_listed_and_callable(git_repo, daemon, indexd_home):
    make_repo(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    wait_until(lambda: embedded(d.call("status")), timeout=60, what="vectors")   # hybrid answers stay put
    want = d.call("context", query=QUERY, budget=1000,
                  files=[str(git_repo.path / "app/cache.py")])

    async def body(s):
        listed = await s.list_tools()
        return ({t.name: t for t in listed.tools},
                # relative to the server's cwd (the repo): sent to the daemon absolute
                await call(s, "index_context", query=QUERY, budget=1000, files=["app/cache.py"]),
                await call(s, "index_context", query=QUERY, budget=10))

    tools, (text, err), (bad, bad_err) = run(indexd_home, body, cwd=git_repo.path)
    assert "index_context" in tools and not err, text
    schema = tools["index_context"].input_schema["properties"]
    assert {"query", "files", "budget", "realm"} <= set(schema)
    assert schema["budget"]["minimum"] == 64
    for it in want["items"]:
        assert f"{it['path']}:{it['start_line']}" in text
        assert it["why"].split(" (")[0] in text   # scores may move as vectors land
    assert f"[{want['tokens']} of 1000 tokens (tokenizer:all-MiniLM-L6-v2)" in text
    assert "def backoff_delay(attempt" in text
    assert bad_err and "budget" in bad
