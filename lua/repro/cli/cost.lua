-- `bin/repro cost STUDY.lua... [--jobs N] [--out-root DIR] [--set key=value,...]`: the
-- predicted wall time of each study on this machine, from scratch (every run) and for what
-- `bin/repro run` would actually train now (the runs not reused or copied), then the
-- totals; make reproduce prints it before it starts.  The prediction and its calibration:
-- lua/repro/plan/cost.lua.  Jobs and threads as `bin/repro run` chooses them (--jobs, else
-- the study's `jobs`, at most the cores; threads = cores / jobs).  A study that cannot be
-- loaded yet (its pilot's summary does not exist) is listed as unknown.
--
-- --markdown prints the same as a Markdown table (REPRODUCE.md's study table is this, made
-- by `make cost-table`): per study its runs, the from-scratch time in default runs (the
-- predicted time of one run of the default config, engine.defaults(), at the same threads:
-- a unit that carries to another machine, as REPRODUCE.md normalizes budgets) and on this
-- machine.
local engine = require "engine"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local config = require "repro.core.config"
local base = require "repro.core.base"
local study = require "repro.study"
local planner = require "repro.plan"
local cost = require "repro.plan.cost"

local M = {}

M.USAGE = "usage: bin/repro cost lua/experiments/X.lua... [--jobs N] [--out-root DIR] " ..
  "[--set key=value,...] [--markdown]"

local function parse(args)
  local o = base.parse_options(args, "repro cost", M.USAGE, {
    ["--jobs"] = { key = "jobs", kind = "int", min = 1 },
    ["--out-root"] = { key = "out_root", kind = "value" },
    ["--markdown"] = { key = "markdown", kind = "flag" },
    ["--set"] = { key = "set_raw", kind = "list", repeats = true } })
  if o.set_raw then o.set = config.parse_overrides(o.set_raw, "repro cost --set") end
  o.files = o.targets
  if #o.files == 0 and not o.help then base.user_error("%s", M.USAGE) end
  return o
end

-- Worker processes and threads per worker for study s, as `bin/repro run` chooses them.
local function jobs_threads(o, s, cores)
  local jobs = math.min(o.jobs or s.jobs, cores)
  return jobs, math.max(1, cores // jobs)
end

-- The Markdown table of --markdown: a row per study, then the total.
local function markdown(o, out_root, cores)
  -- Every shape at a thread count is calibrated in one call, before any prediction: a
  -- study's time in default runs divides two predictions, which must rest on calibrations
  -- made together (a calibration made under load is redone by the next call that sees the
  -- cores give more, and the ratio would mix the two).
  local loaded = {}
  for _, file in ipairs(o.files) do
    local ok, s = pcall(study.load, file, o.set, { out_root = out_root })
    loaded[file] = { ok = ok, s = s }
  end
  local cfgs = { [cores] = { engine.defaults() } }
  for _, file in ipairs(o.files) do
    local l = loaded[file]
    if l.ok then
      local _, threads = jobs_threads(o, l.s, cores)
      cfgs[threads] = cfgs[threads] or { engine.defaults() }
      for _, r in ipairs(l.s.runs) do table.insert(cfgs[threads], r.cfg) end
    end
  end
  local cal = {}
  for threads, list in pairs(cfgs) do cal[threads] = cost.calibrations(list, threads) end
  local unit = {}
  local function default_run(threads)
    if not unit[threads] then
      unit[threads] = cost.predict({ { cfg = engine.defaults() } }, 1, threads, cal[threads])
    end
    return unit[threads]
  end
  local info = cost.cpuinfo()
  print(string.format("Predicted by `bin/repro cost --markdown` on %s (family %s, model %s), %d " ..
    "cores; one default run (engine.defaults(): %d steps) is predicted at %s on %d threads there.",
    info["model name"] or "an unknown CPU", info["cpu family"] or "?", info.model or "?", cores,
    engine.defaults().iters, cost.fmt(default_run(cores)), cores))
  print("")
  print("| study | runs | from scratch, in default runs | from scratch on this machine " ..
    "(jobs x threads) |")
  print("|---|---:|---:|---|")
  local total, total_units, n = 0, 0, 0
  for _, file in ipairs(o.files) do
    local name = file:match("([^/]+)%.lua$") or file
    local ok, s = loaded[file].ok, loaded[file].s
    if not ok then
      -- said the same on every machine (REPRODUCE.md's table): the study it waits for,
      -- not a path of this checkout
      local msg = (type(s) == "table" and s.message or tostring(s)):gsub("\n.*", "")
      local needs = msg:match("the study '([^']+)' has no results")
      print(string.format("| %s | ? | ? | not loadable until %s |", name, needs and
        (needs .. " has run (it reads that study's results)") or
        (msg:gsub("|", "/"):gsub("%.%.%.", ""))))
    else
      local jobs, threads = jobs_threads(o, s, cores)
      local all = cost.predict(s.runs, jobs, threads, cal[threads])
      local u = default_run(threads)
      local units = all and u and all * jobs / u
      print(string.format("| %s | %d | %s | %s (%d x %d) |", name, #s.runs,
        units and string.format("%.0f", units) or "?", cost.fmt(all), jobs, threads))
      n = n + #s.runs
      if all then total, total_units = total + all, total_units + (units or 0) end
    end
  end
  print(string.format("| total | %d | %.0f | %s |", n, total_units, cost.fmt(total)))
  return 0
end

function M.main(args)
  local o = parse(args)
  if o.help then return 0 end
  local out_root = planner.out_root(o.out_root, o.set)
  local cores = sys.cores()
  if o.markdown then return markdown(o, out_root, cores) end
  print(string.format("%-22s %5s %12s %6s %12s  %s", "study", "runs", "from scratch", "train",
    "this time", "jobs x threads"))
  local total_all, total_now, n_all, n_now, unknown = 0, 0, 0, 0, {}
  for _, file in ipairs(o.files) do
    local name = file:match("([^/]+)%.lua$") or file
    local ok, s = pcall(study.load, file, o.set, { out_root = out_root })
    if not ok then
      unknown[#unknown + 1] = name
      print(string.format("%-22s %5s %12s %6s %12s  (%s)", name, "?", "?", "?", "?",
        "not loadable yet: " .. (type(s) == "table" and s.message or tostring(s)):gsub("\n.*", "")))
    else
      local jobs, threads = jobs_threads(o, s, cores)
      local runs = s.runs
      planner.plan(s, runs, out_root, false)
      local pending = cost.to_train(runs)
      local all = cost.predict(runs, jobs, threads)
      local now = cost.predict(pending, jobs, threads)
      print(string.format("%-22s %5d %12s %6d %12s  %d x %d", name, #runs, cost.fmt(all),
        #pending, cost.fmt(now), jobs, threads))
      n_all, n_now = n_all + #runs, n_now + #pending
      if all and now then
        total_all, total_now = total_all + all, total_now + now
      else
        unknown[#unknown + 1] = name
      end
    end
  end
  print(string.format("%-22s %5d %12s %6d %12s  %s", "total", n_all, cost.fmt(total_all), n_now,
    cost.fmt(total_now), #unknown > 0 and ("without " .. table.concat(unknown, ", ")) or ""))
  print(string.format("predicted on this machine: %s to retrain every study from scratch; " ..
    "%s for the %d run%s to train now (records in %s)", cost.fmt(total_all), cost.fmt(total_now),
    n_now, n_now == 1 and "" or "s", fs.shown(out_root)))
  return 0
end

return M
