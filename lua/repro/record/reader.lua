-- The one reader of finished run records for every command that reads results back:
-- compare and export (lua/repro/report/results.lua), analyze and the report's summary
-- recompute (lua/repro/analysis/init.lua study_records) and the report's reads of a
-- study's records (lua/repro/report/data.lua Study:record).  One set of rules:
--
--   links      a record is read only when no directory from the top of its tree (the
--              study directory, or the folder a command was given) down to the record
--              is a symbolic link; otherwise it is refused, naming the link
--   checksums  only a record that record.verify calls "verified" is read: one failing
--              its checksums ("mismatch") or without them ("no checksum": not trusted)
--              is refused, saying so; an unfinished one (no metrics.json) is not a record
--
-- Callers warn about a refused record (M.warning gives the text) and go on without it.
-- log.csv is read row by row (M.each_log_row, M.log_fields), never whole, so a reader's memory does not
-- grow with the number of records or the length of a log.
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local record = require "repro.record"

local M = {}

-- The first directory from top down to dir (both included) that is a symbolic link, or
-- nil.  dir is top or a path below it ("top/a/b").
function M.link_in(dir, top)
  top = top:gsub("/+$", "")
  local path = top
  local st = sys.lstat(path)
  if st and st.type == "link" then return path end
  local rest = dir:sub(#top + 1)
  for part in rest:gmatch("[^/]+") do
    path = path .. "/" .. part
    st = sys.lstat(path)
    if st and st.type == "link" then return path end
  end
  return nil
end

-- Whether the record in dir (under top) may be read: "ok", or "link", "mismatch",
-- "untrusted" or "unfinished" and why (a sentence naming no path).
function M.check(dir, top)
  local link = M.link_in(dir, top or dir)
  if link then
    return "link", string.format("%s is a symbolic link (records trees hold none; not followed)",
      fs.shown(link))
  end
  local state, problems = record.verify(dir)
  if state == "verified" then return "ok" end
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

-- A checked record's config.json and metrics.json: {dir, config_text, config, metrics},
-- or nil and why.
function M.load(dir)
  local text = fs.read(dir .. "/config.json")
  local ok, cfg = pcall(json.decode, text or "")
  if not ok or type(cfg) ~= "table" then return nil, "config.json is not valid JSON" end
  local mok, m = pcall(json.decode, fs.read(dir .. "/metrics.json") or "")
  if not mok or type(m) ~= "table" then return nil, "metrics.json is not valid JSON" end
  return { dir = dir, config_text = text, config = cfg, metrics = m }
end

-- M.check, then M.load: the record, or nil, its state and why.
function M.read(dir, top)
  local state, why = M.check(dir, top)
  if state ~= "ok" then return nil, state, why end
  local rec, err = M.load(dir)
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

-- Calls fn(columns, values, row) for each row of dir's log.csv, in order (values by
-- column position, numbers or nil; row from 1), one line in memory at a time; returns
-- the columns and the number of rows.  Empty lines are skipped, as the analysis's
-- parse_log skips them.  A log.csv that is not a regular file reads as empty.
function M.each_log_row(dir, fn)
  local path = dir .. "/log.csv"
  local st = sys.lstat(path)
  local f = st and st.type == "file" and io.open(path, "rb")
  if not f then return {}, 0 end
  local cols, n = nil, 0
  for line in f:lines() do
    if line ~= "" then
      if not cols then
        cols = {}
        for name in (line .. ","):gmatch("([^,]*),") do cols[#cols + 1] = name end
      else
        n = n + 1
        local values, i = {}, 0
        for field in (line .. ","):gmatch("([^,]*),") do
          i = i + 1
          if i <= #cols then values[i] = M.log_number(field) end
        end
        fn(cols, values, n)
      end
    end
  end
  f:close()
  return cols or {}, n
end

-- Some columns of dir's log.csv, each the last of its name: {name -> values by row
-- (numbers or nil, as M.each_log_row reads them)}, a name that is no column absent, and
-- the number of rows.  The same rows and values as M.each_log_row, without splitting the
-- other fields of each row (the analysis reads the loss column of every record: a log
-- holds some forty columns).
function M.log_fields(dir, names)
  local path = dir .. "/log.csv"
  local st = sys.lstat(path)
  local f = st and st.type == "file" and io.open(path, "rb")
  if not f then return {}, 0 end
  local pats, data, n = nil, {}, 0
  for line in f:lines() do
    if line ~= "" then
      if not pats then
        local at, i = {}, 0
        for c in (line .. ","):gmatch("([^,]*),") do
          i = i + 1
          at[c] = i
        end
        -- field k: k - 1 fields and their commas, then the field up to the next comma
        pats = {}
        for _, name in ipairs(names) do
          if at[name] then
            pats[name] = "^" .. string.rep("[^,]*,", at[name] - 1) .. "([^,]*)"
            data[name] = {}
          end
        end
      else
        n = n + 1
        for name, pat in pairs(pats) do data[name][n] = M.log_number(line:match(pat)) end
      end
    end
  end
  f:close()
  return data, n
end

-- One column of dir's log.csv (M.log_fields): its values by row and the number of rows;
-- nil and the number of rows when there is no such column.
function M.log_column(dir, name)
  local data, n = M.log_fields(dir, { name })
  return data[name], n
end

-- The columns of dir's log.csv (its first line), read alone.
function M.log_columns(dir)
  local path = dir .. "/log.csv"
  local st = sys.lstat(path)
  local f = st and st.type == "file" and io.open(path, "rb")
  if not f then return {} end
  local line = f:read("l") or ""
  f:close()
  local cols = {}
  if line ~= "" then
    for name in (line .. ","):gmatch("([^,]*),") do cols[#cols + 1] = name end
  end
  return cols
end

return M
