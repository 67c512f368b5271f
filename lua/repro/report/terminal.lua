-- A summary's verdicts for a terminal (the run and analyze commands' stdout).
local textable = require "repro.core.textable"
local words = require "repro.analysis.words"
local lrsens = require "repro.analysis.lrsens"
local replication = require "repro.analysis.replication"

local M = {}
local fmt = words.fmt

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

-- Table t as terminal lines (report/table.lua), without the last newline.
local function text_of(t, width, opts)
  return (require("repro.report.table").text(t, width, opts):gsub("\n$", ""))
end

-- A sequential study's verdicts (summary.sequential): per comparison the look it stopped
-- at, its estimate and repeated interval, and why.
function M.sequential_table(summary, width)
  local seq, an = summary.sequential, summary.analysis
  local d = seq.design
  local lines = { textable.wrap(string.format("sequential verdicts on %s (%s is better; looks " ..
    "at %s seeds per variant; %s boundaries, %s; %s test; alpha %s over %d " ..
    "comparison%s; stops: %s):", an.primary, an.better, words.int_list(d.looks), d.shape,
    words.sequential_boundary(d), d.test, fmt(d.alpha), d.m, d.m == 1 and "" or "s",
    table.concat(d.stop, ", ")),
    width), textable.wrap(M.setup_text(summary), width, "", "  ") }
  local t = require("repro.report.sequential").verdicts_table(summary)
  for i, r in ipairs(t.reasons) do t.reasons[i] = { row = i, text = r } end
  t.note = nil
  lines[#lines + 1] = text_of(t, width, { title = false })
  lines[#lines + 1] = textable.wrap(string.format("  runs: %d used by the decisions, %d " ..
    "done, against %d for the fixed design", seq.runs_used, seq.runs_done, seq.runs_fixed),
    width, "", "    ")
  return table.concat(lines, "\n") .. "\n"
end

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

-- The verdicts as text (the run and analyze commands' stdout): the study's verdict,
-- interaction and robust tables (report/study_tables.lua, the report's own), each reason
-- under its row, then the sections the tables do not hold.  width (optional): the
-- terminal's (core/textable.lua); extensions (optional): the study's, by section name, a
-- section's lines from its extension's text(section).
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
  local st = require "repro.report.study_tables"
  lines[#lines + 1] = text_of(st.verdicts_table(summary, an), width, { title = false })
  for _, t in ipairs({ st.verdicts_table(summary, an, true) or false,
      st.robust_table(summary, an) or false }) do
    if t then lines[#lines + 1] = text_of(t, width) end
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
