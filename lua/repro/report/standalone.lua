-- `bin/repro report STUDY [--experiments DIR]`: one study's own report, apart from the
-- paper: OUT/<study>/report/ (OUT = --experiments, default experiments) holds
--   report.pdf    its design, per-variant statistics, verdict table, the verdicts' robust
--                 companions (exploratory), a replication section when the study declares
--                 originals (summary.replication), forest plot, and
--                 the training and validation loss per variant over training; a
--                 sequential study (summary.sequential) its looks instead: where and why
--                 each comparison stopped, its path look by look, and the path's figure
--                 in the forest's place (lua/repro/report/sequential.lua)
--   report.html   the same tables (HTML) and figures (PNG), for a browser
--   report.tex, figures/ (PDF, png/), data/ (the figures' data)
--   tables/<k>-<title>.csv  each table as CSV: a cell the data leaves undefined is empty,
--                 and the column not_measurable names the columns it emptied
-- from its summary.json and run records only (lua/repro/report/data.lua), the way the
-- paper reads them, with none of the paper's manifest: the variants keep their own names
-- (or the levels of the factor the study declares), and nothing the study did not
-- register appears (no extension's section, no verdict under an earlier rule).  Every
-- table is built once as rows of plain text (M.tables) and written as LaTeX, HTML and CSV.  Figures are the report's kinds (lua/repro/report/plot.lua).
local fs = require "repro.core.fs"
local host = require "repro.host"
local base = require "repro.core.base"
local data = require "repro.report.data"
local plot = require "repro.report.plot"
local guardrail = require "repro.analysis.guardrail"
local robust = require "repro.analysis.robust"
local replication = require "repro.analysis.replication"
local words = require "repro.analysis.words"
local terminal = require "repro.analysis.terminal"
local pseq = require "repro.report.sequential"
local tasks = require "repro.tasks"
local F = require "repro.report.texfmt"

local M = {}

local user_error = base.user_error

-- A number for a table cell: 4 significant digits, "-" when undefined.
local function num(x)
  if not F.finite(x) then return "-" end
  return string.format("%.4g", x)
end

local function pval(p)
  if not F.finite(p) then return "-" end
  if p < 0.001 then return "< 0.001" end
  return string.format("%.3g", p)
end

-- A count or a config value as text: integers without a decimal point (JSON gives
-- every number as a float), other numbers with 4 significant digits.
local function value_text(x)
  if type(x) == "number" then
    if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", x) end
    return num(x)
  end
  return tostring(x)
end

-- The command-line overrides (--set) a summary was made with, as a table (summary.json
-- holds them as an object; a Slurm analysis job's manifest as "k=v,..." text).
local function set_of(sum)
  local set = sum.command_line_overrides
  if type(set) == "string" then
    local t = {}
    for k, v in set:gmatch("([%w_]+)=([^,]*)") do t[k] = tonumber(v) or v end
    return t
  end
  return type(set) == "table" and set or {}
end

-- "k = v, ..." of a config table in key order; a key --set overrides shows its value
-- from the command line, marked "(--set)".
local function config_text(cfg, set, skip)
  local keys, parts = {}, {}
  for k in pairs(cfg) do if not skip[k] then keys[#keys + 1] = k end end
  for k in pairs(set) do if cfg[k] == nil and not skip[k] then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    parts[#parts + 1] = set[k] ~= nil and (k .. " = " .. value_text(set[k]) .. " (--set)") or
      (k .. " = " .. value_text(cfg[k]))
  end
  return parts
end

-- The design table of summary sum (study `name`, its analysis an): the effective config,
-- the study's base with its command-line overrides (--set) applied and marked, and the
-- overrides themselves.
local function design_table(name, sum, an)
  local set = set_of(sum)
  local variants = {}
  for _, v in ipairs(sum.variants or {}) do
    local parts = config_text(v.overrides or {}, {}, {})
    for i, part in ipairs(parts) do
      local k = part:match("^([%w_]+) =")
      if set[k] ~= nil then
        parts[i] = part .. " (replaced by --set " .. k .. "=" .. value_text(set[k]) .. ")"
      end
    end
    variants[#variants + 1] = v.name .. (#parts > 0 and (" (" .. table.concat(parts, ", ") ..
      ")") or "")
  end
  local seeds = {}
  for _, x in ipairs(sum.seeds or {}) do seeds[#seeds + 1] = value_text(x) end
  local base_parts = config_text(sum.base or {}, set, { data = true })
  local set_keys = {}
  for k in pairs(set) do set_keys[#set_keys + 1] = k end
  table.sort(set_keys)
  for i, k in ipairs(set_keys) do set_keys[i] = k .. "=" .. value_text(set[k]) end
  local corpus = set.data or (sum.base or {}).data
  local design = { title = "Design", head = { "field", "value" }, rows = {
    { "study", name },
    { "description", sum.description or "" },
    { "base config", #base_parts > 0 and table.concat(base_parts, ", ") or "the defaults" },
    { "corpus", corpus and (tostring(corpus) .. (set.data and " (--set)" or "")) or
      "the default (data/tinyshakespeare.txt)" },
    { "command-line overrides", #set_keys > 0 and ("--set " .. table.concat(set_keys, ",") ..
      ": every run") or "none" },
    { "variants", table.concat(variants, "; ") },
    { "seeds", table.concat(seeds, ", ") },
    { "baseline", tostring(an.baseline) },
    { "primary metric", string.format("%s (%s is better)", tostring(an.primary),
      tostring(an.better)) },
    { "minimum effect", num(an.min_effect) },
    { "alpha", num(an.alpha) },
    { "test", tostring(an.test or "t") },
    { "family", (words.family(an):gsub("^Holm over the 1 tests", "Holm over 1 test")) },
  } }
  -- records neither committed nor made by this checkout (summary.provenance), each named
  local adopted = type(sum.provenance) == "table" and sum.provenance.adopted or {}
  if #adopted > 0 then
    local t = {}
    for i, e in ipairs(adopted) do t[i] = words.adopted(e) end
    design.rows[#design.rows + 1] = { "provenance", string.format("%d record%s %s",
      #adopted, #adopted == 1 and "" or "s", table.concat(t, "; ")) }
  end
  return design
end

-- The per-variant table of the primary metric, from the summary's per_variant.
local function variants_table(sum, an)
  local stats = { title = "Variants on " .. tostring(an.primary), head = { "variant", "runs",
    "diverged", "mean", "sd", "min", "max" }, rows = {} }
  for _, v in ipairs(sum.variants or {}) do
    local pv = sum.per_variant[v.name] or {}
    local m = (pv.metrics or {})[an.primary] or {}
    stats.rows[#stats.rows + 1] = { v.name, value_text(pv.n_runs or 0),
      value_text(pv.n_diverged or 0), num(m.mean), num(m.sd), num(m.min), num(m.max) }
  end
  return stats
end

-- The verdicts table, each verdict's reason (the analysis's words) under it.
local function verdicts_table(sum, an)
  local byname, family = {}, {}
  for _, c in ipairs(sum.comparisons or {}) do
    if c.metric == an.primary then
      byname[c.treatment .. "\0" .. c.baseline] = c
      family[#family + 1] = c
    end
  end
  -- the decision interval named by its level and kind (t or sign-flip), as on the terminal
  local ci_head = terminal.interval_column(family, an.alpha)
  local verdicts = { title = "Verdicts on " .. tostring(an.primary), head = { "treatment",
    "baseline", "mean difference", ci_head, "p (Holm)", "TOST p (Holm)",
    "share better [CP]", "verdict" },
    rows = {}, reasons = {} }
  for _, v in ipairs(sum.verdicts or {}) do
    local c = byname[v.treatment .. "\0" .. v.baseline] or {}
    local ci = data.interval(c)
    local kind_of = (ci_head:find("decision interval", 1, true) and c.ci_decision_kind) and
      ((c.ci_decision_kind == "signflip" and "sign-flip " or c.ci_decision_kind .. " ")) or ""
    verdicts.rows[#verdicts.rows + 1] = { v.treatment, v.baseline, num(c.mean),
      ci and string.format("%s[%s, %s]", kind_of, num(ci[1]), num(ci[2])) or "-", pval(c.p_holm),
      pval(c.tost and c.tost.p_holm), words.improvement(c.improvement), v.verdict }
    verdicts.reasons[#verdicts.reasons + 1] = v.reason and (v.treatment .. " vs " ..
      v.baseline .. ": " .. v.verdict .. " because " .. words.reason(v, c, an)) or nil
  end
  if #verdicts.rows == 0 then verdicts.note = "This study pre-registered no comparison." end
  if #verdicts.rows > 0 then
    verdicts.reasons[#verdicts.reasons + 1] = "share better: the share of seeds where the " ..
      "treatment is better, with its exact Clopper-Pearson interval."
  end
  for _, w in ipairs(guardrail.of_summary(sum)) do
    verdicts.reasons[#verdicts.reasons + 1] = "WARNING: " .. w.text
  end
  return verdicts
end

-- The robust companions of the verdicts' comparisons and interactions (exploratory,
-- outside the decision rule: lua/repro/analysis/robust.lua), or nil when the summary has
-- none (one made before replication verdicts existed).
local function robust_table(sum, an)
  local rows, reasons = {}, {}
  local function add(label, e)
    local r = e and e.robust
    if not r then return end
    rows[#rows + 1] = { label, robust.hl_text(r) or "-",
      string.format("%d/%d/%d", r.positive, r.negative, r.zeros), pval(r.p_sign),
      pval(r.p_wilcoxon), r.leave_one_out and (#r.leave_one_out.changes == 0 and "stable" or
        string.format("%d seed%s", #r.leave_one_out.changes,
          #r.leave_one_out.changes == 1 and "" or "s")) or "-" }
    local words = robust.loso_words(r)
    if r.leave_one_out and #r.leave_one_out.changes > 0 then
      reasons[#reasons + 1] = label .. ": " .. words
    end
  end
  local byname = {}
  for _, c in ipairs(sum.comparisons or {}) do
    if c.metric == an.primary then byname[c.treatment .. "\0" .. c.baseline] = c end
  end
  for _, v in ipairs(sum.verdicts or {}) do
    add(v.treatment .. " vs " .. v.baseline, byname[v.treatment .. "\0" .. v.baseline])
  end
  for _, e in ipairs(sum.interactions or {}) do
    if e.metric == an.primary then add("interaction " .. tostring(e.name), e) end
  end
  if #rows == 0 then return nil end
  table.insert(reasons, 1, "Exploratory, outside the decision rule: the Hodges-Lehmann " ..
    "estimate of the difference with its exact Wilcoxon signed-rank interval, the signs of " ..
    "the per-seed differences (positive/negative/zero), the sign test and the exact " ..
    "signed-rank test, and whether removing any one seed changes the verdict (stable) or " ..
    "which seeds do.")
  return { title = "Robust companions on " .. tostring(an.primary) .. " (exploratory)",
    head = { "comparison", "Hodges-Lehmann [interval]", "signs +/-/0", "sign p",
      "signed-rank p", "leave one seed out" }, rows = rows, reasons = reasons }
end

-- The replication section (summary.replication, lua/repro/analysis/replication.lua): one
-- row per original and set-up, each claim's verdict and the rules under it; nil when the
-- study declares no original.
local function replication_table(sum)
  local rep = sum.replication
  if type(rep) ~= "table" or type(rep.entries) ~= "table" then return nil end
  local rows, reasons = {}, {}
  for _, c in ipairs(rep.claims or {}) do
    reasons[#reasons + 1] = string.format("Claim %s: %s (%s).", tostring(c.claim),
      tostring(c.verdict), replication.claim_reason(c))
  end
  for _, e in ipairs(rep.entries) do
    local st, r = e.stats or {}, e.replication or {}
    local ci = st.ci
    rows[#rows + 1] = { tostring(e.claim), e.treatment .. " vs " .. e.baseline .. " on " ..
      e.metric .. (e.matches and "" or " (not the original's set-up)"),
      num(e.original and e.original.estimate),
      num(r.mean) .. (ci and string.format(" [%s, %s]", num(ci[1]), num(ci[2])) or ""),
      st.pi and string.format("[%s, %s]", num(st.pi[1]), num(st.pi[2])) or "-",
      tostring(e.verdict) }
    local parts = { e.claim .. ", " .. e.treatment .. " vs " .. e.baseline .. ": " ..
      replication.entry_reason(e) }
    if st.d33_raw then
      parts[#parts + 1] = string.format("d33 %s in the metric's units (small-telescope p %s)",
        num(st.d33_raw), pval(st.telescope_p))
    end
    if st.tost then
      parts[#parts + 1] = string.format("equivalence at +-%s (descriptive): TOST p %s",
        num(st.tost.margin), pval(st.tost.p))
    end
    if r.hodges_lehmann then
      parts[#parts + 1] = "Hodges-Lehmann " .. num(r.hodges_lehmann) .. " (exploratory)"
    end
    if replication.direction(e) then parts[#parts + 1] = replication.direction(e) end
    parts[#parts + 1] = string.format("original: %s (se %s); %s", num(e.original and
      e.original.estimate), num(e.original and e.original.se), tostring(e.source)) ..
      (e.declared and (", declared " .. e.declared) or "")
    reasons[#reasons + 1] = table.concat(parts, "; ") .. "."
  end
  reasons[#reasons + 1] = "Rules: " .. replication.RULES
  return { title = "Replication", head = { "claim", "comparison", "original",
    "replication [CI]", "95 % prediction interval", "verdict" }, rows = rows,
    reasons = reasons }
end

-- Per shot count of a task study (summary.tasks, lua/repro/analysis/tasks.lua): each
-- task's chance rate, bigram, strongest n-gram (with the ladder: its order) and untrained
-- accuracy (the controls, a column per set-up named by its label, tasks.CONTROL_SETUPS),
-- each variant's mean accuracy ± sd over seeds (at 0-shot a "*" where it lies above the
-- strongest n-gram and guessing), and each comparison's paired difference with its Holm p
-- over tasks x comparisons; the macro row's interval is the paired BCa bootstrap,
-- descriptive, and says so in its cell ("BCa [lo, hi]"), its column header and the note,
-- apart from the verdict's decision interval.

local function task_tables(sum)
  local st = sum.tasks
  if type(st) ~= "table" then return {} end
  local out = {}
  local setup_label = {}
  for _, su in ipairs(tasks.CONTROL_SETUPS) do setup_label[su.name] = su.label end
  local setups, seen = {}, {}
  for _, ch in pairs(st.chance or {}) do
    for name in pairs(type(ch) == "table" and type(ch.untrained) == "table" and ch.untrained
        or {}) do
      if not seen[name] then seen[name], setups[#setups + 1] = true, name end
    end
  end
  table.sort(setups, function(a, b)
    local function rank(x)
      for i, su in ipairs(tasks.CONTROL_SETUPS) do if su.name == x then return i end end
      return math.huge
    end
    if rank(a) ~= rank(b) then return rank(a) < rank(b) end
    return a < b
  end)
  for _, k in ipairs(st.shots or {}) do
    local t = { title = string.format("Tasks, %d-shot accuracy", k), head = { "task", "chance",
      "bigram", "best n-gram" }, rows = {} }
    for _, name in ipairs(setups) do
      t.head[#t.head + 1] = "untrained (" .. (setup_label[name] or name) .. ")"
    end
    for _, v in ipairs(sum.variants or {}) do t.head[#t.head + 1] = v.name end
    local comps, diffs = {}, {}
    for _, e in ipairs(st.per_task or {}) do
      if e.shots == k then
        local key = e.treatment .. " - " .. e.baseline
        if not diffs[key] then
          diffs[key] = {}
          comps[#comps + 1] = key
          t.head[#t.head + 1] = key .. ": difference (Holm p); macro: BCa bootstrap interval"
        end
        diffs[key][e.task] = string.format("%s (%s)", num(e.mean), pval(e.p_holm))
      end
    end
    local tasks_seen = {}
    for _, e in ipairs(st.per_task or {}) do
      if e.shots == k and not tasks_seen[e.task] then
        tasks_seen[#tasks_seen + 1], tasks_seen[e.task] = e.task, true
      end
    end
    -- k-shot numbers only where enough items kept their k demonstrations (summary.tasks
    -- .demos); the macro only where every task did
    local unmeasurable = {}
    for _, d in ipairs(st.demos or {}) do
      if d.shots == k and not d.measurable then
        unmeasurable[d.task] = string.format("%.0f %%", 100 * d.kept_share)
        unmeasurable.macro = true
      end
    end
    local NM = "not measurable at this window"
    local function row(name, metric, ch, diff_of)
      local best = ch and ch.ngram_best
      local r = { name, num(ch and ch.rate), num(ch and ch.bigram_acc),
        best and string.format("%s (%d-gram)", num(best.acc), best.order) or "-" }
      for _, su in ipairs(setups) do
        r[#r + 1] = num(ch and type(ch.untrained) == "table" and ch.untrained[su] or nil)
      end
      local beyond = k == 0 and ch and (st.beyond_ngram or {})[name]
      for _, v in ipairs(sum.variants or {}) do
        local m = ((sum.per_variant[v.name] or {}).metrics or {})[metric] or {}
        local star = ""
        for _, b in ipairs(beyond and beyond.variants or {}) do
          if b == v.name then star = " *" end
        end
        r[#r + 1] = unmeasurable[name] and NM or
          m.mean and string.format("%s ± %s%s", num(m.mean), num(m.sd), star) or "-"
      end
      for _, key in ipairs(comps) do r[#r + 1] = unmeasurable[name] and NM or diff_of(key) or "-" end
      t.rows[#t.rows + 1] = r
    end
    for _, task in ipairs(tasks_seen) do
      row(task, string.format("task_%s_%dshot_acc", task, k), (st.chance or {})[task],
        function(key) return diffs[key][task] end)
    end
    local macro = {}
    for _, e in ipairs(st.macro or {}) do
      if e.shots == k then
        local ci = e.ci_bca or e.ci_percentile
        macro[e.treatment .. " - " .. e.baseline] = string.format("%s, %s [%s, %s]",
          num(e.mean), e.ci_bca and "BCa" or "percentile bootstrap", num(ci and ci[1]),
          num(ci and ci[2]))
      end
    end
    row("macro", string.format("task_macro_acc_%dshot", k), nil, function(key)
      return macro[key] end)
    t.note = "Untrained: the controls' untrained models, one column per set-up (bin/repro " ..
      "tasks controls). Best n-gram: the strongest of the Witten-Bell ladder on the " ..
      "training split; * (0-shot): the variant's mean lies above it and above guessing, " ..
      "and only there is the task evidence of more than local statistics. The macro row's " ..
      "interval is the paired BCa bootstrap over seeds: descriptive, not the verdict's; " ..
      "the verdict's decision interval (its level and kind in the Verdicts table's header) " ..
      "decides." .. (st.macro_over and string.format(" The macro row " ..
      "averages %d tasks%s.", st.macro_over.n, #(st.macro_over.skipped or {}) == 0 and "" or
      " (skipped on this corpus: " .. (function()
        local l = {}
        for _, x in ipairs(st.macro_over.skipped) do l[#l + 1] = x.task .. ", " .. x.why end
        return table.concat(l, "; ")
      end)() .. ")") or "") .. (unmeasurable.macro and (" " .. NM .. ": fewer " ..
      "than 90 % of the task's items kept all their demonstrations inside the window, so " ..
      "its number would be the 0-shot one with a shorter context.") or "")
    out[#out + 1] = t
  end
  return out
end

-- The study's tables as { title =, head = {...}, rows = {{...}, ...}, note = } of plain
-- text: its design, its variants' statistics on the primary metric, its verdicts, their
-- robust companions (exploratory), the replication of the originals it declares, and a
-- task study's per-task tables.
function M.tables(s)
  local sum, an = s.summary, s.summary.analysis or {}
  local seq = pseq.of(sum)
  if seq then return M.sequential_tables(s, seq) end
  local out = { design_table(s.name, sum, an), variants_table(sum, an), verdicts_table(sum, an) }
  out[#out + 1] = robust_table(sum, an)
  out[#out + 1] = replication_table(sum)
  for _, t in ipairs(task_tables(sum)) do out[#out + 1] = t end
  -- a section an extension wrote (named as the extension is) brings its own tables
  local extension = require "repro.core.extension"
  for _, k in ipairs(base.sorted_keys(sum)) do
    local ext = type(sum[k]) == "table" and extension.resolve(k) and extension.load(k, "report")
    if ext and ext.report_tables then
      for _, t in ipairs(ext.report_tables(sum[k])) do out[#out + 1] = t end
    end
  end
  return out
end

-- A sequential study's tables: its design with the sequential one in place of the
-- fixed design's test and family, its variants, where and why each comparison stopped,
-- each comparison's path look by look, and the robust companions of the comparisons on
-- the seeds used (exploratory).
function M.sequential_tables(s, seq)
  local sum, an = s.summary, s.summary.analysis or {}
  local design = design_table(s.name, sum, an)
  local rows = {}
  for _, r in ipairs(design.rows) do
    if r[1] ~= "test" and r[1] ~= "family" then rows[#rows + 1] = r end
  end
  for _, r in ipairs(pseq.design_rows(seq)) do rows[#rows + 1] = r end
  design.rows = rows
  local out = { design, variants_table(sum, an), pseq.verdicts_table(sum) }
  for _, t in ipairs(pseq.path_tables(sum)) do out[#out + 1] = t end
  out[#out + 1] = robust_table(sum, an)
  return out
end

-- LaTeX ------------------------------------------------------------------------------

local function latex_table(t)
  local out = { "\\subsection*{" .. F.escape(t.title) .. "}" }
  if #t.rows == 0 then
    out[#out + 1] = F.escape(t.note or "Nothing to show.") .. "\n"
    return table.concat(out, "\n")
  end
  local wide = #t.head == 2
  -- a table of many columns (a task table: controls, variants, comparisons) fits the page
  -- with its long headers and interval cells wrapped in boxes
  local many = #t.head > 6
  local function box(text, w, align)
    if not many or #text <= (align == "b" and 12 or 22) then return F.escape(text) end
    return string.format("\\parbox[%s]{%s}{\\raggedright %s}", align, w, F.escape(text))
  end
  out[#out + 1] = many and "\\begin{center}\\scriptsize" or "\\begin{center}\\small"
  out[#out + 1] = wide and "\\begin{tabularx}{\\linewidth}{@{}lX@{}}" or
    ("\\begin{tabular}{@{}" .. string.rep("l", #t.head) .. "@{}}")
  out[#out + 1] = "\\toprule"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = box(h, "2.1cm", "b") end
  out[#out + 1] = table.concat(head, " & ") .. " \\\\"
  out[#out + 1] = "\\midrule"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = box(c, "2.6cm", "t") end
    out[#out + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  out[#out + 1] = "\\bottomrule"
  out[#out + 1] = wide and "\\end{tabularx}" or "\\end{tabular}"
  out[#out + 1] = "\\end{center}"
  for _, reason in ipairs(t.reasons or {}) do
    out[#out + 1] = "\\par\\noindent{\\small " .. F.escape(reason) .. "}"
  end
  -- a table's note says how to read it (which interval is which)
  if t.note then out[#out + 1] = "\\par\\noindent{\\small " .. F.escape(t.note) .. "}" end
  return table.concat(out, "\n") .. "\n"
end

local function latex_figure(spec, caption)
  if spec.skip then
    return "\\par\\noindent\\emph{" .. F.escape(caption .. ": not drawn, " .. spec.skip) ..
      ".}\n"
  end
  return string.format("\\begin{center}\\includegraphics[width=0.9\\linewidth]{figures/%s.pdf}" ..
    "\\\\[2pt]{\\small %s}\\end{center}\n", spec.name, F.escape(caption))
end

function M.latex(s, tables, specs, captions)
  local out = { "% Generated by bin/repro report " .. s.name .. ": do not edit.",
    "\\documentclass[10pt]{article}",
    "\\usepackage[margin=1in]{geometry}",
    "\\usepackage{graphicx,booktabs,tabularx}",
    "\\usepackage[T1]{fontenc}",
    -- Type 1 fonts with the T1 encoding (psnfss: Times, Helvetica, Courier), so that the
    -- PDF's text has its underscores and ligatures (the EC fonts are bitmaps here)
    "\\usepackage{mathptmx,helvet,courier}",
    "\\pdfinfoomitdate=1 \\pdftrailerid{} \\pdfsuppressptexinfo=-1",
    "\\newcommand{\\num}[1]{#1}",
    "\\begin{document}",
    "\\section*{The " .. F.escape(s.name) .. " study}" }
  for _, t in ipairs(tables) do out[#out + 1] = latex_table(t) end
  out[#out + 1] = "\\subsection*{Figures}"
  for _, spec in ipairs(specs) do out[#out + 1] = latex_figure(spec, captions[spec.name]) end
  out[#out + 1] = "\\end{document}"
  return table.concat(out, "\n") .. "\n"
end

-- HTML -------------------------------------------------------------------------------

local function html_escape(x)
  return (tostring(x):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end

local function html_table(t)
  local out = { "<h2>" .. html_escape(t.title) .. "</h2>" }
  if #t.rows == 0 then
    out[#out + 1] = "<p>" .. html_escape(t.note or "Nothing to show.") .. "</p>"
    return table.concat(out, "\n")
  end
  out[#out + 1] = "<table>"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = "<th>" .. html_escape(h) .. "</th>" end
  out[#out + 1] = "<tr>" .. table.concat(head) .. "</tr>"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = "<td>" .. html_escape(c) .. "</td>" end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</table>"
  if t.note then out[#out + 1] = "<p class=\"note\">" .. html_escape(t.note) .. "</p>" end
  for _, reason in ipairs(t.reasons or {}) do
    out[#out + 1] = "<p class=\"reason\">" .. html_escape(reason) .. "</p>"
  end
  return table.concat(out, "\n")
end

-- A table's cells that stand for no value.
local UNDEFINED = { ["-"] = true, ["undefined"] = true, ["?"] = true, [""] = true }

-- Table t as CSV (header first), with the column not_measurable.
function M.csv(t)
  local results = require "repro.report.results"
  local head = { table.unpack(t.head) }
  head[#head + 1] = "not_measurable"
  local lines = { results.csv_line(head) }
  for _, r in ipairs(t.rows) do
    local row, empty = {}, {}
    for i = 1, #t.head do
      local c = r[i]
      if c == nil or UNDEFINED[c] then
        empty[#empty + 1] = t.head[i]
      else
        row[i] = c
      end
    end
    row[#t.head + 1] = #empty > 0 and table.concat(empty, ";") or nil
    row.n = #t.head + 1
    lines[#lines + 1] = results.csv_line(row)
  end
  return table.concat(lines)
end

-- A table's file name: its position and title, lower case, words joined by "-".
local function csv_name(k, t)
  return string.format("%02d-%s.csv", k, (t.title:lower():gsub("[^%w]+", "-"):gsub("^-+", "")
    :gsub("-+$", "")))
end

function M.html(s, tables, specs, captions)
  local out = { "<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
    "<title>The " .. html_escape(s.name) .. " study</title>",
    "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}" ..
      "table{border-collapse:collapse;margin:1em 0}th,td{border-bottom:1px solid #ccc;" ..
      "padding:0.2em 0.6em;text-align:left}img{max-width:100%}.reason{font-size:90%}</style>",
    "</head>", "<body>", "<h1>The " .. html_escape(s.name) .. " study</h1>" }
  for _, t in ipairs(tables) do out[#out + 1] = html_table(t) end
  out[#out + 1] = "<h2>Figures</h2>"
  for _, spec in ipairs(specs) do
    local caption = html_escape(captions[spec.name])
    if spec.skip then
      out[#out + 1] = "<p><em>" .. caption .. ": not drawn, " .. html_escape(spec.skip) ..
        ".</em></p>"
    else
      out[#out + 1] = string.format("<figure><img src=\"figures/png/%s.png\" alt=\"%s\">" ..
        "<figcaption>%s</figcaption></figure>", spec.name, caption, caption)
    end
  end
  out[#out + 1] = "</body>"
  out[#out + 1] = "</html>"
  return table.concat(out, "\n") .. "\n"
end

-- The command ------------------------------------------------------------------------

local function parse_args(args)
  local o = { experiments = "experiments" }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--experiments" then
      o.experiments = args[i + 1] or user_error("repro report: --experiments needs a directory")
      i = i + 1
    elseif a == "--studies" then
      o.studies = args[i + 1] or user_error("repro report: --studies needs a directory")
      i = i + 1
    elseif a:match("^%-") or o.study then
      user_error("repro report: unknown argument %s (usage: bin/repro report STUDY " ..
        "[--experiments DIR] [--studies DIR])", a)
    else
      -- a study file's path names the folder its summary is recomputed from
      local dir, name = a:match("^(.*)/([^/]+)%.lua$")
      o.study = name or a:match("([^/]+)%.lua$") or a
      if dir and not o.studies then o.studies = dir end
    end
    i = i + 1
  end
  if not base.valid_name(o.study or "") then
    user_error("repro report: expected a study name, got %s", base.printable(o.study or ""))
  end
  o.experiments = o.experiments:gsub("/+$", "")
  return o
end

-- The figures every study report has: the forest plot of the primary metric, the
-- training loss and the validation loss (periodic diagnostics) per variant over training.
local function base_figures(s, primary)
  local family = {}
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.metric == primary then family[#family + 1] = c end
  end
  local ci_head = terminal.interval_column(family, (s.summary.analysis or {}).alpha)
  return {
    { name = "forest", kind = "forest", metric = primary, width = "0.9\\linewidth",
      name_font = "LM Mono 10,9" },
    { name = "train_loss", kind = "curves", study = s.name, column = "loss",
      ylabel = "training loss (nats)", width = "0.9\\linewidth" },
    { name = "val_loss", kind = "curves", study = s.name, column = "val_loss",
      ylabel = "validation loss (nats)", width = "0.9\\linewidth" },
  }, {
    forest = "Each comparison on " .. primary .. ": mean difference (treatment - baseline) " ..
      "with its decision interval (blue; " .. ci_head .. ", as in the Verdicts table), the " ..
      "band of +- the minimum effect (grey), and " ..
      "open orange diamonds at +- the minimum detectable effect (MDE): the smallest " ..
      "difference the design detects with 80 % power at the Holm first-step level " ..
      "(alpha / m), the size of effect its seeds can find",
    train_loss = "Training loss per variant over training: mean over seeds (line) and the " ..
      "range from the lowest to the highest seed (band)",
    val_loss = "Validation loss (val_loss; log.csv's column d_val_loss, the periodic " ..
      "diagnostics) per variant over training: mean over seeds and range",
  }
end

-- The figures of study s: every study's, and a task study's accuracy per task.
local function figures_of(s)
  local primary = s.summary.analysis and s.summary.analysis.primary or "val_loss"
  local specs, captions = base_figures(s, primary)
  if pseq.of(s.summary) then
    -- the decision is the path's: the forest's fixed-design interval would not be it
    specs[1] = { name = "path", kind = "sequential", study = s.name, width = "0.9\\linewidth" }
    captions.forest = nil
    captions.path = "Each comparison's path on " .. primary .. ": its estimate at each " ..
      "look (seeds per variant) with its repeated confidence interval, the look where it " ..
      "stopped ringed; the grey band is +- the equivalence margin, the grey line zero, " ..
      "and the dashed dark line the target effect, when the study declares one"
  end
  if type(s.summary.tasks) == "table" then
    specs[#specs + 1] = { name = "tasks", kind = "tasks", study = s.name, shots = 0,
      width = "0.9\\linewidth" }
    captions.tasks = "Zero-shot accuracy per task and variant: mean over seeds with a bar of " ..
      "one standard deviation; each task's chance rate (star), the bigram model's " ..
      "accuracy (circle) and the strongest n-gram model's (triangle), the control a task " ..
      "must beat to show more than local statistics"
  end
  return specs, captions
end

-- The factor a study's own report reads its summary with: the one the study declares
-- (summary.factor), its levels labelled by the study's variant names when each level is
-- one variant's, so that a variant has one name in every table, figure and sentence of
-- the report (the forest's "drop01 - nodrop", the curves' and the task figure's keys);
-- nil (the study's own reading) otherwise.
function M.factor_for(sum)
  if type(sum) ~= "table" or type(sum.factor) ~= "string" or type(sum.variants) ~= "table" then
    return nil
  end
  local key, labels, count = sum.factor, {}, {}
  local base_level = type(sum.base) == "table" and sum.base[key]
  if base_level == nil then base_level = require("engine").defaults()[key] end
  for _, v in ipairs(sum.variants) do
    local level = type(v.overrides) == "table" and v.overrides[key]
    if level == nil then level = base_level end
    level = tostring(level)
    count[level] = (count[level] or 0) + 1
    labels[level] = v.name
  end
  for _, n in pairs(count) do if n > 1 then return nil end end
  return { key = key, labels = labels }
end

-- Writes OUT/<study>/report/; returns its directory.
function M.generate(o)
  local ok_sum, pre = pcall(require("repro.core.json").decode,
    fs.read(o.experiments .. "/" .. o.study .. "/summary.json") or "")
  local s = data.load_study(o.experiments, o.study, nil, ok_sum and M.factor_for(pre) or nil,
    { studies = o.studies })
  if not s then
    user_error("repro report: %s/%s/summary.json does not exist (bin/repro run or analyze " ..
      "writes it)", o.experiments, o.study)
  end
  io.stderr:write("repro report: ", require("repro.record.set").count_text(s.counts), "\n")
  local dir = o.experiments .. "/" .. o.study .. "/report"
  for _, d in ipairs({ dir .. "/figures/png", dir .. "/data" }) do fs.mkdir_p(d) end
  local out = require("repro.report").new_output()
  local ctx = { studies = { s }, by_name = { [s.name] = s }, names = { s.name }, appendix = {},
    experiments = o.experiments, out = out, manifest = { listed = { [s.name] = true },
      studies = { s.name }, text_width = 6.5 } }
  local entries, captions = figures_of(s)
  local specs = plot.write_data(ctx, entries, dir .. "/data")
  plot.render(specs, { data = dir .. "/data", gp_dir = host.root .. "/plots",
    figures = dir .. "/figures", out = out })
  local tables = M.tables(s)
  out:write(dir .. "/report.tex", M.latex(s, tables, specs, captions))
  out:write(dir .. "/report.html", M.html(s, tables, specs, captions))
  fs.mkdir_p(dir .. "/tables")
  for k, t in ipairs(tables) do
    if #t.rows > 0 then out:write(dir .. "/tables/" .. csv_name(k, t), M.csv(t)) end
  end
  local build = dir .. "/latex"
  fs.mkdir_p(build)
  local cmd = string.format("cd %s && SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1 pdflatex " ..
    "-interaction=nonstopmode -halt-on-error -output-directory=latex report.tex >/dev/null 2>&1",
    fs.quote(dir))
  if not os.execute(cmd) then
    user_error("repro report: pdflatex failed on %s/report.tex (log: %s/report.log)", dir, build)
  end
  out:write(dir .. "/report.pdf", assert(fs.read(build .. "/report.pdf")))
  return dir, out
end

function M.main(args)
  local o = parse_args(args)
  local dir, out = M.generate(o)
  io.stderr:write(base.printable(string.format("report: %s/report.pdf and %s/report.html (%d " ..
    "file%s changed, %d unchanged)", dir, dir, out.changed, out.changed == 1 and "" or "s",
    out.kept)), "\n")
  return 0
end

return M
