"""The tools' schemas as a real MCP client lists them (stdio, real daemon) are the
param table's (indexd/server/params.py) plus each tool's declared override, and a
bound just outside them is refused with an error naming the param and the bound,
while the bound itself is answered."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from test_mcp_params import assert_schemas_are_the_tables  # noqa: E402
from test_mcp_server import call, run  # noqa: E402
from testlib import settings_with_realm  # noqa: E402

from indexd.server import params  # noqa: E402


def test_listed_schemas_are_the_tables_and_bounds_are_enforced(git_repo, daemon, indexd_home):
    git_repo.write("app.py", "def alpha_handler(x):\n    return x + 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    daemon().call("search", query="alpha_handler", sync=True, timeout=30)

    async def body(s):
        listed = {t.name: t.input_schema for t in (await s.list_tools()).tools}
        hi = listed["index_search"]["properties"]["limit"]["maximum"]
        lo = listed["index_context"]["properties"]["budget"]["minimum"]
        return (listed, hi, lo,
                await call(s, "index_search", query="alpha_handler", limit=hi + 1),
                await call(s, "index_search", query="alpha_handler", limit=hi),
                await call(s, "index_context", query="alpha", budget=lo - 1),
                await call(s, "index_search", query="   "))

    listed, hi, lo, over, at, under, blank = run(indexd_home, body, cwd=git_repo.path)
    assert_schemas_are_the_tables(listed)
    assert hi == 200 < params.param("search", "limit").hi      # the tool's override
    assert lo == params.BUDGET_MIN                              # the table's own bound
    text, err = over
    assert err and "limit" in text and f"less than or equal to {hi}" in text, text
    text, err = at
    assert not err and "app.py:1-2 function alpha_handler" in text, text
    text, err = under
    assert err and "budget" in text and f"greater than or equal to {lo}" in text, text
    text, err = blank                   # the daemon's own check of meaning, as a tool error
    assert err and "search needs a non-empty string 'query'" in text, text
