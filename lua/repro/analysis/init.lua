-- The analysis of a study's run records: experiments/<study>/summary.json.
-- M.summarize(s, runs) gives per variant and metric the descriptive statistics, and per
-- comparison and interaction the paired tests and the verdicts of the pre-registered
-- decision rule (M.RULE, worded in M.DECISION_RULE); M.study_records reads a study's
-- records and M.summary_of summarizes them.  Beside the rule: rule 1 for a study
-- registered under it (rule1.lua), the robust companions (robust.lua), replication
-- verdicts (replication.lua), variance components (variance.lua), tasks (tasks.lua),
-- learning-rate sweeps (lrsens.lua), the guardrail's warnings (guardrail.lua) and the
-- sections of a study's extensions.  The rule: docs/DESIGN.md "Statistics and the
-- decision rule" and stats/README.md; the summary's fields: lua/experiments/README.md.
local stats = require "stats"
local json = require "repro.core.json"
local base = require "repro.core.base"
local lrsens = require "repro.analysis.lrsens"
local task_analysis = require "repro.analysis.tasks"
local guardrail = require "repro.analysis.guardrail"
local reasons = require "repro.analysis.reasons"
local records = require "repro.analysis.records"
local rule1 = require "repro.analysis.rule1"
local compare = require "repro.analysis.compare"
local robust = require "repro.analysis.robust"
local replication = require "repro.analysis.replication"
local variance = require "repro.analysis.variance"
local words = require "repro.analysis.words"
local sequential = require "repro.analysis.sequential"

local M = {}

-- From the modules the steps live in, under the names the rest of the suite knows.
M.SPIKE_FACTOR, M.masked = records.SPIKE_FACTOR, records.masked
M.parse_log, M.spikes, M.read_run = records.parse_log, records.spikes, records.read_run
M.DECISION_RULE_1, M.verdict_rule1 = rule1.DECISION_RULE_1, rule1.verdict_rule1


M.RULE = require("repro.study").RULE
M.DECISION_RULE = words.DECISION_RULE

-- The summary's `analysis`: the study's pre-registered analysis as it was applied, with
-- the tests of its Holm family and its exploratory metrics (words.family says them).
local function analysis_out(an, s, test, m_family, level)
  local secondary = an.secondary or {}
  local an_out = {
    baseline = an.baseline, primary = an.primary, better = an.better,
    min_effect = an.min_effect, alpha = an.alpha, correction = "holm",
    resamples = an.resamples, bootstrap = an.bootstrap, metrics = json.array(an.metrics),
    comparisons = json.array({}), test = test, m = m_family, holm_first_level = level,
    rule = M.RULE, registered_rule = an.registered_rule or M.RULE,
    tost = { delta = an.min_effect, alpha = an.alpha, test = test },
    power = stats.DEFAULT_POWER, seeds_from_power = s.seeds_from_power,
    secondary = #secondary > 0 and json.array({ table.unpack(secondary) }) or nil,
  }
  local tests, exploratory = {}, {}
  for _, c in ipairs(an.comparisons) do
    an_out.comparisons[#an_out.comparisons + 1] = json.array(c)
    tests[#tests + 1] = { treatment = c[1], baseline = c[2] }
  end
  if #an.interactions > 0 then an_out.interactions = json.array({}) end
  for _, it in ipairs(an.interactions) do
    an_out.interactions[#an_out.interactions + 1] = { name = it.name, a = json.array(it.a),
      b = json.array(it.b) }
    tests[#tests + 1] = { interaction = it.name }
  end
  for _, m in ipairs(an.metrics) do
    if m ~= an.primary then exploratory[#exploratory + 1] = m end
  end
  for _, m in ipairs(secondary) do exploratory[#exploratory + 1] = m end
  an_out.family_tests, an_out.exploratory_metrics = json.array(tests), json.array(exploratory)
  return an_out
end

-- The metrics analysed (analysis.metrics and secondary, a set) and those described per
-- variant: every metric the records carry and the analysed ones, sorted.
local function described_metrics(an, runs)
  local analysed = base.set_of(an.metrics)
  for _, m in ipairs(an.secondary or {}) do analysed[m] = true end
  local described = {}
  for _, r in pairs(runs) do
    for _, run in pairs(r) do
      for name in pairs(run.values) do described[name] = true end
    end
  end
  for m in pairs(analysed) do described[m] = true end
  return analysed, base.sorted_keys(described)
end

-- Per variant: descriptive statistics of every metric the records carry (so the
-- instruments reach the summary), the analysed ones always, and its diverged runs.
local function describe_variants(s, runs, note)
  local an = s.analysis
  local analysed, described = described_metrics(an, runs)
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
        note({ code = "no_value", variant = v.name, seed = seed, metrics = json.array(missing) })
      end
    end
    local metrics = {}
    for _, m in ipairs(described) do
      local values, finite_values = json.array({}), {}
      for i, seed in ipairs(s.seeds) do
        local x = runs[v.name][seed].values[m]
        values[i] = x == nil and json.null or x
        if x ~= nil then finite_values[#finite_values + 1] = x end
      end
      if #finite_values > 0 or analysed[m] then
        local sm = stats.summary(finite_values)
        metrics[m] = { n = sm.n, mean = sm.mean, sd = sm.sd, min = sm.min, max = sm.max,
          median = sm.median, values = values, seeds = json.array({ table.unpack(s.seeds) }) }
      end
    end
    per_variant[v.name] = { n_runs = #s.seeds, n_diverged = #div_seeds,
      diverged_seeds = json.array(div_seeds), metrics = metrics }
    if #div_seeds > 0 then
      note({ code = "diverged", variant = v.name, seeds = json.array({ table.unpack(div_seeds) }),
        runs = #s.seeds })
    end
  end
  return per_variant
end

-- Holm over the current rule's family (the test p and the TOST p) and over rule 1's
-- (the t-test p), in place.
local function holm_adjust(family, rule1, alpha)
  if #family > 0 then
    local adjusted, reject = compare.holm(family, function(e) return e.p end, alpha)
    local tadj, treject = compare.holm(family, function(e) return e.tost.p or 1.0 end, alpha)
    for i, e in ipairs(family) do
      e.p_holm, e.reject_holm = adjusted[i], reject[i]
      if e.tost.p then e.tost.p_holm, e.tost.equivalent_holm = tadj[i], treject[i] end
    end
  end
  if #rule1 > 0 then
    local adjusted, reject = compare.holm(rule1, function(e) return e.p_rule1 end, alpha)
    for i, e in ipairs(rule1) do e.p_holm_rule1, e.reject_holm_rule1 = adjusted[i], reject[i] end
  end
end

-- The verdicts of the comparisons on the primary metric, under the current rule and
-- rule 1 (each comparison keeps both), with a note where BCa is only descriptive.
local function verdicts_of(comparisons, an, an_out, note)
  local verdicts = {}
  local same = { ["no meaningful difference"] = "equivalent" }
  for _, c in ipairs(comparisons) do
    if c.metric == an.primary then
      local why = reasons.decide(c, an_out)
      local v = why.verdict
      c.verdict = v
      local entry = { treatment = c.treatment, baseline = c.baseline,
        metric = c.metric, verdict = v, reason = why.code, interval = c.ci_decision_kind }
      if c.p_holm_rule1 then
        local v1, _, kind1 = M.verdict_rule1(c, an)
        c.verdict_rule1 = v1
        entry.verdict_rule1, entry.interval_rule1 = v1, kind1
        entry.changed = (same[v1] or v1) ~= v
      end
      verdicts[#verdicts + 1] = entry
      if c.bca_caveat then
        note({ code = "bca_caveat", treatment = c.treatment, baseline = c.baseline,
          metric = c.metric, n = c.n })
      end
    end
  end
  return verdicts
end

-- The verdict of every interaction on the primary metric (M.interaction_verdict), set on
-- the interaction's entry and listed in the summary's interaction_verdicts.
local function interaction_verdicts_of(interactions, an)
  local verdicts = {}
  for _, e in ipairs(interactions) do
    if e.metric == an.primary then
      local why = reasons.decide(e, an)
      e.verdict = why.verdict
      verdicts[#verdicts + 1] = { name = e.name, a = e.a, b = e.b, metric = e.metric,
        verdict = why.verdict, reason = why.code, interval = e.ci_decision_kind }
    end
  end
  return verdicts
end

-- The family's entries decided on the given seeds alone (the primary metric's comparisons
-- and interactions, Holm over them, each with its verdict), for the leave-one-seed-out
-- check (analysis/robust.lua).
local function refit_family(ctx, an_out, seeds)
  local an = ctx.an
  local an2 = { metrics = { an.primary } }
  if #seeds <= stats.SIGNFLIP_EXACT_MAX then
    -- no verdict reads a bootstrap interval, and the sign flip is exact at these n (its
    -- Monte Carlo draws, above, share `resamples`): the fewest resamples do
    an2.bootstrap, an2.resamples = "monte-carlo", stats.MIN_RESAMPLES
  end
  local ctx2 = { s = setmetatable({ seeds = seeds }, { __index = ctx.s }), runs = ctx.runs,
    an = setmetatable(an2, { __index = an }), test = ctx.test,
    level = ctx.level, by_key = ctx.by_key, note = function() end }
  local fam = { family = {} }
  compare.compare_all(ctx2, fam)
  compare.interact_all(ctx2, fam)
  holm_adjust(fam.family, {}, an.alpha)
  for _, e in ipairs(fam.family) do e.verdict = reasons.decide(e, an_out).verdict end
  return fam.family
end

-- M.summarize in steps (the comparisons' in lua/repro/analysis/compare.lua).  They share
-- a context `ctx`: the study s, its runs
-- (runs[variant][seed]), its analysis an, the decision test, the Holm first-step level,
-- by_key (per variant, the seed of the run with each pairing key, run_key) and
-- note(entry), which appends a coded note (words.note says it) in the order the steps run.

-- The parts of the summary that follow from the others: variance components, the
-- command line's overrides, the extensions' sections, the sweep.
local function summary_extras(ctx, out, per_variant, comparisons)
  local s, runs, an = ctx.s, ctx.runs, ctx.an
  local vc = variance.variance_components(s, runs, comparisons, an)
  if vc then out.variance_components = vc end
  if s.set then
    out.command_line_overrides = json.object(s.set)
    table.insert(out.notes, 1, { code = "set" })
  end
  for _, name in ipairs(base.sorted_keys(s.extensions or {})) do
    if an[name] ~= nil then
      out[name] = s.extensions[name].summarize(s, runs, out)
      -- a pilot for a later study's seeds from power (lua/repro/study/init.lua)
      if out[name].pilot then out.pilot_comparisons = json.array({ out[name].pilot }) end
    end
  end
  if an.tasks then out.tasks = task_analysis.summarize(ctx) end
  if an.sweep then
    local section, pilot, outcomes = lrsens.summarize(s, runs, M.summarize)
    if section then
      out.lr_sweep, out.pilot_comparisons, out.sweep_outcomes = section, pilot, outcomes
    else
      ctx.note(pilot)
    end
  end
end

-- The variants of the verdicts whose mean validation perplexity is at or above the
-- bigram perplexity of their corpus (analysis/guardrail.lua): a list of {variant, level
-- ("unigram" or "bigram"), val_ppl, unigram_ppl, bigram_ppl, data}, in the study's
-- variant order; empty for a study without verdicts.  summary.json's `warnings`.
function M.guardrail_warnings(s, per_variant, verdicts)
  local data_of = {}
  for _, r in ipairs(s.runs or {}) do data_of[r.variant] = data_of[r.variant] or r.cfg.data end
  local out = guardrail.warnings(s.variants, per_variant, verdicts,
    function(v) return data_of[v.name] end)
  for _, w in ipairs(out) do w.text = nil end -- the words are the reader's (words.lua)
  return out
end

-- A run not trained (a sequential study's, after its comparison stopped).
local NOT_RUN = { values = {}, missing = {}, diverged = false, not_run = true }

-- The summary of a sequential study: its looks and decisions (summary.sequential, whose
-- verdicts are the study's), and the statistics of the other fields on the seeds the
-- decisions used (up to the last look reached; a variant without a run there has none).
local function summarize_sequential(s, runs)
  local done = 0
  for _, by_seed in pairs(runs) do for _ in pairs(by_seed) do done = done + 1 end end
  local seq = sequential.summarize(s, runs, done)
  local n = 0
  for _, e in ipairs(seq.comparisons) do n = math.max(n, e.n or 0) end
  local seeds, filled = { table.unpack(s.seeds, 1, n) }, {}
  for _, v in ipairs(s.variants) do
    filled[v.name] = {}
    for _, seed in ipairs(seeds) do filled[v.name][seed] = (runs[v.name] or {})[seed] or NOT_RUN end
  end
  local an = setmetatable({ sequential = false }, { __index = s.analysis })
  local out = M.summarize(setmetatable({ seeds = seeds, analysis = an }, { __index = s }), filled)
  out.sequential = seq
  out.analysis.decision = "sequential"
  local verdicts = {}
  for _, e in ipairs(seq.comparisons) do
    verdicts[#verdicts + 1] = { treatment = e.treatment, baseline = e.baseline,
      metric = e.metric, verdict = e.verdict or "inconclusive", reason = e.decision or "open",
      interval = s.analysis.sequential.test, look = e.stopped_at }
  end
  out.verdicts = json.array(verdicts)
  return out
end

-- The summary table of study `s` (lua/repro/study/init.lua) from runs[variant][seed] (as
-- read_run returns them).
function M.summarize(s, runs)
  local an = s.analysis
  if an.sequential then return summarize_sequential(s, runs) end
  local notes = {}
  local m_family = #an.comparisons + #an.interactions
  local ctx = { s = s, runs = runs, an = an, test = an.test or "t",
    level = m_family > 0 and an.alpha / m_family or an.alpha, by_key = compare.pairing(s, runs),
    note = function(n) notes[#notes + 1] = n end }
  local variants_out = {}
  for _, v in ipairs(s.variants) do
    variants_out[#variants_out + 1] = { name = v.name, overrides = json.object(v.overrides) }
  end
  local an_out = analysis_out(an, s, ctx.test, m_family, ctx.level)
  local per_variant = describe_variants(s, runs, ctx.note)

  -- entries of the current family, and of rule 1's when the study registered it
  local fam = { family = {}, rule1 = an.registered_rule == 1 and {} or nil }
  local comparisons = compare.compare_all(ctx, fam)
  local interactions = compare.interact_all(ctx, fam)
  holm_adjust(fam.family, fam.rule1 or {}, an.alpha)
  local secondary_comparisons = compare.compare_secondary(ctx, an.secondary or {})
  local verdicts = verdicts_of(comparisons, an, an_out, ctx.note)
  local interaction_verdicts = interaction_verdicts_of(interactions, an_out)
  robust.leave_one_out(fam.family, s.seeds, function(seeds)
    return refit_family(ctx, an_out, seeds)
  end)

  local out = {
    study = s.name, description = s.description, file = s.file_rel or s.file,
    seeds = json.array({ table.unpack(s.seeds) }), base = json.object(s.base),
    variants = variants_out, analysis = an_out, per_variant = per_variant,
    comparisons = json.array(comparisons), interactions = json.array(interactions),
    verdicts = json.array(verdicts), notes = json.array(notes),
  }
  if #secondary_comparisons > 0 then
    out.secondary_comparisons = json.array(secondary_comparisons)
  end
  if #interaction_verdicts > 0 then out.interaction_verdicts = json.array(interaction_verdicts) end
  out.replication = replication.summarize(an, comparisons, secondary_comparisons)
  summary_extras(ctx, out, per_variant, comparisons)
  if s.factor then out.factor = s.factor end -- declared only (lua/repro/study/init.lua)
  -- only when it applies, so summaries without it keep their bytes
  local warnings = M.guardrail_warnings(s, per_variant, verdicts)
  if #warnings > 0 then out.warnings = json.array(warnings) end
  return out
end

-- The records of every run of the validated study s under its directory dir (the
-- analysis needs them all, not only the runs a command selected): variant -> seed ->
-- run (M.read_run, with its provenance: record/set.lua assess), the labels of the runs
-- not done, a warning for each record the record reader refused (lua/repro/record/reader.lua:
-- a symbolic link on its way from dir, failing checksums, none) and one for each path
-- that is not part of the study, and the counts {records, adopted, outside}
-- (M.count_text words them).  The records are the study's record set
-- (record/set.lua: its variants' canonical seed folders, nothing else).  A run is done
-- when the reader accepts its record and its config.json is the run's config (record.status's
-- "done", checked once).
function M.study_records(s, dir, who)
  local record = require "repro.record"
  local reader = require "repro.record.reader"
  local set = require "repro.record.set"
  local study = require "repro.study"
  who = who or "repro analyze"
  local metrics = study.metric_names()
  -- the metrics computed from log.csv on request, for the study that names them
  for _, field in ipairs({ "metrics", "secondary" }) do
    for _, m in ipairs(s.analysis[field] or {}) do
      if study.is_requested_metric(m) then metrics[#metrics + 1] = m end
    end
  end
  local design = assert(set.design(s))
  local ok, bad = set.read(design, dir)
  local by_dir = {}
  for _, m in ipairs(ok) do by_dir[m.dir] = m end
  local levels = set.assess(ok, dir:match("^(.*)/[^/]+$") or ".")
  local records, missing, warnings = {}, {}, {}
  local counts = { records = 0, adopted = 0, outside = 0 }
  local refused = {}
  for _, b in ipairs(bad) do refused[b.dir] = b end
  for _, r in ipairs(s.runs) do
    local rdir = dir .. "/" .. r.rel
    records[r.variant] = records[r.variant] or {}
    local m = by_dir[rdir]
    local rec = m and reader.load(rdir, m.kept)
    if rec and rec.config_text == record.config_text(r.cfg) then
      local run = assert(M.read_run(rdir, metrics, rec))
      run.provenance = levels[rdir]
      records[r.variant][r.seed] = run
      counts.records = counts.records + 1
      if run.provenance.level == "adopted" then counts.adopted = counts.adopted + 1 end
    else
      missing[#missing + 1] = r.label
      local b = refused[rdir]
      if b then warnings[#warnings + 1] = reader.warning(who, rdir, b.state, b.why) end
    end
  end
  for _, o in ipairs(set.outsiders(design, dir)) do
    counts.outside = counts.outside + 1
    warnings[#warnings + 1] = who .. ": " .. set.outside_text(s.name, o)
  end
  return records, missing, warnings, counts
end

-- The summary's provenance section: {adopted = {{variant, seed, why_adopted}}} in the study's run
-- order, or nil when every record is vouched for (committed or made here), so that
-- summaries of such records keep their bytes.  Codes and names only
-- (analysis/words.lua words them).
function M.provenance_of(s, records)
  local adopted = {}
  for _, r in ipairs(s.runs) do
    local run = records[r.variant] and records[r.variant][r.seed]
    local p = run and run.provenance
    if p and p.level == "adopted" then
      adopted[#adopted + 1] = { variant = r.variant, seed = r.seed, why_adopted = p.why }
    end
  end
  if #adopted == 0 then return nil end
  return { adopted = json.array(adopted) }
end

-- The summary of study s from its records (M.study_records) in dir, with the digest of
-- the verified records beside it (`records_sha256`, over the study's record set): the
-- table and its text, exactly as `bin/repro analyze` writes summary.json.
function M.summary_of(s, dir, records)
  local summary = M.summarize(s, records)
  summary.provenance = M.provenance_of(s, records)
  local record = require "repro.record"
  local set = require "repro.record.set"
  local inputs = {}
  summary.records_sha256 = set.digest(dir, assert(set.design(s)), inputs)
  summary.inputs_sha256 = record.inputs_digest(dir, s.file, summary.command_line_overrides,
    { digest = summary.records_sha256, inputs = inputs })
  return summary, json.pretty(summary)
end

return M
