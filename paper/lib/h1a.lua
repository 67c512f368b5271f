-- H1a as worded (summary.h1a of a study that registers analysis.h1a): "embedding
-- normalization decreases zero-/few-shot accuracy despite smoothing or stabilizing
-- training dynamics", as three OLS fits across the runs (stats.ols) per norm against the
-- spec's baseline norm, every set-up its own intercept: lower (accuracy ~ set-up + norm),
-- beyond (+ set-up x loss: at equal loss) and stabilized (each stability measure,
-- Bonferroni over them).  "supporting H1a" only when all three hold.  Diverged runs are
-- left out and counted; a part the data cannot fit says why and does not hold.
-- The rule: docs/DESIGN.md, "H1a as worded".  This paper's extension (a study names it in
-- its `extensions`; the paper's manifest for its table): check, summarize, the terminal's
-- text, the report's tables.
local stats = require "stats"
local json = require "repro.core.json"
local sorted_keys = require("repro.core.base").sorted_keys
local F = require "repro.report.texfmt"
local tex_tasks = require "repro.report.tex_tasks"
local tbl = require "repro.report.table"
local problems = require "repro.study.problems"

local M = {}

local FIELDS = { "setups", "accuracy", "loss", "stability", "baseline" }

-- analysis.h1a: { setups = { { name =, variants = { ... } }, ... }, accuracy =, loss =,
-- stability = { { metric =, log = bool }, ... }, baseline = "none" }, every metric among
-- analysis.metrics (a record's values are read for those only), every variant known;
-- normalized.
function M.check(P, h, variants, _, an)
  if type(h) ~= "table" or type(h.setups) ~= "table" or #h.setups == 0 then
    P.add("analysis.h1a", "expected { setups = { { name =, variants = { ... } }, ... }, " ..
      "accuracy =, loss =, stability = { { metric =, log = }, ... } }")
    return nil
  end
  local known = {}
  for _, m in ipairs((an or {}).metrics or {}) do known[m] = true end
  local function metric(path, m)
    if type(m) ~= "string" or not known[m] then
      P.add(path, string.format("%s is not one of analysis.metrics (a record's values are " ..
        "read for those only)", tostring(m)))
    end
    return m
  end
  local out = { accuracy = metric("analysis.h1a.accuracy", h.accuracy),
    loss = metric("analysis.h1a.loss", h.loss), baseline = h.baseline or "none",
    setups = json.array(), stability = json.array() }
  for i, s in ipairs(h.setups) do
    local path = string.format("analysis.h1a.setups[%d]", i)
    if type(s) ~= "table" or type(s.name) ~= "string" or type(s.variants) ~= "table" then
      P.add(path, "expected { name = \"...\", variants = { \"...\", ... } }")
    else
      local vs = json.array()
      for j, v in ipairs(s.variants) do
        if not variants[v] then
          P.add(string.format("%s.variants[%d]", path, j), "unknown variant '" ..
            tostring(v) .. "'")
        end
        vs[#vs + 1] = v
      end
      out.setups[#out.setups + 1] = { name = s.name, variants = vs }
    end
  end
  if type(h.stability) ~= "table" or #h.stability == 0 then
    P.add("analysis.h1a.stability", "expected a non-empty list of { metric =, log = bool }")
  else
    for i, m in ipairs(h.stability) do
      local path = string.format("analysis.h1a.stability[%d]", i)
      if type(m) ~= "table" then
        P.add(path, "expected { metric =, log = bool }")
      else
        out.stability[#out.stability + 1] = { metric = metric(path .. ".metric", m.metric),
          log = m.log == true or nil }
      end
    end
  end
  problems.unknown_fields(P, h, "analysis.h1a", FIELDS,
    " (expected " .. table.concat(FIELDS, ", ") .. ")")
  return out
end

-- The rows (one per finished run) of the spec's set-ups: {setup = i, norm =, values},
-- values[m] = values_of(run)[m] for each of `metrics`; and how many runs diverged.
local function rows_of(ctx, metrics, values_of)
  local rows, diverged = {}, 0
  for i, setup in ipairs(ctx.spec.setups) do
    for _, v in ipairs(setup.variants) do
      for _, seed in ipairs(ctx.s.seeds) do
        local r = (ctx.runs[v] or {})[seed]
        if r and r.diverged then
          diverged = diverged + 1
        elseif r then
          local vals, ok, src = {}, true, values_of(r) or {}
          for _, m in ipairs(metrics) do
            vals[m] = src[m]
            if type(src[m]) ~= "number" then ok = false end
          end
          if ok then rows[#rows + 1] = { setup = i, norm = ctx.norm_of[v], values = vals } end
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
  if #x < p + 2 then return nil, "too_few_runs" end
  local ok, o = pcall(stats.ols, x, y, { alpha = alpha })
  if not ok then return nil, "singular" end
  local out, first = {}, p - #norms
  for k, nm in ipairs(norms) do
    out[nm] = { coef = o.coef[first + k], se = o.se[first + k],
      ci = json.array({ o.ci[first + k][1], o.ci[first + k][2] }), df = o.df, n = o.n }
  end
  return out
end

-- A stability measure m's value of a row (its log for a log-scale measure).
local function measure(m)
  return function(r)
    local x = r.values[m.metric]
    return m.log and math.log(x) or x
  end
end

local function below(e) return e ~= nil and e.ci[2] < 0 end

-- The "at equal loss" fit set-up by set-up, and whether it extrapolates: per set-up (in
-- the spec's order), each norm's accuracy difference at equal loss from that set-up's
-- runs alone, and whether the norm's range of validation loss overlaps the baseline's
-- there (overlap = false: the fit compares losses no run of the other arm reached);
-- below / above: the interval lies entirely below / above zero.
local function setups_apart(rows, spec, norms, acc, alpha)
  local out = json.array()
  for i, setup in ipairs(spec.setups) do
    local mine, range = {}, {}
    for _, r in ipairs(rows) do
      if r.setup == i then
        mine[#mine + 1] = { setup = 1, norm = r.norm, values = r.values }
        local l = r.values[spec.loss]
        local g = range[r.norm] or { lo = l, hi = l }
        g.lo, g.hi = math.min(g.lo, l), math.max(g.hi, l)
        range[r.norm] = g
      end
    end
    local present = {}
    for _, nm in ipairs(norms) do if range[nm] then present[#present + 1] = nm end end
    local f, why = fit(mine, 1, present, acc, spec.loss, alpha)
    local per = {}
    for _, nm in ipairs(present) do
      local e, b, n = f and f[nm], range[spec.baseline], range[nm]
      per[nm] = { coef = e and e.coef, ci = e and e.ci, why = not e and why or nil,
        below = below(e), above = e ~= nil and e.ci[1] > 0,
        overlap = b ~= nil and n.lo <= b.hi and b.lo <= n.hi }
    end
    out[#out + 1] = { name = setup.name, norms = json.object(per) }
  end
  return out
end

-- The training after warmup (exploratory; analysis/records.lua after_warmup): each
-- measure's fit across the runs as the registered stability measures are fitted, at
-- alpha over the number of measures, and per norm (the baseline's too) how many runs had
-- their whole-run largest gradient norm and loss jump before the window's first step.
local AFTER_WARMUP = { { metric = "max_loss_jump" }, { metric = "max_grad_norm", log = true },
  { metric = "grad_norm_cv" } }

local function after_warmup(ctx, norms)
  local names = { "from", "peak_grad_in_warmup", "peak_jump_in_warmup" }
  for _, m in ipairs(AFTER_WARMUP) do names[#names + 1] = m.metric end
  local rows = rows_of(ctx, names, function(r) return r.after_warmup end)
  local alpha = ctx.s.analysis.alpha / #AFTER_WARMUP
  local out = { alpha = alpha, n_runs = #rows, from = rows[1] and rows[1].values.from,
    measures = json.array(), peaks = json.object() }
  for _, m in ipairs(AFTER_WARMUP) do
    local f, why = fit(rows, #ctx.spec.setups, norms, measure(m), nil, alpha)
    local per = {}
    for _, nm in ipairs(norms) do
      local e = f and f[nm]
      -- above / below: the interval lies entirely above / below zero
      per[nm] = e and { coef = e.coef, se = e.se, ci = e.ci, above = e.ci[1] > 0,
        below = e.ci[2] < 0 } or { why = why }
    end
    out.measures[#out.measures + 1] = { metric = m.metric, log = m.log, norms = json.object(per) }
  end
  for _, nm in ipairs({ ctx.spec.baseline, table.unpack(norms) }) do
    local p = { runs = 0, grad = 0, jump = 0 }
    for _, r in ipairs(rows) do
      if r.norm == nm then
        p.runs = p.runs + 1
        p.grad = p.grad + r.values.peak_grad_in_warmup
        p.jump = p.jump + r.values.peak_jump_in_warmup
      end
    end
    out.peaks[nm] = p
  end
  return out
end

-- summary.h1a of study s from its runs[variant][seed].
function M.summarize(s, runs)
  local spec, alpha = s.analysis.h1a, s.analysis.alpha
  local ctx = { s = s, runs = runs, spec = spec, norm_of = {} }
  for _, v in ipairs(s.variants) do
    ctx.norm_of[v.name] = (v.overrides or {}).embed_norm or spec.baseline
  end
  local seen = {}
  for _, setup in ipairs(spec.setups) do
    for _, v in ipairs(setup.variants) do seen[ctx.norm_of[v]] = true end
  end
  seen[spec.baseline] = nil
  local norms = sorted_keys(seen)
  local metrics = { spec.accuracy, spec.loss }
  for _, m in ipairs(spec.stability) do metrics[#metrics + 1] = m.metric end
  local rows, diverged = rows_of(ctx, metrics, function(r) return r.values end)
  local nsu = #spec.setups
  local acc = function(r) return r.values[spec.accuracy] end
  local lower, why_lower = fit(rows, nsu, norms, acc, nil, alpha)
  local beyond, why_beyond = fit(rows, nsu, norms, acc, spec.loss, alpha)
  local alpha_b = alpha / #spec.stability
  local stab = {}
  for _, m in ipairs(spec.stability) do
    local f, why = fit(rows, nsu, norms, measure(m), nil, alpha_b)
    stab[#stab + 1] = { metric = m.metric, log = m.log or nil, fit = f, why = why }
  end
  local out = { accuracy = spec.accuracy, loss = spec.loss, alpha = alpha,
    stability_alpha = alpha_b, baseline = spec.baseline, n_runs = #rows,
    n_diverged = diverged, setups = json.array(), norms = json.object() }
  for _, su in ipairs(spec.setups) do
    out.setups[#out.setups + 1] = { name = su.name,
      variants = json.array({ table.unpack(su.variants) }) }
  end
  for _, nm in ipairs(norms) do
    local e = { accuracy = lower and lower[nm] or { why = why_lower },
      accuracy_given_loss = beyond and beyond[nm] or { why = why_beyond },
      stability = json.array(), stabilized = false }
    for _, st in ipairs(stab) do
      local f = st.fit and st.fit[nm]
      e.stability[#e.stability + 1] = f and { metric = st.metric, log = st.log, coef = f.coef,
        se = f.se, ci = f.ci } or { metric = st.metric, log = st.log, why = st.why }
      if below(f) then e.stabilized = true end
    end
    e.lower = below(lower and lower[nm])
    e.beyond = below(beyond and beyond[nm])
    e.supports = e.lower and e.beyond and e.stabilized
    out.norms[nm] = e
  end
  out.after_warmup = after_warmup(ctx, norms)
  out.setups_apart = setups_apart(rows, spec, norms, acc, alpha)
  return out
end

-- A fit f as "coef [lo, hi]" in plain text, or nil when f has none.
local function fit_text(f)
  if type(f) ~= "table" or not f.coef then return nil end
  local function num(x) return string.format("%.4g", x) end
  return string.format("%s [%s, %s]", num(f.coef), num(f.ci[1]), num(f.ci[2]))
end

local function stability_label(st) return (st.log and "log " or "") .. st.metric end

-- A norm's H1a entry e in words: "lower accuracy; not beyond ...: not supporting H1a".
function M.verdict_words(e)
  return (e.lower and "lower accuracy" or "no lower accuracy shown") .. "; " ..
    (e.beyond and "" or "not ") .. "beyond what its validation loss predicts; " ..
    (e.stabilized and "a" or "no") .. " smaller whole-run loss jump or gradient peak" ..
    (e.supports and ": supporting H1a" or ": not supporting H1a")
end

local WHY = { too_few_runs = "fewer runs than parameters + 2",
  singular = "the design matrix is singular" }

-- The terminal's lines for summary.h1a h.
function M.text(h)
  if not h then return {} end
  local out = { string.format("H1a (%d runs, %d diverged left out; OLS across runs, each " ..
    "set-up its own intercept):", h.n_runs, h.n_diverged) }
  for _, nm in ipairs(sorted_keys(h.norms)) do
    local e = h.norms[nm]
    out[#out + 1] = string.format("  %s vs %s: %s", nm, h.baseline, M.verdict_words(e))
    local function line(label, f)
      out[#out + 1] = string.format("    %s: %s", label,
        fit_text(f) or ("undefined: " .. (WHY[f.why] or tostring(f.why))))
    end
    line(string.format("accuracy difference (%d%% CI)", math.floor(100 * (1 - h.alpha) + 0.5)),
      e.accuracy)
    line("at equal validation loss", e.accuracy_given_loss)
    for _, st in ipairs(e.stability) do
      line(string.format("%s (Bonferroni %.3g)", stability_label(st), h.stability_alpha), st)
    end
  end
  return out
end

-- The supplement's table (kind h1a) of H1a's three parts per norm: the accuracy
-- difference against no norm, the same at equal validation loss, each stability measure's
-- difference, each with its interval, and whether all three parts hold; the norms named
-- by the study's factor (the manifest's labels).
function M.tex_table(s)
  local h = s.summary.h1a
  if type(h) ~= "table" or type(h.norms) ~= "table" then
    return tex_tasks.absent(s, "H1a analysis")
  end
  local labels = s.factor and s.factor.labels or {}
  local function label(level) return F.escape(labels[level] or tostring(level)) end
  local function cell(e)
    if type(e) ~= "table" or not F.finite(e.coef) then return F.DASH end
    return F.num(e.coef, 3) .. " " .. F.interval(e.ci, 3)
  end
  local names = sorted_keys(h.norms)
  local stability = h.norms[names[1]].stability or {}
  local head = { "Norm", "Accuracy", "At equal loss" }
  for _, st in ipairs(stability) do
    head[#head + 1] = (st.log and "log " or "") ..
      F.escape((F.METRIC[st.metric] or {}).short or st.metric)
  end
  head[#head + 1] = "Supports H1a"
  local t = { align = "l" .. string.rep("r", #head - 2) .. "l", head = head, rows = {} }
  for _, name in ipairs(names) do
    local e = h.norms[name]
    local cells = { label(name) .. " $-$ " .. label(h.baseline), cell(e.accuracy),
      cell(e.accuracy_given_loss) }
    for _, st in ipairs(e.stability or {}) do cells[#cells + 1] = cell(st) end
    cells[#cells + 1] = e.supports and "yes" or "no"
    t.rows[#t.rows + 1] = cells
  end
  local note = string.format("\\par\\smallskip\\footnotesize Least squares across " ..
    "the study's %d runs (%s), each set-up with its own intercept and the " ..
    "norm as an indicator against no norm: its zero-shot macro accuracy difference; the " ..
    "same at equal validation loss (each set-up its own loss slope); and each stability " ..
    "measure's difference, its interval at $\\alpha/%d$ (Bonferroni). The first two parts " ..
    "hold when their interval lies below zero, the third when some stability measure's " ..
    "does; the runs support H1a only when all three hold.",
    h.n_runs or 0, (h.n_diverged or 0) == 0 and "no run diverged" or
      string.format("%d diverged, left out", h.n_diverged), #stability)
  return F.of_study(s, tbl.tabular(t, { fit = true }) .. note .. "\n")
end

-- H1a's three parts per norm (summary.h1a) for the study's own report: each fit's
-- coefficient with its interval, and the verdict naming each part.
function M.report_tables(h)
  if type(h) ~= "table" then return {} end
  local t = { title = "H1a: three parts across runs", head = { "norm", "accuracy difference",
    "at equal validation loss" }, rows = {} }
  local stab_heads = {}
  for _, name in ipairs(sorted_keys(h.norms or {})) do
    local e = h.norms[name]
    local r = { name .. " vs " .. tostring(h.baseline), fit_text(e.accuracy) or "undefined",
      fit_text(e.accuracy_given_loss) or "undefined" }
    for i, st in ipairs(e.stability or {}) do
      stab_heads[i] = stability_label(st)
      r[#r + 1] = fit_text(st) or "undefined"
    end
    r[#r + 1] = M.verdict_words(e)
    t.rows[#t.rows + 1] = r
  end
  for _, x in ipairs(stab_heads) do t.head[#t.head + 1] = x end
  t.head[#t.head + 1] = "verdict"
  t.note = string.format("OLS across %d runs (%d diverged left out), each set-up its own " ..
    "intercept, the norm a dummy against %s: the accuracy difference; the same at equal " ..
    "validation loss (each set-up its own loss slope); each stability measure's difference " ..
    "(interval at alpha / %d, Bonferroni). A part holds when its interval lies below 0; " ..
    "supporting H1a only when all three hold.", h.n_runs or 0, h.n_diverged or 0,
    tostring(h.baseline), #stab_heads)
  return { t }
end

M.tables = { h1a = { build = M.tex_table } }

return M
