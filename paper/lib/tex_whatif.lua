-- What sequential seeds would have saved, said as a what-if (a manifest extension of
-- paper/paper.lua: the table kind `whatif`; on the terminal: scripts/whatif.lua).  No study
-- registered this: one sequential design, declared now, replays each confirmatory study's
-- primary comparisons (a Holm family: analysis.m > 0 and verdicts; a study that ran
-- sequentially, sequential_claim, is not replayed) on their committed per-seed differences
-- in the study's seed order:
--   looks after every 5 pairs and at the comparison's n, the cap (a comparison of fewer
--   than 10 pairs cannot be replayed); O'Brien-Fleming boundaries for the paired t test,
--   calibrated to two-sided alpha / m with m the study's family size (Bonferroni); stop
--   for a difference only (the decision of lua/repro/analysis/sequential.lua, M.replay).
-- Per study: the runs the fixed design trained for the compared variants (each variant's
-- seeds), those the sequential design would have needed (each variant's seeds up to the
-- latest stop of a comparison it is in), the verdicts it would reach, and how many agree
-- with the fixed design's: the same difference, or none declared where the fixed design
-- found none (equivalent or inconclusive).
local seq = require "repro.analysis.sequential"
local textable = require "repro.core.textable"
local F = require "repro.report.texfmt"
local tbl = require "repro.report.table"
local words = require "repro.analysis.words"

local M = {}

M.EVERY, M.MIN_PAIRS = 5, 10
M.SHAPE, M.TEST = "obf", "t"

-- The looks of a comparison of n pairs: every M.EVERY pairs, and n last.
function M.looks(n)
  local out = {}
  for k = M.EVERY, n, M.EVERY do out[#out + 1] = k end
  if out[#out] ~= n then out[#out + 1] = n end
  return out
end

-- Whether summary sum is a confirmatory study with a fixed number of seeds.
function M.replayable(sum)
  local an = sum.analysis or {}
  return type(sum.sequential) ~= "table" and (an.m or 0) > 0 and #(sum.verdicts or {}) > 0
end

local NO_DIFFERENCE = { equivalent = true, inconclusive = true,
  ["no meaningful difference"] = true }

-- Whether a sequential verdict agrees with the fixed design's.
function M.agrees(verdict, fixed)
  if verdict == "better" or verdict == "worse" then return verdict == fixed end
  return NO_DIFFERENCE[fixed] == true
end

-- The seeds of the study a comparison's first n pairs take (a diverged run's seed
-- counts, though its pair is left out).
local function seeds_through(sum, c, n)
  local last = (c.seeds or {})[n]
  for i, x in ipairs(sum.seeds or {}) do
    if x == last then return i end
  end
  return n
end

-- Study `name`'s replay from its summary: {study, m, pairs (the fewest of its
-- comparisons), comparisons = {treatment, baseline, n, look, seeds, verdict, fixed,
-- agrees}, runs_fixed, runs_sequential, better, worse, cap, agree} or, when a comparison
-- has fewer than M.MIN_PAIRS pairs, {study, m, pairs, skip = true}.
function M.replay(name, sum)
  local an = sum.analysis
  local row = { study = name, m = an.m, comparisons = {}, runs_fixed = 0, runs_sequential = 0,
    better = 0, worse = 0, cap = 0, agree = 0 }
  local comps = {}
  for _, c in ipairs(sum.comparisons or {}) do
    if c.metric == an.primary then
      comps[#comps + 1] = c
      row.pairs = math.min(row.pairs or math.huge, #(c.a or {}))
    end
  end
  row.n_comparisons, row.pairs = #comps, row.pairs or 0
  if row.pairs < M.MIN_PAIRS then
    row.skip = true
    return row
  end
  -- each variant's seeds: the fixed design's, and up to the latest stop of its comparisons
  local fixed_need, seq_need = {}, {}
  for _, c in ipairs(comps) do
    local spec = { looks = M.looks(#c.a), shape = M.SHAPE, test = M.TEST,
      stop = { "difference" } }
    local looks, verdict = seq.replay(spec, c.a, c.b, an.m, an.alpha, an.better)
    local last = looks[#looks]
    local e = { treatment = c.treatment, baseline = c.baseline, n = #c.a, look = last.look,
      looks = #spec.looks, pairs = last.n, seeds = seeds_through(sum, c, last.n),
      verdict = verdict, fixed = (words.find_comparison(sum.verdicts, c) or {}).verdict,
      estimate = last.estimate, statistic = last.statistic, bound = last.bound }
    e.agrees = M.agrees(verdict, e.fixed)
    row.comparisons[#row.comparisons + 1] = e
    local key = (verdict == "better" or verdict == "worse") and verdict or "cap"
    row[key] = row[key] + 1
    if e.agrees then row.agree = row.agree + 1 end
    for _, v in ipairs({ c.treatment, c.baseline }) do
      fixed_need[v] = math.max(fixed_need[v] or 0, #(c.seeds or sum.seeds or {}))
      seq_need[v] = math.max(seq_need[v] or 0, e.seeds)
    end
  end
  for v, n in pairs(fixed_need) do
    row.runs_fixed = row.runs_fixed + n
    row.runs_sequential = row.runs_sequential + seq_need[v]
  end
  return row
end

-- The counts of a replay the totals add up, in the table's column order.
local COUNTS = { "n_comparisons", "runs_fixed", "runs_sequential", "better", "worse", "cap",
  "agree" }

-- The replays of the context's studies (the manifest's, then its appendix's), with the
-- totals over those replayed.
function M.rows(ctx)
  local rows, total = {}, { studies = 0 }
  for _, k in ipairs(COUNTS) do total[k] = 0 end
  for _, s in ipairs(ctx.studies) do
    if M.replayable(s.summary) then
      local r = M.replay(s.name, s.summary)
      rows[#rows + 1] = r
      if not r.skip then
        for _, k in ipairs(COUNTS) do total[k] = total[k] + r[k] end
        total.studies = total.studies + 1
      end
    end
  end
  return rows, total
end

local int = words.int

local function share(a, b)
  return b > 0 and string.format("%.0f", 100 * a / b) or "-"
end

-- The design and the totals in words (plain text; the table's note and the terminal's).
function M.design_words()
  return string.format("looks after every %d pairs and at the comparison's number of " ..
    "pairs (the cap), O'Brien-Fleming boundaries for the paired t test calibrated by " ..
    "simulation to two-sided alpha/m, m the study's family size (Bonferroni), stopping " ..
    "for a difference only; a study with a comparison of fewer than %d pairs is not " ..
    "replayed.", M.EVERY, M.MIN_PAIRS)
end

local function count(n, one, many)
  return string.format("%d %s", n, n == 1 and one or many)
end

function M.total_words(total)
  return string.format("Over the %s replayed (%s): %d runs for the fixed designs against " ..
    "%d sequentially (%s %%); %s would stop for a difference (%d better, %d worse), %d " ..
    "would reach the cap, and %d of %s agree with the fixed design's.",
    count(total.studies, "study", "studies"), count(total.n_comparisons, "comparison",
    "comparisons"), total.runs_fixed, total.runs_sequential,
    share(total.runs_sequential, total.runs_fixed), count(total.better + total.worse,
    "comparison", "comparisons"), total.better, total.worse, total.cap, total.agree,
    count(total.n_comparisons, "verdict", "verdicts"))
end

M.CAVEAT = "What if, not a result: no study registered this design; it is declared now " ..
  "and replayed on the seeds each study ran, in their order. Runs count the compared " ..
  "variants' seeds. A verdict agrees when both designs declare the same difference, or " ..
  "neither declares one (the sequential design has no equivalence stop and no minimum " ..
  "effect, so its difference may be one the fixed rule calls inconclusive)."

-- The table's columns from "Comparisons" on, of a replay or of the totals: each count,
-- the last (agree) as agree/comparisons.
local function count_cells(row, r)
  for i = 1, #COUNTS - 1 do row[#row + 1] = string.format("%d", r[COUNTS[i]]) end
  row[#row + 1] = string.format("%d/%d", r.agree, r.n_comparisons)
  return row
end

-- The table kind `whatif` (every study of the context).
function M.table(ctx)
  local rows, total = M.rows(ctx)
  local t = { align = "lrrrrrrrrr", head = { "Study", "Pairs", "$m$", "Comparisons",
    "Runs, fixed", "Runs, sequential", "Better", "Worse", "To the cap", "Agree" }, rows = {} }
  for _, r in ipairs(rows) do
    local row = { F.escape(r.study), string.format("%d", r.pairs), string.format("%d", r.m) }
    if r.skip then
      row[4] = string.format("%d", r.n_comparisons)
      row[5] = string.format("\\multicolumn{6}{l}{\\emph{not replayed: fewer than %d pairs}}",
        M.MIN_PAIRS)
    else
      count_cells(row, r)
    end
    t.rows[#t.rows + 1] = row
  end
  t.rows[#t.rows + 1] = { rule = true }
  t.rows[#t.rows + 1] = count_cells({ "Replayed", "", "" }, total)
  return "% Generated by bin/repro report from the study summaries " ..
    "(paper/lib/tex_whatif.lua): do not edit.\n" .. tbl.tabular(t, { fit = true }) ..
    "\\par\\smallskip\\footnotesize\n" .. F.escape(M.CAVEAT .. " Design: " ..
    M.design_words() .. " " .. M.total_words(total)) .. "\n"
end

-- The same on a terminal, with each comparison replayed: where it would stop and why.
function M.text(ctx, width)
  local rows, total = M.rows(ctx)
  local t = { { "study", "comparison", "pairs", "stops at", "seeds", "verdict", "fixed",
    "agree" } }
  for _, r in ipairs(rows) do
    if r.skip then
      t[#t + 1] = { r.study, string.format("not replayed: fewer than %d pairs", M.MIN_PAIRS),
        int(r.pairs), "", "", "", "", "" }
    else
      for _, e in ipairs(r.comparisons) do
        t[#t + 1] = { r.study, e.treatment .. " vs " .. e.baseline, int(e.n),
          string.format("look %d of %d", e.look, e.looks), int(e.seeds), e.verdict,
          tostring(e.fixed), e.agrees and "yes" or "no" }
      end
      t[#t + 1] = { r.study, "runs", "", "", string.format("%d of %d", r.runs_sequential,
        r.runs_fixed), "", "", string.format("%d/%d", r.agree, r.n_comparisons) }
    end
  end
  return table.concat({ textable.wrap("What sequential seeds would have saved (what if, a " ..
    "design declared now: " .. M.design_words() .. ")", width),
    (textable.render(t, { indent = "  ", width = width }):gsub("\n$", "")),
    textable.wrap(M.total_words(total), width), textable.wrap(M.CAVEAT, width) }, "\n") .. "\n"
end

M.tables = { whatif = { all = M.table } }

return M
