-- A sequential study's path (summary.sequential, lua/repro/analysis/sequential.lua) as
-- its reports show it: per comparison, look by look, the estimate with its repeated
-- interval, the statistic against its boundary and the decision.  Built once and shown
-- three ways: rows of plain text for the study's own report (standalone.lua), the table
-- kind `sequential` for the paper, and the data of the trajectory figure (the figure kind
-- `sequential`, plot.lua and plots/sequential.gp).  The words come from analysis/words.lua.
local words = require "repro.analysis.words"
local F = require "repro.report.texfmt"
local gnuplot = require "repro.report.gnuplot"
local pforest = require "repro.report.plot_forest"
local tbl = require "repro.report.table"

local M = {}
local finite = F.finite

local int = words.int

local num = tbl.num
local V = tbl.value

-- Seeds per variant at look lk, with its pairs when a diverged run left some out.
local function seeds_text(lk)
  if lk.pairs and lk.pairs ~= lk.n then
    return string.format("%d (%d pairs)", lk.n, lk.pairs)
  end
  return int(lk.n)
end

-- The estimate of the design's test, in words.
local function estimate_word(d)
  return words.SEQ_ESTIMATE[d.test] or "estimate"
end

-- Summary sum's sequential section, or nil for a study with a fixed number of seeds.
function M.of(sum)
  return type(sum) == "table" and type(sum.sequential) == "table" and sum.sequential or nil
end

-- Rows {field, value} of the design for a design table.
function M.design_rows(seq)
  local d = seq.design
  return {
    { "sequential design", words.sequential_design(d) },
    { "planning sd", string.format("%s (%s)", num(d.sd), tostring(d.sd_source)) },
    { "runs", string.format("%d used by the decisions, %d done, %d for the fixed design " ..
      "(every seed of the cap)", seq.runs_used, seq.runs_done, seq.runs_fixed) },
  }
end

-- Where and why comparison e stopped, with its verdict: "worse because at look 1 ...".
function M.stop_text(e, d)
  local text = string.format("%s because %s", e.verdict or "open",
    words.sequential_reason(e, d))
  if d.target and e.target_in_ci ~= nil then
    text = text .. string.format("; the target effect %s lies %s the repeated interval",
      num(d.target), e.target_in_ci and "inside" or "outside")
  end
  return text
end

local NOTE = "The repeated interval of a look has the level of that look's boundary, so " ..
  "that the intervals of every look hold together at the design's level: a comparison " ..
  "may stop at any look without spending more than its alpha."

-- The verdicts table of sum (standalone.lua's table model): per comparison the look it
-- stopped at, its estimate and repeated interval there, its verdict, and why.
function M.verdicts_table(sum)
  local seq, an = sum.sequential, sum.analysis or {}
  local d = seq.design
  local t = { title = "Sequential verdicts on " .. tostring(an.primary), head = { "treatment",
    "baseline", "stopped at look", "seeds per variant", estimate_word(d), "repeated interval",
    "verdict" }, rows = {}, reasons = {}, note = NOTE }
  for _, e in ipairs(seq.comparisons) do
    local lk = e.looks[#e.looks] or {}
    t.rows[#t.rows + 1] = { e.treatment, e.baseline, e.stopped_at and int(e.stopped_at) or
      "-", lk.n and seeds_text(lk) or "-", V.est(lk.estimate, e.metric, lk.ci),
      V.ci(lk.ci, e.metric, lk.estimate), e.verdict or "open" }
    t.reasons[#t.reasons + 1] = e.treatment .. " vs " .. e.baseline .. ": " ..
      M.stop_text(e, d) .. "."
  end
  return t
end

-- Comparison e's path as rows of the table model, a row per look reached: the look, its
-- seeds per variant, the estimate with its repeated interval and that interval's level,
-- the statistic against its boundary, and the decision (plain text and values: the study
-- report and the paper's table kind `sequential` render the same rows).
local function path_rows(e)
  local rows = {}
  for _, lk in ipairs(e.looks) do
    rows[#rows + 1] = { int(lk.look), seeds_text(lk), V.est(lk.estimate, e.metric, lk.ci),
      V.ci(lk.ci, e.metric, lk.estimate), V.level(lk.level), V.fixed(lk.statistic, 2),
      V.fixed(lk.bound, 2), words.SEQ_DECISION[lk.decision] or tostring(lk.decision) }
  end
  return rows
end

-- Each comparison's path (standalone.lua's table model): a row per look reached.
function M.path_tables(sum)
  local seq, an = sum.sequential, sum.analysis or {}
  local d = seq.design
  local out = {}
  for _, e in ipairs(seq.comparisons) do
    local t = { title = string.format("Path of %s vs %s on %s", e.treatment, e.baseline,
      tostring(an.primary)), head = { "look", "seeds per variant", estimate_word(d),
      "repeated interval", "level", "statistic", "boundary", "decision" }, rows = path_rows(e) }
    t.note = not e.decision and (words.sequential_reason(e, d) .. ".") or nil
    out[#out + 1] = t
  end
  return out
end

-- The trajectory figure's data of study s (a report Study): a block per comparison with
-- a look, titled by the comparison's label; per look its seeds per variant, estimate, the
-- repeated interval (the estimate at both ends at a look without one) and 1 at the look
-- it stopped at.  Returns the blocks, their comparisons, the estimates and every value the
-- y axis must show (the intervals, zero, +-margin, the target).
function M.path_data(s)
  local d = s.summary.sequential.design
  local list, comps, values, ys = {}, {}, {}, { 0 }
  for _, x in ipairs({ d.margin, d.margin and -d.margin, d.target }) do
    if finite(x) then ys[#ys + 1] = x end
  end
  for _, e in ipairs(s.summary.sequential.comparisons) do
    local rows = { gnuplot.title(pforest.plain_label(s, e)), "# seeds estimate lo hi stop" }
    for _, lk in ipairs(e.looks) do
      if finite(lk.estimate) then
        local lo = lk.ci and lk.ci[1] or lk.estimate
        local hi = lk.ci and lk.ci[2] or lk.estimate
        rows[#rows + 1] = string.format("%d %s %s %s %d", lk.n, gnuplot.g(lk.estimate),
          gnuplot.g(lo), gnuplot.g(hi), lk.decision == "continue" and 0 or 1)
        values[#values + 1] = lk.estimate
        ys[#ys + 1], ys[#ys + 2] = lo, hi
      end
    end
    if #rows > 2 then
      list[#list + 1] = table.concat(rows, "\n")
      comps[#comps + 1] = e
    end
  end
  return list, comps, values, ys
end

-- LaTeX --------------------------------------------------------------------------------

-- The table kind `sequential`: study s's path per comparison (a row per look reached),
-- the design and each comparison's stop in words under it.
function M.tex_table(s)
  local seq = M.of(s.summary)
  if not seq then
    return F.of_study(s, F.unavailable("the " .. F.escape(s.name) .. " study has a fixed " ..
      "number of seeds, not a sequential design"))
  end
  local d = seq.design
  local t = { align = "rrrlrrrl", head = { "Look", "Seeds", "Estimate", "Repeated interval",
    "Level", "Statistic", "Boundary", "Decision" }, rows = {} }
  local notes = { F.escape("Seeds: per variant; estimate: the " .. estimate_word(d) ..
    " (treatment - baseline) over the look's seeds; level: the repeated interval's. " .. NOTE ..
    " Design: " .. words.sequential_design(d) .. ".") }
  for _, e in ipairs(seq.comparisons) do
    local label = s:comparison_label(e.treatment, e.baseline)
    t.rows[#t.rows + 1] = { group = label }
    for _, r in ipairs(path_rows(e)) do t.rows[#t.rows + 1] = r end
    notes[#notes + 1] = label .. ": " .. F.escape(M.stop_text(e, d) .. ".")
  end
  return F.of_study(s, tbl.tabular(t, { fit = true, plain = true }) ..
    "\\par\\smallskip\\footnotesize\n" .. table.concat(notes, "\\\\\n") .. "\n")
end

M.tables = { sequential = { build = M.tex_table } }

return M
