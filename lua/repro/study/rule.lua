-- A study's pre-registered analysis (the `analysis` table of a study file; its fields in
-- lua/experiments/README.md), checked and normalized: the metrics it may
-- name, the decision rule's parameters, the test, the comparisons and interactions, and
-- the sections its extensions and sweep add.
local stats = require "stats"
local sweep = require "repro.study.sweep"
local sequential = require "repro.study.sequential"
local prob = require "repro.study.problems"
local base = require "repro.core.base"
local original = require "repro.study.original"
local tasks = require "repro.tasks"
local json = require "repro.core.json"

local M = {}

local sorted_keys, set_of, suggest = base.sorted_keys, base.set_of, base.suggest
local is_list, typename = prob.is_list, prob.typename

-- Metrics computed by lua/repro/analysis/init.lua from a run's log.csv and metrics.json.
M.DERIVED_METRICS = { "diverged", "n_spikes", "max_loss_ratio" }

-- Metrics computed from a run's log.csv only for a study that names them in its analysis
-- (so the summaries of the studies that do not keep their bytes): clip_fraction, and
-- val_loss_after_<k> for a step count k (lua/repro/analysis/records.lua defines them).
M.REQUESTED_METRICS = { "clip_fraction", "val_loss_after_<k>" }
function M.is_requested_metric(m)
  return type(m) == "string" and (m == "clip_fraction" or
    (m:match("^val_loss_after_[1-9]%d*$") ~= nil and #m <= 24))
end

-- The scalar results engine.train documents (lua/lengine.c); every numeric top-level
-- field of metrics.json is usable, these are the names a study may list.
M.ENGINE_METRICS = require("engine").metric_names()

M.ANALYSIS_FIELDS = { "baseline", "metrics", "primary", "better", "min_effect", "alpha",
  "correction", "resamples", "comparisons", "interactions", "bootstrap", "secondary", "test",
  "registered_rule", "sweep", "tasks", "sequential" }
-- The decision rule of lua/repro/analysis/init.lua (analysis.RULE, kept here so that loading a
-- study does not load the analysis).
M.RULE = 2
function M.metric_names()
  local all = {}
  for _, m in ipairs(M.DERIVED_METRICS) do all[#all + 1] = m end
  for _, m in ipairs(M.ENGINE_METRICS) do all[#all + 1] = m end
  for _, m in ipairs(tasks.metric_names()) do all[#all + 1] = m end
  return all
end


local function check_pair(P, pair, path, variants, names)
  if not (is_list(pair) and #pair == 2 and type(pair[1]) == "string"
      and type(pair[2]) == "string") then
    P.add(path, "expected a pair {treatment, baseline} of variant names")
    return nil
  end
  local ok = true
  for i = 1, 2 do
    if not variants[pair[i]] then
      P.add(path .. "[" .. i .. "]", function()
        return "unknown variant '" .. pair[i] .. "'" .. suggest(pair[i], names)
      end, pair[i])
      ok = false
    end
  end
  if ok and pair[1] == pair[2] then
    P.add(path, "compares variant '" .. pair[1] .. "' with itself", pair[1])
    ok = false
  end
  return ok and { pair[1], pair[2] } or nil
end

-- check_analysis in steps: each checks some fields of the study's `analysis` table `a`,
-- reports their problems to P (in the order check_analysis calls the steps, so a study's
-- list of problems reads the same each time) and fills the normalized `out`.

-- What each analysis field takes, for the message of a missing one and the comments of
-- `bin/repro new` (lua/repro/cli/new.lua): {field, text, required}, in the order a study
-- file lists them.  variant_names (optional) are the study's variants.
function M.analysis_fields(variant_names)
  local v = "the name of a variant"
  if variant_names and #variant_names > 0 then
    v = "one of the variants: \"" .. table.concat(variant_names, "\", \"") .. "\""
  end
  return {
    { "baseline", v .. " (without comparisons, every other variant is compared with it)", true },
    { "metrics", "a non-empty list of metric names, e.g. { \"val_loss\", \"val_acc\" }; " ..
      "the names: " .. table.concat(M.metric_names(), ", ") .. "; from log.csv on request: " ..
      table.concat(M.REQUESTED_METRICS, ", "), true },
    { "primary", "one of analysis.metrics: the metric the verdicts are about", true },
    { "better", "\"lower\" or \"higher\" (which way the primary metric improves)", true },
    { "min_effect", "a number > 0 in the primary metric's units: the smallest difference " ..
      "that matters (e.g. 0.02 nats of val_loss, about 2 % perplexity)", true },
    { "alpha", "a number in (0, 1), e.g. 0.05", true },
    { "correction", "\"holm\" (the only one)", true },
    { "resamples", "an integer >= " .. stats.MIN_RESAMPLES .. ": bootstrap resamples, " ..
      "e.g. 10000", true },
    { "test", "\"t\" (the paired t-test) or \"signflip\" (the exact sign-flip test): " ..
      "the decision test", true },
    { "comparisons", "optional: a list of { treatment, baseline } pairs of variant names; " ..
      "{} pre-registers no test (a descriptive study); a pair may carry original = { claim " ..
      "=, source =, metric =, estimate = | arms =, matches =, ... }, the original estimate " ..
      "it replicates (lua/repro/study/original.lua)", false },
    { "secondary", "optional: metric names compared outside the Holm family (exploratory)",
      false },
    { "interactions", "optional: a list of { name = , a = { t, b }, b = { t, b } }: " ..
      "differences of two paired differences (a or b may be a list of pairs { { t, b }, " ..
      "... }: the mean of their paired differences, e.g. a factorial contrast)", false },
    { "bootstrap", "optional: \"exact\" (default) or \"monte-carlo\"", false },
    { "registered_rule", "optional: the decision rule pre-registered, an integer from 1 to " ..
      M.RULE .. " (default " .. M.RULE .. ", the current one)", false },
    { "sweep", "optional: a learning-rate sweep's groups (lua/repro/study/sweep.lua)", false },
    { "tasks", "optional: { suite = \"core\", shots = { 0, 3 } }: the task analysis of runs " ..
      "with that config key tasks (lua/repro/analysis/tasks.lua)", false },
    { "sequential", "optional: { looks = { n1, ... }, shape = \"obf\" | \"pocock\", test = " ..
      "\"signed_rank\" | \"t\", stop = { ... }, margin =, target =, sd =, sd_source =, " ..
      "boundary = \"constant\" | \"spending\" }: " ..
      "seeds in looks, each comparison stopped when decided (lua/repro/study/sequential.lua)",
      false },
  }
end

-- Unknown fields, and the required ones that are missing, with what they take.
local function check_analysis_fields(P, a, variant_names, ext)
  local fields = set_of(M.ANALYSIS_FIELDS)
  for name in pairs(ext) do fields[name] = true end
  for _, k in ipairs(sorted_keys(a)) do
    if not fields[k] then
      P.add("analysis." .. tostring(k), function()
        return "unknown field" .. suggest(tostring(k), M.ANALYSIS_FIELDS)
      end, tostring(k))
    end
  end
  for _, f in ipairs(M.analysis_fields(variant_names)) do
    if f[3] and a[f[1]] == nil then P.add("analysis." .. f[1], "missing (it is part of the " ..
      "pre-registration); expected " .. f[2], "analysis") end
  end
end

-- A list of metric names at analysis.<field>; `seen` holds names already taken (a
-- repeat is an error, `twice` says why), and is updated.
local function metric_list(P, a, field, nonempty, seen, twice)
  local known = set_of(M.metric_names())
  local list = {}
  local value = a[field]
  if value == nil then return list end
  if not is_list(value) or (nonempty and #value == 0) then
    P.add("analysis." .. field, "expected a " .. (nonempty and "non-empty " or "") ..
      "list of metric names")
    return list
  end
  for i, m in ipairs(value) do
    local path = "analysis." .. field .. "[" .. i .. "]"
    if type(m) ~= "string" or not (known[m] or M.is_requested_metric(m)) then
      P.add(path, function()
        return "unknown metric '" .. tostring(m) .. "'" .. suggest(tostring(m), M.metric_names())
      end, tostring(m))
    elseif seen[m] then
      P.add(path, "metric '" .. m .. "' " .. twice, m, 2)
    else
      seen[m] = true
      list[#list + 1] = m
    end
  end
  return list
end

-- baseline, metrics, secondary (compared like the others but outside the Holm family:
-- exploratory) and primary.
local function check_metrics(P, a, out, variants, variant_names)
  out.baseline = P.check("analysis.baseline", a.baseline, function(v) return variants[v] end,
    function()
      return "unknown variant '" .. tostring(a.baseline) .. "'" ..
        suggest(tostring(a.baseline), variant_names)
    end)
  local seen = {}
  out.metrics = metric_list(P, a, "metrics", true, seen, "is listed twice")
  out.secondary = metric_list(P, a, "secondary", false, seen,
    "is already listed in analysis.metrics or analysis.secondary")
  out.primary = P.check("analysis.primary", a.primary,
    function(v) return set_of(out.metrics)[v] end,
    "'" .. tostring(a.primary) .. "' is not one of analysis.metrics")
end

-- The decision's parameters: better, min_effect, alpha, correction.
local function check_decision(P, a, out)
  out.better = P.check("analysis.better", a.better, prob.one_of("lower", "higher"),
    "expected \"lower\" or \"higher\", got " .. tostring(a.better))
  local min_effect = P.check("analysis.min_effect", a.min_effect, prob.positive,
    "expected a number > 0 (in the primary metric's units)")
  out.min_effect = min_effect and min_effect + 0.0
  local alpha = P.check("analysis.alpha", a.alpha, prob.fraction, "expected a number in (0, 1)")
  out.alpha = alpha and alpha + 0.0
  P.check("analysis.correction", a.correction, prob.one_of("holm"),
    "only \"holm\" is supported, got " .. tostring(a.correction))
  out.correction = "holm"
end

-- The test and its resampling: resamples, bootstrap, test, registered_rule.
local function check_test(P, a, out)
  out.resamples = P.check("analysis.resamples", a.resamples,
    prob.integer_from(stats.MIN_RESAMPLES), "expected an integer >= " .. stats.MIN_RESAMPLES)
  out.bootstrap = a.bootstrap or "exact"
  P.check("analysis.bootstrap", out.bootstrap, prob.one_of("exact", "monte-carlo"),
    "expected \"exact\" or \"monte-carlo\"")
  out.test = P.check("analysis.test", a.test, prob.one_of("t", "signflip"),
    "expected \"t\" (the paired t-test) or \"signflip\" (the exact sign-flip test), got " ..
    tostring(a.test))
  out.registered_rule = P.check("analysis.registered_rule", a.registered_rule,
    function(v) return prob.integer_from(1)(v) and v <= M.RULE end, string.format(
    "expected an integer from 1 to %d (the current decision rule)", M.RULE)) or M.RULE
end

-- The comparisons: the listed {treatment, baseline} pairs, or without a list every
-- variant against the baseline (out.baseline, when valid).
local function check_comparisons(P, a, out, variants, variant_names)
  out.comparisons, out.originals = {}, {}
  local seen = {}
  local function add_cmp(pair) -- false when the pair is listed already
    local key = pair[1] .. "\0" .. pair[2]
    if seen[key] then return false end
    seen[key] = true
    out.comparisons[#out.comparisons + 1] = pair
    return true
  end
  if a.comparisons == nil then
    for _, v in ipairs(out.baseline and variant_names or {}) do
      if v ~= out.baseline then add_cmp({ v, out.baseline }) end
    end
    return
  end
  if not is_list(a.comparisons) then
    P.add("analysis.comparisons", "expected a list of {treatment, baseline} pairs ({} for " ..
      "none: a descriptive study)")
    return
  end
  local compared = set_of(out.metrics or {})
  for _, m in ipairs(out.secondary or {}) do compared[m] = true end
  for i, pair in ipairs(a.comparisons) do
    local path = "analysis.comparisons[" .. i .. "]"
    local orig
    if type(pair) == "table" and pair.original ~= nil then
      orig = pair.original -- the original it replicates (lua/repro/study/original.lua)
      pair = { pair[1], pair[2], table.unpack(pair, 3) }
    end
    local p = check_pair(P, pair, path, variants, variant_names)
    if p and orig ~= nil then
      for _, e in ipairs(original.check(P, orig, path .. ".original", p, compared)) do
        out.originals[#out.originals + 1] = e
      end
    end
    if p and not add_cmp(p) then
      P.add(path, string.format("the comparison %s vs %s is listed twice", p[1], p[2]),
        "comparisons")
    end
  end
end

-- One side of an interaction: a pair {t, b}, or a non-empty list of pairs {{t, b}, ...}
-- (its effect the mean of their paired differences), as given.
local function check_side(P, side, path, variants, variant_names)
  if type(side) == "table" and type(side[1]) == "table" then
    if not is_list(side) then
      P.add(path, "expected a pair {treatment, baseline} or a list of such pairs")
      return nil
    end
    local out = {}
    for i, pair in ipairs(side) do
      local pr = check_pair(P, pair, path .. "[" .. i .. "]", variants, variant_names)
      if not pr then return nil end
      out[i] = pr
    end
    return out
  end
  return check_pair(P, side, path, variants, variant_names)
end

-- The interactions {name=, a={t, b}, b={t, b}} (a side may be a list of pairs: check_side).
local function check_interactions(P, a, out, variants, variant_names)
  out.interactions = {}
  if a.interactions == nil then return end
  if not is_list(a.interactions) then
    P.add("analysis.interactions", "expected a list of {name=, a={t, b}, b={t, b}}")
    return
  end
  local names = {}
  for i, it in ipairs(a.interactions) do
    local path = "analysis.interactions[" .. i .. "]"
    if type(it) ~= "table" then
      P.add(path, "expected a table {name=, a={t, b}, b={t, b}}")
    else
      prob.unknown_fields(P, it, path, { "name", "a", "b" }, " (expected name, a, b)")
      if type(it.name) ~= "string" or it.name == "" then
        P.add(path .. ".name", "expected a string")
      elseif names[it.name] then
        P.add(path .. ".name", "interaction '" .. it.name .. "' is listed twice", it.name, 2)
      end
      local pa = check_side(P, it.a, path .. ".a", variants, variant_names)
      local pb = check_side(P, it.b, path .. ".b", variants, variant_names)
      if type(it.name) == "string" and pa and pb then
        names[it.name] = true
        out.interactions[#out.interactions + 1] = { name = it.name, a = pa, b = pb }
      end
    end
  end
end

-- analysis.tasks: { suite = <a suite of lua/repro/tasks>, shots = { k, ... } (each of
-- tasks.SHOTS) }, normalized.
local function check_tasks(P, t)
  if type(t) ~= "table" or type(t.suite) ~= "string" or not tasks.find_suite(t.suite) then
    P.add("analysis.tasks", "expected { suite = <a task suite: core>, shots = { 0, 3 } }")
    return nil
  end
  local known, shots = set_of(tasks.SHOTS), {}
  prob.unknown_fields(P, t, "analysis.tasks", { "suite", "shots" }, " (expected suite, shots)")
  for i, k in ipairs(type(t.shots) == "table" and t.shots or { 0 }) do
    if not known[k] then
      P.add("analysis.tasks.shots[" .. i .. "]", "expected one of the shot counts " ..
        table.concat(tasks.SHOTS, ", "))
    else
      shots[#shots + 1] = k
    end
  end
  return { suite = t.suite, shots = json.array(shots) }
end


-- The study's pre-registered analysis (header), normalized; P collects the problems.
function M.check(P, a, variants, variant_names, ext)
  local out = {}
  if type(a) ~= "table" then
    P.add("analysis", "expected a table, got " .. typename(a))
    return out
  end
  check_analysis_fields(P, a, variant_names, ext)
  check_metrics(P, a, out, variants, variant_names)
  check_decision(P, a, out)
  check_test(P, a, out)
  out.design_notes = {}
  check_comparisons(P, a, out, variants, variant_names)
  check_interactions(P, a, out, variants, variant_names)
  for _, name in ipairs(sorted_keys(ext)) do
    if a[name] ~= nil then
      out[name] = ext[name].check(P, a[name], variants, variant_names, out)
    end
  end
  if a.sweep ~= nil then out.sweep = sweep.check(P, a.sweep, variants) end
  if a.tasks ~= nil then out.tasks = check_tasks(P, a.tasks) end
  if a.sequential ~= nil then out.sequential = sequential.check(P, a.sequential, out) end
  return out
end

return M
