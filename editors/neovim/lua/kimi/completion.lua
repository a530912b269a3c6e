-- kimi.completion: Kimi's inline completion (ghost text) in Neovim.
--
-- Neovim 0.12+ has LSP inline completion built in (vim.lsp.inline_completion):
-- the plugin turns it on for the buffers kimi-lsp attaches to and maps the
-- keys to it. On 0.7-0.11 (or with builtin = false) the plugin does the
-- same itself: it asks textDocument/inlineCompletion as you type (the
-- server debounces and answers what you type of a suggestion from it),
-- draws the suggestion as extmark virtual text, keeps it while what you type
-- matches it and clears it as soon as you type something else.
--
--   require("kimi").setup{ completion = { keys = { accept = "<Tab>" } } }
--   :KimiCompletion on | off | toggle
local util = require('kimi.util')

local M = {}

local defaults = {
  -- Ask for suggestions as you type.
  enabled = true,
  -- On 0.12+, use Neovim's vim.lsp.inline_completion (false: the plugin's
  -- own ghost text everywhere).
  builtin = true,
  -- Milliseconds the plugin waits after a keystroke before asking (the
  -- server waits for a pause too: completion.debounceMs).
  debounce_ms = 0,
  -- Insert-mode keys; false leaves a key unmapped. When no suggestion is
  -- shown the key does what it does without the plugin.
  keys = {
    accept = '<Tab>',
    accept_word = '<C-Right>',
    dismiss = '<C-]>',
  },
  -- Highlight group of the ghost text (through KimiGhostText: see
  -- M.highlight).
  hl_group = 'Comment',
}

M.config = vim.deepcopy(defaults)
--- enabled is the :KimiCompletion switch.
M.enabled = true
--- last_status is the latest $/kimi/completionStatus from the server.
M.last_status = nil

local ns = vim.api.nvim_create_namespace('kimi_completion')
M.namespace = ns
local client_name = 'kimi'
--- state per buffer: req {client, id}, item {row, col, text}, timer.
local state = {}
M._state = state

local function builtin()
  return M.config.builtin and vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.enable ~= nil
end
M.builtin = builtin

--- capabilities adds what the server needs to offer inline completion.
function M.capabilities(caps)
  caps.textDocument = caps.textDocument or {}
  caps.textDocument.inlineCompletion = caps.textDocument.inlineCompletion or { dynamicRegistration = false }
  caps.experimental = caps.experimental or {}
  caps.experimental.kimiCompletionStatus = true
  return caps
end

--- on_status handles $/kimi/completionStatus.
function M.on_status(_, result)
  if type(result) == 'table' then
    M.last_status = result
  end
end

--- statusline returns "" while completion works, else a short word.
function M.statusline()
  if not M.enabled then
    return 'Kimi: completion off'
  end
  local s = M.last_status
  if s and s.state == 'noKey' then
    return 'Kimi: no API key'
  elseif s and s.state == 'error' then
    return 'Kimi: ' .. (s.message or 'completion failed')
  end
  return ''
end

local function client_for(bufnr)
  for _, c in ipairs(util.clients(client_name, bufnr)) do
    local caps = c.server_capabilities or {}
    if caps.inlineCompletionProvider then
      return c
    end
  end
end

local function get(bufnr)
  local st = state[bufnr]
  if not st then
    st = {}
    state[bufnr] = st
  end
  return st
end

--- cancel sends $/cancelRequest for r (a {client, id} of ours).
local function cancel_req(r)
  if r and r.id then
    if util.has('0.11') then
      r.client:cancel_request(r.id)
    else
      r.client.cancel_request(r.id)
    end
  end
end

--- cancel cancels the pending request of st.
local function cancel(st)
  local r = st.req
  st.req = nil
  cancel_req(r)
end

local function hide(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- clear hides the suggestion of bufnr and forgets it.
local function clear(bufnr)
  get(bufnr).item = nil
  hide(bufnr)
end

--- typed returns what was typed since the suggestion's start, or nil when
--- the cursor is before it or elsewhere.
local function typed(bufnr, item)
  if vim.api.nvim_get_current_buf() ~= bufnr then
    return nil
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local row, col = cur[1] - 1, cur[2]
  if row < item.row or (row == item.row and col < item.col) or row - item.row > 50 then
    return nil
  end
  local ok, parts = pcall(vim.api.nvim_buf_get_text, bufnr, item.row, item.col, row, col, {})
  if not ok then
    return nil
  end
  return table.concat(parts, '\n')
end

--- rest returns the part of the suggestion not typed yet, or nil when the
--- typing went elsewhere.
local function rest(bufnr)
  local item = get(bufnr).item
  if not item then
    return nil
  end
  local t = typed(bufnr, item)
  if not t or #t >= #item.text or item.text:sub(1, #t) ~= t then
    return nil
  end
  return item.text:sub(#t + 1)
end

--- render draws the rest of the suggestion at the cursor, or clears it when
--- the typing no longer follows it. Returns whether something is shown.
local function render(bufnr)
  hide(bufnr)
  local text = rest(bufnr)
  if not text then
    get(bufnr).item = nil
    return false
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local row, col = cur[1] - 1, cur[2]
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  local hl = 'KimiGhostText'
  local lines = vim.split(text, '\n', { plain = true })
  local opts = { virt_text = { { lines[1], hl } }, hl_mode = 'combine' }
  if util.has('0.10') then
    opts.virt_text_pos = 'inline'
  elseif col >= #line then
    opts.virt_text_pos = 'overlay'
  else
    opts.virt_text_pos = 'eol'
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      table.insert(opts.virt_lines, { { lines[i], hl } })
    end
  end
  vim.api.nvim_buf_set_extmark(bufnr, ns, row, math.min(col, #line), opts)
  return true
end

--- builtin_visible reports whether Neovim's own inline completion shows
--- something in bufnr (0.12+).
local function builtin_visible(bufnr)
  local id = vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  return id ~= nil and #vim.api.nvim_buf_get_extmarks(bufnr, id, 0, -1, { limit = 1 }) > 0
end

--- visible reports whether a suggestion is shown in the current buffer.
function M.visible()
  local bufnr = vim.api.nvim_get_current_buf()
  if builtin() then
    return builtin_visible(bufnr)
  end
  return rest(bufnr) ~= nil
end

--- lsp_col converts an LSP character offset on row to a byte column.
local function lsp_col(bufnr, row, character, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  return util.byte_col(line, character, encoding)
end

local function handle(bufnr, id, err, result)
  local st = get(bufnr)
  if not st.req or st.req.id ~= id then
    return -- a newer request was sent
  end
  st.req = nil
  if err or not result or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  if not vim.startswith(vim.api.nvim_get_mode().mode, 'i') then
    return
  end
  local it = (result.items or result)[1]
  if not it then
    clear(bufnr)
    return
  end
  local client = client_for(bufnr)
  local encoding = client and client.offset_encoding or 'utf-16'
  local text = type(it.insertText) == 'table' and it.insertText.value or it.insertText
  local row, col
  if it.range then
    row = it.range.start.line
    col = lsp_col(bufnr, row, it.range.start.character, encoding)
  else
    local cur = vim.api.nvim_win_get_cursor(0)
    row, col = cur[1] - 1, cur[2]
  end
  st.item = { row = row, col = col, text = text or '' }
  render(bufnr)
end

--- request asks the server for a suggestion at the cursor. The previous
--- request is cancelled after the new one is sent, so that the server can
--- give the new one the stream the old one started when it still fits.
function M.request(bufnr, kind)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not M.enabled or builtin() or vim.api.nvim_get_current_buf() ~= bufnr then
    return
  end
  local client = client_for(bufnr)
  if not client then
    return
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = util.position(bufnr, cur[1] - 1, cur[2], client.offset_encoding or 'utf-16'),
    context = { triggerKind = kind or 2 },
  }
  local st = get(bufnr)
  local prev = st.req
  local req = { client = client }
  st.req = req
  local ok, id = util.request(client, 'textDocument/inlineCompletion', params, function(err, result)
    handle(bufnr, req.id, err, result)
  end, bufnr)
  if ok then
    req.id = id
  end
  cancel_req(prev)
end

local function schedule(bufnr)
  local st = get(bufnr)
  if st.timer then
    st.timer:stop()
    st.timer:close()
    st.timer = nil
  end
  if M.config.debounce_ms <= 0 then
    -- One request for the events of one key (InsertEnter, TextChangedI,
    -- CursorMovedI come together).
    if not st.scheduled then
      st.scheduled = true
      vim.schedule(function()
        st.scheduled = false
        M.request(bufnr)
      end)
    end
    return
  end
  st.timer = vim.loop.new_timer()
  st.timer:start(M.config.debounce_ms, 0, vim.schedule_wrap(function()
    if st.timer then
      st.timer:close()
      st.timer = nil
    end
    M.request(bufnr)
  end))
end

local function on_change(ev)
  local bufnr = ev.buf
  if not M.enabled or builtin() or not client_for(bufnr) then
    return
  end
  render(bufnr) -- keeps the rest while the typing follows the suggestion
  schedule(bufnr)
end

local function on_leave(ev)
  local st = get(ev.buf)
  cancel(st)
  clear(ev.buf)
end

--- insert puts text at the cursor and moves the cursor after it.
local function insert(bufnr, text)
  local cur = vim.api.nvim_win_get_cursor(0)
  local row, col = cur[1] - 1, cur[2]
  local lines = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
  if #lines == 1 then
    vim.api.nvim_win_set_cursor(0, { row + 1, col + #text })
  else
    vim.api.nvim_win_set_cursor(0, { row + #lines, #lines[#lines] })
  end
end

--- accept inserts the rest of the suggestion. Returns false when none is
--- shown.
function M.accept()
  local bufnr = vim.api.nvim_get_current_buf()
  if builtin() then
    -- Nothing shown (hidden after diverging typing): nothing to accept.
    return builtin_visible(bufnr) and vim.lsp.inline_completion.get({ bufnr = bufnr })
  end
  local text = rest(bufnr)
  if not text then
    return false
  end
  clear(bufnr)
  insert(bufnr, text)
  return true
end

--- next_word returns the start of text up to the end of its first word (or
--- first run of punctuation, or its first line break).
local function next_word(text)
  if text:sub(1, 1) == '\n' then
    return text:match('^\n[ \t]*') or '\n'
  end
  return text:match('^%s*[%w_]+') or text:match('^%s*[^%w_%s]+') or text:sub(1, 1)
end
M._next_word = next_word

--- accept_word inserts the suggestion's next word; the rest stays shown
--- (on 0.12+ the server shows it again at once, from the same suggestion).
function M.accept_word()
  local bufnr = vim.api.nvim_get_current_buf()
  if builtin() then
    return builtin_visible(bufnr) and vim.lsp.inline_completion.get({
      bufnr = bufnr,
      on_accept = function(item)
        local text = type(item.insert_text) == 'table' and item.insert_text.value or item.insert_text
        local start = item.range and item.range.start
        local t = start and typed(bufnr, { row = start.row, col = start.col }) or ''
        if t and text:sub(1, #t) == t and #t < #text then
          insert(bufnr, next_word(text:sub(#t + 1)))
        end
      end,
    })
  end
  local text = rest(bufnr)
  if not text then
    return false
  end
  insert(bufnr, next_word(text))
  render(bufnr)
  return true
end

--- dismiss hides the suggestion and cancels the pending request.
function M.dismiss()
  local bufnr = vim.api.nvim_get_current_buf()
  if builtin() then
    -- 0.12 has no dismiss of its own: turning the buffer off and on again
    -- clears what it shows.
    if builtin_visible(bufnr) then
      vim.lsp.inline_completion.enable(false, { bufnr = bufnr })
      vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
      return true
    end
    return false
  end
  local shown = M.visible()
  cancel(get(bufnr))
  clear(bufnr)
  return shown
end

--- set turns completion on or off (all buffers).
function M.set(on)
  M.enabled = on
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and client_for(b) then
      if builtin() then
        vim.lsp.inline_completion.enable(on, { bufnr = b })
      elseif not on then
        cancel(get(b))
        clear(b)
      end
    end
  end
end

--- answered holds, per buffer, the item of the latest inline completion
--- answer on 0.12+ ({row, character, encoding, text}), read from the
--- replies to the requests Neovim sends (watch).
local answered = {}

--- watch records the answers to the inline completion requests Neovim
--- 0.12 sends through client (it keeps none of its own that a plugin
--- may read).
local function watch(client)
  if client._kimi_watched then
    return
  end
  client._kimi_watched = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr, ...)
    if method == 'textDocument/inlineCompletion' and type(handler) == 'function' then
      local h = handler
      handler = function(err, result, ctx, ...)
        if not err and result and ctx and ctx.bufnr then
          local it = (result.items or result)[1]
          local r = it and type(it.insertText) == 'string' and it.range
          answered[ctx.bufnr] = r
              and { row = r.start.line, character = r.start.character, encoding = client.offset_encoding, text = it.insertText }
            or nil
        end
        return h(err, result, ctx, ...)
      end
    end
    return request(self, method, params, handler, bufnr, ...)
  end
end

--- hide_diverged hides Neovim 0.12's ghost text when what was typed since
--- its item's start is not the start of the item: Neovim keeps drawing
--- the old item, less the typed characters, until its next request is
--- answered (a debounce and a model call later), where 0.7 and VS Code
--- clear it at the key.
local function hide_diverged(bufnr)
  local it = answered[bufnr]
  local id = vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  if not it or not id or not vim.api.nvim_buf_is_valid(bufnr) or not builtin_visible(bufnr) then
    return
  end
  local t = typed(bufnr, { row = it.row, col = lsp_col(bufnr, it.row, it.character, it.encoding) })
  if not t or it.text:sub(1, #t) ~= t then
    vim.api.nvim_buf_clear_namespace(bufnr, id, 0, -1)
  end
end
M._hide_diverged = hide_diverged

local builtin_group = vim.api.nvim_create_augroup('kimi_completion_builtin', { clear = true })

--- on_attach turns the built-in inline completion on for bufnr (0.12+).
function M.on_attach(client, bufnr)
  if builtin() and M.enabled then
    vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
    if client then
      watch(client)
    end
    vim.api.nvim_clear_autocmds({ group = builtin_group, buffer = bufnr })
    vim.api.nvim_create_autocmd({ 'CursorMovedI', 'TextChangedI' }, {
      group = builtin_group,
      buffer = bufnr,
      -- Scheduled: after Neovim's own handler of the event has drawn.
      callback = function()
        vim.schedule(function()
          hide_diverged(bufnr)
        end)
      end,
    })
  end
end

local function map(lhs, fn, desc)
  if not lhs then
    return
  end
  vim.keymap.set('i', lhs, function()
    if fn() ~= nil then
      return ''
    end
    return lhs
  end, { expr = true, replace_keycodes = true, desc = desc })
end

--- highlight makes the ghost text stand out without 'termguicolors'. In
--- Neovim 0.10+'s default colorscheme Comment, and NonText, which 0.12's
--- ComplHint links to, have a GUI colour only: in a terminal without
--- termguicolors the suggestion looked like typed text. KimiGhostText (the
--- plugin's ghost text) links to hl_group when that has a terminal colour
--- or termguicolors is on, else takes hl_group's GUI colour and dark grey
--- (8) in the terminal; ComplHint is linked to KimiGhostText only when it
--- has no terminal colour of its own. Run again on ColorScheme and when
--- termguicolors changes.
function M.highlight()
  local want = M.config.hl_group or 'Comment'
  local cterm, gui = util.hl_fg(want)
  if vim.o.termguicolors or cterm then
    vim.api.nvim_set_hl(0, 'KimiGhostText', { link = want })
  else
    vim.api.nvim_set_hl(0, 'KimiGhostText', { fg = gui, ctermfg = 8 })
  end
  if builtin() and not vim.o.termguicolors then
    local hint = util.hl_fg('ComplHint')
    if not hint then
      vim.api.nvim_set_hl(0, 'ComplHint', { link = 'KimiGhostText' })
    end
  end
end

--- setup configures completion; name is the kimi client's name.
function M.setup(opts, name)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  M.enabled = M.config.enabled ~= false
  client_name = name or client_name

  -- A map acts when a suggestion is shown, after the key (the buffer cannot
  -- change inside a map's expression); otherwise the key does what it does
  -- without the plugin.
  local function action(fn)
    return function()
      if not M.visible() then
        return nil
      end
      vim.schedule(fn)
      return true
    end
  end
  local keys = M.config.keys or {}
  map(keys.accept, action(M.accept), 'Kimi: accept the suggestion')
  map(keys.accept_word, action(M.accept_word), 'Kimi: accept the next word of the suggestion')
  map(keys.dismiss, action(M.dismiss), 'Kimi: dismiss the suggestion')

  local group = vim.api.nvim_create_augroup('kimi_completion', { clear = true })
  M.highlight()
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = M.highlight })
  vim.api.nvim_create_autocmd('OptionSet', { group = group, pattern = 'termguicolors', callback = M.highlight })
  vim.api.nvim_create_autocmd({ 'InsertEnter', 'TextChangedI', 'TextChangedP', 'CursorMovedI' }, {
    group = group,
    callback = on_change,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, { group = group, callback = on_leave })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    callback = function(ev)
      state[ev.buf] = nil
    end,
  })

  vim.api.nvim_create_user_command('KimiCompletion', function(o)
    local arg = vim.trim(o.args or '')
    if arg == 'on' then
      M.set(true)
    elseif arg == 'off' then
      M.set(false)
    elseif arg == 'toggle' or arg == '' then
      M.set(not M.enabled)
    else
      vim.notify('Kimi: :KimiCompletion on | off | toggle', vim.log.levels.ERROR)
      return
    end
    vim.notify('Kimi: inline completion ' .. (M.enabled and 'on' or 'off'))
  end, {
    nargs = '?',
    desc = 'Turn Kimi inline completion on or off',
    complete = function()
      return { 'on', 'off', 'toggle' }
    end,
  })
end

return M
