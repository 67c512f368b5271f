-- A run record's values for the analysis: its log.csv parsed, its spikes counted, its
-- metrics read, and the one masking rule for a diverged run (lua/experiments/README.md,
-- "What the summary holds", states them; the report and compare/export use them too).
local reader = require "repro.record.reader"
local words = require "repro.analysis.words"
local fs = require "repro.core.fs"
local engine = require "engine"
local finite = require("repro.core.base").finite
local sys = require "repro.sys"
local stats = require "stats"

local M = {}

M.SPIKE_FACTOR = words.SPIKE_FACTOR
local DERIVED = { diverged = true, n_spikes = true, max_loss_ratio = true }

-- Whether a diverged run's value of `metric` is masked: every metric but those defined
-- for a diverged run too (words.METRIC's `diverged`).
function M.masked(metric, diverged)
  return diverged and not (words.metric(metric) or {}).diverged
end

local function requested_value(name, log, cfg)
  if name == "clip_fraction" then
    local gn, clip = log.data.grad_norm, cfg and tonumber(cfg.grad_clip)
    if not gn or not clip or log.n == 0 then return nil end
    local clipped = 0
    for t = 1, log.n do
      if clip > 0 and gn[t] and gn[t] > clip then clipped = clipped + 1 end
    end
    return clipped / log.n
  end
  local k = tonumber(name:match("^val_loss_after_(%d+)$"))
  local steps, d = log.data.step, log.data.d_val_loss
  if not (k and steps and d) then return nil end
  for t = 1, log.n do
    if steps[t] == k - 1 then return d[t] end
  end
  return nil
end

-- The definition of metric m, a requested one's by its pattern.
function M.definition(m)
  return (words.metric(m) or {}).def
end

-- log.csv text -> {columns = {...}, data = {column -> values by row}, n = rows}: lines
-- split on LF (empty ones skipped), fields on commas, each as reader.log_number reads
-- it; in C (sys.parse_log, lua/lsys.c): the report reads every log of every study.
M.parse_log = sys.parse_log

-- n_spikes and max_loss_ratio of a list of n training losses (lua/experiments/README.md).
function M.spikes(loss, n)
  local count, worst, min = 0, nil, nil
  for t = 1, n do
    local l = loss[t]
    if not finite(l) then
      count = count + 1
    else
      if min then
        local ratio = l / min
        if ratio > M.SPIKE_FACTOR then count = count + 1 end
        if not worst or ratio > worst then worst = ratio end
      end
      if not min or l < min then min = l end
    end
  end
  return count, worst
end

-- The training after warmup (exploratory): the instability measures of the steps from
-- `from` on, `from` being the run's warmup or, without one, the default warmup (so runs
-- with and without warmup are measured over the same steps): max_loss_jump (the
-- largest rise of the loss above the smallest loss since `from`), max_grad_norm, and
-- grad_norm_cv (the pre-clip gradient norm's sd over its mean, stats.summary); and
-- whether the whole run's largest gradient norm and loss jump fall before `from`
-- (peak_grad_in_warmup, peak_jump_in_warmup: 1 or 0).  nil when the run has no
-- finite loss from `from` on (it diverged before).
M.DEFAULT_WARMUP = engine.defaults().warmup

function M.after_warmup(cfg, data, n)
  local from = math.tointeger(tonumber(cfg.warmup)) or M.DEFAULT_WARMUP
  if from == 0 then from = M.DEFAULT_WARMUP end
  local loss, gn, step = data.loss or {}, data.grad_norm or {}, data.step or {}
  local out = { from = from, max_loss_jump = 0 }
  local min, norms, best, peak_g, peak_at_g, jump, jump_at = nil, {}, nil, nil, nil, 0, nil
  for t = 1, n do
    local at, l, g = step[t] or (t - 1), loss[t], gn[t]
    if finite(g) and (not peak_g or g > peak_g) then peak_g, peak_at_g = g, at end
    if finite(l) then
      if best and l - best > jump then jump, jump_at = l - best, at end
      if not best or l < best then best = l end
    end
    if at >= from then
      if finite(l) then
        if min and l - min > out.max_loss_jump then out.max_loss_jump = l - min end
        if not min or l < min then min = l end
      end
      if finite(g) then norms[#norms + 1] = g end
    end
  end
  if not min or #norms < 2 then return nil end
  local sm = stats.summary(norms)
  out.max_grad_norm, out.grad_norm_cv = sm.max, sm.sd / sm.mean
  out.peak_grad_in_warmup = peak_at_g and peak_at_g < from and 1 or 0
  out.peak_jump_in_warmup = jump_at and jump_at < from and 1 or 0
  return out
end

-- The training losses of a record's log.csv (by row; nil where a row has none) and the
-- number of rows, read row by row (record/reader.lua); nil when it has no loss column.
-- With want_sha256, the log read must have that SHA-256 (reader.log_fields).
function M.log_losses(dir, want_sha256)
  return reader.log_column(dir, "loss", want_sha256)
end

-- The values of one run record: {diverged = bool, values = {metric -> number},
-- missing = {metric names absent from a finished run}}.  Only config.json, log.csv and
-- metrics.json are read (through record/reader.lua, which the caller has checked the
-- record with), never manifest.json: a summary is a function of the records'
-- bytes alone, so it is the same whichever study trained a record first and whether this
-- one trained or copied it (a from-scratch `make reproduce` trains claim_search's copy of
-- prelim's config itself, since prelim comes later).  Where a record came from is in its
-- manifest.json (`copied_from`) and in the paper's compute appendix.
function M.read_run(dir, metrics, checked)
  local rec, why = checked, nil
  if not rec then rec, why = reader.load(dir) end
  if not rec then return nil, dir .. ": " .. why end
  local kept = rec.verified or { texts = {}, sha256 = {} }
  local m = rec.metrics
  local diverged = m.diverged == true
  local derived = { diverged = diverged and 1 or 0 }
  local curve, n = reader.log_fields(dir, { "step", "loss", "grad_norm" },
    kept.sha256["log.csv"])
  if curve.loss then
    local n_spikes, max_ratio = M.spikes(curve.loss, n)
    derived.n_spikes, derived.max_loss_ratio = n_spikes, max_ratio
  end
  local run = { diverged = diverged, values = {}, missing = {} }
  local cfg, log = rec.config, nil
  -- for an analysis section that reads the training after warmup (M.after_warmup)
  run.after_warmup = M.after_warmup(cfg, curve, n)
  for _, name in ipairs(metrics) do
    local v
    if DERIVED[name] then
      v = derived[name]
    elseif name == "clip_fraction" or name:match("^val_loss_after_%d+$") then
      if not log then
        local data, n = reader.log_fields(dir, { "grad_norm", "step", "d_val_loss" },
          kept.sha256["log.csv"])
        log = { data = data, n = n }
      end
      v = requested_value(name, log, cfg)
    elseif type(m[name]) == "number" then
      v = m[name]
    end
    if M.masked(name, diverged) then v = nil end
    if v ~= nil and not finite(v) then v = nil end
    if v == nil and not diverged then run.missing[#run.missing + 1] = name end
    run.values[name] = v
  end
  -- the accuracy of each validation subset (a list, which an extension may pool)
  for _, k in ipairs({ "subset_acc", "bal_subset_acc" }) do
    if not diverged and type(m[k]) == "table" then run[k] = m[k] end
  end
  -- per-item task correctness (tasks.csv, runs with the config key tasks):
  -- task_items["<task>/<shots>"] = { 0|1, ... } in item order
  local csv = not diverged and (kept.texts["tasks.csv"] or
    (not rec.verified and fs.read(dir .. "/tasks.csv")))
  if csv then
    run.task_items = {}
    for task, shots, item, correct in csv:gmatch("([%w_]+),(%d+),(%d+),(%d),%d\n") do
      local key = task .. "/" .. shots
      run.task_items[key] = run.task_items[key] or {}
      run.task_items[key][tonumber(item)] = tonumber(correct)
    end
  end
  -- the pairing key: init_seed and data_seed, which default to the seed
  run.init_seed = math.tointeger(cfg.init_seed) or math.tointeger(cfg.seed)
  run.data_seed = math.tointeger(cfg.data_seed) or math.tointeger(cfg.seed)
  return run
end

return M
