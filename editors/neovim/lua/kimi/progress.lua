-- kimi.progress: follows the server's $/progress stream, shows it in a small
-- floating window (or only in the statusline), and keeps a short history
-- that :KimiProgress and the tests read.
local M = {}

--- active maps a progress token to {title, message, percentage, client_id}.
M.active = {}
--- order lists active tokens, oldest first.
M.order = {}
--- history keeps the last events: {token, kind, title, message}.
M.history = {}
M.max_history = 500
--- last_outcome is "Title: end message" of the latest finished job, cut to
--- the float's width; last_outcome_full is the whole of it.
M.last_outcome = nil
M.last_outcome_full = nil
--- failures lists the failed jobs' full outcomes, oldest first (each was
--- shown once with vim.notify at ERROR level).
M.failures = {}

local opts = { mode = 'float', width = 60, lines = 4, linger_ms = 3000 }
local float = { buf = nil, win = nil, timer = nil }
local close_float_now, render_now -- defined below

--- configure sets the display: mode is 'float', 'statusline' or 'none'.
function M.configure(o)
  opts = vim.tbl_extend('force', opts, o or {})
end

-- tail_lines returns the last n non-empty lines of text, each cut to width
-- from the left so the newest words stay visible, but the text's first
-- line, when shown, from the right: it is the report's head (the note of a
-- repair round, a status), read from its start. The server may mark line
-- breaks with "⏎" in its one-line reports; those split lines too.
local function tail_lines(text, n, width)
  local lines = {}
  text = (text or ''):gsub('%s*⏎%s*', '\n')
  for l in text:gmatch('[^\n]+') do
    l = l:gsub('%s+$', '')
    if l ~= '' then
      table.insert(lines, l)
    end
  end
  local out = {}
  for i = math.max(1, #lines - n + 1), #lines do
    local l = lines[i]
    if vim.fn.strdisplaywidth(l) > width then
      local chars = vim.fn.strchars(l)
      if i == 1 and #lines > 1 then
        l = vim.fn.strcharpart(l, 0, width - 1) .. '…'
      else
        l = '…' .. vim.fn.strcharpart(l, chars - (width - 1), width - 1)
      end
    end
    table.insert(out, l)
  end
  return out
end

-- wrap_rows splits a one-line text into rows of at most width display
-- cells, at spaces where it can: an outcome is read whole.
local function wrap_rows(text, width)
  local rows, row = {}, ''
  for word in text:gmatch('%S+') do
    local cand = row == '' and word or (row .. ' ' .. word)
    if vim.fn.strdisplaywidth(cand) <= width then
      row = cand
    else
      if row ~= '' then
        table.insert(rows, row)
      end
      row = word
      while vim.fn.strdisplaywidth(row) > width do
        local cut = vim.fn.strcharpart(row, 0, width)
        table.insert(rows, cut)
        row = vim.fn.strcharpart(row, vim.fn.strchars(cut))
      end
    end
  end
  if row ~= '' or #rows == 0 then
    table.insert(rows, row)
  end
  return rows
end
M.wrap_rows = wrap_rows

-- held is set while a window the float would cover waits for the user
-- (the hunk review, kimi.confirm): the float is not drawn then.
local held = false

--- hold hides the float while on is true and draws it again after.
function M.hold(on)
  held = on and true or false
  if held then
    close_float_now()
  else
    pcall(render_now)
  end
end

local function close_float()
  if float.win and vim.api.nvim_win_is_valid(float.win) then
    pcall(vim.api.nvim_win_close, float.win, true)
  end
  float.win = nil
  float.height = nil
end

local function render()
  if opts.mode ~= 'float' or held then
    return
  end
  local token = M.order[#M.order]
  local lines
  local width = math.max(10, math.min(opts.width, vim.o.columns - 2))
  if token then
    local p = M.active[token]
    local title = p.title or 'Kimi'
    if p.percentage then
      title = string.format('%s %d%%', title, p.percentage)
    end
    lines = { title }
    vim.list_extend(lines, tail_lines(p.message, opts.lines, opts.width))
  elseif M.last_outcome_rows then
    -- The job is over: the outcome alone, whole, on as few rows as the
    -- editor's width allows (one, when it fits), as wide as it needs.
    lines = M.last_outcome_rows
    float.height = #lines
    width = 10
    for _, l in ipairs(lines) do
      width = math.max(width, vim.fn.strdisplaywidth(l))
    end
  else
    close_float()
    return
  end
  -- A stable size: the float is anchored at the bottom right, so a width
  -- that followed each chunk's text moved its left edge on every report.
  -- It takes the configured width (the editor's, when narrower) and grows
  -- in height only, until the job ends.
  float.height = math.max(float.height or 0, #lines)
  while #lines < float.height do
    table.insert(lines, '')
  end
  if not (float.buf and vim.api.nvim_buf_is_valid(float.buf)) then
    float.buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_option(float.buf, 'bufhidden', 'hide')
  end
  vim.api.nvim_buf_set_lines(float.buf, 0, -1, false, lines)
  local cfg = {
    relative = 'editor',
    anchor = 'SE',
    row = math.max(vim.o.lines - vim.o.cmdheight - 1, 1),
    col = vim.o.columns,
    width = width,
    height = #lines,
    style = 'minimal',
    focusable = false,
  }
  if float.win and vim.api.nvim_win_is_valid(float.win) then
    pcall(vim.api.nvim_win_set_config, float.win, cfg)
  else
    cfg.noautocmd = true
    local ok, win = pcall(vim.api.nvim_open_win, float.buf, false, cfg)
    if ok then
      float.win = win
      -- One row per line: a line is never wrapped onto a second row.
      pcall(vim.api.nvim_win_set_option, win, 'wrap', false)
    end
  end
end
close_float_now, render_now = close_float, render

local function linger()
  if float.timer then
    float.timer:stop()
    float.timer:close()
  end
  float.timer = vim.loop.new_timer()
  float.timer:start(opts.linger_ms, 0, vim.schedule_wrap(function()
    if float.timer then
      float.timer:close()
      float.timer = nil
    end
    if #M.order == 0 then
      close_float()
    end
  end))
end

-- Outcomes of a job that did not do what was asked start with one of
-- these (the server's end messages: "failed: …", "not applied: …").
local failure_prefixes = { 'failed', 'not applied', 'error', 'refused' }

--- no_key is how a Neovim user gives the server a key, said in place of
--- the server's "no API key …: set KIMI_API_KEY …": the plugin's own ways
--- first, then the variable.
M.no_key = 'failed: no API key is set: give require("kimi").setup{} an api_key_cmd (such as { "pass", "show", "kimi" })'
  .. ' or settings = { apiKey = "…" }, or set KIMI_API_KEY in the environment Neovim starts from'

--- reword returns the end message a user reads for message.
function M.reword(message)
  if message and message:find('no API key', 1, true) and M.is_failure(message) then
    return M.no_key
  end
  return message
end

--- is_failure tells whether an end message reports a failure.
function M.is_failure(message)
  local m = vim.trim(message or ''):lower()
  for _, p in ipairs(failure_prefixes) do
    if m:sub(1, #p) == p then
      return true
    end
  end
  return false
end

-- short cuts a one-line text to width display cells, with "…".
local function short(text, width)
  local line = (text or ''):gsub('%s*\n.*', ' …')
  if vim.fn.strdisplaywidth(line) <= width then
    return line
  end
  return vim.fn.strcharpart(line, 0, width - 1) .. '…'
end

--- outcome_rows returns the rows the float shows a job's outcome on, each
--- at most room cells: the outcome is read whole ("verified by gopls: no
--- new errors after repair"), on one row where it can be: first without
--- its usage note ("(1768 prompt tokens, 0% cached)", in :KimiProgress),
--- then without the "Kimi: " of the title (the float is Kimi's); wrapped
--- at spaces only when still too long.
function M.outcome_rows(full, room)
  local text = short(full, 100000)
  local fits = function(t)
    return vim.fn.strdisplaywidth(t) <= room
  end
  if fits(text) then
    return { text }
  end
  local bare = text:gsub(' %([%d,]+ prompt tokens[^()]*%)', '')
  if fits(bare) then
    return { bare }
  end
  local untitled = bare:gsub('^Kimi: ', '')
  if fits(untitled) then
    return { untitled }
  end
  return wrap_rows(untitled, room)
end

local function record(token, kind, title, message)
  table.insert(M.history, { token = token, kind = kind, title = title, message = message })
  if #M.history > M.max_history then
    table.remove(M.history, 1)
  end
end

--- update applies one $/progress params table ({token, value}) of a kimi client.
function M.update(client_id, params)
  local token, v = params.token, params.value
  if type(v) ~= 'table' then
    return
  end
  local key = tostring(token)
  if v.kind == 'begin' then
    M.active[key] = { title = v.title, message = v.message or '', percentage = v.percentage, client_id = client_id }
    table.insert(M.order, key)
  elseif v.kind == 'report' then
    local p = M.active[key]
    if not p then
      return
    end
    if v.message then
      p.message = v.message
    end
    p.percentage = v.percentage or p.percentage
  elseif v.kind == 'end' then
    local p = M.active[key]
    local title = p and p.title or 'Kimi'
    M.active[key] = nil
    for i, k in ipairs(M.order) do
      if k == key then
        table.remove(M.order, i)
        break
      end
    end
    M.last_outcome_full = string.format('%s: %s', title, M.reword(v.message) or 'done')
    M.last_outcome = short(M.last_outcome_full, opts.width)
    local room = math.max(10, vim.o.columns - 2)
    if p and M.is_failure(v.message) then
      -- The float shows a failure for a few seconds, cut to its width;
      -- :messages gets it once, cut to the command line so that it never
      -- asks Press ENTER, and :KimiProgress shows it whole.
      M.last_outcome_rows = { M.last_outcome }
      table.insert(M.failures, M.last_outcome_full)
      if M.last_outcome_full:find(M.no_key, 1, true) then
        -- How to give the key: an instruction, told whole.
        require('kimi.util').tell(M.last_outcome_full, vim.log.levels.ERROR)
      else
        require('kimi.util').tell_line(M.last_outcome_full, vim.log.levels.ERROR, ':KimiProgress')
      end
    else
      M.last_outcome_rows = M.outcome_rows(M.last_outcome_full, room)
    end
    record(key, 'end', title, v.message)
    pcall(render)
    linger()
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'KimiProgress', modeline = false })
    return
  else
    return
  end
  local p = M.active[key]
  record(key, v.kind, p and p.title, v.message)
  pcall(render)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'KimiProgress', modeline = false })
end

--- running returns the active jobs, oldest first: {token, title, message}.
function M.running()
  local out = {}
  for _, k in ipairs(M.order) do
    local p = M.active[k]
    table.insert(out, { token = k, title = p.title, message = p.message, client_id = p.client_id })
  end
  return out
end

--- statusline returns a short text for a statusline: the newest running job
--- with the last line of its text, else ''.
function M.statusline()
  local token = M.order[#M.order]
  if not token then
    return ''
  end
  local p = M.active[token]
  local last = tail_lines(p.message, 1, 40)[1]
  local more = #M.order > 1 and string.format(' (+%d)', #M.order - 1) or ''
  if last then
    return string.format('%s%s: %s', p.title or 'Kimi', more, last)
  end
  return (p.title or 'Kimi') .. more
end

--- reset forgets all progress (used by tests and on server exit).
function M.reset()
  M.active, M.order, M.history, M.last_outcome, M.last_outcome_full, M.failures = {}, {}, {}, nil, nil, {}
  M.last_outcome_rows = nil
  close_float()
end

--- window returns the floating window's id while it is shown.
function M.window()
  if float.win and vim.api.nvim_win_is_valid(float.win) then
    return float.win
  end
  return nil
end

return M
