-- The analysis of a study's run records: experiments/<study>/summary.json.
--
-- Values.  Every numeric top-level field of a run's metrics.json is a metric, plus
-- three computed here from the record (study.DERIVED_METRICS):
--   diverged        1 if the run diverged, else 0: the engine's rule (engine/diag.h), a
--                   non-finite loss or gradient norm, or engine.DIVERGE_STEPS consecutive
--                   losses above the loss at initialization + engine.DIVERGE_MARGIN
--   n_spikes        the number of steps whose training loss is non-finite or exceeds
--                   SPIKE_FACTOR (1.5) times the smallest loss of all earlier steps
--                   (a divergence counts as one spike)
--   max_loss_ratio  the largest loss_t / min(loss_s, s < t) over steps t >= 1
-- A diverged run has no value for any metric except `diverged`, `n_spikes` and the
-- engine's instability measures (DIVERGENCE_AWARE: init_loss, max_grad_norm,
-- max_loss_jump, max_abs_logit, logit_growth, diverge_step, diverge_lr, ...): its
-- values are null, it is left out of means, and the count of diverged runs per
-- variant is reported with a note, never silently.
--
-- Statistics.  Per variant and metric: n, mean, sd, min, max, median (stats.summary)
-- and the per-seed values.  Per comparison (treatment vs baseline; by default every
-- variant vs analysis.baseline unless the study lists analysis.comparisons) and metric:
-- every field of stats.paired(baseline, treatment) on the pairs where both runs have a
-- value, so the difference is treatment - baseline, with relative_change (the mean
-- difference over the baseline's mean on the same pairs) and, on the primary metric,
-- val_ppl_change (the same for validation perplexity: the percentage change a report
-- quotes, whatever the primary metric).  Runs pair by (init_seed,
-- data_seed) from their config.json (both default to the run's seed).  Per interaction
-- (a = {t1, b1}, b = {t2, b2}) and metric: stats.paired of the per-seed difference of
-- differences (t1 - b1) - (t2 - b2).  The bootstrap is exact (all n^n resamples) for n
-- <= stats.BOOT_EXACT_MAX unless analysis.bootstrap = "monte-carlo"; otherwise
-- analysis.resamples Monte Carlo draws.  Intervals are at level 1 - alpha.  Every test
-- resamples with seed 1, so the summary is byte-identical from run to run.
--
-- The decision rule (M.RULE = 2, issue 13; M.DECISION_RULE states it).
--   Family.  Holm runs over the pre-registered primary metric's comparisons and
--   interactions, m tests.  Every other metric (the rest of analysis.metrics and
--   analysis.secondary) is exploratory: unadjusted p, labelled so (family =
--   "exploratory"), never a verdict.
--   Test.  analysis.test: "t" (paired t-test) or "signflip" (exact sign flip).  Where the
--   t-test is undefined (constant differences, n < 2) its p is the exact sign-flip p;
--   where no p is defined, 1.
--   Decision interval.  The 1 - alpha t interval (t) or the exact sign-flip inversion
--   interval, the shifts the test does not reject (signflip, or t where t is undefined);
--   absent when the sign flip cannot reject at alpha with n pairs (every shift accepted).
--   BCa stays as a descriptive interval, flagged bca_caveat when n < stats.BCA_CAVEAT_N.
--   TOST.  Paired TOST at delta = min_effect by the same test (stats.tost; the exact
--   sign-flip TOST where the t TOST is undefined), its p Holm-adjusted over the family
--   like the difference tests.
--   MDE.  At the Holm first-step level alpha / m and stats.DEFAULT_POWER; for the sign
--   flip, undefined when the test cannot reach alpha / m with n pairs (else the t-test's,
--   which the permutation test matches in power for normal data).
--   Probability of improvement.  The share of pairs where the treatment is better, with
--   its Clopper-Pearson 1 - alpha interval (for an interaction: where effect a is more
--   favourable than effect b).
--   Verdict, for each comparison on the primary metric:
--     better        Holm-adjusted p <= alpha, the decision interval entirely on the better
--                   side of 0, and |mean difference| >= min_effect;
--     worse         the same on the other side;
--     equivalent    otherwise, when the Holm-adjusted TOST p <= alpha;
--     inconclusive  anything else, with the reason.
-- Rule 1 (the rule the studies that ran before issue 13 were registered under,
-- M.DECISION_RULE_1) is kept beside it for a study that registered it
-- (analysis.registered_rule = 1), and only for one: every entry of its family (every
-- comparison and interaction on every metric of analysis.metrics, Holm over their t-test
-- p values) carries p_rule1, p_holm_rule1 and reject_holm_rule1, each verdict carries
-- verdict_rule1, sentence_rule1, interval_rule1 and `changed` when the two differ, and the
-- summary's analysis decision_rule_1 and family_rule1.  Another study's output has none.
--
-- Sources of variance.  When the runs of a variant cross init_seed and data_seed (a
-- complete grid of at least 2 x 2 with some init_seed ~= data_seed), the summary's
-- variance_components give, per variant and metric of analysis.metrics and per primary
-- comparison's differences, the two-way random-effects ANOVA components (stats.anova2).
--
-- A study with analysis.comparisons = {} pre-registered no test: no family, no verdicts.
-- A study that names an extension (its `extensions`, lua/repro/study/init.lua) gets, for
-- each field of its analysis the extension checked, the section of that name the
-- extension's summarize returns (this paper's claim stages: summary.claim, from
-- paper/lib/claim.lua); a section's `pilot` becomes pilot_comparisons and its `text`
-- lines verdict_table prints after the verdicts.  read_run keeps a run's subset_acc
-- list for such a section.
-- A study with analysis.sweep gets summary.lr_sweep (best value, divergence and LR
-- sensitivity per group), pilot_comparisons (for a later study's seeds from power) and,
-- when it pre-registers outcomes, sweep_outcomes (this rule applied to per-seed outcomes
-- over each group's grid) from lua/repro/analysis/lrsens.lua.
--
-- Guardrail.  When a variant of a verdict has a mean validation perplexity at or above
-- the unigram perplexity of its corpus (M.unigram_warnings), the summary carries
-- `warnings` (only then, so other summaries keep their bytes) and verdict_table prints
-- each as a WARNING line under the verdicts.
local stats = require "stats"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local lrsens = require "repro.analysis.lrsens"
local reasons = require "repro.analysis.reasons"
local engine = require "engine"
local textable = require "repro.core.textable"

local M = {}

M.SPIKE_FACTOR = 1.5

-- Metrics computed here, and those that keep their value for a diverged run.
local DERIVED = { diverged = true, n_spikes = true, max_loss_ratio = true }
-- The engine's instability measures exist for a diverged run too, over the steps it took
-- (lua/experiments/README.md): the loss at initialization, the largest gradient norm,
-- loss jump and logit, and where it diverged.
local DIVERGENCE_AWARE = { diverged = true, n_spikes = true, init_loss = true,
  max_grad_norm = true, max_grad_norm_step = true, max_loss_jump = true,
  max_loss_jump_step = true, max_abs_logit = true, logit_growth = true, diverge_step = true,
  diverge_lr = true }

-- The one masking rule for a diverged run (the header's Values; the report and
-- compare/export read records through it too): true when the value of `metric` is left
-- out because the run diverged.
function M.masked(metric, diverged)
  return diverged and not DIVERGENCE_AWARE[metric]
end

-- The divergence rule is the engine's (engine/diag.h), exported by the binding.
M.DEFINITIONS = {
  diverged = string.format("1 if the run stopped on a non-finite loss or gradient norm, or " ..
    "on %d consecutive training losses above the loss at initialization + %g nat, else 0",
    engine.DIVERGE_STEPS, engine.DIVERGE_MARGIN),
  n_spikes = string.format("number of steps whose training loss is non-finite or exceeds " ..
    "%g times the smallest training loss of all earlier steps (a divergence counts as one " ..
    "spike)", M.SPIKE_FACTOR),
  max_loss_ratio = "largest ratio of a step's training loss to the smallest loss of all "
    .. "earlier steps (undefined for a diverged run)",
}

local finite = require("repro.core.base").finite

local function field_number(s)
  if s == nil or s == "" then return nil end
  if s == "nan" or s == "-nan" then return 0 / 0 end
  if s == "inf" then return math.huge end
  if s == "-inf" then return -math.huge end
  return tonumber(s)
end

-- log.csv text -> {columns = {...}, data = {column -> values by row}, n = rows}.
function M.parse_log(text)
  local lines = {}
  for l in (text or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  local cols, data = {}, {}
  for name in ((lines[1] or "") .. ","):gmatch("([^,]*),") do
    cols[#cols + 1] = name
    data[name] = {}
  end
  for r = 2, #lines do
    local i = 0
    for f in (lines[r] .. ","):gmatch("([^,]*),") do
      i = i + 1
      if cols[i] then data[cols[i]][r - 1] = field_number(f) end
    end
  end
  return { columns = cols, data = data, n = math.max(0, #lines - 1) }
end

-- n_spikes and max_loss_ratio of a list of n training losses (see the header).
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

-- The values of one run record: {diverged = bool, values = {metric -> number},
-- missing = {metric names absent from a finished run}}.  Only config.json, log.csv and
-- metrics.json are read, never manifest.json: a summary is a function of the records'
-- bytes alone, so it is the same whichever study trained a record first and whether this
-- one trained or copied it (a from-scratch `make reproduce` trains claim_search's copy of
-- prelim's config itself, since prelim comes later).  Where a record came from is in its
-- manifest.json (`copied_from`) and in the paper's compute appendix.
function M.read_run(dir, metrics)
  local mtext = fs.read(dir .. "/metrics.json")
  if not mtext then return nil, dir .. "/metrics.json: missing" end
  local ok, m = pcall(json.decode, mtext)
  if not ok or type(m) ~= "table" then return nil, dir .. "/metrics.json: not valid JSON" end
  local log = M.parse_log(fs.read(dir .. "/log.csv"))
  local diverged = m.diverged == true
  local derived = { diverged = diverged and 1 or 0 }
  if log.data.loss then
    local n_spikes, max_ratio = M.spikes(log.data.loss, log.n)
    derived.n_spikes, derived.max_loss_ratio = n_spikes, max_ratio
  end
  local run = { diverged = diverged, values = {}, missing = {} }
  for _, name in ipairs(metrics) do
    local v
    if DERIVED[name] then
      v = derived[name]
    elseif type(m[name]) == "number" then
      v = m[name]
    end
    if M.masked(name, diverged) then v = nil end
    if v ~= nil and not finite(v) then v = nil end
    if v == nil and not diverged then run.missing[#run.missing + 1] = name end
    run.values[name] = v
  end
  -- the accuracy of each validation subset (a list, which an extension may pool)
  if not diverged and type(m.subset_acc) == "table" then run.subset_acc = m.subset_acc end
  if not diverged and type(m.bal_subset_acc) == "table" then
    run.bal_subset_acc = m.bal_subset_acc
  end
  -- the pairing key: init_seed and data_seed, which default to the seed
  local cok, cfg = pcall(json.decode, fs.read(dir .. "/config.json") or "")
  if cok and type(cfg) == "table" then
    run.init_seed = math.tointeger(cfg.init_seed) or math.tointeger(cfg.seed)
    run.data_seed = math.tointeger(cfg.data_seed) or math.tointeger(cfg.seed)
  end
  return run
end

local function fmt(x)
  if x == nil then return "?" end
  local s = string.format("%.4g", x)
  return s == "-0" and "0" or s
end

local function arr(t) return json.array(t or {}) end

-- Every field of a stats.paired result, intervals as arrays, its codes of why a
-- statistic is undefined (flags, bca_reason) as their `reason` in words.
local function paired_fields(entry, r)
  for k, v in pairs(r) do
    if type(v) == "table" and k ~= "flags" then v = arr({ v[1], v[2] }) end
    if k ~= "bca_reason" then entry[k] = v end
  end
  entry.reason = reasons.paired(r)
end

-- The p of the pre-registered test, and where it came from.
local function test_p(r, test)
  if test == "t" and r.p_t then return r.p_t, "p_t" end
  if r.p_signflip then return r.p_signflip, "p_signflip" end
  return 1.0, "undefined"
end

-- Rule 1's p (the t-test's, else the sign flip's, else 1).
local function holm_p(r)
  if r.p_t then return r.p_t, "p_t" end
  if r.p_signflip then return r.p_signflip, "p_signflip" end
  return 1.0, "undefined"
end

local function holm_note(e)
  if e.p_source == "p_t" or (e.p_source == "p_signflip" and e.test == "signflip") then
    return ""
  end
  return e.p_source == "p_signflip" and "; the decision uses its exact sign-flip p" or
    "; the decision uses p = 1"
end

local function paired_opts(an, n)
  return { alpha = an.alpha, resamples = an.resamples, seed = 1,
    exact = an.bootstrap == "exact" and n >= 1 and n <= stats.BOOT_EXACT_MAX }
end

-- The interval rule 1's verdict used: BCa, else t, else the point interval of constant data.
local function verdict_ci_rule1(c)
  if c.ci_bca then return c.ci_bca, "BCa" end
  if c.ci_t then return c.ci_t, "t" end
  if c.flags and c.flags.constant and c.ci_percentile then return c.ci_percentile, "point" end
  return nil
end

M.DECISION_RULE_1 = "For the primary metric: better if the Holm-adjusted p <= alpha, the "
  .. "(1 - alpha) BCa CI of the mean difference (treatment - baseline) lies entirely on the "
  .. "better side of zero and |mean difference| >= min_effect; worse, symmetrically; no "
  .. "meaningful difference if the CI lies entirely within (-min_effect, +min_effect); "
  .. "otherwise inconclusive. The t interval replaces BCa when BCa is undefined. Holm over "
  .. "every comparison and interaction on every metric of analysis.metrics, p from the "
  .. "paired t-test."

M.RULE = require("repro.study").RULE
M.DECISION_RULE = "The Holm family is the pre-registered primary metric's comparisons and "
  .. "interactions (m tests), with the p values of the pre-registered test (analysis.test: "
  .. "the paired t-test, or the exact sign-flip test). For each comparison on the primary "
  .. "metric: better if the Holm-adjusted p <= alpha, the decision interval of the mean "
  .. "difference (treatment - baseline; the 1 - alpha t interval for the t-test, the exact "
  .. "sign-flip inversion interval for the sign flip) lies entirely on the better side of "
  .. "zero and |mean difference| >= min_effect; worse, symmetrically; equivalent if the "
  .. "paired TOST at delta = min_effect by the same test, Holm-adjusted over the family, "
  .. "has p <= alpha; otherwise inconclusive. Every other metric is exploratory: "
  .. "unadjusted p, no verdict. The minimum detectable effect is at the Holm first-step "
  .. string.format("level alpha / m and %g %% power; BCa intervals are descriptive.",
    100 * stats.DEFAULT_POWER)

-- Rule 1's decision (kept exactly): c carries p_holm_rule1.  Returns verdict, sentence,
-- interval kind.
function M.verdict_rule1(c, an)
  local level = string.format("%g %%", 100 * (1 - an.alpha))
  local rule = string.format("the pre-registered rule (%s is better, minimum effect %s, " ..
    "alpha %s, Holm over the study's family)", an.better, fmt(an.min_effect), fmt(an.alpha))
  local ci, kind = verdict_ci_rule1(c)
  local head = string.format("%s vs %s on %s", c.treatment, c.baseline, c.metric)
  local p_holm = c.p_holm_rule1
  if c.mean == nil or ci == nil then
    return "inconclusive", string.format("%s: only %d seed%s with a finite result for both " ..
      "runs, too few for an interval: inconclusive by %s.", head, c.n, c.n == 1 and "" or "s",
      rule)
  end
  local lo, hi, d, m = ci[1], ci[2], c.mean, an.min_effect
  local sign = an.better == "lower" and -1 or 1
  local better_side = (sign < 0 and hi < 0) or (sign > 0 and lo > 0)
  local worse_side = (sign < 0 and lo > 0) or (sign > 0 and hi < 0)
  local sig = p_holm <= an.alpha
  local big = math.abs(d) >= m
  local verdict, why
  if sig and better_side and big then
    verdict = "better"
  elseif sig and worse_side and big then
    verdict = "worse"
  elseif lo > -m and hi < m then
    verdict = "no meaningful difference"
  else
    verdict = "inconclusive"
    if not sig and c.mde and c.mde > m then
      why = string.format("underpowered: with %d seeds the smallest difference this design " ..
        "detects with %g %% power is about %s, larger than the minimum effect %s", c.n,
        100 * stats.DEFAULT_POWER, fmt(c.mde), fmt(m))
    elseif not sig then
      why = string.format("the Holm-adjusted p %s is above alpha %s and the interval reaches " ..
        "beyond the minimum effect", fmt(p_holm), fmt(an.alpha))
    elseif not big then
      why = string.format("a difference is detected but its mean %s is smaller than the " ..
        "minimum effect %s while the interval reaches beyond it", fmt(d), fmt(m))
    else
      why = "the p is below alpha but the " .. kind .. " interval includes zero"
    end
  end
  local change
  if d == 0 then
    change = string.format("the same as with %s on average", c.baseline)
  else
    change = string.format("%s than with %s by %s on average%s", d < 0 and "lower" or "higher",
      c.baseline, fmt(math.abs(d)), c.relative_change and string.format(" (%+.2f %% of %s's mean)",
        100 * c.relative_change, c.baseline) or "")
  end
  local ci_name = kind == "BCa" and "BCa" or (kind == "t" and "t (BCa undefined)" or
    "point (all differences equal)")
  local s = string.format("With %s, %s was %s; %s %s interval of the difference %s to %s; " ..
    "Holm-adjusted p %s; %d seeds: %s by %s%s.", c.treatment, c.metric, change, level, ci_name,
    fmt(lo), fmt(hi), fmt(p_holm), c.n, verdict, rule, why and (", because " .. why) or "")
  return verdict, s, kind
end

local INTERVAL_NAME = { t = "t", signflip = "exact sign-flip" }

-- The current rule's decision for a family comparison c on the primary metric
-- (reasons.decide, the one place it is made): verdict, sentence, and the reason in a few
-- words (the terminal's verdict table prints it).
function M.verdict(c, an)
  local level = string.format("%g %%", 100 * (1 - an.alpha))
  local rule = string.format("the pre-registered rule (%s is better, minimum effect %s, " ..
    "alpha %s, %s test, Holm over the %d tests of the primary metric)", an.better,
    fmt(an.min_effect), fmt(an.alpha), an.test == "t" and "paired t" or "exact sign-flip", an.m)
  local why = reasons.decide(c, an)
  if why.code == "no_pairs" then
    local head = string.format("%s vs %s on %s", c.treatment, c.baseline, c.metric)
    return "inconclusive", string.format("%s: no seed with a finite result for both runs: " ..
      "inconclusive by %s.", head, rule), "no seed with a finite result for both runs"
  end
  local ci, d, verdict = c.ci_decision, c.mean, why.verdict
  local reason = reasons.verdict_words(why, c)
  local change
  if d == 0 then
    change = string.format("the same as with %s on average", c.baseline)
  else
    change = string.format("%s than with %s by %s on average%s", d < 0 and "lower" or "higher",
      c.baseline, fmt(math.abs(d)), c.relative_change and string.format(" (%+.2f %% of %s's mean)",
        100 * c.relative_change, c.baseline) or "")
  end
  local interval = ci and string.format("%s %s interval of the difference %s to %s", level,
    INTERVAL_NAME[c.ci_decision_kind] or c.ci_decision_kind, fmt(ci[1]), fmt(ci[2])) or
    string.format("no %s interval (the sign-flip test cannot reject at alpha with %d pairs)",
      level, c.n)
  local tost = c.tost or {}
  local s = string.format("With %s, %s was %s; %s; Holm-adjusted p %s; TOST p %s; %d seeds: " ..
    "%s by %s%s.", c.treatment, c.metric, change, interval, fmt(c.p_holm),
    tost.p_holm and fmt(tost.p_holm) or "undefined", c.n, verdict, rule,
    verdict == "inconclusive" and (", because " .. reason) or "")
  return verdict, s, reason
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

-- The summary's `analysis`: the study's pre-registered analysis as it was applied.
local function analysis_out(an, s, test, m_family, level, note)
  local an_out = {
    baseline = an.baseline, primary = an.primary, better = an.better,
    min_effect = an.min_effect, alpha = an.alpha, correction = "holm",
    resamples = an.resamples, bootstrap = an.bootstrap, metrics = arr(an.metrics),
    comparisons = arr({}), test = test, m = m_family, holm_first_level = level,
    rule = M.RULE, registered_rule = an.registered_rule or M.RULE,
    decision_rule = M.DECISION_RULE,
    tost = { delta = an.min_effect, alpha = an.alpha, test = test },
    power = stats.DEFAULT_POWER,
  }
  if an_out.registered_rule == 1 then an_out.decision_rule_1 = M.DECISION_RULE_1 end
  if an_out.registered_rule < M.RULE then
    an_out.rule_note = string.format("This study was pre-registered under decision rule %d " ..
      "and ran before rule %d existed; it is re-analysed under rule %d, and its registered " ..
      "verdicts are kept as verdict_rule1.", an_out.registered_rule, M.RULE, M.RULE)
  end
  if an.design_notes and #an.design_notes > 0 then
    an_out.design_notes = arr({ table.unpack(an.design_notes) })
    for _, n in ipairs(an.design_notes) do note("design: %s", n) end
  end
  if s.seeds_from_power then an_out.seeds_from_power = s.seeds_from_power end
  for _, c in ipairs(an.comparisons) do an_out.comparisons[#an_out.comparisons + 1] = arr(c) end
  if #an.interactions > 0 then
    an_out.interactions = arr({})
    for _, it in ipairs(an.interactions) do
      an_out.interactions[#an_out.interactions + 1] = { name = it.name, a = arr(it.a),
        b = arr(it.b) }
    end
  end
  return an_out
end

-- Per variant: descriptive statistics of every metric the records carry (so the
-- instruments reach the summary), the analysed ones always, and its diverged runs.
local function describe_variants(s, runs, note)
  local an = s.analysis
  local secondary = an.secondary or {}
  local analysed = {}
  for _, m in ipairs(an.metrics) do analysed[m] = true end
  for _, m in ipairs(secondary) do analysed[m] = true end
  local described, seen_metric = {}, {}
  for _, r in pairs(runs) do
    for _, run in pairs(r) do
      for name in pairs(run.values) do
        if not seen_metric[name] then
          seen_metric[name] = true
          described[#described + 1] = name
        end
      end
    end
  end
  for m in pairs(analysed) do
    if not seen_metric[m] then described[#described + 1] = m end
  end
  table.sort(described)
  local per_variant = {}
  for _, v in ipairs(s.variants) do
    local div_seeds = {}
    for _, seed in ipairs(s.seeds) do
      local r = runs[v.name][seed]
      if r.diverged then div_seeds[#div_seeds + 1] = seed end
      local missing = {}
      for _, name in ipairs(r.missing) do
        if analysed[name] then missing[#missing + 1] = name end
      end
      if not r.diverged and #missing > 0 then
        note("%s/seed-%d: no value for %s in its record", v.name, seed,
          table.concat(missing, ", "))
      end
    end
    local metrics = {}
    for _, m in ipairs(described) do
      local values, finite_values = arr({}), {}
      for i, seed in ipairs(s.seeds) do
        local x = runs[v.name][seed].values[m]
        values[i] = x == nil and json.null or x
        if x ~= nil then finite_values[#finite_values + 1] = x end
      end
      if #finite_values > 0 or analysed[m] then
        local sm = stats.summary(finite_values)
        metrics[m] = { n = sm.n, mean = sm.mean, sd = sm.sd, min = sm.min, max = sm.max,
          median = sm.median, values = values, seeds = arr({ table.unpack(s.seeds) }) }
      end
    end
    per_variant[v.name] = { n_runs = #s.seeds, n_diverged = #div_seeds,
      diverged_seeds = arr(div_seeds), metrics = metrics }
    if #div_seeds > 0 then
      local seeds = {}
      for _, x in ipairs(div_seeds) do seeds[#seeds + 1] = tostring(x) end
      note("%s: %d of %d runs diverged (seed%s %s); they are left out of every mean and " ..
        "comparison except on diverged and n_spikes", v.name, #div_seeds, #s.seeds,
        #div_seeds == 1 and "" or "s", table.concat(seeds, ", "))
    end
  end
  return per_variant
end

-- Holm over the current rule's family (the test p and the TOST p) and over rule 1's
-- (the t-test p), in place.
local function holm_adjust(family, rule1, alpha)
  if #family > 0 then
    local ps, tps = {}, {}
    for i, e in ipairs(family) do
      ps[i] = e.p
      tps[i] = e.tost.p or 1.0
    end
    local adjusted, reject = stats.holm(ps, alpha)
    local tadj, treject = stats.holm(tps, alpha)
    for i, e in ipairs(family) do
      e.p_holm, e.reject_holm = adjusted[i], reject[i]
      if e.tost.p then e.tost.p_holm, e.tost.equivalent_holm = tadj[i], treject[i] end
    end
  end
  if #rule1 > 0 then
    local ps = {}
    for i, e in ipairs(rule1) do ps[i] = e.p_rule1 end
    local adjusted, reject = stats.holm(ps, alpha)
    for i, e in ipairs(rule1) do e.p_holm_rule1, e.reject_holm_rule1 = adjusted[i], reject[i] end
  end
end

-- The summary's description of the Holm family, under the current rule and rule 1, and
-- the list of its tests and of the exploratory metrics, in an_out.
local function describe_family(an_out, an, test, level, n_family, n_rule1, secondary)
  local labels = {}
  for _, c in ipairs(an.comparisons) do labels[#labels + 1] = c[1] .. " vs " .. c[2] end
  for _, it in ipairs(an.interactions) do labels[#labels + 1] = "interaction " .. it.name end
  an_out.family_tests = arr({ table.unpack(labels) })
  local exploratory_metrics = {}
  for _, m in ipairs(an.metrics) do
    if m ~= an.primary then exploratory_metrics[#exploratory_metrics + 1] = m end
  end
  for _, m in ipairs(secondary) do exploratory_metrics[#exploratory_metrics + 1] = m end
  an_out.exploratory_metrics = arr(exploratory_metrics)
  an_out.family = string.format("Holm over the %d tests of the primary metric %s: %d " ..
    "comparison%s (%s)%s; p from the %s; first-step level alpha / m = %s. Exploratory " ..
    "(unadjusted p, no verdict): %s", n_family, an.primary, #an.comparisons,
    #an.comparisons == 1 and "" or "s", table.concat(labels, ", ", 1, #an.comparisons),
    #an.interactions > 0 and string.format(" and %d interaction%s (%s)", #an.interactions,
      #an.interactions == 1 and "" or "s",
      table.concat(labels, ", ", #an.comparisons + 1, #labels)) or "",
    test == "t" and "paired t-test (the exact sign-flip p where t is undefined)" or
      "exact sign-flip test", fmt(level),
    #exploratory_metrics > 0 and table.concat(exploratory_metrics, ", ") or "none")
  if n_family == 0 then
    an_out.family = "No confirmatory test: the study pre-registered none (analysis." ..
      "comparisons = {}, a descriptive study): no family, no verdicts"
  end
  if n_rule1 == 0 then return end
  an_out.family_rule1 = string.format("Holm over the %d tests of this study: %d comparison%s " ..
    "and %d interaction%s, each on %d metric%s (%s); p from the paired t-test, the exact " ..
    "sign-flip p where t is undefined, 1 where neither is defined", n_rule1, #an.comparisons,
    #an.comparisons == 1 and "" or "s", #an.interactions, #an.interactions == 1 and "" or "s",
    #an.metrics, #an.metrics == 1 and "" or "s", table.concat(an.metrics, ", "))
end

-- The verdicts of the comparisons on the primary metric, under the current rule and
-- rule 1 (each comparison keeps both), with a note where BCa is only descriptive.
local function verdicts_of(comparisons, an, an_out, note)
  local verdicts = {}
  local same = { ["no meaningful difference"] = "equivalent" }
  for _, c in ipairs(comparisons) do
    if c.metric == an.primary then
      local v, sentence, reason = M.verdict(c, an_out)
      c.verdict = v
      local entry = { treatment = c.treatment, baseline = c.baseline,
        metric = c.metric, verdict = v, sentence = sentence, reason = reason,
        interval = c.ci_decision_kind }
      if c.p_holm_rule1 then
        local v1, sentence1, kind1 = M.verdict_rule1(c, an)
        c.verdict_rule1 = v1
        entry.verdict_rule1, entry.sentence_rule1, entry.interval_rule1 = v1, sentence1, kind1
        entry.changed = (same[v1] or v1) ~= v
      end
      verdicts[#verdicts + 1] = entry
      if c.bca_caveat then
        note("%s vs %s on %s: the BCa interval is descriptive only (n = %d < %d: its coverage " ..
          "is below nominal, at most 1 - 2^(1-n) for symmetric differences)", c.treatment,
          c.baseline, c.metric, c.n, stats.BCA_CAVEAT_N)
      end
    end
  end
  return verdicts
end

-- M.summarize in steps.  They share a context `ctx`: the study s, its runs
-- (runs[variant][seed]), its analysis an, the decision test, the Holm first-step level,
-- by_key (per variant, the seed of the run with each pairing key, run_key) and
-- note(fmt, ...), which appends to the summary's notes in the order the steps run.

-- Per variant, the seed of its run with each pairing key.
local function pairing(s, runs)
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

-- The relative change of validation perplexity of treatment tv against baseline bv on
-- the pairs where both have one, whatever the metric compared: the number the paper
-- quotes as the percentage change.
local function val_ppl_change(ctx, tv, bv)
  local _, a, b = pairs_of(ctx, tv, bv, "val_ppl")
  if #a == 0 then return nil end
  local d = {}
  for i = 1, #a do d[i] = b[i] - a[i] end
  return relative_change(stats.summary(d).mean, a)
end

-- The decision test's p and interval, on an entry e with stats.paired result r for the
-- pairs (a, b).
local function decide(ctx, e, r, a, b)
  local test, an = ctx.test, ctx.an
  e.test = test
  e.p, e.p_source = test_p(r, test)
  local kind = (test == "t" and r.ci_t) and "t" or "signflip"
  if kind == "t" then
    e.ci_decision = arr({ r.ci_t[1], r.ci_t[2] })
  elseif #a >= 1 then
    local sf = stats.signflip_interval(a, b, { alpha = an.alpha, resamples = an.resamples,
      seed = 1 })
    if sf.ci then
      e.ci_decision = arr({ sf.ci[1], sf.ci[2] })
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
      reason = "no pairs" }
  end
  local opts = { delta = an.min_effect, alpha = an.alpha, test = test,
    resamples = an.resamples, seed = 1 }
  local t = stats.tost(a, b, opts)
  local fallback
  if t.degenerate and test == "t" then
    -- as for the difference test: the exact sign flip where the t-test is undefined
    fallback = reasons.tost(t) .. "; the exact sign-flip TOST instead"
    opts.test = "signflip"
    t = stats.tost(a, b, opts)
  end
  return { test = t.test, delta = t.delta, alpha = t.alpha, p = t.p, p_lower = t.p_lower,
    p_upper = t.p_upper, ci = t.ci and arr({ t.ci[1], t.ci[2] }) or nil,
    equivalent = t.equivalent, reason = reasons.tost(t), fallback = fallback }
end

-- The minimum detectable effect at alpha / m of n pairs with stats.paired result r, and
-- why the test cannot reach alpha / m (nil when it can).
local function mde_of(ctx, r, n)
  local test, level = ctx.test, ctx.level
  local mde = { level = level, power = stats.DEFAULT_POWER }
  local reach = stats.min_seeds(test, level)
  if n < reach then
    mde.reason = string.format("the %s test cannot reach alpha / m = %s with %d pair%s " ..
      "(it needs %d)", test == "t" and "t" or "exact sign-flip", fmt(level), n,
      n == 1 and "" or "s", reach)
    return mde, mde.reason
  end
  if r.sd and r.sd > 0 and not (r.flags and r.flags.constant) then
    local md = stats.mde(n, { alpha = level, power = stats.DEFAULT_POWER, sd = r.sd })
    mde.d_z, mde.value = md.mde_d_z, md.mde
    if test == "signflip" then
      mde.method = "t-test power (the permutation test's for normal data)"
    end
  else
    mde.reason = "the differences have no spread: sd = 0 or n < 2"
  end
  return mde
end

-- Family extras: TOST, MDE at alpha / m, probability of improvement.
local function family_extras(ctx, e, r, a, b)
  local an = ctx.an
  e.tost = tost_of(ctx, a, b)
  e.mde_adjusted, e.test_cannot_reach = mde_of(ctx, r, #a)
  local imp = stats.improvement(a, b, { better = an.better, alpha = an.alpha })
  e.improvement = { n = imp.n, better = imp.better, ties = imp.ties, share = imp.share,
    ci = imp.ci and arr({ imp.ci[1], imp.ci[2] }) or nil, alpha = an.alpha }
end

-- One paired comparison of treatment tv against baseline bv on metric m: the entry, the
-- stats.paired result, the baseline values and the seeds left out.
local function compare(ctx, tv, bv, m, family)
  local seeds, a, b, dropped = pairs_of(ctx, tv, bv, m)
  local r = stats.paired(a, b, paired_opts(ctx.an, #a))
  local e = { treatment = tv, baseline = bv, metric = m, family = family }
  paired_fields(e, r)
  e.seeds, e.a, e.b = arr(seeds), arr(a), arr(b)
  e.relative_change = relative_change(e.mean, a)
  decide(ctx, e, r, a, b)
  if family == "primary" then
    family_extras(ctx, e, r, a, b)
    e.val_ppl_change = val_ppl_change(ctx, tv, bv)
  else
    e.exploratory = true
  end
  return e, r, a, dropped
end

-- Appends entry e with stats.paired result r to the lists of rule 1's family (when the
-- study registered rule 1: fam.rule1 is then a list) and, on the primary metric, the
-- current rule's (fam = {family =, rule1 =}).
local function enter(fam, e, r)
  if fam.rule1 then
    e.p_rule1 = (holm_p(r))
    fam.rule1[#fam.rule1 + 1] = e
  end
  if e.family == "primary" then fam.family[#fam.family + 1] = e end
end

-- Every pre-registered comparison on every metric of analysis.metrics, with a note
-- where seeds were left out or the test is degenerate.
local function compare_all(ctx, fam)
  local an, comparisons = ctx.an, {}
  for _, pair in ipairs(an.comparisons) do
    local tv, bv = pair[1], pair[2]
    for _, m in ipairs(an.metrics) do
      local e, r, a, dropped = compare(ctx, tv, bv, m, m == an.primary and "primary" or
        "exploratory")
      local parts = {}
      if #dropped > 0 then
        parts[1] = string.format("seed%s %s left out (a run without a finite value), n = %d",
          #dropped == 1 and "" or "s", table.concat(dropped, ", "), #a)
      end
      if r.degenerate then parts[#parts + 1] = e.reason .. holm_note(e) end
      if #parts > 0 then ctx.note("%s vs %s on %s: %s", tv, bv, m, table.concat(parts, "; ")) end
      comparisons[#comparisons + 1] = e
      enter(fam, e, r)
    end
  end
  return comparisons
end

-- Interaction `it` on metric m: stats.paired of the per-seed difference of differences.
local function interaction(ctx, it, m)
  local s, runs, by_key = ctx.s, ctx.runs, ctx.by_key
  local seeds, da, db = {}, {}, {}
  for _, seed in ipairs(s.seeds) do
    local key = run_key(runs[it.a[2]][seed], seed)
    local function val(v)
      local sd = by_key[v][key]
      return sd and runs[v][sd].values[m]
    end
    local at, ab, bt, bb = val(it.a[1]), val(it.a[2]), val(it.b[1]), val(it.b[2])
    if at and ab and bt and bb then
      seeds[#seeds + 1], da[#da + 1], db[#db + 1] = seed, at - ab, bt - bb
    end
  end
  local r = stats.paired(db, da, paired_opts(ctx.an, #da))
  local fam = m == ctx.an.primary and "primary" or "exploratory"
  local e = { name = it.name, a = arr(it.a), b = arr(it.b), metric = m, family = fam }
  paired_fields(e, r)
  e.seeds, e.diff_a, e.diff_b = arr(seeds), arr(da), arr(db)
  decide(ctx, e, r, db, da)
  if fam == "primary" then family_extras(ctx, e, r, db, da) else e.exploratory = true end
  return e, r
end

-- Every pre-registered interaction on every metric of analysis.metrics, with notes.
local function interact_all(ctx, fam)
  local interactions, n_seeds = {}, #ctx.s.seeds
  for _, it in ipairs(ctx.an.interactions) do
    for _, m in ipairs(ctx.an.metrics) do
      local e, r = interaction(ctx, it, m)
      local parts = {}
      if #e.seeds < n_seeds then
        parts[1] = string.format("%d of %d seeds have finite values for all four runs",
          #e.seeds, n_seeds)
      end
      if r.degenerate then parts[#parts + 1] = e.reason .. holm_note(e) end
      if #parts > 0 then
        ctx.note("interaction %s on %s: %s", it.name, m, table.concat(parts, "; "))
      end
      interactions[#interactions + 1] = e
      enter(fam, e, r)
    end
  end
  return interactions
end

-- Secondary metrics: exploratory too (unadjusted p, no verdict), outside rule 1's family.
local function compare_secondary(ctx, secondary)
  local list = {}
  for _, pair in ipairs(ctx.an.comparisons) do
    for _, m in ipairs(secondary) do
      list[#list + 1] = (compare(ctx, pair[1], pair[2], m, "exploratory"))
    end
  end
  return list
end

-- The parts of the summary that follow from the others: variance components, the
-- command line's overrides, the extensions' sections, the sweep.
local function summary_extras(ctx, out, per_variant, comparisons)
  local s, runs, an = ctx.s, ctx.runs, ctx.an
  local vc = M.variance_components(s, runs, comparisons, an)
  if vc then out.variance_components = vc end
  if s.set then
    out.command_line_overrides = json.object(s.set)
    table.insert(out.notes, 1, "every run was changed from the study file by --set " ..
      json.encode(json.object(s.set)))
  end
  local names = {}
  for name in pairs(s.extensions or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    if an[name] ~= nil then
      out[name] = s.extensions[name].summarize(s, runs, out)
      -- a pilot for a later study's seeds from power (lua/repro/study/init.lua)
      if out[name].pilot then out.pilot_comparisons = json.array({ out[name].pilot }) end
    end
  end
  if an.sweep then
    local section, pilot, outcomes = lrsens.summarize(s, runs, M.summarize)
    if section then
      out.lr_sweep, out.pilot_comparisons, out.sweep_outcomes = section, pilot, outcomes
    else
      ctx.note("learning-rate sweep: %s", pilot)
    end
  end
end

-- The unigram perplexity of a corpus's validation split (engine.ngram_ppl), by path.
local unigram_cache = {}
local function unigram_ppl(data)
  if unigram_cache[data] == nil then
    local ok, r = pcall(engine.ngram_ppl, data)
    unigram_cache[data] = ok and r.unigram_ppl or false
  end
  return unigram_cache[data] or nil
end

-- The variants of the verdicts whose mean validation perplexity is at or above the
-- unigram perplexity of their corpus (engine.ngram_ppl: add-one unigram fitted on the
-- training split, on the validation split): models that learned nothing beyond
-- character frequencies, so a verdict between them says nothing about the question
-- (too few steps, too small a learning rate, a broken set-up).  A list of
-- {variant, val_ppl, unigram_ppl, data, text}, in the study's variant order; empty for
-- a study without verdicts.
function M.unigram_warnings(s, per_variant, verdicts)
  local in_verdict = {}
  for _, v in ipairs(verdicts) do
    in_verdict[v.treatment], in_verdict[v.baseline] = true, true
  end
  local data_of = {}
  for _, r in ipairs(s.runs or {}) do data_of[r.variant] = data_of[r.variant] or r.cfg.data end
  local out = {}
  for _, v in ipairs(s.variants) do
    local pv = per_variant[v.name]
    local ppl = pv and pv.metrics and pv.metrics.val_ppl and pv.metrics.val_ppl.mean
    local uni = in_verdict[v.name] and finite(ppl) and data_of[v.name] and
      unigram_ppl(data_of[v.name])
    if uni and ppl >= uni then
      out[#out + 1] = { variant = v.name, val_ppl = ppl, unigram_ppl = uni,
        data = data_of[v.name], text = string.format("%s: validation PPL %s is at or above " ..
        "the unigram PPL %s of %s: the model learned nothing beyond character frequencies, " ..
        "so a verdict involving it says nothing about the question", v.name, fmt(ppl),
        fmt(uni), data_of[v.name]) }
    end
  end
  return out
end

-- The summary table of study `s` (lua/repro/study/init.lua) from runs[variant][seed] (as
-- read_run returns them).
function M.summarize(s, runs)
  local an = s.analysis
  local notes = {}
  local m_family = #an.comparisons + #an.interactions
  local ctx = { s = s, runs = runs, an = an, test = an.test or "t",
    level = m_family > 0 and an.alpha / m_family or an.alpha, by_key = pairing(s, runs),
    note = function(fmt_, ...) notes[#notes + 1] = string.format(fmt_, ...) end }
  local variants_out = {}
  for _, v in ipairs(s.variants) do
    variants_out[#variants_out + 1] = { name = v.name, overrides = json.object(v.overrides) }
  end
  local an_out = analysis_out(an, s, ctx.test, m_family, ctx.level, ctx.note)
  local secondary = an.secondary or {}
  local per_variant = describe_variants(s, runs, ctx.note)

  -- entries of the current family, and of rule 1's when the study registered it
  local fam = { family = {}, rule1 = an.registered_rule == 1 and {} or nil }
  local comparisons = compare_all(ctx, fam)
  local interactions = interact_all(ctx, fam)
  holm_adjust(fam.family, fam.rule1 or {}, an.alpha)
  local secondary_comparisons = compare_secondary(ctx, secondary)
  if #secondary > 0 then an_out.secondary = arr({ table.unpack(secondary) }) end
  describe_family(an_out, an, ctx.test, ctx.level, #fam.family, #(fam.rule1 or {}), secondary)
  local verdicts = verdicts_of(comparisons, an, an_out, ctx.note)

  local definitions = {}
  for _, m in ipairs(an.metrics) do definitions[m] = M.DEFINITIONS[m] end
  local out = {
    study = s.name, description = s.description, file = s.file_rel or s.file,
    seeds = arr({ table.unpack(s.seeds) }), base = json.object(s.base),
    variants = variants_out, analysis = an_out, per_variant = per_variant,
    comparisons = arr(comparisons), interactions = arr(interactions),
    verdicts = arr(verdicts), notes = arr(notes), definitions = json.object(definitions),
  }
  if #secondary_comparisons > 0 then
    out.secondary_comparisons = arr(secondary_comparisons)
  end
  summary_extras(ctx, out, per_variant, comparisons)
  if s.factor then out.factor = s.factor end -- declared only (lua/repro/study/init.lua)
  -- only when it applies, so summaries without it keep their bytes
  local warnings = M.unigram_warnings(s, per_variant, verdicts)
  if #warnings > 0 then out.warnings = arr(warnings) end
  return out
end

-- The records of every run of the validated study s under its directory dir (the
-- analysis needs them all, not only the runs a command selected): variant -> seed ->
-- run (M.read_run), and the labels of the runs not done (record.status: a record that
-- is unfinished, of another config, failing its checksums or without them is not done).
function M.study_records(s, dir)
  local record = require "repro.record"
  local metrics = require("repro.study").metric_names()
  local records, missing = {}, {}
  for _, r in ipairs(s.runs) do
    local rdir = dir .. "/" .. r.rel
    records[r.variant] = records[r.variant] or {}
    if record.status(rdir, r.cfg) == "done" then
      records[r.variant][r.seed] = assert(M.read_run(rdir, metrics))
    else
      missing[#missing + 1] = r.label
    end
  end
  return records, missing
end

-- The summary of study s from its records (M.study_records) in dir, with the digest of
-- the verified records beside it (`records_sha256`, record.records_digest): the table
-- and its text, exactly as `bin/repro analyze` writes summary.json.
function M.summary_of(s, dir, records)
  local summary = M.summarize(s, records)
  summary.records_sha256 = require("repro.record").records_digest(dir)
  return summary, json.pretty(summary)
end

-- Two-way random-effects ANOVA components when the runs cross init_seed and data_seed
-- (header); nil otherwise.
function M.variance_components(s, runs, comparisons, an)
  local crossed = false
  for _, v in ipairs(s.variants) do
    for _, seed in ipairs(s.seeds) do
      local r = runs[v.name][seed]
      if (r.init_seed or seed) ~= (r.data_seed or seed) then crossed = true end
    end
  end
  if not crossed then return nil end
  -- y[init][data] of a list of {init, data, value}; or nil and why.
  local function grid(cells)
    local inits, datas, seen_i, seen_d, at = {}, {}, {}, {}, {}
    for _, c in ipairs(cells) do
      if not seen_i[c[1]] then seen_i[c[1]] = true; inits[#inits + 1] = c[1] end
      if not seen_d[c[2]] then seen_d[c[2]] = true; datas[#datas + 1] = c[2] end
      local k = c[1] .. "/" .. c[2]
      if at[k] then return nil, "two runs share init_seed " .. c[1] .. " and data_seed " .. c[2] end
      at[k] = c[3]
    end
    table.sort(inits)
    table.sort(datas)
    if #inits < 2 or #datas < 2 then return nil, "fewer than 2 init seeds or data seeds" end
    local y = {}
    for i, a in ipairs(inits) do
      y[i] = {}
      for j, b in ipairs(datas) do
        local x = at[a .. "/" .. b]
        if x == nil then
          return nil, string.format("no finite value for init_seed %d, data_seed %d", a, b)
        end
        y[i][j] = x
      end
    end
    return y, inits, datas
  end
  local function components(cells)
    local y, inits, datas = grid(cells)
    if not y then return { reason = inits } end
    local r = stats.anova2(y)
    return { init_seeds = arr(inits), data_seeds = arr(datas), mean = r.mean,
      var_init = r.var_row, var_data = r.var_col, var_resid = r.var_resid,
      share_init = r.share_row, share_data = r.share_col, share_resid = r.share_resid,
      negative_init = r.negative_row, negative_data = r.negative_col,
      ms_init = r.ms_row, ms_data = r.ms_col, ms_resid = r.ms_resid,
      df_init = r.df_row, df_data = r.df_col, df_resid = r.df_resid,
      f_init = r.f_row, f_data = r.f_col, p_init = r.p_row, p_data = r.p_col }
  end
  local out = {
    method = "two-way crossed random-effects ANOVA without replication (init_seed x " ..
      "data_seed, one run per cell): variance components by the method of moments from " ..
      "the expected mean squares, var_init = (MS_init - MS_resid) / n_data, var_data = " ..
      "(MS_data - MS_resid) / n_init, var_resid = MS_resid (it holds the interaction); a " ..
      "negative estimate is reported as it is and counts as 0 in the shares",
    by_variant = {}, by_comparison = arr({}),
  }
  for _, v in ipairs(s.variants) do
    local per = {}
    for _, m in ipairs(an.metrics) do
      local cells = {}
      for _, seed in ipairs(s.seeds) do
        local r = runs[v.name][seed]
        if r.values[m] ~= nil then
          cells[#cells + 1] = { r.init_seed or seed, r.data_seed or seed, r.values[m] }
        end
      end
      per[m] = components(cells)
    end
    out.by_variant[v.name] = per
  end
  for _, c in ipairs(comparisons) do
    if c.metric == an.primary then
      local cells = {}
      for i, seed in ipairs(c.seeds) do
        local r = runs[c.baseline][seed]
        cells[#cells + 1] = { r.init_seed or seed, r.data_seed or seed, c.b[i] - c.a[i] }
      end
      local e = components(cells)
      e.treatment, e.baseline, e.metric = c.treatment, c.baseline, c.metric
      out.by_comparison[#out.by_comparison + 1] = e
    end
  end
  return out
end

-- The verdicts as a short text table (for the run command's stdout), each row followed by its
-- reason.
-- width (optional): the terminal's; the table's columns are cut and its sentences wrapped
-- to it (lua/repro/core/textable.lua).
function M.verdict_table(summary, width)
  local an = summary.analysis
  local lines = { textable.wrap(string.format("verdicts on %s (%s is better; minimum effect " ..
    "%s; alpha %s; %s test; %s):", an.primary, an.better, fmt(an.min_effect), fmt(an.alpha),
    an.test or "t", an.family:match("^[^:]+")), width) }
  -- the verdict under rule 1 only for a study registered under it
  local rule1 = (an.registered_rule or M.RULE) < (an.rule or M.RULE)
  local rows = { { "treatment", "baseline", "mean diff", "interval", "p_holm", "TOST p_holm",
    "verdict", rule1 and "rule 1" or nil } }
  local byname = {}
  for _, c in ipairs(summary.comparisons) do
    if c.metric == an.primary then byname[c.treatment .. "\0" .. c.baseline] = c end
  end
  for _, v in ipairs(summary.verdicts) do
    local c = byname[v.treatment .. "\0" .. v.baseline]
    local ci = c.ci_decision
    rows[#rows + 1] = { v.treatment, v.baseline, fmt(c.mean),
      ci and string.format("[%s, %s]", fmt(ci[1]), fmt(ci[2])) or "-", fmt(c.p_holm),
      c.tost and c.tost.p_holm and fmt(c.tost.p_holm) or "-", v.verdict,
      rule1 and ((v.verdict_rule1 or "-") .. (v.changed and " (changed)" or "")) or nil }
  end
  local k = 0
  for row in textable.render(rows, { indent = "  ", width = width }):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = row
    local v = summary.verdicts[k]
    if v and v.reason then
      lines[#lines + 1] = textable.wrap("because " .. v.reason, width, "      ", "        ")
    end
    k = k + 1
  end
  if #summary.verdicts == 0 then lines[#lines + 1] = "  (no comparisons)" end
  for _, w in ipairs(summary.warnings or {}) do
    lines[#lines + 1] = textable.wrap("WARNING: " .. w.text, width, "  ", "    ")
  end
  if an.seeds_from_power then
    lines[#lines + 1] = textable.wrap(require("repro.study").seeds_text(an.seeds_from_power),
      width, "  ", "    ")
  end
  local sections = {} -- an extension's section with console text (header)
  for k, v in pairs(summary) do
    if type(v) == "table" and type(v.text) == "table" then sections[#sections + 1] = k end
  end
  table.sort(sections)
  for _, k in ipairs(sections) do
    for _, l in ipairs(summary[k].text) do lines[#lines + 1] = l end
  end
  for _, l in ipairs(lrsens.text(summary.lr_sweep)) do lines[#lines + 1] = l end
  if summary.sweep_outcomes then
    lines[#lines + 1] = "outcomes over the grid (lr_sweep.outcomes):"
    lines[#lines + 1] = M.verdict_table(summary.sweep_outcomes, width)
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
