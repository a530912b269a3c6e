-- Inline completion scenarios of the kimi Neovim plugin, run by
-- scenario.lua (whose check and finish it is given) for KIMI_SCENARIO =
-- completion (the plugin's own ghost text, 0.7-0.11) or completion_builtin
-- (vim.lsp.inline_completion, 0.12+).
--
-- Keys are typed with nvim_input and processed by Neovim's main loop, as a
-- user's would be (insert mode, TextChangedI, the plugin's maps); the steps
-- run in a coroutine that a timer resumes.
local h = ...
local check, finish = h.check, h.finish
local file = os.getenv('KIMI_FILE')
local builtin = os.getenv('KIMI_SCENARIO') == 'completion_builtin'

local co
--- sleep yields to the main loop for ms milliseconds.
local function sleep(ms)
  coroutine.yield(ms)
end
--- wait polls cond every 20 ms for up to ms; the main loop runs meanwhile.
local function wait(ms, cond, what)
  local deadline = vim.loop.now() + ms
  while not cond() do
    if vim.loop.now() > deadline then
      check(false, 'waiting for ' .. what, 'timed out after ' .. ms .. ' ms')
      finish()
      sleep(100000)
    end
    sleep(20)
  end
end
--- type feeds keys as if typed and lets Neovim process them.
local function type(keys)
  vim.api.nvim_input(keys)
  sleep(30)
end

--- requests counts the requests the stand-in logged on stderr.
local function requests()
  local f = io.open(os.getenv('KIMI_STANDIN_STDERR') or '', 'r')
  if not f then
    return 0
  end
  local s = f:read('*a')
  f:close()
  local n = 0
  for _ in s:gmatch('modeltest: request') do
    n = n + 1
  end
  return n
end

local bufnr
--- ghost returns the ghost text shown in the buffer ('' for none): the
--- plugin's own namespace, or Neovim's (0.12).
local function ghost()
  local name = builtin and 'nvim.lsp.inline_completion' or 'kimi_completion'
  local id = vim.api.nvim_get_namespaces()[name]
  if not id then
    return ''
  end
  local parts = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, id, 0, -1, { details = true })) do
    local d = m[4] or {}
    for _, chunk in ipairs(d.virt_text or {}) do
      table.insert(parts, chunk[1])
    end
    for _, l in ipairs(d.virt_lines or {}) do
      table.insert(parts, '\n')
      for _, chunk in ipairs(l) do
        table.insert(parts, chunk[1])
      end
    end
  end
  return table.concat(parts)
end
local function line()
  return vim.api.nvim_get_current_line()
end

local SUGGESTION = 'intln(Add(40, 2))'

local function steps()
  local kimi = require('kimi')
  local completion = require('kimi.completion')
  kimi.setup({
    cmd = { os.getenv('KIMI_LSP_BIN') },
    progress = 'none',
    -- next edits would add provider requests of their own to the counts below
    settings = { completion = { debounceMs = 50 }, nextEdit = { enable = false } },
    completion = { builtin = builtin },
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  vim.bo.autoindent = false -- the typed <Tab> is the indentation
  bufnr = vim.api.nvim_get_current_buf()
  wait(15000, function()
    local c = require('kimi.util').clients('kimi', bufnr)[1]
    return c ~= nil and c.initialized == true
  end, 'kimi-lsp to attach')
  local client = require('kimi.util').clients('kimi', bufnr)[1]
  check(client.server_capabilities.inlineCompletionProvider == true, 'the server offers inline completion')
  check(client.server_capabilities.completionProvider == nil, 'and no completion items to a client with inline completion')
  check(completion.builtin() == builtin, 'the ' .. (builtin and 'built-in' or "plugin's own") .. ' ghost text is used')

  -- Shown: type on a new line in main; <Tab> inserts a tab while nothing
  -- is shown.
  vim.api.nvim_win_set_cursor(0, { 11, 0 })
  type('o<Tab>fmt.Pr')
  wait(20000, function()
    return ghost() == SUGGESTION
  end, 'the ghost text ' .. SUGGESTION)
  check(line() == '\tfmt.Pr', 'the ghost text is not in the buffer', line())
  -- Issue 21 item 20: without termguicolors (headless: off) the ghost
  -- text's group must have a terminal colour; 0.12's ComplHint had none.
  check(not vim.o.termguicolors, 'termguicolors is off here')
  local groups = {}
  do
    local name = builtin and 'nvim.lsp.inline_completion' or 'kimi_completion'
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, vim.api.nvim_get_namespaces()[name], 0, -1, { details = true })) do
      for _, chunk in ipairs((m[4] or {}).virt_text or {}) do
        if chunk[2] then
          table.insert(groups, _G.type(chunk[2]) == 'table' and chunk[2][#chunk[2]] or chunk[2]) -- type() here types keys
        end
      end
    end
  end
  check(#groups > 0, 'the ghost text has a highlight group', vim.inspect(groups))
  for _, g in ipairs(groups) do
    local name = _G.type(g) == 'number' and vim.fn.synIDattr(g, 'name') or g
    local cterm
    if vim.api.nvim_get_hl then
      cterm = vim.api.nvim_get_hl(0, { name = name, link = false }).ctermfg
    else
      cterm = vim.api.nvim_get_hl_by_name(name, false).foreground
    end
    check(cterm ~= nil, 'the ghost text group ' .. tostring(g) .. ' has a terminal colour', vim.inspect(groups))
  end
  -- The stand-in logs a request once its reply has ended.
  wait(5000, function()
    return requests() >= 1
  end, 'the stand-in to log the request')
  local asked = requests()

  if not builtin then
    -- Typing what the suggestion says keeps it, minus what was typed, and
    -- the server answers from it without asking the provider.
    type('i')
    check(ghost() == 'ntln(Add(40, 2))', 'typing its first letter keeps the rest shown', ghost())
    sleep(600)
    check(ghost() == 'ntln(Add(40, 2))', 'and it stays after the server answered', ghost())
    check(requests() == asked, 'no provider request for typing into the suggestion', requests() .. ' vs ' .. asked)
    -- Accept the next word.
    type('<C-Right>')
    sleep(50)
    check(line() == '\tfmt.Println', 'the word key accepts up to the end of the word', line())
    check(ghost() == '(Add(40, 2))', 'the rest stays shown', ghost())
  end

  -- Accepted.
  type('<Tab>')
  wait(5000, function()
    return line() == '\tfmt.Println(Add(40, 2))'
  end, 'the accepted line')
  check(vim.api.nvim_get_mode().mode == 'i', 'still in insert mode')
  local cur = vim.api.nvim_win_get_cursor(0)
  check(cur[2] == #'\tfmt.Println(Add(40, 2))', 'the cursor is after the inserted text', vim.inspect(cur))

  -- Dismissed.
  type('<Esc>o<Tab>fmt.Pr')
  wait(20000, function()
    return ghost() == SUGGESTION
  end, 'the ghost text on the next line')
  type('<C-]>')
  wait(2000, function()
    return ghost() == ''
  end, 'the ghost text to go after the dismiss key')
  check(line() == '\tfmt.Pr', 'dismissing leaves the text as typed', line())

  if builtin then
    -- Cleared by typing that diverges, at the key (Neovim itself keeps the
    -- old item drawn until its next request, 200 ms later, is answered),
    -- and the server's answer for the new text is nothing: the stand-in
    -- answers the whole line again, which does not continue "fmt.Prx".
    type('<Esc>o<Tab>fmt.Pr')
    wait(20000, function()
      return ghost() == SUGGESTION
    end, 'the ghost text again')
    local asked_before = requests()
    type('x')
    check(ghost() == '', 'typing something else clears it at once', ghost())
    wait(5000, function()
      return requests() > asked_before
    end, 'the request for the new text to reach the stand-in')
    sleep(300)
    check(ghost() == '', 'and the answer for the new text shows nothing', ghost())
    type('<Tab>')
    check(line() == '\tfmt.Prx\t', 'the accept key is a plain <Tab> then', line())
  end
  if not builtin then
    -- Cleared by typing that diverges.
    type('<Esc>o<Tab>fmt.Pr')
    wait(20000, function()
      return ghost() == SUGGESTION
    end, 'the ghost text again')
    type('x')
    check(ghost() ~= SUGGESTION and ghost():sub(2) ~= SUGGESTION:sub(2), 'typing something else clears it at once', ghost())
    -- Cleared on leaving insert mode.
    type('<Esc>')
    check(ghost() == '', 'leaving insert mode clears it', ghost())

    -- :KimiCompletion off: no request, nothing shown.
    vim.cmd('KimiCompletion off')
    local before = requests()
    type('o<Tab>fmt.Pr')
    sleep(800)
    check(ghost() == '', ':KimiCompletion off shows nothing', ghost())
    check(requests() == before, ':KimiCompletion off asks nothing', requests() .. ' vs ' .. before)
    type('<Esc>')
    vim.cmd('KimiCompletion on')
    check(completion.enabled, ':KimiCompletion on')
  end
  type('<Esc>')
  finish()
end

co = coroutine.create(function()
  local ok, err = pcall(steps)
  if not ok then
    check(false, 'scenario ran without a Lua error', tostring(err))
    finish()
  end
end)
local function resume()
  local ok, ms = coroutine.resume(co)
  if not ok then
    check(false, 'scenario coroutine', tostring(ms))
    finish()
  elseif coroutine.status(co) ~= 'dead' then
    vim.defer_fn(resume, ms or 0)
  end
end
resume()
