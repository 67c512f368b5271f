-- `bin/repro export`: run records as tidy CSV for pandas or R (flags and columns:
-- docs/COMMANDS.md).  M.runs_csv gives a row per finished run; M.curves_csv streams each
-- log.csv in long format, one log at a time.  Targets, numbers and the atomic --out are
-- report/results.lua's.
local results = require "repro.report.results"
local reader = require "repro.record.reader"
local progress = require "repro.core.progress"
local base = require "repro.core.base"
local record = require "repro.record"
local fs = require "repro.core.fs"

local M = {}

local user_error = base.user_error
local WHO = "repro export"
M.USAGE = "usage: bin/repro export [STUDY|DIR ...] [--curves] [--columns C,...] " ..
  "[--out FILE] [--out-root DIR]"

local function parse_args(args)
  local o = base.parse_options(args, WHO, M.USAGE, {
    ["--curves"] = { key = "curves", kind = "flag" },
    ["--columns"] = { key = "columns", kind = "list" },
    ["--out"] = { key = "out", kind = "value" },
    ["--out-root"] = { key = "out_root", kind = "value" },
  })
  if o.columns and not o.curves then
    user_error("%s: --columns selects log.csv columns: it needs --curves", WHO)
  end
  local why = o.out and fs.out_file_problem(o.out)
  if why then user_error("%s: --out %s: %s (nothing was read)", WHO, base.printable(o.out), why) end
  return o
end

local function relative(dir, root)
  if dir:sub(1, #root + 1) == root .. "/" then return dir:sub(#root + 2) end
  return dir
end

-- The runs table: header and one line per run.
function M.runs_csv(runs, root)
  local keys = results.config_keys()
  local seen = {}
  for _, r in ipairs(runs) do
    for k in pairs(r.metrics) do seen[k] = true end
  end
  local names = base.sorted_keys(seen)
  local header = { "study", "variant", "seed", "run", "provenance", "stale" }
  local taken = base.set_of(header)
  for _, k in ipairs(keys) do
    local col = taken[k] and ("config." .. k) or k
    header[#header + 1] = col
    taken[col] = true
  end
  for _, k in ipairs(names) do
    local col = results.metric_column(k)
    if taken[col] then col = "metrics." .. k end
    header[#header + 1] = col
    taken[col] = true
  end
  local t = { head = header, rows = {} }
  for _, r in ipairs(runs) do
    local row = { r.study, r.variant, r.seed, relative(r.dir, root),
      r.provenance and r.provenance.level or nil, #r.stale > 0 }
    for i, k in ipairs(keys) do row[6 + i] = r.config[k] end
    for i, k in ipairs(names) do row[6 + #keys + i] = r.metrics[k] end
    t.rows[#t.rows + 1] = row
  end
  return require("repro.report.table").csv(t)
end

-- The curves in long format, written to out (results.stream) one log.csv at a time, row
-- by row as they are read (record/reader.lua each_log_row): memory does not grow with
-- the number of runs or the length of their logs.  columns (optional) selects log
-- columns; each is checked against the logs' headers before anything is written.
function M.curves_csv(runs, columns, out)
  local want
  if columns then
    want = {}
    local known = {}
    for _, r in ipairs(runs) do
      for _, c in ipairs(reader.log_columns(r.dir)) do known[c] = true end
    end
    for _, c in ipairs(columns) do
      local col = record.log_column(c, known)
      if not col then
        local names = {}
        for k in pairs(known) do names[#names + 1] = record.log_column_label(k) end
        user_error("%s: --columns: no log.csv of these runs has a column '%s'%s", WHO, c,
          base.suggest(c, names))
      end
      want[col] = true
    end
  end
  out.write(results.csv_line({ "study", "variant", "seed", "step", "column", "value" }))
  for _, r in ipairs(runs) do
    local study, variant, seed = results.csv_field(r.study), results.csv_field(r.variant),
      results.csv_field(r.seed)
    local prefix = study .. "," .. variant .. "," .. seed .. ","
    local heads, step_at
    reader.each_log_row(r.dir, function(cols, values)
      if not heads then
        heads = {}
        for i, c in ipairs(cols) do
          if c == "step" then step_at = step_at or i end
          heads[i] = (c ~= "step" and (not want or want[c])) and results.csv_field(c) or false
        end
      end
      local step = results.csv_field(step_at and values[step_at])
      for i, h in ipairs(heads) do
        local v = values[i]
        if h and v ~= nil then
          out.write(prefix .. step .. "," .. h .. "," .. results.csv_field(v) .. "\n")
        end
      end
    end, r.log_sha256)
  end
end

function M.main(args)
  local o = parse_args(args)
  if o.help then return 0 end
  local runs = results.collect(o.targets, { out_root = o.out_root, with_derived = not o.curves,
    log = true }, WHO, progress.say)
  if o.curves then
    local out = results.stream(o.out)
    local ok, err = pcall(M.curves_csv, runs, o.columns, out)
    if not ok then
      out.abort()
      error(err, 0)
    end
    out.close()
  else
    results.emit(M.runs_csv(runs, results.root(o.out_root)), o.out)
  end
  if o.out then progress.say("%s: %d runs to %s", WHO, #runs, o.out) end
  return 0
end

return M
