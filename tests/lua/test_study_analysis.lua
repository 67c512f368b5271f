-- The analysis on synthetic run values (no training): derived metrics from log.csv, the
-- decision rule (the current one and rule 1), diverged runs left out with a note, Holm
-- over the primary metric's family with the other metrics exploratory, TOST, MDE at
-- alpha / m, probability of improvement, the sign-flip test, variance components of an
-- init_seed x data_seed grid, and a summary that encodes as JSON (no NaN anywhere).
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local analysis = require "repro.analysis"
local json = require "repro.core.json"
local study = require "repro.study"
local stats = require "stats"
local t = check.new("test_study_analysis")
local dir = check.tmpdir()

-- log.csv by its header, whatever the column order; empty and non-finite fields
local log = analysis.parse_log("step,loss,extra\n0,4,\n1,3,7\n2,2,\n3,3.5,\n4,2.1,\n5,nan,\n")
t:eq(log.n, 6, "parse_log: rows")
t:eq(log.data.loss[4], 3.5, "parse_log: loss by name")
t:eq(log.data.extra[2], 7, "parse_log: a later column")
t:eq(log.data.extra[1], nil, "parse_log: an empty field is absent")
t:ok(log.data.loss[6] ~= log.data.loss[6], "parse_log: nan")
local n, worst = analysis.spikes(log.data.loss, log.n)
t:eq(n, 2, "n_spikes: 3.5 > 1.5 x 2 and the non-finite step")
t:near(worst, 1.75, 1e-15, "max_loss_ratio: 3.5 / 2")
n, worst = analysis.spikes({ 4, 3, 2.5, 2.4 }, 4)
t:ok(n == 0 and math.abs(worst - 2.4 / 2.5) < 1e-15, "no spikes in a falling loss")

-- rule 1, kept exactly (verdict_rule1)
local an = { better = "lower", min_effect = 0.1, alpha = 0.05 }
local function c(mean, lo, hi, p, extra)
  local e = { treatment = "ln", baseline = "none", metric = "val_loss", mean = mean,
    ci_bca = { lo, hi }, p_holm_rule1 = p, n = 5, flags = {} }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end
local V1 = analysis.verdict_rule1
t:eq(V1(c(-0.3, -0.4, -0.2, 0.01), an), "better", "rule 1: lower, significant, big: better")
t:eq(V1(c(0.3, 0.2, 0.4, 0.01), an), "worse", "rule 1: higher when lower is better: worse")
t:eq(V1(c(0.01, -0.05, 0.06, 0.5), an), "no meaningful difference", "rule 1: CI within +-min_effect")
t:eq(V1(c(0.01, -0.05, 0.06, 0.001), an), "no meaningful difference",
  "rule 1: significant but negligible: no meaningful difference")
local v, sentence = V1(c(-0.2, -0.5, 0.1, 0.2, { mde = 0.5 }), an)
t:eq(v, "inconclusive", "rule 1: wide CI: inconclusive")
t:ok(sentence:find("underpowered", 1, true) and sentence:find("0.5", 1, true),
  "rule 1: inconclusive says underpowered with the MDE: " .. sentence)
v, sentence = V1(c(-0.05, -0.12, -0.01, 0.01), an)
t:ok(v == "inconclusive" and sentence:find("smaller than the minimum effect", 1, true),
  "rule 1: significant, small, CI beyond min_effect: " .. sentence)
t:eq(V1(c(-0.3, -0.4, -0.2, 0.2), an), "inconclusive", "rule 1: big but p above alpha")
local tc = c(-0.3, 0, 0, 0.01)
tc.ci_bca, tc.ci_t = nil, { -0.45, -0.15 }
local kind
v, sentence, kind = V1(tc, an)
t:ok(v == "better" and kind == "t" and sentence:find("BCa undefined", 1, true),
  "rule 1: t interval when BCa is undefined: " .. sentence)
t:ok(sentence:find("95 %", 1, true), "rule 1: the sentence states the level")

-- the current rule: decision interval of the test, TOST for equivalence, MDE at alpha / m
local an2 = { better = "lower", min_effect = 0.1, alpha = 0.05, test = "t", m = 3 }
local function c2(mean, lo, hi, p, tost_p, extra)
  local e = { treatment = "ln", baseline = "none", metric = "val_loss", mean = mean, n = 5,
    ci_decision = lo and { lo, hi } or nil, ci_decision_kind = "t", p_holm = p,
    tost = { p_holm = tost_p }, ci_bca = { -9, 9 }, flags = {},
    mde_adjusted = { level = 0.05 / 3, power = 0.8, value = 0.05 } }
  for k, x in pairs(extra or {}) do e[k] = x end
  return e
end
local V = require("repro.analysis.words").verdict
t:eq(V(c2(-0.3, -0.4, -0.2, 0.01, 1), an2), "better", "significant, big, better side: better")
t:eq(V(c2(0.3, 0.2, 0.4, 0.01, 1), an2), "worse", "worse side: worse")
t:eq(V(c2(-0.3, -0.4, -0.2, 0.2, 1), an2), "inconclusive", "Holm p above alpha: inconclusive")
t:eq(V(c2(0.01, -0.05, 0.06, 0.5, 0.01), an2), "equivalent", "TOST Holm p <= alpha: equivalent")
v, sentence = V(c2(0.01, -0.05, 0.06, 0.5, 0.2), an2)
t:ok(v == "inconclusive" and sentence:find("TOST", 1, true),
  "an interval inside +-delta without a TOST is not equivalent: " .. sentence)
t:eq(V(c2(0.01, -0.05, 0.06, 0.001, 0.01), an2), "equivalent",
  "significant but smaller than min_effect, TOST passes: equivalent")
v, sentence = V(c2(-0.2, -0.5, 0.1, 0.2, 0.5, { mde_adjusted = { level = 0.05 / 3,
  power = 0.8, value = 0.7 } }), an2)
t:ok(v == "inconclusive" and sentence:find("underpowered", 1, true) and
  sentence:find("0.7", 1, true) and sentence:find("0.01667", 1, true),
  "underpowered at the Holm first-step level: " .. sentence)
t:ok(sentence:find("t interval", 1, true) and sentence:find("95 %", 1, true),
  "the sentence names the decision interval: " .. sentence)
v, sentence = V(c2(-0.3, nil, nil, 1, nil, { ci_decision_kind = "signflip",
  test_cannot_reach = true, mde_adjusted = { reason = "cannot_reach", test = "signflip",
  level = 0.05 / 3, needs = 7 } }), an2)
t:ok(v == "inconclusive" and sentence:find("cannot reach", 1, true) and
  sentence:find("no 95 % interval", 1, true), "sign flip that cannot reject: " .. sentence)
t:eq(V({ treatment = "ln", baseline = "none", metric = "val_loss", n = 0, p_holm = 1 }, an2),
  "inconclusive", "no pairs: inconclusive")

-- a summary from synthetic records
check.write(dir .. "/corpus.txt", string.rep("abc def ghi.\n", 300))
check.write(dir .. "/syn.lua", [[
return { name = "syn", description = "synthetic",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 8,
           warmup = 2, data = "]] .. dir .. [[/corpus.txt" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" },
               { name = "rmsnorm", embed_norm = "rmsnorm" } },
  seeds = { 1, 2, 3, 4 },
  analysis = { baseline = "none", metrics = { "val_loss", "n_spikes", "diverged" },
    primary = "val_loss", better = "lower", min_effect = 0.05, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t", COMPARISONS
    interactions = { { name = "ln minus rms", a = { "layernorm", "none" }, b = { "rmsnorm", "none" } } } } }
]])
local syn = assert(fs.read(dir .. "/syn.lua"))
check.write(dir .. "/syn.lua", (syn:gsub("COMPARISONS", "")))
local s = study.load(dir .. "/syn.lua")
t:eq(#s.analysis.comparisons, 2, "default comparisons: each variant vs the baseline, no other")
check.write(dir .. "/syn.lua", (syn:gsub("COMPARISONS", "comparisons = { { \"layernorm\", " ..
  "\"none\" }, { \"rmsnorm\", \"none\" }, { \"layernorm\", \"rmsnorm\" } },")))
s = study.load(dir .. "/syn.lua")
t:eq(#s.runs, 12, "12 runs")
t:eq(#s.analysis.comparisons, 3, "the study's own comparisons")
local vals = {
  none = { 2.00, 2.10, 2.05, 2.20 },
  layernorm = { 1.80, 1.95, 1.87, 1.98 },
  rmsnorm = { 1.99, 2.12, 2.03, 2.21 },
}
local runs = {}
for name, list in pairs(vals) do
  runs[name] = {}
  for i, x in ipairs(list) do
    runs[name][i] = { diverged = false, missing = {},
      values = { val_loss = x, n_spikes = i == 2 and 1 or 0, diverged = 0 } }
  end
end
runs.layernorm[2] = { diverged = true, missing = {}, values = { n_spikes = 4, diverged = 1 } }
local sum = analysis.summarize(s, runs)
local ok, text = pcall(json.pretty, sum)
t:ok(ok, "summary encodes as JSON (no NaN): " .. tostring(text))
local ln = sum.per_variant.layernorm
t:eq(ln.n_diverged, 1, "diverged count")
t:eq(ln.diverged_seeds[1], 2, "diverged seed")
t:eq(ln.metrics.val_loss.values[2], json.null, "diverged value is null")
t:eq(ln.metrics.val_loss.n, 3, "diverged run left out of n")
t:near(ln.metrics.val_loss.mean, (1.80 + 1.87 + 1.98) / 3, 1e-14, "mean without the diverged run")
t:eq(ln.metrics.diverged.mean, 0.25, "the diverged metric keeps every run")
t:eq(ln.metrics.n_spikes.values[2], 4, "n_spikes is defined for a diverged run")
local words = require "repro.analysis.words"
local found = false
local notes = words.notes(sum)
for _, note in ipairs(notes) do
  if note:find("layernorm: 1 of 4 runs diverged (seed 2)", 1, true) then found = true end
end
t:ok(found, "a note says which runs diverged: " .. table.concat(notes, " | "))
t:eq(#sum.comparisons, 9, "3 comparisons x 3 metrics")
t:eq(#sum.interactions, 3, "1 interaction x 3 metrics")
t:ok(words.family(sum.analysis):find("4 tests of the primary metric", 1, true) and
  sum.analysis.m == 4 and math.abs(sum.analysis.holm_first_level - 0.05 / 4) < 1e-15,
  "the family is the primary metric's 3 comparisons and 1 interaction: " ..
  words.family(sum.analysis))
t:ok(sum.analysis.test == "t" and sum.analysis.rule == study.RULE,
  "the summary states the test and the rule")
t:ok(words.family_rule1(sum.analysis) == nil and not text:find("rule1", 1, true),
  "a study that did not register rule 1 gets none of it")
local cmp, spikes
for _, e in ipairs(sum.comparisons) do
  if e.treatment == "layernorm" and e.baseline == "none" and e.metric == "val_loss" then cmp = e end
  if e.treatment == "layernorm" and e.baseline == "none" and e.metric == "n_spikes" then spikes = e end
end
t:eq(cmp.n, 3, "the comparison uses seeds where both runs are finite")
t:eq(table.concat(cmp.seeds, ","), "1,3,4", "its seeds")
t:near(cmp.mean, ((1.80 - 2.00) + (1.87 - 2.05) + (1.98 - 2.20)) / 3, 1e-12,
  "mean difference = treatment - baseline")
t:ok(cmp.family == "primary" and cmp.p_holm >= cmp.p and type(cmp.reject_holm) == "boolean",
  "a family comparison has Holm fields")
t:ok(cmp.p == cmp.p_t and cmp.ci_decision_kind == "t" and cmp.ci_decision[1] == cmp.ci_t[1],
  "t test: p and decision interval are the t-test's")
t:ok(cmp.ci_bca and cmp.bca_caveat == true, "BCa kept, flagged below n = " .. stats.BCA_CAVEAT_N)
local a_, b_ = {}, {}
for i = 1, #cmp.a do a_[i], b_[i] = cmp.a[i], cmp.b[i] end
local tost = stats.tost(a_, b_, { delta = 0.05, alpha = 0.05 })
t:ok(cmp.tost and cmp.tost.p == tost.p and cmp.tost.ci[1] == tost.ci[1] and
  cmp.tost.p_holm >= cmp.tost.p and cmp.tost.delta == 0.05, "TOST at delta = min_effect")
local md = stats.mde(3, { alpha = 0.05 / 4, power = stats.DEFAULT_POWER, sd = cmp.sd })
t:ok(cmp.mde_adjusted.value == md.mde and cmp.mde_adjusted.level == 0.05 / 4 and
  cmp.mde_adjusted.value > cmp.mde, "MDE at alpha / m, larger than the unadjusted one")
t:ok(cmp.improvement.n == 3 and cmp.improvement.better == 3 and cmp.improvement.share == 1 and
  cmp.improvement.ci[2] == 1, "probability of improvement with its interval")
t:ok(spikes.exploratory == true and spikes.family == "exploratory" and spikes.p_holm == nil and
  spikes.tost == nil and spikes.p, "another metric: exploratory, unadjusted p, no Holm p")
local inter = sum.interactions[1]
t:ok(inter.name == "ln minus rms" and inter.n == 3 and inter.p_holm and inter.tost and
  inter.improvement, "interaction on the primary metric: in the family")
t:near(inter.diff_a[1] - inter.diff_b[1], (1.80 - 2.00) - (1.99 - 2.00), 1e-12,
  "interaction: difference of differences")
t:ok(sum.interactions[2].exploratory == true and sum.interactions[2].p_holm == nil,
  "interaction on another metric: exploratory")
t:eq(#sum.verdicts, 3, "one verdict per comparison on the primary metric")
for _, e in ipairs(sum.verdicts) do
  t:ok(e.metric == "val_loss" and e.verdict and words.sentence(e, sum):find(e.treatment, 1, true) and
    e.verdict_rule1 == nil and e.changed == nil, "verdict with a sentence, no rule 1's")
end

-- the verdict and its reason are decided once (analysis/reasons.lua): a code with the
-- numbers behind it, which the summary's verdict and reason agree with
local reasons = require "repro.analysis.reasons"
for _, v in ipairs(sum.verdicts) do
  for _, c in ipairs(sum.comparisons) do
    if c.treatment == v.treatment and c.baseline == v.baseline and c.metric == v.metric then
      local why = reasons.decide(c, sum.analysis)
      t:ok(why.verdict == v.verdict and why.code == v.reason and
        type(words.reason(v, c, sum.analysis)) == "string", "decide agrees with the summary: " ..
        v.treatment .. " " .. why.code)
    end
  end
end
t:eq(reasons.decide({ n = 0, p_holm = 1 }, sum.analysis).code, "no_pairs", "no pairs: its code")

-- the same study registered under rule 1: rule 1's family, Holm p and verdicts beside
s.analysis.registered_rule = 1
local sum1 = analysis.summarize(s, runs)
t:ok(words.family_rule1(sum1.analysis):find("12 tests", 1, true),
  "rule 1's family: " .. words.family_rule1(sum1.analysis))
for _, e in ipairs(sum1.comparisons) do
  t:ok(e.p_holm_rule1 and e.p_rule1, "rule 1's Holm p kept on every metric: " .. e.metric)
end
for _, e in ipairs(sum1.verdicts) do
  t:ok(e.verdict_rule1 and e.interval_rule1 and type(e.changed) == "boolean",
    "a verdict carries rule 1's")
end
s.analysis.registered_rule = nil
t:ok(not text:find("nan", 1, true) and not text:find("inf", 1, true), "no non-finite numbers")
t:eq(sum.variance_components, nil, "no init x data crossing: no variance components")

-- secondary metrics: compared outside the Holm family; every metric described per variant
s.analysis.secondary = { "brier" }
for name, list in pairs(runs) do
  for i, r in ipairs(list) do
    if not r.diverged then r.values.brier = 0.9 + 0.01 * i + (name == "none" and 0.001 * i * i or 0) end
    r.values.cos_first = 0.1 * i
  end
end
local sum2 = analysis.summarize(s, runs)
t:eq(#sum2.comparisons, 9, "secondary metrics do not enter the comparisons")
t:ok(words.family(sum2.analysis):find("4 tests", 1, true), "the family is unchanged")
t:eq(#sum2.secondary_comparisons, 3, "one secondary comparison per pair")
local sc = sum2.secondary_comparisons[1]
t:ok(sc.exploratory == true and sc.p_t and sc.ci_bca and sc.p_holm == nil and sc.p_holm_rule1 == nil,
  "secondary: paired statistics, marked exploratory, no Holm p")
t:eq(sum2.analysis.secondary[1], "brier", "the summary lists the secondary metrics")
t:ok(sum2.per_variant.none.metrics.cos_first and sum2.per_variant.none.metrics.cos_first.n == 4,
  "a metric outside every list is still described per variant")

-- the sign-flip test: its p, its inversion interval, its TOST
s.analysis.test = "signflip"
local sum3 = analysis.summarize(s, runs)
local sf
for _, e in ipairs(sum3.comparisons) do
  if e.treatment == "rmsnorm" and e.baseline == "none" and e.metric == "val_loss" then sf = e end
end
t:ok(sf.p == sf.p_signflip and sf.ci_decision_kind == "signflip" and sf.ci_decision == nil and
  sf.ci_decision_unbounded and sf.tost.test == "signflip" and sf.mde_adjusted.value == nil and
  words.mde_reason(sf.mde_adjusted, sf.n):find("cannot reach", 1, true),
  "sign flip at n = 4: its p, no interval, no MDE: " ..
  tostring(words.mde_reason(sf.mde_adjusted, sf.n)))
t:eq(sum3.analysis.test, "signflip", "the summary names the test")
s.analysis.test = "t"

-- init_seed x data_seed: a 2 x 2 grid per variant, pairing by (init_seed, data_seed)
local grid = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 2, 2 } }
local runs4 = {}
for name, list in pairs(vals) do
  runs4[name] = {}
  for i, x in ipairs(list) do
    runs4[name][i] = { diverged = false, missing = {}, init_seed = grid[i][1],
      data_seed = grid[i][2], values = { val_loss = x, n_spikes = 0, diverged = 0 } }
  end
end
local sum4 = analysis.summarize(s, runs4)
local vc = sum4.variance_components
t:ok(vc and vc.method == "anova2", "crossed seeds: variance components")
local y = { { vals.none[1], vals.none[2] }, { vals.none[3], vals.none[4] } }
local ref = stats.anova2(y)
local got = vc.by_variant.none.val_loss
t:ok(got.var_init == ref.var_row and got.var_data == ref.var_col and
  got.var_resid == ref.var_resid and got.share_init == ref.share_row,
  "components of none/val_loss = stats.anova2 of its grid")
t:ok(#vc.by_comparison == 3 and vc.by_comparison[1].var_init ~= nil,
  "components of each primary comparison's differences")
local ok4, text4 = pcall(json.pretty, sum4)
t:ok(ok4 and not text4:find("nan", 1, true), "summary with components encodes as JSON")

check.rmtree(dir)
t:done()
