-- The learning-rate sensitivity (stats.lr_sensitivity, stats/lrsens.c) against
-- tests/vectors/lrsens_ref.json (tests/reference/lrsens_ref.py: every ordered resample,
-- plain Python), its Monte Carlo mode, its argument errors; and the sweep analysis
-- (lua/repro/analysis/lrsens.lua) on synthetic runs.
local check = require "check"
local record_set = require "repro.record.set"
check.data_anywhere() -- its corpora are temporary files outside data/
local stats = require "stats"
local cjson = require "cjson"
local t = check.new("test_lrsens")

local f = assert(io.open("tests/vectors/lrsens_ref.json", "r"))
local ref = cjson.decode(f:read("a"))
f:close()

-- JSON null (a diverged run) as false, the binding's marker
local function cube(loss)
  local out = {}
  for g, rows in ipairs(loss) do
    out[g] = {}
    for j, row in ipairs(rows) do
      out[g][j] = {}
      for i = 1, #row do
        local x = row[i]
        out[g][j][i] = x ~= cjson.null and x or false
      end
    end
  end
  return out
end

for _, c in ipairs(ref.cases) do
  local r = stats.lr_sensitivity(cube(c.loss), c.init, { ref = c.ref, alpha = c.alpha,
    exact = true })
  t:near(r.ell_star, c.ell_star, 1e-12, c.name .. ": ell_star")
  t:eq(r.star[1] .. "/" .. r.star[2], math.tointeger(c.star[1]) .. "/" ..
    math.tointeger(c.star[2]), c.name .. ": where")
  t:eq(r.total, c.total, c.name .. ": n^n resamples")
  t:eq(r.exact, true, c.name .. ": exact")
  for g = 1, #c.sensitivity do
    t:near(r.sensitivity[g], c.sensitivity[g], 1e-12, c.name .. ": sensitivity " .. g)
    t:near(r.diff[g], c.diff[g], 1e-12, c.name .. ": diff " .. g)
    t:near(r.own[g], c.own[g], 1e-12, c.name .. ": own " .. g)
    t:near(r.own_diff[g], c.own_diff[g], 1e-12, c.name .. ": own_diff " .. g)
    for k = 1, 2 do
      for _, key in ipairs({ "ci", "diff_ci", "own_ci", "own_diff_ci" }) do
        t:near(r[key][g][k], c[key][g][k], 1e-12, c.name .. ": " .. key .. " " .. g .. "." .. k)
      end
    end
    for j = 1, #c.curve[g] do
      t:near(r.curve[g][j], c.curve[g][j], 1e-12, c.name .. ": curve " .. g .. "." .. j)
    end
  end
end

-- Monte Carlo: the same point estimates, deterministic intervals near the exact ones
local c = ref.cases[3]
local mc = stats.lr_sensitivity(cube(c.loss), c.init, { resamples = 20000, seed = 7 })
local mc2 = stats.lr_sensitivity(cube(c.loss), c.init, { resamples = 20000, seed = 7 })
t:eq(mc.exact, false, "Monte Carlo by default")
t:eq(mc.total, 20000, "Monte Carlo: the resample count")
t:near(mc.sensitivity[2], c.sensitivity[2], 1e-12, "Monte Carlo: the point estimate")
t:eq(mc.ci[2][1], mc2.ci[2][1], "Monte Carlo: the same seed, the same interval")
t:ok(math.abs(mc.ci[2][1] - c.ci[2][1]) < 0.03 and math.abs(mc.ci[2][2] - c.ci[2][2]) < 0.03,
  string.format("Monte Carlo near the exact interval: [%g, %g] vs [%g, %g]", mc.ci[2][1],
    mc.ci[2][2], c.ci[2][1], c.ci[2][2]))
local other = stats.lr_sensitivity(cube(c.loss), c.init, { resamples = 20000, seed = 8 })
local differs = false
for g = 1, #c.sensitivity do
  for k = 1, 2 do
    if other.ci[g][k] ~= mc.ci[g][k] or other.diff_ci[g][k] ~= mc.diff_ci[g][k] then
      differs = true
    end
  end
end
t:ok(differs, "Monte Carlo: another seed, other draws")

-- a diverged run counts as its loss at initialization, a run above it too
local r = stats.lr_sensitivity({ { { 3.0 }, { false } }, { { 5.5 }, { 2.0 } } }, { { 4.0 }, { 5.0 } },
  { exact = true })
t:near(r.curve[1][2], 4.0, 0, "diverged: its init loss")
t:near(r.curve[2][1], 5.0, 0, "above init: its init loss")
t:near(r.ell_star, 2.0, 0, "ell_star: the best of every group")
t:near(r.sensitivity[1], ((3 - 2) + (4 - 2)) / 2, 1e-15, "sensitivity of group 1")
t:near(r.diff[2], ((5 - 2) + 0) / 2 - 1.5, 1e-15, "diff against group 1")
t:near(r.own[1], ((3 - 3) + (4 - 3)) / 2, 1e-15, "own: group 1 against its own best, 3")
t:near(r.own[2], ((5 - 2) + (2 - 2)) / 2, 1e-15, "own: group 2 against its own best, 2")
t:near(r.own_diff[2], 1.5 - 0.5, 1e-15, "own_diff against group 1")

-- errors name the argument
t:raises(function() stats.lr_sensitivity({ { { 1 / 0 } } }, { { 4 } }) end,
  "bad argument #1 to 'lr_sensitivity' (loss[1]: infinite (a diverged run is NaN)",
  "an infinite loss")
t:raises(function() stats.lr_sensitivity({ { { 1 } } }, { { 0 / 0 } }) end,
  "bad argument #2 to 'lr_sensitivity' (init[1]: NaN)", "a NaN init")
t:raises(function() stats.lr_sensitivity({ { { 1, 2 } } }, { { 4 } }) end,
  "init: 1 groups x 2 seeds expected (the shape of loss), got 1 x 1", "init's shape")
t:raises(function() stats.lr_sensitivity({ { { 1, 2 }, { 3 } } }, { { 4, 4 } }) end,
  "loss: every row must have 2 entries", "a ragged sweep")
t:raises(function() stats.lr_sensitivity({ { { 1, "x" } } }, { { 4, 4 } }) end,
  "loss[1][1][2]: a number or false expected, got string", "a string")
t:raises(function() stats.lr_sensitivity({ { { 1 } } }, { { 4 } }, { ref = 2 }) end,
  "ref: group 2 of 1", "ref out of range")
t:raises(function() stats.lr_sensitivity({ { { 1 } } }, { { 4 } }, { refs = 2 }) end,
  "refs", "an unknown option")
t:raises(function()
  stats.lr_sensitivity({ { { 1, 1, 1, 1, 1, 1, 1, 1, 1 } } }, { { 4, 4, 4, 4, 4, 4, 4, 4, 4 } },
    { exact = true })
end, "exact: n = 9 seeds, more than 8", "exact above the limit")
t:raises(function() stats.lr_sensitivity({ { { 1 } } }, { { 4 } }, { resamples = 10 }) end,
  "resamples: must be >= 100", "too few resamples")

-- The sweep analysis (lua/repro/analysis/lrsens.lua through analysis.summarize) on synthetic runs:
-- 2 groups x 4 learning rates x 3 seeds, some diverged, and outcomes over the grid.
local analysis = require "repro.analysis"
local study = require "repro.study"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local dir = check.tmpdir()
check.write(dir .. "/corpus.txt", string.rep("the cat sat on a mat and ran far away. ", 300))
local LRS = { 1e-3, 1e-2, 0.1, 1.0 }
local function write_sweep(name, extra)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
local LRS = { 1e-3, 1e-2, 0.1, 1.0 }
local variants, groups = {}, {}
for _, norm in ipairs({ "none", "layernorm" }) do
  local members = {}
  for i, lr in ipairs(LRS) do
    variants[#variants + 1] = { name = norm .. "-" .. i, embed_norm = norm, lr = lr,
      min_lr = lr / 10, warmup = norm == "none" and 0 or 2 }
    members[#members + 1] = norm .. "-" .. i
  end
  groups[#groups + 1] = { name = norm, variants = members }
end
return {
  name = %q, description = "a synthetic sweep",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, data = %q },
  variants = variants, seeds = { 1, 2, 3 },
  analysis = { baseline = "none-1", metrics = { "val_loss", "init_loss", "max_loss_jump",
    "max_grad_norm", "diverged" }, primary = "val_loss", better = "lower", min_effect = 0.02,
    alpha = 0.05, correction = "holm", resamples = 1000, test = "t", comparisons = {},
    sweep = { over = "lr", groups = groups, reference = "none"%s } },
}
]], name, dir .. "/corpus.txt", extra or ""))
  return path
end
local s = study.load(write_sweep("syn_sweep", [[,
      outcomes = { metrics = { "mean_max_loss_jump", "gmean_max_grad_norm", "n_diverged",
        "log10_diverge_lr" }, primary = "mean_max_loss_jump", better = "lower",
        min_effect = 0.1, deltas = { mean_max_loss_jump = 0.1, gmean_max_grad_norm = 1,
        n_diverged = 1, log10_diverge_lr = 0.5 }, comparisons = { { "layernorm", "none" } },
        test = "t" }]]))
-- loss[group][lr][seed]; false = diverged
local L = {
  none = { { 3.0, 3.1, 3.05 }, { 2.6, 2.7, 2.62 }, { 3.9, false, 4.5 }, { false, false, false } },
  layernorm = { { 3.2, 3.3, 3.25 }, { 2.5, 2.55, 2.52 }, { 2.45, 2.6, 2.5 }, { 2.9, false, 3.0 } },
}
local L0 = { none = { 4.2, 4.25, 4.3 }, layernorm = { 4.21, 4.22, 4.23 } }
local runs = {}
for g, rows in pairs(L) do
  for j, row in ipairs(rows) do
    local v = g .. "-" .. j
    runs[v] = {}
    for i, x in ipairs(row) do
      local values = { init_loss = L0[g][i], max_loss_jump = 0.1 * j + 0.01 * i,
        max_grad_norm = 2 ^ j, diverged = x and 0 or 1 }
      if x then values.val_loss = x end
      runs[v][i] = { diverged = not x, missing = {}, values = values }
    end
  end
end
local sum = analysis.summarize(s, runs)
local ok, text = pcall(json.pretty, sum)
t:ok(ok, "the sweep summary encodes as JSON: " .. tostring(text))
local sw = sum.lr_sweep
t:ok(sw ~= nil, "summary.lr_sweep")
local none, ln = sw.groups.none, sw.groups.layernorm
t:eq(none.best_lr, 1e-2, "best lr of none: the lowest clipped mean")
t:eq(ln.best_lr, 0.1, "best lr of layernorm")
t:eq(none.best_at_edge, false, "inside the grid")
t:eq(none.diverge_lr, 0.1, "none: the first lr with a diverged seed")
t:eq(none.diverge_lr_all, 1.0, "none: every seed diverged from 1.0 on")
t:eq(none.top_trains, false, "none does not train at the top")
t:eq(ln.diverge_lr, 1.0, "layernorm diverges at 1.0")
t:eq(ln.diverge_lr_all, nil, "layernorm: not every seed diverged")
t:eq(ln.top_trains, true, "layernorm still trains at the top: the grid should go higher")
t:eq(none.points[3].n_diverged, 1, "a point's diverged count")
t:near(none.points[3].mean, (3.9 + 4.5) / 2, 1e-14, "a point's mean leaves diverged runs out")
t:eq(none.points[3].values[2], json.null, "a diverged run's loss is null")
-- the clipped curve and the sensitivity agree with stats.lr_sensitivity on the same data
local cubes, inits = {}, {}
for gi, g in ipairs({ "none", "layernorm" }) do
  cubes[gi], inits[gi] = L[g], L0[g]
end
local direct = stats.lr_sensitivity(cubes, inits, { exact = true })
t:near(none.clipped_mean[3], (3.9 + 4.25 + 4.3) / 3, 1e-14,
  "clipped mean: a diverged run is its init loss, one above it too")
t:near(sw.ell_star, direct.ell_star, 1e-15, "ell_star")
t:eq(sw.ell_star_at.group, "layernorm", "ell_star's group")
t:near(none.sensitivity.value, direct.sensitivity[1], 1e-15, "sensitivity of none")
t:near(ln.sensitivity.diff, direct.diff[2], 1e-15, "difference from the reference")
t:near(ln.sensitivity.diff_ci[1], direct.diff_ci[2][1], 1e-15, "its interval")
t:near(none.sensitivity.own.value, direct.own[1], 1e-15, "S_own of none")
t:near(ln.sensitivity.own.diff, direct.own_diff[2], 1e-15, "S_own's difference")
t:near(ln.sensitivity.own.diff_ci[2], direct.own_diff_ci[2][2], 1e-15, "its interval")
t:near(ln.sensitivity.own.value, ln.sensitivity.value - (ln.best_loss - sw.ell_star), 1e-12,
  "S_own = S minus the group's best above the pooled best")
t:eq(sw.bootstrap.exact, true, "exact bootstrap at 3 seeds")
t:eq(sw.bootstrap.resamples, 27, "3^3 resamples")
t:ok(sw.bootstrap.below_nominal == true, "a coverage note at 3 seeds")
-- pilot comparisons: layernorm at 0.1 vs none at 1e-2, paired by seed
t:eq(#sum.pilot_comparisons, 1, "one pilot comparison")
local pc = sum.pilot_comparisons[1]
t:eq(pc.treatment_variant .. " " .. pc.baseline_variant, "layernorm-3 none-2", "at the best lrs")
local d = { 2.45 - 2.6, 2.6 - 2.7, 2.5 - 2.62 }
t:near(pc.sd, stats.summary(d).sd, 1e-12, "pilot sd of the paired differences")
t:eq(pc.metric, "val_loss", "pilot metric")
-- outcomes: the rule on per-seed aggregates
local so = sum.sweep_outcomes
t:ok(so ~= nil, "summary.sweep_outcomes")
local jump = so.per_variant.none.metrics.mean_max_loss_jump
t:near(jump.values[2], (0.1 + 0.2 + 0.3 + 0.4) / 4 + 0.02, 1e-14, "mean_max_loss_jump of a seed")
t:near(so.per_variant.none.metrics.gmean_max_grad_norm.values[1], 2 ^ 2.5, 1e-12,
  "geometric mean of max_grad_norm")
t:eq(so.per_variant.none.metrics.n_diverged.values[2], 2, "n_diverged of seed 2")
t:near(so.per_variant.none.metrics.log10_diverge_lr.values[2], -1, 1e-14,
  "log10 of the first diverging lr")
t:near(so.per_variant.layernorm.metrics.log10_diverge_lr.values[1], 1, 1e-14,
  "censored one grid step above the top")
-- the groups are its variants, each with the overrides its grid shares (not lr, min_lr)
local gcfg = {}
for _, v in ipairs(so.variants) do
  local keys = {}
  for k, x in pairs(v.overrides) do keys[#keys + 1] = k .. "=" .. tostring(x) end
  table.sort(keys)
  gcfg[#gcfg + 1] = v.name .. ":" .. table.concat(keys, ",")
end
t:eq(table.concat(gcfg, " "), "none:embed_norm=none,warmup=0 " ..
  "layernorm:embed_norm=layernorm,warmup=2", "a group's config: the overrides its grid shares")
t:eq(#so.verdicts, 1, "one verdict on the primary outcome")
t:eq(so.verdicts[1].metric, "mean_max_loss_jump", "on the primary outcome")
t:ok(so.verdicts[1].verdict == "equivalent" or so.verdicts[1].verdict == "inconclusive",
  "identical jumps: not better or worse: " .. so.verdicts[1].verdict)
local exceeds
for _, c in ipairs(so.comparisons) do
  if c.metric == "n_diverged" then exceeds = c end
end
t:ok(exceeds and exceeds.delta == 1 and exceeds.mean == -1 and exceeds.exceeds_delta == true,
  "exploratory outcomes carry their delta")
t:ok(require("repro.report.terminal").verdict_table(sum):find("learning-rate sweep over lr", 1, true),
  "the terminal table lists the sweep")

-- round trip: repro.best_lr reads what the analysis wrote
fs.mkdir_p(dir .. "/exp/syn_sweep")
-- the digest of the (here: no) records beside it, which the report checks
sum.records_sha256 = record_set.digest(dir .. "/exp/syn_sweep", record_set.design(sum))
check.write(dir .. "/exp/syn_sweep/summary.json", json.pretty(sum))

-- the paper's table and macros of the sweep (lua/repro/report/tex_sweep.lua) from that summary
local tex_sweep = require "repro.report.tex_sweep"
local rdata = require "repro.report.data"
-- the groups are named by the config they share, as the manifest's names say
local NAMES = { keys = { { key = "warmup", format = "with warmup %s", label = "warmup %s" } } }
local TRUST = { trust_summaries = true } -- hand-made summaries: nothing to recompute from
-- the paper's factor (paper/paper.lua), as the report reads every study of the paper with it
local FACTOR = require("repro.report").load_manifest(require("repro.host").root .. "/paper/paper.lua").factor
local rs = rdata.load_study(dir .. "/exp", "syn_sweep", NAMES, FACTOR, TRUST)
local tab = tex_sweep.lr_sweep_table(rs)
t:ok(tab:find("\nnone, warmup 0 & \\num{0.01} & \\num{" .. string.format("%.4f", none.best_loss) ..
  "} & \\num{0.1} & \\num{1} & ", 1, true), "sweep table: none's best lr, loss, divergence: " .. tab)
t:ok(tab:find("\nLayerNorm, warmup 2 & \\num{0.1} & [^\n]* & \\num{1} & none & ") ~= nil,
  "sweep table: LayerNorm diverges at 1 on some seed, never on all")
t:ok(not tab:find("none-", 1, true) and not tab:find("layernorm", 1, true),
  "sweep table: no group's or variant's code name")
t:ok(tab:find("$S - S_{\\text{none, warmup 0}}$", 1, true),
  "sweep table: the reference group named by its config in the header")
local plain_tab = tex_sweep.lr_sweep_table(rdata.load_study(dir .. "/exp", "syn_sweep", nil,
  FACTOR, TRUST))
t:ok(plain_tab:find("\nLayerNorm, warmup = 2 & ", 1, true),
  "sweep table without the manifest's names: <key> = <value>")
local lsens = rs.summary.lr_sweep.groups.layernorm.sensitivity -- as summary.json has it
local want = string.format("\\num{%.4f} [\\num{%.4f}, \\num{%.4f}] & ", lsens.diff,
  lsens.diff_ci[1], lsens.diff_ci[2])
local want_own = string.format("& \\num{%.4f} [\\num{%.4f}, \\num{%.4f}] & \\num{%.4f} " ..
  "[\\num{%.4f}, \\num{%.4f}] \\\\", lsens.own.value, lsens.own.ci[1], lsens.own.ci[2],
  lsens.own.diff, lsens.own.diff_ci[1], lsens.own.diff_ci[2])
t:ok(tab:find(want_own, 1, true), "sweep table: S_own and its difference, with intervals: " ..
  want_own)
t:ok(tab:find(want, 1, true), "sweep table: the sensitivity difference from none with its " ..
  "interval: " .. want)
t:ok(tab:find("percentile bootstrap over the 3 seeds (all 27 resamples)", 1, true),
  "sweep table: the bootstrap note")
-- the outcomes (sweep_outcomes) as a Study: its groups named by their config, never by
-- their code names, in the paired table, its macros and its verdicts
local sec = rs:section("sweep_outcomes")
t:ok(sec ~= nil and sec.no_records and sec.name == "syn_sweep", "Study:section: the outcomes")
t:eq(rs:section("nowhere"), nil, "Study:section: nil for a missing section")
t:eq(sec.variant_by_name.layernorm.prose, "LayerNorm with warmup 2", "a group's prose name")
t:eq(sec.variant_by_name.none.tex_label, "none, warmup 0", "a group's table label")
t:near(sec:value("none", 2, "mean_max_loss_jump"), (0.1 + 0.2 + 0.3 + 0.4) / 4 + 0.02, 1e-14,
  "Study:value over the nested summary")
local tex_tables = require "repro.report.tex_tables"
local ptab = tex_tables.paired_table(sec)
t:ok(ptab:find("\nLayerNorm, warmup 2${}-{}$none, warmup 0", 1, true),
  "outcomes table: a comparison named by the groups' config: " .. ptab)
t:ok(ptab:find("mean largest loss jump (nats) --- primary, lower is better, minimum effect " ..
  "\\num{0.100}", 1, true), "outcomes table: the primary's minimum effect")
t:ok(ptab:find("divergences over the grid (count) --- exploratory: unadjusted $p$, no " ..
  "verdict, minimum effect \\num{1.00}", 1, true), "outcomes table: an outcome's own delta")
t:ok(ptab:find("\\num{-1.00}$^{", 1, true) and
  ptab:find("reaches the outcome's pre-registered minimum effect", 1, true),
  "outcomes table: an exploratory difference that reaches its delta is marked")
t:ok(not ptab:find("layernorm", 1, true) and not ptab:find("n\\_", 1, true),
  "outcomes table: no code name")
-- a manifest's paired table with section = "sweep_outcomes"; a sentence when the summary
-- has none
local so_saved = sum.sweep_outcomes
sum.sweep_outcomes = nil
fs.mkdir_p(dir .. "/exp/no_outcomes")
sum.records_sha256 = record_set.digest(dir .. "/exp/no_outcomes", record_set.design(sum))
check.write(dir .. "/exp/no_outcomes/summary.json", json.pretty(sum))
sum.sweep_outcomes = so_saved
local rs_no = rdata.load_study(dir .. "/exp", "no_outcomes", NAMES, FACTOR, TRUST)
local tabs = tex_tables.tables({ manifest = { listed = { syn_sweep = true, no_outcomes = true },
  tables = { { name = "o", kind = "paired", study = "syn_sweep", section = "sweep_outcomes" },
    { name = "p", kind = "paired", study = "no_outcomes", section = "sweep_outcomes" } } },
  by_name = { syn_sweep = rs, no_outcomes = rs_no }, studies = { rs, rs_no },
  experiments = dir .. "/exp" })
t:eq(tabs.o, ptab, "the manifest's outcomes table is the section's paired table")
t:ok(tabs.p:find("Not available: the no\\_\\allowbreak{}outcomes study's summary has no " ..
  "sweep\\_\\allowbreak{}outcomes", 1, true), "a summary without the section: " .. tabs.p)
local tex_numbers = require "repro.report.tex_numbers"
local ntext = tex_numbers.numbers({ studies = { rs }, by_name = { syn_sweep = rs },
  names = { "syn_sweep" }, experiments = dir .. "/exp", figures = {} })
local function macro(name)
  return ntext:match("\\newcommand{\\" .. name .. "}(%b{})")
end
t:eq(macro("SynSweepOutcomesMeanMaxLossJumpMinEffect"), "{\\num{0.100}}",
  "macro: the primary outcome's minimum effect")
t:eq(macro("SynSweepOutcomesNDivergedMinEffect"), "{\\num{1.00}}",
  "macro: an outcome's minimum effect")
t:eq(macro("SynSweepOutcomesNTests"), "{1}", "macro: the outcomes' family")
t:eq(macro("SynSweepNTests"), "{1}", "macro: the study decides in its outcomes")
t:eq(macro("SynSweepOutcomesNoneNDiverged"), "{\\num{1.33}}",
  "macro: a group's mean outcome")
t:ok(macro("SynSweepOutcomesLayernormVsNoneNDivergedDelta") == "{\\num{-1.00}}",
  "macro: an exploratory outcome's difference")
local verdict = macro("SynSweepOutcomesLayernormVsNoneVerdict")
t:ok(verdict == "{equivalent}" or verdict == "{inconclusive}", "macro: the verdict " ..
  tostring(verdict))
local para = macro("SynSweepOutcomesVerdicts") or ""
-- a verdict row: the groups as the paired table labels them, the verdict and why in words
local label = "LayerNorm, warmup 2${}-{}$none, warmup 0"
t:ok(para:find(label, 1, true) and para:find("\\emph{" .. verdict:sub(2, -2) .. "}", 1, true)
  and para:find("because", 1, true), "verdicts: the groups, the verdict and why: " .. para)
local why = para:gsub(label:gsub("%p", "%%%0"), "")
t:ok(not why:find("layernorm", 1, true) and not why:find("none", 1, true) and
  not why:find("\\_", 1, true), "verdicts: no code name outside the row's label")
t:ok(not para:find("first decision rule", 1, true), "verdicts: a study registered under the " ..
  "current rule has no rule-1 verdict in its prose, though its summary keeps one")
local defs = {}
tex_sweep.numbers(function(k, v) defs[k] = v end, rs, "SynSweep")
t:eq(defs.SynSweepNoneBestLr, "\\num{0.01}", "macro: none's best lr")
t:eq(defs.SynSweepLayernormDivergeLrAll, "none", "macro: LayerNorm never diverges on every seed")
t:eq(defs.SynSweepNoneDivergeLrAll, "\\num{1}", "macro: none diverges on every seed from 1")
check.write(dir .. "/reader.lua", string.format([[
return { name = "reader", description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, data = %q },
  variants = { { name = "none", lr = repro.best_lr("syn_sweep", "none") },
    { name = "layernorm", embed_norm = "layernorm",
    lr = repro.best_lr("syn_sweep", "layernorm") } },
  seeds = { count = { power = 0.8, pilot = "syn_sweep" }, first = 101 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.02, alpha = 0.05, correction = "holm",
    resamples = 1000, test = "t" } }
]], dir .. "/corpus.txt"))
local r2 = study.load(dir .. "/reader.lua", nil, { out_root = dir .. "/exp" })
t:eq(r2.runs[1].cfg.lr, 1e-2, "best_lr from an analysed sweep (none)")
t:eq(r2.runs[2].cfg.lr, 0.1, "best_lr from an analysed sweep (layernorm)")
t:eq(r2.seeds[1], 101, "fresh seeds from the first")
t:ok(r2.seeds_from_power and r2.seeds_from_power.sd_source == "pilot" and
  r2.seeds_from_power.pilot_list == "pilot_comparisons",
  "seeds from power use the sweep's pilot comparisons: " ..
  require("repro.study.power").sd_source_words(r2.seeds_from_power))
t:near(r2.seeds_from_power.sd, pc.sd, 1e-12, "with their sd")
t:eq(ln.best_overrides.lr, 0.1, "best_overrides: the best variant's own values")
t:eq(ln.best_overrides.embed_norm, "layernorm", "best_overrides: every override")
-- best_config: the best point's overrides, exactly
check.write(dir .. "/reader2.lua", (fs.read(dir .. "/reader.lua"):gsub('"reader"', '"reader2"')
  :gsub('lr = repro.best_lr%("syn_sweep", "layernorm"%)',
    'lr = repro.best_config("syn_sweep", "layernorm").lr')))
local r3 = study.load(dir .. "/reader2.lua", nil, { out_root = dir .. "/exp" })
t:eq(r3.runs[2].cfg.lr, 0.1, "best_config reaches the config")
-- seeds from power with a pre-registered cap
local sd_needed = stats.seeds_needed{ sd = pc.sd, delta = 0.02, alpha = 0.05, m = 1,
  power = 0.8, test = "t" }
t:ok(sd_needed > 3, "the synthetic pilot asks for more than 3 seeds: " .. sd_needed)
check.write(dir .. "/capped.lua", (fs.read(dir .. "/reader.lua"):gsub('"reader"', '"capped"')
  :gsub('pilot = "syn_sweep" }', 'pilot = "syn_sweep", max = 3 }')))
local r4 = study.load(dir .. "/capped.lua", nil, { out_root = dir .. "/exp" })
t:eq(#r4.seeds, 3, "seeds.count.max caps the seed count")
t:eq(r4.seeds_from_power.capped, true, "the summary says it was capped")
t:eq(r4.seeds_from_power.n_uncapped, sd_needed, "with the count power asked for")
t:ok(r4.seeds_from_power.power_achieved < 0.8, "and the power it has: " ..
  tostring(r4.seeds_from_power.power_achieved))
t:ok(r4.analysis.design_notes[1] and r4.analysis.design_notes[1]:find("caps them at 3", 1, true),
  "a design note says the design is underpowered: " .. tostring(r4.analysis.design_notes[1]))
check.write(dir .. "/badcap.lua", (fs.read(dir .. "/reader.lua"):gsub('"reader"', '"badcap"')
  :gsub('pilot = "syn_sweep" }', 'pilot = "syn_sweep", max = 1 }')))
t:raises(function() study.load(dir .. "/badcap.lua", nil, { out_root = dir .. "/exp" }) end,
  "seeds.count.max: expected the largest seed count the budget allows, an integer >= 2",
  "a bad cap")

-- validation of analysis.sweep
local function refuses(extra, pattern, what)
  t:raises(function() study.load(write_sweep("bad_sweep", extra)) end, pattern, what)
end
refuses([[, pilot = { { "layernorm", "nowhere" } }]], "analysis.sweep.pilot[1]: expected a " ..
  "pair of two different groups of the sweep (groups: layernorm, none)", "a bad pilot pair")
refuses([[, reference = "x"]], "analysis.sweep.reference: expected the name of a group",
  "an unknown reference")
refuses([[, over = "lr", loss = 3]], "analysis.sweep.loss: expected a metric", "a bad loss")
refuses([[, outcomes = { metrics = { "spikes" } }]], "unknown outcome 'spikes'",
  "an unknown outcome")
refuses([[, outcomes = { metrics = { "n_diverged" }, primary = "n_diverged", better = "lower",
  min_effect = 1, deltas = {}, comparisons = { { "none", "layernorm" } }, test = "t" }]],
  "analysis.sweep.outcomes.deltas.n_diverged: expected a number > 0", "a missing delta")
refuses([[, outcomes = { metrics = { "n_diverged" }, primary = "n_diverged", better = "lower",
  min_effect = 1, deltas = { n_diverged = 1 }, comparisons = { { "none", "layernorm" } },
  test = "signflip" }]], "the exact sign-flip test with 3 seeds cannot reach the Holm " ..
  "first-step level alpha / m = 0.05 / 1: the design needs at least 6 seeds",
  "outcomes whose test cannot decide")
check.write(dir .. "/grid.lua", (fs.read(write_sweep("grid")):gsub(
  'members%[#members %+ 1%] = norm .. "%-" .. i', 'if not (norm == "layernorm" and i == 4) ' ..
  'then members[#members + 1] = norm .. "-" .. i end')))
t:raises(function() study.load(dir .. "/grid.lua") end, "group 'layernorm' covers another " ..
  "grid of lr than the first group", "groups on different grids")
check.write(dir .. "/nolr.lua", (fs.read(write_sweep("nolr")):gsub("lr = lr,%s*min_lr = lr / 10,", "")))
t:raises(function() study.load(dir .. "/nolr.lua") end, "variant 'none-1' must set lr (> 0)",
  "a variant without the swept key")

-- The pilot pairs: by default every group vs the reference, whatever the groups are called
-- (the library knows no norm); a study's own list is kept as it is, in its order.
local function pilot_of(name, extra)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, (fs.read(write_sweep(name, extra)):gsub('{ "none", "layernorm" }',
    '{ "none", "layernorm", "rmsnorm" }')))
  local list = {}
  for _, p in ipairs(study.load(path).analysis.sweep.pilot) do
    list[#list + 1] = p[1] .. "/" .. p[2]
  end
  return table.concat(list, " ")
end
t:eq(pilot_of("pilot_default"), "layernorm/none rmsnorm/none",
  "default pilot: each group vs the reference, no other pair")
t:eq(pilot_of("pilot_listed",
  [[, pilot = { { "layernorm", "rmsnorm" }, { "rmsnorm", "none" } }]]),
  "layernorm/rmsnorm rmsnorm/none", "a listed pilot is kept as listed")
t:eq(pilot_of("pilot_none", ", pilot = {}"), "", "pilot = {}: no pilot comparison")
-- lr_sweep.lua declares the pairs whose largest sd sets tuned.lua's and
-- tuned_controls.lua's seed counts: each group vs no norm, and LayerNorm vs RMSNorm
local sweep_pilot = {}
for _, p in ipairs(study.load("lua/experiments/lr_sweep.lua").analysis.sweep.pilot) do
  sweep_pilot[#sweep_pilot + 1] = p[1] .. "/" .. p[2]
end
t:eq(table.concat(sweep_pilot, " "), "layernorm/none rmsnorm/none scale/none " ..
  "layernorm_matched/none layernorm/rmsnorm", "lr_sweep.lua's pilot pairs")

check.rmtree(dir)
t:done()
