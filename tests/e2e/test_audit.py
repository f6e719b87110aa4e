"""The query audit log (`audit_log = true`) against the real daemon: requests over
the Unix socket, the REST API and the MCP server each land in log_dir/audit.jsonl
with their transport, method and peer, secrets masked, file content absent; the
file is 0600; `indexctl audit` reads it back with the daemon stopped.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from test_http_api import HttpDaemon, req
from testlib import BIN, run_cli, settings_with_realm, wait_until

from indexd.audit import MASK
from indexd.config import load_settings
from indexd.errors import InvalidParams

BODY_MARKER = "quokkabodymarker"      # inside a.py only: must never reach the log
# A GitHub-token-shaped param, built at run time so this file holds no token.
TOKEN = "ghp_" + "x7Qm2Rk9Lp4Vn8Tz3Wb6" + "Yc1Hd5Jf0Gs2Ke7N"


@asynccontextmanager
async def mcp_session(home: Path):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=str(BIN / "indexd"), args=["mcp"],
                                   env={"INDEXD_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    with open(home / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=60) as session:
                await session.initialize()
                yield session


def mcp_search(home: Path, query: str) -> str:
    async def main():
        with anyio.fail_after(180):
            async with mcp_session(home) as s:
                res = await s.call_tool("index_search", {"query": query})
                return "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text")

    return anyio.run(main)


def records(home: Path) -> list[dict]:
    path = load_settings(env={"INDEXD_HOME": str(home)}).paths.audit_file
    return [json.loads(line) for line in path.read_text().splitlines()]


def audit_text(home: Path) -> str:
    return load_settings(env={"INDEXD_HOME": str(home)}).paths.audit_file.read_text()


def find(recs: list[dict], transport: str, method: str, **match) -> dict:
    for rec in recs:
        if rec["transport"] == transport and rec["method"] == method and all(
                rec["params"].get(k) == v for k, v in match.items()):
            return rec
    raise AssertionError(f"no {transport} {method} {match} in the audit log: "
                         f"{[(r['transport'], r['method'], r['params']) for r in recs]}")


@pytest.fixture
def repo_realm(git_repo, indexd_home):
    git_repo.write("a.py", f'def alpha_handler(x):\n    """Handle alpha: {BODY_MARKER}."""\n'
                           "    return x + 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    return git_repo


def test_requests_from_every_transport_are_audited(repo_realm, indexd_home):
    pytest.importorskip("mcp")
    config = indexd_home / "config" / "config.toml"
    config.write_text("audit_log = true\n" + config.read_text())
    d = HttpDaemon(indexd_home, "--http", "127.0.0.1:0").wait_ready()
    try:
        d.call("status", sync=True, timeout=60)
        root = str(repo_realm.path)
        assert d.call("search", query="alpha_handler")["results"]
        d.call("search", query=f"where is {TOKEN} used")
        with pytest.raises(InvalidParams):     # rejected, but logged, masked by its name
            d.call("search", query="alpha", api_key="not-a-format-but-a-name")
        with pytest.raises(InvalidParams):
            d.call("symbols", path=f"{root}/a\x00.py")
        status, _, got = req(d, "POST", "/search", {"query": "alpha handler"})
        assert status == 200 and got["results"]
        assert "alpha_handler" in mcp_search(indexd_home, "alpha handler mcp")
    finally:
        d.stop()

    recs = records(indexd_home)
    sock = find(recs, "socket", "search", query="alpha_handler")
    assert sock["peer"] == {"uid": os.getuid(), "pid": os.getpid()}
    assert sock["count"] >= 1 and sock["error"] is None and sock["took_ms"] >= 0
    assert find(recs, "socket", "search", query=MASK)["error"] is None
    rejected = find(recs, "socket", "search", query="alpha")
    assert rejected["params"]["api_key"] == MASK and rejected["error"] == -32602
    assert "not-a-format-but-a-name" not in audit_text(indexd_home)
    assert find(recs, "socket", "symbols")["error"] == -32602
    http = find(recs, "http", "search", query="alpha handler")
    assert http["peer"]["addr"] == "127.0.0.1" and http["count"] >= 1
    mcp = find(recs, "mcp", "search", query="alpha handler mcp")
    assert mcp["client"] == "indexd-mcp" and mcp["count"] >= 1
    assert mcp["peer"]["pid"] not in (None, os.getpid())
    audit_file = load_settings(env={"INDEXD_HOME": str(indexd_home)}).paths.audit_file
    assert stat.S_IMODE(audit_file.stat().st_mode) == 0o600
    text = audit_file.read_text()
    assert TOKEN not in text and "x7Qm2Rk9" not in text
    assert BODY_MARKER not in text, "file content leaked into the audit log"

    # Read back with the daemon stopped.
    env = os.environ | {"INDEXD_HOME": str(indexd_home)}
    out = run_cli("audit", "--json", env=env, check=True)
    listed = json.loads(out.stdout)
    assert listed["enabled"] is True and listed["total"] == len(recs)
    assert listed["records"] == recs
    newest = json.loads(run_cli("audit", "--json", "--limit", "2", "--since", "1h", env=env,
                                check=True).stdout)
    assert newest["records"] == recs[-2:]
    later = run_cli("audit", "--json", "--since", "2999-01-01T00:00", env=env)
    assert later.returncode == 1 and json.loads(later.stdout)["records"] == []
    human = run_cli("audit", env=env, check=True).stdout
    assert "mcp" in human and "http" in human and "error -32602" in human
    bad = run_cli("audit", "--since", "yesterday-ish", env=env)
    assert bad.returncode == 2 and "duration" in bad.stderr


def test_no_audit_file_unless_turned_on(repo_realm, daemon, indexd_home):
    d = daemon()
    d.call("status", sync=True, timeout=60)
    assert d.call("search", query="alpha_handler")["results"]
    audit_file = load_settings().paths.audit_file
    assert audit_file.parent.is_dir() and not audit_file.exists()
    env = os.environ | {"INDEXD_HOME": str(indexd_home)}
    off = run_cli("audit", "--json", env=env)
    assert off.returncode == 1
    assert json.loads(off.stdout) | {"file": None} == {
        "file": None, "exists": False, "enabled": False, "total": 0, "records": [],
        "unreadable_lines": 0}

    # Turned on by a config reload, no restart.
    config = indexd_home / "config" / "config.toml"
    config.write_text("audit_log = true\n" + config.read_text())

    def audited():
        d.call("search", query="after reload")
        return audit_file.exists() and find(records(indexd_home), "socket", "search",
                                            query="after reload")

    wait_until(audited, timeout=30, what="the reload to turn the audit log on")
