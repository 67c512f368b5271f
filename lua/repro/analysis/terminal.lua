-- A summary's verdicts for a terminal (the run and analyze commands' stdout).
local textable = require "repro.core.textable"
local words = require "repro.analysis.words"
local lrsens = require "repro.analysis.lrsens"
local replication = require "repro.analysis.replication"
local guardrail = require "repro.analysis.guardrail"
local robust = require "repro.analysis.robust"

local M = {}
local fmt = words.fmt
local RULE = require("repro.study").RULE

-- A config value as text.
local function value_text(v)
  if math.type(v) == "float" then return fmt(v) end
  return tostring(v)
end

-- The setup a summary describes, in one sentence: the study's base config with the
-- command-line overrides (--set) applied, and those overrides named, so that the verdicts
-- of a --set run never read as the study's own.
function M.setup_text(summary)
  local set = type(summary.command_line_overrides) == "table" and
    summary.command_line_overrides or {}
  local keys, parts, set_parts = {}, {}, {}
  for k in pairs(summary.base or {}) do keys[#keys + 1] = k end
  for k in pairs(set) do if (summary.base or {})[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = set[k] ~= nil and set[k] or summary.base[k]
    parts[#parts + 1] = k .. "=" .. value_text(v)
    if set[k] ~= nil then set_parts[#set_parts + 1] = k .. "=" .. value_text(v) end
  end
  return string.format("setup: %s%s", #parts > 0 and table.concat(parts, " ") or
    "the default config", #set_parts > 0 and ("; command-line overrides on every run: --set " ..
    table.concat(set_parts, ",")) or "; no command-line overrides")
end

-- "Holm over the N tests of the primary metric m" of a summary's analysis an.
function M.family_words(an)
  local head = words.family(an):match("^[^:]+") or ""
  return (head:gsub("^Holm over the 1 tests", "Holm over 1 test"))
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
    local cell = string.format("[%s, %s]", fmt(ci[1]), fmt(ci[2]))
    if not only then cell = (KIND[e.ci_decision_kind] or tostring(e.ci_decision_kind)) ..
      " " .. cell end
    return cell
  end
end

-- A sequential study's verdicts (summary.sequential): per comparison the look it stopped
-- at, its estimate and repeated interval, and why.
function M.sequential_table(summary, width)
  local seq, an = summary.sequential, summary.analysis
  local d = seq.design
  local looks = {}
  for i, n in ipairs(d.looks) do looks[i] = string.format("%d", n) end
  local lines = { textable.wrap(string.format("sequential verdicts on %s (%s is better; looks " ..
    "at %s seeds per variant; %s boundaries, %s; %s test; alpha %s over %d " ..
    "comparison%s; stops: %s):", an.primary, an.better, table.concat(looks, ", "), d.shape,
    words.sequential_boundary(d), d.test, fmt(d.alpha), d.m, d.m == 1 and "" or "s", table.concat(d.stop, ", ")),
    width), textable.wrap(M.setup_text(summary), width, "", "  ") }
  local rows = { { "treatment", "baseline", "look", "seeds", "estimate", "repeated interval",
    "verdict" } }
  for _, e in ipairs(seq.comparisons) do
    local lk = e.looks[#e.looks] or {}
    rows[#rows + 1] = { e.treatment, e.baseline, lk.look and string.format("%d", lk.look) or "-",
      lk.n and string.format("%d", lk.n) or "-", fmt(lk.estimate), lk.ci and
      string.format("[%s, %s]", fmt(lk.ci[1]), fmt(lk.ci[2])) or "-", e.verdict or "open" }
  end
  local k = 0
  for row in textable.render(rows, { indent = "  ", width = width }):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = row
    local e = seq.comparisons[k]
    if e then
      lines[#lines + 1] = textable.wrap("because " .. words.sequential_reason(e, d), width,
        "      ", "        ")
    end
    k = k + 1
  end
  lines[#lines + 1] = textable.wrap(string.format("  runs: %d used by the decisions, %d " ..
    "done, against %d for the fixed design", seq.runs_used, seq.runs_done, seq.runs_fixed),
    width, "", "    ")
  return table.concat(lines, "\n") .. "\n"
end

-- The verdicts as a short text table (for the run command's stdout), each row followed by its
-- reason.
-- width (optional): the terminal's; the table's columns are cut and its sentences wrapped
-- to it (lua/repro/core/textable.lua).  extensions (optional): the study's, by section
-- name; a section's lines come from its extension's text(section).
-- The lines marking a summary's adopted records (its provenance section), or none.
function M.provenance_lines(summary, width)
  local lines = {}
  local p = summary.provenance
  if type(p) ~= "table" or type(p.adopted) ~= "table" or #p.adopted == 0 then return lines end
  lines[1] = textable.wrap(string.format("ADOPTED: %d record%s neither committed nor made " ..
    "by this checkout; `bin/repro audit` retrains these first:", #p.adopted,
    #p.adopted == 1 and " is" or "s are"), width)
  for _, e in ipairs(p.adopted) do
    lines[#lines + 1] = textable.wrap(words.adopted(e), width, "  ", "    ")
  end
  return lines
end

function M.verdict_table(summary, width, extensions)
  if summary.sequential then
    local text = M.sequential_table(summary, width)
    local extra = M.provenance_lines(summary, width)
    return #extra == 0 and text or (text .. table.concat(extra, "\n") .. "\n")
  end
  local an = summary.analysis
  local lines = { textable.wrap(string.format("verdicts on %s (%s is better; minimum effect " ..
    "%s; alpha %s; %s test; %s):", an.primary, an.better, fmt(an.min_effect), fmt(an.alpha),
    an.test or "t", M.family_words(an)), width), textable.wrap(M.setup_text(summary),
    width, "", "  ") }
  -- the verdict under rule 1 only for a study registered under it
  local rule1 = (an.registered_rule or RULE) < (an.rule or RULE)
  local byname, family = {}, {}
  for _, c in ipairs(summary.comparisons) do
    if c.metric == an.primary then
      byname[c.treatment .. "\0" .. c.baseline] = c
      family[#family + 1] = c
    end
  end
  local ci_head, ci_cell = M.interval_column(family, an.alpha)
  local rows = { { "treatment", "baseline", "mean diff", ci_head, "HL [Wilcoxon]*",
    "p_holm", "TOST p_holm", "verdict", rule1 and "rule 1" or nil } }
  for _, v in ipairs(summary.verdicts) do
    local c = byname[v.treatment .. "\0" .. v.baseline]
    local ci = c.ci_decision
    rows[#rows + 1] = { v.treatment, v.baseline, fmt(c.mean), ci and ci_cell(c) or "-",
      robust.hl_text(c.robust) or "-", fmt(c.p_holm),
      c.tost and c.tost.p_holm and fmt(c.tost.p_holm) or "-", v.verdict,
      rule1 and ((v.verdict_rule1 or "-") .. (v.changed and " (changed)" or "")) or nil }
  end
  local k = 0
  for row in textable.render(rows, { indent = "  ", width = width }):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = row
    local v = summary.verdicts[k]
    local c = v and byname[v.treatment .. "\0" .. v.baseline]
    if v and v.reason and v.reason ~= "no_pairs" then
      lines[#lines + 1] = textable.wrap("because " .. words.reason(v, c, an), width, "      ",
        "        ")
    end
    local words = c and robust.words(c.robust)
    if words then lines[#lines + 1] = textable.wrap("* " .. words, width, "      ", "        ") end
    k = k + 1
  end
  if #summary.verdicts == 0 then lines[#lines + 1] = "  (no comparisons)" end
  if #summary.verdicts > 0 and (summary.comparisons[1] or {}).robust then
    lines[#lines + 1] = textable.wrap("  * exploratory, outside the decision rule: the " ..
      "Hodges-Lehmann estimate with its exact Wilcoxon signed-rank interval, the sign and " ..
      "signed-rank tests, and the seeds whose removal changes a verdict", width, "", "    ")
  end
  if summary.interaction_verdicts then
    lines[#lines + 1] = textable.wrap("interactions on " .. an.primary .. " (effect a minus " ..
      "effect b; better: effect a is the more favourable):", width)
    local byname, ents = {}, {}
    for _, e in ipairs(summary.interactions) do
      if e.metric == an.primary then
        byname[e.name] = e
        ents[#ents + 1] = e
      end
    end
    local ihead, icell = M.interval_column(ents, an.alpha)
    local irows = { { "interaction", "mean diff", ihead, "HL [Wilcoxon]*", "p_holm",
      "TOST p_holm", "verdict" } }
    for _, v in ipairs(summary.interaction_verdicts) do
      local e = byname[v.name]
      local ci = e.ci_decision
      irows[#irows + 1] = { v.name, fmt(e.mean), ci and icell(e) or "-",
        robust.hl_text(e.robust) or "-", fmt(e.p_holm),
        e.tost and e.tost.p_holm and fmt(e.tost.p_holm) or "-", v.verdict }
    end
    local j = 0
    for row in textable.render(irows, { indent = "  ", width = width }):gmatch("([^\n]*)\n") do
      lines[#lines + 1] = row
      local v = summary.interaction_verdicts[j]
      if v and v.reason and v.reason ~= "no_pairs" then
        lines[#lines + 1] = textable.wrap("because " .. words.reason(v, byname[v.name], an),
          width, "      ", "        ")
      end
      local words = v and byname[v.name] and robust.words(byname[v.name].robust)
      if words then lines[#lines + 1] = textable.wrap("* " .. words, width, "      ", "        ") end
      j = j + 1
    end
  end
  for _, w in ipairs(guardrail.of_summary(summary)) do
    lines[#lines + 1] = textable.wrap("WARNING: " .. w.text, width, "  ", "    ")
  end
  for _, l in ipairs(M.provenance_lines(summary, width)) do lines[#lines + 1] = l end
  if an.seeds_from_power then
    lines[#lines + 1] = textable.wrap(require("repro.study").seeds_text(an.seeds_from_power),
      width, "  ", "    ")
  end
  for _, l in ipairs(replication.text(summary.replication)) do lines[#lines + 1] = l end
  local sections = {} -- an extension's section with console text (header)
  for k, ext in pairs(extensions or {}) do
    if type(summary[k]) == "table" and type(ext.text) == "function" then
      sections[#sections + 1] = k
    end
  end
  table.sort(sections)
  for _, k in ipairs(sections) do
    for _, l in ipairs(extensions[k].text(summary[k])) do lines[#lines + 1] = l end
  end
  for _, l in ipairs(lrsens.text(summary.lr_sweep)) do lines[#lines + 1] = l end
  if summary.sweep_outcomes then
    lines[#lines + 1] = "outcomes over the grid (lr_sweep.outcomes):"
    lines[#lines + 1] = M.verdict_table(summary.sweep_outcomes, width)
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
