-- H1a's three parts across runs (paper/lib/h1a.lua, this paper's extension) on synthetic run values (no
-- training): a norm whose accuracy deficit is all its loss deficit is "lower" but not
-- "beyond"; one that loses accuracy at equal loss is "beyond"; stabilization from the
-- stability measures; "supporting H1a" only when all three hold; diverged runs left out
-- and counted; the study file's analysis.h1a checked (metrics among analysis.metrics,
-- variants known, fields known); the H1a table and the main text's macros for each part
-- (paper/lib/tex_main.lua: coefficient, interval, a log-scale measure as a factor).
local check = require "check"
check.data_anywhere() -- its corpus is a temporary file outside data/
local analysis = require "repro.analysis"
local json = require "repro.core.json"
local study = require "repro.study"
local pcg = require "pcg"
local t = check.new("test_h1a")
local h1a_ext = require("repro.core.extension").load("paper/lib/h1a.lua", "test_h1a")
local dir = check.tmpdir()

check.write(dir .. "/corpus.txt", string.rep("abc def ghi.\n", 300))
local SRC = [[
return { name = "syn", description = "synthetic",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 8,
           warmup = 2, data = "]] .. dir .. [[/corpus.txt" },
  variants = { { name = "a-none" }, { name = "a-layernorm", embed_norm = "layernorm" },
               { name = "a-rmsnorm", embed_norm = "rmsnorm" },
               { name = "b-none", lr = 2e-3 }, { name = "b-layernorm", embed_norm = "layernorm",
                 lr = 2e-3 } },
  seeds = { 1, 2, 3, 4, 5, 6, 7, 8 },
  analysis = { baseline = "a-none", metrics = { "task_macro_acc_0shot", "val_loss",
      "max_loss_jump", "max_grad_norm" },
    primary = "task_macro_acc_0shot", better = "higher", min_effect = 0.02, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t",
    comparisons = { { "a-layernorm", "a-none" }, { "a-rmsnorm", "a-none" },
      { "b-layernorm", "b-none" } },
    h1a = H1A }, extensions = { h1a = "paper/lib/h1a.lua" } }
]]
local H1A = [[{ setups = { { name = "a", variants = { "a-none", "a-layernorm", "a-rmsnorm" } },
      { name = "b", variants = { "b-none", "b-layernorm" } } },
    accuracy = "task_macro_acc_0shot", loss = "val_loss",
    stability = { { metric = "max_loss_jump" }, { metric = "max_grad_norm", log = true } } }]]
local function load(h1a)
  check.write(dir .. "/syn.lua", (SRC:gsub("H1A", function() return h1a end)))
  return study.load(dir .. "/syn.lua")
end
local s = load(H1A)
t:eq(#s.analysis.h1a.setups, 2, "analysis.h1a normalized: its set-ups")

-- Synthetic runs.  Per set-up and seed a loss; each norm adds `dloss` to it; accuracy is
-- the set-up's level minus 0.4 x loss, minus `beyond` for the norm, plus small noise; the
-- stability measures drop by `stab` for the norm.
local function runs_for(spec)
  local rng = pcg.new(11, 3)
  local function noise(sd) return sd * (rng:uniform() - 0.5) * 2 end
  local runs = {}
  for _, v in ipairs(s.variants) do
    local setup, norm = v.name:match("^(%a)%-(%a+)$")
    local e = spec[norm] or { dloss = 0, beyond = 0, stab = 0 }
    runs[v.name] = {}
    for seed = 1, 8 do
      local loss = 2.0 + 0.05 * seed + (setup == "b" and 0.3 or 0) + e.dloss + noise(0.01)
      local acc = (setup == "b" and 1.2 or 1.3) - 0.4 * loss - e.beyond + noise(0.004)
      runs[v.name][seed] = { diverged = false, missing = {}, values = {
        task_macro_acc_0shot = acc, val_loss = loss,
        max_loss_jump = 0.5 + noise(0.05) - e.stab,
        max_grad_norm = math.exp(1 + noise(0.05) - e.stab) } }
    end
  end
  return runs
end

-- LayerNorm: higher loss, accuracy as the loss predicts, stabilizing; RMSNorm: higher
-- loss and 0.03 lower accuracy at equal loss, not stabilizing.
local runs = runs_for({ layernorm = { dloss = 0.1, beyond = 0, stab = 0.2 },
  rmsnorm = { dloss = 0.1, beyond = 0.03, stab = 0 } })
runs["a-rmsnorm"][8] = { diverged = true, missing = {}, values = {} }
local sum = analysis.summarize(s, runs)
local h = sum.h1a or {}
t:ok(pcall(json.pretty, sum), "the summary encodes as JSON")
t:eq(h.n_runs, 39, "40 runs, the diverged one left out")
t:eq(h.n_diverged, 1, "the diverged run counted")
local ln, rms = (h.norms or {}).layernorm or {}, (h.norms or {}).rmsnorm or {}
t:ok(ln.lower and ln.accuracy.coef < -0.03, "LayerNorm: lower accuracy")
t:ok(ln.beyond == false and ln.accuracy_given_loss.ci[1] < 0 and
  ln.accuracy_given_loss.ci[2] > 0, "LayerNorm: not beyond what its loss predicts " ..
  tostring(ln.accuracy_given_loss and json.encode(ln.accuracy_given_loss)))
t:ok(ln.stabilized == true, "LayerNorm: stabilization shown")
t:eq(h1a_ext.verdict_words(ln), "lower accuracy; not beyond what its " ..
  "validation loss predicts; " ..
  "a smaller whole-run loss jump or gradient peak: not supporting H1a",
  "LayerNorm's verdict names each part")
t:ok(rms.lower and rms.beyond and math.abs(rms.accuracy_given_loss.coef + 0.03) < 0.01,
  "RMSNorm: lower, and 0.03 beyond what its loss predicts")
t:ok(rms.stabilized == false and rms.supports == false, "RMSNorm: no stabilization, no support")
t:ok(#(rms.stability or {}) == 2 and rms.stability[2].log == true and
  h.stability_alpha == 0.025, "two stability measures, Bonferroni alpha / 2, the log scale named")
local text = table.concat(h1a_ext.text(h), "\n")
t:ok(text:find("rmsnorm vs none: lower accuracy; beyond what its validation loss predicts; " ..
  "no smaller whole-run loss jump or gradient peak: not supporting H1a", 1, true),
  "the terminal lines: " .. text)
t:ok(require("repro.report.terminal").verdict_table(sum, 100, s.extensions):find("H1a (39 runs",
  1, true),
  "the verdict table prints the H1a section")

-- the study's own report: a table of the three parts per norm
local tables = require("repro.report.study_tables").tables({ name = "syn", summary = sum })
local ht
for _, tb in ipairs(tables) do if tb.title == "H1a: three parts across runs" then ht = tb end end
t:ok(ht and #ht.rows == 2 and ht.rows[1][1] == "layernorm vs none" and
  ht.head[4] == "max_loss_jump" and ht.head[5] == "log max_grad_norm" and
  ht.rows[2][#ht.rows[2]]:find("beyond what its validation loss predicts", 1, true),
  "the report's H1a table: per norm the fits and the verdict")

-- all three parts: supporting H1a
runs = runs_for({ layernorm = { dloss = 0.1, beyond = 0.03, stab = 0.2 } })
h = analysis.summarize(s, runs).h1a
t:ok(h.norms.layernorm.supports and h1a_ext.verdict_words(h.norms.layernorm):find(
  ": supporting H1a$"),
  "lower, beyond and stabilized: supporting H1a")
t:ok(h.norms.rmsnorm.lower == false and h1a_ext.verdict_words(
  h.norms.rmsnorm):find("^no lower accuracy shown"),
  "no deficit: no lower accuracy shown")

-- the study file's analysis.h1a, checked
local function refused(h1a, want, what)
  t:raises(function() load(h1a) end, want, what)
end
refused(H1A:gsub('loss = "val_loss"', 'loss = "val_ppl"'), "analysis.h1a.loss",
  "a metric not among analysis.metrics")
refused(H1A:gsub('"b%-layernorm" }', '"b-lnorm" }'), "unknown variant 'b-lnorm'",
  "an unknown variant")
refused(H1A:gsub("accuracy =", "acuracy = 1, accuracy ="), "analysis.h1a.acuracy",
  "an unknown field")
refused("{ setups = {} }", "analysis.h1a", "no set-ups")

-- The supplement's H1a table (paper/lib/h1a.lua, kind h1a): a row per norm named
-- by the study's factor against its baseline, each part's coefficient and interval, "log"
-- on a log-scale measure, whether all three hold; a summary without h1a says so.
do
  local fit = function(c) return { coef = c, ci = { c - 0.01, c + 0.01 } } end
  local h = { baseline = "none", n_runs = 24, n_diverged = 1, norms = {
    layernorm = { accuracy = fit(-0.05), accuracy_given_loss = fit(-0.03), supports = true,
      stability = { { metric = "max_loss_jump", coef = -0.2, ci = { -0.3, -0.1 } },
        { metric = "max_grad_norm", log = true, coef = 0.1, ci = { 0.0, 0.2 } } } },
    rmsnorm = { accuracy = fit(0.01), accuracy_given_loss = { why = "too few runs" },
      supports = false, stability = { { metric = "max_loss_jump", coef = 0.2, ci = { 0.1, 0.3 } },
        { metric = "max_grad_norm", log = true, coef = 0.1, ci = { 0.0, 0.2 } } } } } }
  local st = { name = "zz", dir = "experiments/zz", summary = { h1a = h },
    factor = { labels = { none = "no norm", layernorm = "LayerNorm", rmsnorm = "RMSNorm" } } }
  local tex = h1a_ext.tex_table(st)
  t:ok(tex:find("LayerNorm $-$ no norm & \\num{-0.050} [\\num{-0.060}, \\num{-0.040}]", 1, true),
    "the LayerNorm row, named by the factor, its accuracy part: " .. tex)
  t:ok(tex:find("RMSNorm $-$ no norm & \\num{0.010}", 1, true) and
    tex:find("--- & \\num{0.200}", 1, true), "the RMSNorm row: an undefined part is a dash")
  t:ok(tex:find("& largest loss jump & log largest gradient norm & Supports H1a", 1, true),
    "the stability columns, log for the log-scale one")
  t:ok(tex:find("\\num{0.100} [\\num{0.000}, \\num{0.200}] & yes", 1, true) and
    tex:find("& no \\\\", 1, true), "whether all three parts hold")
  t:ok(tex:find("24 runs (1 diverged, left out)", 1, true) and tex:find("alpha/2", 1, true),
    "its note: runs and the Bonferroni level")
  h.n_diverged = 0
  t:ok(h1a_ext.tex_table(st):find("24 runs (no run diverged)", 1, true),
    "none diverged: said in words")
  h.n_diverged = 1
  local none = h1a_ext.tex_table({ name = "zz", dir = "experiments/zz", summary = {} })
  t:ok(none:find("study has no H1a analysis", 1, true), "without h1a the table says so")
  -- the main text's macros (paper/lib/tex_main.lua): each part's coefficient and
  -- interval, a log-scale measure also as a factor
  local main = dofile("paper/lib/tex_main.lua")
  local defs = {}

  main.numbers(function(k, v) defs[k] = v end, st, "Zz")
  t:ok(defs.ZzHOneALayernormAccCoef == "\\num{-0.050}" and
    defs.ZzHOneALayernormAccCI == "[\\num{-0.060}, \\num{-0.040}]", "the accuracy coefficient and interval: "
    .. tostring(defs.ZzHOneALayernormAccCoef) .. " " .. tostring(defs.ZzHOneALayernormAccCI))
  t:ok(defs.ZzHOneALayernormStabMaxLossJumpCoef == "\\num{-0.200}" and
    defs.ZzHOneALayernormStabMaxLossJumpCI == "[\\num{-0.300}, \\num{-0.100}]" and
    defs.ZzHOneALayernormStabMaxLossJumpFactor == nil,
    "a linear stability measure: its coefficient and interval, no factor")
  t:ok(defs.ZzHOneALayernormStabMaxGradNormFactor == "\\num{1.105}" and
    defs.ZzHOneALayernormStabMaxGradNormFactorCI == "[\\num{1.000}, \\num{1.221}]",
    "a log-scale measure as a factor: " .. tostring(defs.ZzHOneALayernormStabMaxGradNormFactor)
    .. " " .. tostring(defs.ZzHOneALayernormStabMaxGradNormFactorCI))
  t:ok(defs.ZzHOneARmsnormAccGivenLossCI ~= nil and
    not defs.ZzHOneARmsnormAccGivenLossCI:find("num", 1, true),
    "an undefined part still defines its macro, as a dash: " ..
    tostring(defs.ZzHOneARmsnormAccGivenLossCI))
end

-- the training after warmup (analysis/records.lua after_warmup): measured from the run's
-- warmup, or from the default warmup without one; the whole run's peaks located
do
  local records = require "repro.analysis.records"
  local curve = { step = { 0, 1, 2, 3, 4, 5 }, loss = { 4, 3, 3.5, 2, 2.6, 2.2 },
    grad_norm = { 9, 1, 2, 1, 3, 1 } }
  local a = records.after_warmup({ warmup = 3 }, curve, 6)
  t:eq(a.from, 3, "the window starts at the run's warmup")
  t:ok(math.abs(a.max_loss_jump - 0.6) < 1e-12, "the loss jump above the window's best " ..
    "(2 -> 2.6): " .. a.max_loss_jump)
  t:eq(a.max_grad_norm, 3, "the largest gradient norm inside the window")
  t:ok(math.abs(a.grad_norm_cv - math.sqrt(4 / 3) / (5 / 3)) < 1e-12,
    "the variation: sd over mean of 1, 3, 1")
  t:eq(a.peak_grad_in_warmup, 1, "the whole run's largest gradient norm (9, step 0) is before it")
  t:eq(a.peak_jump_in_warmup, 0, "the whole run's largest jump (0.6, step 4) is inside it")
  local long = { step = {}, loss = {}, grad_norm = {} }
  for i = 1, 40 do
    long.step[i], long.loss[i], long.grad_norm[i] = i - 1, 3 - i / 100, i == 35 and 5 or 1
  end
  local w0 = records.after_warmup({ warmup = 0 }, long, 40)
  t:eq(w0.from, records.DEFAULT_WARMUP, "without warmup, from the default warmup")
  t:eq(w0.max_loss_jump, 0, "a falling loss has no jump")
  t:eq(records.after_warmup({ warmup = 0 }, curve, 6), nil,
    "a curve shorter than the default warmup has no window")
  t:eq(records.after_warmup({ warmup = 2 }, { step = { 0, 1, 2 }, loss = { 4, 3, 0 / 0 },
    grad_norm = { 1, 1, 0 / 0 } }, 3), nil, "a run that diverged before the window has none")
end

check.rmtree(dir)
t:done()
