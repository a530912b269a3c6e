-- kimi.confirm: the review buffer of an edit the server sends for
-- confirmation hunk by hunk (edits.confirm = "multiFile" or "always").
--
-- The plugin declares workspace.workspaceEdit.changeAnnotationSupport, so
-- such an edit arrives with one change annotation per hunk
-- (needsConfirmation). Instead of applying it whole, a scratch buffer lists
-- the hunks (file, line, what is removed and added), each marked [x]
-- accepted or [ ] rejected, all accepted at first:
--
--   a        accept the hunk under the cursor, go to the next
--   r        reject the hunk under the cursor, go to the next
--   <CR> <Space>  toggle the hunk under the cursor
--   A / R    accept / reject every hunk
--   j k      next / previous hunk
--   w  :w    apply the accepted hunks
--   q  <Esc> :q  <C-c>   cancel: apply nothing
--
-- The review is modal, like :s///c: the keys are read until you apply or
-- cancel. That is because Neovim (before 0.10) must answer the server's
-- workspace/applyEdit from its handler; so the answer goes back once you
-- have decided, and no buffer can change under the review. Each accepted
-- hunk lands whole (one edit of its buffer), and the server's end message
-- counts them ("1 of 2 hunks applied"). Edits without annotations (creates,
-- renames, deletes of the same edit) are applied as they are.
local M = {}

--- last is the last review: { lines = the buffer's lines, hunks = {...},
--- choice = 'apply' | 'cancel' } (for tests and :lua inspection).
M.last = nil

--- getchar reads one key of the review (replaceable in a test).
M.getchar = vim.fn.getchar

-- The split the review buffer opens in.
local split = 'botright split'

--- needs_confirmation reports whether an edit carries an annotated text
--- edit whose annotation needs confirmation.
function M.needs_confirmation(edit)
  local ann = type(edit) == 'table' and edit.changeAnnotations
  if type(ann) ~= 'table' or type(edit.documentChanges) ~= 'table' then
    return false
  end
  for _, c in ipairs(edit.documentChanges) do
    for _, e in ipairs(type(c.edits) == 'table' and c.edits or {}) do
      local a = e.annotationId and ann[e.annotationId]
      if type(a) == 'table' and a.needsConfirmation then
        return true
      end
    end
  end
  return false
end

-- split_lines splits text at newlines.
local function split_lines(s)
  return vim.split(s, '\n', { plain = true })
end

-- hunk_lines returns the lines a hunk removes and the lines it puts in
-- their place, whole lines of bufnr around the edit's range.
local function hunk_lines(bufnr, e, encoding)
  local r = e.range
  local first, last = r.start.line, r['end'].line
  local lines = vim.api.nvim_buf_get_lines(bufnr, first, last + 1, false)
  local head = lines[1] or ''
  local tail = lines[#lines] or ''
  local util = require('kimi.util')
  local s = util.byte_col(head, r.start.character, encoding)
  local t = util.byte_col(tail, r['end'].character, encoding)
  local new = split_lines(head:sub(1, s) .. (e.newText or '') .. tail:sub(t + 1))
  local old = lines
  -- An edit ending at column 0 of a line leaves that line as it is.
  if r['end'].character == 0 and last > first then
    old = vim.list_slice(lines, 1, #lines - 1)
    if new[#new] == tail then
      new[#new] = nil
    end
  end
  if #new > 0 and new[#new] == '' and (e.newText or ''):sub(-1) == '\n' and r['end'].character == 0 then
    new[#new] = nil
  end
  return old, new
end

-- hunks lists the edit's text edits that need confirmation, in order.
local function hunks(edit, encoding)
  local out = {}
  local ann = edit.changeAnnotations
  for ci, c in ipairs(edit.documentChanges) do
    for ei, e in ipairs(type(c.edits) == 'table' and c.edits or {}) do
      local a = e.annotationId and ann[e.annotationId]
      if type(a) == 'table' and a.needsConfirmation and c.textDocument then
        local fname = vim.uri_to_fname(c.textDocument.uri)
        local bufnr = vim.fn.bufadd(fname)
        vim.fn.bufload(bufnr)
        local old, new = hunk_lines(bufnr, e, encoding)
        table.insert(out, {
          change = ci,
          edit = ei,
          label = a.label or vim.fn.fnamemodify(fname, ':~:.'),
          description = a.description,
          old = old,
          new = new,
          accepted = true,
        })
      end
    end
  end
  return out
end

-- render writes the review into buf and returns the first line (1-based)
-- of each hunk.
local function render(buf, title, list)
  local lines = {
    title,
    'a accept  r reject  <CR> toggle  A/R all  j/k move  w apply the accepted  q cancel',
    '',
  }
  local at = {}
  for i, h in ipairs(list) do
    table.insert(at, #lines + 1)
    local head = string.format('[%s] %s', h.accepted and 'x' or ' ', h.label)
    if h.description and h.description ~= '' then
      head = head .. ' -- ' .. h.description
    end
    table.insert(lines, head)
    for _, l in ipairs(h.old) do
      table.insert(lines, '  -' .. l)
    end
    for _, l in ipairs(h.new) do
      table.insert(lines, '  +' .. l)
    end
    if i < #list then
      table.insert(lines, '')
    end
  end
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  return at, lines
end

-- key reads one key as a string; nil on <C-c>.
local function key()
  local ok, c = pcall(M.getchar)
  if not ok then
    return nil
  end
  return type(c) == 'number' and vim.fn.nr2char(c) or c
end

-- command reads an Ex command line after ':' up to <CR>; nil on <Esc>.
local function command()
  local s = ''
  while true do
    vim.api.nvim_echo({ { ':' .. s } }, false, {})
    vim.cmd('redraw')
    local k = key()
    if k == nil or k == '\27' then
      return nil
    elseif k == '\r' or k == '\n' then
      return vim.trim(s)
    elseif k == '\8' or k == vim.api.nvim_replace_termcodes('<BS>', true, false, true) then
      s = s:sub(1, -2)
    else
      s = s .. k
    end
  end
end

-- decide shows the review in a split and reads keys until the user
-- applies ('apply') or cancels ('cancel').
local function decide(title, list)
  local prev = vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  vim.api.nvim_buf_set_option(buf, 'filetype', 'kimireview')
  pcall(vim.api.nvim_buf_set_name, buf, 'kimi://review')
  local at, lines = render(buf, title, list)
  -- The progress float (bottom right) would cover the hunk list, and it
  -- has nothing to say while the user decides.
  local progress = require('kimi.progress')
  progress.hold(true)
  vim.cmd(split)
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.api.nvim_win_set_height(win, math.max(3, math.min(#lines, math.floor(vim.o.lines / 2))))
  local cur = 1
  local function move(i)
    cur = math.max(1, math.min(#list, i))
    vim.api.nvim_win_set_cursor(win, { at[cur], 0 })
  end
  move(1)
  -- read_keys returns 'apply' or 'cancel'.
  local function read_keys()
    local choice
    while not choice do
      at, lines = render(buf, title, list)
      M.last = { lines = lines, hunks = list, float = progress.window() }
      move(cur)
      vim.cmd('redraw')
      local k = key()
      if k == nil or k == 'q' or k == '\27' or k == '\3' then
        choice = 'cancel'
      elseif k == 'w' then
        choice = 'apply'
      elseif k == ':' then
        local c = command()
        if c == 'w' or c == 'write' or c == 'wq' or c == 'x' then
          choice = 'apply'
        elseif c == 'q' or c == 'q!' or c == 'quit' then
          choice = 'cancel'
        end
      elseif k == 'a' or k == 'r' then
        list[cur].accepted = k == 'a'
        move(cur + 1)
      elseif k == '\r' or k == ' ' then
        list[cur].accepted = not list[cur].accepted
      elseif k == 'A' or k == 'R' then
        for _, h in ipairs(list) do
          h.accepted = k == 'A'
        end
      elseif k == 'j' or k == vim.api.nvim_replace_termcodes('<Down>', true, false, true) then
        move(cur + 1)
      elseif k == 'k' or k == vim.api.nvim_replace_termcodes('<Up>', true, false, true) then
        move(cur - 1)
      end
    end
    return choice
  end
  local ok, choice = pcall(read_keys)
  local float = M.last and M.last.float
  if ok then
    local _, final = render(buf, title, list)
    M.last = { lines = final, hunks = list, choice = choice, float = float }
  end
  progress.hold(false)
  if vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  if vim.api.nvim_win_is_valid(prev) then
    vim.api.nvim_set_current_win(prev)
  end
  vim.api.nvim_echo({ { '' } }, false, {})
  if not ok then
    error(choice, 0) -- the window is closed; the server hears of the error
  end
  return choice
end

-- accelerators gives each action title an accelerator for confirm(): the
-- first letter of its first word, else of its other words from the last
-- ("Show the change" beside "Show the errors": c), else any free letter.
local function accelerators(titles)
  local used, out = {}, {}
  for _, t in ipairs(titles) do
    local starts = {}
    for pos in t:gmatch('()%w+') do
      table.insert(starts, pos)
    end
    local order = { starts[1] }
    for i = #starts, 2, -1 do
      table.insert(order, starts[i])
    end
    for i = 1, #t do
      table.insert(order, i)
    end
    local label = t
    for _, i in ipairs(order) do
      local c = t:sub(i, i):lower()
      if c:match('%w') and not used[c] then
        used[c] = true
        label = t:sub(1, i - 1) .. '&' .. t:sub(i)
        break
      end
    end
    table.insert(out, label)
  end
  return out
end

--- asked lists the questions ask_message was given: {message, choices}.
M.asked = {}

--- ask_message answers window/showMessageRequest of kimi-lsp: the question
--- on the command line, one key per choice (read as the review reads its
--- keys: getchar), so
--- that the windows above it (the errors, the proposed change) stay in
--- view while the user decides; "Kimi: " said once. No choice answers null.
function M.ask_message(_, params)
  if not params or type(params.actions) ~= 'table' or #params.actions == 0 then
    return vim.NIL
  end
  local msg = (params.message or ''):gsub('%s*\n%s*', ' ')
  if not msg:match('^Kimi') then
    msg = 'Kimi: ' .. msg
  end
  local titles = {}
  for _, a in ipairs(params.actions) do
    table.insert(titles, a.title)
  end
  local choices = accelerators(titles)
  table.insert(M.asked, { message = msg, choices = choices })
  local keys, shown = {}, {}
  for i, c in ipairs(choices) do
    local at = c:find('&', 1, true)
    if at then
      keys[c:sub(at + 1, at + 1):lower()] = i
      c = c:sub(1, at - 1) .. '[' .. c:sub(at + 1, at + 1) .. ']' .. c:sub(at + 2)
    end
    table.insert(shown, c)
  end
  vim.cmd('redraw')
  vim.api.nvim_echo({ { msg .. '\n', 'WarningMsg' }, { table.concat(shown, ', ') .. ': ', 'Question' } }, false, {})
  local n
  while not n do
    local k = key()
    if k == nil or k == 'q' or k == '\27' or k == '\3' then
      break
    end
    n = keys[k:lower()]
  end
  vim.api.nvim_echo({ { '' } }, false, {})
  M.asked[#M.asked].answer = n
  if not n then
    return vim.NIL
  end
  return params.actions[n]
end

--- review shows the hunks of params.edit for the user to pick. Returns the
--- edit to apply (the accepted hunks, and every change not needing
--- confirmation), or nil and the applyEdit answer to send when nothing is
--- to be applied.
function M.review(params, encoding)
  local edit = params.edit
  local list = hunks(edit, encoding or 'utf-16')
  local title = string.format('%s: %d %s to confirm', params.label or 'Kimi', #list, #list == 1 and 'hunk' or 'hunks')
  local choice = decide(title, list)
  if choice ~= 'apply' then
    return nil, { applied = false, failureReason = 'the review was cancelled: nothing applied' }
  end
  local rejected, n = {}, 0
  for _, h in ipairs(list) do
    if h.accepted then
      n = n + 1
    else
      rejected[h.change .. ':' .. h.edit] = true
    end
  end
  if n == 0 then
    return nil, { applied = false, failureReason = 'you rejected every hunk' }
  end
  local changes = {}
  for ci, c in ipairs(edit.documentChanges) do
    if type(c.edits) == 'table' then
      local keep = {}
      for ei, e in ipairs(c.edits) do
        if not rejected[ci .. ':' .. ei] then
          table.insert(keep, { range = e.range, newText = e.newText })
        end
      end
      if #keep > 0 then
        table.insert(changes, { textDocument = c.textDocument, edits = keep })
      end
    else
      table.insert(changes, c)
    end
  end
  return { documentChanges = changes }
end

return M
