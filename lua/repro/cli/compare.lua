-- `bin/repro compare`: one table across studies, `--set` roots and run folders (flags and
-- columns: docs/COMMANDS.md).  M.table builds the rows from the finished records
-- (report/results.lua reads the targets): a row per variant and setup, never averaged over
-- setups, or with --runs a row per run; M.view lays it out for the terminal or CSV
-- (report/table.lua), and --json prints its rows.
local json = require "repro.core.json"
local results = require "repro.report.results"
local progress = require "repro.core.progress"
local textable = require "repro.core.textable"
local tbl = require "repro.report.table"
local study = require "repro.study"
local base = require "repro.core.base"

local M = {}

local user_error = base.user_error
local WHO = "repro compare"
M.DEFAULT_METRICS = { "val_loss", "val_ppl", "val_acc" }
M.USAGE = "usage: bin/repro compare [STUDY|DIR ...] [--runs] [--metrics M,...] " ..
  "[--csv | --json] [--out-root DIR]"
local SEED_KEYS = { seed = true, init_seed = true, data_seed = true }

local function parse_args(args)
  local o = base.parse_options(args, WHO, M.USAGE, {
    ["--runs"] = { key = "runs", kind = "flag" },
    ["--csv"] = { key = "format", kind = "flag", set = "csv", one_of = "--csv and --json" },
    ["--json"] = { key = "format", kind = "flag", set = "json", one_of = "--csv and --json" },
    ["--metrics"] = { key = "metrics", kind = "list" },
    ["--out-root"] = { key = "out_root", kind = "value" },
  })
  o.metrics = o.metrics or M.DEFAULT_METRICS
  return o
end

-- Refuses a metric that is neither a study metric nor any run's scalar.
local function check_metrics(metrics, runs)
  local known = {}
  for _, m in ipairs(study.metric_names()) do known[m] = true end
  for _, r in ipairs(runs) do
    for k in pairs(r.metrics) do known[k] = true end
  end
  for _, m in ipairs(metrics) do
    if not known[m] then
      user_error("%s: --metrics: unknown metric '%s'%s (the scalar fields of metrics.json; " ..
        "`bin/repro help` lists them)", WHO, m, base.suggest(m, known))
    end
  end
end

local function mean_sd(values)
  local n, sum = #values, 0
  for _, v in ipairs(values) do sum = sum + v end
  if n == 0 then return nil, nil, 0 end
  local mean = sum / n
  if n == 1 then return mean, nil, 1 end
  local ss = 0
  for _, v in ipairs(values) do ss = ss + (v - mean) ^ 2 end
  return mean, math.sqrt(ss / (n - 1)), n
end

-- A run's setup: its config but the seed keys, as text (two runs of one setup differ in
-- their seeds only).
local function setup_of(r, keys)
  local parts = {}
  for _, k in ipairs(keys) do
    if not SEED_KEYS[k] then
      local v = r.config[k]
      parts[#parts + 1] = k .. "=" .. (type(v) == "number" and results.num(v) or tostring(v))
    end
  end
  return table.concat(parts, "\0")
end

-- The rows: groups of runs (one per variant and setup, or one per run), in the order of
-- the runs.  A variant whose runs have more than one setup (two `--set` roots of one
-- study, a record trained before a change of the study file) gives a row per setup,
-- never a mean over setups; each such row shows the keys in which they differ.
local function group(runs, by_run)
  local rows, index, keys = {}, {}, results.config_keys()
  for _, r in ipairs(runs) do
    local key = by_run and r.dir or (r.study .. "\0" .. r.variant .. "\0" .. setup_of(r, keys))
    local row = index[key]
    if not row then
      row = { study = r.study, variant = r.variant, runs = {} }
      if by_run then row.seed = r.seed end
      index[key] = row
      rows[#rows + 1] = row
    end
    row.runs[#row.runs + 1] = r
  end
  return rows
end

-- The variants split into more than one row by group: "study variant" -> rows.
local function split_variants(rows)
  local count, out = {}, {}
  for _, row in ipairs(rows) do
    local name = row.study ~= "" and (row.study .. " " .. row.variant) or row.variant
    count[name] = (count[name] or 0) + 1
  end
  for name, n in pairs(count) do
    if n > 1 then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

-- init_seed and data_seed that follow the seed in every run (shown by the seed column).
local function seeds_follow(rows, k)
  for _, row in ipairs(rows) do
    for _, r in ipairs(row.runs) do
      if r.config[k] ~= r.config.seed then return false end
    end
  end
  return true
end

-- The config keys whose values differ between the rows (the seed has its own column); the
-- runs of a row share every other key (group).
local function differing_keys(rows, by_run)
  local keys = {}
  for _, k in ipairs(results.config_keys()) do
    if not SEED_KEYS[k] or (by_run and k ~= "seed" and not seeds_follow(rows, k)) then
      for i = 2, #rows do
        if rows[i].runs[1].config[k] ~= rows[1].runs[1].config[k] then
          keys[#keys + 1] = k
          break
        end
      end
    end
  end
  return keys
end

-- The comparison as data: {keys, metrics, rows = {study, variant, seed | n, diverged,
-- config = {k -> v}, metrics = {m -> value | {mean, sd, n}}}}.
function M.table(runs, metrics, by_run)
  local rows = group(runs, by_run)
  local keys = differing_keys(rows, by_run)
  local out = { keys = keys, metrics = metrics, rows = {}, any_diverged = false,
    split = by_run and {} or split_variants(rows) }
  for _, row in ipairs(rows) do
    local o = { study = row.study, variant = row.variant, seed = row.seed, config = {},
      metrics = {}, diverged = 0, n = not by_run and #row.runs or nil }
    for _, k in ipairs(keys) do o.config[k] = row.runs[1].config[k] end
    -- runs neither committed nor made by this checkout (record/provenance.lua) and runs
    -- scored on task files that changed since (results.stale_line marks each): counted
    -- only where there are any, so a table of vouched-for runs keeps its columns
    local adopted, stale = 0, 0
    for _, r in ipairs(row.runs) do
      if r.metrics.diverged == true then o.diverged = o.diverged + 1 end
      if r.provenance and r.provenance.level == "adopted" then adopted = adopted + 1 end
      if #r.stale > 0 then stale = stale + 1 end
    end
    out.any_diverged = out.any_diverged or o.diverged > 0
    if adopted > 0 then out.any_adopted, o.adopted = true, adopted end
    if stale > 0 then out.any_stale, o.stale = true, stale end
    for _, m in ipairs(metrics) do
      if by_run then
        o.metrics[m] = row.runs[1].metrics[m]
      else
        local values = {}
        for _, r in ipairs(row.runs) do
          local v = r.metrics[m]
          if type(v) == "number" and base.finite(v) then values[#values + 1] = v end
        end
        local mean, sd, n = mean_sd(values)
        o.metrics[m] = { mean = mean, sd = sd, n = n }
      end
    end
    out.rows[#out.rows + 1] = o
  end
  return out
end

local function show(v)
  if v == nil then return "-" end
  if type(v) == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return (string.format("%.4g", v):gsub("^%-0$", "0"))
  end
  return tostring(v)
end

local function show_metric(v)
  if type(v) ~= "table" then return show(v) end
  if v.mean == nil then return "-" end
  if v.sd == nil then return show(v.mean) end
  return show(v.mean) .. " ± " .. show(v.sd)
end

local function has_study(t)
  local studies = {}
  for _, r in ipairs(t.rows) do studies[r.study] = true end
  return next(studies, next(studies)) ~= nil or (t.rows[1] and t.rows[1].study ~= "")
end

-- The comparison as a table of the one table model (report/table.lua): for people (the
-- terminal: mean ± sd), or for machines (machine: each metric's mean, sd and n as numbers,
-- every run's value with by_run).
function M.view(t, by_run, machine)
  local with_study = machine or has_study(t)
  local diverged = machine or t.any_diverged
  local head = {}
  if with_study then head[#head + 1] = "study" end
  head[#head + 1] = "variant"
  head[#head + 1] = by_run and "seed" or "n"
  for _, k in ipairs(t.keys) do head[#head + 1] = k end
  for _, m in ipairs(t.metrics) do
    local c = results.metric_column(m)
    if machine and not by_run then
      for _, part in ipairs({ "_mean", "_sd", "_n" }) do head[#head + 1] = c .. part end
    else
      head[#head + 1] = c
    end
  end
  if diverged then head[#head + 1] = "diverged" end
  if t.any_adopted then head[#head + 1] = "adopted" end
  if t.any_stale then head[#head + 1] = "stale" end
  -- a cell as it is for machines (nil and false as people see them), through show for people
  local function cell(v) return machine and v or show(v) end
  local out = { head = head, rows = {} }
  for _, r in ipairs(t.rows) do
    local row = {}
    local function put(v) row[#row + 1] = v end
    if with_study then put(r.study) end
    put(r.variant)
    put(cell(by_run and r.seed or r.n))
    for _, k in ipairs(t.keys) do put(cell(r.config[k])) end
    for _, m in ipairs(t.metrics) do
      local v = r.metrics[m]
      if not machine then
        put(show_metric(v))
      elseif by_run then
        put(v)
      else
        put(v.mean)
        put(v.sd)
        put(v.n)
      end
    end
    if diverged then put(cell(r.diverged)) end
    if t.any_adopted then put(cell(r.adopted or 0)) end
    if t.any_stale then put(cell(r.stale or 0)) end
    out.rows[#out.rows + 1] = row
  end
  return out
end

function M.main(args)
  local o = parse_args(args)
  if o.help then return 0 end
  local derived = false
  for _, m in ipairs(o.metrics) do derived = derived or results.LOG_METRICS[m] ~= nil end
  local runs = results.collect(o.targets, { out_root = o.out_root, with_derived = derived }, WHO,
    progress.say)
  check_metrics(o.metrics, runs)
  local t = M.table(runs, o.metrics, o.runs)
  if #t.split > 0 then
    progress.say("%s: runs of more than one setup (configs that differ in more than the " ..
      "seed) are never averaged together: a row per setup for %s", WHO,
      table.concat(t.split, ", "))
  end
  if o.format == "json" then
    results.emit(json.pretty(t.rows) .. "\n")
  elseif o.format == "csv" then
    results.emit(tbl.csv(M.view(t, o.runs, true)))
  else
    io.write(tbl.text(M.view(t, o.runs), textable.width(), { title = false, indent = "" }))
  end
  return 0
end

return M
