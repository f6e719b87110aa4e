"""`indexd mcp` as a real subprocess, driven by the official MCP SDK client
(stdio), against a real daemon on a real git repo."""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from testlib import BIN, settings_with_realm

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"index_search", "index_impact", "index_symbols", "index_status", "index_realm",
         "index_file", "index_annotate", "index_changes", "index_tests"}
SESSION_TIMEOUT_S = 180     # one whole session (daemon already up)
CALL_TIMEOUT_S = 60         # one tool call


@asynccontextmanager
async def mcp_session(home: Path, cwd: Path | None = None):
    env = {"INDEXD_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    params = StdioServerParameters(command=str(BIN / "indexd"), args=["mcp"], env=env,
                                   cwd=str(cwd) if cwd else None)
    with open(home / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                await session.initialize()
                yield session


async def call(session: ClientSession, name: str, **args) -> tuple[str, bool]:
    res = await session.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
    text = "\n".join(c.text for c in res.content if getattr(c, "type", None) == "text")
    return text, bool(res.is_error)


def run(home: Path, body, cwd: Path | None = None):
    async def main():
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with mcp_session(home, cwd) as session:
                return await body(session)

    try:
        return anyio.run(main)
    except BaseException:
        err = home / "mcp.err"
        if err.exists():
            print("--- indexd mcp stderr ---\n" + err.read_text(errors="replace")[-4000:])
        raise


def test_tools_against_a_real_daemon(git_repo, daemon, indexd_home):
    git_repo.write("app.py", 'def alpha_handler(x):\n    """Handle alpha requests."""\n'
                             "    return x + 1\n\n\nclass BetaService:\n"
                             "    def run(self):\n        return alpha_handler(1)\n")
    git_repo.write("pkg/util.py", "from app import alpha_handler\n\n\n"
                                  "def helper():\n    return alpha_handler(2)\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("search", query="alpha_handler", sync=True, timeout=30)
    repo = str(git_repo.path)

    async def body(s: ClientSession):
        out = {}
        listed = await s.list_tools()
        out["tools"] = {t.name: t for t in listed.tools}

        out["search"] = await call(s, "index_search", query="alpha_handler")
        out["search_ctx"] = await call(s, "index_search", query="alpha handler", kind="function",
                                       limit=3, context=1)
        # relative to the server's cwd (the repo): sent to the daemon absolute
        out["symbols"] = await call(s, "index_symbols", path="app.py")
        out["status"] = await call(s, "index_status")
        out["realm_list"] = await call(s, "index_realm", action="list")
        out["realm_add_bad"] = await call(s, "index_realm", action="add")

        git_repo.write("newmod.py", "def zeta_quasar_fn():\n    return 42\n")
        out["file"] = await call(s, "index_file", path=str(git_repo.path / "newmod.py"))
        out["search_new"] = await call(s, "index_search", query="zeta_quasar_fn")

        out["impact"] = await call(s, "index_impact", target="app.py::alpha_handler", depth=2)
        app = (git_repo.path / "app.py").read_text()
        git_repo.write("app.py", app + "\n\ndef gamma():\n    pass\n")
        out["changes"] = await call(s, "index_changes", repo=repo)
        out["annotate"] = await call(s, "index_annotate", target="app.py::alpha_handler",
                                     text="hot path: keep it cheap")
        out["unknown_path"] = await call(s, "index_symbols", path="/nonexistent/zzz.py")
        out["status_after"] = await call(s, "index_status")
        return out

    out = run(indexd_home, body, cwd=git_repo.path)

    tools = out["tools"]
    assert set(tools) >= TOOLS
    for name in TOOLS:
        assert tools[name].description and tools[name].input_schema["type"] == "object"
    search_props = tools["index_search"].input_schema["properties"]
    assert search_props["limit"]["default"] == 10 and search_props["context"]["default"] == 0
    assert set(search_props["mode"]["anyOf"][0]["enum"]) == {"keyword", "semantic", "hybrid"}
    assert tools["index_search"].input_schema["required"] == ["query"]
    assert tools["index_impact"].input_schema["properties"]["depth"]["default"] == 2
    assert tools["index_annotate"].input_schema["properties"]["author"]["default"] == "agent"
    assert set(tools["index_realm"].input_schema["properties"]["action"]["enum"]) == {
        "add", "list", "reindex"}

    text, err = out["search"]
    assert not err, text
    assert "app.py:1-3 function alpha_handler" in text
    footer = text.splitlines()[-1]
    assert "index_lag_s=" in footer and "stale=" in footer
    assert "return x + 1" not in text           # no code without context

    text, err = out["search_ctx"]
    assert not err, text
    assert "    def alpha_handler(x):" in text   # code, indented under its hit

    text, err = out["symbols"]
    assert not err, text
    assert "1-3 function alpha_handler" in text and "class BetaService" in text
    assert "method BetaService.run" in text

    text, err = out["status"]
    assert not err, text
    assert f"work: {repo}" in text and "files" in text and "index_lag_s=" in text

    text, err = out["realm_list"]
    assert not err and text.startswith("work:") and repo in text, text
    text, err = out["realm_add_bad"]
    assert err and "needs realm and paths" in text

    text, err = out["file"]
    assert not err and text.startswith("reindexed"), text
    text, err = out["search_new"]
    assert not err and "newmod.py:1-2 function zeta_quasar_fn" in text, text

    # Being landed by the lead: a result, or a clear error text, never a crash.
    for key, ok_marker in (("impact", "impact of"), ("changes", "changed in"),
                           ("annotate", "annotated")):
        text, err = out[key]
        assert text.strip(), key
        if err:
            assert text.startswith("indexd ") and "Error executing tool" not in text, (key, text)
        else:
            assert ok_marker in text, (key, text)

    text, err = out["annotate"]
    if not err:
        assert f"annotated symbol {repo}/app.py::alpha_handler" in text, text

    text, err = out["unknown_path"]
    assert err and text.startswith("indexd symbols error"), text

    text, err = out["status_after"]             # the server survived all of it
    assert not err and "work:" in text


def test_no_daemon_says_to_run_indexd(indexd_home, git_repo):
    settings_with_realm("work", git_repo.path)

    async def body(s: ClientSession):
        listed = await s.list_tools()
        return ({t.name for t in listed.tools}, await call(s, "index_search", query="anything"),
                await call(s, "index_status"))

    names, (text, err), (status_text, status_err) = run(indexd_home, body)
    assert names >= TOOLS
    assert err and "not running" in text and "indexd run" in text, text
    assert status_err and "indexd run" in status_text


def test_formatters_tolerate_unknown_shapes():
    from indexd.mcp import server

    assert server._render(server.format_search, {"results": "nonsense"})
    assert server.format_impact({"weird": 1}) == '{"weird":1}'
    hit = {"repo": "/r", "path": "a.py", "kind": "file", "symbol": None, "start_line": 1,
           "end_line": 9, "summary": "x " * 200}
    line = server.format_search({"results": [hit], "total": 1, "mode": "keyword",
                                 "index_lag_s": 0.0, "pending": 0, "stale": False})
    assert "a.py:1-9 file — x x" in line and len(line.splitlines()[1]) < 200
    assert line.splitlines()[-1].endswith("index_lag_s=0.0 stale=false]")
    assert os.path.isabs(server._local_path("."))
    assert server._local_path("no/such/x.py") == "no/such/x.py"


def test_an_impact_answer_says_a_file_pair_once():
    """Every item of core.py repeated "core.py imports make_str from utils.py ...":
    an agent paid for the same sentence once per item."""
    from indexd.mcp import server

    said = "core.py imports make_str from utils.py and calls make_str."
    def item(symbol, line):
        return {"repo": "/r", "path": "core.py", "kind": "method", "symbol": symbol,
                "distance": 1, "score": 1.0,
                "via": [{"kind": "calls", "from": f"r/core.py::{symbol}", "to": "r/utils.py::make_str",
                         "line": line, "describe": said}]}
    text = server.format_impact({"target": "utils.py::make_str",
                                 "affected": [item("Group.resolve", 10), item("Group.invoke", 20)],
                                 "tests": [], "docs": []})
    assert text.count(said) == 1, text
    assert "core.py:10 method Group.resolve" in text and "core.py:20 method Group.invoke" in text


def test_tests_affected_on_a_clean_tree_says_nothing_changed():
    from indexd.mcp import server

    text = server.format_tests({"repo": "/r", "since": None, "staged": False, "targets": None,
                                "changed": [], "tests": [], "tests_total": 0, "safe": True})
    assert text == "nothing changed (uncommitted changes) in /r: no tests to run"


def test_a_search_answer_says_how_much_came_from_the_shared_index():
    from indexd.mcp import server

    hit = {"repo": "/src/api", "path": "a.py", "kind": "function", "symbol": "f", "start_line": 1,
           "end_line": 2, "shared": {"commit": "0123456789abcdef" * 2 + "01234567", "uri": "s3://t/i"}}
    res = {"results": [hit, hit | {"path": "b.py"}], "total": 2, "mode": "hybrid",
           "index_lag_s": 0.0, "stale": False,
           "shared": {"results": 1, "of": 2, "uris": ["s3://t/i"],
                      "commits": {"/src/api": hit["shared"]["commit"]}}}
    footer = server.format_search(res).splitlines()[-1]
    assert footer.endswith("stale=false · shared=1/2 (api@0123456789ab)]"), footer
    del res["shared"]
    assert "shared" not in server.format_search(res)
