-- The statusline component: a second connection that subscribes to the daemon's
-- `status` notifications (one after each indexing batch) and keeps the last one,
-- so drawing the statusline never waits on the socket. A lost daemon is retried
-- every reconnect_ms until it is back (a restart, an upgrade).
local config = require("indexd.config")
local rpc = require("indexd.rpc")
local uv = vim.uv or vim.loop

local M = {}

local state = { started = false, conn = nil, last = nil, down = nil, timer = nil }

-- The same words as `indexctl status --oneline` (indexd/cli/render.py: oneline).
function M.format(st, down)
  if down then
    return "indexd ✗ down"
  end
  if not st then
    return "indexd …"     -- connecting: nothing heard yet
  end
  local pending = st.pending or 0
  local lag = st.index_lag_s or 0
  if st.state == "error" then
    return "indexd ! " .. tostring(st.error or "error")
  end
  if st.state == "paused" then
    return ("indexd ⏸ %d pending"):format(pending)
  end
  if pending > 0 then
    return ("indexd ⟳ %d pending %.1fs"):format(pending, lag)
  end
  return ("indexd ✓ %.1fs"):format(lag)
end

-- Users with their own statusline plugin (lualine, …) redraw on this event.
local function changed()
  vim.cmd("silent doautocmd <nomodeline> User IndexdStatus")
  vim.cmd("redrawstatus!")
end

local function keep(st)
  state.last = { state = st.state, pending = st.pending, index_lag_s = st.index_lag_s,
                 generation = st.generation, paused = st.paused, error = st.error }
  state.down = nil
  changed()
end

local connect

local function retry_later(reason)
  state.conn = nil
  if state.down ~= reason then
    state.down = reason
    changed()
  end
  if not state.timer then
    state.timer = uv.new_timer()
  end
  state.timer:start(config.options.reconnect_ms, 0, vim.schedule_wrap(connect))
end

connect = function()
  local handlers = {
    notification = function(method, params)
      if method == "status" then
        keep(params)
      end
    end,
    on_close = retry_later,
  }
  rpc.connect(config.socket(), handlers, function(err, conn)
    if err then
      return retry_later(err)
    end
    state.conn = conn
    local timeout = config.options.timeout_ms
    conn:request("subscribe", nil, timeout, function(serr)
      if serr then
        return conn:close()
      end
      -- The first notification comes with the next batch: the current figures now.
      conn:request("status", nil, timeout, function(_, st)
        if st then
          keep(st)
        end
      end)
    end)
  end)
end

function M.start()
  if state.started then
    return
  end
  state.started = true
  connect()
end

--- After setup{} changed the socket: drop the connection; the retry finds the new one.
function M.reset()
  if state.conn then
    state.conn:close()
  end
end

--- The component: a short string; starts the subscription on its first call.
function M.text()
  M.start()
  return M.format(state.last, state.down)
end

--- The last figures ({state, pending, index_lag_s, generation, paused, error}) and,
--- while the daemon is unreachable, the reason as a second value.
function M.info()
  M.start()
  return state.last, state.down
end

return M
