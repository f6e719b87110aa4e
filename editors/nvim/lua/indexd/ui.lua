-- Showing answers: the quickfix list, or a telescope picker when it is installed
-- (picker = "auto") or asked for. Items are plain quickfix dicts either way.
local config = require("indexd.config")

local M = {}

local function first_line(text)
  return (tostring(text or ""):match("[^\n]*"))
end

local function file_of(item)
  return item.repo .. "/" .. item.path
end

local function label(item)
  return item.symbol and (item.path .. "::" .. item.symbol) or item.path
end

function M.search_items(results)
  local items = {}
  for _, h in ipairs(results) do
    local about = h.summary ~= nil and h.summary ~= "" and h.summary or h.snippet
    table.insert(items, { filename = file_of(h), lnum = h.start_line or 1, end_lnum = h.end_line,
                          text = ("[%s] %s  %s"):format(h.kind, h.symbol or h.path,
                                                        first_line(about)) })
  end
  return items
end

-- An impact item has no line of its own; its first edge starts in it (`line` is
-- where the import, call or link is written).
local function via_line(item)
  local edge = item.via and item.via[1]
  return edge and edge.line or 1
end

function M.impact_items(result)
  local items = {}
  for _, group in ipairs({ "affected", "tests", "docs" }) do
    for _, it in ipairs(result[group] or {}) do
      local how = it.via and it.via[1] and it.via[1].how or it.how or ""
      table.insert(items, { filename = file_of(it), lnum = via_line(it),
                            text = ("[%s] d=%d %s (%s, %s)"):format(group, it.distance or 0,
                                                                    label(it), it.kind, how) })
    end
  end
  return items
end

function M.refs_items(result)
  local items = {}
  for _, r in ipairs(result.refs or {}) do
    table.insert(items, { filename = file_of(r), lnum = r.line or 1,
                          text = ("[%s] %s (%s)"):format(r.kind, label(r), r.how or "") })
  end
  return items
end

local function has_telescope()
  return pcall(require, "telescope.pickers")
end

local function telescope(title, items)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  pickers.new({}, {
    prompt_title = title,
    finder = finders.new_table({
      results = items,
      entry_maker = function(item)
        -- filename + lnum: telescope's default action opens the file at the line.
        return { value = item, display = item.text, ordinal = item.text,
                 filename = item.filename, lnum = item.lnum }
      end,
    }),
    sorter = conf.generic_sorter({}),
    previewer = conf.grep_previewer({}),
  }):find()
end

local function quickfix(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if config.options.open_quickfix then
    vim.cmd("botright copen")
  end
end

--- Show `items` under `title`; `note` is said when there are none.
function M.show(title, items, note)
  if #items == 0 then
    vim.notify(note or (title .. ": nothing found"), vim.log.levels.INFO)
    return
  end
  local picker = config.options.picker
  if picker == "telescope" or (picker == "auto" and has_telescope()) then
    return telescope(title, items)
  end
  quickfix(title, items)
end

function M.error(message)
  vim.notify(message, vim.log.levels.ERROR)
end

local function age(seconds)
  return seconds and ("%.1fs"):format(seconds) or "-"
end

--- The `status` answer as a few lines, like `indexctl status`.
function M.status_lines(st)
  local lines = { ("indexd %s: pending %d, lag %s"):format(st.state or "?", st.pending or 0,
                                                         age(st.index_lag_s)) }
  if st.daemon then
    table.insert(lines, ("daemon pid %s, up %.0fs"):format(tostring(st.daemon.pid),
                                                         st.daemon.uptime_s or 0))
  end
  if st.config_error then
    table.insert(lines, "config: " .. tostring(st.config_error))
  end
  for _, realm in ipairs(st.realms or {}) do
    for _, repo in ipairs(realm.repos or {}) do
      table.insert(lines, ("%s %s: %d files, %d entries, pending %d, watcher %s"):format(
        realm.name, repo.repo, repo.files or 0, repo.entries or 0, repo.pending or 0,
        tostring(repo.watcher or "-")))
    end
  end
  return lines
end

return M
