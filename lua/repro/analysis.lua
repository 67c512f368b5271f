-- The analysis of a study's run records: experiments/<study>/summary.json.
--
-- Values.  Every numeric top-level field of a run's metrics.json is a metric, plus
-- three computed here from the record (study.DERIVED_METRICS):
--   diverged        1 if the run diverged (engine/diag.h: a non-finite loss or gradient
--                   norm, or 10 consecutive losses above the initial loss + 1 nat), else 0
--   n_spikes        the number of steps whose training loss is non-finite or exceeds
--                   SPIKE_FACTOR (1.5) times the smallest loss of all earlier steps
--                   (a divergence counts as one spike)
--   max_loss_ratio  the largest loss_t / min(loss_s, s < t) over steps t >= 1
-- A diverged run has no value for any metric except `diverged` and `n_spikes`: its
-- values are null, it is left out of means, and the count of diverged runs per
-- variant is reported with a note, never silently.
--
-- Statistics.  Per variant and metric: n, mean, sd, min, max, median (stats.summary)
-- and the per-seed values.  Per comparison (treatment vs baseline; by default every
-- variant vs analysis.baseline plus layernorm vs rmsnorm when both exist) and metric:
-- every field of stats.paired(baseline, treatment) on the seeds where both runs have a
-- value, so the difference is treatment - baseline.  Per interaction (a = {t1, b1},
-- b = {t2, b2}) and metric: stats.paired of the per-seed difference of differences
-- (t1 - b1) - (t2 - b2).  The bootstrap is exact (all n^n resamples) for n <= 8 unless
-- analysis.bootstrap = "monte-carlo"; otherwise analysis.resamples Monte Carlo draws.
-- Intervals are at level 1 - alpha.  Every test resamples with seed 1, so the summary is
-- byte-identical from run to run.
--
-- Holm.  One family per study: every comparison and every interaction, each on every
-- listed metric.  A test's p is the paired t-test's; where t is undefined (constant
-- differences, n < 2) the exact sign-flip p; where neither is defined, 1.
--
-- Pre-registered decision rule, for the primary metric of each comparison, with d the
-- mean difference treatment - baseline and CI its 1 - alpha BCa interval (the t
-- interval when BCa is undefined; the point interval when every difference is equal):
--   better                    Holm-adjusted p <= alpha, the CI lies entirely on the
--                             better side of 0 (below it when lower is better) and
--                             |d| >= min_effect;
--   worse                     the same on the other side;
--   no meaningful difference  the CI lies entirely within (-min_effect, +min_effect);
--   inconclusive              anything else, with the reason (underpowered given the
--                             design's minimum detectable effect, p above alpha, an
--                             effect smaller than min_effect whose CI reaches beyond it).
local stats = require "stats"
local json = require "repro.json"
local fs = require "repro.fs"

local M = {}

M.SPIKE_FACTOR = 1.5

-- Metrics computed here, and those that keep their value for a diverged run.
local DERIVED = { diverged = true, n_spikes = true, max_loss_ratio = true }
local DIVERGENCE_AWARE = { diverged = true, n_spikes = true }

M.DEFINITIONS = {
  diverged = "1 if the run stopped on a non-finite loss or gradient norm, or on 10 "
    .. "consecutive training losses above the loss at initialization + 1 nat, else 0",
  n_spikes = "number of steps whose training loss is non-finite or exceeds 1.5 times the "
    .. "smallest training loss of all earlier steps (a divergence counts as one spike)",
  max_loss_ratio = "largest ratio of a step's training loss to the smallest loss of all "
    .. "earlier steps (undefined for a diverged run)",
}

M.DECISION_RULE = "For the primary metric: better if the Holm-adjusted p <= alpha, the "
  .. "(1 - alpha) BCa CI of the mean difference (treatment - baseline) lies entirely on the "
  .. "better side of zero and |mean difference| >= min_effect; worse, symmetrically; no "
  .. "meaningful difference if the CI lies entirely within (-min_effect, +min_effect); "
  .. "otherwise inconclusive. The t interval replaces BCa when BCa is undefined."

local function finite(x)
  return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
end

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
-- missing = {metric names absent from a finished run}, copied_from = path or nil}.
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
    derived.n_spikes, derived.max_loss_ratio = n_spikes, not diverged and max_ratio or nil
  end
  local run = { diverged = diverged, values = {}, missing = {} }
  for _, name in ipairs(metrics) do
    local v
    if DERIVED[name] then
      v = derived[name]
    elseif type(m[name]) == "number" then
      v = m[name]
    end
    if diverged and not DIVERGENCE_AWARE[name] then v = nil end
    if v ~= nil and not finite(v) then v = nil end
    if v == nil and not diverged then run.missing[#run.missing + 1] = name end
    run.values[name] = v
  end
  local man = fs.read(dir .. "/manifest.json")
  local mok, manifest = pcall(json.decode, man or "")
  if mok and type(manifest) == "table" and type(manifest.copied_from) == "string" then
    run.copied_from = manifest.copied_from
  end
  return run
end

local function fmt(x)
  if x == nil then return "?" end
  local s = string.format("%.4g", x)
  return s == "-0" and "0" or s
end

local function arr(t) return json.array(t or {}) end

-- Every field of a stats.paired result, intervals as arrays.
local function paired_fields(entry, r)
  for k, v in pairs(r) do
    if type(v) == "table" and k ~= "flags" then v = arr({ v[1], v[2] }) end
    entry[k] = v
  end
end

-- The p that enters Holm, and where it came from.
local function holm_p(r)
  if r.p_t then return r.p_t, "p_t" end
  if r.p_signflip then return r.p_signflip, "p_signflip" end
  return 1.0, "undefined"
end

local function holm_note(e)
  if e.p_source == "p_t" then return "" end
  return e.p_source == "p_signflip" and "; Holm uses its exact sign-flip p" or "; Holm uses p = 1"
end

local function paired_opts(an, n)
  return { alpha = an.alpha, resamples = an.resamples, seed = 1,
    exact = an.bootstrap == "exact" and n >= 1 and n <= 8 }
end

-- The interval a verdict uses: BCa, else t, else the point interval of constant data.
local function verdict_ci(c)
  if c.ci_bca then return c.ci_bca, "BCa" end
  if c.ci_t then return c.ci_t, "t" end
  if c.flags and c.flags.constant and c.ci_percentile then return c.ci_percentile, "point" end
  return nil
end

-- The decision rule (header) applied to comparison entry c: verdict, sentence, note.
function M.verdict(c, an)
  local level = string.format("%g %%", 100 * (1 - an.alpha))
  local rule = string.format("the pre-registered rule (%s is better, minimum effect %s, " ..
    "alpha %s, Holm over the study's family)", an.better, fmt(an.min_effect), fmt(an.alpha))
  local ci, kind = verdict_ci(c)
  local head = string.format("%s vs %s on %s", c.treatment, c.baseline, c.metric)
  if c.mean == nil or ci == nil then
    return "inconclusive", string.format("%s: only %d seed%s with a finite result for both " ..
      "runs, too few for an interval: inconclusive by %s.", head, c.n, c.n == 1 and "" or "s",
      rule)
  end
  local lo, hi, d, m = ci[1], ci[2], c.mean, an.min_effect
  local sign = an.better == "lower" and -1 or 1
  local better_side = (sign < 0 and hi < 0) or (sign > 0 and lo > 0)
  local worse_side = (sign < 0 and lo > 0) or (sign > 0 and hi < 0)
  local sig = c.p_holm <= an.alpha
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
        "detects with 80 %% power is about %s, larger than the minimum effect %s", c.n,
        fmt(c.mde), fmt(m))
    elseif not sig then
      why = string.format("the Holm-adjusted p %s is above alpha %s and the interval reaches " ..
        "beyond the minimum effect", fmt(c.p_holm), fmt(an.alpha))
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
    fmt(lo), fmt(hi), fmt(c.p_holm), c.n, verdict, rule, why and (", because " .. why) or "")
  return verdict, s, kind
end

-- The summary table of study `s` (lua/repro/study.lua) from runs[variant][seed] (as
-- read_run returns them).
function M.summarize(s, runs)
  local an = s.analysis
  local notes = {}
  local function note(fmt_, ...) notes[#notes + 1] = string.format(fmt_, ...) end

  local variants_out = {}
  for _, v in ipairs(s.variants) do
    variants_out[#variants_out + 1] = { name = v.name, overrides = json.object(v.overrides) }
  end
  local an_out = {
    baseline = an.baseline, primary = an.primary, better = an.better,
    min_effect = an.min_effect, alpha = an.alpha, correction = "holm",
    resamples = an.resamples, bootstrap = an.bootstrap, metrics = arr(an.metrics),
    comparisons = arr({}), decision_rule = M.DECISION_RULE,
  }
  for _, c in ipairs(an.comparisons) do an_out.comparisons[#an_out.comparisons + 1] = arr(c) end
  if #an.interactions > 0 then
    an_out.interactions = arr({})
    for _, it in ipairs(an.interactions) do
      an_out.interactions[#an_out.interactions + 1] = { name = it.name, a = arr(it.a),
        b = arr(it.b) }
    end
  end

  -- Per variant: descriptive statistics of every metric the records carry (so the
  -- instruments reach the summary), the analysed ones always.
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
      if r.copied_from then
        note("%s/seed-%d: record copied from %s (byte-identical config.json), not retrained",
          v.name, seed, r.copied_from)
      end
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

  -- Paired comparisons and interactions, then Holm over all of them.
  local function pairs_of(tv, bv, m)
    local seeds, a, b, dropped = {}, {}, {}, {}
    for _, seed in ipairs(s.seeds) do
      local x, y = runs[bv][seed].values[m], runs[tv][seed].values[m]
      if x ~= nil and y ~= nil then
        seeds[#seeds + 1], a[#a + 1], b[#b + 1] = seed, x, y
      else
        dropped[#dropped + 1] = tostring(seed)
      end
    end
    return seeds, a, b, dropped
  end

  -- One paired comparison of treatment tv against baseline bv on metric m: the entry of
  -- the summary, the stats.paired result, the baseline values and the seeds left out.
  local function compare(tv, bv, m)
    local seeds, a, b, dropped = pairs_of(tv, bv, m)
    local r = stats.paired(a, b, paired_opts(an, #a))
    local e = { treatment = tv, baseline = bv, metric = m }
    paired_fields(e, r)
    e.seeds, e.a, e.b = arr(seeds), arr(a), arr(b)
    local base_mean = #a > 0 and stats.summary(a).mean or nil
    if e.mean and base_mean and base_mean ~= 0 then e.relative_change = e.mean / base_mean end
    return e, r, a, dropped
  end

  local tests = {}
  local comparisons = {}
  for _, pair in ipairs(an.comparisons) do
    local tv, bv = pair[1], pair[2]
    for _, m in ipairs(an.metrics) do
      local e, r, a, dropped = compare(tv, bv, m)
      e.p, e.p_source = holm_p(r)
      local parts = {}
      if #dropped > 0 then
        parts[1] = string.format("seed%s %s left out (a run without a finite value), n = %d",
          #dropped == 1 and "" or "s", table.concat(dropped, ", "), #a)
      end
      if r.degenerate then parts[#parts + 1] = r.reason .. holm_note(e) end
      if #parts > 0 then note("%s vs %s on %s: %s", tv, bv, m, table.concat(parts, "; ")) end
      comparisons[#comparisons + 1] = e
      tests[#tests + 1] = e
    end
  end
  local interactions = {}
  for _, it in ipairs(an.interactions) do
    for _, m in ipairs(an.metrics) do
      local seeds, da, db = {}, {}, {}
      for _, seed in ipairs(s.seeds) do
        local at, ab = runs[it.a[1]][seed].values[m], runs[it.a[2]][seed].values[m]
        local bt, bb = runs[it.b[1]][seed].values[m], runs[it.b[2]][seed].values[m]
        if at and ab and bt and bb then
          seeds[#seeds + 1], da[#da + 1], db[#db + 1] = seed, at - ab, bt - bb
        end
      end
      local r = stats.paired(db, da, paired_opts(an, #da))
      local e = { name = it.name, a = arr(it.a), b = arr(it.b), metric = m }
      paired_fields(e, r)
      e.seeds, e.diff_a, e.diff_b = arr(seeds), arr(da), arr(db)
      e.p, e.p_source = holm_p(r)
      local parts = {}
      if #seeds < #s.seeds then
        parts[1] = string.format("%d of %d seeds have finite values for all four runs", #seeds,
          #s.seeds)
      end
      if r.degenerate then parts[#parts + 1] = r.reason .. holm_note(e) end
      if #parts > 0 then note("interaction %s on %s: %s", it.name, m, table.concat(parts, "; ")) end
      interactions[#interactions + 1] = e
      tests[#tests + 1] = e
    end
  end
  if #tests > 0 then
    local ps = {}
    for i, e in ipairs(tests) do ps[i] = e.p end
    local adjusted, reject = stats.holm(ps, an.alpha)
    for i, e in ipairs(tests) do e.p_holm, e.reject_holm = adjusted[i], reject[i] end
  end
  -- Secondary metrics: the same paired statistics, reported outside the Holm family
  -- (exploratory: their p values are unadjusted and no verdict is drawn from them).
  local secondary_comparisons = {}
  for _, pair in ipairs(an.comparisons) do
    for _, m in ipairs(secondary) do
      local e = compare(pair[1], pair[2], m)
      e.exploratory = true
      secondary_comparisons[#secondary_comparisons + 1] = e
    end
  end
  if #secondary > 0 then an_out.secondary = arr({ table.unpack(secondary) }) end

  local labels = {}
  for _, c in ipairs(an.comparisons) do labels[#labels + 1] = c[1] .. " vs " .. c[2] end
  for _, it in ipairs(an.interactions) do labels[#labels + 1] = "interaction " .. it.name end
  an_out.family = string.format("Holm over the %d tests of this study: %d comparison%s " ..
    "(%s)%s, each on %d metric%s (%s); p from the paired t-test, the exact sign-flip p " ..
    "where t is undefined, 1 where neither is defined", #tests, #an.comparisons,
    #an.comparisons == 1 and "" or "s",
    table.concat(labels, ", ", 1, #an.comparisons),
    #an.interactions > 0 and string.format(" and %d interaction%s (%s)", #an.interactions,
      #an.interactions == 1 and "" or "s",
      table.concat(labels, ", ", #an.comparisons + 1, #labels)) or "",
    #an.metrics, #an.metrics == 1 and "" or "s", table.concat(an.metrics, ", "))

  local verdicts = {}
  for _, c in ipairs(comparisons) do
    if c.metric == an.primary then
      local v, sentence, kind = M.verdict(c, an)
      verdicts[#verdicts + 1] = { treatment = c.treatment, baseline = c.baseline,
        metric = c.metric, verdict = v, sentence = sentence, interval = kind }
      if kind == "t" then
        note("%s vs %s on %s: the BCa interval is undefined, the verdict uses the t interval",
          c.treatment, c.baseline, c.metric)
      end
    end
  end

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
  if s.set then
    out.command_line_overrides = json.object(s.set)
    table.insert(notes, 1, "every run was changed from the study file by --set " ..
      json.encode(json.object(s.set)))
  end
  return out
end

-- The verdicts as a short text table (for the run command's stdout).
function M.verdict_table(summary)
  local an = summary.analysis
  local lines = { string.format("verdicts on %s (%s is better; minimum effect %s; alpha %s; %s):",
    an.primary, an.better, fmt(an.min_effect), fmt(an.alpha), an.family:match("^[^:]+")) }
  local rows = { { "treatment", "baseline", "mean diff", "interval", "p_holm", "verdict" } }
  local byname = {}
  for _, c in ipairs(summary.comparisons) do
    if c.metric == an.primary then byname[c.treatment .. "\0" .. c.baseline] = c end
  end
  for _, v in ipairs(summary.verdicts) do
    local c = byname[v.treatment .. "\0" .. v.baseline]
    local ci = verdict_ci(c)
    rows[#rows + 1] = { v.treatment, v.baseline, fmt(c.mean),
      ci and string.format("[%s, %s]", fmt(ci[1]), fmt(ci[2])) or "-", fmt(c.p_holm), v.verdict }
  end
  local width = {}
  for _, r in ipairs(rows) do
    for i, x in ipairs(r) do width[i] = math.max(width[i] or 0, #x) end
  end
  for _, r in ipairs(rows) do
    local f = {}
    for i, x in ipairs(r) do f[i] = i < #r and x .. string.rep(" ", width[i] - #x) or x end
    lines[#lines + 1] = "  " .. table.concat(f, "  ")
  end
  if #summary.verdicts == 0 then lines[#lines + 1] = "  (no comparisons)" end
  return table.concat(lines, "\n") .. "\n"
end

return M
