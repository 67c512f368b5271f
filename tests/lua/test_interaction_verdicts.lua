-- Every interaction on the primary metric gets a verdict under the decision
-- rule (Holm p <= alpha, interval on one side of 0, |mean| >= min_effect; TOST for
-- equivalence), a side of an interaction may list several pairs (the mean of their
-- paired differences), and the metrics computed from log.csv on request (clip_fraction,
-- val_loss_after_<k>) are defined, validated and read.  Synthetic values, no training.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local analysis = require "repro.analysis"
local reasons = require "repro.analysis.reasons"
local words = require "repro.analysis.words"
local json = require "repro.core.json"
local study = require "repro.study"
local t = check.new("test_interaction_verdicts")
local dir = check.tmpdir()

check.write(dir .. "/corpus.txt", string.rep("abc def ghi.\n", 300))
local STUDY = [[
return { name = "syn", description = "synthetic",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 8,
           warmup = 2, data = "]] .. dir .. [[/corpus.txt" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" },
               { name = "rmsnorm", embed_norm = "rmsnorm" },
               { name = "rms2", embed_norm = "rmsnorm", lr = 4e-4 } },
  seeds = { 1, 2, 3, 4, 5, 6 },
  analysis = { baseline = "none", metrics = { "val_loss", "n_spikes" },
    primary = "val_loss", better = "lower", min_effect = 0.05, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t",
    comparisons = { { "layernorm", "none" } },
    INTERACTIONS } }
]]
-- A load error's text (a user error is a table with a message).
local function msg(err) return type(err) == "table" and tostring(err.message) or tostring(err) end

local function load(interactions)
  check.write(dir .. "/syn.lua", (STUDY:gsub("INTERACTIONS", interactions)))
  return study.load(dir .. "/syn.lua")
end
local s = load([[interactions = {
      { name = "ln minus rms", a = { "layernorm", "none" }, b = { "rmsnorm", "none" } },
      { name = "rms minus rms2", a = { "rmsnorm", "none" }, b = { "rms2", "none" } },
      { name = "ln and rms minus rms2", a = { { "layernorm", "none" }, { "rmsnorm", "none" } },
        b = { { "rms2", "none" } } } }]])
t:eq(#s.analysis.interactions, 3, "three interactions, one of them with a list of pairs")

local none = { 2.00, 2.10, 2.05, 2.20, 2.15, 2.08 }
local jitter = { 0.004, -0.003, 0.002, -0.004, 0.001, 0.0 }
local vals = { none = {}, layernorm = {}, rmsnorm = {}, rms2 = {} }
for i, x in ipairs(none) do
  vals.none[i] = x
  vals.layernorm[i] = x - 0.30 + jitter[i]
  vals.rmsnorm[i] = x - 0.01 - jitter[i]
  vals.rms2[i] = x - 0.01 - jitter[i] + jitter[7 - i] / 4
end
local runs = {}
for name, list in pairs(vals) do
  runs[name] = {}
  for i, x in ipairs(list) do
    runs[name][i] = { diverged = false, missing = {}, values = { val_loss = x, n_spikes = 0 } }
  end
end
local sum = analysis.summarize(s, runs)
t:ok(pcall(json.pretty, sum), "the summary encodes as JSON")
t:eq(#(sum.interaction_verdicts or {}), 3, "one verdict per interaction on the primary metric")
local by = {}
for _, e in ipairs(sum.interactions) do
  if e.metric == "val_loss" then by[e.name] = e end
  if e.metric ~= "val_loss" then
    t:ok(e.verdict == nil and e.exploratory, e.name .. " on " .. e.metric ..
      ": exploratory, no verdict")
  end
end
t:eq(by["ln minus rms"].verdict, "better",
  "LayerNorm's effect 0.29 nats more favourable than RMSNorm's: better")
t:eq(by["rms minus rms2"].verdict, "equivalent",
  "two effects within +-min_effect by the TOST: equivalent")
for _, v in ipairs(sum.interaction_verdicts or {}) do
  local e = by[v.name]
  local why = reasons.decide(e, sum.analysis)
  t:ok(e and v.verdict == e.verdict and v.verdict == why.verdict and
    words.sentence(v, sum):find(v.name, 1, true) and
    words.sentence(v, sum):find(v.verdict, 1, true) and v.interval == e.ci_decision_kind,
    "verdict of '" .. v.name .. "' is reasons.decide's, with a sentence: " ..
    words.sentence(v, sum))
end
local ln_rms = by["ln minus rms"]
t:ok(ln_rms.p_holm <= 0.05 and ln_rms.ci_decision[2] < 0 and math.abs(ln_rms.mean) >= 0.05,
  "better: Holm p <= alpha, the interval below 0, |mean| >= min_effect")
local mix = by["ln and rms minus rms2"]
local exact = true
for i = 1, 6 do
  local a = ((vals.layernorm[i] - vals.none[i]) + (vals.rmsnorm[i] - vals.none[i])) / 2
  local b = vals.rms2[i] - vals.none[i]
  exact = exact and math.abs(mix.diff_a[i] - a) < 1e-12 and math.abs(mix.diff_b[i] - b) < 1e-12
end
t:ok(exact and mix.n == 6, "a side listing pairs: the mean of their paired differences")
t:ok(mix.verdict == "better" and mix.a[1][1] == "layernorm",
  "the list of pairs is kept in the entry: " .. tostring(mix.verdict))
t:eq(sum.analysis.m, 4, "Holm over 1 comparison and 3 interactions")
-- the terminal's interactions table: a row per verdict, its verdict in the last column
local itab = require("repro.report.study_tables").verdicts_table(sum, sum.analysis, true)
t:ok(itab.head[#itab.head] == "verdict" and #itab.rows == 3 and
  itab.rows[1][#itab.head] == sum.interaction_verdicts[1].verdict,
  "the interactions table ends with each row's verdict: " .. table.concat(itab.head, ", "))

-- a study without interactions has no interaction_verdicts (its summary keeps its bytes)
local s0 = load("interactions = {}")
local sum0 = analysis.summarize(s0, runs)
t:ok(sum0.interaction_verdicts == nil, "no interactions: no interaction_verdicts field")

-- a side that is neither a pair nor a list of pairs is refused, naming it
local ok, err = pcall(load, [[interactions = { { name = "x", a = { { "layernorm" } },
  b = { "rmsnorm", "none" } } }]])
t:ok(not ok and msg(err):find("interactions[1].a[1]", 1, true),
  "a malformed pair in a list is refused by its path: " .. msg(err))

-- the metrics computed from log.csv on request
t:ok(study.is_requested_metric("clip_fraction") and study.is_requested_metric("val_loss_after_30")
  and not study.is_requested_metric("val_loss_after_0") and
  not study.is_requested_metric("val_loss_after_x") and
  not study.is_requested_metric("clip_fractions"), "requested metric names")
local s2 = load("interactions = {}")
ok, err = pcall(function()
  check.write(dir .. "/syn.lua", (STUDY:gsub("INTERACTIONS", "interactions = {}"):gsub(
    '"n_spikes" }', '"n_spikes", "clip_fraction", "val_loss_after_4" }')))
  return study.load(dir .. "/syn.lua")
end)
t:ok(ok and s2, "a study may name clip_fraction and val_loss_after_<k>: " .. msg(err))
ok, err = pcall(function()
  check.write(dir .. "/syn.lua", (STUDY:gsub("INTERACTIONS", "interactions = {}"):gsub(
    '"n_spikes" }', '"n_spikes", "val_loss_after_0" }')))
  return study.load(dir .. "/syn.lua")
end)
t:ok(not ok and msg(err):find("val_loss_after_0", 1, true),
  "val_loss_after_0 is an unknown metric: " .. msg(err))

local rdir = dir .. "/run"
fs.mkdir_p(rdir)
check.write(rdir .. "/config.json", '{"grad_clip": 1, "seed": 1}')
check.write(rdir .. "/metrics.json", '{"val_loss": 2.5}')
check.write(rdir .. "/log.csv", "step,lr,loss,grad_norm,d_val_loss\n" ..
  "0,1e-3,4.0,5.0,\n1,1e-3,3.5,0.9,3.4\n2,1e-3,3.0,1.5,\n3,1e-3,2.8,1.0,2.9\n")
local r = analysis.read_run(rdir, { "val_loss", "clip_fraction", "val_loss_after_2",
  "val_loss_after_4", "val_loss_after_3" })
t:eq(r.values.clip_fraction, 0.5, "clip_fraction: 2 of 4 steps above grad_clip 1 (1.0 is not)")
t:eq(r.values.val_loss_after_2, 3.4, "val_loss_after_2: d_val_loss of step row 1")
t:eq(r.values.val_loss_after_4, 2.9, "val_loss_after_4: d_val_loss of step row 3")
t:eq(r.values.val_loss_after_3, nil, "no diagnostic after 3 steps: undefined")
check.write(rdir .. "/config.json", '{"grad_clip": 0, "seed": 1}')
r = analysis.read_run(rdir, { "clip_fraction" })
t:eq(r.values.clip_fraction, 0, "grad_clip 0: nothing clipped")
check.rmtree(dir)
t:done()
