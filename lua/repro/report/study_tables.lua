-- A study's tables, built once from its summary for every output: the terminal's verdicts
-- (report/terminal.lua) and the study's own report (standalone.lua) render the same
-- rows through the one table model (table.lua).  M.tables(s) gives the study's design,
-- its variants on the primary metric, its verdicts and interactions, their robust
-- companions (exploratory), the replication of the originals it declares, a task study's
-- per-task tables and its extensions' tables; a sequential study its looks instead.
local base = require "repro.core.base"
local words = require "repro.analysis.words"
local robust = require "repro.analysis.robust"
local replication = require "repro.analysis.replication"
local guardrail = require "repro.analysis.guardrail"
local pseq = require "repro.report.sequential"
local tasks = require "repro.tasks"
local tex_tasks = require "repro.report.tex_tasks"
local tbl = require "repro.report.table"

local M = {}
local num, pval = tbl.num, tbl.p

-- A count or a config value as text: integers without a decimal point (JSON gives
-- every number as a float), other numbers with 4 significant digits.
local function value_text(x)
  if type(x) ~= "number" then return tostring(x) end
  return base.whole(x) and string.format("%d", x) or num(x)
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
  local set_keys = base.sorted_keys(set)
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

-- The header of a decision-interval column: its level and kind (the t interval or the
-- sign-flip inversion interval), from the entries' ci_decision_kind; "decision interval"
-- with each cell naming its kind when they differ.  Returns the header and a function
-- giving a cell's text for an entry.
local KIND = { t = "t", signflip = "sign-flip" }
function M.interval_column(entries, alpha)
  local kinds, n = {}, 0
  for _, e in ipairs(entries) do
    local k = e.ci_decision and e.ci_decision_kind
    if k and not kinds[k] then kinds[k], n = true, n + 1 end
  end
  local level = string.format("%g %%", 100 * (1 - (alpha or 0.05)))
  local only = n == 1 and next(kinds) or nil
  local head = only and string.format("%s %s interval (decision)", level, KIND[only] or only)
    or string.format("%s decision interval", level)
  return head, function(e)
    local ci = e.ci_decision
    if not ci then return "-" end
    local cell = string.format("[%s, %s]", num(ci[1]), num(ci[2]))
    if not only then cell = (KIND[e.ci_decision_kind] or tostring(e.ci_decision_kind)) ..
      " " .. cell end
    return cell
  end
end

-- A study's verdict rows, built once for every output: the terminal's and the study
-- report's tables below and the paper's verdict tables (tex_numbers.lua) render the same
-- rows.  Per verdict of sum (with `interactions`, per interaction verdict) its values:
-- { v = the verdict, e = the entry it decides on its metric (the primary unless it names
-- one), or for a comparison the summary lacks { treatment, baseline, metric, n = 0 }, nil
-- for such an interaction; verdict = its word, label = the comparison ("a vs b") or the
-- interaction's name, because = why, in the analysis's words, where it has them }.
function M.verdict_rows(sum, an, interactions)
  local function key(x, metric)
    if interactions then return tostring(x.name) .. "\0" .. tostring(metric) end
    return x.treatment .. "\0" .. x.baseline .. "\0" .. tostring(metric)
  end
  local by = {}
  for _, e in ipairs((interactions and sum.interactions or sum.comparisons) or {}) do
    by[key(e, e.metric)] = e
  end
  local rows = {}
  for _, v in ipairs((interactions and sum.interaction_verdicts or sum.verdicts) or {}) do
    local e = by[key(v, v.metric or an.primary)]
    if not e and not interactions then
      e = { treatment = v.treatment, baseline = v.baseline, metric = v.metric, n = 0 }
    end
    -- (a sequential study's verdicts have no reason of the fixed design's words)
    local why = e and words.reason(v, e, an)
    rows[#rows + 1] = { v = v, e = e, verdict = v.verdict, label = interactions and
      tostring(v.name) or (v.treatment .. " vs " .. v.baseline),
      because = why and ("because " .. why) }
  end
  return rows
end

-- The verdicts table (with `interactions`, the interaction verdicts': effect a minus effect
-- b on the primary metric; nil when the summary has none), each verdict's reason (the
-- analysis's words) tied to its row; the verdict under rule 1 beside it for a study
-- registered under that rule.
function M.verdicts_table(sum, an, interactions)
  if interactions and type(sum.interaction_verdicts) ~= "table" then return nil end
  local on_primary = {}
  for _, e in ipairs((interactions and sum.interactions or sum.comparisons) or {}) do
    if e.metric == an.primary then on_primary[#on_primary + 1] = e end
  end
  local ci_head, ci_cell = M.interval_column(on_primary, an.alpha)
  local RULE = require("repro.study").RULE
  local rule1 = not interactions and (an.registered_rule or RULE) < (an.rule or RULE)
  local stats = { "mean difference", ci_head, "p (Holm)", "TOST p (Holm)" }
  local t = { title = (interactions and "Interactions on " or "Verdicts on ") ..
    tostring(an.primary), head = interactions and { "interaction", table.unpack(stats) } or
    { "treatment", "baseline", table.unpack(stats) }, rows = {}, reasons = {} }
  -- (a comparison's share better before the verdict; rule 1 after it)
  if not interactions then t.head[#t.head + 1] = "share better [CP]" end
  t.head[#t.head + 1] = "verdict"
  t.head[#t.head + 1] = rule1 and "rule 1" or nil
  for k, r in ipairs(M.verdict_rows(sum, an, interactions)) do
    local v, e = r.v, r.e or {}
    local row = interactions and { tostring(v.name) } or { v.treatment, v.baseline }
    for _, c in ipairs({ num(e.mean), ci_cell(e), pval(e.p_holm), pval(e.tost and
        e.tost.p_holm) }) do row[#row + 1] = c end
    if not interactions then row[#row + 1] = words.improvement(e.improvement) end
    row[#row + 1] = v.verdict
    row[#row + 1] = rule1 and ((v.verdict_rule1 or "-") .. (v.changed and " (changed)" or
      "")) or nil
    t.rows[k] = row
    if v.reason and v.reason ~= "no_pairs" then
      t.reasons[#t.reasons + 1] = { row = k, lead = r.label .. ": " .. v.verdict .. " ",
        text = r.because }
    end
  end
  if interactions then
    t.note = "An interaction is effect a minus effect b; better: effect a is the more " ..
      "favourable."
  elseif #t.rows == 0 then
    t.note = "This study pre-registered no comparison."
  else
    t.reasons[#t.reasons + 1] = "share better: the share of seeds where the treatment is " ..
      "better, with its exact Clopper-Pearson interval."
  end
  for _, w in ipairs(not interactions and guardrail.of_summary(sum) or {}) do
    t.reasons[#t.reasons + 1] = "WARNING: " .. w.text
  end
  return t
end

-- The robust companions of the verdicts' comparisons and interactions (exploratory,
-- outside the decision rule: lua/repro/analysis/robust.lua), or nil when the summary has
-- none (one made before replication verdicts existed).
function M.robust_table(sum, an)
  local rows, reasons = {}, {}
  local function add(label, e)
    local r = e and e.robust
    if not r then return end
    rows[#rows + 1] = { label, robust.hl_text(r) or "-",
      string.format("%d/%d/%d", r.positive, r.negative, r.zeros), pval(r.p_sign),
      pval(r.p_wilcoxon), r.leave_one_out and (#r.leave_one_out.changes == 0 and "stable" or
        string.format("%d seed%s", #r.leave_one_out.changes,
          #r.leave_one_out.changes == 1 and "" or "s")) or "-" }
    if r.leave_one_out and #r.leave_one_out.changes > 0 then
      reasons[#reasons + 1] = label .. ": " .. robust.loso_words(r)
    end
  end
  for _, r in ipairs(M.verdict_rows(sum, an)) do add(r.label, r.e) end
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
  local found, setups, setup_label = {}, {}, {}
  for _, ch in pairs(st.chance or {}) do
    for name in pairs(type(ch) == "table" and type(ch.untrained) == "table" and ch.untrained
        or {}) do
      found[name] = true
    end
  end
  -- the suite's set-ups in its order, any other after them by name
  for _, su in ipairs(tasks.CONTROL_SETUPS) do
    if found[su.name] then setups[#setups + 1], found[su.name] = su.name, nil end
    setup_label[su.name] = su.label
  end
  for _, name in ipairs(base.sorted_keys(found)) do setups[#setups + 1] = name end
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
    local NM = "not measurable at this window"
    -- k-shot numbers only where enough items kept their k demonstrations (summary.tasks
    -- .demos); the macro (task nil) only where every task did
    local function row(name, task, metric, ch, diff_of)
      local nm = not tex_tasks.measurable(st, k, task)
      local best = ch and ch.ngram_best
      local r = { name, num(ch and ch.rate), num(ch and ch.bigram_acc),
        best and string.format("%s (%d-gram)", num(best.acc), best.order) or "-" }
      for _, su in ipairs(setups) do
        r[#r + 1] = num(ch and type(ch.untrained) == "table" and ch.untrained[su] or nil)
      end
      for _, v in ipairs(sum.variants or {}) do
        local m = ((sum.per_variant[v.name] or {}).metrics or {})[metric] or {}
        local star = k == 0 and ch and tex_tasks.beyond(st, v.name, name) and " *" or ""
        r[#r + 1] = nm and NM or
          m.mean and string.format("%s ± %s%s", num(m.mean), num(m.sd), star) or "-"
      end
      for _, key in ipairs(comps) do r[#r + 1] = nm and NM or diff_of(key) or "-" end
      t.rows[#t.rows + 1] = r
    end
    for _, task in ipairs(tex_tasks.tasks_at(st, k)) do
      row(task, task, string.format("task_%s_%dshot_acc", task, k), (st.chance or {})[task],
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
    row("macro", nil, string.format("task_macro_acc_%dshot", k), nil, function(key)
      return macro[key] end)
    local skipped = {}
    for _, x in ipairs((st.macro_over or {}).skipped or {}) do
      skipped[#skipped + 1] = x.task .. ", " .. x.why
    end
    t.note = "Untrained: the controls' untrained models, one column per set-up (bin/repro " ..
      "tasks controls). Best n-gram: the strongest of the Witten-Bell ladder on the " ..
      "training split; * (0-shot): the variant's mean lies above it and above guessing, " ..
      "and only there is the task evidence of more than local statistics. The macro row's " ..
      "interval is the paired BCa bootstrap over seeds: descriptive, not the verdict's; " ..
      "the verdict's decision interval (its level and kind in the Verdicts table's header) " ..
      "decides." .. (st.macro_over and string.format(" The macro row averages %d tasks%s.",
        st.macro_over.n, #skipped == 0 and "" or
        (" (skipped on this corpus: " .. table.concat(skipped, "; ") .. ")")) or "") ..
      (not tex_tasks.measurable(st, k) and (" " .. NM .. ": fewer than 90 % of the task's " ..
        "items kept all their demonstrations inside the window, so its number would be the " ..
        "0-shot one with a shorter context.") or "")
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
  local out = { design_table(s.name, sum, an), variants_table(sum, an),
    M.verdicts_table(sum, an), M.verdicts_table(sum, an, true) }
  out[#out + 1] = M.robust_table(sum, an)
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
  out[#out + 1] = M.robust_table(sum, an)
  return out
end

return M
