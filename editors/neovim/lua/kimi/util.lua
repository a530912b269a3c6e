-- kimi.util: version probes, client lookup and LSP positions, written once
-- for Neovim 0.7 (Debian bookworm) and 0.10+/0.11.
local M = {}

--- has reports whether Neovim is at least the given version ("0.11").
function M.has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

--- request sends a request from a client, with the 0.11 method-call form
--- where it exists (the dot form is deprecated there).
function M.request(client, method, params, handler, bufnr)
  if M.has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- notify sends a notification from a client.
function M.notify(client, method, params)
  if M.has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- clients returns the kimi clients attached to bufnr (all when bufnr is nil).
function M.clients(name, bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = name, bufnr = bufnr })
  end
  local out = {}
  local all = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
  for _, c in pairs(all) do
    if c.name == name then
      table.insert(out, c)
    end
  end
  return out
end

--- char_len returns the byte length of the UTF-8 character starting at byte i
--- (1-based) of s, 1 for a stray continuation byte.
local function char_len(s, i)
  local b = s:byte(i)
  if not b then
    return 0
  elseif b >= 0xF0 then
    return 4
  elseif b >= 0xE0 then
    return 3
  elseif b >= 0xC0 then
    return 2
  end
  return 1
end
M.char_len = char_len

--- units returns how many code units of the encoding ("utf-8", "utf-16",
--- "utf-32") the first byte_col bytes of line take. Our own loop: it behaves
--- the same on every Neovim version (vim.str_utfindex changed in 0.11).
function M.units(line, byte_col, encoding)
  if byte_col > #line then
    byte_col = #line
  end
  if encoding == 'utf-8' then
    return byte_col
  end
  local i, n = 1, 0
  while i <= byte_col do
    local l = char_len(line, i)
    if encoding == 'utf-16' and l == 4 then
      n = n + 2
    else
      n = n + 1
    end
    i = i + l
  end
  return n
end

--- byte_col is the inverse of units: the byte column (0-based) at which
--- the first `units` code units of the encoding of line end, clamped to the
--- line.
function M.byte_col(line, units, encoding)
  if encoding == 'utf-8' then
    return math.min(units, #line)
  end
  local i, n = 1, 0
  while i <= #line and n < units do
    local l = char_len(line, i)
    n = n + ((encoding == 'utf-16' and l == 4) and 2 or 1)
    i = i + l
  end
  return i - 1
end

--- position makes an LSP position from a 0-based row and byte column.
function M.position(bufnr, row, byte_col, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  return { line = row, character = M.units(line, byte_col, encoding) }
end

--- range computes the LSP range a command works on.
--- opts are the user-command arguments (line1, line2, range). A charwise
--- visual selection that matches the command's lines is taken exactly;
--- otherwise whole lines line1..line2 (the cursor line without a range).
function M.range(bufnr, opts, encoding)
  local line1, line2 = opts.line1, opts.line2
  if not opts.range or opts.range == 0 then
    local row = vim.api.nvim_win_get_cursor(0)[1]
    line1, line2 = row, row
  end
  local s = vim.api.nvim_buf_get_mark(bufnr, '<')
  local e = vim.api.nvim_buf_get_mark(bufnr, '>')
  local mode = vim.fn.visualmode()
  if opts.range and opts.range > 0 and mode == 'v' and s[1] == line1 and e[1] == line2 and s[1] > 0 then
    local last = vim.api.nvim_buf_get_lines(bufnr, e[1] - 1, e[1], false)[1] or ''
    local end_col = math.min(e[2] + math.max(char_len(last, e[2] + 1), 1), #last)
    return {
      start = M.position(bufnr, s[1] - 1, s[2], encoding),
      ['end'] = M.position(bufnr, e[1] - 1, end_col, encoding),
    }
  end
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  return {
    start = { line = line1 - 1, character = 0 },
    ['end'] = M.position(bufnr, line2 - 1, #last, encoding),
  }
end

--- diagnostics returns the LSP diagnostics of bufnr on rows first..last (0-based).
function M.diagnostics(bufnr, first, last)
  local out = {}
  if not vim.diagnostic then
    return out
  end
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local d_end = d.end_lnum or d.lnum
    if d.lnum <= last and d_end >= first then
      local lsp = d.user_data and d.user_data.lsp
      if lsp and lsp.range then
        table.insert(out, lsp)
      else
        table.insert(out, {
          range = {
            start = { line = d.lnum, character = d.col or 0 },
            ['end'] = { line = d_end, character = d.end_col or d.col or 0 },
          },
          severity = d.severity,
          message = d.message,
          source = d.source,
          code = d.code,
        })
      end
    end
  end
  return out
end

--- tell shows msg with vim.notify, prefixed "Kimi: " unless it already
--- names Kimi (the server's titles do: "Kimi: Explain").
--- hl_fg returns the terminal (cterm) and GUI foreground of the group
--- name, links followed, or nil for each it lacks; on every version.
function M.hl_fg(name)
  if vim.api.nvim_get_hl then
    local ok, h = pcall(vim.api.nvim_get_hl, 0, { name = name, link = false })
    if not ok then
      return nil, nil
    end
    return h.ctermfg, h.fg
  end
  local okc, c = pcall(vim.api.nvim_get_hl_by_name, name, false)
  local okg, g = pcall(vim.api.nvim_get_hl_by_name, name, true)
  return okc and c.foreground or nil, okg and g.foreground or nil
end

--- tell_line tells msg as tell does, on one line of the command line: a
--- longer one is cut to it (v:echospace) and ends "… (see <where>)", so
--- that it never asks Press ENTER and :messages holds it once.
function M.tell_line(msg, level, where)
  msg = tostring(msg or ''):gsub('%s*\n%s*', ' ')
  if not msg:match('^Kimi') then
    msg = 'Kimi: ' .. msg
  end
  local room = math.max(20, (vim.v.echospace or (vim.o.columns - 12)) - 1)
  if vim.fn.strdisplaywidth(msg) > room then
    local more = ' … (see ' .. where .. ')'
    local n = room - vim.fn.strdisplaywidth(more)
    local cut = vim.fn.strcharpart(msg, 0, n)
    while n > 1 and vim.fn.strdisplaywidth(cut) > room - vim.fn.strdisplaywidth(more) do
      n = n - 1
      cut = vim.fn.strcharpart(msg, 0, n)
    end
    msg = cut .. more
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

function M.tell(msg, level)
  msg = tostring(msg or '')
  if not msg:match('^Kimi') then
    msg = 'Kimi: ' .. msg
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

-- Keys of the server's `kimi` section whose values are JSON arrays; every
-- other table is an object.
local list_keys = { actions = true, exclude = true, secrets = true }

--- json_objects returns a copy of the settings table t in which every empty
--- table that stands for a JSON object is vim.empty_dict(). Neovim encodes
--- a plain empty table as a list ({} becomes []), which the server reads as
--- a wrong type: `settings = {}` must reach it as {}.
function M.json_objects(t, key)
  if type(t) ~= 'table' then
    return t
  end
  if next(t) == nil then
    return list_keys[key] and {} or vim.empty_dict()
  end
  local out = {}
  for k, v in pairs(t) do
    out[k] = M.json_objects(v, type(k) == 'string' and k or nil)
  end
  return setmetatable(out, getmetatable(t))
end

--- root finds the workspace root above path: the nearest directory holding
--- one of the markers, else the file's own directory.
function M.root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local best
  for _, m in ipairs(markers) do
    local found = vim.fn.finddir(m, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(m, dir .. ';')
    end
    if found ~= '' then
      local d = vim.fn.fnamemodify(found, ':p')
      d = d:gsub('/$', '')
      d = vim.fn.fnamemodify(d, ':h')
      if not best or #d > #best then
        best = d
      end
    end
  end
  return best or dir
end

return M
