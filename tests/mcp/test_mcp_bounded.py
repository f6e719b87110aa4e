"""index_impact through a real MCP session and daemon: the limit goes through and
the text says how many exist beyond it (it said "affected (50)" of hundreds)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mcp")

from test_mcp_server import call, run  # noqa: E402
from testlib import GitRepo, settings_with_realm, wait_until  # noqa: E402

CALLERS = 120


def test_impact_limit_and_total_reach_the_agent(tmp_path, daemon, indexd_home):
    repo = GitRepo(tmp_path / "hub")
    repo.write("lib.py", "def target_fn():\n    return 1\n")
    for i in range(CALLERS):
        repo.write(f"c{i:03}.py", f"from lib import target_fn\n\n\ndef use_{i}():\n"
                                  f"    return target_fn()\n")
    repo.write("small.py", "def lonely():\n    return 2\n\n\ndef friend():\n    return lonely()\n")
    repo.commit()
    settings_with_realm("hub", repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=120)
    target = f"{repo.path}/lib.py::target_fn"
    total = wait_until(lambda: d.call("impact", target=target, depth=1, limit=10_000)
                       ["affected_total"], timeout=60, what="the graph")
    assert total >= CALLERS

    async def body(s):
        return (await call(s, "index_impact", target=target, depth=1, limit=7),
                await call(s, "index_impact", target=target, depth=1, limit=1000),
                await call(s, "index_impact", target=f"{repo.path}/small.py::lonely", depth=1))

    (cut, cut_err), (full, _), (small, _) = run(indexd_home, body, cwd=repo.path)
    assert not cut_err
    assert f"affected (7 of {total}):" in cut
    assert re.search(rf"… and {total - 7} more \(raise limit", cut)
    assert f"affected ({total}):" in full and "… and" not in full
    assert "affected (1):" in small and "… and" not in small
