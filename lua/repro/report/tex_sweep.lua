-- A learning-rate sweep's table and numbers (lua/repro/report/init.lua), from
-- summary.json's `lr_sweep` (lua/repro/analysis/lrsens.lua): the table kind lr_sweep, one
-- row per group named by its config, with its best learning rate (marked on the grid's
-- edge), where seeds diverge, and the LR sensitivity S and S_own with their intervals and
-- differences from the reference group's; numbers.tex gets the same per group
-- (S..G.."BestLr", "Sens", ...) and the grid (S.."GridMin", "GridMax", "GridN", ...).
local F = require "repro.report.texfmt"
local lrsens = require "repro.analysis.lrsens"
local tbl = require "repro.report.table"

local M = {}

local DASH = F.DASH

-- A grid value as the study file wrote it (1e-4, 0.3, 1).
local function lr_text(x)
  return F.finite(x) and ("\\num{" .. string.format("%.3g", x) .. "}") or DASH
end

-- The learning rate where seeds diverge, "none" when none does.
local function diverge_text(x)
  return x and lr_text(x) or "none"
end

local function loss(x)
  return F.num(x, 4)
end

local function with_ci(x, ci)
  return loss(x) .. " " .. F.interval(ci, 4)
end

function M.lr_sweep_table(s)
  local sw = s.summary.lr_sweep
  if not sw then
    return F.of_study(s, F.unavailable("the " .. F.escape(s.name) .. " study's summary has " ..
      "no learning-rate sweep"))
  end
  local groups = s:sweep_groups()
  local function label(name)
    local gv = groups and groups.variant_by_name[name]
    return gv and groups.known[name] and gv.tex_label or F.escape(name)
  end
  local ref = label(sw.reference)
  local t = { align = "lrrllllll", head = { "Group", "Best " .. F.escape(sw.over), "Loss there",
    "Some seed diverges", "All diverge", "$S$", "$S - S_{\\text{" .. ref .. "}}$",
    "$S_{\\text{own}}$", "$S_{\\text{own}} - S_{\\text{own}}^{\\text{" .. ref .. "}}$" },
    rows = {} }
  local edge = false
  for _, name in ipairs(sw.order) do
    local g = sw.groups[name]
    local sens = g.sensitivity or {}
    local own = sens.own or {}
    local is_ref = name == sw.reference
    edge = edge or g.best_at_edge
    t.rows[#t.rows + 1] = { label(name),
      g.best_lr and (lr_text(g.best_lr) .. (g.best_at_edge and "$^\\dagger$" or "")) or DASH,
      loss(g.best_loss), diverge_text(g.diverge_lr), diverge_text(g.diverge_lr_all),
      with_ci(sens.value, sens.ci), is_ref and DASH or with_ci(sens.diff, sens.diff_ci),
      with_ci(own.value, own.ci), is_ref and DASH or with_ci(own.diff, own.diff_ci) }
  end
  local notes = { "$S$: the mean over the grid of the loss above the best of every group " ..
    "(Wortsman et al.); $S_{\\text{own}}$: above the group's own best, so that the " ..
    "offset between the groups' curves drops out." }
  if edge then
    notes[#notes + 1] = "$^\\dagger$\\,on the grid's edge: the grid does not bracket the optimum."
  end
  local b = sw.bootstrap
  if b then
    local below = lrsens.bootstrap_note(b)
    notes[#notes + 1] = string.format("Intervals: %s\\,\\%% percentile bootstrap over the %d " ..
      "seeds (%s%d resamples)%s.", F.config_text(100 * (1 - (b.alpha or 0.05))), b.seeds,
      b.exact and "all " or "", b.resamples, below and ("; " .. F.escape(below)) or "")
  end
  return F.of_study(s, tbl.tabular(t, { fit = true }) .. "\\par\\smallskip\\footnotesize " ..
    table.concat(notes, " ") .. "\n")
end

function M.numbers(def, s, S)
  local sw = s.summary.lr_sweep
  if not sw then return end
  def(S .. "EllStar", loss(sw.ell_star))
  -- The grid (the first group's values): its ends, size, step and span in decades.
  local first = sw.groups[sw.order[1] or ""] or {}
  local vals = type(first.values) == "table" and first.values or {}
  local lo, hi = vals[1], vals[#vals]
  local ok = #vals >= 2 and F.finite(lo) and F.finite(hi) and lo > 0 and hi > lo
  local step = ok and math.log(hi / lo, 10) / (#vals - 1)
  def(S .. "GridMin", ok and F.lr(lo) or DASH)
  def(S .. "GridMax", ok and F.lr(hi) or DASH)
  def(S .. "GridN", string.format("%d", #vals))
  def(S .. "GridStep", step and (math.abs(step - 0.5) < 1e-6 and "half-decade" or
    math.abs(step - 0.25) < 1e-6 and "quarter-decade" or math.abs(step - 1) < 1e-6 and
    "decade" or ("factor-\\num{" .. string.format("%.3g", 10 ^ step) .. "}")) or DASH)
  def(S .. "GridStepFactor", step and ("\\num{" .. string.format("%.2g", 10 ^ step) .. "}") or DASH)
  def(S .. "GridDecades", step and ("\\num{" .. string.format("%.3g", math.log(hi / lo, 10)) ..
    "}") or DASH)
  -- Sens, SensCI, SensDiff, SensDiffCI of a sensitivity (S or S_own)
  local function sensitivity(name, sens)
    def(name, loss(sens.value))
    def(name .. "CI", F.interval(sens.ci, 4))
    def(name .. "Diff", loss(sens.diff))
    def(name .. "DiffCI", F.interval(sens.diff_ci, 4))
  end
  for _, name in ipairs(sw.order) do
    local g = sw.groups[name]
    local G = S .. F.macro(name)
    def(G .. "BestLr", lr_text(g.best_lr))
    def(G .. "BestLoss", loss(g.best_loss))
    def(G .. "DivergeLr", diverge_text(g.diverge_lr))
    def(G .. "DivergeLrAll", diverge_text(g.diverge_lr_all))
    sensitivity(G .. "Sens", g.sensitivity or {})
    if (g.sensitivity or {}).own then sensitivity(G .. "SensOwn", g.sensitivity.own) end
  end
end

return M
