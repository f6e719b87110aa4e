"""`indexd mcp --socket PATH`: MCP clients (editors, agent hosts) often spawn the
server with a bare environment, without the INDEXD_HOME or XDG_RUNTIME_DIR the
daemon runs with, so the default socket path would point elsewhere."""

from __future__ import annotations

import anyio
import pytest
from testlib import BIN, settings_with_realm

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def _search(args: list[str], errlog_path) -> tuple[str, bool]:
    # A bare environment: no INDEXD_HOME, no XDG_RUNTIME_DIR.
    params = StdioServerParameters(command=str(BIN / "indexd"), args=args,
                                   env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})

    async def main():
        with anyio.fail_after(120), open(errlog_path, "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=60) as s:
                    await s.initialize()
                    res = await s.call_tool("index_search", {"query": "settle ledger"})
                    return ("\n".join(c.text for c in res.content if c.type == "text"),
                            bool(res.is_error))

    return anyio.run(main)


def test_socket_flag_reaches_the_daemon_from_a_bare_environment(git_repo, daemon, indexd_home):
    git_repo.write("pay.py", "def settle_ledger(ledger):\n    return sum(ledger)\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    err = indexd_home / "mcp.err"

    text, failed = _search(["mcp"], err)   # the default path is not the daemon's
    assert failed and "not running" in text, text
    text, failed = _search(["mcp", "--socket", str(d.socket)], err)
    assert not failed and "settle_ledger" in text, text
    text, failed = _search(["mcp", "--socket", str(indexd_home / "nope.sock")], err)
    assert failed and "nope.sock" in text, text
