-- copilot-lsp (the plugin's own source, PLUGIN) against kimi-lsp (KIMI_LSP_BIN) and
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

-- The documented setup (editors/neovim/README.md).
vim.lsp.config('kimi_copilot', {
  cmd = { os.getenv('KIMI_LSP_BIN'), '--stdio' },
  root_markers = { 'go.mod', '.git' },
  capabilities = { general = { positionEncodings = { 'utf-16' } } },
  init_options = { kimi = { nextEdit = { debounceMs = 1000 } } },
  on_init = function(client)
    require('copilot-lsp.nes').lsp_on_init(client, vim.api.nvim_create_augroup('kimi.copilot-lsp', { clear = true }))
  end,
})
vim.lsp.enable('kimi_copilot')
vim.cmd('edit ' .. root .. '/main.go')
local buf = vim.api.nvim_get_current_buf()
local client
vim.wait(15000, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'kimi_copilot' })[1]
  return client ~= nil and client.initialized
end, 20)
check(client ~= nil, 'kimi_copilot (kimi-lsp) attached')
if not client then return finish() end
check(client.offset_encoding == 'utf-16', 'utf-16 negotiated', client.offset_encoding)

-- The rename, then the event copilot-lsp's on_init listens to.
vim.api.nvim_buf_set_text(buf, 2, 18, 2, 24, { 'k' })
vim.api.nvim_win_set_cursor(0, { 3, 18 })
vim.api.nvim_exec_autocmds('TextChanged', { buffer = buf })
local ok = vim.wait(20000, function() return vim.b[buf].nes_state ~= nil end, 20)
check(ok, 'copilot-lsp shows a suggestion (vim.b.nes_state)')
if not ok then return finish() end
local st = vim.b[buf].nes_state
check(st.range.start.line == 3, 'its range starts at line 3', vim.inspect(st.range))
check(st.text:find('if k == 0', 1, true) ~= nil, 'its text is the rename of the uses', st.text)
local ns = vim.api.nvim_create_namespace('copilotlsp.nes')
local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
check(#marks > 0, 'copilot-lsp drew it (' .. #marks .. ' extmarks)')
require('copilot-lsp.nes').apply_pending_nes(buf)
local want = 'package main\n\nfunc scale(v int, k int) int {\n\tif k == 0 {\n\t\treturn v\n\t}\n\treturn v * k\n}'
ok = vim.wait(5000, function() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') == want end, 20)
check(ok, 'apply_pending_nes applied it', table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
vim.wait(300)
local res = client:request_sync('workspace/executeCommand', { command = 'kimi.stats' }, 5000, buf)
local ne = res and res.result and res.result.nextEdit or {}
check(ne.requested == 1, 'one provider request', vim.inspect(ne))
check(ne.displayed == 1, 'didShowInlineEdit counted displayed', vim.inspect(ne.displayed))
check(ne.accepted == 1, 'its didChange counted accepted', vim.inspect(ne.accepted))
finish()
