-- kimi.edits: applies the server's workspace/applyEdit with Neovim's own
-- handler (so `u` undoes an edit), except for files the edit creates.
--
-- Neovim's handler creates a new file as an empty file on disk and puts its
-- text into a hidden, modified buffer: the user sees nothing, and after `u`
-- the empty file stays (a Go package with an empty .go file does not
-- build). Here a file that does not exist yet becomes a buffer with the
-- file's name, shown in a split and named in a message; it reaches the disk
-- when you :w it, and `u` in it leaves nothing behind.
local util = require('kimi.util')

local M = {}

-- The split command a created file opens in.
local split = 'botright split'

--- created lists the files the last applied edit created: {bufnr, path}.
M.created = {}

-- take_creates removes from the edit the create operations of files that
-- do not exist and makes a buffer for each instead. Returns {bufnr, path}.
local function take_creates(edit)
  local out = {}
  local changes = edit and edit.documentChanges
  if type(changes) ~= 'table' then
    return out
  end
  local keep = {}
  for _, c in ipairs(changes) do
    local fname = c.kind == 'create' and c.uri and vim.uri_to_fname(c.uri)
    if fname and not vim.loop.fs_stat(fname) then
      local dir = vim.fn.fnamemodify(fname, ':h')
      if vim.fn.isdirectory(dir) == 0 then
        vim.fn.mkdir(dir, 'p') -- so that :w works; an empty directory breaks no build
      end
      local bufnr = vim.fn.bufadd(fname)
      vim.fn.bufload(bufnr)
      vim.api.nvim_buf_set_option(bufnr, 'buflisted', true)
      table.insert(out, { bufnr = bufnr, path = fname })
    else
      table.insert(keep, c)
    end
  end
  edit.documentChanges = keep
  -- A new buffer starts with one empty line, and the text inserted into it
  -- ends with the file's final newline: drop that newline (the buffer's
  -- 'eol' writes it), or the buffer would end in an extra empty line.
  for _, c in ipairs(keep) do
    if c.textDocument and c.edits then
      for _, n in ipairs(out) do
        if vim.uri_to_fname(c.textDocument.uri) == n.path then
          for _, e in ipairs(c.edits) do
            e.newText = (e.newText or ''):gsub('\r?\n$', '')
          end
        end
      end
    end
  end
  return out
end

-- show opens each created buffer in a split (unless one shows it already),
-- keeping the cursor where it was, and names the files in a message.
local function show(created, label)
  local cur = vim.api.nvim_get_current_win()
  local names = {}
  for _, c in ipairs(created) do
    if vim.fn.bufwinid(c.bufnr) == -1 then
      vim.cmd(split)
      vim.api.nvim_win_set_buf(0, c.bufnr)
    end
    table.insert(names, vim.fn.fnamemodify(c.path, ':~:.'))
  end
  if vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
  local what = #names == 1 and 'a new file' or 'new files'
  util.tell(string.format('%s created %s %s, shown in a split; :w writes it to disk, u undoes it',
    label or 'Kimi', what, table.concat(names, ', ')), vim.log.levels.INFO)
end

--- apply_edit handles workspace/applyEdit for the kimi client: an edit
--- whose hunks need confirmation is first reviewed (kimi.confirm) and only
--- the accepted hunks go on; files the edit creates become shown buffers,
--- the rest goes to Neovim's handler (looked up when called, so a wrapper
--- installed later still runs).
function M.apply_edit(err, params, ctx, config)
  local confirm = require('kimi.confirm')
  if params and confirm.needs_confirmation(params.edit) then
    local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
    local edit, answer = confirm.review(params, client and client.offset_encoding)
    if not edit then
      return answer
    end
    params = vim.tbl_extend('force', params, { edit = edit })
  end
  local created = {}
  if params and params.edit then
    local ok, res = pcall(take_creates, params.edit)
    if ok then
      created = res
    end
  end
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
  if #created > 0 then
    if result and result.applied then
      M.created = created
      show(created, params.label)
    else
      for _, c in ipairs(created) do
        pcall(vim.api.nvim_buf_delete, c.bufnr, { force = true })
      end
    end
  end
  return result
end

return M
