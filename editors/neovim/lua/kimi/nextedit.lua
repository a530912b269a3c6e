-- kimi.nextedit: next-edit suggestions in Neovim.
--
-- After you change one place and pause, kimi-lsp proposes the change that
-- comes next elsewhere in the file (the uses of a renamed parameter, a new
-- field in the constructor). The server sends it as a Hint diagnostic
-- (source "kimi", code "next-edit") whose data holds the new text; this
-- module shows it at its place, once: the text it replaces marked (hl_old,
-- DiffDelete), and above its first line a virtual line with the message
-- and the key, then the new lines (hl_new, DiffAdd) — on lines of their
-- own, so that no other server's diagnostic on the same line (its virtual
-- text, sign or underline) can hide it. The diagnostic itself is kept in a
-- namespace of its own (vim.diagnostic.get() and ]d still find it, its
-- sign still shows) whose virtual text and underline are off: on 0.7, where
-- vim.diagnostic's virtual text is on by default, the message appeared
-- twice on the line, the plugin's and vim.diagnostic's. It maps one key
-- (default <Tab> in normal mode, only while a suggestion exists in the
-- buffer): the first press jumps to the suggestion, the second applies it
-- (the server sends it as one workspace/applyEdit: `u` undoes it in one
-- step). :KimiNextEditDismiss (or the `dismiss` key, unset by default)
-- drops it.
--
--   require("kimi").setup{ next_edit = { key = "<Tab>", dismiss = "<leader>kd" } }
--   require("kimi").setup{ next_edit = { enabled = false } }   -- no display, no keys
--
-- Without the plugin (or with enabled = false) the diagnostic and its code
-- action ("Kimi: Apply next edit") still work through vim.diagnostic and
-- vim.lsp.buf.code_action().
local util = require('kimi.util')

local M = {}

local config = { enabled = true, key = '<Tab>', dismiss = nil, hl_new = 'DiffAdd', hl_old = 'DiffDelete', hl_hint = 'Comment' }
local name = 'kimi'
local ns = vim.api.nvim_create_namespace('kimi_next_edit')
--- diag_ns holds the next-edit diagnostic (see the top of this file).
M.diag_ns = vim.api.nvim_create_namespace('kimi_next_edit_diagnostic')
-- The mark of the replaced text comes before vim.diagnostic's underline
-- (priority 150 + severity) and below the user's (200).
local priority = 190

--- by_buf maps a buffer to its suggestion {id, range, new_text, message, client_id}.
M.by_buf = {}

function M.setup(opts, client_name)
  config = vim.tbl_extend('force', config, opts or {})
  name = client_name or name
  -- The plugin draws the suggestion; vim.diagnostic keeps its sign, list
  -- and navigation (the rest of the user's config applies).
  vim.diagnostic.config({ virtual_text = false, underline = false, virtual_lines = false }, M.diag_ns)
end

--- byte_col is the byte column of an LSP position in bufnr.
local function byte_col(bufnr, pos, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, pos.line, pos.line + 1, false)[1]
  if not line then
    return 0
  end
  local ok, col = pcall(vim.lsp.util._get_line_byte_from_position, bufnr, pos, encoding or 'utf-16')
  return math.min(ok and col or pos.character, #line)
end

local function encoding_of(s)
  local client = s.client_id and vim.lsp.get_client_by_id(s.client_id)
  return client and client.offset_encoding or 'utf-16'
end

local function expand(bufnr, l)
  return (l:gsub('\t', string.rep(' ', vim.bo[bufnr].tabstop)))
end

--- mark_old marks the text the suggestion replaces: whole lines when its
--- range ends at the start of the line after its last, else the range.
local function mark_old(bufnr, s, first, last)
  local r, enc = s.range, encoding_of(s)
  local whole = r['end'].character == 0 and r['end'].line > r.start.line
  local start_col = whole and 0 or byte_col(bufnr, r.start, enc)
  local end_row, end_col
  if whole or r['end'].line > last then
    end_row = last
    end_col = #(vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or '')
  else
    end_row, end_col = r['end'].line, byte_col(bufnr, r['end'], enc)
  end
  if end_row == first and end_col <= start_col then
    return -- an insertion: nothing is replaced
  end
  vim.api.nvim_buf_set_extmark(bufnr, ns, first, start_col, {
    end_row = end_row,
    end_col = end_col,
    hl_group = config.hl_old,
    hl_eol = whole,
    priority = priority,
  })
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
  mark_old(bufnr, s, first, last)
  -- The message, indented as the first replaced line, then the new lines.
  local indent = (vim.api.nvim_buf_get_lines(bufnr, first, first + 1, false)[1] or ''):match('^%s*')
  local key = config.key and (' (' .. config.key .. ')') or ''
  local lines = { { { expand(bufnr, indent) .. s.message .. key, config.hl_hint } } }
  if s.new_text ~= '' then
    for _, l in ipairs(vim.split((s.new_text:gsub('\n$', '')), '\n', { plain = true })) do
      table.insert(lines, { { expand(bufnr, l), config.hl_new } })
    end
  end
  -- Virtual lines above the buffer's first line are drawn only once the
  -- window is scrolled up to them: there they go below the range.
  local above = first > 0
  vim.api.nvim_buf_set_extmark(bufnr, ns, above and first or last, 0, { virt_lines = lines, virt_lines_above = above })
end

--- to_vim is an LSP diagnostic as vim.diagnostic holds one.
local function to_vim(bufnr, d, encoding)
  local r = d.range
  return {
    lnum = r.start.line,
    col = byte_col(bufnr, r.start, encoding),
    end_lnum = r['end'].line,
    end_col = byte_col(bufnr, r['end'], encoding),
    severity = d.severity or vim.diagnostic.severity.HINT, -- LSP's values are vim.diagnostic's
    message = d.message,
    source = d.source,
    code = d.code,
    user_data = { lsp = d },
  }
end

local function is_next_edit(d)
  return d.source == 'kimi' and d.code == 'next-edit' and d.data ~= nil
end

--- take keeps bufnr's suggestion among the server's diagnostics and shows
--- it; it returns the diagnostics without it, for vim.diagnostic's own
--- namespace of the client (the suggestion goes to M.diag_ns).
local function take(bufnr, diagnostics, client_id)
  local found, rest, mine = nil, {}, {}
  for _, d in ipairs(diagnostics or {}) do
    if is_next_edit(d) then
      found = {
        id = d.data.id,
        range = d.data.range or d.range,
        new_text = d.data.newText or '',
        -- Its first line: the lines after it are the change as a diff,
        -- which this module draws itself.
        message = (d.message or ''):match('^[^\n]*'),
        client_id = client_id,
      }
      mine = { d }
    else
      table.insert(rest, d)
    end
  end
  M.by_buf[bufnr] = found
  if not config.enabled then
    return diagnostics
  end
  local enc = found and encoding_of(found) or 'utf-16'
  vim.diagnostic.set(M.diag_ns, bufnr, vim.tbl_map(function(d)
    return to_vim(bufnr, d, enc)
  end, mine))
  render(bufnr)
  return rest
end

--- wrap returns a handler that gives the result to see first, then calls
--- default (if any) with what see returns in its place.
local function wrap(default, see)
  return function(err, result, ctx, cfg)
    result = see(err, result, ctx)
    if default then
      return default(err, result, ctx, cfg)
    end
  end
end

--- on_diagnostics wraps textDocument/publishDiagnostics: it keeps the
--- buffer's next-edit suggestion and shows it, then calls default with the
--- other diagnostics.
function M.on_diagnostics(default)
  return wrap(default, function(_, result, ctx)
    if not (result and result.uri) then
      return result
    end
    local rest = take(vim.uri_to_bufnr(result.uri), result.diagnostics, ctx and ctx.client_id)
    return vim.tbl_extend('force', result, { diagnostics = rest })
  end)
end

--- on_pulled wraps the textDocument/diagnostic answer handler: Neovim
--- 0.10+ says it pulls diagnostics, and kimi-lsp then answers them there
--- (after a workspace/diagnostic/refresh) instead of pushing them.
function M.on_pulled(default)
  return wrap(default, function(err, result, ctx)
    local uri = ctx and ctx.params and ctx.params.textDocument and ctx.params.textDocument.uri
    if err or not uri or type(result) ~= 'table' or result.kind ~= 'full' then
      return result
    end
    local rest = take(vim.uri_to_bufnr(uri), result.items, ctx.client_id)
    return vim.tbl_extend('force', result, { items = rest })
  end)
end

--- forget drops the suggestions of a client that exited: their display
--- and their diagnostic (M.diag_ns is the plugin's, so nothing else would).
function M.forget(client_id)
  vim.schedule(function()
    for bufnr, s in pairs(M.by_buf) do
      if s.client_id == client_id then
        M.by_buf[bufnr] = nil
        render(bufnr)
        if vim.api.nvim_buf_is_valid(bufnr) then
          vim.diagnostic.reset(M.diag_ns, bufnr)
        end
      end
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
