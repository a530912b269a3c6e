-- kimi.notice: a notice the user must see while typing, such as the budget
-- pause ("inline completion is paused until 18:00, and so are next edits").
-- vim.notify alone echoes it on the command line, where the next mode
-- message or keystroke replaces it: it was only found in :messages. So the
-- notice is also drawn in a float at the top right of the editor, kept for
-- M.seconds (or until the next notice), without taking the cursor; it still
-- goes to :messages through vim.notify.
local M = {}

--- seconds is how long a notice stays.
M.seconds = 20
local state = { win = nil, buf = nil, timer = nil }

--- is_pause tells whether a server message says a budget paused the
--- surfaces that run on their own (lsp's ledger notice, spend.CapMessage).
function M.is_pause(msg)
  return type(msg) == 'string' and msg:find('budget', 1, true) ~= nil and msg:find('paused until', 1, true) ~= nil
end

--- wrap splits text into lines of at most width display cells, at spaces.
local function wrap(text, width)
  local lines, line = {}, ''
  for word in text:gmatch('%S+') do
    if line == '' then
      line = word
    elseif vim.fn.strdisplaywidth(line .. ' ' .. word) <= width then
      line = line .. ' ' .. word
    else
      table.insert(lines, line)
      line = word
    end
  end
  if line ~= '' then
    table.insert(lines, line)
  end
  return lines
end

--- close closes the notice float, if one is open.
function M.close()
  if state.timer then
    state.timer:stop()
    state.timer:close()
    state.timer = nil
  end
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    pcall(vim.api.nvim_win_close, state.win, true)
  end
  state.win = nil
end

--- window is the notice float while it is open, else nil.
function M.window()
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    return state.win
  end
end

--- show draws text in the notice float (replacing the one shown) and
--- closes it after M.seconds.
function M.show(text)
  M.close()
  local width = math.max(20, math.min(60, vim.o.columns - 4))
  local lines = wrap(text, width)
  local w = 1
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_option(state.buf, 'bufhidden', 'hide')
  end
  vim.api.nvim_buf_set_lines(state.buf, 0, -1, false, lines)
  -- At the top right, its border included (computed: an NE anchor is
  -- placed differently across versions).
  local ok, win = pcall(vim.api.nvim_open_win, state.buf, false, {
    relative = 'editor',
    row = 1,
    col = math.max(0, vim.o.columns - w - 3),
    width = w,
    height = #lines,
    style = 'minimal',
    border = 'rounded',
    focusable = false,
    noautocmd = true,
  })
  if not ok then
    return
  end
  state.win = win
  pcall(vim.api.nvim_win_set_option, win, 'winhighlight', 'Normal:WarningMsg,FloatBorder:WarningMsg')
  state.timer = vim.loop.new_timer()
  state.timer:start(M.seconds * 1000, 0, vim.schedule_wrap(M.close))
end

return M
