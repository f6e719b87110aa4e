-- The commands; the module loads on first use, so startup pays nothing.
if vim.g.loaded_indexd then
  return
end
vim.g.loaded_indexd = true

local function indexd()
  return require("indexd")
end

local command = vim.api.nvim_create_user_command

command("IndexdSearch", function(o) indexd().search(o.args) end,
        { nargs = "+", desc = "indexd: search the index into the quickfix list or a picker" })
command("IndexdImpact", function(o) indexd().impact(o.args) end,
        { nargs = "?", desc = "indexd: what may break if the symbol under the cursor changes" })
command("IndexdRefs", function(o) indexd().refs(o.args) end,
        { nargs = "?", desc = "indexd: who references the symbol under the cursor" })
command("IndexdStatus", function() indexd().status() end,
        { nargs = 0, desc = "indexd: the daemon's status" })
