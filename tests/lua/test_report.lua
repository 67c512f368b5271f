-- The report (lua/repro/report/init.lua): a hand-made summary (tests/report/final_summary.json)
-- with tiny hand-made run records gives the expected LaTeX lines, numbers and data files;
-- a degenerate comparison prints its reason and never "nan"; absent studies get their
-- sentence; a second run changes no byte and stale generated files are removed; the
-- figures render.  Then a new study file, run at a tiny budget with no other edit, gets
-- its section of the appendix (its paired table, forest plot and verdicts);
-- paper/supplement.tex and paper/main.tex compile against the output with no undefined
-- reference or overfull line, and the supplement's text holds the numbers and the new study.  The paper's manifest
-- (paper/paper.lua) is checked too: a malformed one is refused with the field named.
-- Last, the figures' generic rules: a figure whose data are all zero is a sentence, never
-- drawn, and the forest plot shows each set of runs once (copies found from the records).
local check = require "check"
local record_set = require "repro.record.set"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local tex = require "repro.report.texfmt"
local report = require "repro.report"
local plot = require "repro.report.plot"
local manifest = report.load_manifest("paper/paper.lua")
local t = check.new("test_report")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()

-- Formats ------------------------------------------------------------------------------
t:eq(tex.p(0.0004), "$<$\\,\\num{0.001}", "p below 0.001")
t:eq(tex.p(0.5), "\\num{0.500}", "p with 3 significant digits")
t:eq(tex.p(0.01234), "\\num{0.0123}", "small p with 3 significant digits")
t:eq(tex.p(1), "\\num{1.00}", "p = 1")
t:eq(tex.p(nil), "---", "undefined p")
t:eq(tex.p(0 / 0), "---", "NaN p is a dash")
t:eq(tex.fixed(-0.00001, 3), "0.000", "no negative zero")
t:eq(tex.value("val_ppl", 5.71234), "\\num{5.712}", "perplexity with 3 decimals")
t:eq(tex.value("val_loss", math.huge), "---", "infinite value is a dash")
t:eq(tex.value("some_metric", 123.456), "\\num{123.5}", "unknown metric: 4 significant digits")
t:eq(tex.diff_decimals("val_loss", -0.05, { -0.08, -0.02 }), 4, "difference decimals")
t:eq(tex.diff_decimals("val_ppl", 0.0012, { 0.0010, 0.0014 }), 5, "more decimals for a narrow CI")
t:eq(tex.percent(-0.0238095), "\\num{-2.38}\\,\\%", "relative change")
t:eq(tex.percent(0.07), "\\num{+7.00}\\,\\%", "relative change has a sign")
t:eq(tex.macro("init_scale"), "InitScale", "macro from a study name")
t:eq(tex.macro("layernorm-lr1e-2"), "LayernormLrOneETwo", "digits spelled out")
t:eq(tex.macro("none-L8d128"), "NoneLEightDOneTwoEight", "mixed letters and digits")
t:eq(tex.macro("0.02"), "ZeroPointZeroTwo", "decimal point")
t:eq(tex.escape("val_loss: 7 % & $x$ <= a/b"),
  "val\\_\\allowbreak{}loss: 7 \\% \\& \\$x\\$ \\textless{}= a/\\allowbreak{}b", "escaping")
t:eq(tex.escape("d \u{2212}0.5 \u{2248} 1"), "d $-$0.5 $\\approx$ 1", "unicode symbols")
t:eq(tex.seed_list({ 1, 2, 3, 4, 5 }), "1--5", "consecutive seeds")
t:eq(tex.seed_list({ 1, 3 }), "1, 3", "other seeds")
do -- the helpers the readers and formatters share
  local json, base = require "repro.core.json", require "repro.core.base"
  local words = require "repro.analysis.words"
  t:eq(json.table_of('{"a": 1}').a, 1, "table_of: an object")
  t:eq(#json.table_of("[1, 2]"), 2, "table_of: an array")
  for _, x in ipairs({ false, "", "3", "{", '"a"', "null" }) do
    t:eq(json.table_of(x), nil, "table_of: nil for " .. tostring(x))
  end
  t:eq(json.table_of(nil), nil, "table_of: nil for no text")
  t:eq(words.int_list({ 3, 1.0, 7 }), "3, 1, 7", "int_list")
  t:eq(words.int_list({}), "", "int_list of none")
  t:ok(base.whole(3.0) and base.whole(-0.0) and base.whole(2 ^ 53 - 1), "whole numbers")
  for _, x in ipairs({ 0.5, math.huge, -math.huge, 0 / 0, 2 ^ 53, "3" }) do
    t:ok(not base.whole(x), "not whole: " .. tostring(x))
  end
  local c = base.common_pairs({ { a = 1, b = 2 }, { a = 1, b = 3 }, { a = 1, c = 2 } })
  t:eq(c.a, 1, "common_pairs keeps a pair all share")
  t:ok(c.b == nil and c.c == nil, "common_pairs drops the others")
  t:eq(next(base.common_pairs({})), nil, "common_pairs of none")
  local list = { { treatment = "a", baseline = "b", metric = "m", k = 1 },
    { treatment = "a", baseline = "b", metric = "n", k = 2 } }
  t:eq(words.find_comparison(list, { treatment = "a", baseline = "b", metric = "n" }).k, 2,
    "find_comparison")
  t:eq(words.find_comparison(nil, list[1]), nil, "find_comparison in no list")
end
t:eq(tex.count_words(3) .. " " .. tex.count_words(10, true) .. " " .. tex.count_words(11), "three Ten 11",
  "counts in words to ten, then digits")
t:eq(plot.fix_pdf_date("x /CreationDate (D:20261126013847Z) y"),
  "x /CreationDate (D:19700101000000Z) y", "PDF date fixed, same length")

-- A study directory: the hand-made summary and run records -------------------------------
local exp = dir .. "/experiments"
local src = assert(fs.read("tests/report/final_summary.json"), "fixture")
fs.mkdir_p(exp .. "/final")
check.write(exp .. "/final/summary.json", src)

local VARIANTS = { "none", "layernorm", "rmsnorm" }
-- A record's manifest.json with the checksums of its files and the digest of its own
-- fields: the report reads only records that prove their content.
local function seal(d, extra)
  local m = { sha256 = {} }
  for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
    m.sha256[f] = fs.sha256(d .. "/" .. f)
  end
  for k, v in pairs(extra or {}) do m[k] = v end
  check.write(d .. "/manifest.json", require("repro.record").manifest_text(m))
end
-- A study's summary with the digest of the records beside it, as bin/repro analyze
-- writes it: the report refuses a summary whose records_sha256 does not match.
local function digest_summary(study_dir)
  local sum = json.decode(assert(fs.read(study_dir .. "/summary.json")))
  sum.records_sha256 = record_set.digest(study_dir, record_set.design(sum))
  check.write(study_dir .. "/summary.json", json.pretty(sum))
end
local PPL = { none = { 7.4, 8.2, 9.0 }, layernorm = { 7.1, 7.7, 8.6 }, rmsnorm = { 7.2, 8.0 } }
local LOSS = { none = { 2.0, 2.1, 2.2 }, layernorm = { 1.96, 2.04, 2.15 }, rmsnorm = { 1.98, 2.08 } }
local PARAMS = { none = 1000, layernorm = 1064, rmsnorm = 1032 }
for vi, v in ipairs(VARIANTS) do
  for seed = 1, 3 do
    local d = string.format("%s/final/%s/seed-%d", exp, v, seed)
    fs.mkdir_p(d)
    local diverged = v == "rmsnorm" and seed == 3
    check.write(d .. "/config.json", json.pretty({ embed_norm = v, seed = seed, iters = 8,
      n_layer = 1, lr = 0.0003 }))
    local m = { diverged = diverged, params = PARAMS[v], steps = diverged and 5 or 8 }
    if diverged then
      m.diverged_step = 4
    else
      m.val_loss, m.val_ppl = LOSS[v][seed], PPL[v][seed]
      m.val_acc = 0.39 + 0.01 * seed + 0.001 * (vi - 1)
      m.acc_macro, m.ece, m.brier = 0.3 + 0.01 * seed, 0.02 + 0.001 * vi, 0.9 - 0.01 * seed
      m.temp_opt, m.nll_temp_1, m.nll_temp_opt = 1.1, m.val_loss, m.val_loss - 0.01
      m.final_grad_norm = 0.4 + 0.1 * seed
      m.embed_norm = vi == 1 and 0.3 or 11.3
      local count, conf, acc = {}, {}, {}
      for k = 1, 15 do
        count[k], conf[k], acc[k] = 0, json.null, json.null
      end
      count[2], conf[2], acc[2] = 100 * seed, 0.1, 0.12
      count[5], conf[5], acc[5] = 50, 0.3, 0.25 + 0.01 * vi
      m.reliability = { count = json.array(count), confidence = json.array(conf),
        accuracy = json.array(acc) }
      m.resid_norm = json.array({ 1.0 + vi, 2.0 + vi, 3.0 + seed })
      local pos = {}
      for p = 1, 8 do pos[p] = 2.5 - 0.05 * p + 0.01 * seed end
      m.loss_by_position = json.array(pos)
    end
    check.write(d .. "/metrics.json", json.pretty(m))
    local rows = { "step,lr,loss,grad_norm,embed_norm,d_val_loss,d_embed_norm_letter," ..
      "d_embed_norm_digit,d_embed_norm_space" }
    for step = 0, diverged and 4 or 7 do
      local loss = string.format("%.9g", 4.2 - 0.1 * step + 0.01 * seed + 0.02 * (vi - 1))
      if diverged and step == 4 then loss = "nan" end
      local diag = (step % 4 == 3) and string.format("%.9g,%.9g,,%.9g", 3.0 - 0.1 * step,
        0.3 + 0.01 * step, 0.5) or ",,,"
      rows[#rows + 1] = string.format("%d,0.0003,%s,%.9g,%.9g,%s", step, loss, 1.0 / (step + 1),
        0.3 + 0.001 * step, diag)
    end
    check.write(d .. "/log.csv", table.concat(rows, "\n") .. "\n")
    seal(d)
  end
end
-- The hand-made summary's per_variant gains every metric the records carry that it lacks,
-- described as the analysis describes them (analysis.read_run, stats.summary): the report
-- reads per-variant statistics from the summary only.
local function complete_per_variant(study_dir)
  local analysis, stats = require "repro.analysis", require "stats"
  local sum = json.decode(assert(fs.read(study_dir .. "/summary.json")))
  local names = require("repro.study").metric_names()
  for _, v in ipairs(VARIANTS) do
    local runs = {}
    for seed = 1, 3 do
      runs[seed] = assert(analysis.read_run(string.format("%s/%s/seed-%d", study_dir, v, seed),
        names))
    end
    local pv = sum.per_variant[v]
    for _, m in ipairs(names) do
      local xs = {}
      for seed = 1, 3 do xs[#xs + 1] = runs[seed].values[m] end
      if #xs > 0 and not pv.metrics[m] then
        local sm = stats.summary(xs)
        pv.metrics[m] = { n = sm.n, mean = sm.mean, sd = sm.sd, min = sm.min, max = sm.max,
          median = sm.median }
      end
    end
  end
  check.write(study_dir .. "/summary.json", json.pretty(sum))
end
complete_per_variant(exp .. "/final")
digest_summary(exp .. "/final")

-- The report ------------------------------------------------------------------------------
local paper, data = dir .. "/paper", dir .. "/plots/data"
fs.mkdir_p(paper .. "/tables")
check.write(paper .. "/tables/stale.tex", "% a table of a study that no longer exists\n")
-- the summaries are hand-made: read as they are (--trust-summaries), not recomputed
local cmd = string.format("%s report --experiments %s --paper %s --plots-data %s " ..
  "--trust-summaries --all-numbers", repro, exp, paper, data)
local code, _, err = check.run(cmd)
t:eq(code, 0, "report exits 0: " .. err)
t:ok(err:find("1 study (final)", 1, true), "report names the study: " .. err)
t:ok(not fs.exists(paper .. "/tables/stale.tex"), "a stale generated table is removed")

local function has_line(path, line)
  local text = fs.read(path) or ""
  for l in text:gmatch("[^\n]+") do
    if l == line then return true end
  end
  io.stderr:write("---- ", path, "\n", text, "----\n")
  return false
end
local T = paper .. "/tables/"

-- The seeds' Table 1 layout: from the summary's per_variant, which complete_per_variant
-- filled from the records as the analysis would (the report never recomputes one).
t:ok(has_line(T .. "final_seeds.tex", "none & 3 & \\num{8.200} $\\pm$ \\num{0.800} & " ..
  "\\num{0.4100} $\\pm$ \\num{0.0100} & \\num{0.600} $\\pm$ \\num{0.100} & " ..
  "\\num{0.300} $\\pm$ \\num{0.000} \\\\"), "seeds table: none row")
t:ok(has_line(T .. "final_seeds.tex", "RMSNorm & 3 (1 div.) & \\num{7.600} $\\pm$ \\num{0.566} & " ..
  "\\num{0.4070} $\\pm$ \\num{0.0071} & \\num{0.550} $\\pm$ \\num{0.071} & " ..
  "\\num{11.300} $\\pm$ \\num{0.000} \\\\"), "seeds table: a diverged run is left out and counted")

-- The paired table.
local P = T .. "final_paired.tex"
t:ok(has_line(P, "Comparison & $\\Delta$ & 95\\,\\% CI & $d_z$ [CI] & $p_t$ & " ..
  "$p_\\mathrm{sf}$ (floor \\num{0.250}) & $p_\\mathrm{Holm}$ & MDE & Verdict \\\\"),
  "paired table: header with the common sign-flip floor")
t:ok(has_line(P, "LayerNorm${}-{}$none & \\num{-0.0500} & [\\num{-0.0800}, \\num{-0.0200}] & " ..
  "\\num{-2.50} [\\num{-4.10}, \\num{-0.60}] & \\num{0.0123} & \\num{0.250} & \\num{0.0246} & " ..
  "\\num{0.0400} & better \\\\"), "paired table: a regular comparison")
t:ok(has_line(P, "RMSNorm${}-{}$none$^{a}$ & \\num{-0.0200} & [\\num{-0.3000}, " ..
  "\\num{0.2600}] & \\num{-0.80} [\\num{-2.00}, \\num{1.50}] & \\num{0.450} & " ..
  "\\num{0.500} (\\num{0.500}) & \\num{0.900} & \\num{0.5000} & inconclusive \\\\"),
  "paired table: the decision interval where BCa is undefined, its own floor, its note")
t:ok(has_line(P, "LayerNorm${}-{}$none$^{b}$ & \\num{0.0} & --- & --- & --- & \\num{1.00} & " ..
  "\\num{1.00} & --- &  \\\\"), "paired table: a degenerate comparison shows dashes")
t:ok(has_line(P, "LayerNorm${}-{}$RMSNorm$^{c}$ & --- & --- & --- & --- & --- & \\num{1.00} & " ..
  "--- &  \\\\"), "paired table: a comparison with no pairs")
t:ok(has_line(P, "$^{b}$\\,All 3 seed pairs give the same difference (\\num{0.0}): with no " ..
  "spread the $t$-test, its interval, $d_z$ and the minimum detectable effect are undefined, " ..
  "and $p$ is the exact sign-flip test's.\\\\"),
  "paired table: why the degenerate comparison's statistics are undefined, in words")
t:ok(has_line(P, "$^{a}$\\,The BCa bootstrap interval (descriptive, not shown) is undefined " ..
  "for these differences.\\\\"), "paired table: the two BCa notes share one mark")
local paired_text = fs.read(P) or ""
t:ok(not paired_text:find("$^{d}$", 1, true) and not paired_text:find("p\\_", 1, true),
  "paired table: three notes, none in the statistics module's own words")

-- The calibration table and an absent study.
t:ok(has_line(T .. "final_calibration.tex", "optimal temperature $T^*$ & \\num{1.100} $\\pm$ " ..
  "\\num{0.000} & \\num{1.100} $\\pm$ \\num{0.000} & \\num{1.100} $\\pm$ \\num{0.000} \\\\"),
  "calibration table row")
t:ok(has_line(T .. "prelim_seeds.tex", "\\begin{center}\\emph{Not available: the prelim study " ..
  "has not been run yet (there is no " ..
  tex.escape(exp:match("([^/]+)$") .. "/prelim/summary.json") ..
  ").}\\end{center}"), "an absent study's table says so")
t:ok(has_line(T .. "studies.tex", "scale & \\multicolumn{6}{l}{\\emph{no records yet}} \\\\"),
  "the studies table lists an absent study")

-- numbers.tex.
local N = paper .. "/numbers.tex"
for _, line in ipairs({
  "\\newcommand{\\FinalNSeeds}{3}",
  "\\newcommand{\\FinalSeedList}{1--3}",
  "\\newcommand{\\FinalNDiverged}{1}",
  "\\newcommand{\\FinalNoneValPpl}{\\num{8.200}}",
  "\\newcommand{\\FinalRmsnormParams}{\\num{1032}}",
  "\\newcommand{\\FinalLayernormVsNoneVerdict}{better}",
  "\\newcommand{\\FinalLayernormVsNonePrimaryDelta}{\\num{-0.0500}}",
  "\\newcommand{\\FinalLayernormVsNonePrimaryCI}{[\\num{-0.0800}, \\num{-0.0200}]}",
  "\\newcommand{\\FinalLayernormVsNoneValLossPHolm}{\\num{0.0246}}",
  "\\newcommand{\\FinalLayernormVsNonePplChange}{\\num{-4.88}\\,\\%}",
  "\\newcommand{\\FinalLayernormVsNoneSpikesReason}{All 3 seed pairs give the same " ..
    "difference (\\num{0.0}): with no spread the $t$-test, its interval, $d_z$ and the minimum " ..
    "detectable effect are undefined, and $p$ is the exact sign-flip test's.}",
  "\\expandafter\\def\\csname ReportHave@final\\endcsname{}",
  "\\expandafter\\def\\csname ReportFig@final_loss\\endcsname{}",
  "\\newcommand{\\ReportOverrides}{}",
}) do
  t:ok(has_line(N, line), "numbers.tex: " .. line)
end
t:ok(not (fs.read(N) or ""):find("ValLossRelChange", 1, true) and
  not (fs.read(N) or ""):find("SpikesRelChange", 1, true),
  "numbers.tex: no percentage of a loss in nats or of a count")

-- Data files.
t:ok(has_line(data .. "/final_loss.dat", "0 4.22 4.21 4.23 3"), "loss curve: mean, min, max, n")
t:ok(has_line(data .. "/final_loss.dat", "4 3.855 3.85 3.86 2"),
  "loss curve: the diverged run's nan step is left out")
t:ok(has_line(data .. "/final_reliability.dat", "0.1 0.12 600"), "reliability bins pooled")
t:ok(not fs.exists(data .. "/final_classnorm_digit.dat"), "a class without values has no file")

-- Never nan or inf in anything generated.
local function has_nonfinite(text)
  text = text:lower()
  return text:find("%f[%w]nan%f[%W]") ~= nil or text:find("%f[%w]%-?inf%f[%W]") ~= nil
end
local listing = fs.capture("find " .. fs.quote(paper) .. " " .. fs.quote(data) ..
  " -type f \\( -name '*.tex' -o -name '*.dat' \\)") or ""
local n_files, bad = 0, {}
for p in listing:gmatch("[^\n]+") do
  n_files = n_files + 1
  if has_nonfinite(fs.read(p)) then bad[#bad + 1] = p end
end
t:ok(n_files > 20, "tables, numbers and data written: " .. n_files)
t:eq(#bad, 0, "no nan or inf in the output: " .. table.concat(bad, ", "))

-- Figures: every figure of the final study as PDF and PNG; the others are absent.
for _, f in ipairs(manifest.figures) do
  if f.study == "final" then
    t:ok(fs.exists(paper .. "/figures/" .. f.name .. ".pdf") and
      fs.exists(paper .. "/figures/png/" .. f.name .. ".png"), "figure rendered: " .. f.name)
  elseif f.study then
    t:ok(not fs.exists(paper .. "/figures/" .. f.name .. ".pdf"), "no figure: " .. f.name)
  end
end
t:ok((fs.read(paper .. "/figures/final_loss.pdf") or ""):find("D:19700101000000", 1, true),
  "figure PDF has the fixed date")

-- A second run writes nothing.
local function digest()
  return fs.capture("cd " .. fs.quote(dir) .. " && find paper plots -type f | sort | " ..
    "xargs sha256sum")
end
local before = digest()
code, _, err = check.run(cmd)
t:eq(code, 0, "second report exits 0")
t:ok(err:find(": 0 files changed", 1, true), "second run changes no file: " .. err)
t:eq(digest(), before, "second run: same bytes")

-- The manifest: plain data, each error names the file and the field.
local function bad_manifest(text)
  local path = dir .. "/bad_manifest.lua"
  check.write(path, text)
  local ok, e = pcall(report.load_manifest, path)
  return not ok and type(e) == "table" and e.message or tostring(e)
end
local msg = bad_manifest('return { studies = {}, tables = { { name = "x", kind = "pie", ' ..
  'study = "final" } }, figures = {} }')
t:ok(msg:find("bad_manifest.lua: tables[1]: kind: expected one of", 1, true),
  "manifest: an unknown table kind is named: " .. msg)
msg = bad_manifest('return { studies = {}, tables = {}, figures = { { name = "f", ' ..
  'kind = "curves", study = "final", column = "loss" } } }')
t:ok(msg:find("figures[1]: ylabel: missing", 1, true), "manifest: a missing field: " .. msg)
msg = bad_manifest('return { studies = {}, tables = { { name = "x", kind = "paired", ' ..
  'study = "final", section = "outcomes" } }, figures = {} }')
t:ok(msg:find("tables[1]: section: expected one of sweep_outcomes, got outcomes", 1, true),
  "manifest: an unknown section of a paired table: " .. msg)
msg = bad_manifest('return { studies = {}, tables = { { name = "x", kind = "seeds", ' ..
  'study = "final", section = "sweep_outcomes" } }, figures = {} }')
t:ok(msg:find("tables[1]: section: unknown field", 1, true),
  "manifest: section is a field of the paired kind only: " .. msg)
msg = bad_manifest('return { studies = {}, tables = {}, figures = {}, names = { keys = { ' ..
  '{ key = "warmup", format = "with warmup %s", label = 3 } } } }')
t:ok(msg:find("names: keys[1] (warmup): label: expected a string with %s or a table", 1, true),
  "manifest: a bad table label of a key: " .. msg)
msg = bad_manifest('return { studies = { os.getenv("HOME") }, tables = {}, figures = {} }')
t:ok(msg:find("bad_manifest.lua", 1, true) and msg:find("os", 1, true),
  "manifest: loaded with no globals: " .. msg)

-- A new study: a study file run at a tiny budget (as make reproduce QUICK=1 would) is in
-- no file of the paper until the manifest opts it in, one line (its `appendix`); then it
-- gets its section of the appendix, with no edit to the library.
local corpus = dir .. "/corpus.txt"
check.write(corpus, string.rep("to be or not to be, that is the question.\n", 400))
local study_file = dir .. "/zz_newstudy.lua"
check.write(study_file, string.format([[
return {
  name = "zz_newstudy",
  description = "A study the paper's manifest does not list.",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, data = %q },
  variants = { { name = "none", embed_norm = "none" },
    { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2, 3, 4, 5, 6 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm",
    resamples = 1000, test = "t" },
}
]], corpus))
code, _, err = check.run(string.format("%s run %s --out-root %s --set %s", repro,
  fs.quote(study_file), fs.quote(exp), "iters=6,warmup=2,diag_every=3,diag_windows=2"))
t:eq(code, 0, "the new study runs: " .. err)
local before = {}
for _, f in ipairs({ "appendix.tex", "studies.tex", "compute.tex", "checklist.tex" }) do
  before[f] = fs.read(T .. f)
end
before.numbers = fs.read(N)
code, _, err = check.run(cmd)
t:eq(code, 0, "report with the new study, not in the manifest, exits 0: " .. err)
for _, f in ipairs({ "appendix.tex", "studies.tex", "compute.tex", "checklist.tex" }) do
  t:eq(fs.read(T .. f), before[f], "a study the manifest does not name changes no " .. f)
end
t:eq(fs.read(N), before.numbers, "nor numbers.tex")
t:ok(not fs.exists(T .. "zz_newstudy_paired.tex") and
  not fs.exists(paper .. "/figures/zz_newstudy_forest.pdf"), "nor has a table or figure")
-- opted in: the paper's manifest with the new studies in its appendix (one line)
local opted = dir .. "/opted_manifest.lua"
local mtext = assert(fs.read("paper/paper.lua"))
local mopted, nsub = mtext:gsub('appendix = {', 'appendix = { "zz_copy", "zz_newstudy",')
t:eq(nsub, 1, "the manifest's appendix line")
check.write(opted, mopted)
cmd = cmd .. " --manifest " .. fs.quote(opted)
code, _, err = check.run(cmd)
t:eq(code, 0, "report with the new study exits 0: " .. err)
local appendix = fs.read(T .. "appendix.tex") or ""
t:ok(appendix:find("\\subsection{The zz\\_\\allowbreak{}newstudy study}", 1, true) and
  appendix:find("\\ReportWideTable{zz_newstudy_paired}", 1, true) and
  appendix:find("\\ReportFigure{zz_newstudy_forest}", 1, true) and
  appendix:find("\\ZzNewstudyVerdicts", 1, true), "the appendix has the new study: " .. appendix)
t:ok(not appendix:find("{final_paired}", 1, true), "the appendix leaves out the manifest's studies")
t:ok((fs.read(T .. "zz_newstudy_paired.tex") or ""):find("LayerNorm${}-{}$none", 1, true),
  "the new study's paired table")
t:ok(fs.exists(paper .. "/figures/zz_newstudy_forest.pdf"), "the new study's forest plot")
t:ok(has_line(N, "\\expandafter\\def\\csname ReportHave@zz_newstudy\\endcsname{}"),
  "numbers.tex: the new study exists")
t:ok(has_line(T .. "studies.tex", "scale & \\multicolumn{6}{l}{\\emph{no records yet}} \\\\") and
  (fs.read(T .. "studies.tex") or ""):find("zz\\_\\allowbreak{}newstudy & 2 & 1--6", 1, true),
  "the studies table lists it after the manifest's studies")

-- The reproducibility tables (lua/repro/report/tex_compute.lua): a second study whose runs are
-- identical configs of the new one's is copied, and counted once among the distinct runs
-- (in the row listed first: zz_copy sorts before zz_newstudy).
local copy_file = dir .. "/zz_copy.lua"
check.write(copy_file, (assert(fs.read(study_file)):gsub("zz_newstudy", "zz_copy")
  :gsub("seeds = { 1, 2, 3, 4, 5, 6 }", "seeds = { 1, 2 }")))
code, _, err = check.run(string.format("%s run %s --out-root %s --set %s", repro,
  fs.quote(copy_file), fs.quote(exp), "iters=6,warmup=2,diag_every=3,diag_windows=2"))
t:eq(code, 0, "the copying study runs: " .. err)
t:ok(err:find("4 copied", 1, true), "its 4 runs are copies: " .. err)
code, _, err = check.run(cmd)
t:eq(code, 0, "report with the copying study exits 0: " .. err)
local compute = fs.read(T .. "compute.tex") or ""
t:ok(compute:find("\nzz\\_\\allowbreak{}newstudy & 12 & 8 & 6 & ", 1, true),
  "compute: 8 of the new study's 12 runs are new configs: " .. compute)
t:ok(compute:find("\nzz\\_\\allowbreak{}copy & 4 & 4 & 6 & ", 1, true),
  "compute: the copying study's 4 runs come first (its row is first)")
t:ok(compute:find("\ndistinct runs & 21 & 21 & 6--8 & ", 1, true),
  "compute: 9 + 12 distinct runs, the copies counted once")
t:ok(compute:find("\nfinal & 9 & 9 & 8 & [^\n]* & %-%-%- & ") ~= nil,
  "compute: records without a manifest have no time (a dash, not 0)")
local checklist = fs.read(T .. "checklist.tex") or ""
t:ok(checklist:find("25 runs in 3 studies, 21 distinct configurations", 1, true) and
  checklist:find("zz\\_\\allowbreak{}copy 1, 2", 1, true) and
  checklist:find("embed\\_\\allowbreak{}norm: layernorm, none, rmsnorm", 1, true),
  "checklist: runs, seeds and the varied hyperparameters from the records: " .. checklist)

-- The paper compiles against this output (the final study and the new one present): the
-- supplement, then the main text, which cites the supplement's sections (as make paper).
local latex = dir .. "/latex"
check.write(paper .. "/printsize.tex", assert(fs.read("paper/printsize.tex")))
for _, doc in ipairs({ "supplement", "main" }) do
  check.write(paper .. "/" .. doc .. ".tex", assert(fs.read("paper/" .. doc .. ".tex")))
  code = check.run("cd " .. fs.quote(paper) .. " && TEXINPUTS=" .. fs.quote(latex) .. ": " ..
    "SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1 latexmk -pdf -interaction=nonstopmode " ..
    "-halt-on-error -quiet -outdir=" .. fs.quote(latex) .. " " .. doc .. ".tex")
  t:eq(code, 0, doc .. ".tex compiles")
  local log = fs.read(latex .. "/" .. doc .. ".log") or ""
  t:ok(not log:find("undefined", 1, true), doc .. ": no undefined reference or control sequence")
  local over = log:find("Overfull \\hbox", 1, true)
  t:ok(not over, doc .. ": no overfull line" .. (over and (": " .. log:sub(over, over + 400)) or ""))
end
local _, text = check.run("pdftotext " .. fs.quote(latex .. "/supplement.pdf") .. " -")
t:ok(not has_nonfinite(text or ""), "PDF text has no nan or inf")
text = (text or ""):gsub("\u{2212}", "-"):gsub("%s+", "")
for _, want in ipairs({ "8.200", "-0.0500", "0.0246", "better", "Notavailableyet:theprelimstudy",
  "All3seedpairsgivethesamedifference", "Otherstudies", "newstudystudy", "Astudythepaper",
  "Pairedcomparisonsofthezz" }) do
  t:ok(text:find(want, 1, true), "PDF text contains " .. want)
end

-- Each verdict once: the final study's first verdict row appears once in the PDF.
local once, n_once, at = "becauseHolm-adjustedp0.0246", 0, 1
while true do
  local a, b = text:find(once, at, true)
  if not a then break end
  n_once, at = n_once + 1, b + 1
end
t:eq(n_once, 1, "the verdict row is printed once in the PDF")
-- Figures that earn their place ------------------------------------------------------------
-- The generic rules: a figure whose data are all zero is not drawn (a sentence takes its
-- place), and a set of runs is shown once however many studies copied it.
t:ok(plot.all_zero({ 0, 0, 0 }) and plot.all_zero({}) and not plot.all_zero({ 0, 0.5 }),
  "all_zero: zeros and nothing are empty, one value is not")
local function set_of(list)
  local set = {}
  for _, k in ipairs(list) do set[k] = true end
  return { set = set, n = #list }
end
local dup = plot.duplicates({
  set_of({ "t:final/ln/1", "t:final/ln/2", "b:final/none/1", "b:final/none/2" }),
  set_of({ "t:final/ln/1", "b:final/none/1" }), -- a copy of seed 1 only
  set_of({ "t:final/ln/1", "t:final/ln/2", "b:final/none/1", "b:final/none/2" }), -- all
  set_of({ "t:scale/ln/1", "b:scale/none/1" }), -- runs of its own
  set_of({ "b:final/ln/1", "t:final/none/1" }), -- the same runs the other way round
})
t:eq(dup[2], 1, "duplicates: a subset of another row's runs is shown through it")
t:eq(dup[3], 1, "duplicates: the same runs later are shown through the first")
t:ok(dup[1] == nil and dup[4] == nil and dup[5] == nil,
  "duplicates: the first, a row of its own runs and the reversed comparison are kept")
dup = plot.duplicates({ set_of({ "t:a/1", "b:b/1" }), set_of({ "t:a/1", "t:a/2", "b:b/1", "b:b/2" }) })
t:ok(dup[1] == 2 and dup[2] == nil, "duplicates: a later row with more seeds shows the earlier")

-- A study that copied final's runs (manifest.json's copied_from, as bin/repro run writes
-- it), with one comparison on seeds 1-2 only: the forest shows final's rows once and
-- names the copy in the copying study's header; a divergence figure of a study where no
-- run diverged is a sentence, not an empty plot.
local copy = exp .. "/zz_copy"
local csum = json.decode(src)
csum.comparisons[1].seeds = json.array({ 1, 2 })
fs.mkdir_p(copy)
check.write(copy .. "/summary.json", json.pretty(csum))
for _, v in ipairs(VARIANTS) do
  for seed = 1, 3 do
    local d = string.format("%s/%s/seed-%d", copy, v, seed)
    fs.mkdir_p(d)
    for _, f in ipairs({ "config.json", "metrics.json", "log.csv" }) do
      check.write(d .. "/" .. f, assert(fs.read(string.format("%s/final/%s/seed-%d/%s", exp, v,
        seed, f))))
    end
    seal(d, { copied_from = string.format("final/%s/seed-%d", v, seed) })
  end
end
digest_summary(copy)
local fig_manifest = dir .. "/fig_manifest.lua"
check.write(fig_manifest, [[
return { studies = { "final", "zz_copy" }, appendix = { "zz_newstudy" }, tables = {},
  text_width = 6.5,
  figures = {
    { name = "f_forest", kind = "forest", metric = "val_loss", width = "0.9\\linewidth",
      labels = { final = "The final protocol" }, caption = "c" },
    { name = "f_div", kind = "divergence", study = "zz_newstudy", width = "0.5\\linewidth",
      caption = "c" },
    { name = "f_div_final", kind = "divergence", study = "final", width = "0.5\\linewidth",
      caption = "c" },
  } }
]])
local fpaper, fdata = dir .. "/fig_paper", dir .. "/fig_plots"
local r = report.generate({ experiments = exp, paper = fpaper, plots_data = fdata,
  manifest = fig_manifest, figures = true, gp_dir = "plots", trust_summaries = true })
local specs = {}
for _, sp in ipairs(r.figures) do specs[sp.name] = sp end
for _, sp in ipairs(r.figures) do
  if not sp.skip then
    t:ok(not plot.all_zero(sp.values), "a drawn figure draws something: " .. sp.name)
  end
end
t:ok(specs.f_div.skip and specs.f_div.skip:find("no run of the zz_newstudy study diverged", 1,
  true), "a divergence figure with no divergence is a sentence: " .. tostring(specs.f_div.skip))
t:ok(not fs.exists(fpaper .. "/figures/f_div.pdf") and not fs.exists(fdata .. "/f_div.dat"),
  "an all-zero figure is neither drawn nor written")
t:ok(has_line(fpaper .. "/numbers.tex", "\\expandafter\\def\\csname ReportNoFig@f_div\\endcsname{" ..
  "no run of the zz\\_\\allowbreak{}newstudy study diverged, at any learning rate}"),
  "numbers.tex: the sentence in the all-zero figure's place")
t:ok(not specs.f_div_final.skip and fs.exists(fpaper .. "/figures/f_div_final.pdf"),
  "a divergence figure with a divergence is drawn")
local rows = {}
for line in (fs.read(fdata .. "/f_forest.dat") or ""):gmatch("[^\n]+") do
  if not line:match("^#") then rows[#rows + 1] = line end
end
t:eq(#rows, 3, "forest: the manifest's studies only (zz_newstudy, not listed, has its own " ..
  "appendix figure): final's 3 val_loss rows once, none of the copy's: " ..
  table.concat(rows, " | "))
local heads = {}
for i = 1, specs.f_forest.vars and specs.f_forest.vars.nheads or 0 do
  heads[#heads + 1] = '"' .. specs.f_forest.vars["head" .. i] .. '"'
end
heads = table.concat(heads, " ")
t:ok(heads:find('"The final protocol"', 1, true) and heads:find('"zz_copy"', 1, true),
  "forest: a header per study, the manifest's label or the study's name: " .. heads)
t:ok(heads:find("the runs of final (seeds 1-2), shown above", 1, true),
  "forest: the copying study names the runs it shares, with the seeds: " .. heads)

-- A key a variant leaves unset (derived from another: the embeddings' std, the Linear
-- init and the residual rescaling from the init scheme) is named by the value the engine
-- trains with, never "= nil" (init_parts' half fraction sets them on some variants only)
do
  local data = require "repro.report.data"
  local sum = { analysis = { primary = "val_loss", baseline = "ref-none" }, base = { n_layer = 4 },
    seeds = { 1 }, per_variant = {}, variants = {
      { name = "ref-none", overrides = { embed_norm = "none" } },
      { name = "TL-none", overrides = { embed_norm = "none", tok_init_std = 1.0,
        linear_init = "torch", resid_rescale = false } },
      { name = "tinit-none", overrides = { embed_norm = "none", init = "torch" } } } }
  local names = { keys = {
    { key = "tok_init_std", format = "with token embeddings drawn at $\\sigma = %s$" },
    { key = "linear_init", format = { torch = "with PyTorch's Linear initialization",
      gpt2 = "with GPT-2's Linear initialization" } },
    { key = "resid_rescale", format = { [true] = "with residual rescaling",
      [false] = "without residual rescaling" } } } }
  local s = data.new_study(sum, { name = "unset", dir = dir, names = names,
    factor = { key = "embed_norm", baseline = "none" }, no_records = true })
  local ref, tl, ti = s.variant_by_name["ref-none"], s.variant_by_name["TL-none"],
    s.variant_by_name["tinit-none"]
  t:ok(not (ref.prose .. tl.prose .. ti.prose):find("nil", 1, true),
    "unset keys: no variant is named '= nil': " .. ref.prose .. " | " .. tl.prose)
  t:ok(ref.prose:find("\\sigma = \\num{0.02}", 1, true) and ref.prose:find("GPT-2's Linear", 1, true)
    and ref.prose:find("with residual rescaling", 1, true),
    "unset keys: the GPT-2 scheme's values (0.02, its Linear init, rescaled): " .. ref.prose)
  t:ok(tl.prose:find("\\sigma = 1", 1, true) and tl.prose:find("PyTorch's Linear", 1, true)
    and tl.prose:find("without residual rescaling", 1, true), "set keys as set: " .. tl.prose)
  t:ok(ti.prose:find("\\sigma = 1", 1, true) and ti.prose:find("PyTorch's Linear", 1, true)
    and ti.prose:find("without residual rescaling", 1, true),
    "unset keys under init = torch: the torch scheme's values: " .. ti.prose)
end

check.rmtree(dir)
t:done()
