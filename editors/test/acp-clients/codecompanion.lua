-- Drives CodeCompanion's chat, headless, against `kimi-lsp acp` (run by
-- editors/test/acp-clients.mjs, which sets the environment): a turn that
-- reads calc.go and answers, then a turn whose answer edits it, answered
-- with the key a user would press (CC_ANSWER: "accept" or "reject").
-- It writes what the user saw to CC_OUT as JSON and quits.
local plugins = vim.split(vim.env.CC_RTP, ":", { plain = true })
for _, p in ipairs(plugins) do
  vim.opt.rtp:prepend(p)
end
vim.opt.swapfile = false

local out = { steps = {} }
local function step(name, value)
  io.stderr:write("codecompanion.lua: " .. name .. "\n")
  table.insert(out.steps, { name = name, value = value })
end
local function finish(err)
  out.error = err
  -- CodeCompanion's RPC logs live in Neovim's temporary directory, which
  -- goes with it: keep them beside the result.
  local tmp = vim.fn.fnamemodify(vim.fn.tempname(), ":h")
  for _, f in ipairs(vim.fn.glob(tmp .. "/*.log", false, true)) do
    vim.fn.writefile(vim.fn.readfile(f), vim.env.CC_OUT .. "." .. vim.fn.fnamemodify(f, ":t"))
  end
  local f = assert(io.open(vim.env.CC_OUT, "w"))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd("qall!")
end

-- The setup of editors/README.md, with the binary built for this run.
require("codecompanion").setup({
  adapters = {
    acp = {
      kimi_lsp = function()
        return require("codecompanion.adapters").extend("goose", {
          name = "kimi_lsp",
          formatted_name = "Kimi (kimi-lsp)",
          commands = { default = { vim.env.KIMI_LSP_BIN, "acp" } },
        })
      end,
    },
  },
  interactions = { chat = { adapter = "kimi_lsp" } },
  opts = { log_level = "DEBUG" },
})

local done = 0
vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanionChatDone",
  callback = function()
    done = done + 1
  end,
})
local asked = 0
vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanionToolApprovalRequested",
  callback = function()
    asked = asked + 1
  end,
})

local function text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

-- press runs the chat buffer's normal-mode mapping lhs, as a keypress would.
local function press(bufnr, lhs)
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(bufnr, "n")) do
    if m.lhs == lhs then
      vim.api.nvim_buf_call(bufnr, m.callback)
      return true
    end
  end
  return false
end

local bound = tonumber(vim.env.CC_BOUND_MS or "60000")
local function run()
  -- As a user does: open the chat, let it connect (CodeCompanion starts
  -- the agent when the chat opens), then type and submit.
  require("codecompanion").chat()
  local chat = require("codecompanion").last_chat()
  assert(chat, "no chat opened")
  if not vim.wait(bound, function() return chat.acp_connection and chat.acp_connection:is_ready() end, 50) then
    error("the chat did not connect to the agent")
  end
  chat:add_buf_message({ role = "user", content = "KIMI-READ what does Mul in calc.go do?" })
  chat:submit()
  if not vim.wait(bound, function() return done >= 1 end, 50) then
    step("turn1", text(chat.bufnr))
    error("the first turn did not end")
  end
  step("turn1", text(chat.bufnr))
  local conn = chat.acp_connection
  step("config_options", conn and conn:get_config_options() or vim.NIL)
  step("models", conn and conn:get_models() or vim.NIL)
  step("tokens", chat.tokens or vim.NIL)

  chat:add_buf_message({ role = "user", content = "KIMI-EDIT please fix Mul" })
  chat:submit()
  if not vim.wait(bound, function() return asked >= 1 end, 50) then
    step("asking", text(chat.bufnr))
    error("no permission question")
  end
  step("asking", text(chat.bufnr))
  local keys = require("codecompanion.interactions.chat.tools.labels").keymaps()
  local lhs = keys[vim.env.CC_ANSWER]
  step("pressed", lhs)
  assert(press(chat.bufnr, lhs), "no mapping " .. tostring(lhs) .. " in the chat buffer")
  if not vim.wait(bound, function() return done >= 2 end, 50) then
    step("turn2", text(chat.bufnr))
    error("the second turn did not end")
  end
  step("turn2", text(chat.bufnr))
  step("tokens2", chat.tokens or vim.NIL)
  chat:close()
end

-- With a LuaJIT built with Lua 5.2 compatibility (Debian's),
-- coroutine.running() names the main thread (and true) where plain LuaJIT
-- returns nil; CodeCompanion's ACP requests then take their async path (a
-- yield) from the main thread and fail ("attempt to yield across C-call
-- boundary"). Plain LuaJIT's answer, as CodeCompanion expects:
local running = coroutine.running
coroutine.running = function()
  local co, main = running()
  if main then
    return nil
  end
  return co
end

-- Run once the start-up is over.
vim.schedule(function()
  local ok, err = xpcall(run, debug.traceback)
  finish(not ok and tostring(err) or nil)
end)
