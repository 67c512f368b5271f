-- What the paper's stability claims measured: each study's registered whole-run
-- measures beside the same measures from the end of warmup on (exploratory;
-- analysis/records.lua after_warmup).  The task study's come from its H1a fits across
-- runs (summary.h1a), the stability study's from its per-seed outcomes over the grid
-- (summary.sweep_outcomes).  A table kind over every study (`stability`), and the
-- macros main.tex cites (S.."After"..).
local F = require "repro.report.texfmt"
local tbl = require "repro.report.table"
local sorted_keys = require("repro.core.base").sorted_keys

local M = {}

local finite = F.finite

local function exp_interval(ci) return { math.exp(ci[1]), math.exp(ci[2]) } end

-- An estimate above its interval in one cell ("{}" keeps the interval's "[" from being
-- read as the line break's optional space); a log-scale fit as a factor, "x0.184 [0.127,
-- 0.268]".
local function cell(coef, ci, dec, log)
  if not finite(coef) or log and type(ci) ~= "table" then return F.DASH end
  local est, interval
  if log then
    est, interval = "$\\times$" .. F.num(math.exp(coef), 3), F.interval(exp_interval(ci), 3)
  else
    est, interval = F.num(coef, dec), F.interval(ci, dec)
  end
  return "\\begin{tabular}[t]{@{}r@{}}" .. est .. "\\\\{}" .. interval .. "\\end{tabular}"
end

-- The entry of list `xs` whose metric is m (and, given, whose comparison is t vs b).
local function find(xs, m, t, b)
  for _, x in ipairs(xs or {}) do
    if x.metric == m and (not t or (x.treatment == t and x.baseline == b)) then return x end
  end
end

-- The task study's rows: per norm, the whole run's fits (the registered measures) and the
-- after-warmup fits.
local function task_rows(s, label)
  local h = s.summary.h1a
  if type(h) ~= "table" or type(h.after_warmup) ~= "table" then return {} end
  local rows = {}
  for _, nm in ipairs(sorted_keys(h.norms)) do
    local e = h.norms[nm]
    local function whole(m)
      local f = find(e.stability, m)
      return f and cell(f.coef, f.ci, 3, f.log) or F.DASH
    end
    local function after(m)
      local x = find(h.after_warmup.measures, m)
      return x and cell(x.norms[nm].coef, x.norms[nm].ci, 3, x.log)
    end
    rows[#rows + 1] = { label(nm) .. " $-$ " .. label(h.baseline), whole("max_loss_jump"),
      after("max_loss_jump"), whole("max_grad_norm"), after("max_grad_norm"),
      after("grad_norm_cv") }
  end
  return rows
end

-- The stability study's rows: per registered comparison, its outcomes over the whole grid
-- and its after-warmup outcomes (secondary comparisons).
local function sweep_rows(s, label)
  local o = s.summary.sweep_outcomes
  if type(o) ~= "table" or type(o.after_warmup) ~= "table" then return {} end
  local group = {}
  for _, v in ipairs(o.variants) do group[v.name] = v.overrides end
  local rows = {}
  for _, pair in ipairs(o.analysis.comparisons) do
    local t, b = pair[1], pair[2]
    local ov = group[t] or {}
    local function c(list, m, dec)
      local x = find(list, m, t, b)
      return x and cell(x.mean, x.ci_t, dec) or F.DASH
    end
    rows[#rows + 1] = { label(ov.embed_norm or t) ..
      (ov.warmup and string.format(", warmup %d", ov.warmup) or "") .. " $-$ " ..
      label(group[b] and group[b].embed_norm or b),
      c(o.comparisons, "mean_max_loss_jump", 3),
      c(o.secondary_comparisons, "mean_max_loss_jump_after_warmup", 3),
      c(o.comparisons, "gmean_max_grad_norm", 2),
      c(o.secondary_comparisons, "gmean_max_grad_norm_after_warmup", 2),
      c(o.secondary_comparisons, "mean_grad_norm_cv_after_warmup", 3) }
  end
  return rows
end

local STUDIES = { { "tasks_v2", "Task study, fits across its runs", task_rows },
  { "instability", "Stability study, per seed over its grid of peak learning rates", sweep_rows } }

function M.table(ctx)
  local t = { align = "lrrrrr", rows = { { rule = true } }, skip = "2pt",
    above = { "", "\\multicolumn{2}{c}{Largest loss jump (nats)}",
      "\\multicolumn{2}{c}{Largest gradient norm}", "Variation" },
    head = { "Comparison", "whole run", "after warmup", "whole run", "after warmup",
      "after warmup" } }
  for _, st in ipairs(STUDIES) do
    local s = ctx.by_name[st[1]]
    -- the study's norms in the paper's words (its factor's labels)
    local labels = s and s.factor and s.factor.labels or {}
    local rows = s and st[3](s, function(v) return F.escape(labels[v] or v) end) or {}
    if #rows > 0 then
      t.rows[#t.rows + 1] = { group = st[2], rule = false }
      table.move(rows, 1, #rows, #t.rows + 1, t.rows)
    end
  end
  return tbl.tabular(t, { fit = true })
end

-- The macros main.tex cites: the first step of the window (S.."AfterFrom"), the grid the
-- stability study's after-warmup outcomes average over (S.."AfterGridMin"/"Max"), per
-- norm the task study's after-warmup fits (S.."After"..<Norm>..<Metric>.."Coef", "CI",
-- and for a log fit "Factor", "FactorCI"), and how many runs of each norm had their whole
-- run's largest gradient norm and loss jump before the window (S.."PeakGradInWarmup"..<Norm>,
-- S.."PeakJumpInWarmup"..<Norm>, of S.."Runs"..<Norm>); per comparison of the stability
-- study, its after-warmup outcomes (S..<T>.."Vs"..<B>.."After"..<Metric>.."Delta", "CI").
function M.numbers(def, s, S)
  local h = s.summary.h1a
  if type(h) == "table" and type(h.after_warmup) == "table" then
    local aw = h.after_warmup
    def(S .. "AfterFrom", string.format("%d", aw.from))
    for _, x in ipairs(aw.measures) do
      for _, nm in ipairs(sorted_keys(x.norms)) do
        local e = x.norms[nm]
        local K = S .. "After" .. F.macro(nm) .. F.macro(x.metric)
        def(K .. "Coef", F.num(e.coef, 3))
        def(K .. "CI", F.interval(e.ci, 3))
        if x.log and finite(e.coef) then
          def(K .. "Factor", F.num(math.exp(e.coef), 2))
          def(K .. "FactorCI", F.interval(exp_interval(e.ci), 2))
        end
      end
    end
    for _, nm in ipairs(sorted_keys(aw.peaks)) do
      local p = aw.peaks[nm]
      def(S .. "PeakGradInWarmup" .. F.macro(nm), string.format("%d", p.grad))
      def(S .. "PeakJumpInWarmup" .. F.macro(nm), string.format("%d", p.jump))
      def(S .. "Runs" .. F.macro(nm), string.format("%d", p.runs))
    end
  end
  local o = s.summary.sweep_outcomes
  if type(o) == "table" and type(o.after_warmup) == "table" then
    local aw = o.after_warmup
    def(S .. "AfterFrom", string.format("%d", aw.from))
    def(S .. "AfterGridMin", F.lr(aw.grid[1]))
    def(S .. "AfterGridMax", F.lr(aw.grid[#aw.grid]))
    for _, c in ipairs(o.secondary_comparisons or {}) do
      local K = S .. F.macro(c.treatment) .. "Vs" .. F.macro(c.baseline) .. "After" ..
        F.macro((c.metric:gsub("_after_warmup$", "")))
      def(K .. "Delta", F.num(c.mean, 3))
      def(K .. "CI", F.interval(c.ci_t, 3))
    end
  end
end

M.tables = { stability = { all = M.table } }

return M
