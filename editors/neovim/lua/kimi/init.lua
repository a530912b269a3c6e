-- kimi: Neovim client for the kimi-lsp language server.
--
--   require("kimi").setup{ settings = { model = "kimi-k3.1-pro" } }
--
-- Starts kimi-lsp beside your other language servers (vim.lsp.config and
-- vim.lsp.enable on 0.11+, vim.lsp.start on 0.8-0.10, vim.lsp.start_client on
-- 0.7), and adds :KimiExplain, :KimiFix, :KimiRewrite {instruction},
-- :KimiDocument, :KimiTests, :KimiCancel [job], :KimiStats, :KimiRequests working on the
-- visual range. Progress streams into a small floating window (or your
-- statusline via require("kimi").statusline()); explanations open in a
-- scratch markdown split; edits arrive through workspace/applyEdit, so `u`
-- undoes them.
local util = require('kimi.util')
local progress = require('kimi.progress')
local explain = require('kimi.explain')
local edits = require('kimi.edits')
local completion = require('kimi.completion')
local nextedit = require('kimi.nextedit')

local M = {}

M.name = 'kimi'
M.install_hint = 'run `go install ./cmd/kimi-lsp` in your clone of the kimi-lsp repository'

local defaults = {
  -- The server command; --stdio is accepted and harmless.
  cmd = { 'kimi-lsp' },
  -- Extra environment for the server (e.g. { KIMI_BASE_URL = "..." }).
  cmd_env = nil,
  -- Filetypes to attach to; nil: every buffer backed by a file.
  filetypes = nil,
  -- Files or directories that mark a workspace root.
  root_markers = { '.git', 'go.mod', 'package.json', 'Cargo.toml', 'pyproject.toml', '.hg' },
  -- The server's `kimi` section: model, fastModel, baseURL, reasoningEffort,
  -- maxCompletionTokens, cacheTTL, actions, context, progress.
  settings = {},
  -- Optional command whose output is the API key, e.g. { "pass", "show", "kimi" }.
  -- Otherwise the server reads KIMI_API_KEY or its config file.
  api_key_cmd = nil,
  -- Advertise window/showDocument and open explanation files ourselves (also
  -- on 0.7). false: the server sends the text with window/showMessage.
  show_document = true,
  -- 'float', 'statusline' (only require("kimi").statusline()) or 'none'.
  progress = 'float',
  -- Split command for explanations, and whether the split takes the cursor.
  explanation_split = 'botright vsplit',
  explanation_focus = false,
  -- Called after the client attached to a buffer.
  on_attach = nil,
  -- Inline completion (ghost text): see require("kimi.completion") and
  -- :help kimi-completion. { enabled = false } turns it off.
  completion = {},
  -- Next-edit suggestions: see require("kimi.nextedit"). key (default
  -- "<Tab>" in normal mode, while a suggestion exists) jumps to it, then
  -- applies it; dismiss (unset) drops it; { enabled = false } shows none.
  next_edit = {},
}

M.config = vim.deepcopy(defaults)
--- jobs maps a job id returned by the server to {command, bufnr}.
M.jobs = {}
--- last_stats is the latest kimi.stats answer.
M.last_stats = nil
--- last_error is the latest error a command reported.
M.last_error = nil

local warned_missing = false
local clients_by_root = {} -- 0.7 only: root -> client id

local notify = util.tell

local function api_key()
  local c = M.config.api_key_cmd
  if not c then
    return nil
  end
  local out = vim.fn.system(c)
  if vim.v.shell_error ~= 0 then
    notify('api_key_cmd failed (exit ' .. vim.v.shell_error .. ')', vim.log.levels.ERROR)
    return nil
  end
  out = out:gsub('%s+$', '')
  if out == '' then
    return nil
  end
  return out
end

--- section returns the `kimi` configuration section sent to the server,
--- with empty tables that stand for objects encoded as {} (see
--- util.json_objects): `settings = {}` is an empty object, not a list.
function M.section()
  local s = vim.deepcopy(M.config.settings or {})
  local key = api_key()
  if key then
    s.apiKey = key
  end
  return util.json_objects(s)
end

local function progress_handler(default)
  return function(err, result, ctx, config)
    if result then
      progress.update(ctx.client_id, result)
    end
    if default then
      return default(err, result, ctx, config)
    end
  end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.window.showDocument = { support = M.config.show_document and true or false }
  -- Neovim's apply_workspace_edit handles versioned TextDocumentEdits on every
  -- version, but 0.7 does not say so; with it the server sends edits tied to
  -- the buffer version it computed them against instead of bare `changes`.
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  -- Edits to confirm hunk by hunk (edits.confirm) get kimi.confirm's review
  -- buffer; Neovim itself would apply such an edit whole.
  caps.workspace.workspaceEdit.changeAnnotationSupport = { groupsOnLabel = false }
  return completion.capabilities(caps)
end

local function handlers()
  local h = {
    ['window/showMessage'] = explain.show_message,
    ['window/showMessageRequest'] = require('kimi.confirm').ask_message,
    ['workspace/applyEdit'] = edits.apply_edit,
    ['$/kimi/completionStatus'] = completion.on_status,
    ['textDocument/publishDiagnostics'] = nextedit.on_diagnostics(vim.lsp.handlers['textDocument/publishDiagnostics']),
  }
  if vim.lsp.handlers['textDocument/diagnostic'] then
    h['textDocument/diagnostic'] = nextedit.on_pulled(vim.lsp.handlers['textDocument/diagnostic'])
  end
  if M.config.show_document then
    h['window/showDocument'] = explain.show_document
  end
  -- 0.10+ fires LspProgress, which setup() listens to; older versions need
  -- the $/progress handler wrapped.
  if not util.has('0.10') then
    h['$/progress'] = progress_handler(vim.lsp.handlers['$/progress'])
  end
  return h
end

local function on_attach(client, bufnr)
  completion.on_attach(client, bufnr)
  nextedit.on_attach(client, bufnr)
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

local function base_config()
  local section = M.section()
  return {
    name = M.name,
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    init_options = { kimi = section },
    settings = { kimi = section },
    capabilities = capabilities(),
    handlers = handlers(),
    on_attach = on_attach,
    on_exit = function(_, _, client_id)
      progress.reset()
      nextedit.forget(client_id)
    end,
    flags = { debounce_text_changes = 150 },
  }
end

local function check_binary()
  local exe = M.config.cmd[1]
  if vim.fn.executable(exe) == 1 then
    return true
  end
  if not warned_missing then
    warned_missing = true
    notify(string.format('cannot find %q. Install it with `%s` (or build it in the repository: '
      .. '`go build -o kimi-lsp ./cmd/kimi-lsp`) and set cmd in require("kimi").setup{}.',
      exe, M.install_hint), vim.log.levels.ERROR)
  end
  return false
end

local function wanted(bufnr)
  if vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  local ft = vim.api.nvim_buf_get_option(bufnr, 'filetype')
  if M.config.filetypes then
    return vim.tbl_contains(M.config.filetypes, ft)
  end
  return true
end

--- attach starts (or reuses) the kimi client for bufnr's root and attaches it.
--- Returns the client id, or nil.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not wanted(bufnr) or not check_binary() then
    return nil
  end
  local existing = util.clients(M.name, bufnr)[1]
  if existing then
    return existing.id
  end
  local root = util.root(vim.api.nvim_buf_get_name(bufnr), M.config.root_markers)
  local cfg = base_config()
  cfg.root_dir = root
  cfg.workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } }
  if vim.lsp.start then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(cfg)
    if not id then
      notify('failed to start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

local function client_for(bufnr)
  local c = util.clients(M.name, bufnr)[1]
  if c then
    return c
  end
  local id = M.attach(bufnr)
  if id then
    return vim.lsp.get_client_by_id(id)
  end
  return nil
end

local function any_client()
  return util.clients(M.name, vim.api.nvim_get_current_buf())[1] or util.clients(M.name)[1]
end

--- execute sends workspace/executeCommand; on_result gets the result.
function M.execute(client, command, argument, bufnr, on_result)
  local params = { command = command, arguments = argument and { argument } or {} }
  util.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      M.last_error = err.message or tostring(err)
      notify(command .. ' failed: ' .. M.last_error, vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

--- run starts one of the server's edit/explain commands on the range.
--- opts: user-command opts (line1, line2, range); extra: added argument fields.
function M.run(command, opts, extra)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then
    notify('kimi-lsp is not attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local encoding = client.offset_encoding or 'utf-16'
  local range = util.range(bufnr, opts or {}, encoding)
  local arg = { uri = vim.uri_from_bufnr(bufnr), range = range }
  if command == 'kimi.fix' then
    local diags = util.diagnostics(bufnr, range.start.line, range['end'].line)
    if #diags > 0 then
      arg.diagnostics = diags
    end
  end
  for k, v in pairs(extra or {}) do
    arg[k] = v
  end
  M.execute(client, command, arg, bufnr, function(result)
    if type(result) == 'table' and result.job ~= nil then
      M.jobs[tostring(result.job)] = { command = command, bufnr = bufnr }
    end
  end)
end

--- review runs Kimi: Review: the range given (a visual selection), the
--- whole buffer without one, or with diff the uncommitted changes against
--- HEAD. Findings arrive as diagnostics (source "kimi"), each with a
--- "Kimi: Fix: …" quick fix in vim.lsp.buf.code_action().
function M.review(opts, diff)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr) or any_client()
  if not client then
    notify('kimi-lsp is not running', vim.log.levels.ERROR)
    return
  end
  local arg
  if diff then
    arg = { diff = true }
  else
    arg = { uri = vim.uri_from_bufnr(bufnr) }
    if opts and opts.range and opts.range > 0 then
      arg.range = util.range(bufnr, opts, client.offset_encoding or 'utf-16')
    end
  end
  M.execute(client, 'kimi.review', arg, bufnr, function(result)
    if type(result) == 'table' and result.job ~= nil then
      M.jobs[tostring(result.job)] = { command = 'kimi.review', bufnr = bufnr }
    end
  end)
end

--- clear_review clears the findings of the current buffer (all with bang).
function M.clear_review(all)
  local client = any_client()
  if not client then
    return
  end
  local arg = all and vim.empty_dict() or { uri = vim.uri_from_bufnr(0) }
  M.execute(client, 'kimi.clearReview', arg, nil, nil)
end

--- cancel stops one job (by id) or all of them through kimi.cancel.
function M.cancel(job)
  local client = any_client()
  if not client then
    notify('kimi-lsp is not running', vim.log.levels.WARN)
    return
  end
  local arg = vim.empty_dict()
  if job and job ~= '' then
    arg = { job = job }
  end
  M.execute(client, 'kimi.cancel', arg, nil, nil)
end

--- stats_lines lays a kimi.stats answer out one figure per line, for the
--- :KimiStats float (one long line made a hit-enter prompt).
local function stats_lines(s)
  local ratio = s.hitRatio
  if type(ratio) ~= 'number' and type(s.promptTokens) == 'number' and s.promptTokens > 0 then
    ratio = (s.cachedTokens or 0) / s.promptTokens
  end
  local lines = {
    string.format('Requests          %s', s.requests or 0),
    string.format('Prompt tokens     %s', s.promptTokens or 0),
    string.format('  cached          %s', s.cachedTokens or 0),
    string.format('  written         %s', s.cacheWriteTokens or 0),
    'Cache hit ratio   ' .. (type(ratio) == 'number' and string.format('%d%%', math.floor(ratio * 100 + 0.5)) or 'n/a'),
  }
  local cost = type(s.cost) == 'number' and s.cost or s.costUSD
  if type(cost) == 'number' then
    table.insert(lines, string.format('Cost              $%.4f', cost))
  end
  local c = s.completion
  if type(c) == 'table' and (c.requested or 0) > 0 then
    vim.list_extend(lines, {
      'Inline completion',
      string.format('  asked           %d', c.requested),
      string.format('  shown           %d', c.shown or 0),
      string.format('  reused          %d', c.reused or 0),
      string.format('  provider asked  %d', c.providerRequests or 0),
      string.format('  cost            $%.4f', c.costUSD or 0),
    })
  end
  local sp = s.spend
  if type(sp) == 'table' and type(sp.hour) == 'table' and type(sp.day) == 'table' then
    local function window(w, when)
      local limit = (w.limitUSD or 0) > 0 and string.format('budget %s', M.usd(w.limitUSD)) or 'no budget'
      return string.format('  %-16s%s (%s)', when, M.usd(w.spentUSD or 0), limit)
    end
    vim.list_extend(lines, { 'Spend (every surface, every editor)', window(sp.hour, 'this hour'), window(sp.day, 'today') })
    if sp.capped and type(sp.cap) == 'table' then
      table.insert(lines, string.format('  the %s budget is spent until %s', sp.cap.name or '?', M.local_time(sp.cap.ends)))
    end
  end
  local v = s.verify
  if type(v) == 'table' then
    local edits = (v.verified or 0) + (v.withNewErrors or 0) + (v.unverified or 0)
    if edits > 0 then
      vim.list_extend(lines, {
        'Verified edits',
        string.format('  verified        %d', v.verified or 0),
        string.format('  after a repair  %d (%d tokens)', v.repaired or 0, v.repairTokens or 0),
        string.format('  new errors      %d', v.withNewErrors or 0),
        string.format('  not verified    %d', v.unverified or 0),
      })
    end
    if (v.contextActions or 0) > 0 then
      vim.list_extend(lines, {
        'Context from the language server',
        string.format('  actions         %d', v.contextActions),
        string.format('  names located   %d of %d', v.definitionsLocated or 0, v.definitionNames or 0),
      })
    end
  end
  local n = s.nextEdit
  if type(n) == 'table' and (n.requested or 0) > 0 then
    vim.list_extend(lines, {
      'Next edits',
      string.format('  requested       %d', n.requested),
      string.format('  shown           %d', n.shown or 0),
      string.format('  accepted        %d', n.accepted or 0),
      string.format('  dismissed       %d', n.dismissed or 0),
      string.format('  cost            $%.4f', n.costUSD or 0),
    })
  end
  if type(s.trust) == 'table' and #s.trust > 0 then
    table.insert(lines, 'Trust')
    for _, f in ipairs(s.trust) do
      table.insert(lines, string.format('  %s: %s', vim.fn.fnamemodify(f.folder or '?', ':~'), f.why or '?'))
    end
    for _, f in ipairs(s.trust) do
      if not f.trusted then
        table.insert(lines, '  untrusted: helpers run restricted; :!kimi-lsp trust DIR lifts it')
        break
      end
    end
  end
  return lines
end
M.stats_lines = stats_lines

--- local_time words an RFC 3339 time (the server's JSON times, in any
--- zone) in local time as the server's notices do: "18:00" today, else
--- "Thu 3 Dec 00:00"; anything else is returned as it is.
function M.local_time(s, now)
  if type(s) ~= 'string' then
    return '?'
  end
  local y, mo, d, h, mi, sec, zone = s:match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.?%d*(.*)$')
  if not y then
    return s
  end
  local offset -- of the zone, east of UTC, in seconds
  if zone == 'Z' or zone == 'z' then
    offset = 0
  else
    local sign, zh, zm = zone:match('^([+-])(%d%d):?(%d%d)$')
    if not sign then
      return s
    end
    offset = (tonumber(zh) * 3600 + tonumber(zm) * 60) * (sign == '-' and -1 or 1)
  end
  -- os.time reads a table as local time: the UTC fields of the instant,
  -- read so, are off by the local zone's offset at that instant.
  local fields = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(sec) }
  local as_local = os.time(fields)
  local utc_fields = os.date('!*t', as_local)
  utc_fields.isdst = nil
  local local_offset = as_local - os.time(utc_fields)
  local t = as_local + local_offset - offset
  now = now or os.time()
  if os.date('%Y-%m-%d', t) == os.date('%Y-%m-%d', now) then
    return os.date('%H:%M', t)
  end
  return (os.date('%a %d %b %H:%M', t):gsub(' 0(%d) ', ' %1 '))
end

--- usd formats a cost: four decimals under a dollar, two above.
function M.usd(v)
  if math.abs(v) < 1 then
    return string.format('$%.4f', v)
  end
  return string.format('$%.2f', v)
end

--- count formats a number with thousands separators.
local function count(n)
  local s = tostring(math.floor(n or 0))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- requests_first is the line of requests_lines that holds the newest
--- request (after the title, a blank line and the column names).
local requests_first = 4

--- requests_lines lays kimi.requests (oldest first, as the server sends
--- them) out as a table, newest first, each request's files with their
--- sizes on the line below it (metadata only: the server never records
--- contents).
local function requests_lines(list)
  if type(list) ~= 'table' or #list == 0 then
    return { 'No requests recorded yet.' }
  end
  local lines = {
    'What left the machine: the newest ' .. #list .. ' requests, newest first (metadata only, never contents)',
    '',
    string.format('%-20s %-12s %-24s %8s %8s %8s %7s %9s  %s', 'TIME', 'SURFACE', 'MODEL', 'PROMPT', 'CACHED', 'WRITTEN', 'OUTPUT', 'COST', 'OUTCOME'),
  }
  local total = 0
  for i = #list, 1, -1 do
    local r = list[i]
    local cost = r.unpriced and 'unpriced' or ((r.estimated and '~' or '') .. M.usd(r.costUSD or 0))
    total = total + (r.costUSD or 0)
    local time = tostring(r.time or ''):gsub('T', ' '):gsub('%.%d+', ''):sub(1, 19)
    table.insert(lines, string.format('%-20s %-12s %-24s %8s %8s %8s %7s %9s  %s', time, r.surface or '', r.model or '',
      count(r.promptTokens), count(r.cachedTokens), count(r.writtenTokens), count(r.outputTokens), cost, r.outcome or ''))
    local files = {}
    for _, f in ipairs(type(r.files) == 'table' and r.files or {}) do
      table.insert(files, string.format('%s (%s B)', f.path, count(f.bytes)))
    end
    if (r.moreFiles or 0) > 0 then
      table.insert(files, string.format('and %d more', r.moreFiles))
    end
    if #files > 0 then
      table.insert(lines, '    files: ' .. table.concat(files, ', '))
    end
  end
  table.insert(lines, '')
  table.insert(lines, string.format('Total: %s for %d requests (at the configured prices)', M.usd(total), #list))
  return lines
end
M.requests_lines = requests_lines

--- requests asks for kimi.requests (the newest last, default 50) and opens
--- them in a scratch buffer; cb (optional) gets the list.
function M.requests(last, cb)
  local client = any_client()
  if not client then
    notify('kimi-lsp is not running', vim.log.levels.WARN)
    return
  end
  M.execute(client, 'kimi.requests', { last = last or 50 }, nil, function(result)
    local list = type(result) == 'table' and result.requests or {}
    if list == vim.NIL then
      list = {}
    end
    local old = vim.fn.bufnr('kimi://requests')
    if old > 0 then
      pcall(vim.api.nvim_buf_delete, old, { force = true })
    end
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_name(buf, 'kimi://requests')
    local lines = requests_lines(list)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    for opt, v in pairs({ buftype = 'nofile', bufhidden = 'wipe', swapfile = false, modifiable = false }) do
      vim.api.nvim_buf_set_option(buf, opt, v)
    end
    -- The cursor on the newest request, the one the user just made.
    pcall(vim.api.nvim_win_set_cursor, 0, { math.min(requests_first, #lines), 0 })
    vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '<cmd>close<cr>', { nowait = true, noremap = true, silent = true })
    if cb then
      cb(list)
    end
  end)
end

--- stats_win is the :KimiStats float, while it is open.
M.stats_win = nil

--- show_stats opens the statistics in a float by the cursor; it closes
--- when the cursor moves (q closes it too).
local function show_stats(s)
  local lines = stats_lines(s)
  local width = 0
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  if M.stats_win and vim.api.nvim_win_is_valid(M.stats_win) then
    pcall(vim.api.nvim_win_close, M.stats_win, true)
  end
  local ok, win = pcall(vim.api.nvim_open_win, buf, false, {
    relative = 'cursor', row = 1, col = 0, width = math.min(width + 2, vim.o.columns - 2), height = #lines,
    style = 'minimal', border = 'rounded', focusable = true,
  })
  if not ok then
    notify(table.concat(lines, '\n'))
    return
  end
  M.stats_win = win
  vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '<cmd>close<cr>', { nowait = true, noremap = true, silent = true })
  local group = vim.api.nvim_create_augroup('KimiStatsFloat', { clear = true })
  vim.api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI', 'BufLeave', 'InsertEnter' }, {
    group = group,
    callback = function()
      if vim.api.nvim_get_current_win() ~= win and vim.api.nvim_win_is_valid(win) then
        pcall(vim.api.nvim_win_close, win, true)
        pcall(vim.api.nvim_del_augroup_by_id, group)
      end
    end,
  })
end

--- stats asks for kimi.stats and shows it; cb (optional) gets the table.
function M.stats(cb)
  local client = any_client()
  if not client then
    notify('kimi-lsp is not running', vim.log.levels.WARN)
    return
  end
  M.execute(client, 'kimi.stats', nil, nil, function(result)
    if type(result) == 'string' then
      local ok, decoded = pcall(vim.fn.json_decode, result)
      if ok then
        result = decoded
      end
    end
    if type(result) ~= 'table' then
      notify('kimi.stats returned no table', vim.log.levels.WARN)
      return
    end
    M.last_stats = result
    show_stats(result)
    if cb then
      cb(result)
    end
  end)
end

--- statusline returns the running job for a statusline component ('' when idle).
function M.statusline()
  return progress.statusline()
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  local simple = {
    KimiExplain = { 'kimi.explain', 'Explain the selected code' },
    KimiFix = { 'kimi.fix', 'Fix the selected code (with its diagnostics)' },
    KimiDocument = { 'kimi.document', 'Add documentation to the selected code' },
    KimiTests = { 'kimi.tests', 'Write tests for the selected code' },
  }
  for name, def in pairs(simple) do
    cmd(name, function(o)
      M.run(def[1], o)
    end, { range = true, desc = def[2] })
  end
  cmd('KimiRewrite', function(o)
    local instruction = vim.trim(o.args or '')
    M.run('kimi.rewrite', o, instruction ~= '' and { instruction = instruction } or nil)
  end, { range = true, nargs = '*', desc = 'Rewrite the selected code following {instruction}' })
  cmd('KimiCancel', function(o)
    M.cancel(o.args)
  end, {
    nargs = '?',
    desc = 'Cancel a Kimi job (all when no id is given)',
    complete = function()
      return vim.tbl_keys(M.jobs)
    end,
  })
  cmd('KimiNextEditDismiss', function()
    nextedit.dismiss()
  end, { desc = 'Dismiss the next-edit suggestion of this buffer' })
  cmd('KimiReview', function(o)
    M.review(o, vim.trim(o.args or '') == 'diff')
  end, {
    range = true,
    nargs = '?',
    desc = 'Review the selection, the buffer, or (diff) the uncommitted changes',
    complete = function()
      return { 'diff' }
    end,
  })
  cmd('KimiClearReview', function(o)
    M.clear_review(o.bang)
  end, { bang = true, desc = 'Clear the review findings of this buffer (! for all)' })
  cmd('KimiStats', function()
    M.stats()
  end, { desc = 'Show the prompt-cache statistics of this session and the spend against the budgets' })
  cmd('KimiRequests', function(o)
    M.requests(tonumber(o.args))
  end, { nargs = '?', desc = 'Show what left the machine: the newest [N] requests (metadata only)' })
  cmd('KimiProgress', function()
    local lines = {}
    for _, j in ipairs(progress.running()) do
      local msg = (j.message or ''):gsub('\n', ' ')
      table.insert(lines, string.format('%s [%s]: %s', j.title or 'Kimi', j.token, msg))
    end
    if #lines == 0 then
      table.insert(lines, progress.last_outcome_full or 'no job running')
    end
    -- Titles already say "Kimi: …"; notify adds the prefix only where
    -- it is missing.
    notify(table.concat(lines, '\n'))
  end, { desc = 'Show the running Kimi jobs' })
end

--- setup configures the plugin and starts attaching kimi-lsp to buffers.
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd }
  end
  progress.configure({ mode = M.config.progress })
  explain.configure({ split = M.config.explanation_split, focus = M.config.explanation_focus })
  completion.setup(M.config.completion, M.name)
  nextedit.setup(M.config.next_edit, M.name)
  define_commands()

  local group = vim.api.nvim_create_augroup('kimi', { clear = true })
  if util.has('0.10') then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        local data = ev.data or {}
        local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
        if client and client.name == M.name and data.params then
          progress.update(data.client_id, data.params)
        end
      end,
    })
  end

  if util.has('0.11') and vim.lsp.config and vim.lsp.enable then
    if not check_binary() then
      return
    end
    local cfg = base_config()
    cfg.filetypes = M.config.filetypes
    cfg.root_markers = M.config.root_markers
    cfg.root_dir = nil
    vim.lsp.config(M.name, cfg)
    vim.lsp.enable(M.name)
    return
  end

  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_option(b, 'filetype') ~= '' then
      M.attach(b)
    end
  end
end

return M
