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
  if not F.finite(x) then return DASH end
  return "\\num{" .. string.format("%.3g", x) .. "}"
end

local function loss(x)
  return F.finite(x) and F.num(x, 4) or DASH
end

local function interval(ci)
  return F.interval(ci, 4)
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
    local best = g.best_lr and (lr_text(g.best_lr) .. (g.best_at_edge and "$^\\dagger$" or ""))
      or DASH
    if g.best_at_edge then edge = true end
    local own = sens.own or {}
    t.rows[#t.rows + 1] = { label(name), best, loss(g.best_loss),
      g.diverge_lr and lr_text(g.diverge_lr) or "none",
      g.diverge_lr_all and lr_text(g.diverge_lr_all) or "none",
      loss(sens.value) .. " " .. interval(sens.ci),
      name == sw.reference and DASH or (loss(sens.diff) .. " " .. interval(sens.diff_ci)),
      loss(own.value) .. " " .. interval(own.ci),
      name == sw.reference and DASH or (loss(own.diff) .. " " .. interval(own.diff_ci)) }
  end
  local notes = { "$S$: the mean over the grid of the loss above the best of every group " ..
    "(Wortsman et al.); $S_{\\text{own}}$: above the group's own best, so that the " ..
    "offset between the groups' curves drops out." }
  if edge then
    notes[#notes + 1] = "$^\\dagger$\\,on the grid's edge: the grid does not bracket the optimum."
  end
  local b = sw.bootstrap
  if b then
    notes[#notes + 1] = string.format("Intervals: %s\\,\\%% percentile bootstrap over the %d " ..
      "seeds (%s resamples)%s.", F.config_text(100 * (1 - (b.alpha or 0.05))), b.seeds, b.exact and ("all " .. string.format("%d", b.resamples)) or
      string.format("%d", b.resamples), lrsens.bootstrap_note(b) and ("; " .. F.escape(lrsens.bootstrap_note(b))) or "")
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
  def(S .. "GridMin", ok and F.lr(lo) or DASH)
  def(S .. "GridMax", ok and F.lr(hi) or DASH)
  def(S .. "GridN", string.format("%d", #vals))
  local step = ok and math.log(hi / lo, 10) / (#vals - 1) or nil
  def(S .. "GridStep", step and (math.abs(step - 0.5) < 1e-6 and "half-decade" or
    math.abs(step - 0.25) < 1e-6 and "quarter-decade" or
    math.abs(step - 1) < 1e-6 and "decade" or
    ("factor-\\num{" .. string.format("%.3g", 10 ^ step) .. "}")) or DASH)
  def(S .. "GridStepFactor", step and ("\\num{" .. string.format("%.2g", 10 ^ step) .. "}") or DASH)
  def(S .. "GridDecades", ok and ("\\num{" .. string.format("%.3g", math.log(hi / lo, 10)) .. "}") or DASH)
  for _, name in ipairs(sw.order) do
    local g = sw.groups[name]
    local G = S .. F.macro(name)
    local sens = g.sensitivity or {}
    def(G .. "BestLr", lr_text(g.best_lr))
    def(G .. "BestLoss", loss(g.best_loss))
    def(G .. "DivergeLr", g.diverge_lr and lr_text(g.diverge_lr) or "none")
    def(G .. "DivergeLrAll", g.diverge_lr_all and lr_text(g.diverge_lr_all) or "none")
    def(G .. "Sens", loss(sens.value))
    def(G .. "SensCI", interval(sens.ci))
    def(G .. "SensDiff", loss(sens.diff))
    def(G .. "SensDiffCI", interval(sens.diff_ci))
    if sens.own then
      def(G .. "SensOwn", loss(sens.own.value))
      def(G .. "SensOwnCI", interval(sens.own.ci))
      def(G .. "SensOwnDiff", loss(sens.own.diff))
      def(G .. "SensOwnDiffCI", interval(sens.own.diff_ci))
    end
  end
end

return M
