-- sidekick.nvim (the plugin's own source, PLUGIN) against kimi-lsp (KIMI_LSP_BIN) and
-- the stand-in, with the setup of editors/neovim/README.md, in headless
-- Neovim 0.11+. Run by run.sh; prints ok:/FAIL: lines, then PASS. The edit is
-- made with nvim_buf_set_text and the TextChanged the plugin listens to is
-- fired by this script (headless Neovim fires none by itself here).
local root = os.getenv('WS')
vim.opt.runtimepath:prepend(os.getenv('PLUGIN'))
vim.cmd('filetype on')
local function out(s) io.stdout:write(s .. '\n') end
local fails = 0
local function check(c, what, detail) out((c and 'ok: ' or 'FAIL: ') .. what .. ((not c and detail) and (' -- ' .. detail) or '')); if not c then fails = fails + 1 end end
local function finish() out(fails == 0 and 'PASS' or 'FAILED'); vim.cmd(fails == 0 and 'qall!' or 'cquit 1') end
vim.defer_fn(function() check(false, 'finished in time'); finish() end, 60000)

-- The documented setup (editors/neovim/README.md): a client whose name has
-- "copilot" in it, as sidekick looks for.
vim.lsp.config('kimi_copilot', {
  cmd = { os.getenv('KIMI_LSP_BIN'), '--stdio' },
  root_markers = { 'go.mod', '.git' },
  init_options = { kimi = { nextEdit = { debounceMs = 1000 } } },
})
vim.lsp.enable('kimi_copilot')
require('sidekick').setup({})
vim.cmd('edit ' .. root .. '/main.go')
local buf = vim.api.nvim_get_current_buf()
local client
vim.wait(15000, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'kimi_copilot' })[1]
  return client ~= nil and client.initialized
end, 20)
check(client ~= nil, 'kimi_copilot (kimi-lsp) attached')
if not client then return finish() end
out('offset encoding: ' .. client.offset_encoding)
vim.wait(200) -- sidekick's setup runs scheduled
local sent, notes = {}, {}
local orig_request = client.request
client.request = function(self, method, params, ...)
  table.insert(sent, method .. (method == 'workspace/executeCommand' and (' ' .. params.command) or ''))
  return orig_request(self, method, params, ...)
end
local orig_notify = vim.notify
vim.notify = function(msg, ...) table.insert(notes, msg); return orig_notify(msg, ...) end

vim.api.nvim_buf_set_text(buf, 2, 18, 2, 24, { 'k' })
vim.api.nvim_win_set_cursor(0, { 3, 18 })
vim.api.nvim_exec_autocmds('TextChanged', { buffer = buf })
local Nes = require('sidekick.nes')
local ok = vim.wait(20000, function() return Nes.have() end, 20)
check(ok, 'sidekick has an edit (require("sidekick.nes").have())')
if not ok then return finish() end
local e = Nes.get(buf)[1]
check(e.range.start.line == 3 and e.text:find('if k == 0', 1, true) ~= nil, 'at line 3, the rename of the uses', vim.inspect({ e.range, e.text }))
local marks = vim.api.nvim_buf_get_extmarks(buf, require('sidekick.config').ns, 0, -1, {})
check(#marks > 0, 'sidekick drew it (' .. #marks .. ' extmarks)')
Nes.apply()
local want = 'package main\n\nfunc scale(v int, k int) int {\n\tif k == 0 {\n\t\treturn v\n\t}\n\treturn v * k\n}'
ok = vim.wait(5000, function() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') == want end, 20)
check(ok, 'apply() applied it', table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
vim.wait(1500) -- its command, then the SidekickNesDone update
local res = client:request_sync('workspace/executeCommand', { command = 'kimi.stats' }, 5000, buf)
local ne = res and res.result and res.result.nextEdit or {}
out('requests sent: ' .. table.concat(sent, ', '))
check(vim.tbl_contains(sent, 'workspace/executeCommand kimi.nextEdit.accepted'), 'its command went to the server')
check(#notes == 0, 'no notification shown', vim.inspect(notes))
check(ne.requested == 1, 'one provider request', vim.inspect(ne))
check(ne.accepted == 1, 'accepted once (its didChange, then its command)', vim.inspect(ne.accepted))
finish()
