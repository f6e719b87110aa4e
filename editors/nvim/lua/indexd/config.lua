-- Options (setup{}) and the daemon's socket path, computed as indexd/config.py
-- does (default_paths), so the plugin finds the daemon the CLI finds.
local M = {}

local DEFAULTS = {
  socket = nil,            -- the socket path; nil: INDEXD_HOME / XDG_RUNTIME_DIR as the CLI
  timeout_ms = 10000,      -- per request; search_sync and the commands give up after it
  limit = 20,              -- results per search
  realm = nil,             -- search one realm (nil: all)
  picker = "auto",         -- "auto" (telescope when installed), "telescope", "quickfix"
  open_quickfix = true,    -- :copen after filling the quickfix list
  reconnect_ms = 2000,     -- the statusline retries a lost daemon this often
}

M.options = vim.deepcopy(DEFAULTS)

local KNOWN = { socket = true, timeout_ms = true, limit = true, realm = true, picker = true,
                open_quickfix = true, reconnect_ms = true }
local VALID_PICKERS = { auto = true, telescope = true, quickfix = true }

function M.set(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("indexd.setup takes a table of options", 0)
  end
  for key in pairs(opts) do
    if not KNOWN[key] then
      error("indexd.setup: unknown option " .. tostring(key), 0)
    end
  end
  if opts.picker ~= nil and not VALID_PICKERS[opts.picker] then
    error("indexd.setup: picker must be auto, telescope or quickfix", 0)
  end
  M.options = vim.tbl_extend("force", vim.deepcopy(DEFAULTS), opts)
end

local function getenv(name)
  local value = os.getenv(name)
  if value == nil or value == "" then
    return nil
  end
  return value
end

-- Path(home).expanduser().absolute(): "~" expanded, relative to the current
-- directory, links not resolved (the daemon does not resolve them either).
local function absolute(path)
  local full = vim.fn.fnamemodify(path, ":p")
  if #full > 1 then
    full = full:gsub("/+$", "")
  end
  return full
end

function M.socket()
  if M.options.socket then
    return absolute(M.options.socket)
  end
  local home = getenv("INDEXD_HOME")
  if home then
    return absolute(home) .. "/indexd.sock"
  end
  local runtime = getenv("XDG_RUNTIME_DIR")
  if runtime then
    return runtime .. "/indexd/indexd.sock"
  end
  local uv = vim.uv or vim.loop
  return "/tmp/indexd-" .. uv.getuid() .. "/indexd.sock"
end

return M
