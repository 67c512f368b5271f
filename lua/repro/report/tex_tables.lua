-- The booktabs tables of the report (report/init.lua), one tabular per file.  M.KINDS maps
-- each kind a manifest entry names to its builder: seeds, paired, interactions,
-- calibration, counts, setting_effect and studies here; sweeps, tasks, compute, checklist,
-- pre-registration and sequential looks in their own modules; a manifest's extensions add
-- theirs.  M.generic gives a study the manifest does not list its paired, seeds and
-- interactions tables; M.tables writes every table file.  Why a degenerate comparison's
-- statistics are undefined is said under its table in words (tex_prose.degenerate_note),
-- never "nan" or "inf".
local stats = require "stats"
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local prereg = require "repro.report.tex_prereg"
local compute = require "repro.report.tex_compute"
local sweep = require "repro.report.tex_sweep"
local prose = require "repro.report.tex_prose"
local tasks = require "repro.report.tex_tasks"
local sequential = require "repro.report.sequential"
local tbl = require "repro.report.table"

local M = {}
local finite = F.finite
local DASH = F.DASH

-- Pieces shared by the tables ---------------------------------------------------------

local function level(s)
  local alpha = s.analysis.alpha or stats.DEFAULT_ALPHA
  return F.fixed(100 * (1 - alpha), math.max(0, F.sig_decimals(100 * (1 - alpha), 2))) .. "\\,\\%"
end

local function absent_text(ctx, name)
  return F.escape(data.absent_reason(ctx.experiments, name))
end
M.absent_text = absent_text

local HEADER = F.GENERATED
local FIT = { fit = true }

local function wrap(s, body)
  return s and F.of_study(s, body) or (string.format(HEADER, "the study summaries") .. body)
end

-- A study analysed under a later decision rule than the one it registered (its summary
-- keeps the registered rule's Holm p, p_holm_rule1): its tables show that p beside the
-- current rule's, and a verdict the registered rule would have given differently is
-- marked.  The header cell and the sentence under the table say which is which.
local function registered_family(s)
  local an = s.analysis
  return an.registered_rule and an.rule and an.registered_rule < an.rule and an.registered_rule
end
M.registered_family = registered_family

local REGISTERED_HEAD = "$p_\\mathrm{Holm}^\\mathrm{reg}$"

-- registered_family(s), with the sentence under the table that says which p is which.
local function registered_rule(s, notes)
  local r = registered_family(s)
  if r then
    notes.fixed(string.format("$p_\\mathrm{Holm}$: Holm over the family of the current " ..
      "rule %d (the primary metric's comparisons and interactions), which the verdicts use; " ..
      "$p_\\mathrm{Holm}^\\mathrm{reg}$: Holm over the family of rule %d, which the study " ..
      "registered (every comparison and interaction on every metric).", s.analysis.rule, r))
  end
  return r
end

-- Tables ----------------------------------------------------------------------------

local SEEDS_METRICS = { "val_ppl", "val_acc", "final_grad_norm", "embed_norm" }
-- the note of a cell over so few finite runs that it has no sd
local FEW_RUNS = { [0] = "no finite value: every run diverged or the record lacks it.",
  [1] = "one run: no sd." }

-- The seeds' Table 1 layout: mean ± sd over the runs that did not diverge.
function M.seeds_table(s)
  local rows = {}
  local notes = tbl.marks()
  for _, v in ipairs(s.variants) do
    local pv = s.summary.per_variant[v.name] or {}
    local runs = string.format("%d", pv.n_runs or #s.seeds) .. ((pv.n_diverged or 0) > 0 and
      string.format(" (%d div.)", pv.n_diverged) or "")
    local cells = { v.tex_label or F.escape(v.label), runs }
    for _, m in ipairs(SEEDS_METRICS) do
      local st = s:stat(v.name, m)
      local few = FEW_RUNS[st.n]
      cells[#cells + 1] = F.mean_sd(m, st) .. (few and notes.mark(few) or "")
    end
    rows[#rows + 1] = cells
  end
  return wrap(s, tbl.tabular({ align = "lrcccc", head = { "Variant", "Runs", "Val.\\ PPL",
    "Val.\\ accuracy", "Final grad norm", "Embedding norm" }, rows = rows }, FIT) ..
    notes.render())
end

-- The verdict cell: the current rule's verdict, marked with the registered rule's where
-- the two differ.
local function verdict_cell(s, v, notes)
  if not v then return "" end
  local reg = registered_family(s)
  if not (reg and v.verdict_rule1 and v.verdict_rule1 ~= v.verdict) then
    return F.escape(v.verdict)
  end
  return F.escape(v.verdict) .. notes.mark(string.format("under the registered rule %d: %s.",
    reg, F.escape(v.verdict_rule1)))
end

-- The size of a study's Holm family: analysis.m (current rule), else every comparison
-- and interaction (rule 1).
function M.family_size(s)
  local m = s.analysis.m or (#(s.summary.comparisons or {}) + #(s.summary.interactions or {}))
  if m == 0 and s.sections then
    -- a study that decides only in its nested summaries (report_data.SECTIONS): theirs
    for _, sec in ipairs(s:sections()) do m = m + M.family_size(sec.study) end
  end
  return m
end

-- One comparison's statistics as table cells: Δ, CI, d_z [CI], p_t, p_sf (with its
-- floor when that differs from the table's), p_Holm, MDE.
local function stat_cells(c, floor, reg)
  local ci = data.interval(c)
  local dec = F.diff_decimals(c.metric, c.mean, ci)
  local dz_ci = (c.ci_d_z and finite(c.d_z)) and (" " .. F.interval(c.ci_d_z, 2)) or ""
  local own_floor = finite(c.p_signflip_min) and c.p_signflip_min ~= floor
  local cells = { F.num(c.mean, dec), F.interval(ci, dec), F.d(c.d_z) .. dz_ci, F.p(c.p_t),
    F.p(c.p_signflip) .. (own_floor and (" (" .. F.p(c.p_signflip_min) .. ")") or ""),
    F.p(c.p_holm) }
  if reg then cells[#cells + 1] = F.p(c.p_holm_rule1) end
  cells[#cells + 1] = F.num(data.mde(c), dec)
  return cells
end

-- The robust companions of a family entry c (exploratory, lua/repro/analysis/robust.lua)
-- where they read differently from its verdict (robust.differs), as a note's text; nil
-- where they agree or the summary has none.
local function robust_note(c)
  local r = c.robust
  if not (r and r.differs and #r.differs > 0) then return nil end
  local dec = F.diff_decimals(c.metric, r.hodges_lehmann, r.ci)
  local parts = { string.format("the Hodges--Lehmann estimate %s %s", F.num(r.hodges_lehmann, dec),
    r.ci and (F.interval(r.ci, dec) .. " (exact Wilcoxon signed-rank interval)") or
      "(no Wilcoxon interval with so few seeds)") }
  parts[#parts + 1] = string.format("%d positive and %d negative differences%s, sign test " ..
    "$p$ %s", r.positive, r.negative, r.zeros > 0 and string.format(" (%d zero)", r.zeros) or
    "", F.p(r.p_sign))
  for _, ch in ipairs((r.leave_one_out or {}).changes or {}) do
    parts[#parts + 1] = string.format("without seed %d: %s", math.floor(ch.seed),
      F.escape(ch.verdict))
  end
  return "exploratory (outside the rule): " .. table.concat(parts, "; ") .. "."
end

-- The mark of a degenerate comparison's note (rows with the same note share it).
local function reason_note(c, notes)
  local text = prose.degenerate_note(c)
  return text == "" and "" or notes.mark(text)
end

-- Every comparison of the study on every metric of its analysis (the Holm family),
-- the primary metric first, with the verdict of the decision rule on the primary.  A
-- summary that pre-registers a minimum effect per metric (`deltas`, as sweep_outcomes
-- does) shows each metric's in its header, and marks an exploratory difference whose mean
-- reaches it (its comparison's exceeds_delta).
function M.paired_table(s)
  local notes = tbl.marks()
  local metrics = {}
  if s.primary then metrics[1] = s.primary end
  for _, m in ipairs(s.analysis.metrics or {}) do
    if m ~= s.primary then metrics[#metrics + 1] = m end
  end
  -- The sign-flip floor of most rows goes in the header; a row with another n shows its own.
  local floors, common, best = {}, nil, 0
  for _, c in ipairs(s.summary.comparisons or {}) do
    local floor = c.p_signflip_min
    if finite(floor) then
      floors[floor] = (floors[floor] or 0) + 1
      if floors[floor] > best or (floors[floor] == best and floor < common) then
        common, best = floor, floors[floor]
      end
    end
  end
  local deltas = type(s.summary.deltas) == "table" and s.summary.deltas or {}
  local reg = registered_rule(s, notes)
  local t = { align = "lrllllr" .. (reg and "r" or "") ..
    "r>{\\raggedright\\arraybackslash}p{1.9cm}", head = { "Comparison", "$\\Delta$",
    level(s) .. " CI", "$d_z$ [CI]", "$p_t$", "$p_\\mathrm{sf}$" .. (common and
    (" (floor " .. F.p(common) .. ")") or ""), "$p_\\mathrm{Holm}$" }, rows = {} }
  if reg then t.head[#t.head + 1] = REGISTERED_HEAD end
  t.head[#t.head + 1] = "MDE"
  t.head[#t.head + 1] = "Verdict"
  for _, m in ipairs(metrics) do
    local list = s:comparisons(m)
    if #list > 0 then
      local head = (F.METRIC[m] or {}).label or F.escape(m)
      local delta = deltas[m]
      if m == s.primary then
        head = head .. string.format(" --- primary, %s is better, minimum effect %s",
          s.analysis.better or "?", F.value(m, s.analysis.min_effect))
      elseif list[1].exploratory then
        head = head .. " --- exploratory: unadjusted $p$, no verdict" ..
          (finite(delta) and (", minimum effect " .. F.value(m, delta)) or "")
      elseif finite(delta) then
        head = head .. " --- minimum effect " .. F.value(m, delta)
      end
      t.rows[#t.rows + 1] = { group = head }
      for _, c in ipairs(list) do
        local cells = stat_cells(c, common, reg)
        if m ~= s.primary and c.exceeds_delta == true then
          cells[1] = cells[1] .. notes.mark("the mean difference reaches the outcome's " ..
            "pre-registered minimum effect (exploratory: not a verdict).")
        end
        local v = m == s.primary and s:verdict(c) or nil
        local rnote = m == s.primary and robust_note(c)
        table.insert(cells, 1, s:comparison_label(c.treatment, c.baseline) .. reason_note(c, notes))
        cells[#cells + 1] = verdict_cell(s, v, notes) .. (rnote and notes.mark(rnote) or "")
        t.rows[#t.rows + 1] = cells
      end
    end
  end
  return wrap(s, tbl.tabular(t, FIT) .. notes.render())
end

local function setting_name(st)
  return F.escape(st.label ~= "" and st.label or "default")
end

-- Divergences and loss spikes by setting and variant (the instability study).
function M.counts_table(s)
  local t = { align = "llcccc", head = { "Setting", "Variant", "Diverged", "Spikes per run",
    "Spikes (min--max)", "Val.\\ loss (finite runs)" }, rows = {} }
  for _, st in ipairs(s:settings()) do
    t.rows[#t.rows + 1] = { rule = true }
    for i, v in ipairs(st.variants) do
      local pv = s.summary.per_variant[v.name] or {}
      local spikes = s:stat(v.name, "n_spikes")
      local range = DASH
      if finite(spikes.min) then
        range = string.format("%d--%d", math.floor(spikes.min), math.floor(spikes.max))
      end
      t.rows[#t.rows + 1] = { i == 1 and setting_name(st) or "", F.escape(v.level_label),
        string.format("%d/%d", pv.n_diverged or 0, pv.n_runs or #s.seeds),
        F.mean_sd("n_spikes", spikes), range, F.mean_sd("val_loss", s:stat(v.name, "val_loss")) }
    end
  end
  return wrap(s, tbl.tabular(t, FIT))
end

-- The primary-metric comparisons within each setting (the scale and init_scale studies):
-- the effect per model size or init scale.
function M.setting_effect_table(s)
  local notes = tbl.marks()
  local params, distinct = {}, false
  for i, st in ipairs(s:settings()) do
    params[i] = s:setting_params(st)
    distinct = distinct or (i > 1 and params[i] ~= params[i - 1])
  end
  local reg = registered_rule(s, notes)
  local t = { align = (distinct and "lrlrlrr" or "llrlrr") .. (reg and "r" or "") .. "rl",
    head = { "Setting", "Comparison", "$\\Delta$", level(s) .. " CI", "$d_z$",
      "$p_\\mathrm{Holm}$" }, rows = {} }
  if distinct then table.insert(t.head, 2, "Params") end
  if reg then t.head[#t.head + 1] = REGISTERED_HEAD end
  t.head[#t.head + 1] = "MDE"
  t.head[#t.head + 1] = "Verdict"
  for i, st in ipairs(s:settings()) do
    local first = true
    for _, c in ipairs(s:comparisons()) do
      local tv, bv = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
      if tv and bv and tv.setting == st.key and bv.setting == st.key then
        if first then t.rows[#t.rows + 1] = { rule = true } end
        local ci = data.interval(c)
        local dec = F.diff_decimals(c.metric, c.mean, ci)
        local row = { first and setting_name(st) or "" }
        if distinct then
          row[2] = first and finite(params[i]) and
            ("\\num{" .. string.format("%d", params[i]) .. "}") or ""
        end
        for _, cell in ipairs({ F.escape(tv.level_label) .. "${}-{}$" ..
            F.escape(bv.level_label) .. reason_note(c, notes), F.num(c.mean, dec),
            F.interval(ci, dec), F.d(c.d_z), F.p(c.p_holm) }) do
          row[#row + 1] = cell
        end
        if reg then row[#row + 1] = F.p(c.p_holm_rule1) end
        row[#row + 1] = F.num(data.mde(c), dec)
        row[#row + 1] = verdict_cell(s, s:verdict(c), notes)
        t.rows[#t.rows + 1] = row
        first = false
      end
    end
  end
  return wrap(s, tbl.tabular(t, FIT) .. notes.render())
end

-- Interactions (difference of two paired differences), every metric of the analysis.
function M.interactions_table(s)
  local notes = tbl.marks()
  local reg = registered_rule(s, notes)
  -- the interaction's long label wraps, so that the table keeps a readable size
  local t = { align = ">{\\raggedright\\arraybackslash}p{14em}lrlrr" .. (reg and "r" or ""),
    head = { "Interaction", "Metric", "$\\Delta_a - \\Delta_b$", level(s) .. " CI", "$p_t$",
      "$p_\\mathrm{Holm}$", reg and REGISTERED_HEAD or nil }, rows = {} }
  for _, e in ipairs(s.summary.interactions or {}) do
    local ci = data.interval(e)
    local dec = F.diff_decimals(e.metric, e.mean, ci)
    local reason = reason_note(e, notes)
    local expl = e.exploratory and
      notes.mark(reg and "exploratory under the current rule: unadjusted $p$, outside its Holm " ..
        "family." or "exploratory: unadjusted $p$, outside the Holm family.") or ""
    local mark = ""
    if reg and e.reject_holm_rule1 ~= nil and not e.exploratory and
        e.reject_holm_rule1 ~= e.reject_holm then
      mark = notes.mark(string.format("significant at $\\alpha = %s$ under one family and " ..
        "not the other.", F.config_text(e.alpha or s.analysis.alpha)))
    end
    local rnote = not e.exploratory and robust_note(e)
    local row = { s:interaction_label(e) .. reason, F.metric_short(e.metric) .. expl,
      F.num(e.mean, dec) .. (rnote and notes.mark(rnote) or ""), F.interval(ci, dec),
      F.p(e.p_t), F.p(e.p_holm) }
    if reg then row[#row + 1] = F.p(e.p_holm_rule1) end
    row[#row] = row[#row] .. mark
    t.rows[#t.rows + 1] = row
  end
  return wrap(s, tbl.tabular(t, FIT) .. notes.render())
end

local CALIBRATION = { "ece", "brier", "temp_opt", "nll_temp_1", "nll_temp_opt", "val_acc",
  "acc_macro" }

-- Calibration and class balance (the final study): one row per instrument, one column
-- per variant, mean ± sd over the runs that did not diverge.
function M.calibration_table(s)
  local vs = s.variants
  local t = { align = "l" .. string.rep("c", #vs), head = { "Instrument" }, rows = {} }
  for _, v in ipairs(vs) do t.head[#t.head + 1] = F.escape(v.label) end
  for _, m in ipairs(CALIBRATION) do
    local cells = { m == "val_acc" and "accuracy (micro)" or F.METRIC[m].label }
    for _, v in ipairs(vs) do cells[#cells + 1] = F.mean_sd(m, s:stat(v.name, m)) end
    t.rows[#t.rows + 1] = cells
  end
  return wrap(s, tbl.tabular(t, FIT))
end

-- One row per study: its design and the size of its Holm family; the studies of the
-- paper's manifest first, in its order (those not run yet listed as having no records),
-- then the others.
function M.studies_table(ctx)
  local t = { align = "lrrrllr", head = { "Study", "Variants", "Seeds", "Runs (diverged)",
    "Primary metric", "Minimum effect", "Tests" }, rows = {} }
  for _, n in ipairs(ctx.names) do
    local s = ctx.by_name[n]
    if s then
      local runs, div = s:run_counts()
      local an = s.analysis
      t.rows[#t.rows + 1] = { F.escape(n), string.format("%d", #s.variants),
        F.seed_list(s.seeds), string.format("%d (%d)", runs, div), (s.primary and
        F.metric_short(s.primary) or DASH) ..
        " (" .. F.escape(an.better or "?") .. ")", s.primary and F.value(s.primary,
        an.min_effect) or DASH, string.format("%d", M.family_size(s)) }
    else
      t.rows[#t.rows + 1] = { F.escape(n), "\\multicolumn{6}{l}{\\emph{no records yet}}" }
    end
  end
  return wrap(nil, tbl.tabular(t, FIT))
end

-- The kinds of table a manifest entry names: per study, the function that writes it and
-- whether it reads the run records (else only the summary); `studies` is one table of
-- every study.  A manifest's extensions add kinds of their own (lua/repro/report/
-- init.lua: manifest.table_kinds).
M.KINDS = {
  seeds = { build = M.seeds_table, records = true },
  paired = { build = M.paired_table, fields = { section = "string?" } },
  interactions = { build = M.interactions_table },
  calibration = { build = M.calibration_table, records = true },
  counts = { build = M.counts_table, records = true },
  setting_effect = { build = M.setting_effect_table, records = true },
  studies = { all = M.studies_table },
  compute = { all = compute.compute_table },
  checklist = { all = compute.checklist_table },
  prereg = { all = prereg.prereg_table },
  lr_sweep = { build = sweep.lr_sweep_table },
}
for k, v in pairs(tasks.tables) do M.KINDS[k] = v end
for k, v in pairs(sequential.tables) do M.KINDS[k] = v end

-- The generic tables of a study the manifest does not list: paired, seeds (when its
-- records exist) and interactions (when it has any).
function M.generic(s)
  local out = { [s.name .. "_paired"] = M.paired_table(s) }
  if s:has_records() then out[s.name .. "_seeds"] = M.seeds_table(s) end
  if #(s.summary.interactions or {}) > 0 then
    out[s.name .. "_interactions"] = M.interactions_table(s)
  end
  return out
end

-- Every table file: name -> text.  The manifest's tables always exist (a sentence when
-- their study is absent or its records are missing); every other study gets its generic
-- tables.  `built` (optional) gets name -> true for each manifest table its kind's builder
-- wrote (not a sentence in its place).
function M.tables(ctx, built)
  built = built or {}
  local out = {}
  for _, e in ipairs(ctx.manifest.tables) do
    local kind = (ctx.manifest.table_kinds or M.KINDS)[e.kind]
    local s = ctx.by_name[e.study]
    if kind.all then
      out[e.name], built[e.name] = kind.all(ctx), true
    elseif not s then
      out[e.name] = wrap(nil, F.unavailable(absent_text(ctx, e.study)))
    elseif e.section and not s:section(e.section) then
      out[e.name] = wrap(s, F.unavailable(string.format("the %s study's summary has no %s",
        F.escape(e.study), F.escape(e.section))))
    elseif e.section then
      out[e.name], built[e.name] = kind.build(s:section(e.section), ctx), true
    elseif kind.records and not s:has_records() then
      out[e.name] = wrap(s, F.unavailable(string.format("the run records of the %s study are " ..
        "missing under %s", F.escape(e.study), F.escape(s.dir))))
    else
      out[e.name], built[e.name] = kind.build(s, ctx, e), true
    end
  end
  for _, s in ipairs(ctx.studies) do
    if not ctx.manifest.listed[s.name] then
      for name, text in pairs(M.generic(s)) do out[name] = text end
    end
  end
  return out
end

-- floats.tex: for every table and figure of the manifest that has a caption, its float,
-- which main.tex places with \PaperTable{name} or \PaperFigure{name}.
function M.floats(manifest)
  local lines = { "% Generated by bin/repro report from " .. manifest.path ..
    ": do not edit.", "% \\csname PaperTable@<name>\\endcsname, PaperFigure@<name>: the " ..
    "table or figure <name> in its float, with its caption." }
  local function def(prefix, name, body)
    lines[#lines + 1] = string.format("\\expandafter\\def\\csname %s@%s\\endcsname{%s}",
      prefix, F.key(name), (body:gsub("%s+", " ")))
  end
  for _, e in ipairs(manifest.tables) do
    if e.caption then
      def("PaperTable", e.name, string.format("\\Report%sTable{%s}{%s}", e.wide and "Wide" or "",
        e.name, e.caption))
    end
  end
  for _, f in ipairs(manifest.figures) do
    if f.caption then
      def("PaperFigure", f.name, string.format("\\ReportFigure{%s}{%s}{%s}", f.name, f.caption,
        f.width))
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The figure of a study the appendix shows: its comparisons on its primary metric.
function M.forest_name(s)
  return s.name .. "_forest"
end

-- tables/appendix.tex: a section per study the manifest does not list (ctx.appendix),
-- with its paired table, its interactions, its forest plot and its verdicts (a study with
-- no comparison: a sentence saying so, and no forest plot or verdicts); nothing when
-- every study is in the manifest.  main.tex has begun the appendix (\appendix) before it.
function M.appendix(ctx)
  local out = { string.format(HEADER, "the study summaries the paper's manifest does not list") }
  if #ctx.appendix == 0 then return out[1] end
  out[#out + 1] = "\\section{Other studies}"
  out[#out + 1] = "The studies below have run and have no section of their own in the " ..
    "paper's results (the text may cite them; " .. F.escape(ctx.manifest.path) ..
    " lists them): each with its paired comparisons, the effects on its primary metric " ..
    "and the verdicts of its decision rule."
  for _, s in ipairs(ctx.appendix) do
    local S = F.macro(s.name)
    out[#out + 1] = ""
    out[#out + 1] = string.format("\\subsection{The %s study}\\label{sec:study-%s}",
      F.escape(s.name), F.key(s.name))
    if s.summary.description then out[#out + 1] = F.escape(s.summary.description) end
    local note = (ctx.manifest.appendix_notes or {})[s.name]
    if note then out[#out + 1] = "\\par " .. note end
    if #(s.summary.comparisons or {}) > 0 then
      out[#out + 1] = string.format("\\ReportWideTable{%s_paired}{Paired comparisons of the %s " ..
        "study: mean difference (treatment $-$ baseline), its decision interval, $d_z$, $p$ " ..
        "from the $t$-test and the sign-flip test, Holm-adjusted $p$, minimum detectable " ..
        "effect and the verdict.}", s.name, F.escape(s.name))
    else
      out[#out + 1] = "\\par\\emph{This study pre-registered no comparison.}"
    end
    if #(s.summary.interactions or {}) > 0 then
      out[#out + 1] = string.format("\\ReportTable{%s_interactions}{Interactions of the %s " ..
        "study.}", s.name, F.escape(s.name))
    end
    if #(s.summary.comparisons or {}) > 0 then -- no forest plot or verdicts without them
      out[#out + 1] = string.format("\\ReportFigure{%s}{The %s study: each comparison on " ..
        "its primary metric with its interval, the band of $\\pm$ its minimum effect and " ..
        "$\\pm$ the minimum detectable effect.}{0.9\\linewidth}", M.forest_name(s),
        F.escape(s.name))
      out[#out + 1] = "\\paragraph{Verdicts.} \\" .. S .. "Verdicts"
    end
    out[#out + 1] = "\\clearpage"
  end
  return table.concat(out, "\n") .. "\n"
end

return M
