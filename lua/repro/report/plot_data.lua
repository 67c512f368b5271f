-- The values a figure draws, per study (lua/repro/report/plot.lua): loss curves, final
-- validation losses, divergence, effect by size, reliability, array metrics, as data
-- blocks (lua/repro/report/gnuplot.lua) and the values the axes are fitted to.
local stats = require "stats"
local record = require "repro.record"
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local gnuplot = require "repro.report.gnuplot"
local style = require "repro.report.plot_style"

local M = {}
local finite = F.finite
local g, title, blocks = gnuplot.g, gnuplot.title, gnuplot.blocks
local plot_label = style.plot_label
local baseline_label, colors_of = style.baseline_label, style.colors_of
local points_of = style.points_of

-- Per step over a variant's seeds: mean, min, max and count of the finite values of a
-- log.csv column.  Returns the block text and its points ({step, mean, min, max}), or
-- nil when no run has the column.
function M.curve_block(s, v, column)
  local by_step, steps = {}, {}
  local have = false
  for _, seed in ipairs(s.seeds) do
    local log = s:log(v.name, seed)
    -- a column by its name or its alias (val_loss for d_val_loss: record.log_column)
    local col = log and log.data[record.log_column(column, log.data) or column]
    if col then
      have = true
      for r = 1, log.n do
        local x, step = col[r], log.data.step[r]
        if finite(x) and step then
          local t = by_step[step]
          if not t then
            t = {}
            by_step[step] = t
            steps[#steps + 1] = step
          end
          t[#t + 1] = x
        end
      end
    end
  end
  if not have or #steps == 0 then return nil end
  table.sort(steps)
  local rows, pts = { title(plot_label(s, v)), "# step mean min max n" }, {}
  for _, step in ipairs(steps) do
    local xs = by_step[step]
    local sum, lo, hi = 0, math.huge, -math.huge
    for _, x in ipairs(xs) do
      sum = sum + x
      lo = math.min(lo, x)
      hi = math.max(hi, x)
    end
    rows[#rows + 1] = string.format("%d %s %s %s %d", step, g(sum / #xs), g(lo), g(hi), #xs)
    pts[#pts + 1] = { step = step, mean = sum / #xs, min = lo, max = hi }
  end
  return table.concat(rows, "\n"), pts
end

-- Every variant's curve of a log.csv column: the data text and all points, or nil.
function M.curves(s, column)
  local list, pts = {}, {}
  for _, v in ipairs(s.variants) do
    local b, p = M.curve_block(s, v, column)
    if not b then return nil end
    list[#list + 1] = b
    for _, x in ipairs(p) do pts[#pts + 1] = x end
  end
  return blocks(list), pts
end

-- End-of-training validation loss per seed, and per variant its mean and sd.
function M.valend(s)
  local points, means, values = {}, { "# x mean sd label" }, {}
  for i, v in ipairs(s.variants) do
    local rows = { title(plot_label(s, v)), "# x val_loss seed" }
    local n = #s.seeds
    for j, seed in ipairs(s.seeds) do
      local x = s:value(v.name, seed, "val_loss")
      if x then
        rows[#rows + 1] = string.format("%s %s %d", g(i + (j - (n + 1) / 2) * 0.06), g(x), seed)
        values[#values + 1] = x
      end
    end
    points[#points + 1] = table.concat(rows, "\n")
    local st = s:stat(v.name, "val_loss")
    if finite(st.mean) then
      means[#means + 1] = string.format("%d %s %s %s", i, g(st.mean), g(st.sd) or "0",
        title(plot_label(s, v)))
    end
  end
  return blocks(points), table.concat(means, "\n") .. "\n", values
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
    list[#list + 1] = table.concat(rows, "\n")
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

local ci_of = data.interval

-- Norms in order of first appearance, each with its variants.
function M.by_level(s)
  local list, index = {}, {}
  for _, v in ipairs(s.variants) do
    if not index[v.level] then
      list[#list + 1] = { level = v.level, label = v.level_label, color = v.color,
        point = v.point, variants = {} }
      index[v.level] = list[#list]
    end
    local t = index[v.level].variants
    t[#t + 1] = v
  end
  return list
end

function M.divergence(s)
  local out, cols, values, lrs = {}, {}, {}, {}
  for _, n in ipairs(M.by_level(s)) do
    local rows = { title(n.label), "# lr rate diverged runs" }
    local pts = {}
    for _, v in ipairs(n.variants) do
      local pv = s.summary.per_variant[v.name] or {}
      local lr = s:config_value(v.name, "lr")
      if finite(lr) and (pv.n_runs or 0) > 0 then
        pts[#pts + 1] = { lr = lr, k = pv.n_diverged or 0, n = pv.n_runs }
      end
    end
    table.sort(pts, function(a, b) return a.lr < b.lr end)
    for _, p in ipairs(pts) do
      rows[#rows + 1] = string.format("%s %s %d %d", g(p.lr), g(p.k / p.n), p.k, p.n)
      values[#values + 1] = p.k / p.n
      lrs[#lrs + 1] = p.lr
    end
    out[#out + 1] = table.concat(rows, "\n")
    cols[#cols + 1] = n
  end
  return blocks(out), colors_of(cols), #out, values, lrs, points_of(cols)
end

-- The effect of each norm against `none` within each model, by the baseline's parameter
-- count.
function M.effect_by_size(s)
  local params = {}
  for _, st in ipairs(s:settings()) do params[st.key] = s:setting_params(st) end
  local out, cols, all = {}, {}, {}
  for _, n in ipairs(M.by_level(s)) do
    if n.level ~= s.factor.baseline then
      local rows = { title(n.label .. " - " .. baseline_label(s)), "# params mean lo hi" }
      local pts = {}
      for _, r in ipairs(s:size_comparisons(nil, n.level)) do
        local c = r.c
        if finite(params[r.b.setting]) and finite(c.mean) then
          local ci = ci_of(c) or { c.mean, c.mean }
          pts[#pts + 1] = { p = params[r.b.setting], mean = c.mean, lo = ci[1], hi = ci[2] }
        end
      end
      table.sort(pts, function(a, b) return a.p < b.p end)
      for _, p in ipairs(pts) do
        rows[#rows + 1] = string.format("%d %s %s %s", p.p, g(p.mean), g(p.lo), g(p.hi))
        all[#all + 1] = p
      end
      if #pts > 0 then
        out[#out + 1] = table.concat(rows, "\n")
        cols[#cols + 1] = n
      end
    end
  end
  if #out == 0 then return nil end
  return blocks(out), colors_of(cols), #out, all, points_of(cols)
end

-- Reliability: per variant, the bins pooled over seeds (confidence and accuracy weighted
-- by count).
function M.reliability(s)
  local out, values = {}, {}
  for _, v in ipairs(s.variants) do
    local n, conf, acc = {}, {}, {}
    local nb = 0
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
    if nb == 0 then return nil end
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
  return blocks(out), values
end

-- Mean, min and max over seeds of an array metric (resid_norm, loss_by_position), by
-- index from 0.
function M.array_metric(s, key)
  local out, values = {}, {}
  for _, v in ipairs(s.variants) do
    local cols = {}
    local len = 0
    for _, seed in ipairs(s.seeds) do
      local m = s:record(v.name, seed).metrics
      local a = m and m[key]
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
    if len == 0 then return nil end
    local rows = { title(plot_label(s, v)), "# index mean min max" }
    for i = 1, len do
      local xs = cols[i]
      if xs then
        local sm = stats.summary(xs)
        rows[#rows + 1] = string.format("%d %s %s %s", i - 1, g(sm.mean), g(sm.min), g(sm.max))
        values[#values + 1] = sm.mean
      end
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return blocks(out), values
end


return M
