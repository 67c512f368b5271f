-- The paired comparisons of a study's summary (lua/experiments/README.md):
-- runs paired by (init_seed, data_seed), every stats.paired field, the decision test's p
-- and interval, TOST, MDE at alpha / m and the probability of improvement for the
-- family, rule 1's p when the study registered it, and the robust companions (exploratory,
-- analysis/robust.lua) of every comparison and interaction.  The steps share the context
-- `ctx` M.summarize makes.
local stats = require "stats"
local json = require "repro.core.json"
local robust = require "repro.analysis.robust"
local words = require "repro.analysis.words"

local M = {}


-- Every field of a stats.paired result, intervals as arrays, with its codes of why a
-- statistic is undefined (flags, bca_reason; words.paired says them).
local function paired_fields(entry, r)
  for k, v in pairs(r) do
    if type(v) == "table" and k ~= "flags" then v = json.array({ v[1], v[2] }) end
    entry[k] = v
  end
end

-- The p of the pre-registered test, and where it came from.
function M.test_p(r, test)
  if test == "t" and r.p_t then return r.p_t, "p_t" end
  if r.p_signflip then return r.p_signflip, "p_signflip" end
  return 1.0, "undefined"
end

-- The options of stats.paired for n pairs under analysis an.
function M.paired_opts(an, n)
  return { alpha = an.alpha, resamples = an.resamples, seed = 1,
    exact = an.bootstrap == "exact" and n >= 1 and n <= stats.BOOT_EXACT_MAX }
end

-- The relative change of a paired comparison: its mean difference over the mean of the
-- baseline values a of the same pairs; nil when either is undefined or that mean is 0.
local function relative_change(mean_diff, a)
  local base_mean = #a > 0 and stats.summary(a).mean or nil
  if mean_diff and base_mean and base_mean ~= 0 then return mean_diff / base_mean end
  return nil
end

-- The run key that pairs runs across variants: (init_seed, data_seed).
local function run_key(run, seed)
  return string.format("%d/%d", run.init_seed or seed, run.data_seed or seed)
end

-- Per variant, the seed of its run with each pairing key.
function M.pairing(s, runs)
  local by_key = {}
  for _, v in ipairs(s.variants) do
    by_key[v.name] = {}
    for _, seed in ipairs(s.seeds) do by_key[v.name][run_key(runs[v.name][seed], seed)] = seed end
  end
  return by_key
end

-- The pairs of treatment tv and baseline bv on metric m, in the baseline's seed order:
-- their seeds, the baseline values a, the treatment values b, and the seeds left out.
local function pairs_of(ctx, tv, bv, m)
  local runs = ctx.runs
  local seeds, a, b, dropped = {}, {}, {}, {}
  for _, seed in ipairs(ctx.s.seeds) do
    local tseed = ctx.by_key[tv][run_key(runs[bv][seed], seed)]
    local x = runs[bv][seed].values[m]
    local y = tseed and runs[tv][tseed].values[m]
    if x ~= nil and y ~= nil then
      seeds[#seeds + 1], a[#a + 1], b[#b + 1] = seed, x, y
    else
      dropped[#dropped + 1] = tostring(seed)
    end
  end
  return seeds, a, b, dropped
end

-- The change of validation perplexity of treatment tv against baseline bv on the pairs
-- where both have one, whatever the metric compared: exp of the mean paired difference of
-- log perplexity (the validation loss), minus 1, i.e. the ratio of the two variants'
-- geometric mean perplexities minus 1.  The one definition of a perplexity change the
-- reports quote.
local function val_ppl_change(ctx, tv, bv)
  local _, a, b = pairs_of(ctx, tv, bv, "val_ppl")
  if #a == 0 then return nil end
  local d = {}
  for i = 1, #a do
    if not (a[i] > 0 and b[i] > 0) then return nil end
    d[i] = math.log(b[i]) - math.log(a[i])
  end
  return math.exp(stats.summary(d).mean) - 1
end

-- The decision test's p and interval, on an entry e with stats.paired result r for the
-- pairs (a, b).
local function decide(ctx, e, r, a, b)
  local test, an = ctx.test, ctx.an
  e.test = test
  e.p, e.p_source = M.test_p(r, test)
  local kind = (test == "t" and r.ci_t) and "t" or "signflip"
  if kind == "t" then
    e.ci_decision = json.array({ r.ci_t[1], r.ci_t[2] })
  elseif #a >= 1 then
    local sf = stats.signflip_interval(a, b, { alpha = an.alpha, resamples = an.resamples,
      seed = 1 })
    if sf.ci then
      e.ci_decision = json.array({ sf.ci[1], sf.ci[2] })
    else
      e.ci_decision_unbounded = true
    end
  end
  e.ci_decision_kind = kind
  if r.ci_bca and e.n < stats.BCA_CAVEAT_N then e.bca_caveat = true end
end

-- The paired TOST at +-min_effect by the decision test (the exact sign flip where the
-- t TOST is undefined), as the summary stores it.
local function tost_of(ctx, a, b)
  local an, test = ctx.an, ctx.test
  if #a < 1 then
    return { test = test, delta = an.min_effect, alpha = an.alpha, equivalent = false,
      reason = "no_pairs" }
  end
  local opts = { delta = an.min_effect, alpha = an.alpha, test = test,
    resamples = an.resamples, seed = 1 }
  local t = stats.tost(a, b, opts)
  local fallback
  if t.degenerate and test == "t" then
    -- as for the difference test: the exact sign flip where the t-test is undefined
    fallback = t.reason_code
    opts.test = "signflip"
    t = stats.tost(a, b, opts)
  end
  return { test = t.test, delta = t.delta, alpha = t.alpha, p = t.p, p_lower = t.p_lower,
    p_upper = t.p_upper, ci = t.ci and json.array({ t.ci[1], t.ci[2] }) or nil,
    equivalent = t.equivalent, reason = t.degenerate and t.reason_code or nil,
    fallback = fallback }
end

-- The minimum detectable effect at alpha / m of n pairs with stats.paired result r, and
-- whether the test cannot reach alpha / m (nil when it can).
local function mde_of(ctx, r, n)
  local test, level = ctx.test, ctx.level
  local mde = { level = level, power = stats.DEFAULT_POWER }
  local reach = stats.min_seeds(test, level)
  if n < reach then
    mde.reason, mde.test, mde.needs = "cannot_reach", test, reach
    return mde, true
  end
  if r.sd and r.sd > 0 and not (r.flags and r.flags.constant) then
    local md = stats.mde(n, { alpha = level, power = stats.DEFAULT_POWER, sd = r.sd })
    mde.d_z, mde.value = md.mde_d_z, md.mde
    if test == "signflip" then mde.method = "t_power" end
  else
    mde.reason = "no_spread"
  end
  return mde
end

-- The probability of improvement on metric m: the share of pairs where the treatment
-- (b) is better than the baseline (a), with its Clopper-Pearson interval; better is the
-- study's direction on its primary metric, words.better_of's on another.
local function improvement(ctx, m, a, b)
  local an = ctx.an
  local better = m == an.primary and an.better or words.better_of(m)
  local imp = stats.improvement(a, b, { better = better, alpha = an.alpha })
  return { n = imp.n, better = imp.better, ties = imp.ties, share = imp.share,
    ci = imp.ci and json.array({ imp.ci[1], imp.ci[2] }) or nil, alpha = an.alpha,
    direction = better }
end

-- Holm at alpha over the entries of list, each's p given by p_of(entry): the adjusted p
-- and the rejections, in list order.
function M.holm(list, p_of, alpha)
  local ps = {}
  for i, e in ipairs(list) do ps[i] = p_of(e) end
  return stats.holm(ps, alpha)
end

-- The fields of entry e (family "primary" or "exploratory") from the stats.paired result
-- r of its pairs a, b on metric m: the paired statistics, the robust companions, the
-- probability of improvement, the decision test and, in the family, TOST and MDE at
-- alpha / m.
local function fill(ctx, e, r, m, a, b)
  paired_fields(e, r)
  e.robust = robust.companions(a, b, ctx.an.alpha)
  e.improvement = improvement(ctx, m, a, b)
  decide(ctx, e, r, a, b)
  if e.family ~= "primary" then
    e.exploratory = true
    return
  end
  e.tost = tost_of(ctx, a, b)
  e.mde_adjusted, e.test_cannot_reach = mde_of(ctx, r, #a)
end

-- One paired comparison of treatment tv against baseline bv on metric m: the entry, the
-- stats.paired result, the baseline values and the seeds left out.
local function compare(ctx, tv, bv, m, family)
  local seeds, a, b, dropped = pairs_of(ctx, tv, bv, m)
  local r = stats.paired(a, b, M.paired_opts(ctx.an, #a))
  local e = { treatment = tv, baseline = bv, metric = m, family = family,
    seeds = json.array(seeds), a = json.array(a), b = json.array(b),
    relative_change = relative_change(r.mean, a),
    val_ppl_change = family == "primary" and val_ppl_change(ctx, tv, bv) or nil }
  fill(ctx, e, r, m, a, b)
  return e, r, a, dropped
end

-- Appends entry e with stats.paired result r to the lists of rule 1's family (when the
-- study registered rule 1: fam.rule1 is then a list) and, on the primary metric, the
-- current rule's (fam = {family =, rule1 =}).
local function enter(fam, e, r)
  if fam.rule1 then
    -- rule 1 takes the t-test's p (else the sign flip's, else 1) whatever the study's test
    e.p_rule1 = (M.test_p(r, "t"))
    fam.rule1[#fam.rule1 + 1] = e
  end
  if e.family == "primary" then fam.family[#fam.family + 1] = e end
end

-- Every pre-registered comparison on every metric of analysis.metrics, with a note
-- where seeds were left out or the test is degenerate.
function M.compare_all(ctx, fam)
  local an, comparisons = ctx.an, {}
  for _, pair in ipairs(an.comparisons) do
    local tv, bv = pair[1], pair[2]
    for _, m in ipairs(an.metrics) do
      local e, r, a, dropped = compare(ctx, tv, bv, m, m == an.primary and "primary" or
        "exploratory")
      if #dropped > 0 or r.degenerate then
        ctx.note({ code = #dropped > 0 and "left_out" or "degenerate", treatment = tv,
          baseline = bv, metric = m, seeds = #dropped > 0 and json.array(dropped) or nil,
          n = #dropped > 0 and #a or nil, degenerate = r.degenerate or nil })
      end
      comparisons[#comparisons + 1] = e
      enter(fam, e, r)
    end
  end
  return comparisons
end

-- The pairs of one side of an interaction: a pair {t, b} or a list of pairs.
local function side_pairs(side)
  if type(side[1]) == "table" then return side end
  return { side }
end

-- The effect of one side for the runs with pairing key `key`: the mean over its pairs
-- of treatment - baseline (a single pair's difference exactly); nil when a value is.
local function side_effect(ctx, side, key, m)
  local runs, by_key = ctx.runs, ctx.by_key
  local function val(v)
    local sd = by_key[v][key]
    return sd and runs[v][sd].values[m]
  end
  local list, sum = side_pairs(side), nil
  for _, pr in ipairs(list) do
    local t, b = val(pr[1]), val(pr[2])
    if not (t and b) then return nil end
    sum = sum and sum + (t - b) or t - b
  end
  return sum / #list
end

-- Interaction `it` on metric m: stats.paired of the per-seed difference of differences
-- (of mean differences, for a side that lists several pairs).
local function interaction(ctx, it, m)
  local s, runs = ctx.s, ctx.runs
  local seeds, da, db = {}, {}, {}
  local first = side_pairs(it.a)[1]
  for _, seed in ipairs(s.seeds) do
    local key = run_key(runs[first[2]][seed], seed)
    local ea, eb = side_effect(ctx, it.a, key, m), side_effect(ctx, it.b, key, m)
    if ea and eb then
      seeds[#seeds + 1], da[#da + 1], db[#db + 1] = seed, ea, eb
    end
  end
  local r = stats.paired(db, da, M.paired_opts(ctx.an, #da))
  local fam = m == ctx.an.primary and "primary" or "exploratory"
  local e = { name = it.name, a = json.array(it.a), b = json.array(it.b), metric = m, family = fam,
    seeds = json.array(seeds), diff_a = json.array(da), diff_b = json.array(db) }
  fill(ctx, e, r, m, db, da)
  return e, r
end

-- Every pre-registered interaction on every metric of analysis.metrics, with notes.
function M.interact_all(ctx, fam)
  local interactions, n_seeds = {}, #ctx.s.seeds
  for _, it in ipairs(ctx.an.interactions) do
    for _, m in ipairs(ctx.an.metrics) do
      local e, r = interaction(ctx, it, m)
      if #e.seeds < n_seeds or r.degenerate then
        ctx.note({ code = #e.seeds < n_seeds and "left_out" or "degenerate",
          interaction = it.name, metric = m, n = #e.seeds < n_seeds and #e.seeds or nil,
          of = #e.seeds < n_seeds and n_seeds or nil, degenerate = r.degenerate or nil })
      end
      interactions[#interactions + 1] = e
      enter(fam, e, r)
    end
  end
  return interactions
end

-- Secondary metrics: exploratory too (unadjusted p, no verdict), outside rule 1's family.
function M.compare_secondary(ctx, secondary)
  local list = {}
  for _, pair in ipairs(ctx.an.comparisons) do
    for _, m in ipairs(secondary) do
      list[#list + 1] = (compare(ctx, pair[1], pair[2], m, "exploratory"))
    end
  end
  return list
end

return M
