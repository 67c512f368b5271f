-- A study's learning-rate sweep: analysis.sweep (format: lua/repro/study/sweep.lua),
-- summarized by M.summarize into summary.json's `lr_sweep`, `pilot_comparisons` and, when
-- the sweep pre-registers outcomes, `sweep_outcomes`.  Per group: the final loss per grid
-- value, the best value (lowest mean over seeds of min(l, l0), a diverged run counting as
-- l0; ties: the smaller), where seeds diverge, and the LR sensitivity of Wortsman et al.
-- (2023) against the best of every group (S) and its own best (S_own), with bootstrap
-- intervals and differences from the reference group.  Outcomes (M.OUTCOMES) are compared
-- between groups under the study's decision rule.  Fields: lua/experiments/README.md.
local stats = require "stats"
local json = require "repro.core.json"
local base = require "repro.core.base"
local sweep = require "repro.study.sweep"

local M = {}

M.OUTCOMES = sweep.OUTCOMES

-- The run metric behind each outcome, and how it is aggregated over the grid.
local OUTCOME_SOURCE = {
  mean_max_loss_jump = { metric = "max_loss_jump", agg = "mean" },
  gmean_max_grad_norm = { metric = "max_grad_norm", agg = "gmean" },
  gmean_logit_growth = { metric = "logit_growth", agg = "gmean" },
  n_diverged = { metric = "diverged", agg = "sum" },
  log10_diverge_lr = { metric = "diverged", agg = "first" },
}

local finite = base.finite

-- The training after warmup (exploratory; analysis/records.lua after_warmup): per seed,
-- over the grid values at which every run of the sweep trained past the window's first
-- step, the measure aggregated as the registered outcome of the same run measure is.
M.AFTER_WARMUP = { "mean_max_loss_jump_after_warmup", "gmean_max_grad_norm_after_warmup",
  "mean_grad_norm_cv_after_warmup" }
local AFTER_WARMUP_SOURCE = {
  mean_max_loss_jump_after_warmup = { field = "max_loss_jump", agg = "mean" },
  gmean_max_grad_norm_after_warmup = { field = "max_grad_norm", agg = "gmean" },
  mean_grad_norm_cv_after_warmup = { field = "grad_norm_cv", agg = "mean" },
}

local function nullable(x) if x == nil then return json.null end return x end

-- The grid of group g: its points sorted by the swept value, each {value, variant}.
local function grid_of(s, g, over)
  local value_of = {}
  for _, r in ipairs(s.runs) do
    if value_of[r.variant] == nil then value_of[r.variant] = r.cfg[over] end
  end
  local pts = {}
  for _, v in ipairs(g.variants) do pts[#pts + 1] = { value = value_of[v], variant = v } end
  table.sort(pts, function(a, b) return a.value < b.value end)
  return pts
end

-- Variant v's config overrides (the study file's values, exactly).
local function overrides_of(s, v)
  for _, x in ipairs(s.variants) do
    if x.name == v then return x.overrides end
  end
end

-- The loss l and the loss at initialization l0 of a run, or nil.
local function losses(run, loss_metric)
  local l0 = run.values.init_loss
  local l = (not run.diverged) and run.values[loss_metric] or nil
  return l, l0
end

-- One group's curve: per point the loss over seeds and its divergences.
local function describe_group(s, runs, g, pts, loss_metric)
  local out = { variants = json.array({}), values = json.array({}), points = json.array({}) }
  local diverged_at = {}
  for j, p in ipairs(pts) do
    out.variants[j], out.values[j] = p.variant, p.value
    local vals, per_seed, n_div = {}, json.array({}), 0
    for i, seed in ipairs(s.seeds) do
      local run = runs[p.variant][seed]
      local l = losses(run, loss_metric)
      if run.diverged then n_div = n_div + 1 end
      if l then vals[#vals + 1] = l end
      per_seed[i] = nullable(l)
    end
    diverged_at[j] = n_div
    if n_div > 0 and out.diverge_lr == nil then out.diverge_lr = p.value end
    local sm = stats.summary(vals)
    out.points[j] = { value = p.value, variant = p.variant, n = sm.n, n_diverged = n_div,
      mean = sm.mean, min = sm.min, max = sm.max, values = per_seed }
  end
  local n = #s.seeds
  for j = #pts, 1, -1 do
    if diverged_at[j] < n then break end
    out.diverge_lr_all = pts[j].value
  end
  out.top_trains = diverged_at[#pts] < n
  return out
end

-- The mean of the values xs of a grid of n points (agg "gmean": their geometric mean),
-- or nil when some point has none.
local function grid_mean(xs, n, agg)
  if #xs < n then return nil end
  local acc = 0
  for _, x in ipairs(xs) do acc = acc + (agg == "gmean" and math.log(x) or x) end
  return agg == "gmean" and math.exp(acc / n) or acc / n
end

-- Per-seed outcome values of group g over its grid (M.OUTCOMES).
local function outcome_values(s, runs, pts, name)
  local src = OUTCOME_SOURCE[name]
  local step = #pts > 1 and math.log(pts[#pts].value / pts[#pts - 1].value, 10) or 1
  local out = {}
  for _, seed in ipairs(s.seeds) do
    local xs, n_diverged, first = {}, 0, nil
    for _, p in ipairs(pts) do
      local run = runs[p.variant][seed]
      local x = run.values[src.metric]
      if run.diverged then n_diverged, first = n_diverged + 1, first or p.value end
      if finite(x) and (src.agg ~= "gmean" or x > 0) then xs[#xs + 1] = x end
    end
    if src.agg == "sum" then
      out[seed] = n_diverged
    elseif src.agg == "first" then
      -- a seed that never diverged: one grid step beyond the grid's top
      out[seed] = first and math.log(first, 10) or (math.log(pts[#pts].value, 10) + step)
    else
      out[seed] = grid_mean(xs, #pts, src.agg)
    end
  end
  return out
end

-- The grid positions (1-based, in the grids' sorted order) at which every run of every
-- group and seed has its training after warmup measured.
local function after_warmup_positions(s, runs, spec, grids)
  local kept = {}
  for i = 1, #grids[spec.groups[1].name] do
    local all = true
    for _, g in ipairs(spec.groups) do
      local p = grids[g.name][i]
      for _, seed in ipairs(s.seeds) do
        if not (p and runs[p.variant][seed].after_warmup) then all = false end
      end
    end
    if all then kept[#kept + 1] = i end
  end
  return kept
end

-- Per-seed values of an after-warmup measure of group g (AFTER_WARMUP_SOURCE) over the
-- grid positions `at`.
local function after_warmup_values(s, runs, pts, at, name)
  local src, out = AFTER_WARMUP_SOURCE[name], {}
  for _, seed in ipairs(s.seeds) do
    local xs = {}
    for _, i in ipairs(at) do xs[#xs + 1] = runs[pts[i].variant][seed].after_warmup[src.field] end
    out[seed] = grid_mean(xs, #at, src.agg)
  end
  return out
end

-- The config overrides every variant of group g shares (the study file's values, e.g.
-- embed_norm and warmup; never the swept key, nor one that varies with it such as min_lr):
-- the group's config, by which the report names it.
local function shared_overrides(s, g, over)
  local list = {}
  for i, v in ipairs(g.variants) do list[i] = overrides_of(s, v) end
  local shared = base.common_pairs(list)
  shared[over] = nil
  return shared
end

-- The `sweep_outcomes` summary: the decision rule on the groups' per-seed outcomes, the
-- groups as its variants (each with the overrides its grid shares).
local function summarize_outcomes(s, runs, spec, grids, summarize)
  local o = spec.outcomes
  local variants, pruns = {}, {}
  local at = after_warmup_positions(s, runs, spec, grids)
  local secondary = #at > 0 and M.AFTER_WARMUP or {}
  for _, g in ipairs(spec.groups) do
    variants[#variants + 1] = { name = g.name, overrides = shared_overrides(s, g, spec.over) }
    pruns[g.name] = {}
    local per = {}
    for _, m in ipairs(o.metrics) do per[m] = outcome_values(s, runs, grids[g.name], m) end
    for _, m in ipairs(secondary) do
      per[m] = after_warmup_values(s, runs, grids[g.name], at, m)
    end
    for _, seed in ipairs(s.seeds) do
      local values, missing = {}, {}
      for _, m in ipairs(o.metrics) do
        values[m] = per[m][seed]
        if values[m] == nil then missing[#missing + 1] = m end
      end
      for _, m in ipairs(secondary) do values[m] = per[m][seed] end
      -- a group's runs of one seed share the seed's pairing key
      local r = runs[grids[g.name][1].variant][seed]
      pruns[g.name][seed] = { values = values, missing = missing, diverged = false,
        init_seed = r.init_seed, data_seed = r.data_seed }
    end
  end
  local an = s.analysis
  local s2 = { name = s.name, file = s.file_rel or s.file, base = {}, variants = variants, seeds = s.seeds,
    analysis = { baseline = o.comparisons[1][2], metrics = o.metrics, primary = o.primary,
      better = o.better, min_effect = o.min_effect, alpha = an.alpha, correction = "holm",
      resamples = an.resamples, bootstrap = an.bootstrap, test = o.test,
      comparisons = o.comparisons, interactions = {}, secondary = secondary,
      registered_rule = an.registered_rule, design_notes = {} } }
  local nested = summarize(s2, pruns)
  nested.deltas = json.object(o.deltas)
  for _, c in ipairs(nested.comparisons) do
    local d = o.deltas[c.metric]
    c.delta = d
    if c.mean and d then c.exceeds_delta = math.abs(c.mean) >= d end
  end
  nested.file, nested.study, nested.base, nested.seeds = nil, nil, nil, nil
  if #at > 0 then
    local grid, first = {}, grids[spec.groups[1].name]
    for _, i in ipairs(at) do grid[#grid + 1] = first[i].value end
    local from = runs[first[at[1]].variant][s.seeds[1]].after_warmup.from
    nested.after_warmup = { from = from, grid = json.array(grid) }
    -- whether each after-warmup difference's t interval holds zero (what the paper says)
    for _, c in ipairs(nested.secondary_comparisons or {}) do
      c.holds_zero = c.ci_t ~= nil and c.ci_t[1] <= 0 and c.ci_t[2] >= 0
    end
  end
  return nested
end

-- The loss cube loss[group][point][seed] (false: diverged) and init[group][seed] of the
-- sweep for stats.lr_sensitivity, each group's grid (grids[name]) and its curve in
-- section.groups; or nil and why.
local function sweep_data(s, runs, spec, section)
  local grids, loss, init = {}, {}, {}
  for gi, g in ipairs(spec.groups) do
    local pts = grid_of(s, g, spec.over)
    grids[g.name] = pts
    section.order[gi] = g.name
    section.groups[g.name] = describe_group(s, runs, g, pts, spec.loss)
    loss[gi], init[gi] = {}, {}
    for j, p in ipairs(pts) do
      loss[gi][j] = {}
      for i, seed in ipairs(s.seeds) do
        local l, l0 = losses(runs[p.variant][seed], spec.loss)
        loss[gi][j][i] = l or false
        if j == 1 then init[gi][i] = l0 end
        if not finite(l0) then
          return nil, { code = "no_sweep", variant = p.variant, seed = seed }
        end
        if math.abs(l0 - init[gi][i]) > 1e-9 * math.abs(l0) then
          section.init_loss_differs = section.init_loss_differs or json.array({})
          section.init_loss_differs[#section.init_loss_differs + 1] = { variant = p.variant,
            seed = seed, init_loss = l0, used = init[gi][i] }
        end
      end
    end
  end
  return grids, loss, init
end

-- Each group's best grid value and LR sensitivity, from the stats.lr_sensitivity result r.
local function best_values(s, spec, section, grids, r)
  for gi, g in ipairs(spec.groups) do
    local e = section.groups[g.name]
    local pts = grids[g.name]
    e.clipped_mean = json.array(r.curve[gi])
    local best
    for j = 1, #pts do
      if e.points[j].n > 0 and (not best or r.curve[gi][j] < r.curve[gi][best]) then best = j end
    end
    if best then
      e.best_lr, e.best_index, e.best_loss = pts[best].value, best, r.curve[gi][best]
      e.best_variant = pts[best].variant
      e.best_overrides = json.object(overrides_of(s, pts[best].variant))
      e.best_at_edge = best == 1 or best == #pts
    else
      e.no_best = "every run of group " .. g.name .. " diverged"
    end
    e.sensitivity = { value = r.sensitivity[gi], ci = json.array(r.ci[gi]),
      diff = r.diff[gi], diff_ci = json.array(r.diff_ci[gi]), reference = spec.reference,
      own = { value = r.own[gi], ci = json.array(r.own_ci[gi]), diff = r.own_diff[gi],
        diff_ci = json.array(r.own_diff_ci[gi]) } }
  end
end

-- The pilot comparisons: each pair of spec.pilot at its own best grid values, paired by
-- seed.
local function pilot_comparisons(s, runs, spec, section, exact)
  local an = s.analysis
  local pilot = json.array({})
  for _, p in ipairs(spec.pilot) do
    local tg, bg = section.groups[p[1]], section.groups[p[2]]
    if tg.best_variant and bg.best_variant then
      local a, b = {}, {}
      for _, seed in ipairs(s.seeds) do
        local x = losses(runs[bg.best_variant][seed], spec.loss)
        local y = losses(runs[tg.best_variant][seed], spec.loss)
        if x and y then a[#a + 1], b[#b + 1] = x, y end
      end
      local pr = stats.paired(a, b, { alpha = an.alpha, resamples = an.resamples, seed = 1,
        exact = exact and #a >= 1 })
      pilot[#pilot + 1] = { treatment = p[1], baseline = p[2], metric = spec.loss, n = pr.n,
        mean = pr.mean, sd = pr.sd, treatment_variant = tg.best_variant,
        baseline_variant = bg.best_variant, treatment_value = tg.best_lr,
        baseline_value = bg.best_lr, at = "best" }
    end
  end
  return pilot
end

-- The `lr_sweep` section of study s (lua/repro/study/init.lua) from runs[variant][seed] (as
-- analysis.read_run returns them); `summarize` is analysis.summarize (for the outcomes).
-- Returns the section, the pilot comparisons and the outcomes' summary; or nil and why.
function M.summarize(s, runs, summarize)
  local spec = s.analysis.sweep
  local an = s.analysis
  local section = { over = spec.over, loss = spec.loss, init_loss = "init_loss",
    reference = spec.reference, groups = {}, order = json.array({}) }
  local grids, loss, init = sweep_data(s, runs, spec, section)
  if not grids then return nil, loss end
  local n = #s.seeds
  local ref_index
  for gi, g in ipairs(spec.groups) do if g.name == spec.reference then ref_index = gi end end
  local exact = an.bootstrap == "exact" and n <= stats.BOOT_EXACT_MAX
  local r = stats.lr_sensitivity(loss, init, { ref = ref_index, alpha = an.alpha,
    resamples = an.resamples, seed = 1, exact = exact })
  section.ell_star = r.ell_star
  section.ell_star_at = { group = spec.groups[r.star[1]].name,
    value = grids[spec.groups[r.star[1]].name][r.star[2]].value }
  section.bootstrap = { exact = r.exact, resamples = r.total, alpha = an.alpha, seeds = n,
    below_nominal = n < stats.BCA_CAVEAT_N or nil }
  best_values(s, spec, section, grids, r)
  local pilot = pilot_comparisons(s, runs, spec, section, exact)
  local outcomes
  if spec.outcomes then outcomes = summarize_outcomes(s, runs, spec, grids, summarize) end
  return section, pilot, outcomes
end

-- Why the sweep's percentile intervals are below their nominal coverage (bootstrap b of
-- the section), or nil.
function M.bootstrap_note(b)
  if not b or not b.below_nominal then return nil end
  return string.format("with %d seeds the percentile interval is bounded by what the seeds " ..
    "span: its coverage is below the nominal %g %%", b.seeds, 100 * (1 - b.alpha))
end

-- Lines for the terminal after the verdicts: each group's best value, divergence and
-- sensitivity.
function M.text(section)
  if not section then return {} end
  local lines = { string.format("learning-rate sweep over %s (%s; l* = %.4g at %s %s = %g):",
    section.over, section.loss, section.ell_star, section.ell_star_at.group, section.over,
    section.ell_star_at.value) }
  for _, name in ipairs(section.order) do
    local g = section.groups[name]
    local sens = g.sensitivity
    local best = g.best_lr and string.format("%g (%s%.4g)", g.best_lr,
      g.best_at_edge and "at the grid's edge; " or "", g.best_loss) or "-"
    lines[#lines + 1] = string.format("  %-18s best %s %s  diverges from %s  sensitivity " ..
      "%.4g [%.4g, %.4g], own %.4g [%.4g, %.4g]", name, section.over, best,
      g.diverge_lr and string.format("%g", g.diverge_lr) or "nowhere", sens.value, sens.ci[1],
      sens.ci[2], sens.own.value, sens.own.ci[1], sens.own.ci[2])
  end
  return lines
end

return M
