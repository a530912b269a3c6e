-- One end-to-end scenario of the kimi Neovim plugin against the real
-- kimi-lsp binary, run by nvim.test.mjs as
--   nvim --headless -u NONE -i NONE -n -c "luafile scenario.lua"
-- with KIMI_SCENARIO = explain | explain_showmessage | fix | cancel | fail | nokey |
-- tests | confirm | confirm_cancel | budget | nextedit | nextedit_gopls | fix_helper |
-- fix_helper_py | definitions_helper | repair_helper | ask_helper.
-- Prints "ok: ..." / "FAIL: ..." lines and exits 0 only when every check held.
local scenario = os.getenv('KIMI_SCENARIO')
local file = os.getenv('KIMI_FILE')
vim.opt.runtimepath:prepend(os.getenv('KIMI_PLUGIN_DIR'))
vim.cmd('filetype on')

local failures = 0
local function out(s)
  io.stdout:write(s .. '\n')
end
local function check(cond, what, detail)
  if cond then
    out('ok: ' .. what)
  else
    failures = failures + 1
    out('FAIL: ' .. what .. (detail and (' -- ' .. detail) or ''))
  end
  return cond
end
local function finish()
  if failures == 0 then
    out('PASS ' .. scenario)
    vim.cmd('qall!')
  else
    out(string.format('FAILED %s (%d checks)', scenario, failures))
    vim.cmd('cquit 1')
  end
end
local function wait(ms, cond, what)
  -- A command the server refused fails at once instead of after the timeout.
  local ok = vim.wait(ms, function()
    local k = package.loaded['kimi']
    return cond() or (k ~= nil and k.last_error ~= nil)
  end, 20)
  local k = package.loaded['kimi']
  if k and k.last_error then
    check(false, 'waiting for ' .. what, 'the server answered with an error: ' .. k.last_error)
    finish()
  elseif not ok then
    check(false, 'waiting for ' .. what, 'timed out after ' .. ms .. ' ms')
    finish()
  end
  return ok
end

-- A stuck scenario still ends, with a failure.
-- (The _helper scenarios wait up to 60 s for a cold gopls first.)
vim.defer_fn(function()
  check(false, 'scenario finished in time')
  finish()
end, (scenario:match('_helper') or scenario:match('gopls')) and 150000 or 90000)

if scenario:match('^completion') then
  -- Inline completion types in insert mode: its own, asynchronous script.
  local path = debug.getinfo(1, 'S').source:sub(2):gsub('scenario%.lua$', 'completion.lua')
  assert(loadfile(path))({ check = check, finish = finish })
  return
end

-- Record each workspace/applyEdit with the buffer version at that moment;
-- Neovim's own handler still applies it.
local applied = {}
local default_apply = vim.lsp.handlers['workspace/applyEdit']
vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx, config)
  local versions = {}
  for _, c in ipairs((params and params.edit and params.edit.documentChanges) or {}) do
    if c.textDocument then
      local b = vim.uri_to_bufnr(c.textDocument.uri)
      table.insert(versions, { sent = c.textDocument.version, buffer = (vim.lsp.util.buf_versions or {})[b] })
    end
  end
  table.insert(applied, { params = params, versions = versions })
  return default_apply(err, params, ctx, config)
end

-- Record every vim.notify (the plugin's messages) and every answer to
-- workspace/configuration, as sent.
local notes = {}
local default_notify = vim.notify
vim.notify = function(msg, level, o)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  return default_notify(msg, level, o)
end
local function notes_at(level, pattern)
  local out = {}
  for _, n in ipairs(notes) do
    if n.level >= level and (not pattern or n.msg:find(pattern, 1, true)) then
      table.insert(out, n)
    end
  end
  return out
end
local config_answers = {}
local default_configuration = vim.lsp.handlers['workspace/configuration']
vim.lsp.handlers['workspace/configuration'] = function(err, params, ctx, config)
  local result = default_configuration(err, params, ctx, config)
  table.insert(config_answers, vim.fn.json_encode(result))
  return result
end

-- chunks_text is the text of a list of virtual text chunks.
local function chunks_text(chunks)
  local t = ''
  for _, c in ipairs(chunks or {}) do
    t = t .. c[1]
  end
  return t
end

-- screen returns the rows of the screen as drawn (after a redraw).
local function screen()
  vim.cmd('redraw!')
  local rows = {}
  for r = 1, vim.o.lines do
    local cells = {}
    for c = 1, vim.o.columns do
      table.insert(cells, vim.fn.screenstring(r, c))
    end
    rows[r] = table.concat(cells)
  end
  return rows
end

-- count_hints counts the rows (or virtual texts) holding the next-edit
-- message.
local function count_hints(texts)
  local n = 0
  for _, t in ipairs(texts) do
    if t:find('next edit', 1, true) then
      n = n + 1
    end
  end
  return n
end

-- check_display checks how the next-edit suggestion replacing the 0-based
-- line row (\treturn a - b, by \treturn a - y) is drawn (issue 32 item 6):
-- its message once in the whole buffer (every namespace, vim.diagnostic's
-- virtual text included), on a virtual line above the line it replaces
-- with the new line after it, and the replaced line marked.
local function check_display(bufnr, ns, row)
  local texts, above, old = {}, nil, nil
  -- Every namespace: vim.diagnostic's virtual text has one without a name
  -- on 0.7, which nvim_get_namespaces() does not list; ids count up from 1.
  local last = 0
  for _, id in pairs(vim.api.nvim_get_namespaces()) do
    last = math.max(last, id)
  end
  for id = 1, last + 100 do
    local okm, ms = pcall(vim.api.nvim_buf_get_extmarks, bufnr, id, 0, -1, { details = true })
    for _, m in ipairs(okm and ms or {}) do
      local d = m[4]
      table.insert(texts, chunks_text(d.virt_text))
      for _, l in ipairs(d.virt_lines or {}) do
        table.insert(texts, chunks_text(l))
      end
      if id == ns and m[2] == row and d.virt_lines_above and d.virt_lines then
        above = d.virt_lines
      end
      if id == ns and m[2] == row and m[3] == 0 and d.hl_group == 'DiffDelete' and d.end_row == row and d.end_col == #'\treturn a - b' then
        old = d
      end
    end
  end
  check(count_hints(texts) == 1, 'the message is drawn once in the buffer', vim.inspect(texts))
  check(above ~= nil and chunks_text(above[1]):find('next edit', 1, true) ~= nil and chunks_text(above[2]):find('return a - y', 1, true) ~= nil,
    'above the replaced line: the message, then the new line', vim.inspect(above))
  check(old ~= nil, 'the replaced line is marked (DiffDelete)', vim.inspect(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })))
  -- As drawn: the message on a row of its own, the new line below it, then
  -- the line it replaces.
  local rows = screen()
  local at
  for r, t in ipairs(rows) do
    if t:find('next edit', 1, true) then
      at = r
    end
  end
  check(count_hints(rows) == 1 and at ~= nil and rows[at + 1]:find('return a - y', 1, true) ~= nil
    and rows[at + 2]:find('return a - b', 1, true) ~= nil and not rows[at + 2]:find('next edit', 1, true),
    'on the screen: the message once on its own row, the new line, then the replaced line', table.concat(rows, '\n'))
  return rows
end

local ok, err = pcall(function()
  local kimi = require('kimi')
  local progress = require('kimi.progress')
  -- check_end_row: a Fix's end line is drawn on one row (issue 33 item 9).
  local function check_end_row()
    -- Issue 33 item 9: the end line is drawn on one row (in 80 columns:
    -- its token counts are :KimiProgress's), its words whole.
    local full = progress.last_outcome_full or ''
    local fw = progress.window()
    local fl = fw and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fw), 0, -1, false) or {}
    local head = full:gsub(' %(%d+ prompt tokens.*', '')
    if vim.fn.strdisplaywidth(head) <= vim.o.columns - 2 then
      check(#fl == 1 and fl[1] == head and vim.api.nvim_win_get_config(fw).height == 1 and not vim.api.nvim_win_get_option(fw, 'wrap'),
        'the end line is one row of the float, whole but its token counts', vim.inspect({ full = full, lines = fl }))
    else -- too long for any row (pyright's untrusted-folder note): wrapped at spaces, whole
      check(#fl >= 2 and table.concat(fl, ' ') == head:gsub('^Kimi: ', ''), 'the long end line is wrapped whole', vim.inspect({ full = full, lines = fl }))
    end
    if vim.fn.has('nvim-0.10') == 1 then
      -- As drawn (0.7's screenstring() does not see floats without a UI).
      local rows = screen()
      local on = 0
      for _, r in ipairs(rows) do
        if r:find('Fix: 1 hunk', 1, true) then
          on = on + 1
          check(r:find(head, 1, true) ~= nil, 'the row holds the whole end line', r)
        end
      end
      check(on == 1, 'the end line is on one row of the screen', table.concat(rows, '\n'))
    end
  end
  local explain = require('kimi.explain')
  -- The setup README shows, settings = {} included.
  local confirming = scenario:match('^confirm') ~= nil
  local asking = scenario == 'ask_helper'
  local settings = {}
  if confirming then
    settings = { edits = { confirm = 'always' } }
  elseif asking then
    settings = { verify = { onNewErrors = 'ask' } }
  elseif scenario == 'budget' then
    -- The test's request record spends more than this today.
    settings = { budget = { daily = 0.01 }, nextEdit = { debounceMs = 100 } }
  end
  if scenario == 'explain' then
    -- As a user's setup has it: filetype plugins on, so the explanation's
    -- Markdown buffer runs Markdown's ftplugin (tree-sitter on 0.12).
    vim.cmd('filetype plugin on')
  end
  kimi.setup({
    cmd = { os.getenv('KIMI_LSP_BIN') },
    settings = settings,
    show_document = scenario ~= 'explain_showmessage',
    progress = 'float',
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local code_win = vim.api.nvim_get_current_win()
  local bufnr = vim.api.nvim_get_current_buf()
  local original = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  local client
  wait(15000, function()
    client = require('kimi.util').clients('kimi', bufnr)[1]
    return client ~= nil and client.initialized == true
  end, 'kimi-lsp to attach and initialize')
  local ft = file:match('%.py$') and 'python' or 'go'
  check(vim.bo[bufnr].filetype == ft, 'the ' .. ft .. ' file is open', vim.bo[bufnr].filetype)
  if next(settings) == nil then
    local sent = vim.fn.json_encode(client.config.init_options)
    check(sent == '{"kimi": {}}', 'settings = {} is sent as an object in initializationOptions', sent)
    sent = vim.fn.json_encode(client.config.settings)
    check(sent == '{"kimi": {}}', 'and in didChangeConfiguration', sent)
  end

  local function has(kind, pred)
    for _, e in ipairs(progress.history) do
      if e.kind == kind and (not pred or pred(e)) then
        return e
      end
    end
  end

  if scenario == 'explain' or scenario == 'explain_showmessage' then
    -- A charwise visual selection over the function, as a user would make it.
    vim.cmd('normal! 6G0v8G$\27')
    vim.cmd("'<,'>KimiExplain")
    local float_seen = false
    local widths = {} -- every width the progress float had, as a set
    local nwidths = 0
    wait(30000, function()
      local w = progress.window()
      if w and #progress.running() > 0 then -- the end line is as wide as it needs
        float_seen = true
        local cw = vim.api.nvim_win_get_config(w).width
        if not widths[cw] then
          widths[cw], nwidths = true, nwidths + 1
        end
      end
      return explain.last ~= nil
    end, 'the explanation buffer')
    local text = table.concat(explain.last.lines, '\n')
    check(text:find('KIMI-E2E-EXPLANATION', 1, true) ~= nil, 'the explanation holds the scripted text', text)
    check(text:find('which is `-1` today', 1, true) ~= nil, 'the whole explanation, not a tail', text)
    check(not explain.last.lines[1]:find('<!--', 1, true), 'the explanation starts with its text, no HTML comment', explain.last.lines[1])
    check(vim.deep_equal(explain.strip_header({ '<!-- kimi-lsp explanation of a.go -->', '', 'text' }), { 'text' }),
      "an older server's header line is dropped from the buffer")
    local eb = explain.last.bufnr
    check(vim.bo[eb].filetype == 'markdown', 'the explanation buffer is markdown')
    check(vim.bo[eb].buftype == 'nofile', 'the explanation buffer is a scratch buffer')
    check(vim.fn.bufwinid(eb) ~= -1, 'the explanation is shown in a window')
    -- Issue 33 item 10: the encoding gopls and the other servers answer,
    -- whatever Neovim offers (0.12 offers UTF-8 first), D87.
    check(client.offset_encoding == 'utf-16', 'the session is in UTF-16', tostring(client.offset_encoding))
    -- Issue 33 item 10: Neovim 0.12 started through editors/test/nvim012.sh
    -- looked for its parsers in …/usr/lib/lib/nvim, and every Markdown
    -- buffer raised E5113 (no parser for "markdown").
    local messages = vim.fn.execute('messages')
    check(not messages:find('E5113', 1, true) and not vim.v.errmsg:find('E5113', 1, true), 'the Markdown buffer raised no E5113', messages .. vim.v.errmsg)
    if vim.treesitter and vim.treesitter.get_parser and vim.fn.has('nvim-0.12') == 1 then
      local okp, parser = pcall(vim.treesitter.get_parser, eb, 'markdown')
      check(okp and parser ~= nil, "Neovim 0.12 has the markdown parser for the explanation", tostring(parser))
    end
    check(vim.api.nvim_get_current_win() == code_win, 'the cursor stays in the code window')
    if scenario == 'explain' then
      check((explain.last.source or ''):match('%.md$') ~= nil, 'opened from the markdown file (window/showDocument)', tostring(explain.last.source))
    else
      check(explain.last.source == nil, 'came from window/showMessage', tostring(explain.last.source))
    end
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end')
    local begin = has('begin')
    check(begin ~= nil and (begin.title or ''):match('^Kimi: Explain') ~= nil, 'progress begin titled Kimi: Explain', vim.inspect(begin))
    check(has('report', function(e)
      return (e.message or ''):find('sum', 1, true) or (e.message or ''):find('KIMI%-E2E')
    end) ~= nil, 'progress reports carried the streamed text', vim.inspect(progress.history))
    check(float_seen, 'the progress float was shown while streaming')
    -- Issue 21 item 20: the float followed each chunk's width, so its left
    -- edge (it is anchored at the bottom right) jumped on every report.
    check(nwidths == 1, 'the progress float kept one width while streaming', vim.inspect(widths))
    check(#progress.running() == 0, 'no job left running')
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'the code is unchanged')
    vim.api.nvim_set_current_win(code_win)
    vim.cmd('KimiStats')
    wait(30000, function()
      return kimi.last_stats ~= nil
    end, ':KimiStats')
    local st = kimi.last_stats
    check(st.requests == 1, ':KimiStats counts the one request', vim.inspect(st))
    -- Issue 21 item 20: :KimiStats was one long hit-enter line.
    local sw = kimi.stats_win
    check(sw ~= nil and vim.api.nvim_win_is_valid(sw) and vim.api.nvim_win_get_config(sw).relative ~= '', ':KimiStats opens a float')
    local sl = sw and vim.api.nvim_win_is_valid(sw) and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(sw), 0, -1, false) or {}
    check(#sl >= 5 and sl[1]:match('^Requests%s+1$') ~= nil, ':KimiStats shows one figure per line', table.concat(sl, '\n'))
    check(#notes_at(vim.log.levels.INFO, 'prompt tokens') == 0, ':KimiStats sends no long message', vim.inspect(notes))
    vim.cmd('normal! j')
    vim.cmd('doautocmd CursorMoved')
    check(not vim.api.nvim_win_is_valid(sw), 'the stats float closes when the cursor moves')
    check(type(st.promptTokens) == 'number' and st.promptTokens > 0, ':KimiStats reports prompt tokens', vim.inspect(st))
    check(type(st.hitRatio) == 'number', ':KimiStats reports a hit ratio', vim.inspect(st))
    -- Issue 25: the spend against the budgets, and what left the machine.
    check(type(st.spend) == 'table' and type(st.spend.hour) == 'table' and (st.spend.hour.spentUSD or 0) > 0,
      ':KimiStats has the spend of this hour', vim.inspect(st.spend))
    check(table.concat(sl, '\n'):find('Spend', 1, true) ~= nil, ':KimiStats shows the spend', table.concat(sl, '\n'))
    vim.cmd('KimiRequests 10')
    wait(30000, function()
      local rb = vim.fn.bufnr('kimi://requests')
      return rb > 0 and #vim.api.nvim_buf_get_lines(rb, 0, -1, false) > 1
    end, ':KimiRequests')
    local rl = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('kimi://requests'), 0, -1, false), '\n')
    check(rl:find('explain', 1, true) ~= nil and rl:find('    files: ', 1, true) ~= nil and rl:find('KIMI-E2E', 1, true) == nil,
      ':KimiRequests lists the explain with its files, no contents', rl)
    vim.cmd('close')
    vim.api.nvim_set_current_win(code_win)
    -- By now the server has read its settings (initializationOptions,
    -- didChangeConfiguration, and workspace/configuration where the client
    -- offers it: not 0.7): with settings = {} nothing may have warned.
    for _, a in ipairs(config_answers) do
      check(a:find('[]', 1, true) == nil, 'workspace/configuration answered objects, not lists', a)
    end
    check(#notes_at(vim.log.levels.WARN) == 0, 'no warning or error since the start', vim.inspect(notes))
  elseif scenario == 'fix' then
    vim.cmd('6,8KimiFix')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end')
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local want = vim.deepcopy(original)
    want[7] = '\treturn a + b'
    check(vim.deep_equal(lines, want), 'the buffer holds the fix', table.concat(lines, '\n'))
    local e = has('end')
    check((e.message or ''):match('1 edit') or (e.message or ''):match('applied'), 'the end message reports the edit', e.message)
    check(#applied == 1, 'exactly one workspace/applyEdit', vim.inspect(applied))
    local v = applied[1] and applied[1].versions[1]
    check(v ~= nil and v.sent == v.buffer, 'the edit is versioned against the buffer', vim.inspect(applied))
    check(applied[1] and (applied[1].params.label or ''):match('^Kimi: Fix') ~= nil, 'the edit is labelled Kimi: Fix',
      vim.inspect(applied[1] and applied[1].params.label))
    check_end_row()
    vim.api.nvim_set_current_win(code_win)
    vim.cmd('normal! u')
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'u restores the original text',
      table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n'))
    vim.cmd('redo')
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), want), 'redo brings the fix back')
  elseif scenario == 'cancel' then
    vim.cmd('6,8KimiExplain')
    wait(30000, function()
      return has('report') ~= nil
    end, 'the first report of the slow stream')
    check(kimi.statusline():match('^Kimi: Explain') ~= nil, 'the statusline shows the running job', kimi.statusline())
    vim.cmd('KimiCancel')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end after :KimiCancel')
    local e = has('end')
    check((e.message or ''):lower():find('cancel') ~= nil, 'the job ended as cancelled', e.message)
    local hung = vim.wait(30000, function()
      local f = io.open(os.getenv('KIMI_STANDIN_STDERR') or '', 'r')
      if not f then
        return false
      end
      local s = f:read('*a')
      f:close()
      return s:find('hung_up=true', 1, true) ~= nil
    end, 50)
    check(hung, 'the stand-in saw the server hang up while nvim still ran')
    vim.wait(500, function()
      return false
    end, 50)
    check(explain.last == nil, 'no explanation was opened')
    check(kimi.statusline() == '', 'the statusline is empty again')
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'the code is unchanged')
  elseif scenario == 'fail' then
    local reason = 'the selected model is not enabled for your account; enable it in the console and try again'
    vim.cmd('6,8KimiExplain')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end of the refused job')
    local errors = notes_at(vim.log.levels.ERROR)
    check(#errors == 1, 'one error message for the failed job', vim.inspect(notes))
    check(errors[1] ~= nil and errors[1].msg:match('^Kimi: Explain: failed: ') ~= nil, 'the error names the job once', vim.inspect(errors))
    -- Issue 33 item 9: once in :messages, and short enough for the
    -- command line (a longer one asked Press ENTER); the whole reason is
    -- :KimiProgress's.
    local messages = vim.fn.execute('messages')
    local _, n = messages:gsub('Explain: failed', '')
    check(n == 1, ':messages holds the failure once', messages)
    check(errors[1] ~= nil and vim.fn.strdisplaywidth(errors[1].msg) < vim.v.echospace and errors[1].msg:find('(see :KimiProgress)', 1, true) ~= nil,
      'it fits the command line (v:echospace ' .. vim.v.echospace .. ') and points to :KimiProgress', errors[1] and errors[1].msg)
    check(vim.fn.strdisplaywidth(progress.last_outcome or '') <= 60, 'the float keeps a short form', progress.last_outcome)
    vim.cmd('KimiProgress')
    local last = notes[#notes].msg
    check(last:find('KIMI-E2E-FAILURE', 1, true) ~= nil and last:find(reason, 1, true) ~= nil, ':KimiProgress shows the whole reason', last)
    check(last:find('Kimi: Kimi', 1, true) == nil, ':KimiProgress does not double "Kimi:"', last)
  elseif scenario == 'nokey' then
    vim.cmd('6,8KimiExplain')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end of the job without a key')
    local errors = notes_at(vim.log.levels.ERROR)
    local msg = errors[1] and errors[1].msg or ''
    check(#errors == 1, 'one error message', vim.inspect(notes))
    local own, var = msg:find('api_key_cmd', 1, true), msg:find('KIMI_API_KEY', 1, true)
    check(own ~= nil and var ~= nil and own < var, 'it names api_key_cmd before KIMI_API_KEY', msg)
  elseif scenario == 'tests' then
    local edits = require('kimi.edits')
    local test_file = vim.fn.fnamemodify(file, ':h') .. '/main_test.go'
    vim.cmd('6,8KimiTests')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end of Write tests')
    local e = has('end')
    check((e.message or ''):match('applied') ~= nil, 'the edit was applied', e.message)
    local tb = vim.fn.bufnr(test_file)
    check(tb > 0 and #edits.created == 1, 'a buffer for main_test.go', vim.inspect(edits.created))
    local lines = tb > 0 and vim.api.nvim_buf_get_lines(tb, 0, -1, false) or {}
    check(lines[1] == 'package main' and lines[#lines] == '}' and #lines == 9, 'it holds the tests, nothing more', table.concat(lines, '\n'))
    check(tb > 0 and vim.fn.bufwinid(tb) ~= -1, 'the new file is shown in a window')
    check(vim.api.nvim_get_current_win() == code_win, 'the cursor stays in the code window')
    check(#notes_at(vim.log.levels.INFO, 'main_test.go') == 1, 'a message names main_test.go', vim.inspect(notes))
    check(vim.loop.fs_stat(test_file) == nil, 'no empty file on disk before :w')
    vim.api.nvim_set_current_win(vim.fn.bufwinid(tb))
    vim.cmd('normal! u')
    local after = vim.api.nvim_buf_get_lines(tb, 0, -1, false)
    check(#after == 1 and after[1] == '', 'u empties the new buffer', table.concat(after, '\n'))
    check(not vim.bo[tb].modified, 'after u the new buffer is unmodified: :wa writes nothing')
    check(vim.loop.fs_stat(test_file) == nil, 'after u no file is left on disk')
    vim.cmd('redo')
    vim.cmd('write')
    local f = io.open(test_file, 'r')
    local text = f and f:read('*a') or ''
    if f then
      f:close()
    end
    check(text:find('func TestAdd', 1, true) ~= nil, ':w writes the tests to disk', text)
  elseif scenario == 'confirm' or scenario == 'confirm_cancel' then
    -- edits.confirm = "always": the Fix's two hunks are reviewed. The keys
    -- are typed ahead; the review reads them (getchar) once it is shown:
    -- r rejects the first hunk and moves to the second, <Space> and <CR>
    -- toggle that one off and on again, :w applies.
    local confirm = require('kimi.confirm')
    vim.api.nvim_feedkeys(scenario == 'confirm' and 'r \r:w\r' or 'q', 't', false)
    vim.cmd('5,12KimiFix')
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end')
    local r = confirm.last or { hunks = {}, lines = {} }
    local shown = table.concat(r.lines, '\n')
    check(#r.hunks == 2, 'the review buffer listed the two hunks', shown)
    check(shown:find('main.go:5', 1, true) ~= nil and shown:find('main.go:11', 1, true) ~= nil, 'each hunk named by file and line', shown)
    check(shown:find('  -// Add returns the sum of a and b.', 1, true) ~= nil and shown:find('  +\tfmt.Println(Add(2, 3))', 1, true) ~= nil,
      'the hunks show the lines removed and added', shown)
    check(vim.fn.bufnr('kimi://review') == -1, 'the review buffer is gone after the decision')
    -- Issue 33 item 9: the progress float (bottom right) covered the hunk
    -- list, saying "applying the edit" while the review waited.
    check(r.float == nil, 'no progress float over the hunk list while it waited for keys')
    check(vim.api.nvim_get_current_win() == code_win, 'the cursor is back in the code window')
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local e = has('end')
    if scenario == 'confirm' then
      check(r.choice == 'apply' and not r.hunks[1].accepted and r.hunks[2].accepted, 'hunk 1 rejected, hunk 2 accepted', vim.inspect(r.hunks))
      check(shown:find('[ ] main.go:5', 1, true) ~= nil and shown:find('[x] main.go:11', 1, true) ~= nil, 'the buffer marks them so', shown)
      local want = vim.deepcopy(original)
      want[11] = '\tfmt.Println(Add(2, 3))'
      check(vim.deep_equal(lines, want), 'only the accepted hunk landed', table.concat(lines, '\n'))
      check((e.message or ''):find('1 of 2 hunks applied', 1, true) ~= nil, 'the end message says 1 of 2', e.message)
      local sent = applied[1] and applied[1].params.edit.documentChanges or {}
      check(#applied == 1 and #sent == 1 and #sent[1].edits == 1, "Neovim's handler got the accepted hunk only", vim.inspect(applied))
      vim.cmd('normal! u')
      check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'u restores the original text')
    else
      check(r.choice == 'cancel', 'q cancelled the review', vim.inspect(r))
      check(vim.deep_equal(lines, original), 'nothing landed', table.concat(lines, '\n'))
      check(#applied == 0, "Neovim's handler got nothing", vim.inspect(applied))
      check((e.message or ''):find('cancelled', 1, true) ~= nil, 'the end message says the review was cancelled', e.message)
    end
  elseif scenario == 'budget' then
    -- Issue 33 item 7: the daily budget is spent (the test's request
    -- record); an edit of the user's would ask for a next edit, and the
    -- server's one notice of the window says what is paused and until when.
    local notice = require('kimi.notice')
    vim.api.nvim_buf_set_text(bufnr, 5, 12, 5, 13, { 'y' })
    vim.cmd('let &undolevels = &undolevels')
    wait(30000, function()
      return notice.window() ~= nil
    end, 'the budget notice float')
    local nw = notice.window()
    local said = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(nw), 0, -1, false), ' ')
    check(said:find('daily budget', 1, true) and said:find('next edits', 1, true) and said:find('inline completion', 1, true)
      and said:find('paused until', 1, true), 'the float names the budget, next edits and inline completion', said)
    local ncfg = vim.api.nvim_win_get_config(nw)
    check(ncfg.relative == 'editor' and ncfg.focusable == false, 'the notice is a float that takes no cursor', vim.inspect(ncfg))
    check(vim.api.nvim_get_current_win() == code_win, 'the cursor stays in the code window')
    if vim.fn.has('nvim-0.10') == 1 then
      -- (0.7 headless composes no float into screenstring().)
      local rows = screen()
      local top
      for r, t in ipairs(rows) do
        if t:find('paused', 1, true) then
          top = top or r
        end
      end
      check(top ~= nil and top <= 5, 'the notice is drawn at the top of the screen', table.concat(rows, '\n'))
    end
    local pos = vim.api.nvim_win_get_position(nw)
    check(pos[1] <= 2 and pos[2] + vim.api.nvim_win_get_width(nw) >= vim.o.columns - 4, 'at the top right', vim.inspect(pos))
    check(#notes_at(vim.log.levels.WARN, 'paused until') == 1, 'and told once through vim.notify (:messages)', vim.inspect(notes))
    -- :KimiStats gives the end of the spent budget in local time, as the notice.
    vim.cmd('KimiStats')
    wait(30000, function()
      return kimi.last_stats ~= nil
    end, ':KimiStats')
    local st = kimi.last_stats
    local ends = st.spend and st.spend.cap and st.spend.cap.ends
    local sw = kimi.stats_win
    local sl = sw and vim.api.nvim_win_is_valid(sw) and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(sw), 0, -1, false) or {}
    local spent
    for _, l in ipairs(sl) do
      if l:find('budget is spent until', 1, true) then
        spent = l
      end
    end
    local when = kimi.local_time(ends)
    check(spent ~= nil and spent:find('until ' .. when, 1, true) ~= nil and not spent:find('%dT%d') and when:match('^%a+ %d+ %a+ 00:00$') ~= nil,
      ':KimiStats says until when in local time (the next local midnight)', tostring(spent) .. ' / ' .. tostring(ends))
    check(said:find('until ' .. when, 1, true) ~= nil, 'the same words as the notice', said .. ' / ' .. when)
    vim.api.nvim_set_current_win(code_win)
    vim.cmd('normal! j')
    vim.cmd('doautocmd CursorMoved')
    -- :KimiRequests opens newest first, the cursor on the newest.
    vim.cmd('KimiRequests 10')
    local rb
    wait(30000, function()
      rb = vim.fn.bufnr('kimi://requests')
      return rb > 0 and #vim.api.nvim_buf_get_lines(rb, 0, -1, false) > 1
    end, ':KimiRequests')
    local rl = vim.api.nvim_buf_get_lines(rb, 0, -1, false)
    local fix_at, explain_at
    for i, l in ipairs(rl) do
      if l:find(' fix ', 1, true) then
        fix_at = fix_at or i
      elseif l:find(' explain ', 1, true) then
        explain_at = explain_at or i
      end
    end
    check(rl[1]:find('newest first', 1, true) ~= nil and fix_at == 4 and explain_at ~= nil and explain_at > fix_at,
      ':KimiRequests lists the newest (fix) first, then the explain', table.concat(rl, '\n'))
    check(vim.api.nvim_get_current_buf() == rb and vim.api.nvim_win_get_cursor(0)[1] == fix_at,
      'the cursor is on the newest request', vim.inspect(vim.api.nvim_win_get_cursor(0)))
    vim.cmd('close')
  elseif scenario == 'nextedit' then
    local nextedit = require('kimi.nextedit')
    -- Rename b in Add's signature; the stand-in proposes the use below.
    vim.api.nvim_buf_set_text(bufnr, 5, 12, 5, 13, { 'y' })
    vim.cmd('let &undolevels = &undolevels') -- an undo break: the rename is the user's own step
    vim.api.nvim_win_set_cursor(code_win, { 1, 0 })
    wait(30000, function()
      return nextedit.current(bufnr) ~= nil
    end, 'the next-edit suggestion')
    local diag
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
      if code == 'next-edit' then
        diag = d
      end
    end
    check(diag ~= nil and diag.lnum == 6 and diag.severity == vim.diagnostic.severity.HINT,
      'a Hint diagnostic with code next-edit on the use below', vim.inspect(vim.diagnostic.get(bufnr)))
    local ns = vim.api.nvim_get_namespaces()['kimi_next_edit']
    local marks = ns and vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true }) or {}
    local shown = ''
    for _, m in ipairs(marks) do
      for _, l in ipairs(m[4].virt_lines or {}) do
        shown = shown .. l[1][1] .. '\n'
      end
    end
    check(shown:find('return a - y', 1, true) ~= nil, 'the new text is shown as virtual lines at its place', vim.inspect(marks))
    check_display(bufnr, ns, 6)
    local tab = vim.api.nvim_replace_termcodes('<Tab>', true, false, true)
    vim.api.nvim_feedkeys(tab, 'mx', false)
    check(vim.api.nvim_win_get_cursor(0)[1] == 7, 'the first <Tab> jumps to the suggestion', vim.inspect(vim.api.nvim_win_get_cursor(0)))
    vim.api.nvim_feedkeys(tab, 'mx', false)
    wait(15000, function()
      return vim.api.nvim_buf_get_lines(bufnr, 6, 7, false)[1] == '\treturn a - y'
    end, 'the second <Tab> to apply the suggestion')
    check(#applied == 1, 'exactly one workspace/applyEdit', vim.inspect(applied))
    local v = applied[1] and applied[1].versions[1]
    check(v ~= nil and v.sent == v.buffer, 'the edit is versioned against the buffer', vim.inspect(applied))
    wait(10000, function()
      return #vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, {}) == 0
    end, 'the suggestion to be cleared')
    local st
    wait(15000, function()
      if not st or (st.nextEdit or {}).accepted ~= 1 then
        st = nil
        require('kimi.util').request(client, 'workspace/executeCommand', { command = 'kimi.stats' }, function(_, r)
          st = r or {}
        end, bufnr)
        vim.wait(500, function()
          return st ~= nil
        end, 20)
      end
      return st ~= nil and (st.nextEdit or {}).accepted == 1
    end, 'kimi.stats to count the next edit accepted')
    vim.cmd('normal! u')
    check(vim.api.nvim_buf_get_lines(bufnr, 5, 7, false)[2] == '\treturn a - b' and
      vim.api.nvim_buf_get_lines(bufnr, 5, 6, false)[1] == 'func Add(a, y int) int {',
      'u undoes the next edit in one step, and only it', table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n'))
  elseif scenario == 'nextedit_gopls' then
    -- Issue 32 item 6: gopls attached beside kimi-lsp, as a user runs
    -- them, with vim.diagnostic's virtual text on (0.7's default; on 0.11+
    -- as many turn it on). Renaming b in Add's signature makes gopls report
    -- "undefined: b" on the very line the suggestion replaces: the
    -- suggestion is still drawn once, on its own row above that line, and
    -- gopls's error stays visible too.
    vim.diagnostic.config({ virtual_text = true })
    local gopls_conf = { name = 'gopls', cmd = { 'gopls' }, root_dir = vim.fn.getcwd() }
    local gopls_id
    if vim.lsp.start then
      gopls_id = vim.lsp.start(gopls_conf, { bufnr = bufnr })
    else
      gopls_id = vim.lsp.start_client(gopls_conf)
      vim.lsp.buf_attach_client(bufnr, gopls_id)
    end
    local nextedit = require('kimi.nextedit')
    vim.api.nvim_buf_set_text(bufnr, 5, 12, 5, 13, { 'y' })
    vim.api.nvim_win_set_cursor(code_win, { 1, 0 })
    local function gopls_error()
      for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = 6 })) do
        if d.severity == vim.diagnostic.severity.ERROR and d.message:find('undefined: b', 1, true) then
          return d
        end
      end
    end
    wait(60000, function()
      return nextedit.current(bufnr) ~= nil and gopls_error() ~= nil
    end, "the next-edit suggestion and gopls's error on its line")
    check(gopls_id ~= nil and gopls_error().namespace ~= nextedit.diag_ns, "gopls's error is its own client's", vim.inspect(gopls_error()))
    local ns = vim.api.nvim_get_namespaces()['kimi_next_edit']
    local rows = check_display(bufnr, ns, 6)
    local shown = table.concat(rows, '\n')
    check(shown:find('undefined: b', 1, true) ~= nil, "gopls's error is drawn too", shown)
    if vim.fn.has('nvim-0.12') == 1 then
      -- Issue 33 item 10, D87: kimi-lsp answers gopls's encoding, so
      -- :checkhealth no longer warns that the buffer's servers differ.
      local encs = {}
      for _, c in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
        encs[c.name] = c.offset_encoding
      end
      check(encs.kimi == 'utf-16' and encs.gopls == 'utf-16', 'kimi-lsp and gopls use one position encoding', vim.inspect(encs))
      vim.cmd('checkhealth vim.lsp')
      local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      check(report:find('different position encodings', 1, true) == nil and report:find('No buffers contain mixed position encodings', 1, true) ~= nil,
        ':checkhealth vim.lsp finds no mixed position encodings', report)
      check(report:find('gopls', 1, true) ~= nil, ':checkhealth vim.lsp lists the clients', report)
      pcall(vim.cmd, 'tabclose')
      pcall(vim.api.nvim_set_current_win, code_win)
    end
    -- client:stop() on 0.10+ (vim.lsp.stop_client is deprecated on 0.12);
    -- on 0.7 client.stop(force) is a plain function.
    local function stop(id)
      local c = vim.lsp.get_client_by_id(id)
      if c and vim.fn.has('nvim-0.10') == 1 then
        c:stop()
      elseif c then
        c.stop()
      end
    end
    stop(gopls_id)
    -- The plugin's namespace holds the diagnostic: when kimi-lsp exits,
    -- the plugin drops it and the drawing (nothing else would).
    stop(client.id)
    wait(15000, function()
      return #vim.diagnostic.get(bufnr, { namespace = nextedit.diag_ns }) == 0
        and #vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, {}) == 0
    end, 'the suggestion to go with kimi-lsp')
  elseif scenario == 'fix_helper' or scenario == 'fix_helper_py' then
    -- Issue 23 item 4 as a user meets it: only kimi-lsp is attached (no
    -- gopls of the editor's own), so Neovim sends kimi-lsp no diagnostic;
    -- the server asks its own helper gopls for the errors under the cursor.
    -- The menu is opened as a user opens it, vim.lsp.buf.code_action() at
    -- a bare cursor, and the pick is made in vim.ui.select: its items are
    -- shown with opts.format_item, so the titles checked are those the
    -- user reads.
    local menu -- what the last vim.ui.select offered: { titles, items, format }
    local pick -- the title to choose in the next menu, or nil to close it
    vim.ui.select = function(items, opts, on_choice)
      local titles = {}
      for _, it in ipairs(items) do
        table.insert(titles, opts.format_item and opts.format_item(it) or tostring(it))
      end
      menu = { titles = titles }
      for i, t in ipairs(titles) do
        if pick and t == pick then
          on_choice(items[i], i)
          return
        end
      end
      on_choice(nil, nil)
    end
    local function code_actions(line, col, choose)
      menu, pick = nil, choose
      vim.api.nvim_win_set_cursor(code_win, { line, col })
      vim.lsp.buf.code_action()
      -- The server waits at most 2 s for the helper (helperDiagnosticsWait).
      wait(30000, function()
        return menu ~= nil
      end, 'the code action menu at ' .. line .. ':' .. col)
      return menu.titles
    end
    local function fixes(titles)
      local out = {}
      for _, t in ipairs(titles) do
        if t:find('Kimi: Fix', 1, true) then
          table.insert(out, t)
        end
      end
      return out
    end
    -- main.go (Go, gopls) or calc.py (Python, pyright): the error's line,
    -- a clean line, the Fix's title, the fixed line.
    local lang = ({
      fix_helper = { helper = 'gopls', bad = 7, clean = 11, title = 'Kimi: Fix “undefined: y”', fixed = '\treturn a + b' },
      fix_helper_py = { helper = 'pyright', bad = 2, clean = 5, title = 'Kimi: Fix “"y" is not defined”', fixed = '    return a + b' },
    })[scenario]
    local want_title = lang.title
    -- The first request starts the helper (gopls loads the module and the
    -- standard library into an empty cache: its HOME and XDG_CACHE_HOME
    -- are the test's); when that takes longer than the 2 s the server
    -- waits, the menu comes without Fix, as D63 says, and a user would
    -- open it again. So the menu is opened again until Fix is there, for
    -- 60 s at most.
    local tries, titles = 0, {}
    local deadline = vim.loop.now() + 60000
    repeat
      tries = tries + 1
      titles = code_actions(lang.bad, 1)
      if vim.tbl_contains(titles, want_title) then
        break
      end
      vim.wait(500, function()
        return false
      end, 50)
    until vim.loop.now() > deadline
    check(vim.tbl_contains(titles, want_title), 'on the line of ' .. lang.helper .. "'s error the menu offers " .. want_title,
      string.format('after %d menus: %s', tries, vim.inspect(titles)))
    if not vim.tbl_contains(titles, want_title) then
      finish()
    end
    out(string.format('info: Fix offered at menu %d', tries))
    check(#fixes(titles) == 1, 'one Kimi: Fix, the one quoting the error', vim.inspect(titles))
    -- A line without an error, nothing selected: the helper now runs and
    -- answers at once; no Fix, the other actions as ever.
    titles = code_actions(lang.clean, 1)
    check(#fixes(titles) == 0, 'on a line without an error no Kimi: Fix is offered', vim.inspect(titles))
    check(vim.tbl_contains(titles, 'Kimi: Explain'), 'and Kimi: Explain is', vim.inspect(titles))
    -- Back on the error's line: pick the Fix.
    titles = code_actions(lang.bad, 1, want_title)
    wait(30000, function()
      return has('end') ~= nil
    end, 'progress end of the Fix')
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local want = vim.deepcopy(original)
    want[lang.bad] = lang.fixed
    check(vim.deep_equal(lines, want), "the buffer holds the stand-in's fix", table.concat(lines, '\n'))
    local e = has('end')
    check((e.message or ''):find('verified by ' .. lang.helper, 1, true) ~= nil, 'the end message says ' .. lang.helper .. ' verified the edit', e.message)
    check(#applied == 1, 'exactly one workspace/applyEdit', vim.inspect(applied))
    check(applied[1] and (applied[1].params.label or ''):match('^Kimi: Fix') ~= nil, 'the edit is labelled Kimi: Fix',
      vim.inspect(applied[1] and applied[1].params.label))
    check_end_row()
  elseif scenario == 'repair_helper' then
    -- Issue 33 item 1: the Fix's first diff brings gopls's "undefined: c";
    -- the float says the repair round is running and keeps saying it, the
    -- first diff is not streamed again, and the end line is read whole.
    local shown = {} -- each text the float showed, in order
    vim.api.nvim_create_autocmd('User', {
      pattern = 'KimiProgress',
      callback = function()
        local w = progress.window()
        if w then
          table.insert(shown, table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n'))
        end
      end,
    })
    vim.cmd('6,8KimiFix')
    wait(120000, function()
      return has('end') ~= nil
    end, 'progress end of the repaired Fix')
    local pin = 'repairing: gopls found 1 new error: undefined: c'
    local from
    for i, t in ipairs(shown) do
      if t:find(pin, 1, true) then
        from = from or i
      end
    end
    check(from ~= nil, 'the float said the repair round is running', table.concat(shown, '\n---\n'))
    local kept = from ~= nil
    for i = from or 1, #shown - 1 do
      local t = shown[i]
      if not t:find(pin, 1, true) or t:find('sending tool results', 1, true) or t:find('a + c', 1, true) and not t:find('- return a + c', 1, true) and t:find('+ return a + c', 1, true) then
        kept = false
        check(false, 'the float kept the repair in view, without the first diff', t)
        break
      end
    end
    check(kept and #shown - (from or #shown) >= 2, 'the float kept saying it until the end', tostring(from) .. ' of ' .. #shown)
    local full = progress.last_outcome_full or ''
    check(full:find('verified by gopls: no new errors after repair', 1, true) ~= nil, 'the end says verified after repair', full)
    local fw = progress.window()
    local fl = fw and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fw), 0, -1, false) or {}
    check(#fl == 1 and fl[1]:find('Fix: 1 hunk in 1 file applied, verified by gopls: no new errors after repair', 1, true) == 1,
      'the float shows the end line whole, on one row', vim.inspect({ full = full, float = fl }))
    for _, l in ipairs(fl) do
      check(vim.fn.strdisplaywidth(l) <= vim.o.columns - 2, 'each row fits the editor', l)
    end
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    check(lines[7] == '\treturn a + b', 'the repaired fix landed', table.concat(lines, '\n'))
  elseif scenario == 'ask_helper' then
    -- Issue 33 item 2: verify.onNewErrors = "ask". The keys are typed
    -- ahead: c shows the proposed change, s the errors, d discards.
    local confirm = require('kimi.confirm')
    for _ = 1, 3 do
      vim.api.nvim_feedkeys('csd', 't', false)
      vim.cmd('6,8KimiFix')
      wait(120000, function()
        return has('end') ~= nil
      end, 'progress end of the Fix asked about')
      if not (has('end').message or ''):find('not verified', 1, true) then
        break
      end
      -- gopls was still loading the module (a loaded machine): the edit
      -- landed unverified; undone, the Fix is asked again of a warm gopls.
      out('info: ' .. has('end').message .. '; asking again')
      vim.api.nvim_set_current_win(code_win)
      if not vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original) then
        vim.cmd('normal! u')
      end
      vim.api.nvim_input('<Esc>')
      progress.history, confirm.asked = {}, {}
    end
    local asked = confirm.asked
    check(#asked == 3, 'asked three times (the change, the errors, the choice)', vim.inspect(asked))
    local q = asked[1] or { message = '', choices = {} }
    check(q.message:match('^Kimi: Fix — the edit brings 1 new error: undefined: c') ~= nil and not q.message:find('Kimi: Kimi', 1, true),
      'the question names the job once', q.message)
    check(vim.deep_equal(q.choices, { '&Apply anyway', '&Discard', '&Show the errors', 'Show the &change' }), 'one key per choice', vim.inspect(q.choices))
    local cb = vim.fn.bufnr('kimi://proposed-change.diff')
    local cl = cb > 0 and table.concat(vim.api.nvim_buf_get_lines(cb, 0, -1, false), '\n') or ''
    check(cl:find('-\treturn a - b\n+\treturn a + c', 1, true) ~= nil and vim.bo[cb].filetype == 'diff', 'the proposed change is a diff buffer', cl)
    check(cb > 0 and vim.fn.bufwinid(cb) ~= -1, 'shown in a window', tostring(cb))
    local qf = vim.fn.getqflist({ items = 1, title = 1, winid = 1 })
    local item = qf.items[1] or {}
    check(#qf.items == 1 and item.lnum == 7 and (item.text or ''):find('undefined: c', 1, true) ~= nil
      and vim.fn.bufname(item.bufnr or 0):match('main%.go$') ~= nil, "gopls's error is in the quickfix list, at its line", vim.inspect(qf))
    check((qf.winid or 0) ~= 0, 'the quickfix window is open', vim.inspect(qf))
    check(vim.api.nvim_get_current_win() == code_win, 'the cursor stays in the code window')
    local e = has('end')
    check((e.message or ''):find('discarded by your choice', 1, true) ~= nil, 'd discarded the edit', e.message)
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'the code is unchanged')
  elseif scenario == 'definitions_helper' then
    -- :KimiDocument on run.go's conn.Close() until the stand-in's last
    -- prompt holds B's Close (nvim.test.mjs checks every prompt), 40 times
    -- or 60 s at most: the first action starts gopls without waiting.
    local function last_prompt()
      local f = io.open(os.getenv('KIMI_STANDIN_LOG') or '', 'r')
      local text = f and f:read('*a') or ''
      if f then
        f:close()
      end
      local lines = vim.split(vim.trim(text), '\n')
      return lines[#lines] or '', #text > 0 and #lines or 0
    end
    local function ends()
      local n = 0
      for _, e in ipairs(progress.history) do
        if e.kind == 'end' then
          n = n + 1
        end
      end
      return n
    end
    local deadline, tries, found = vim.loop.now() + 60000, 0, false
    repeat
      tries = tries + 1
      local before = ends()
      vim.cmd('5KimiDocument')
      wait(30000, function()
        return ends() > before
      end, 'the end of :KimiDocument ' .. tries)
      local p, n = last_prompt()
      if n ~= tries then
        check(false, 'one provider request per :KimiDocument', string.format('%d requests after %d', n, tries))
        finish()
      end
      found = p:find('Close closes the B connection', 1, true) ~= nil
      if not found then
        vim.wait(500, function()
          return false
        end, 50)
      end
    until found or tries >= 40 or vim.loop.now() > deadline
    check(found, "B's Close reached the prompt", string.format('after %d actions', tries))
    check(vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), original), 'the code is unchanged')
  else
    check(false, 'known scenario', tostring(scenario))
  end
end)
if not ok then
  check(false, 'scenario ran without a Lua error', tostring(err))
end
finish()
