-- A study's learning-rate sweep as its study file declares it: analysis.sweep, validated
-- by M.check (and its outcomes' test against the seeds by M.check_design); the analysis
-- stage summarizes it (lua/repro/analysis/lrsens.lua).
--   sweep = { over = "lr", groups = { { name =, variants = { ... } }, ... }, reference =,
--     loss = "val_loss", pilot = { { treatment, baseline }, ... }, outcomes = { metrics =,
--     primary =, better =, min_effect =, deltas = { <outcome> = x }, comparisons =,
--     test = } }
-- M.OUTCOMES defines the outcomes; `deltas` pre-registers the minimum effect of every
-- outcome (the primary's is min_effect).  Fields: lua/experiments/README.md.
local stats = require "stats"
local base = require "repro.core.base"
local prob = require "repro.study.problems"

local M = {}

M.OUTCOMES = {
  mean_max_loss_jump = "mean over the grid of max_loss_jump, the largest rise of the " ..
    "training loss above the best loss reached before it (nats)",
  gmean_max_grad_norm = "geometric mean over the grid of max_grad_norm, the largest " ..
    "pre-clip gradient norm",
  gmean_logit_growth = "geometric mean over the grid of logit_growth, the largest |logit| " ..
    "of a training batch over its value at step 0",
  n_diverged = "number of grid values at which the run diverged",
  log10_diverge_lr = "log10 of the smallest grid value at which the run diverged; a seed " ..
    "that diverged nowhere counts one grid step above the largest value (censored)",
}
local is_list = prob.is_list
local OUTCOME_NAMES = table.concat(base.sorted_keys(M.OUTCOMES), ", ")

local function check_pairs(P, list, path, groups)
  local out = {}
  if not is_list(list) then
    P.add(path, "expected a list of {group, group} pairs")
    return out
  end
  for i, p in ipairs(list) do
    local ok = is_list(p) and #p == 2 and groups[p[1]] and groups[p[2]] and p[1] ~= p[2]
    if not ok then
      P.add(path .. "[" .. i .. "]", "expected a pair of two different groups of the sweep " ..
        "(groups: " .. table.concat(base.sorted_keys(groups), ", ") .. ")",
        path:match("[%w_]+$"))
    else
      out[#out + 1] = { p[1], p[2] }
    end
  end
  return out
end

-- The outcomes' metrics (out.metrics), each one of M.OUTCOMES.
local function outcome_metrics(P, o, path, out)
  if not is_list(o.metrics) or #o.metrics == 0 then
    P.add(path .. ".metrics", "expected a non-empty list of outcomes (" .. OUTCOME_NAMES .. ")",
      "metrics")
  else
    for i, m in ipairs(o.metrics) do
      if not M.OUTCOMES[m] then
        P.add(path .. ".metrics[" .. i .. "]", "unknown outcome '" .. tostring(m) .. "' (" ..
          OUTCOME_NAMES .. ")", tostring(m))
      else
        out.metrics[#out.metrics + 1] = m
      end
    end
  end
end

-- The outcomes' minimum effects (out.deltas), one per outcome, the primary's min_effect.
local function outcome_deltas(P, o, path, out)
  if type(o.deltas) ~= "table" then
    P.add(path .. ".deltas", "expected the pre-registered minimum effect of every outcome " ..
      "{ <outcome> = number, ... }", "deltas")
  else
    for _, m in ipairs(out.metrics) do
      local d = o.deltas[m]
      if type(d) ~= "number" or not (d > 0 and d < math.huge) then
        P.add(path .. ".deltas." .. m, "expected a number > 0 (the outcome's minimum effect)",
          "deltas")
      end
      out.deltas[m] = d
    end
    if type(o.min_effect) == "number" and type(o.deltas[o.primary]) == "number"
        and o.deltas[o.primary] ~= o.min_effect then
      P.add(path .. ".deltas." .. tostring(o.primary), "differs from min_effect (the " ..
        "primary's minimum effect is given once)", "deltas")
    end
  end
end

-- The sweep's pre-registered outcomes (analysis.sweep.outcomes), normalized: the rule
-- applied to per-seed outcomes over each group's grid.
local function check_outcomes(P, o, groups, group_names)
  local path = "analysis.sweep.outcomes"
  if type(o) ~= "table" then
    P.add(path, "expected a table {metrics =, primary =, better =, min_effect =, deltas =, " ..
      "comparisons =, test =}", "outcomes")
    return nil
  end
  prob.unknown_fields(P, o, path, { "metrics", "primary", "better", "min_effect", "deltas",
    "comparisons", "test" }, "")
  local out = { metrics = {}, deltas = {} }
  outcome_metrics(P, o, path, out)
  local set = base.set_of(out.metrics)
  out.primary = P.need(path .. ".primary", o.primary, function(v) return set[v] end,
    "expected one of outcomes.metrics")
  out.better = P.need(path .. ".better", o.better, prob.one_of("lower", "higher"),
    "expected \"lower\" or \"higher\"")
  out.min_effect = P.need(path .. ".min_effect", o.min_effect, prob.positive,
    "expected a number > 0 (in the primary outcome's units)")
  outcome_deltas(P, o, path, out)
  out.test = P.need(path .. ".test", o.test, prob.one_of("t", "signflip"),
    "expected \"t\" or \"signflip\"")
  out.comparisons = check_pairs(P, o.comparisons, path .. ".comparisons", groups)
  if #out.comparisons == 0 then
    P.add(path .. ".comparisons", "expected at least one pre-registered comparison",
      "comparisons")
  end
  return out
end

-- The grid values of group g (its variants' values of `over`), each variant checked
-- (known, in no other group: used[v], setting `over` > 0); its variants and values.
local function group_grid(P, g, gp, variants, over, used)
  local values, vs = {}, {}
  for j, v in ipairs(g.variants) do
    local vp = gp .. ".variants[" .. j .. "]"
    local var = variants[v]
    if not var then
      P.add(vp, "unknown variant '" .. tostring(v) .. "'", tostring(v))
    elseif used[v] then
      P.add(vp, "variant '" .. v .. "' is already in group '" .. used[v] .. "'", v, 2)
    elseif type(var.overrides[over]) ~= "number" or not (var.overrides[over] > 0) then
      P.add(vp, "variant '" .. v .. "' must set " .. tostring(over) .. " (> 0): the " ..
        "sweep's grid is read from the variants", v)
    else
      used[v] = g.name
      values[#values + 1] = var.overrides[over]
      vs[#vs + 1] = v
    end
  end
  table.sort(values)
  for j = 2, #values do
    if values[j] == values[j - 1] then
      P.add(gp, string.format("two variants of group '%s' share %s = %g", g.name,
        over, values[j]), g.name)
    end
  end
  return vs, values
end

-- The sweep's groups (out.groups), each on the first group's grid; the set of their names.
local function check_groups(P, spec, variants, path, out)
  local groups, grid, used = {}, nil, {}
  for i, g in ipairs(spec.groups) do
    local gp = path .. ".groups[" .. i .. "]"
    if type(g) ~= "table" or type(g.name) ~= "string" or not is_list(g.variants)
        or #g.variants < 2 then
      P.add(gp, "expected {name = \"...\", variants = {at least 2 variant names}}", "groups")
    elseif groups[g.name] then
      P.add(gp .. ".name", "group '" .. g.name .. "' is listed twice", g.name, 2)
    else
      local vs, values = group_grid(P, g, gp, variants, out.over, used)
      if grid and #values == #vs then
        local same = #grid == #values
        for j = 1, math.min(#grid, #values) do same = same and grid[j] == values[j] end
        if not same then
          P.add(gp, "group '" .. g.name .. "' covers another grid of " .. out.over .. " than " ..
            "the first group (the sensitivity averages over one grid)", g.name)
        end
      end
      grid = grid or values
      groups[g.name] = true
      out.groups[#out.groups + 1] = { name = g.name, variants = vs }
    end
  end
  return groups
end

-- Validates analysis.sweep against the study's variants ({name -> {path, overrides}});
-- returns the normalized spec (P collects problems).
function M.check(P, spec, variants)
  local path = "analysis.sweep"
  if type(spec) ~= "table" then
    P.add(path, "expected a table {over =, groups =, reference =, ...}", "sweep")
    return nil
  end
  prob.unknown_fields(P, spec, path, { "over", "groups", "reference", "loss", "pilot",
    "outcomes" }, "")
  local out = { over = spec.over or "lr", loss = spec.loss or "val_loss", groups = {} }
  if type(out.over) ~= "string" then P.add(path .. ".over", "expected a config key", "over") end
  if type(out.loss) ~= "string" then P.add(path .. ".loss", "expected a metric", "loss") end
  if not is_list(spec.groups) or #spec.groups == 0 then
    P.add(path .. ".groups", "expected a non-empty list of {name =, variants = {...}}", "groups")
    return nil
  end
  local groups = check_groups(P, spec, variants, path, out)
  out.reference = spec.reference or (out.groups[1] and out.groups[1].name)
  if not groups[out.reference] then
    P.add(path .. ".reference", "expected the name of a group", "reference")
  end
  if spec.pilot ~= nil then
    out.pilot = check_pairs(P, spec.pilot, path .. ".pilot", groups)
  else
    out.pilot = {}
    for _, g in ipairs(out.groups) do
      if g.name ~= out.reference then out.pilot[#out.pilot + 1] = { g.name, out.reference } end
    end
  end
  if spec.outcomes ~= nil then out.outcomes = check_outcomes(P, spec.outcomes, groups) end
  return out
end

-- The outcomes' decision test against the seeds (as for the study's own family): a
-- design whose test cannot reach alpha / m is refused with the seed count it needs.
function M.check_design(P, spec, n, alpha)
  local o = spec and spec.outcomes
  if not (o and (o.test == "t" or o.test == "signflip") and #o.comparisons > 0 and n > 0
      and type(alpha) == "number") then
    return
  end
  local m = #o.comparisons
  local need = stats.min_seeds(o.test, alpha / m)
  if n < need then
    P.add("analysis.sweep.outcomes.test", string.format("the %s with %d seeds cannot reach " ..
      "the Holm first-step level alpha / m = %g / %d: the design needs at least %d seeds",
      o.test == "t" and "paired t-test" or "exact sign-flip test", n, alpha, m, need), "test")
  end
end

return M
