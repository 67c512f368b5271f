-- This paper's macros for statements its designs can carry only with a number behind
-- them (paper/paper.lua: extensions), for the studies named below only: horizon (how the
-- gap between two variants moves along a long run), scale (the least-squares line of each
-- treatment level's mean paired difference on log10 of the parameter count: its slope per
-- decade and its value at 10 million parameters, an extrapolation) and ladder (the same
-- fit over the tuned size ladder, and each variant's peak learning rate).  The table kind
-- size_effect (any size study): per model size, its parameters, each variant's learning
-- rate, the primary difference with its interval, Holm p, verdict.
local stats = require "stats"
local F = require "repro.report.texfmt"
local tbl = require "repro.report.table"
local sorted_keys = require("repro.core.base").sorted_keys
local data = require "repro.report.data"

local M = {}
local DASH = F.DASH

local function lr_text(x) return F.finite(x) and F.lr(x) or DASH end

-- The last row of a parsed log.csv at or before `step` (or the last) with a d_val_loss.
local function diag_at(log, step)
  local steps, vals = log.data.step or {}, log.data.d_val_loss or {}
  local best
  for r = 1, log.n do
    if F.finite(vals[r]) and F.finite(steps[r]) and (not step or steps[r] <= step) then
      best = r
    end
  end
  return best and vals[best], best and steps[best]
end

local function horizon(def, s, S)
  local iters = s:config_value(s.variants[1].name, "iters")
  local early_step, end_step
  for _, c in ipairs(s:comparisons(s.primary)) do
    local P = S .. F.macro(c.treatment) .. "Vs" .. F.macro(c.baseline)
    local sum_e, sum_l, n = 0, 0, 0
    for _, seed in ipairs(s.seeds) do
      local lt, lb = s:log(c.treatment, seed), s:log(c.baseline, seed)
      if lt and lb and F.finite(iters) then
        local te, ste = diag_at(lt, iters / 4)
        local be = diag_at(lb, iters / 4)
        local tl, stl = diag_at(lt)
        local bl = diag_at(lb)
        if te and be and tl and bl then
          sum_e, sum_l, n = sum_e + (te - be), sum_l + (tl - bl), n + 1
          early_step, end_step = ste, stl
        end
      end
    end
    def(P .. "GapEarly", n > 0 and F.num(sum_e / n, 2) or DASH)
    def(P .. "GapEnd", n > 0 and F.num(sum_l / n, 2) or DASH)
  end
  def(S .. "GapEarlyStep", early_step and string.format("\\num{%d}", early_step + 1) or DASH)
  def(S .. "GapEndStep", end_step and string.format("\\num{%d}", end_step + 1) or DASH)
end

local function scale(def, s, S)
  local base = s.factor.baseline
  local by_level, sizes = {}, {}
  for _, r in ipairs(s:size_comparisons()) do
    if r.params and F.finite(r.c.mean) then
      sizes[r.params] = true
      local e = by_level[r.t.level] or { x = {}, y = {} }
      by_level[r.t.level] = e
      e.x[#e.x + 1] = math.log(r.params, 10)
      e.y[#e.y + 1] = r.c.mean
    end
  end
  def(S .. "FitSizes", string.format("%d", #sorted_keys(sizes)))
  -- every treatment level gets its macros: dashes where no line can be fitted (fewer
  -- than 3 sizes, as in a reduced run), so the paper always compiles
  local levels = {}
  for _, v in ipairs(s.variants) do
    if v.level ~= base then levels[v.level] = true end
  end
  for _, level in ipairs(sorted_keys(levels)) do
    local e = by_level[level] or { x = {}, y = {} }
    local L = S .. F.macro(level)
    local ok, r = pcall(stats.linfit, e.x, e.y, { at = 7 })
    if not ok then r = { n = #e.x } end
    def(L .. "FitSlope", F.num(r.slope, 3))
    def(L .. "FitSlopeCI", F.interval(r.slope_ci, 3))
    def(L .. "FitAtTenM", F.num(r.fit, 2))
    def(L .. "FitAtTenMCI", F.interval(r.fit_ci, 2))
    def(L .. "FitN", string.format("%d", r.n))
  end
end

-- The ladder: the fit of `scale`, and each variant's own peak learning rate
-- (S..<Variant>.."Lr"), which the sweep chose per size.
local function ladder(def, s, S)
  scale(def, s, S)
  for _, v in ipairs(s.variants) do
    def(S .. F.macro(v.name) .. "Lr", lr_text(s:config_value(v.name, "lr")))
  end
end

local BY_STUDY = { horizon = horizon, scale = scale, ladder = ladder }

-- The table of a size study's effect by size (kind size_effect): per model size, its
-- parameter count, each variant's peak learning rate, the primary comparison's
-- difference with its decision interval, the Holm p and the verdict.
function M.size_effect_table(s)
  local t = { align = "lrlrrrrl", head = { "Blocks $\\times$ width", "Params", "Comparison",
    "lr", "$\\Delta$", "95\\,\\% CI", "$p_\\mathrm{Holm}$", "Verdict" }, rows = {} }
  for _, r in ipairs(s:size_comparisons()) do
    local c = r.c
    local ci = data.interval(c)
    local dec = F.diff_decimals(c.metric, c.mean, ci)
    t.rows[#t.rows + 1] = { F.num(s:config_value(r.b.name, "n_layer"), 0) .. " $\\times$ " ..
      F.num(s:config_value(r.b.name, "d_model"), 0),
      F.finite(r.params) and string.format("\\num{%d}", r.params) or DASH,
      F.escape(r.t.level_label) .. "${}-{}$" .. F.escape(r.b.level_label),
      lr_text(s:config_value(r.t.name, "lr")) .. " / " .. lr_text(s:config_value(r.b.name, "lr")),
      F.num(c.mean, dec), F.interval(ci, dec), F.p(c.p_holm),
      F.escape((s:verdict(c) or {}).verdict or DASH) }
  end
  return F.of_study(s, tbl.tabular(t, { fit = true }))
end

M.tables = { size_effect = { build = M.size_effect_table, records = true } }

function M.numbers(def, s, S)
  local f = BY_STUDY[s.name]
  if f and s.summary and s.primary then f(def, s, S) end
end

return M
