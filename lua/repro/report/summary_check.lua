-- A summary the report is about to use, checked.  Every build checks that its inputs are
-- those it was computed from (M.check_inputs); `make verify` and report
-- --recompute-summaries recompute it from its verified records and refuse it unless it is
-- the same bytes (M.check_summary).
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local analysis = require "repro.analysis"
local base = require "repro.core.base"
local sys = require "repro.sys"
local host = require "repro.host"
local record = require "repro.record"

local M = {}
local user_error = base.user_error

-- The first key path at which the decoded values a and b differ ("per_variant.none.n"),
-- walking object keys in sorted order; nil when they are equal.
local function first_difference(a, b, path)
  if type(a) ~= "table" or type(b) ~= "table" then
    if a == b or (a ~= a and b ~= b) then return nil end
    return path == "" and "(the whole document)" or path
  end
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do
    if a[k] == nil then keys[#keys + 1] = k end
  end
  table.sort(keys, function(x, y)
    if type(x) == type(y) then return x < y end
    return type(x) == "number"
  end)
  for _, k in ipairs(keys) do
    local sub = type(k) == "number" and string.format("%s[%d]", path, k) or
      (path == "" and tostring(k) or path .. "." .. tostring(k))
    local d = first_difference(a[k], b[k], sub)
    if d then return d end
  end
  return nil
end

-- The study file of summary `sum` of study `name`, checked, the function that refuses the
-- summary with a reason, and its --set overrides.  The file is <studies>/<name>.lua,
-- where studies is the folder the command line gives (`report --studies DIR`) or the
-- project's lua/experiments/: never a path a summary gives (a summary is data, and its
-- `file` only has to agree: the same file name).
local function checked_file(exp_dir, name, sum, studies_dir)
  local path = exp_dir .. "/" .. name .. "/summary.json"
  local function refuse(fmt, ...)
    user_error("report: %s %s: refused (bin/repro analyze writes it again from the " ..
      "verified records)", path, string.format(fmt, ...))
  end
  if not base.valid_name(name) then refuse("belongs to no study name") end
  if type(sum.file) ~= "string" or sum.file == "" then
    refuse("names no study file (`file`) to recompute it from")
  end
  if sum.file:match("[^/]*$") ~= name .. ".lua" then
    refuse("names the study file %s, not %s.lua (a summary is recomputed only from its " ..
      "own study's file)", base.printable(sum.file), name)
  end
  local file = (studies_dir or (host.root .. "/lua/experiments")) .. "/" .. name .. ".lua"
  local why = fs.path_problem(file)
  if why then refuse("cannot be recomputed: %s", base.printable(why)) end
  if not sys.lstat(file) then
    refuse("cannot be recomputed: its study file %s does not exist%s", base.printable(file),
      studies_dir and "" or " (give the folder of its study files with --studies DIR)")
  end
  local set = sum.command_line_overrides
  if set ~= nil and type(set) ~= "table" then refuse("has a malformed command_line_overrides") end
  return file, refuse, set
end

-- Refuses the summary `sum` of study `name` unless its inputs are those it was written
-- from (`inputs_sha256`, record.inputs_digest: its records, its study file, its --set
-- overrides, its corpora and task files).  What every build checks; recomputing the
-- summary (M.check_summary) is `make verify`'s check.  `records`: as inputs_digest's.
function M.check_inputs(exp_dir, name, sum, studies_dir, records)
  local file, refuse, set = checked_file(exp_dir, name, sum, studies_dir)
  local digest = record.inputs_digest(exp_dir .. "/" .. name, file, set, records)
  if sum.inputs_sha256 ~= digest then
    refuse(type(sum.inputs_sha256) ~= "string" and
      "carries no digest of the inputs it was computed from (inputs_sha256)" or
      "was computed from other inputs than those now: its study file, its --set overrides, " ..
      "a corpus or a task file changed since (inputs_sha256 differs)")
  end
end

-- Refuses (a user error naming the file and the first differing key) the summary `text`
-- of the study `name` under exp_dir unless it is, byte for byte, the summary the
-- analysis computes now from the verified records beside it (analysis.study_records and
-- summary_of, as `bin/repro analyze` writes it): its study file evaluated in the study
-- sandbox with the summary's `command_line_overrides`, reading other studies' results
-- under exp_dir.  Called only once the summary passed its other checks (data.load_study:
-- its name, its variants' names, its records' digest).  A digest of the records alone
-- proves nothing about the numbers next to it, since anyone can recompute it.
function M.check_summary(exp_dir, name, text, sum, studies_dir)
  local file, refuse, set = checked_file(exp_dir, name, sum, studies_dir)
  local study = require "repro.study"
  local ok, s = pcall(study.load, file, set, { out_root = exp_dir })
  if not ok then
    local msg = type(s) == "table" and tostring(s.message) or tostring(s)
    local lines = {}
    for l in msg:gmatch("[^\n]+") do
      if #lines < 2 then lines[#lines + 1] = l:gsub("^%s+", "") end
    end
    refuse("cannot be recomputed: its study file %s: %s", base.printable(file),
      base.printable(table.concat(lines, " ")))
  end
  s.file_rel = fs.relative_to_root(file)
  if s.name ~= name then
    refuse("names the study file of another study (%s)", base.printable(s.name))
  end
  local records, missing = analysis.study_records(s, exp_dir .. "/" .. name)
  -- a sequential study is complete once every comparison is decided (analysis/sequential)
  local seq = s.analysis and s.analysis.sequential and require("repro.analysis.sequential")
  if #missing > 0 and not (seq and not seq.needed((seq.state(s, records)))) then
    refuse("cannot be recomputed: %d run%s not done or not verified (%s)", #missing,
      #missing == 1 and " is" or "s are", table.concat(missing, ", ", 1, math.min(#missing, 5)))
  end
  local _, want = analysis.summary_of(s, exp_dir .. "/" .. name, records)
  if want == text then return end
  local key = first_difference(sum, json.decode(want), "")
  refuse("differs from the summary its records give (first differing key: %s)",
    key and base.printable(key) or "none: the same values, written differently")
end

return M
