-- A summary's verdicts for a terminal (the run and analyze commands' stdout).
local textable = require "repro.core.textable"
local base = require "repro.core.base"
local words = require "repro.analysis.words"
local lrsens = require "repro.analysis.lrsens"
local replication = require "repro.analysis.replication"
local study = require "repro.study"
local tbl = require "repro.report.table"
local pseq = require "repro.report.sequential"
local study_tables = require "repro.report.study_tables"

local M = {}
local fmt = words.fmt

local function value_text(v)
  return math.type(v) == "float" and fmt(v) or tostring(v)
end

-- The setup a summary describes, in one sentence: the study's base config with the
-- command-line overrides (--set) applied, and those overrides named, so that the verdicts
-- of a --set run never read as the study's own.
local function setup_text(summary)
  local given = summary.base or {}
  local set = type(summary.command_line_overrides) == "table" and
    summary.command_line_overrides or {}
  local keys = {}
  for k in pairs(given) do keys[k] = true end
  for k in pairs(set) do keys[k] = true end
  local parts, set_parts = {}, {}
  for _, k in ipairs(base.sorted_keys(keys)) do
    local v = set[k]
    if v == nil then v = given[k] end
    local part = k .. "=" .. value_text(v)
    parts[#parts + 1] = part
    if set[k] ~= nil then set_parts[#set_parts + 1] = part end
  end
  return string.format("setup: %s%s", #parts > 0 and table.concat(parts, " ") or
    "the default config", #set_parts > 0 and ("; command-line overrides on every run: --set " ..
    table.concat(set_parts, ",")) or "; no command-line overrides")
end

-- Table t as terminal lines, without the last newline.
local function text_of(t, width, opts)
  return (tbl.text(t, width, opts):gsub("\n$", ""))
end

-- The heading line of the verdicts and the setup line under it.
local function head(line, summary, width)
  return { textable.wrap(line, width), textable.wrap(setup_text(summary), width, "", "  ") }
end

-- A sequential study's verdicts (summary.sequential): per comparison the look it stopped
-- at, its estimate and repeated interval, and why.
local function sequential_lines(summary, width)
  local seq, an = summary.sequential, summary.analysis
  local d = seq.design
  local lines = head(string.format("sequential verdicts on %s (%s is better; looks at %s " ..
    "seeds per variant; %s boundaries, %s; %s test; alpha %s over %d comparison%s; stops: " ..
    "%s):", an.primary, an.better, words.int_list(d.looks), d.shape,
    words.sequential_boundary(d), d.test, fmt(d.alpha), d.m, d.m == 1 and "" or "s",
    table.concat(d.stop, ", ")), summary, width)
  local t = pseq.verdicts_table(summary)
  for i, r in ipairs(t.reasons) do t.reasons[i] = { row = i, text = r } end
  t.note = nil
  lines[#lines + 1] = text_of(t, width, { title = false })
  lines[#lines + 1] = textable.wrap(string.format("  runs: %d used by the decisions, %d " ..
    "done, against %d for the fixed design", seq.runs_used, seq.runs_done, seq.runs_fixed),
    width, "", "    ")
  return lines
end

-- The lines marking a summary's adopted records (its provenance section).
local function provenance_lines(summary, width, lines)
  local p = summary.provenance
  if type(p) ~= "table" or type(p.adopted) ~= "table" or #p.adopted == 0 then return end
  lines[#lines + 1] = textable.wrap(string.format("ADOPTED: %d record%s neither committed " ..
    "nor made by this checkout; `bin/repro audit` retrains these first:", #p.adopted,
    #p.adopted == 1 and " is" or "s are"), width)
  for _, e in ipairs(p.adopted) do
    lines[#lines + 1] = textable.wrap(words.adopted(e), width, "  ", "    ")
  end
end

-- The verdicts as text (the run and analyze commands' stdout): the study's verdict,
-- interaction and robust tables (study_tables.lua, the report's own), each reason under
-- its row, then the sections the tables do not hold.  width (optional): the terminal's;
-- extensions (optional): the study's, by section name, a section's lines from its
-- extension's text(section).
function M.verdict_table(summary, width, extensions)
  if summary.sequential then
    local lines = sequential_lines(summary, width)
    provenance_lines(summary, width, lines)
    return table.concat(lines, "\n") .. "\n"
  end
  local an = summary.analysis
  local family = words.family(an):match("^[^:]+"):gsub("^Holm over the 1 tests",
    "Holm over 1 test")
  local lines = head(string.format("verdicts on %s (%s is better; minimum effect %s; alpha " ..
    "%s; %s test; %s):", an.primary, an.better, fmt(an.min_effect), fmt(an.alpha),
    an.test or "t", family), summary, width)
  lines[#lines + 1] = text_of(study_tables.verdicts_table(summary, an), width, { title = false })
  for _, t in ipairs({ study_tables.verdicts_table(summary, an, true) or false,
      study_tables.robust_table(summary, an) or false }) do
    if t then lines[#lines + 1] = text_of(t, width) end
  end
  provenance_lines(summary, width, lines)
  if an.seeds_from_power then
    lines[#lines + 1] = textable.wrap(study.seeds_text(an.seeds_from_power), width, "  ", "    ")
  end
  local more = { replication.text(summary.replication) }
  for _, k in ipairs(base.sorted_keys(extensions or {})) do
    if type(summary[k]) == "table" and type(extensions[k].text) == "function" then
      more[#more + 1] = extensions[k].text(summary[k])
    end
  end
  more[#more + 1] = lrsens.text(summary.lr_sweep)
  for _, list in ipairs(more) do
    for _, l in ipairs(list) do lines[#lines + 1] = l end
  end
  if summary.sweep_outcomes then
    lines[#lines + 1] = "outcomes over the grid (lr_sweep.outcomes):"
    lines[#lines + 1] = M.verdict_table(summary.sweep_outcomes, width)
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
