-- H1a as worded (summary.h1a of a study that registers analysis.h1a): "embedding
-- normalization decreases zero-/few-shot accuracy despite smoothing or stabilizing
-- training dynamics", as three OLS fits across the runs (stats.ols) per norm against the
-- spec's baseline norm, every set-up its own intercept: lower (accuracy ~ set-up + norm),
-- beyond (+ set-up x loss: at equal loss) and stabilized (each stability measure,
-- Bonferroni over them).  "supporting H1a" only when all three hold.  Diverged runs are
-- left out and counted; a part the data cannot fit says why and does not hold.
-- The rule: docs/DESIGN.md, "H1a as worded".
local stats = require "stats"
local json = require "repro.core.json"

local M = {}

local function arr(t) return json.array(t or {}) end

-- The rows (one per finished run) of the spec's set-ups: {setup = i, norm =, values}.
local function rows_of(ctx, spec, metrics)
  local rows, diverged = {}, 0
  for i, setup in ipairs(spec.setups) do
    for _, v in ipairs(setup.variants) do
      local runs = ctx.runs[v] or {}
      local norm = ctx.norm_of[v]
      for _, seed in ipairs(ctx.s.seeds) do
        local r = runs[seed]
        if r and r.diverged then
          diverged = diverged + 1
        elseif r then
          local vals, ok = {}, true
          for _, m in ipairs(metrics) do
            local x = r.values[m]
            if type(x) ~= "number" then ok = false end
            vals[m] = x
          end
          if ok then rows[#rows + 1] = { setup = i, norm = norm, values = vals } end
        end
      end
    end
  end
  return rows, diverged
end

-- OLS of y on set-up intercepts, optional per-set-up slopes on covariate `cov`, and one
-- dummy per norm of `norms`: {coef, se, ci} of each norm's dummy, or nil and why.
local function fit(rows, n_setups, norms, y_of, cov, alpha)
  local x, y = {}, {}
  for _, r in ipairs(rows) do
    local row = {}
    for i = 1, n_setups do row[#row + 1] = r.setup == i and 1 or 0 end
    if cov then
      for i = 1, n_setups do row[#row + 1] = r.setup == i and r.values[cov] or 0 end
    end
    for _, nm in ipairs(norms) do row[#row + 1] = r.norm == nm and 1 or 0 end
    x[#x + 1], y[#y + 1] = row, y_of(r)
  end
  local p = #(x[1] or {})
  if #x < p + 2 then
    return nil, "too_few_runs"
  end
  local ok, o = pcall(stats.ols, x, y, { alpha = alpha })
  if not ok then return nil, "singular" end
  local out, first = {}, p - #norms
  for k, nm in ipairs(norms) do
    out[nm] = { coef = o.coef[first + k], se = o.se[first + k],
      ci = arr({ o.ci[first + k][1], o.ci[first + k][2] }), df = o.df, n = o.n }
  end
  return out
end

local function below(e) return e ~= nil and e.ci[2] < 0 end

local function num(x) return string.format("%.4g", x) end

local function interval(e)
  return string.format("%s [%s, %s]", num(e.coef), num(e.ci[1]), num(e.ci[2]))
end

function M.summarize(ctx)
  local an, spec = ctx.an, ctx.an.h1a
  local alpha = an.alpha
  local norm_of, norms, seen = {}, {}, {}
  for _, v in ipairs(ctx.s.variants) do
    norm_of[v.name] = (v.overrides or {}).embed_norm or spec.baseline
  end
  for _, setup in ipairs(spec.setups) do
    for _, v in ipairs(setup.variants) do
      local nm = norm_of[v]
      if nm ~= spec.baseline and not seen[nm] then seen[nm], norms[#norms + 1] = true, nm end
    end
  end
  table.sort(norms)
  ctx.norm_of = norm_of
  local metrics = { spec.accuracy, spec.loss }
  for _, m in ipairs(spec.stability) do metrics[#metrics + 1] = m.metric end
  local rows, diverged = rows_of(ctx, spec, metrics)
  local nsu = #spec.setups
  local acc = function(r) return r.values[spec.accuracy] end
  local lower, why_lower = fit(rows, nsu, norms, acc, nil, alpha)
  local beyond, why_beyond = fit(rows, nsu, norms, acc, spec.loss, alpha)
  local stab = {}
  local alpha_b = alpha / #spec.stability
  for _, m in ipairs(spec.stability) do
    local y_of = function(r)
      local x = r.values[m.metric]
      return m.log and math.log(x) or x
    end
    local f, why = fit(rows, nsu, norms, y_of, nil, alpha_b)
    stab[#stab + 1] = { metric = m.metric, log = m.log or nil, fit = f, why = why }
  end
  local out = { accuracy = spec.accuracy, loss = spec.loss, alpha = alpha,
    stability_alpha = alpha_b, baseline = spec.baseline, n_runs = #rows,
    n_diverged = diverged, setups = {}, norms = {} }
  for _, s in ipairs(spec.setups) do
    out.setups[#out.setups + 1] = { name = s.name, variants = arr({ table.unpack(s.variants) }) }
  end
  out.setups = arr(out.setups)
  for _, nm in ipairs(norms) do
    local e = { }
    e.accuracy = lower and lower[nm] or { why = why_lower }
    e.accuracy_given_loss = beyond and beyond[nm] or { why = why_beyond }
    e.stability = {}
    local shown = false
    for _, st in ipairs(stab) do
      local f = st.fit and st.fit[nm]
      e.stability[#e.stability + 1] = f and { metric = st.metric, log = st.log, coef = f.coef,
        se = f.se, ci = f.ci } or { metric = st.metric, log = st.log, why = st.why }
      if below(f) then shown = true end
    end
    e.stability = arr(e.stability)
    e.lower = below(lower and lower[nm])
    e.beyond = below(beyond and beyond[nm])
    e.stabilized = shown
    e.supports = e.lower and e.beyond and e.stabilized
    out.norms[nm] = e
  end
  out.norms = json.object(out.norms)
  return out
end

local WHY = { too_few_runs = "fewer runs than parameters + 2",
  singular = "the design matrix is singular" }

-- A norm's H1a entry e in words: "lower accuracy; not beyond ...: not supporting H1a".
function M.verdict_words(e)
  local parts = {
    e.lower and "lower accuracy" or "no lower accuracy shown",
    e.beyond and "beyond what its validation loss predicts" or
      "not beyond what its validation loss predicts",
    e.stabilized and "stabilization shown" or "stabilization not shown",
  }
  return table.concat(parts, "; ") .. (e.supports and ": supporting H1a" or
    ": not supporting H1a")
end

-- The terminal's lines for summary.h1a h.
function M.text(h)
  if not h then return {} end
  local out = { string.format("H1a (%d runs, %d diverged left out; OLS across runs, each " ..
    "set-up its own intercept):", h.n_runs, h.n_diverged) }
  local names = {}
  for nm in pairs(h.norms) do names[#names + 1] = nm end
  table.sort(names)
  for _, nm in ipairs(names) do
    local e = h.norms[nm]
    out[#out + 1] = string.format("  %s vs %s: %s", nm, h.baseline, M.verdict_words(e))
    local function line(label, f)
      out[#out + 1] = string.format("    %s: %s", label,
        f.coef and interval(f) or ("undefined: " .. (WHY[f.why] or tostring(f.why))))
    end
    line(string.format("accuracy difference (%d%% CI)", math.floor(100 * (1 - h.alpha) + 0.5)),
      e.accuracy)
    line("at equal validation loss", e.accuracy_given_loss)
    for _, st in ipairs(e.stability) do
      line(string.format("%s%s (Bonferroni %.3g)", st.log and "log " or "", st.metric,
        h.stability_alpha), st)
    end
  end
  return out
end

return M
