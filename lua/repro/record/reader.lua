-- The one reader of finished run records (compare, export, analyze, the report).  A record
-- is read only when no directory from the top of its tree down to it is a symbolic link
-- and record.verify calls it "verified", and then from the very bytes verify hashed
-- (M.read); a streamed log.csv (M.each_log_row, M.log_fields: never read whole) must hash
-- to the sum verified.  Callers warn about a refused record (M.warning) and go on.
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local base = require "repro.core.base"
local record = require "repro.record"

local M = {}

function M.is_link(path)
  local st = sys.lstat(path)
  return st ~= nil and st.type == "link"
end

-- The first directory from top down to dir (both included) that is a symbolic link, or
-- nil.  dir is top or a path below it ("top/a/b").
function M.link_in(dir, top)
  local path = top:gsub("/+$", "")
  if M.is_link(path) then return path end
  for part in dir:sub(#path + 1):gmatch("[^/]+") do
    path = path .. "/" .. part
    if M.is_link(path) then return path end
  end
  return nil
end

-- Whether the record in dir (under top) may be read: "ok", nil and the verified bytes
-- (record.verify's third value), or "link", "mismatch", "untrusted" or "unfinished" and
-- why (a sentence naming no path).  opts: record.verify's (log = false: a reader that
-- never reads log.csv).
function M.check(dir, top, opts)
  local link = M.link_in(dir, top or dir)
  if link then
    return "link", string.format("%s is a symbolic link (records trees hold none; not followed)",
      fs.shown(link))
  end
  local state, problems, kept = record.verify(dir, opts)
  if state == "verified" then return "ok", nil, kept end
  if state == "mismatch" then
    return "mismatch", string.format("its record fails its checksums (%s); bin/repro verify %s",
      table.concat(problems, "; "), fs.shown(dir))
  end
  if state == "no checksum" then return "untrusted", record.UNTRUSTED end
  return "unfinished", "not finished"
end

-- The warning for a refused record: "<who>: <dir>: skipped: <why>" (nil for an
-- unfinished one, which is no record yet).
function M.warning(who, dir, state, why)
  if state == "unfinished" or state == "ok" then return nil end
  return string.format("%s: %s: skipped: %s", who, fs.shown(dir), why)
end

-- A checked record's config.json and metrics.json: {dir, config_text, config, metrics,
-- verified}, or nil and why.  With kept (M.check's third value), the texts parsed are the
-- bytes that were verified, read once: a file swapped on disk after the check is never
-- what is shown or compared; rec.verified keeps them (texts, sha256) for the readers of
-- log.csv and tasks.csv.  Without kept (a caller that checked the record itself), the
-- files are read again.
function M.load(dir, kept)
  local texts = kept and kept.texts or {}
  local text = texts["config.json"] or fs.read(dir .. "/config.json")
  local cfg = json.table_of(text)
  if not cfg then return nil, "config.json is not valid JSON" end
  local m = json.table_of(texts["metrics.json"] or fs.read(dir .. "/metrics.json"))
  if not m then return nil, "metrics.json is not valid JSON" end
  return { dir = dir, config_text = text, config = cfg, metrics = m, verified = kept }
end

-- M.check, then M.load of the bytes M.check verified: the record, or nil, its state and
-- why.
function M.read(dir, top, opts)
  local state, why, kept = M.check(dir, top, opts)
  if state ~= "ok" then return nil, state, why end
  local rec, err = M.load(dir, kept)
  if not rec then return nil, "unreadable", err end
  return rec
end

-- A log.csv field as a number: empty is nil; nan, inf and -inf as such.
function M.log_number(s)
  if s == nil or s == "" then return nil end
  if s == "nan" or s == "-nan" then return 0 / 0 end
  if s == "inf" then return math.huge end
  if s == "-inf" then return -math.huge end
  return tonumber(s)
end

-- The longest line a log.csv may have: a row of a few dozen numbers is under 1 KiB, so
-- 64 KiB is far above any real row and one line of a forged log cannot take more.
local LOG_LINE_MAX_BYTES = 64 * 1024

-- dir's log.csv opened line by line (sys.lines), or nil when it is no regular file.
local function open_log(dir)
  local st = sys.lstat(dir .. "/log.csv")
  return st and st.type == "file" and sys.lines(dir .. "/log.csv", LOG_LINE_MAX_BYTES) or nil
end

-- The comma-separated fields of a log.csv line.
local function fields(line)
  local out = {}
  for field in (line .. ","):gmatch("([^,]*),") do out[#out + 1] = field end
  return out
end

-- The non-empty lines of dir's log.csv, streamed: header(line) for the first, row(line)
-- for the others; nothing when there is no such regular file.  Its checks are those
-- M.each_log_row's comment lists.
local function each_line(dir, want_sha256, header, row)
  local r = open_log(dir)
  if not r then return end
  local first = true
  local line, err = r:next()
  while line do
    if line ~= "" then
      if first then header(line) else row(line) end
      first = false
    end
    line, err = r:next()
  end
  if err then
    r:close()
    base.user_error("%s", base.printable(err))
  end
  local got = r:sha256()
  r:close()
  if want_sha256 and got ~= want_sha256 then
    base.user_error("%s: changed after its record was verified (SHA-256 %s, verified %s): " ..
      "not read", fs.shown(dir .. "/log.csv"), got:sub(1, 12), tostring(want_sha256):sub(1, 12))
  end
end

-- Calls fn(columns, values, row) for each row of dir's log.csv, in order (values by
-- column position, numbers or nil; row from 1), one line in memory at a time, each at
-- most LOG_LINE_MAX_BYTES (sys.lines: the safe reader's rules); returns the columns and
-- the number of rows.  Empty lines are skipped, as the analysis's parse_log skips them.
-- A log.csv that is not a regular file reads as empty.  A longer line is a user error
-- naming the file and the line.  With want_sha256 (the sum record.verify checked), the
-- bytes read are hashed as they stream and must have that sum at the end, else a user
-- error: values already passed to fn came from a file changed after it was verified (the
-- caller discards what it made of them, as export --curves aborts its output).
function M.each_log_row(dir, fn, want_sha256)
  local cols, n = {}, 0
  each_line(dir, want_sha256, function(line) cols = fields(line) end, function(line)
    n = n + 1
    local values, row = {}, fields(line)
    for i = 1, math.min(#row, #cols) do values[i] = M.log_number(row[i]) end
    fn(cols, values, n)
  end)
  return cols, n
end

-- Some columns of dir's log.csv, each the last of its name: {name -> values by row
-- (numbers or nil, as M.each_log_row reads them)}, a name that is no column absent, and
-- the number of rows.  The same rows and values as M.each_log_row, under the same rules,
-- without splitting the other fields of each row (the analysis reads the loss column of
-- every record: a log holds some forty columns).
function M.log_fields(dir, names, want_sha256)
  local pats, data, n = {}, {}, 0
  each_line(dir, want_sha256, function(line)
    local at = {}
    for i, c in ipairs(fields(line)) do at[c] = i end
    -- field k: k - 1 fields and their commas, then the field up to the next comma
    for _, name in ipairs(names) do
      if at[name] then
        pats[name] = "^" .. string.rep("[^,]*,", at[name] - 1) .. "([^,]*)"
        data[name] = {}
      end
    end
  end, function(line)
    n = n + 1
    for name, pat in pairs(pats) do data[name][n] = M.log_number(line:match(pat)) end
  end)
  return data, n
end

-- One column of dir's log.csv (M.log_fields): its values by row and the number of rows;
-- nil and the number of rows when there is no such column.
function M.log_column(dir, name, want_sha256)
  local data, n = M.log_fields(dir, { name }, want_sha256)
  return data[name], n
end

-- The columns of dir's log.csv (its first line, at most LOG_LINE_MAX_BYTES), read
-- alone; a longer line is a user error naming the file and the line.
function M.log_columns(dir)
  local r = open_log(dir)
  if not r then return {} end
  local line, err = r:next()
  r:close()
  if err then base.user_error("%s", base.printable(err)) end
  return line and line ~= "" and fields(line) or {}
end

return M
