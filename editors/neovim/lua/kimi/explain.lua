-- kimi.explain: shows explanations in a scratch markdown split, whether the
-- server opens its markdown file with window/showDocument or, for clients
-- without showDocument (Neovim 0.7 unless the plugin advertises its own
-- handler), sends the whole text with window/showMessage.
local util = require('kimi.util')
local notice = require('kimi.notice')

local M = {}

local opts = { split = 'botright vsplit', focus = false, min_message_length = 160 }
local seq = 0
--- win is the window explanations are shown in, reused while it exists.
M.win = nil
--- last is the most recent explanation: {bufnr, lines, source}.
M.last = nil

--- configure sets the split command, whether the split takes focus, and from
--- what length an Info window/showMessage counts as an explanation.
function M.configure(o)
  opts = vim.tbl_extend('force', opts, o or {})
end

local function split_lines(text)
  local lines = vim.split(text:gsub('\r\n', '\n'), '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- strip_header drops a leading HTML comment line (and the blank line
--- after it), which older kimi-lsp versions wrote before the explanation:
--- it showed as the buffer's first line.
function M.strip_header(lines)
  if lines[1] and lines[1]:match('^%s*<!%-%-.*%-%->%s*$') then
    table.remove(lines, 1)
    if lines[1] == '' then
      table.remove(lines, 1)
    end
  end
  return lines
end

--- open shows lines in a new scratch markdown buffer in the explanation
--- window and returns the buffer. focus: move the cursor there.
function M.open(lines, source, focus)
  seq = seq + 1
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  -- Named by the file's title ("main.go L16-30 — explanation") when there
  -- is a file; seq keeps the names unique.
  local title = source and vim.fn.fnamemodify(source, ':t:r') or 'explanation'
  pcall(vim.api.nvim_buf_set_name, buf, string.format('kimi://%d/%s', seq, title))
  vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'markdown')
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  vim.api.nvim_buf_set_var(buf, 'kimi_explanation', source or '')
  local cur = vim.api.nvim_get_current_win()
  if M.win and vim.api.nvim_win_is_valid(M.win) then
    vim.api.nvim_win_set_buf(M.win, buf)
  else
    vim.cmd(opts.split)
    M.win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(M.win, buf)
    vim.api.nvim_win_set_option(M.win, 'wrap', true)
    vim.api.nvim_win_set_option(M.win, 'linebreak', true)
  end
  if focus then
    vim.api.nvim_set_current_win(M.win)
  elseif vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
  M.last = { bufnr = buf, lines = lines, source = source }
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'KimiExplanation', modeline = false })
  return buf
end

--- show_document handles window/showDocument: a markdown file (the server's
--- explanation in its cache directory) opens as a scratch explanation; any
--- other file opens in a split, taking focus only when asked.
function M.show_document(_, params, ctx)
  local uri = params and params.uri
  if not uri or params.external or not uri:match('^file:') then
    return { success = false }
  end
  local path = vim.uri_to_fname(uri)
  if vim.fn.filereadable(path) ~= 1 then
    util.tell('cannot read ' .. path, vim.log.levels.ERROR)
    return { success = false }
  end
  if path:match('%.md$') or path:match('%.markdown$') then
    M.open(M.strip_header(vim.fn.readfile(path)), path, params.takeFocus or opts.focus)
    return { success = true }
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd('split ' .. vim.fn.fnameescape(path))
  if params.selection and params.selection.start then
    local row = params.selection.start.line + 1
    pcall(vim.api.nvim_win_set_cursor, 0, { row, 0 })
  end
  if not params.takeFocus and vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
  return { success = true }
end

--- is_explanation tells whether a window/showMessage carries a whole
--- explanation rather than a one-line notice.
function M.is_explanation(params)
  local t = params.type or 4
  if t <= 2 then
    return false
  end
  local msg = params.message or ''
  return msg:find('\n') ~= nil or #msg >= opts.min_message_length
end

-- above opens buf in a window at the top of the editor (at most a third of
-- its height), or shows it in the one it is in, and leaves the cursor where
-- it was: the question about the edit is asked on the command line below.
local function above(buf, height)
  local prev = vim.api.nvim_get_current_win()
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('topleft split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  vim.api.nvim_win_set_height(win, math.max(3, math.min(height, math.floor(vim.o.lines / 3))))
  if vim.api.nvim_win_is_valid(prev) then
    vim.api.nvim_set_current_win(prev)
  end
end

local change_buf = nil

--- show_verification shows what kimi-lsp sends while it asks about an edit
--- that brings new errors: "Kimi: the errors the edit brings (gopls):" and
--- its path:line: message lines go to the quickfix list, opened at the
--- top; "Kimi: the proposed change:" and its diff to the buffer
--- kimi://proposed-change.diff above the code. It reports whether msg was
--- one of them.
function M.show_verification(msg)
  if msg:match('^Kimi: the errors the edit brings') then
    local lines = vim.split(msg, '\n', { plain = true })
    local title = table.remove(lines, 1)
    vim.fn.setqflist({}, ' ', { title = title, lines = lines, efm = '%f:%l: %m' })
    local prev = vim.api.nvim_get_current_win()
    vim.cmd('topleft copen ' .. math.max(2, math.min(#lines, 10)))
    if vim.api.nvim_win_is_valid(prev) then
      vim.api.nvim_set_current_win(prev)
    end
    return true
  end
  if msg:match('^Kimi: the proposed change:') then
    local lines = vim.split(msg, '\n', { plain = true })
    table.remove(lines, 1)
    if not (change_buf and vim.api.nvim_buf_is_valid(change_buf)) then
      change_buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_option(change_buf, 'bufhidden', 'hide')
      pcall(vim.api.nvim_buf_set_name, change_buf, 'kimi://proposed-change.diff')
    end
    vim.api.nvim_buf_set_option(change_buf, 'modifiable', true)
    vim.api.nvim_buf_set_lines(change_buf, 0, -1, false, lines)
    vim.api.nvim_buf_set_option(change_buf, 'modifiable', false)
    vim.api.nvim_buf_set_option(change_buf, 'filetype', 'diff')
    above(change_buf, #lines)
    return true
  end
  return false
end

--- show_message handles window/showMessage: explanations go to the scratch
--- split, errors and notices to vim.notify.
function M.show_message(_, params, ctx)
  if not params then
    return vim.NIL
  end
  if M.show_verification(params.message or '') then
    return vim.NIL
  end
  if M.is_explanation(params) then
    M.open(split_lines(params.message), nil, opts.focus)
    return vim.NIL
  end
  local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  if notice.is_pause(params.message) then
    -- Said while the user types: drawn where it stays visible too.
    notice.show(params.message)
  end
  util.tell(params.message or '', levels[params.type or 3] or vim.log.levels.INFO)
  return vim.NIL
end

return M
