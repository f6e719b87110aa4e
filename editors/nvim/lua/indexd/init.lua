-- indexd for Neovim: search, impact and refs over the daemon's socket, and a
-- statusline component. No dependencies (telescope is used when installed).
--
--   require("indexd").setup({ ... })                 -- options: see config.lua / README
--   require("indexd").search_sync("retry backoff")   -- blocking: results, answer | nil, err
--   require("indexd").statusline()                   -- "indexd ✓ 0.2s"
--
-- Every failure is a message (`nil, err` from the *_sync calls, vim.notify from
-- the commands), never a Lua error: the daemon being down is an ordinary state.
local config = require("indexd.config")
local rpc = require("indexd.rpc")
local statusline = require("indexd.statusline")
local ui = require("indexd.ui")
local uv = vim.uv or vim.loop

local M = {}

local conn = nil          -- the request connection, opened on first use
local connecting = nil    -- callbacks waiting while it opens

function M.setup(opts)
  config.set(opts)
  if conn then           -- the socket may have changed
    conn:close()
    conn = nil
  end
  statusline.reset()
end

function M.socket()
  return config.socket()
end

local function with_conn(cb)
  if conn and not conn.closed then
    return cb(nil, conn)
  end
  if connecting then
    table.insert(connecting, cb)
    return
  end
  connecting = { cb }
  rpc.connect(config.socket(), {}, function(err, c)
    local waiters = connecting
    connecting = nil
    conn = c
    for _, w in ipairs(waiters) do
      w(err, c)
    end
  end)
end

--- Any method of docs/protocol.md; cb(err, result) on the main loop.
--- opts.timeout: milliseconds (default setup's timeout_ms).
function M.request(method, params, cb, opts)
  local timeout = (opts and opts.timeout) or config.options.timeout_ms
  with_conn(function(err, c)
    if err then
      return cb(err)
    end
    c:request(method, params, timeout, cb)
  end)
end

--- Blocking request: result | nil, err. Waits at most opts.timeout ms.
function M.request_sync(method, params, opts)
  local timeout = (opts and opts.timeout) or config.options.timeout_ms
  local done, err, result = false, nil, nil
  M.request(method, params, function(e, r)
    done, err, result = true, e, r
  end, { timeout = timeout })
  -- The request has its own timer; the margin covers only the connect.
  if not vim.wait(timeout + 1000, function() return done end, 10) then
    return nil, ("indexd did not answer %s within %.1f s"):format(method, timeout / 1000)
  end
  if err then
    return nil, err
  end
  return result
end

local SEARCH_FIELDS = { "realm", "repo", "kind", "lang", "path", "limit", "mode", "context",
                        "files", "sync" }

local function search_params(query, opts)
  local params = { query = query, limit = config.options.limit, realm = config.options.realm }
  for _, key in ipairs(SEARCH_FIELDS) do
    if opts[key] ~= nil then
      params[key] = opts[key]
    end
  end
  if params.sync then
    -- The daemon's own wait (seconds) ends before ours, so its answer says why.
    params.timeout = ((opts.timeout or config.options.timeout_ms) / 1000) * 0.9
  end
  return params
end

--- Blocking search: the results list and the whole answer, or nil and a message.
--- opts: realm, repo, kind, lang, path, limit, mode, context, files, sync (wait
--- until every change made before is indexed), timeout (ms).
function M.search_sync(query, opts)
  opts = opts or {}
  if type(query) ~= "string" or not query:find("%S") then
    return nil, "indexd: search needs a query"
  end
  local answer, err = M.request_sync("search", search_params(query, opts), opts)
  if not answer then
    return nil, err
  end
  return answer.results, answer
end

--- :IndexdSearch — results into the quickfix list or a picker.
function M.search(query, opts)
  opts = opts or {}
  if type(query) ~= "string" or not query:find("%S") then
    return ui.error("indexd: :IndexdSearch needs a query")
  end
  M.request("search", search_params(query, opts), function(err, answer)
    if err then
      return ui.error(err)
    end
    ui.show("indexd search: " .. query, ui.search_items(answer.results or {}),
            "indexd: nothing found for " .. query)
  end, opts)
end

-- The innermost symbol whose lines hold `line` (a method inside its class).
local function innermost(entries, line)
  local best = nil
  for _, e in ipairs(entries) do
    if e.symbol and e.start_line <= line and line <= e.end_line then
      local span = e.end_line - e.start_line
      if not best or span < best.end_line - best.start_line
          or (span == best.end_line - best.start_line and e.start_line > best.start_line) then
        best = e
      end
    end
  end
  return best
end

--- The target under the cursor, as impact and refs take it: "/repo/path.py::Qualified.name"
--- for the innermost symbol around the cursor, else the file. cb(err, target, symbol_entry).
function M.cursor_target(cb)
  local name = vim.api.nvim_buf_get_name(0)
  if name == "" then
    return cb("indexd: this buffer has no file")
  end
  -- The daemon knows files by their real path (a link into a repo is the repo's file).
  local path = uv.fs_realpath(name) or vim.fn.fnamemodify(name, ":p")
  local line = vim.api.nvim_win_get_cursor(0)[1]
  M.request("symbols", { path = path }, function(err, answer)
    if err then
      return cb(err)
    end
    local file = answer.repo .. "/" .. answer.path
    local entry = innermost(answer.results or {}, line)
    cb(nil, entry and (file .. "::" .. entry.symbol) or file, entry, line)
  end)
end

-- A path relative to the editor's directory becomes absolute, as indexctl does
-- (the daemon would read it against its own directory); symbols stay as given.
local function absolute_target(target)
  local path, sep, symbol = target:match("^(.-)(::)(.*)$")
  path = path or target
  if path:sub(1, 2) == "~/" then
    path = vim.fn.expand(path)
  end
  if path:sub(1, 1) ~= "/" and uv.fs_stat(path) then
    path = uv.fs_realpath(path) or path
  end
  return path .. (sep or "") .. (symbol or "")
end

local function with_target(target, need_symbol, cb)
  if target and target:find("%S") then
    return cb(absolute_target(vim.trim(target)))
  end
  M.cursor_target(function(err, found, entry, line)
    if err then
      return ui.error(err)
    end
    if need_symbol and not entry then
      return ui.error(("indexd: no symbol at line %d of %s (refs needs one)"):format(line, found))
    end
    cb(found)
  end)
end

--- :IndexdImpact [target] — what may break if the symbol under the cursor changes.
function M.impact(target, opts)
  opts = opts or {}
  with_target(target, false, function(t)
    M.request("impact", { target = t, depth = opts.depth, limit = opts.limit }, function(err, answer)
      if err then
        return ui.error(err)
      end
      ui.show("indexd impact: " .. t, ui.impact_items(answer), "indexd: nothing depends on " .. t)
    end, opts)
  end)
end

--- :IndexdRefs [target] — who references the symbol under the cursor.
function M.refs(target, opts)
  opts = opts or {}
  with_target(target, true, function(t)
    M.request("refs", { target = t, limit = opts.limit }, function(err, answer)
      if err then
        return ui.error(err)
      end
      ui.show("indexd refs: " .. t, ui.refs_items(answer), "indexd: no references to " .. t)
    end, opts)
  end)
end

--- :IndexdStatus — the daemon's figures, as a message.
function M.status()
  M.request("status", nil, function(err, st)
    if err then
      return ui.error(err)
    end
    vim.notify(table.concat(ui.status_lines(st), "\n"), vim.log.levels.INFO)
  end)
end

--- The statusline component ("indexd ✓ 0.2s", "indexd ⟳ 3 pending 1.2s", "indexd ✗ down"),
--- fed by the daemon's notifications; the `User IndexdStatus` event fires on each change.
function M.statusline()
  return statusline.text()
end

--- The figures behind the statusline: {state, pending, index_lag_s, generation, ...}.
function M.status_info()
  return statusline.info()
end

return M
