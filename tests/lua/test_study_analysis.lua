-- The analysis on synthetic run values (no training): derived metrics from log.csv, the
-- decision rule, diverged runs left out with a note, Holm over the whole family, and a
-- summary that encodes as JSON (no NaN anywhere).
local check = require "repro.check"
local analysis = require "repro.analysis"
local json = require "repro.json"
local study = require "repro.study"
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

-- the decision rule
local an = { better = "lower", min_effect = 0.1, alpha = 0.05 }
local function c(mean, lo, hi, p, extra)
  local e = { treatment = "ln", baseline = "none", metric = "val_loss", mean = mean,
    ci_bca = { lo, hi }, p_holm = p, n = 5, flags = {} }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end
t:eq(analysis.verdict(c(-0.3, -0.4, -0.2, 0.01), an), "better", "lower, significant, big: better")
t:eq(analysis.verdict(c(0.3, 0.2, 0.4, 0.01), an), "worse", "higher when lower is better: worse")
t:eq(analysis.verdict(c(0.01, -0.05, 0.06, 0.5), an), "no meaningful difference",
  "CI within +-min_effect")
t:eq(analysis.verdict(c(0.01, -0.05, 0.06, 0.001), an), "no meaningful difference",
  "significant but negligible: no meaningful difference")
local v, sentence = analysis.verdict(c(-0.2, -0.5, 0.1, 0.2, { mde = 0.5 }), an)
t:eq(v, "inconclusive", "wide CI: inconclusive")
t:ok(sentence:find("underpowered", 1, true) and sentence:find("0.5", 1, true),
  "inconclusive says underpowered with the MDE: " .. sentence)
v, sentence = analysis.verdict(c(-0.05, -0.12, -0.01, 0.01), an)
t:ok(v == "inconclusive" and sentence:find("smaller than the minimum effect", 1, true),
  "significant, small, CI beyond min_effect: " .. sentence)
t:eq(analysis.verdict(c(-0.3, -0.4, -0.2, 0.2), an), "inconclusive", "big but p above alpha")
t:eq(analysis.verdict(c(0.3, 0.2, 0.4, 0.01), { better = "higher", min_effect = 0.1, alpha = 0.05 }),
  "better", "higher is better")
local tc = c(-0.3, 0, 0, 0.01)
tc.ci_bca, tc.ci_t = nil, { -0.45, -0.15 }
local kind
v, sentence, kind = analysis.verdict(tc, an)
t:ok(v == "better" and kind == "t" and sentence:find("BCa undefined", 1, true),
  "t interval when BCa is undefined: " .. sentence)
v = analysis.verdict({ treatment = "ln", baseline = "none", metric = "val_loss", n = 1,
  mean = -0.3, p_holm = 1, flags = { small_n = true } }, an)
t:eq(v, "inconclusive", "n = 1: inconclusive")
t:ok(sentence:find("95 %", 1, true), "sentence states the level")

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
    correction = "holm", resamples = 1000,
    interactions = { { name = "ln minus rms", a = { "layernorm", "none" }, b = { "rmsnorm", "none" } } } } }
]])
local s = study.load(dir .. "/syn.lua")
t:eq(#s.runs, 12, "12 runs")
t:eq(#s.analysis.comparisons, 3, "default comparisons: each vs baseline, layernorm vs rmsnorm")
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
local found = false
for _, note in ipairs(sum.notes) do
  if note:find("layernorm: 1 of 4 runs diverged (seed 2)", 1, true) then found = true end
end
t:ok(found, "a note says which runs diverged: " .. table.concat(sum.notes, " | "))
t:eq(#sum.comparisons, 9, "3 comparisons x 3 metrics")
t:eq(#sum.interactions, 3, "1 interaction x 3 metrics")
t:ok(sum.analysis.family:find("12 tests", 1, true), "family names its size: " .. sum.analysis.family)
local cmp
for _, e in ipairs(sum.comparisons) do
  if e.treatment == "layernorm" and e.baseline == "none" and e.metric == "val_loss" then cmp = e end
end
t:eq(cmp.n, 3, "the comparison uses seeds where both runs are finite")
t:eq(table.concat(cmp.seeds, ","), "1,3,4", "its seeds")
t:near(cmp.mean, ((1.80 - 2.00) + (1.87 - 2.05) + (1.98 - 2.20)) / 3, 1e-12,
  "mean difference = treatment - baseline")
t:ok(cmp.p_holm >= cmp.p and type(cmp.reject_holm) == "boolean", "Holm fields")
t:ok(cmp.ci_bca and cmp.d_z and cmp.p_signflip and cmp.mde_d_z and cmp.relative_change,
  "the stats.paired fields are there")
local inter = sum.interactions[1]
t:ok(inter.name == "ln minus rms" and inter.n == 3 and inter.p_holm, "interaction fields")
t:near(inter.diff_a[1] - inter.diff_b[1], (1.80 - 2.00) - (1.99 - 2.00), 1e-12,
  "interaction: difference of differences")
t:eq(#sum.verdicts, 3, "one verdict per comparison on the primary metric")
for _, e in ipairs(sum.verdicts) do
  t:ok(e.metric == "val_loss" and e.verdict and e.sentence:find(e.treatment, 1, true),
    "verdict with a sentence")
end
t:ok(not text:find("nan", 1, true) and not text:find("inf", 1, true), "no non-finite numbers")

-- secondary metrics: compared outside the Holm family; every metric described per variant
s.analysis.secondary = { "brier" }
for name, list in pairs(runs) do
  for i, r in ipairs(list) do
    if not r.diverged then r.values.brier = 0.9 + 0.01 * i + (name == "none" and 0.001 * i * i or 0) end
    r.values.cos_first = 0.1 * i
  end
end
local sum2 = analysis.summarize(s, runs)
t:eq(#sum2.comparisons, 9, "secondary metrics do not enter the Holm family")
t:ok(sum2.analysis.family:find("12 tests", 1, true), "the family is unchanged")
t:eq(#sum2.secondary_comparisons, 3, "one secondary comparison per pair")
local sc = sum2.secondary_comparisons[1]
t:ok(sc.exploratory == true and sc.p_t and sc.ci_bca and sc.p_holm == nil,
  "secondary: paired statistics, marked exploratory, no Holm p")
t:eq(sum2.analysis.secondary[1], "brier", "the summary lists the secondary metrics")
t:ok(sum2.per_variant.none.metrics.cos_first and sum2.per_variant.none.metrics.cos_first.n == 4,
  "a metric outside every list is still described per variant")

check.rmtree(dir)
t:done()
