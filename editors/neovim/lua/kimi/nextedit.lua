-- kimi.nextedit: next-edit suggestions in Neovim.
--
-- After you change one place and pause, kimi-lsp proposes the change that
-- comes next elsewhere in the file (the uses of a renamed parameter, a new
-- field in the constructor). The server sends it as a Hint diagnostic
-- (source "kimi", code "next-edit") whose data holds the new text; this
-- module shows it at its place — the new lines as virtual lines below the
-- range, a hint at the end of its first line — and maps one key (default
-- <Tab> in normal mode, only while a suggestion exists in the buffer):
-- the first press jumps to the suggestion, the second applies it (the
-- server sends it as one workspace/applyEdit: `u` undoes it in one step).
-- :KimiNextEditDismiss (or the `dismiss` key, unset by default) drops it.
--
--   require("kimi").setup{ next_edit = { key = "<Tab>", dismiss = "<leader>kd" } }
--   require("kimi").setup{ next_edit = { enabled = false } }   -- no display, no keys
--
-- Without the plugin the diagnostic and its code action ("Kimi: Apply
-- next edit") still work through vim.diagnostic and vim.lsp.buf.code_action().
local util = require('kimi.util')

local M = {}

local config = { enabled = true, key = '<Tab>', dismiss = nil, hl_new = 'DiffAdd', hl_hint = 'Comment' }
local name = 'kimi'
local ns = vim.api.nvim_create_namespace('kimi_next_edit')

--- by_buf maps a buffer to its suggestion {id, range, new_text, message, client_id}.
M.by_buf = {}

function M.setup(opts, client_name)
  config = vim.tbl_extend('force', config, opts or {})
  name = client_name or name
end

local function render(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local s = M.by_buf[bufnr]
  if not s or not config.enabled then
    return
  end
  local r = s.range
  local count = vim.api.nvim_buf_line_count(bufnr)
  local first = math.min(r.start.line, count - 1)
  local last = r['end'].line
  if r['end'].character == 0 and last > r.start.line then
    last = last - 1
  end
  last = math.min(last, count - 1)
  local lines = {}
  for _, l in ipairs(vim.split((s.new_text:gsub('\n$', '')), '\n', { plain = true })) do
    table.insert(lines, { { '  ' .. l:gsub('\t', string.rep(' ', vim.bo[bufnr].tabstop)), config.hl_new } })
  end
  local key = config.key and (' (' .. config.key .. ')') or ''
  vim.api.nvim_buf_set_extmark(bufnr, ns, first, 0, {
    virt_text = { { '  ' .. s.message .. key, config.hl_hint } },
    virt_text_pos = 'eol',
  })
  if #lines > 0 then
    vim.api.nvim_buf_set_extmark(bufnr, ns, last, 0, { virt_lines = lines })
  end
end

local function take(bufnr, diagnostics, client_id)
  local found
  for _, d in ipairs(diagnostics or {}) do
    if d.source == 'kimi' and d.code == 'next-edit' and d.data then
      found = {
        id = d.data.id,
        range = d.data.range or d.range,
        new_text = d.data.newText or '',
        message = d.message,
        client_id = client_id,
      }
    end
  end
  M.by_buf[bufnr] = found
  render(bufnr)
end

--- wrap returns a handler that shows the message to see first, then
--- calls default (if any).
local function wrap(default, see)
  return function(err, result, ctx, cfg)
    see(err, result, ctx)
    if default then
      return default(err, result, ctx, cfg)
    end
  end
end

--- on_diagnostics wraps textDocument/publishDiagnostics: it keeps the
--- buffer's next-edit suggestion and shows it, then calls default.
function M.on_diagnostics(default)
  return wrap(default, function(_, result, ctx)
    if result and result.uri then
      take(vim.uri_to_bufnr(result.uri), result.diagnostics, ctx and ctx.client_id)
    end
  end)
end

--- on_pulled wraps the textDocument/diagnostic answer handler: Neovim
--- 0.10+ says it pulls diagnostics, and kimi-lsp then answers them there
--- (after a workspace/diagnostic/refresh) instead of pushing them.
function M.on_pulled(default)
  return wrap(default, function(err, result, ctx)
    local uri = ctx and ctx.params and ctx.params.textDocument and ctx.params.textDocument.uri
    if not err and uri and type(result) == 'table' and result.kind == 'full' then
      take(vim.uri_to_bufnr(uri), result.items, ctx.client_id)
    end
  end)
end

--- current returns the buffer's suggestion, if any.
function M.current(bufnr)
  return M.by_buf[bufnr or vim.api.nvim_get_current_buf()]
end

local function execute(bufnr, s, command)
  local client = s.client_id and vim.lsp.get_client_by_id(s.client_id) or util.clients(name, bufnr)[1]
  if not client then
    return
  end
  local arg = { uri = vim.uri_from_bufnr(bufnr), id = s.id }
  util.request(client, 'workspace/executeCommand', { command = command, arguments = { arg } }, function() end, bufnr)
end

--- jump_or_apply is the key: the first press puts the cursor on the
--- suggestion, a press there applies it. It returns false when the buffer
--- has no suggestion (the key then does what it does without the plugin).
function M.jump_or_apply(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local s = M.by_buf[bufnr]
  if not s then
    return false
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  if row ~= s.range.start.line then
    local line = vim.api.nvim_buf_get_lines(bufnr, s.range.start.line, s.range.start.line + 1, false)[1] or ''
    local col = (line:find('%S') or 1) - 1
    vim.api.nvim_win_set_cursor(0, { s.range.start.line + 1, col })
    return true
  end
  M.by_buf[bufnr] = nil
  render(bufnr)
  execute(bufnr, s, 'kimi.nextEdit.apply')
  return true
end

--- dismiss drops the buffer's suggestion.
function M.dismiss(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local s = M.by_buf[bufnr]
  if not s then
    return false
  end
  M.by_buf[bufnr] = nil
  render(bufnr)
  execute(bufnr, s, 'kimi.nextEdit.dismiss')
  return true
end

local function feed(key)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
end

--- on_attach maps the keys in bufnr.
function M.on_attach(_, bufnr)
  if not config.enabled then
    return
  end
  if config.key then
    vim.keymap.set('n', config.key, function()
      if not M.jump_or_apply(bufnr) then
        feed(config.key)
      end
    end, { buffer = bufnr, desc = 'Kimi: jump to / apply the next edit' })
  end
  if config.dismiss then
    vim.keymap.set('n', config.dismiss, function()
      if not M.dismiss(bufnr) then
        feed(config.dismiss)
      end
    end, { buffer = bufnr, desc = 'Kimi: dismiss the next edit' })
  end
end

return M
