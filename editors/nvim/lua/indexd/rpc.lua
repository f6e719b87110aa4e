-- One JSON-RPC 2.0 connection to the daemon's Unix socket (a libuv pipe), in
-- newline-delimited JSON framing (docs/protocol.md: the first byte `{` picks it).
--
-- libuv calls back in a "fast" context where most of the editor API is off
-- limits, so every callback handed to a caller goes through vim.schedule; the
-- schedule queue is FIFO, so answers and notifications keep the socket's order.
local uv = vim.uv or vim.loop

local M = {}

M.NOT_RUNNING = "indexd is not running: start it with indexd run"

local Conn = {}
Conn.__index = Conn

-- JSON null decodes to vim.NIL, which is truthy; fields that are null become
-- absent instead, so `hit.symbol or hit.path` reads as it does in Python.
local function drop_nulls(value)
  if type(value) ~= "table" then
    return value
  end
  for k, v in pairs(value) do
    if v == vim.NIL and type(k) == "string" then
      value[k] = nil
    else
      drop_nulls(v)
    end
  end
  return value
end

local function connect_error(path, err)
  -- ENOENT: no socket; ECONNREFUSED: a socket left behind by a daemon that died.
  local e = tostring(err)
  if e:find("ENOENT") or e:find("ECONNREFUSED") then
    return M.NOT_RUNNING .. " (no daemon at " .. path .. ")"
  end
  return "indexd: cannot connect to " .. path .. ": " .. e
end

local function error_text(err)
  if type(err) ~= "table" then
    return "indexd: " .. tostring(err)
  end
  return "indexd: " .. tostring(err.message or "error " .. tostring(err.code))
end

--- Connect to `path`; cb(err, conn) on the main loop. handlers: notification(method,
--- params) for pushes, on_close(reason) once the connection ends.
function M.connect(path, handlers, cb)
  local pipe = uv.new_pipe(false)
  local conn = setmetatable({ pipe = pipe, path = path, handlers = handlers or {}, next_id = 0,
                              waiting = {}, parts = {}, closed = false }, Conn)
  local ok, err = pcall(pipe.connect, pipe, path, function(cerr)
    if cerr then
      conn.closed = true
      pipe:close()
      vim.schedule(function() cb(connect_error(path, cerr)) end)
      return
    end
    pipe:read_start(function(rerr, chunk) conn:_on_read(rerr, chunk) end)
    vim.schedule(function() cb(nil, conn) end)
  end)
  if not ok then   -- refused at once (a path too long for a socket address)
    conn.closed = true
    pipe:close()
    vim.schedule(function() cb(connect_error(path, err)) end)
  end
end

function Conn:_on_read(err, chunk)
  if err or not chunk then
    self:_close(err and ("indexd: connection lost: " .. err) or "indexd closed the connection")
    return
  end
  -- Only the new chunk is searched for newlines: a large answer arriving in many
  -- chunks is joined once, not rescanned per chunk.
  local start = 1
  while true do
    local nl = chunk:find("\n", start, true)
    if not nl then
      break
    end
    table.insert(self.parts, chunk:sub(start, nl - 1))
    local line = table.concat(self.parts)
    self.parts = {}
    if line:find("%S") then
      self:_on_line(line)
    end
    start = nl + 1
  end
  if start <= #chunk then
    table.insert(self.parts, chunk:sub(start))
  end
end

function Conn:_on_line(line)
  local ok, msg = pcall(vim.json.decode, line)
  if not ok or type(msg) ~= "table" then
    self:_close("indexd: unreadable message from the daemon: " .. line:sub(1, 80))
    return
  end
  vim.schedule(function() self:_on_message(drop_nulls(msg)) end)
end

function Conn:_on_message(msg)
  if msg.id ~= nil then
    local req = self.waiting[msg.id]
    if req then
      self:_finish(msg.id, msg.error and error_text(msg.error) or nil, msg.result)
    end
  elseif msg.method and self.handlers.notification then
    self.handlers.notification(msg.method, msg.params or {})
  end
end

function Conn:_finish(id, err, result)
  local req = self.waiting[id]
  self.waiting[id] = nil
  if not req.timer:is_closing() then
    req.timer:stop()
    req.timer:close()
  end
  req.cb(err, result)
end

--- Close from any context: pending requests fail with `reason`, on_close runs once.
function Conn:_close(reason)
  if self.closed then
    return
  end
  self.closed = true
  self.close_reason = reason
  if not self.pipe:is_closing() then
    self.pipe:read_stop()
    self.pipe:close()
  end
  vim.schedule(function()
    for id in pairs(self.waiting) do
      self:_finish(id, reason, nil)
    end
    if self.handlers.on_close then
      self.handlers.on_close(reason)
    end
  end)
end

function Conn:close()
  self:_close("indexd: connection closed")
end

--- Send one request; cb(err, result) on the main loop, err a message string.
--- The answer is awaited at most timeout_ms.
function Conn:request(method, params, timeout_ms, cb)
  if self.closed then
    vim.schedule(function() cb(self.close_reason or "indexd: connection closed") end)
    return
  end
  if params == nil or next(params) == nil then
    params = vim.empty_dict()   -- `{}`: an empty Lua table would encode as `[]`
  end
  self.next_id = self.next_id + 1
  local id = self.next_id
  local ok, body = pcall(vim.json.encode, { jsonrpc = "2.0", id = id, method = method,
                                            params = params })
  if not ok then
    vim.schedule(function() cb("indexd: cannot encode params of " .. method .. ": " .. body) end)
    return
  end
  local timer = uv.new_timer()
  self.waiting[id] = { cb = cb, timer = timer }
  timer:start(timeout_ms, 0, vim.schedule_wrap(function()
    if self.waiting[id] then
      self:_finish(id, ("indexd did not answer %s within %.1f s"):format(method, timeout_ms / 1000))
    end
  end))
  self.pipe:write(body .. "\n", function(werr)
    if werr then
      self:_close("indexd: connection lost: " .. werr)
    end
  end)
end

return M
