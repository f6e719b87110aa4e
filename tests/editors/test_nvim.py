"""The Neovim plugin (editors/nvim) in a real headless `nvim` against the real daemon.

Each test writes a Lua script that drives the plugin (its commands, search_sync,
the statusline), waits on conditions with vim.wait, and writes what it saw as
JSON; nvim then quits. `INDEXD_TEST_NVIM` picks another nvim binary (to check a
newer release than Debian's 0.7).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest
from testlib import REPO_ROOT, wait_until

NVIM = os.environ.get("INDEXD_TEST_NVIM") or shutil.which("nvim")
PLUGIN = REPO_ROOT / "editors" / "nvim"
NOT_RUNNING = "indexd is not running: start it with indexd run"

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (apt-get install neovim): the Neovim plugin "
                         "tests run it headless")

# Runs the test's body; whatever happens, writes {ok, result | error, messages}
# and quits, so nvim never outlives the test (the subprocess timeout kills it if
# the body hangs anyway).
HARNESS = r"""
local out_path = os.getenv("IX_TEST_OUT")
local messages = {}
vim.notify = function(msg, level) table.insert(messages, { msg = tostring(msg), level = level }) end
local function wait_for(what, pred, ms)
  if not vim.wait(ms or 30000, pred, 20) then error("timed out waiting for " .. what, 2) end
end
local function mark(name)
  local f = assert(io.open(out_path .. "." .. name, "w")); f:close()
end
local function qf_items()
  local items = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    table.insert(items, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum,
                          text = it.text })
  end
  return items
end
local function qf_title() return vim.fn.getqflist({ title = 1 }).title end
local ix = require("indexd")
local ok, result = xpcall(function()
--BODY--
end, debug.traceback)
local f = assert(io.open(out_path, "w"))
f:write(vim.json.encode({ ok = ok, result = ok and result or vim.NIL,
                          error = (not ok) and result or vim.NIL, messages = messages,
                          errmsg = vim.v.errmsg }))
f:close()
vim.cmd("qa!")
"""

@pytest.fixture
def nvim_env(indexd_home):
    """nvim's own state, logs and server socket in a short temp dir, not the user's."""
    base = tempfile.mkdtemp(prefix="nv")
    env = os.environ | {f"XDG_{k}_HOME": f"{base}/{k.lower()}" for k in
                        ("CONFIG", "DATA", "STATE", "CACHE")} | {"XDG_RUNTIME_DIR": base}
    yield env
    shutil.rmtree(base, ignore_errors=True)


class Nvim:
    """One headless nvim running a harnessed Lua body."""

    def __init__(self, body: str, tmp_path, env: dict):
        self.out = tmp_path / "out.json"
        script = tmp_path / "drive.lua"
        script.write_text(HARNESS.replace("--BODY--", body), encoding="utf-8")
        cmd = [NVIM, "--headless", "--clean", "-u", "NONE", "-i", "NONE",
               "--cmd", f"set rtp^={PLUGIN}", "-c", "runtime plugin/indexd.lua",
               "-c", f"luafile {script}"]
        self.proc = subprocess.Popen(cmd, env=env | {"IX_TEST_OUT": str(self.out)},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)

    def marked(self, name: str) -> bool:
        if self.proc.poll() is not None and not self.out.with_name(f"out.json.{name}").exists():
            raise AssertionError(f"nvim exited before {name!r}: {self.finish(0)}")
        return self.out.with_name(f"out.json.{name}").exists()

    def finish(self, timeout: float = 120) -> dict:
        try:
            output, _ = self.proc.communicate(timeout=timeout)
        finally:
            self.kill()                     # hung: never left behind
        text = output.decode(errors="replace")
        assert self.out.exists(), f"nvim rc={self.proc.returncode} wrote no result:\n{text}"
        got = json.loads(self.out.read_text(encoding="utf-8"))
        assert got["ok"], f"{got['error']}\nmessages: {got['messages']}\n{text}"
        assert "stack traceback" not in text and got["errmsg"] == "", (text, got["errmsg"])
        return got

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def nvim(tmp_path, nvim_env):
    """Start a harnessed nvim; any still running when the test ends (a failed wait) is killed."""
    started = []

    def start(body: str, env: dict | None = None) -> Nvim:
        where = tmp_path / f"nvim{len(started)}"
        where.mkdir()
        started.append(Nvim(body, where, nvim_env if env is None else env))
        return started[-1]

    yield start
    for nv in started:
        nv.kill()


def lua_str(value) -> str:
    return json.dumps(str(value))     # a JSON string is a valid Lua string literal here


def test_search_sync_and_quickfix(retry_repo, nvim):
    root, _ = retry_repo
    got = nvim("""
      ix.setup({ picker = "quickfix" })
      local results = assert(ix.search_sync("compute backoff", { sync = true, timeout = 30000 }))
      vim.cmd("IndexdSearch compute backoff")
      wait_for("the quickfix list", function() return qf_title() == "indexd search: compute backoff" end)
      local found = {}
      for _, h in ipairs(results) do
        table.insert(found, { path = h.path, symbol = h.symbol or "", kind = h.kind,
                              start_line = h.start_line, repo = h.repo })
      end
      return { results = found, qf = qf_items() }
    """).finish()["result"]
    first = got["results"][0]
    assert (first["path"], first["symbol"], first["kind"], first["start_line"]) == (
        "pkg/retry.py", "compute_backoff", "function", 4)
    # The quickfix list is the same results, in order, at their files and lines.
    assert [(q["file"], q["lnum"]) for q in got["qf"]] == [
        (f"{h['repo']}/{h['path']}", h["start_line"]) for h in got["results"]]
    assert got["qf"][0]["file"] == str(root / "pkg/retry.py")
    assert "compute_backoff" in got["qf"][0]["text"]


def test_impact_and_refs_of_the_symbol_under_the_cursor(retry_repo, nvim):
    root, _ = retry_repo
    got = nvim(f"""
      ix.setup({{ picker = "quickfix" }})
      vim.cmd("edit " .. vim.fn.fnameescape({lua_str(root / "pkg/retry.py")}))
      vim.api.nvim_win_set_cursor(0, {{ 6, 4 }})     -- inside compute_backoff's body
      local target
      ix.cursor_target(function(err, t) target = t or err end)
      wait_for("the target", function() return target ~= nil end)
      vim.cmd("IndexdImpact")
      wait_for("impact", function() return qf_title():find("^indexd impact") ~= nil end)
      local impact = qf_items()
      vim.cmd("cclose")                              -- back in the file's window
      vim.cmd("IndexdRefs")
      wait_for("refs", function() return qf_title():find("^indexd refs") ~= nil end)
      local refs = qf_items()
      vim.cmd("cclose")
      vim.api.nvim_win_set_cursor(0, {{ 1, 0 }})     -- the module docstring: no symbol
      local file_target
      ix.cursor_target(function(err, t) file_target = t or err end)
      wait_for("the file target", function() return file_target ~= nil end)
      vim.cmd("IndexdRefs")
      wait_for("a message", function() return #messages > 0 end)
      return {{ target = target, impact = impact, refs = refs, file_target = file_target }}
    """).finish()
    messages, got = got["messages"], got["result"]
    assert got["target"] == f"{root}/pkg/retry.py::compute_backoff"
    impact = {(q["file"], q["lnum"]) for q in got["impact"]}
    # The importer's call and the test's call, at the lines they are written on.
    assert (str(root / "app.py"), 5) in impact
    assert (str(root / "tests/test_retry.py"), 5) in impact
    assert any(q["text"].startswith("[tests]") for q in got["impact"])
    refs = {(q["file"], q["lnum"]) for q in got["refs"]}
    assert {(str(root / "app.py"), 5), (str(root / "tests/test_retry.py"), 5)} <= refs
    assert got["file_target"] == f"{root}/pkg/retry.py"       # impact of the whole file
    assert [m["msg"] for m in messages] == [
        f"indexd: no symbol at line 1 of {root}/pkg/retry.py (refs needs one)"]


def test_statusline_shows_pending_then_fresh_after_an_edit(retry_repo, nvim):
    root, _ = retry_repo
    got = nvim(f"""
      ix.setup({{}})
      local seen = {{}}
      vim.api.nvim_create_autocmd("User", {{ pattern = "IndexdStatus",
        callback = function() table.insert(seen, ix.statusline()) end }})
      wait_for("fresh", function() return ix.statusline():find("^indexd ✓") ~= nil end)
      local before = ix.status_info().generation
      -- Paused, the edit stays pending: the statusline can be seen saying so.
      assert(ix.request_sync("pause"))
      local f = assert(io.open({lua_str(root / "pkg/retry.py")}, "a"))
      f:write("\\n\\ndef jitter_delay(base):\\n    return base / 2\\n")
      f:close()
      for _ = 1, 300 do
        local st = assert(ix.request_sync("status"))
        if st.pending > 0 then break end
        vim.wait(100)
      end
      assert(ix.request_sync("pause"))             -- pushes the figures with the edit pending
      wait_for("pending", function() return ix.statusline() == "indexd ⏸ 1 pending" end)
      assert(ix.request_sync("resume"))
      wait_for("indexed", function()
        local info = ix.status_info()
        return info.generation > before and ix.statusline():find("^indexd ✓") ~= nil
      end)
      local hits = assert(ix.search_sync("jitter delay", {{ limit = 3 }}))
      return {{ seen = seen, last = ix.statusline(), top = hits[1] and hits[1].symbol or "" }}
    """).finish()["result"]
    assert "indexd ⏸ 0 pending" in got["seen"] and "indexd ⏸ 1 pending" in got["seen"]
    assert re.fullmatch(r"indexd ✓ \d+\.\ds", got["last"]), got["last"]
    assert got["seen"].index("indexd ⏸ 1 pending") < len(got["seen"]) - 1
    assert got["top"] == "jitter_delay"


def test_statusline_reconnects_when_the_daemon_restarts(retry_repo, daemon, nvim):
    _, d = retry_repo
    nv = nvim("""
      ix.setup({ reconnect_ms = 200 })
      wait_for("fresh", function() return ix.statusline():find("^indexd ✓") ~= nil end)
      assert(ix.search_sync("compute backoff"))     -- the request connection is open too
      mark("up")
      wait_for("down", function() return ix.statusline() == "indexd ✗ down" end, 60000)
      mark("down")
      wait_for("back", function() return ix.statusline():find("^indexd ✓") ~= nil end, 90000)
      local hits, err = ix.search_sync("compute backoff")
      return { top = hits and hits[1].symbol or err }
    """)
    wait_until(lambda: nv.marked("up"), timeout=60, what="nvim to see the daemon")
    d.stop()
    wait_until(lambda: nv.marked("down"), timeout=60, what="nvim to see the daemon gone")
    daemon()
    assert nv.finish()["result"]["top"] == "compute_backoff"


def test_a_daemon_that_stops_answering_times_out_then_recovers(daemon, nvim):
    d = daemon()
    nv = nvim("""
      ix.setup({ timeout_ms = 500 })
      assert(ix.request_sync("initialize"))
      mark("connected")
      wait_for("the daemon frozen", function()
        return (vim.uv or vim.loop).fs_stat(os.getenv("IX_TEST_OUT") .. ".frozen") ~= nil
      end, 60000)
      local results, err = ix.search_sync("anything")
      mark("timed_out")
      -- Thawed, it answers the abandoned request too; that answer must not be taken
      -- for the next one's.
      local st, err2 = ix.request_sync("status", nil, { timeout = 30000 })
      return { results = results == nil, err = err, state = st and st.state or err2 }
    """)
    wait_until(lambda: nv.marked("connected"), timeout=60, what="nvim to connect")
    d.proc.send_signal(signal.SIGSTOP)
    try:
        nv.out.with_name("out.json.frozen").touch()
        wait_until(lambda: nv.marked("timed_out"), timeout=60, what="search_sync to time out")
    finally:
        d.proc.send_signal(signal.SIGCONT)
    got = nv.finish()["result"]
    assert got["results"] is True
    assert got["err"] == "indexd did not answer search within 0.5 s"
    assert got["state"] in ("fresh", "indexing")


@pytest.mark.parametrize("case", ["indexd_home_relative", "xdg_runtime_dir", "neither"])
def test_socket_path_is_the_one_the_cli_uses(case, tmp_path, nvim_env, nvim, monkeypatch):
    from indexd.config import default_paths

    monkeypatch.chdir(tmp_path)
    env = {k: v for k, v in nvim_env.items() if k not in ("INDEXD_HOME", "XDG_RUNTIME_DIR")}
    if case == "indexd_home_relative":
        env["INDEXD_HOME"] = "ixrel"
    elif case == "xdg_runtime_dir":
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    got = nvim("return { socket = ix.socket() }", env).finish()
    assert got["result"]["socket"] == str(default_paths(env).socket)


def test_daemon_down_is_a_message_not_a_stack_trace(tmp_path, nvim):
    got = nvim(f"""
      ix.setup({{ socket = {lua_str(tmp_path / "other.sock")} }})
      local results, err = ix.search_sync("anything")
      vim.cmd("IndexdSearch anything")
      vim.cmd("IndexdStatus")
      vim.cmd("IndexdImpact pkg/retry.py")
      wait_for("three messages", function() return #messages >= 3 end)
      wait_for("the statusline", function() return ix.statusline() == "indexd ✗ down" end)
      return {{ results = results == nil, err = err }}
    """).finish()
    assert got["result"]["results"] is True
    assert got["result"]["err"] == f"{NOT_RUNNING} (no daemon at {tmp_path / 'other.sock'})"
    assert [m["msg"].split(" (")[0] for m in got["messages"]] == [NOT_RUNNING] * 3
    assert {m["level"] for m in got["messages"]} == {4}        # vim.log.levels.ERROR
