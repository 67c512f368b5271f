-- The figures of one study's runs and summary (lua/repro/report/plot.lua's M.KINDS): loss
-- curves, final validation losses, task accuracies, divergence, effect by size,
-- reliability, per-class curves and array metrics.  Each builder (M.figure.<kind>) returns
-- its data as blocks (lua/repro/report/gnuplot.lua), the script's variables and the
-- values the figure draws, or nil and the reason it cannot be drawn.
local stats = require "stats"
local base = require "repro.core.base"
local record = require "repro.record"
local data = require "repro.report.data"
local gnuplot = require "repro.report.gnuplot"
local style = require "repro.report.plot_style"

local M = { figure = {} }
local finite = base.finite
local g, title, blocks = gnuplot.g, gnuplot.title, gnuplot.blocks
local plot_label = style.plot_label

-- The variables of a figure that draws each variant of study s: how many, their colours
-- and points, and `extra`'s.
local function variant_vars(s, extra)
  local vars = { n = #s.variants, colors = style.colors_of(s.variants),
    pts = style.points_of(s.variants) }
  for k, v in pairs(extra) do vars[k] = v end
  return vars
end

-- Per step over a variant's seeds: mean, min, max and count of the finite values of a
-- log.csv column.  Returns the block text and its points ({step, mean, min, max}), or
-- nil when no run has the column.
local function curve_block(s, v, column)
  local by_step, steps = {}, {}
  for _, seed in ipairs(s.seeds) do
    local log = s:log(v.name, seed)
    -- a column by its name or its alias (val_loss for d_val_loss: record.log_column)
    local col = log and log.data[record.log_column(column, log.data) or column]
    for r = 1, col and log.n or 0 do
      local x, step = col[r], log.data.step[r]
      if finite(x) and step then
        if not by_step[step] then
          by_step[step] = {}
          steps[#steps + 1] = step
        end
        table.insert(by_step[step], x)
      end
    end
  end
  if #steps == 0 then return nil end
  table.sort(steps)
  local rows, pts = { title(plot_label(s, v)), "# step mean min max n" }, {}
  for _, step in ipairs(steps) do
    local sm = stats.summary(by_step[step])
    rows[#rows + 1] = string.format("%d %s %s %s %d", step, g(sm.mean), g(sm.min), g(sm.max), sm.n)
    pts[#pts + 1] = { step = step, mean = sm.mean, min = sm.min, max = sm.max }
  end
  return table.concat(rows, "\n"), pts
end

-- Every variant's curve of a log.csv column: the data text and all points, or nil.
local function curves(s, column)
  local list, pts = {}, {}
  for _, v in ipairs(s.variants) do
    local block, points = curve_block(s, v, column)
    if not block then return nil end
    list[#list + 1] = block
    table.move(points, 1, #points, #pts + 1, pts)
  end
  return blocks(list), pts
end

-- A log.csv column per variant over training; f.logy a log axis, f.zoom a second panel:
-- the last `zoom` of training on a linear axis fitted to it, where curves that a wide
-- range squeezes together separate.
function M.figure.curves(s, file, f)
  local text, pts = curves(s, f.column)
  if not text then return nil, "the run records have no " .. f.column .. " column" end
  local values, ys, last = {}, {}, 0
  for _, p in ipairs(pts) do
    values[#values + 1] = p.mean
    ys[#ys + 1], ys[#ys + 2] = p.min, p.max
    last = math.max(last, p.step)
  end
  -- about 8 marks per curve, at least one row apart per variant, so that curve i's marks
  -- (from row mark(i) of plots/curves.gp) fall where no other curve's do
  local n = #s.variants
  local vars = variant_vars(s, { dashes = style.dashes_of(s.variants), ylabel = f.ylabel,
    logy = 0, zoom = 0, mark_every = math.max(n, math.ceil(#pts / math.max(n, 1) / 8)) })
  local lo, hi = gnuplot.extent(ys)
  if f.logy and lo and lo > 0 then
    vars.logy = 1
    vars.ymin, vars.ymax, vars.ytics = gnuplot.log_axis(lo, hi, 0.03)
  end
  local spec = { text = text, vars = vars, values = values, aspect = 0.58 }
  if f.zoom then
    -- the panel starts at the first step in the last `zoom` of training (at least the last)
    local from, zs = last, {}
    for _, p in ipairs(pts) do
      if p.step >= math.min(last, last * (1 - f.zoom)) then
        from = math.min(from, p.step)
        zs[#zs + 1], zs[#zs + 2] = p.min, p.max
      end
    end
    local zlo, zhi = gnuplot.extent(zs)
    if zlo then
      vars.zoom, vars.zoom_from, vars.zoom_to = 1, from, last
      vars.zoom_ymin, vars.zoom_ymax = gnuplot.padded(zlo, zhi, 0.06)
      spec.aspect = 0.6
    end
  end
  return spec
end

-- End-of-training validation loss per seed, and per variant its mean and sd.
function M.figure.valend(s, file, f)
  local points, means, values = {}, { "# x mean sd label" }, {}
  for i, v in ipairs(s.variants) do
    local rows = { title(plot_label(s, v)), "# x val_loss seed" }
    for j, seed in ipairs(s.seeds) do
      local x = s:value(v.name, seed, "val_loss")
      if x then
        rows[#rows + 1] = string.format("%s %s %d", g(i + (j - (#s.seeds + 1) / 2) * 0.06), g(x),
          seed)
        values[#values + 1] = x
      end
    end
    points[i] = table.concat(rows, "\n")
    local st = s:stat(v.name, "val_loss")
    if finite(st.mean) then
      means[#means + 1] = string.format("%d %s %s %s", i, g(st.mean), g(st.sd) or "0", rows[1])
    end
  end
  local means_file = file(f.name .. "_mean", table.concat(means, "\n") .. "\n")
  return { text = blocks(points), vars = variant_vars(s, { means = means_file }),
    values = values, aspect = 0.7 }
end

-- A task study's accuracies (summary.tasks) at shot count k: per variant a block of
-- "x mean sd" per task (x = the task's index, offset per variant), and the marks file
-- "x chance bigram ngram task" per task (ngram: the strongest n-gram control of the
-- training split, summary.tasks.beyond_ngram, the bar a task must clear to show more than
-- local statistics); nil when the summary has no task section.
-- `setups` (optional, the figure's): a variant named "<setup>-<norm>" is keyed by its
-- norm and setups[<setup>], the set-up in words ("label, PyTorch init, 4 blocks");
-- otherwise by the config it differs in (plot_style.plot_label).
function M.tasks(s, k, setups)
  local st = s.summary.tasks
  if type(st) ~= "table" then return nil end
  local names = require("repro.report.tex_tasks").tasks_at(st, k)
  if #names == 0 then return nil end
  local list, values, nv = {}, {}, #s.variants
  local step = math.min(0.12, 0.7 / nv)
  for i, v in ipairs(s.variants) do
    -- keyed in words, never by the variant's code name ("gpt2-none")
    local setup = setups and setups[v.name:match("^(.-)%-[^%-]+$") or ""]
    local key = setup and (style.level_name(v) .. ", " .. setup) or plot_label(s, v)
    local rows = { title(key), "# x mean sd" }
    for j, task in ipairs(names) do
      local m = s:stat(v.name, string.format("task_%s_%dshot_acc", task, k))
      if finite(m.mean) then
        rows[#rows + 1] = string.format("%s %s %s", g(j + (i - (nv + 1) / 2) * step), g(m.mean),
          g(m.sd) or "0")
        values[#values + 1] = m.mean
      end
    end
    list[i] = table.concat(rows, "\n")
  end
  local marks = { "# x chance bigram ngram task" }
  for j, task in ipairs(names) do
    local c = (st.chance or {})[task] or {}
    local b = (st.beyond_ngram or {})[task] or {}
    marks[#marks + 1] = string.format("%d %s %s %s %s", j, g(c.rate) or "NaN", g(c.bigram_acc) or
      "NaN", g(b.acc) or "NaN", title(task))
  end
  return blocks(list), table.concat(marks, "\n") .. "\n", values, #names
end

function M.figure.tasks(s, file, f)
  local text, marks, values, ntasks = M.tasks(s, f.shots or 0, f.setups)
  if not text then return nil, "the " .. s.name .. " study has no task accuracies" end
  return { text = text, values = values, aspect = 0.75,
    vars = variant_vars(s, { marks = file(f.name .. "_marks", marks), ntasks = ntasks }) }
end

-- The levels of the study's factor in order of first appearance, each with its variants.
local function by_level(s)
  local list, index = {}, {}
  for _, v in ipairs(s.variants) do
    if not index[v.level] then
      list[#list + 1] = { level = v.level, label = v.level_label, color = v.color,
        point = v.point, variants = {} }
      index[v.level] = list[#list]
    end
    table.insert(index[v.level].variants, v)
  end
  return list
end

-- The fraction of runs that diverged against the learning rate, per level.
function M.figure.divergence(s, file, f)
  local levels, out, values, lrs = by_level(s), {}, {}, {}
  for i, n in ipairs(levels) do
    local pts = {}
    for _, v in ipairs(n.variants) do
      local pv = s.summary.per_variant[v.name] or {}
      local lr = s:config_value(v.name, "lr")
      if finite(lr) and (pv.n_runs or 0) > 0 then
        pts[#pts + 1] = { lr = lr, k = pv.n_diverged or 0, n = pv.n_runs }
      end
    end
    table.sort(pts, function(a, b) return a.lr < b.lr end)
    local rows = { title(n.label), "# lr rate diverged runs" }
    for _, p in ipairs(pts) do
      rows[#rows + 1] = string.format("%s %s %d %d", g(p.lr), g(p.k / p.n), p.k, p.n)
      values[#values + 1] = p.k / p.n
      lrs[#lrs + 1] = p.lr
    end
    out[i] = table.concat(rows, "\n")
  end
  if #lrs == 0 then return nil, "the " .. s.name .. " study's variants name no learning rate" end
  local lo, hi = gnuplot.extent(lrs)
  local xmin, xmax, xtics = gnuplot.log_axis(lo, hi, 0.1)
  return { text = blocks(out), values = values, aspect = 0.6,
    vars = { n = #out, colors = style.colors_of(levels), pts = style.points_of(levels),
      xmin = xmin, xmax = xmax, xtics = xtics },
    zero = "no run of the " .. s.name .. " study diverged, at any learning rate" }
end

-- A parameter count as a tick label: "104k", "1.6M".
local function count_label(p)
  if p >= 1e6 then return (string.format("%.2g", p / 1e6)) .. "M" end
  return string.format("%dk", math.floor(p / 1000 + 0.5))
end

-- The effect of each level against the baseline within each model, with its interval,
-- against the baseline's parameter count.
function M.figure.effect(s, file, f)
  local params = {}
  for _, st in ipairs(s:settings()) do params[st.key] = s:setting_params(st) end
  local me = s.analysis.min_effect or 0
  local out, drawn, values, ps, ys = {}, {}, {}, {}, { 0, me, -me }
  local tics, tic_labels, seen = {}, {}, {}
  local baseline = s.factor.labels[s.factor.baseline] or tostring(s.factor.baseline)
  for _, n in ipairs(by_level(s)) do
    local pts = {}
    for _, r in ipairs(n.level ~= s.factor.baseline and s:size_comparisons(nil, n.level) or {}) do
      local c, p = r.c, params[r.b.setting]
      if finite(p) and finite(c.mean) then
        local ci = data.interval(c) or { c.mean, c.mean }
        pts[#pts + 1] = { p = p, mean = c.mean, lo = ci[1], hi = ci[2] }
      end
    end
    table.sort(pts, function(a, b) return a.p < b.p end)
    local rows = { title(n.label .. " - " .. baseline), "# params mean lo hi" }
    for _, p in ipairs(pts) do
      rows[#rows + 1] = string.format("%d %s %s %s", p.p, g(p.mean), g(p.lo), g(p.hi))
      ps[#ps + 1], values[#values + 1] = p.p, p.mean
      ys[#ys + 1], ys[#ys + 2] = p.lo, p.hi
      if not seen[p.p] then
        seen[p.p] = true
        tics[#tics + 1], tic_labels[#tics + 1] = string.format("%d", p.p), count_label(p.p)
      end
    end
    if #pts > 0 then
      out[#out + 1] = table.concat(rows, "\n")
      drawn[#drawn + 1] = n
    end
  end
  if #out == 0 then return nil, "the study has no within-setting comparison against none" end
  local plo, phi = gnuplot.extent(ps)
  local xmin, xmax = gnuplot.log_axis(plo, phi, 0.25)
  local ylo, yhi = gnuplot.extent(ys)
  local ymin, ymax = gnuplot.padded(ylo, yhi, 0.08)
  return { text = blocks(out), values = values, aspect = 0.62, vars = { n = #out,
    colors = style.colors_of(drawn), pts = style.points_of(drawn), min_effect = me,
    xmin = xmin, xmax = xmax, xtics = table.concat(tics, " "),
    xtic_labels = table.concat(tic_labels, " "), ymin = ymin, ymax = ymax,
    ylabel = "difference in " .. style.metric_words(s.primary) } }
end

-- Reliability: per variant, the bins pooled over seeds (confidence and accuracy weighted
-- by count).
function M.figure.reliability(s, file, f)
  local out, values = {}, {}
  for _, v in ipairs(s.variants) do
    local n, conf, acc, nb = {}, {}, {}, 0
    for _, seed in ipairs(s.seeds) do
      local m = s:record(v.name, seed).metrics
      local r = m and m.reliability
      if type(r) == "table" and type(r.count) == "table" then
        nb = math.max(nb, #r.count)
        for k = 1, #r.count do
          local c = r.count[k]
          if finite(c) and c > 0 and finite(r.confidence[k]) and finite(r.accuracy[k]) then
            n[k] = (n[k] or 0) + c
            conf[k] = (conf[k] or 0) + c * r.confidence[k]
            acc[k] = (acc[k] or 0) + c * r.accuracy[k]
          end
        end
      end
    end
    if nb == 0 then return nil, "the run records have no reliability bins" end
    local rows = { title(plot_label(s, v)), "# confidence accuracy count" }
    for k = 1, nb do
      if n[k] then
        values[#values + 1] = acc[k] / n[k]
        rows[#rows + 1] = string.format("%s %s %d", g(conf[k] / n[k]), g(acc[k] / n[k]),
          math.floor(n[k] + 0.5))
      end
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return { text = blocks(out), vars = variant_vars(s, {}), values = values, aspect = 0.9 }
end

-- One panel per character class that has values; the script reads <data>_<class>.dat.
local CLASSES = { "letter", "digit", "punct", "space" }

function M.figure.classnorm(s, file, f)
  local present, values, ys, last = {}, {}, {}, 0
  for _, cls in ipairs(CLASSES) do
    local text, pts = curves(s, f.column:format(cls))
    if text then
      file(f.name .. "_" .. cls, text)
      present[#present + 1] = cls
      for _, p in ipairs(pts) do
        values[#values + 1] = p.mean
        if p.min > 0 then ys[#ys + 1] = p.min end
        ys[#ys + 1] = p.max
        last = math.max(last, p.step)
      end
    end
  end
  if #present == 0 then
    return nil, "the run records have no per-class curves (" .. f.column:format("<class>") .. ")"
  end
  local lo, hi = gnuplot.extent(ys)
  if not (lo and lo > 0) then lo, hi = 1e-3, 1 end
  local ymin, ymax, ytics = gnuplot.log_axis(lo, hi, 0.05)
  return { data = file(f.name):sub(1, -5), values = values, aspect = 0.42,
    vars = variant_vars(s, { classes = table.concat(present, " "),
      dashes = style.dashes_of(s.variants), mark_every = math.max(#s.variants, 4), ymin = ymin,
      ymax = ymax, ytics = ytics, xstep = gnuplot.nice_step(0, last, 2), xmax = last }) }
end

-- Mean, min and max over seeds of an array metric (f.key: resid_norm, loss_by_position),
-- by index from 0.
function M.figure.array(s, file, f)
  local out, values = {}, {}
  for _, v in ipairs(s.variants) do
    local cols, len = {}, 0
    for _, seed in ipairs(s.seeds) do
      local m = s:record(v.name, seed).metrics
      local a = m and m[f.key]
      if type(a) == "table" then
        len = math.max(len, #a)
        for i = 1, #a do
          if finite(a[i]) then
            cols[i] = cols[i] or {}
            table.insert(cols[i], a[i])
          end
        end
      end
    end
    if len == 0 then return nil, "the run records have no " .. f.key end
    local rows = { title(plot_label(s, v)), "# index mean min max" }
    for i = 1, len do
      if cols[i] then
        local sm = stats.summary(cols[i])
        rows[#rows + 1] = string.format("%d %s %s %s", i - 1, g(sm.mean), g(sm.min), g(sm.max))
        values[#values + 1] = sm.mean
      end
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return { script = f.script, text = blocks(out), vars = variant_vars(s, {}), values = values,
    aspect = 0.6 }
end

return M
