-- numbers.tex of the report (lua/repro/report/init.lua): one macro per number the paper's
-- prose cites, the verdict tables, and which studies and figures exist.  Per study
-- (\<Study>...): its design, config, per-variant means and sds, every comparison's
-- statistics and verdicts, its nested summaries and a task study's numbers; then the
-- statistics section's facts (\Report..., \Prereg...).  Every number is read from the
-- summary or, for metrics the summary does not describe, from the records.  A relative
-- change (...RelChange) is defined only for a metric whose kind (texfmt.METRIC) is
-- neither a loss in nats nor a count.
local stats = require "stats"
local F = require "repro.report.texfmt"
local gnuplot = require "repro.report.gnuplot"
local data = require "repro.report.data"
local tables = require "repro.report.tex_tables"
local sweep = require "repro.report.tex_sweep"
local task_tex = require "repro.report.tex_tasks"
local prose = require "repro.report.tex_prose"
local tbl = require "repro.report.table"
local words = require "repro.analysis.words"
local pseq = require "repro.report.sequential"
local study_tables = require "repro.report.study_tables"
local prereg = require "repro.report.tex_prereg"
local base = require "repro.core.base"

local M = {}
local finite = F.finite
local DASH = F.DASH


local function metric_macro(m)
  return (F.METRIC[m] or {}).macro or F.macro(m)
end

-- The definitions of numbers.tex, in order; a name defined twice is an error.
local function new_defs()
  local d = { list = {}, seen = {} }
  function d.def(name, value)
    if d.seen[name] then error("report: two numbers would be named \\" .. name, 0) end
    d.seen[name] = true
    d.list[#d.list + 1] = string.format("\\newcommand{\\%s}{%s}", name, value)
  end
  function d.cs(prefix, key, value)
    d.list[#d.list + 1] = string.format("\\expandafter\\def\\csname %s@%s\\endcsname{%s}",
      prefix, F.key(key), value)
  end
  function d.comment(text)
    d.list[#d.list + 1] = "% " .. text
  end
  return d
end

-- Which studies (the manifest's and every other with a summary) and figures exist.
local function availability(d, ctx)
  for _, n in ipairs(ctx.names) do
    if ctx.by_name[n] then
      d.cs("ReportHave", n, "")
    else
      d.cs("ReportAbsent", n, tables.absent_text(ctx, n))
    end
  end
  for _, f in ipairs(ctx.figures or {}) do
    if f.skip then
      d.cs("ReportNoFig", f.name, F.escape(f.skip))
    elseif ctx.rendered == nil or ctx.rendered[f.name] then
      d.cs("ReportFig", f.name, "")
      d.cs("ReportFigFont", f.name, string.format("%g",
        gnuplot.smallest_font(ctx.gp_dir, f.script, f.vars)))
    else
      d.cs("ReportNoFig", f.name, "the figure was not rendered (report run with --no-figures)")
    end
  end
end

-- A note on the first page when any study ran with command-line overrides (QUICK): the
-- studies grouped by their overrides.
local function overrides(d, ctx)
  local groups, order = {}, {}
  for _, s in ipairs(ctx.studies) do
    local o = s.summary.command_line_overrides
    if o then
      local kv = {}
      for _, k in ipairs(base.sorted_keys(o)) do kv[#kv + 1] = k .. " " .. F.config_text(o[k]) end
      local key = table.concat(kv, ", ")
      if not groups[key] then
        groups[key] = {}
        order[#order + 1] = key
      end
      table.insert(groups[key], s.name)
    end
  end
  local quick = {}
  for _, key in ipairs(order) do
    quick[#quick + 1] = table.concat(groups[key], ", ") .. " with " .. key
  end
  d.def("ReportOverrides", #quick == 0 and "" or ("\\emph{" .. F.escape(
    "These results come from studies run with command-line overrides of their configs, " ..
    "not the pre-registered protocol: " .. table.concat(quick, "; ") ..
    ". They test the pipeline, not the hypothesis.") .. "}\\par\\medskip"))
end

-- A study's design: seeds, variants, runs, iterations and its pre-registered analysis.  A
-- nested summary's (report_data.SECTIONS, s.section_key) has no runs of its own: what it
-- compares and how, with each metric's minimum effect when it pre-registers one per
-- metric (`deltas`).
local function design(d, s, S)
  local an, sec = s.analysis, s.section_key
  d.comment(sec and (s.name .. ": " .. sec) or s.name)
  d.def(S .. "NSeeds", string.format("%d", #s.seeds))
  if not sec then d.def(S .. "SeedList", F.seed_list(s.seeds)) end
  d.def(S .. "NVariants", string.format("%d", #s.variants))
  if not sec then
    local n_runs, n_div = s:run_counts()
    local iters = s.variants[1] and s:config_value(s.variants[1].name, "iters")
    d.def(S .. "Iters", iters and F.config_text(iters) or DASH)
    d.def(S .. "NRuns", string.format("%d", n_runs))
    d.def(S .. "NDiverged", string.format("%d", n_div))
  end
  d.def(S .. "Primary", s.primary and F.metric_short(s.primary) or DASH)
  d.def(S .. "Better", F.escape(an.better or "?"))
  d.def(S .. "MinEffect", s.primary and F.value(s.primary, an.min_effect) or DASH)
  if sec then
    local deltas = type(s.summary.deltas) == "table" and s.summary.deltas or {}
    for _, m in ipairs(an.metrics or {}) do
      d.def(S .. metric_macro(m) .. "MinEffect", F.value(m, deltas[m]))
    end
  end
  d.def(S .. "Alpha", finite(an.alpha) and F.num(an.alpha, F.sig_decimals(an.alpha, 2)) or DASH)
  d.def(S .. "NTests", string.format("%d", tables.family_size(s)))
  if not sec then
    d.def(S .. "NTestsRuleOne", string.format("%d", #(s.summary.comparisons or {}) +
      #(s.summary.interactions or {})))
    d.def(S .. "Family", F.escape(words.family(an)))
  end
  local alpha = finite(an.alpha) and an.alpha or stats.DEFAULT_ALPHA
  d.def(S .. "HolmLevel", F.p(an.holm_first_level or alpha / math.max(1, tables.family_size(s))))
  d.def(S .. "Test", an.test == "signflip" and "exact sign-flip test" or "paired $t$-test")
  if sec then return end
  d.def(S .. "SignflipFloor", #s.seeds > 0 and F.p(2.0 ^ (1 - #s.seeds)) or DASH)
  d.def(S .. "BcaCoverage", #s.seeds > 0 and
    ("\\num{" .. F.fixed(100 * (1 - 2.0 ^ (1 - #s.seeds)), 2) .. "}\\,\\%") or DASH)
  -- seeds from power (lua/repro/study/init.lua): the sd used, the pilot's own sd when an upper
  -- confidence limit replaced it, the seeds power asked for and the power at the seeds run
  local p = s.summary.analysis and s.summary.analysis.seeds_from_power
  if p then
    d.def(S .. "PowerSd", F.num(p.sd, 3))
    d.def(S .. "PowerPilotSd", F.num(p.sd_pilot or p.sd, 3))
    d.def(S .. "PowerUpper", p.upper and ("\\num{" .. F.fixed(100 * p.upper, 0) .. "}\\,\\%")
      or DASH)
    d.def(S .. "PowerDf", p.df and string.format("%g", p.df) or DASH)
    d.def(S .. "PowerNeeded", string.format("%d", p.n_uncapped or p.n))
    d.def(S .. "PowerAchieved", "\\num{" .. F.fixed(p.power_achieved or 0, 2) .. "}")
    -- how the seeds run relate to the rule, in words: capped, raised to the minimum, or
    -- what power asked for
    local asked = p.n_uncapped or p.n
    local rule
    if p.capped or (p.max and asked > p.n) then
      rule = string.format("the power rule asked for %d; the pre-registered maximum of %d " ..
        "ran, with power \\num{%s} at the minimum effect", asked, p.n,
        F.fixed(p.power_achieved or 0, 2))
    elseif p.min and asked < p.n then
      rule = string.format("the pre-registered minimum; the power rule asked for %d", asked)
    else
      rule = "the number the power rule asked for"
    end
    d.def(S .. "PowerRule", rule)
  end
end

-- The config keys whose values the prose cites (its Method section, the design of each
-- study): macro suffix and whether the value is a learning rate (printed as m x 10^e).
local CONFIG_MACROS = {
  { "lr", "Lr", true }, { "min_lr", "MinLr", true }, { "warmup", "Warmup" },
  { "iters", "Iters" }, { "n_layer", "NLayer" }, { "d_model", "DModel" },
  { "n_head", "NHead" }, { "context", "Context" }, { "batch", "Batch" },
  { "embed_init_std", "EmbedInitStd" }, { "weight_decay", "WeightDecay" },
  { "grad_clip", "GradClip" }, { "beta1", "BetaOne" }, { "beta2", "BetaTwo" },
}

-- A config value as the prose prints it: a learning rate below 0.01 as m x 10^e (3e-4),
-- any other number as it is written in the config.
local function config_num(v, lr)
  if type(v) ~= "number" or not finite(v) then return F.escape(tostring(v)) end
  return lr and F.lr(v) or "\\num{" .. F.config_text(v) .. "}"
end

-- The largest parameter count of the variants of `studies` (their records'), and as
-- "\num{1.6}~million" for the prose.
local function max_params(studies)
  local pmax
  for _, s in ipairs(studies) do
    for _, v in ipairs(s.variants) do
      local p = s:params(v.name)
      if p and (pmax == nil or p > pmax) then pmax = p end
    end
  end
  return pmax and ("\\num{" .. string.format("%.2g", pmax / 1e6) .. "}~million") or DASH
end

-- A study's config as its run records have it (else its summary's base and the engine's
-- defaults), for the keys of CONFIG_MACROS: \<Study>Cfg<Key> (the value its variants
-- share, or "min--max" when they differ), ...Min and ...Max; \<Study>CfgLrDecay, the
-- peak over the final learning rate (a shared ratio), \<Study>MaxParams, the largest
-- parameter count of its variants in millions, and \<Study>Vocab and \<Study>EceBins
-- from its records' metrics.
local function config(d, s, S)
  local function values(key)
    local xs = {}
    for _, v in ipairs(s.variants) do xs[#xs + 1] = s:config_value(v.name, key) end
    return gnuplot.extent(xs)
  end
  for _, e in ipairs(CONFIG_MACROS) do
    local key, name, lr = e[1], e[2], e[3]
    local lo, hi = values(key)
    if lo == nil then
      d.def(S .. "Cfg" .. name, DASH)
      d.def(S .. "Cfg" .. name .. "Min", DASH)
      d.def(S .. "Cfg" .. name .. "Max", DASH)
    else
      d.def(S .. "Cfg" .. name, lo == hi and config_num(lo, lr) or
        (config_num(lo, lr) .. "--" .. config_num(hi, lr)))
      d.def(S .. "Cfg" .. name .. "Min", config_num(lo, lr))
      d.def(S .. "Cfg" .. name .. "Max", config_num(hi, lr))
    end
  end
  local ratio
  for _, v in ipairs(s.variants) do
    local lr, min_lr = s:config_value(v.name, "lr"), s:config_value(v.name, "min_lr")
    local r = (type(lr) == "number" and type(min_lr) == "number" and min_lr > 0) and
      lr / min_lr or nil
    if r and ratio ~= false and (ratio == nil or math.abs(r - ratio) < 1e-9 * r) then
      ratio = ratio or r
    else
      ratio = false
    end
  end
  d.def(S .. "CfgLrDecay", ratio and ("\\num{" .. string.format("%.3g", ratio) .. "}") or DASH)
  local vocab, bins
  for _, v in ipairs(s.variants) do
    for _, seed in ipairs(s.seeds) do
      local m = s:record(v.name, seed).metrics
      if m then
        vocab = vocab or (finite(m.vocab) and m.vocab or nil)
        local rel = type(m.reliability) == "table" and m.reliability.count
        bins = bins or (type(rel) == "table" and #rel > 0 and #rel or nil)
      end
    end
  end
  d.def(S .. "MaxParams", max_params({ s }))
  d.def(S .. "Vocab", vocab and string.format("%d", vocab) or DASH)
  d.def(S .. "EceBins", bins and string.format("%d", bins) or DASH)
end

local VARIANT_METRICS = { "val_loss", "val_ppl", "val_acc", "final_grad_norm", "embed_norm",
  "embed_init_rms" }

-- Per variant: the mean and sd of the cited metrics and of every metric of the analysis,
-- its diverged runs and its parameter count; of a nested summary's variants (no records),
-- only its metrics.
local function variants(d, s, S)
  local metrics = s.section_key and {} or { table.unpack(VARIANT_METRICS) }
  local have = {}
  for _, m in ipairs(metrics) do have[m] = true end
  for _, m in ipairs(s.analysis.metrics or {}) do
    if not have[m] then
      have[m] = true
      metrics[#metrics + 1] = m
    end
  end
  for _, v in ipairs(s.variants) do
    local V = S .. F.macro(v.name)
    for _, m in ipairs(metrics) do
      local st = s:stat(v.name, m)
      d.def(V .. metric_macro(m), F.value(m, st.mean))
      d.def(V .. metric_macro(m) .. "Sd", F.value(m, st.sd))
    end
    local pv = s.summary.per_variant[v.name] or {}
    if not s.section_key then
      local rms = s:stat(v.name, "embed_init_rms").mean
      -- the factor a norm to unit RMS multiplies the initial embedding by: 1 / rms
      d.def(V .. "EmbedInitGain", finite(rms) and rms > 0 and F.num(1 / rms, 0) or DASH)
      d.def(V .. "NDiverged", string.format("%d", pv.n_diverged or 0))
      local params = s:params(v.name)
      d.def(V .. "Params", params and ("\\num{" .. string.format("%d", params) .. "}") or DASH)
    end
  end
end

-- Every comparison's statistics; the primary metric's also under "Primary", so the prose
-- need not name it.
local function comparisons(d, s, S)
  for _, c in ipairs(s.summary.comparisons or {}) do
    local P = S .. F.macro(c.treatment) .. "Vs" .. F.macro(c.baseline)
    local C = P .. metric_macro(c.metric)
    local ci = data.interval(c)
    local dec = F.diff_decimals(c.metric, c.mean, ci)
    if c.metric == s.primary then
      d.def(P .. "PrimaryDelta", F.num(c.mean, dec))
      d.def(P .. "PrimaryCI", F.interval(ci, dec))
      d.def(P .. "PrimaryPHolm", F.p(c.p_holm))
      d.def(P .. "PrimaryMDE", F.num(data.mde(c), dec))
      d.def(P .. "PrimaryMDEUnadjusted", F.num(c.mde, dec))
      d.def(P .. "PrimaryPT", F.p(c.p_t))
      d.def(P .. "PrimaryPSignflip", F.p(c.p_signflip))
      if c.p_holm_rule1 then d.def(P .. "PrimaryPHolmRuleOne", F.p(c.p_holm_rule1)) end
      d.def(P .. "PplChange", F.percent(c.val_ppl_change))
      d.def(P .. "PrimaryPTost", F.p(c.tost and c.tost.p_holm))
    end
    d.def(C .. "Delta", F.num(c.mean, dec))
    d.def(C .. "AbsDelta", finite(c.mean) and F.num(math.abs(c.mean), dec) or DASH)
    d.def(C .. "CI", F.interval(ci, dec))
    d.def(C .. "CILo", ci and F.num(ci[1], dec) or DASH)
    d.def(C .. "CIHi", ci and F.num(ci[2], dec) or DASH)
    d.def(C .. "DZ", F.d(c.d_z))
    d.def(C .. "PT", F.p(c.p_t))
    d.def(C .. "PSignflip", F.p(c.p_signflip))
    d.def(C .. "PHolm", F.p(c.p_holm))
    d.def(C .. "MDE", F.num(data.mde(c), dec))
    local kind = F.METRIC[c.metric] and F.METRIC[c.metric].kind
    if kind ~= "nats" and kind ~= "count" then
      d.def(C .. "RelChange", F.percent(c.relative_change))
    end
    d.def(C .. "N", string.format("%d", c.n or 0))
    d.def(C .. "Reason", prose.degenerate_note(c))
  end
  for _, e in ipairs(s.summary.interactions or {}) do
    local C = S .. F.macro(e.name) .. metric_macro(e.metric)
    local ci = data.interval(e)
    local dec = F.diff_decimals(e.metric, e.mean, ci)
    d.def(C .. "Delta", F.num(e.mean, dec))
    d.def(C .. "CI", F.interval(ci, dec))
    d.def(C .. "PHolm", F.p(e.p_holm))
  end
end

-- A study's verdicts as rows of the one table model (table.lua), LaTeX on one line: per
-- comparison (or interaction) on the primary metric its difference with the decision
-- interval, its Holm-adjusted p, the verdict and why, in the analysis's words
-- (analysis/words.lua) as the terminal and the study's own report say them; a sequential
-- study's estimate and repeated interval where its comparison stopped.  "" when no row.
local function verdict_table(s, interactions)
  local sum, an = s.summary, s.summary.analysis or {}
  local t = { head = { interactions and "Interaction" or "Comparison", "Difference [interval]",
    "$p_\\mathrm{Holm}$", "Verdict", "Why" }, rows = {} }
  local function add(name, e, ci, p, verdict, why)
    -- a sentence of its own: the text after the table never runs into it
    why = why:gsub("<=", "\u{2264}"):gsub(">=", "\u{2265}"):gsub("%+%-", "\u{00b1}")
      :gsub("%.?$", ".")
    local dec = F.diff_decimals(e.metric, e.mean, ci)
    t.rows[#t.rows + 1] = { name, F.num(e.mean, dec) .. " " .. F.interval(ci, dec), F.p(p),
      "\\emph{" .. F.escape(verdict) .. "}", F.escape(why) }
  end
  if type(sum.sequential) == "table" and not interactions then
    local d = sum.sequential.design
    for _, e in ipairs(sum.sequential.comparisons) do
      local lk = e.looks[#e.looks] or {}
      add(s:comparison_label(e.treatment, e.baseline), { metric = e.metric,
        mean = lk.estimate }, lk.ci, nil, e.verdict or "open", pseq.stop_text(e, d))
    end
  else
    for _, r in ipairs(study_tables.verdict_rows(sum, an, interactions)) do
      local v, e = r.v, r.e
      local why = r.because
      if v.changed and v.verdict_rule1 then
        why = why .. "; under the rule this study was registered with: " .. v.verdict_rule1
      end
      if e then
        add(interactions and s:interaction_label(e) or
          s:comparison_label(v.treatment, v.baseline), e, data.interval(e), e.p_holm,
          r.verdict, why)
      end
    end
  end
  if #t.rows == 0 then return "" end
  return (tbl.latex(t, { title = false, raw = true, wrap_last = true,
    first = "0.22\\linewidth" }):gsub("\n", " "))
end

M.verdict_table = verdict_table

local function verdicts(d, s, S)
  for _, v in ipairs(s.summary.verdicts or {}) do
    local C = S .. F.macro(v.treatment) .. "Vs" .. F.macro(v.baseline)
    d.def(C .. "Verdict", F.escape(v.verdict))
  end
  d.def(S .. "Verdicts", verdict_table(s, false))
  -- empty for a study that registered no interaction, so the paper may name it either way
  d.def(S .. "InteractionVerdicts", verdict_table(s, true))
end

-- The statistics section's numbers over every study that has run.
local function method(d, ctx)
  d.comment("the statistics section")
  d.def("ReportTests", prose.tests(ctx))
  local n, df = prose.seed_counts(ctx)
  d.def("ReportSeedCounts", n)
  d.def("ReportDegreesOfFreedom", df)
  d.def("ReportSignflipFloors", prose.signflip_floors(ctx))
  d.def("ReportBcaCoverage", prose.bca_coverage(ctx))
  d.def("ReportBcaCaveatN", string.format("%d", stats.BCA_CAVEAT_N))
  d.def("ReportPower", F.fixed(100 * stats.DEFAULT_POWER, 0) .. "\\,\\%")
  d.def("ReportRuleHistory", prose.rule_history(ctx))
  -- the largest model any study trained (its records' parameter counts), in millions
  d.def("ReportMaxParams", max_params(ctx.studies))
  -- each study file's commit against its first run (tex_prereg.lua)
  prereg.numbers(d.def, ctx)
  -- the supplement's numbered sections (S1, S2, ... in paper/supplement.tex's order) by
  -- label, so the main text cites them: \SuppSec<Label> for \label{sec:<label>}
  local fs = require "repro.core.fs"
  local host = require "repro.host"
  local sup = fs.read(host.root .. "/paper/supplement.tex", 4 * 1024 * 1024)
  if sup then
    local n = 0
    local text = sup:gsub("\n%s*%%[^\n]*", "\n")
    for after in text:gmatch("\\section%s*%b{}()") do
      n = n + 1
      local at = after
      while true do
        local label, next_at = text:match("^%s*\\label%s*{sec:([%w_]+)}()", at)
        if not label then break end
        d.def("SuppSec" .. F.macro(label), "S" .. n)
        at = next_at
      end
    end
  end
  -- the main text's floats by number, so the supplement cites them rather than reprinting
  -- them: \MainTable<Name> and \MainFigure<Name> for \PaperTable{<name>} and
  -- \PaperFigure{<name>}, and for a hand-written float its \label{tab:<name>} or
  -- \label{fig:<name>}; LaTeX numbers floats in the order they begin
  local main = fs.read(host.root .. "/paper/main.tex", 4 * 1024 * 1024)
  local body = main and main:gsub("\n%s*%%[^\n]*", "\n"):match("\\begin{document}(.*)$")
  if body then
    local floats = {}
    for at, kind, name in body:gmatch("()\\Paper(%u%l+){([%w_]+)}") do
      if kind == "Table" or kind == "Figure" then
        floats[#floats + 1] = { at = at, kind = kind:lower(), name = name }
      end
    end
    for at, kind, inner in body:gmatch("()\\begin{(%l+)}(.-)\\end{%2}") do
      if kind == "table" or kind == "figure" then
        floats[#floats + 1] = { at = at, kind = kind, name = inner:match("\\label{%l+:([%w_]+)}") }
      end
    end
    table.sort(floats, function(x, y) return x.at < y.at end)
    local n = { table = 0, figure = 0 }
    for _, f in ipairs(floats) do
      n[f.kind] = n[f.kind] + 1
      if f.name then d.def("Main" .. F.macro(f.kind, f.name), string.format("%d", n[f.kind])) end
    end
  end
  -- the model's fixed constants, from the engine (engine/gpt.h), to the float's 3 digits
  local engine = require "engine"
  d.def("EngineLnEps", "\\num{" .. string.format("%.3g", engine.LN_EPS) .. "}")
  d.def("EngineRmsEps", "\\num{" .. string.format("%.3g", engine.RMS_EPS) .. "}")
  d.def("EngineLinearStd", "\\num{" .. string.format("%.3g", engine.LINEAR_STD) .. "}")
end

-- numbers.tex: study and figure availability, then per study its design, the per-variant
-- means the prose cites, every comparison's statistics and the verdicts.
function M.numbers(ctx)
  local d = new_defs()
  availability(d, ctx)
  overrides(d, ctx)
  method(d, ctx)
  for _, s in ipairs(ctx.studies) do
    local S = F.macro(s.name)
    design(d, s, S)
    config(d, s, S)
    variants(d, s, S)
    comparisons(d, s, S)
    verdicts(d, s, S)
    for _, numbers in ipairs(ctx.manifest and ctx.manifest.numbers or {}) do
      numbers(d.def, s, S, ctx)
    end
    sweep.numbers(d.def, s, S)
    task_tex.numbers(d.def, s, S)
    for _, sec in ipairs(s:sections()) do
      local SS = S .. sec.macro
      design(d, sec.study, SS)
      variants(d, sec.study, SS)
      comparisons(d, sec.study, SS)
      verdicts(d, sec.study, SS)
    end
  end
  local lines = { "% Generated by bin/repro report from the study summaries and run " ..
    "records: do not edit.", "% Availability: \\csname ReportHave@<study>\\endcsname, " ..
    "ReportAbsent@<study> (why not), ReportFig@<figure>, ReportNoFig@<figure> (why not)." }
  for _, x in ipairs(d.list) do lines[#lines + 1] = x end
  return table.concat(lines, "\n") .. "\n"
end

-- The macro names a TeX text reaches: every \Name token, every name a \csname or
-- \ifcsname spells out, and every \M{...} argument with its macros expanded through
-- `defs` (name -> body; \M{\CloseLN PplChange} names the body of \CloseLN followed by
-- PplChange).
local function reached(text, defs, add)
  for name in text:gmatch("\\(%a+)") do add(name) end
  for name in text:gmatch("csname%s+([%w@]+)%s*\\endcsname") do add(name) end
  local function expand(s, depth)
    if depth > 8 then return s end
    return (s:gsub("\\(%a+)%s*", function(m)
      return defs[m] and expand(defs[m], depth + 1)
    end))
  end
  for arg in text:gmatch("\\M(%b{})") do
    add((expand(arg:sub(2, -2), 0):gsub("%s+", "")))
  end
end

-- numbers.tex cut to the definitions the paper reaches: those named by `sources` (the
-- TeX texts LaTeX reads: main.tex, the supplement, the generated tables and floats) and,
-- transitively, by the bodies of the definitions kept.  Availability macros (names with
-- @) are always kept: the paper builds their names from arguments.  The comment lines
-- and the order of the definitions stay as they were.
function M.cited_only(text, sources)
  local defs, lines = {}, {}
  for line in text:gmatch("[^\n]+") do
    local name, body = line:match("^\\newcommand{\\(%a+)}{(.*)}$")
    if not name then name, body = line:match("^\\expandafter\\def\\csname ([%w@]+)\\endcsname{(.*)}$") end
    lines[#lines + 1] = { line = line, name = name }
    if name then defs[name] = body end
  end
  for _, src in ipairs(sources) do
    for name, body in src:gmatch("\\newcommand{\\(%a+)}{([^\n]*)}") do
      if not defs[name] then defs[name] = body end
    end
  end
  local keep, queue = {}, {}
  local function add(name)
    if defs[name] and not keep[name] then keep[name], queue[#queue + 1] = true, name end
  end
  for name in pairs(defs) do
    if name:find("@", 1, true) then add(name) end
  end
  for _, src in ipairs(sources) do reached(src, defs, add) end
  while #queue > 0 do
    local name = table.remove(queue)
    reached(defs[name], defs, add)
  end
  local out = {}
  for _, l in ipairs(lines) do
    if not l.name or keep[l.name] then out[#out + 1] = l.line end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
