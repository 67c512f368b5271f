-- Plain-text tables that fit a terminal: columns padded to their widest cell (widths
-- counted in UTF-8 characters, so "±" is one), and when the table is wider than the
-- terminal, the widest columns cut, each cut cell ending in "…", never a line wrapped
-- mid-word by the terminal.  Every cell goes through base.printable first: a cell from
-- data (a directory's name, a config value, a metric key) never drives the terminal.
local host = require "repro.host"
local fs = require "repro.core.fs"
local printable = require("repro.core.base").printable

local M = {}

M.MIN_COLUMN = 4

local function len(s) return utf8.len(s) or #s end

-- s cut to w characters, "…" last when cut.
local function cut(s, w)
  if len(s) <= w then return s end
  if w <= 1 then return "…" end
  return s:sub(1, (utf8.offset(s, w) or (#s + 1)) - 1) .. "…"
end
M.cut = cut

-- The terminal's width: $COLUMNS, else the terminal's own when fd (default 1, stdout)
-- is one, else nil (no limit: output to a file or a pipe keeps every character).
function M.width(fd)
  local c = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
  if c and c > 0 then return c end
  if host.isatty(fd or 1) then
    local out = fs.capture("stty size </dev/tty")
    local cols = out and math.tointeger(tonumber(out:match("^%d+%s+(%d+)") or ""))
    if cols and cols > 0 then return cols end
  end
  return nil
end

-- text wrapped at word boundaries to lines of at most width characters (a word longer
-- than that stays whole), the first line after first, the others after rest; without a
-- width, one line.
function M.wrap(text, width, first, rest)
  first, rest = first or "", rest or first or ""
  if not width then return first .. text end
  local lines, line = {}, first
  local empty = true
  for word in text:gmatch("%S+") do
    if not empty and len(line) + 1 + len(word) > width then
      lines[#lines + 1] = line
      line, empty = rest, true
    end
    line = line .. (empty and "" or " ") .. word
    empty = false
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n")
end

-- rows (header first) as text: indent before every line, two spaces between columns;
-- opts.width limits a line's length.
function M.render(rows, opts)
  opts = opts or {}
  local indent = opts.indent or ""
  local cells, widths, ncol = {}, {}, 0
  for j, r in ipairs(rows) do
    cells[j] = {}
    for i = 1, #r do
      cells[j][i] = printable(r[i])
      widths[i] = math.max(widths[i] or 0, len(cells[j][i]))
    end
    ncol = math.max(ncol, #r)
  end
  if opts.width then
    local total = #indent + 2 * (ncol - 1)
    for i = 1, ncol do total = total + widths[i] end
    while total > opts.width do
      local widest = 1
      for i = 2, ncol do
        if widths[i] > widths[widest] then widest = i end
      end
      if widths[widest] <= M.MIN_COLUMN then break end
      widths[widest], total = widths[widest] - 1, total - 1
    end
  end
  local lines = {}
  for _, r in ipairs(cells) do
    local f = {}
    for i = 1, #r do
      local x = cut(r[i], widths[i])
      f[i] = i < #r and x .. string.rep(" ", widths[i] - len(x)) or x
    end
    lines[#lines + 1] = indent .. table.concat(f, "  ")
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
