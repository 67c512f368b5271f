-- The figures of the report (lua/repro/report/init.lua): gnuplot data files and the driver
-- that renders plots/*.gp into the paper's PDF figures and their PNG copies.  The figures
-- are the manifest's (`figures`, each of a kind of M.KINDS) and, for every study it does
-- not list, the forest plot of its primary comparisons (M.appendix_figures).  A data file
-- holds one block per curve (a script selects it with `index`), each titled for
-- `title columnheader(1)`; no NaN is written.  Figures are drawn at their printed size;
-- one that cannot be drawn carries the reason (`skip`), printed in its place.
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local gnuplot = require "repro.report.gnuplot"
local style = require "repro.report.plot_style"
local pdata = require "repro.report.plot_data"
local pforest = require "repro.report.plot_forest"
local pseq = require "repro.report.sequential"

local M = {}

-- A metric as a figure's axis names it: in words, with its unit ("validation loss
-- (nats)"), from the report's metric table (texfmt.METRIC's noun; figure text is plain,
-- so no TeX), else its name with spaces for underscores.
function M.metric_words(metric)
  local spec = F.METRIC[metric or ""]
  if not spec or not spec.noun or spec.noun:find("[$\\]") then
    return (tostring(metric or "?"):gsub("_", " "))
  end
  -- a count's unit is the thing counted, already the noun ("loss spikes")
  return spec.noun .. (spec.unit and spec.kind ~= "count" and (" (" .. spec.unit .. ")") or "")
end
local finite = F.finite
local g, title, blocks, extent = gnuplot.g, gnuplot.title, gnuplot.blocks, gnuplot.extent
local padded, nice_step, log_axis = gnuplot.padded, gnuplot.nice_step, gnuplot.log_axis
local rgb_int = gnuplot.rgb_int
local colors_of, points_of, dashes_of = style.colors_of, style.points_of, style.dashes_of
local plot_label = style.plot_label
M.gp_string, M.title, M.log_axis = gnuplot.gp_string, gnuplot.title, gnuplot.log_axis
M.fix_pdf_date, M.render, M.duplicates = gnuplot.fix_pdf_date, gnuplot.render, pforest.duplicates

-- The variables of a figure that draws each variant of study s: how many, their colours
-- and points, and `extra`'s.
local function variant_vars(s, extra)
  local vars = { n = #s.variants, colors = colors_of(s.variants), pts = points_of(s.variants) }
  for k, v in pairs(extra) do vars[k] = v end
  return vars
end

-- Builders: (study or studies, data file writer, figure entry, size) -> spec fields
-- {script, data, vars, height, values, zero}, or nil and the reason the figure cannot be
-- drawn.  size.width is the printed width in inches.  `values` are the numbers the
-- figure draws on its value axis: when every one is zero (no run diverged, say) the
-- figure is not drawn and `zero` (or a generic sentence) says so in its place.
local function curves_figure(s, file, f, size)
  local text, pts = pdata.curves(s, f.column)
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
  local vars = variant_vars(s, { dashes = dashes_of(s.variants), ylabel = f.ylabel, logy = 0,
    zoom = 0, mark_every = math.max(n, math.ceil(#pts / math.max(n, 1) / 8)) })
  local lo, hi = extent(ys)
  if f.logy and lo and lo > 0 then
    vars.logy = 1
    vars.ymin, vars.ymax, vars.ytics = log_axis(lo, hi, 0.03)
  end
  local height = size.width * 0.58
  if f.zoom then
    -- A second panel: the last `zoom` of training on a linear axis fitted to it, where
    -- curves that a wide range squeezes together separate.
    local from = last
    for _, p in ipairs(pts) do
      if p.step >= last * (1 - f.zoom) and p.step < from then from = p.step end
    end
    local zs = {}
    for _, p in ipairs(pts) do
      if p.step >= from then zs[#zs + 1], zs[#zs + 2] = p.min, p.max end
    end
    local zlo, zhi = extent(zs)
    if zlo then
      vars.zoom = 1
      vars.zoom_from, vars.zoom_to = from, last
      vars.zoom_ymin, vars.zoom_ymax = padded(zlo, zhi, 0.06)
      height = size.width * 0.6
    end
  end
  return { script = "curves", data = file(f.name, text), vars = vars, height = height,
    values = values }
end

local function valend_figure(s, file, f, size)
  local points, means, values = pdata.valend(s)
  return { script = "valend", data = file(f.name, points), vars = variant_vars(s,
    { means = file(f.name .. "_mean", means) }), height = size.width * 0.7, values = values }
end

local function tasks_figure(s, file, f, size)
  local text, marks, values, ntasks = pdata.tasks(s, f.shots or 0, f.setups)
  if not text then return nil, "the " .. s.name .. " study has no task accuracies" end
  return { script = "tasks", data = file(f.name, text), vars = variant_vars(s,
    { marks = file(f.name .. "_marks", marks), ntasks = ntasks }), height = size.width * 0.75,
    values = values }
end

local function forest_figure(studies, file, f, size)
  local text, rows, width, values, xmin, xmax, heads = pforest.forest(studies, f.metric, f.labels,
    f.settings)
  if not text then
    if #studies == 1 then
      return nil, "the " .. studies[1].name .. " study has no comparison on " .. f.metric
    end
    return nil, "no study with primary metric " .. f.metric .. " has a comparison yet"
  end
  local label = M.metric_words(f.metric)
  -- The left margin (in characters) fits the longest label; a row is 0.2 in high.
  local vars = { rows = rows, lmargin = math.floor(width * 1.15) + 2, nheads = #heads,
    xlabel = "difference in " .. label,
    xmin = xmin, xmax = xmax, xstep = nice_step(xmin, xmax, 5) }
  for i, h in ipairs(heads) do
    vars["head" .. i], vars["head_y" .. i], vars["head_kind" .. i] = h.text, h.y, h.kind
  end
  -- f.name_font: the font of the study headers, for headers that are study names
  -- (identifiers): the standalone report sets them in the mono font, whose underscore is
  -- one character wide (LM Roman Bold's is a rule about two wide: `dropout_abl` read as
  -- `dropout__abl`).  The paper keeps its bold roman (its figures keep their bytes).
  vars.namefont = f.name_font
  return { script = "forest", data = file(f.name, text), vars = vars,
    height = 0.75 + 0.2 * rows, values = values }
end

local function divergence_figure(s, file, f, size)
  local text, colors, n, values, lrs, marks = pdata.divergence(s)
  if #lrs == 0 then return nil, "the " .. s.name .. " study's variants name no learning rate" end
  local lo, hi = extent(lrs)
  local xmin, xmax, xtics = log_axis(lo, hi, 0.1)
  return { script = "divergence", data = file(f.name, text), vars = { n = n, colors = colors,
    pts = marks, xmin = xmin, xmax = xmax, xtics = xtics }, height = size.width * 0.6, values = values,
    zero = "no run of the " .. s.name .. " study diverged, at any learning rate" }
end

-- A parameter count as a tick label: "104k", "1.6M".
local function count_label(p)
  if p >= 1e6 then return (string.format("%.2g", p / 1e6)) .. "M" end
  return string.format("%dk", math.floor(p / 1000 + 0.5))
end

local function effect_figure(s, file, f, size)
  local text, colors, n, pts, marks = pdata.effect_by_size(s)
  if not text then return nil, "the study has no within-setting comparison against none" end
  local me = s.analysis.min_effect or 0
  local ps, ys, values, tics, tic_labels, seen = {}, { 0, me, -me }, {}, {}, {}, {}
  for _, p in ipairs(pts) do
    ps[#ps + 1] = p.p
    ys[#ys + 1], ys[#ys + 2] = p.lo, p.hi
    values[#values + 1] = p.mean
    if not seen[p.p] then
      seen[p.p] = true
      tics[#tics + 1], tic_labels[#tics + 1] = string.format("%d", p.p), count_label(p.p)
    end
  end
  local plo, phi = extent(ps)
  local xmin, xmax = log_axis(plo, phi, 0.25)
  local ylo, yhi = extent(ys)
  local ymin, ymax = padded(ylo, yhi, 0.08)
  return { script = "effect", data = file(f.name, text), vars = { n = n, colors = colors,
    pts = marks, min_effect = me, xmin = xmin, xmax = xmax, xtics = table.concat(tics, " "),
    xtic_labels = table.concat(tic_labels, " "),
    ymin = ymin, ymax = ymax,
    ylabel = "difference in " .. M.metric_words(s.primary) },
    height = size.width * 0.62, values = values }
end

local function reliability_figure(s, file, f, size)
  local text, values = pdata.reliability(s)
  if not text then return nil, "the run records have no reliability bins" end
  return { script = "reliability", data = file(f.name, text), vars = variant_vars(s, {}),
    height = size.width * 0.9, values = values }
end

local CLASSES = { "letter", "digit", "punct", "space" }

-- One panel per character class that has values; the script reads <data>_<class>.dat.
local function classnorm_figure(s, file, f, size)
  local present, values, ys, last = {}, {}, {}, 0
  for _, cls in ipairs(CLASSES) do
    local text, pts = pdata.curves(s, f.column:format(cls))
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
  local lo, hi = extent(ys)
  if not (lo and lo > 0) then lo, hi = 1e-3, 1 end
  local ymin, ymax, ytics = log_axis(lo, hi, 0.05)
  return { script = "classnorm", data = file(f.name):sub(1, -5),
    vars = variant_vars(s, { classes = table.concat(present, " "),
      dashes = dashes_of(s.variants), mark_every = math.max(#s.variants, 4), ymin = ymin,
      ymax = ymax, ytics = ytics, xstep = nice_step(0, last, 2), xmax = last }),
    height = size.width * 0.42, values = values }
end

local function array_figure(s, file, f, size)
  local text, values = pdata.array_metric(s, f.key)
  if not text then return nil, "the run records have no " .. f.key end
  return { script = f.script, data = file(f.name, text), vars = variant_vars(s, {}),
    height = size.width * 0.6, values = values }
end

-- The groups of sweep summary sw as the figure draws them: name, level, style and label
-- (f.labels[group], else its level and the settings in which the groups differ); or nil
-- and why.
local function sweep_groups(s, sw, f)
  local groups = {}
  for _, name in ipairs(sw.order) do
    local grp = sw.groups[name]
    local v = type(grp) == "table" and type(grp.variants) == "table" and
      s.variant_by_name[grp.variants[1]]
    if not v then
      return nil, string.format("%s/summary.json: lr_sweep.groups.%s: expected its variants",
        s.dir, tostring(name))
    end
    local rest = name:sub(1, #v.level + 1) == v.level .. "-" and name:sub(#v.level + 2) or
      (name ~= v.level and name or nil)
    groups[#groups + 1] = { name = name, grp = grp, level = v.level, first = v,
      color = v.color, point = v.point,
      label = f.labels and f.labels[name], tag = rest or "" }
  end
  -- unlabelled groups: their norm and the settings other than the swept one in which they
  -- differ ("no norm, warmup 0")
  local firsts = {}
  for _, gr in ipairs(groups) do firsts[#firsts + 1] = gr.first end
  for _, gr in ipairs(groups) do
    gr.label = gr.label or plot_label(s, gr.first, firsts, sw.over or "lr")
  end
  return groups
end

-- The data blocks of the sweep's groups (those with a finite mean somewhere): the blocks,
-- the groups drawn, the values on each axis, the means, and where some seed diverged.
local function sweep_blocks(sw, groups)
  local out, cols, xs, ys, values, div = {}, {}, {}, {}, {}, {}
  for gi, gr in ipairs(groups) do
    local rows = { title(gr.label), "# " .. (sw.over or "lr") .. " mean min max n n_diverged" }
    for _, p in ipairs(gr.grp.points or {}) do
      if finite(p.value) and p.value > 0 then
        xs[#xs + 1] = p.value
        if (p.n or 0) > 0 and finite(p.mean) then
          rows[#rows + 1] = string.format("%s %s %s %s %d %d", g(p.value), g(p.mean),
            g(p.min), g(p.max), p.n, p.n_diverged or 0)
          values[#values + 1] = p.mean
          ys[#ys + 1], ys[#ys + 2] = p.min, p.max
        end
        if (p.n_diverged or 0) > 0 then
          div[#div + 1] = { x = p.value, color = gi }
        end
      end
    end
    if #rows > 2 then
      out[#out + 1] = table.concat(rows, "\n")
      cols[#cols + 1] = gr
    end
  end
  return out, cols, xs, ys, values, div
end

-- The loss against the swept value (a learning rate) per group of a study's `lr_sweep`
-- summary (lua/repro/analysis/lrsens.lua): the mean over seeds with the range from the lowest to
-- the highest seed, of the runs that did not diverge, and the group's mark above the
-- curves, on a row of its own, at each value where some seed diverged (the groups a
-- little apart along the axis, so that ranges at one value do not hide each other).  A group is labelled by its norm and
-- the settings in which the groups differ (plot_label: "no norm, warmup 0"), or by
-- `labels[group]`.
local function lrsweep_figure(s, file, f, size)
  local sw = s.summary.lr_sweep
  if type(sw) ~= "table" or type(sw.groups) ~= "table" or type(sw.order) ~= "table" then
    return nil, "the " .. s.name .. " study's summary has no lr_sweep section (it sweeps no " ..
      "learning rate)"
  end
  local groups, why = sweep_groups(s, sw, f)
  if not groups then return nil, why end
  local out, cols, xs, ys, values, div = sweep_blocks(sw, groups)
  if #out == 0 then return nil, "every run of the " .. s.name .. " study diverged" end
  local xlo, xhi = extent(xs)
  local xmin, xmax, xtics = log_axis(xlo, xhi, 0.06)
  local ylo, yhi = extent(ys)
  local span = (yhi - ylo) > 0 and (yhi - ylo) or 1
  -- each group's divergences on a row of their own above the curves, in its mark
  local ymin, ymax = ylo - 0.05 * span, yhi + (#div > 0 and 0.1 + 0.05 * #groups or 0.05) * span
  local colors = colors_of(cols)
  local group_colors, group_points = {}, {}
  for c in colors_of(groups):gmatch("%S+") do group_colors[#group_colors + 1] = c end
  for p in points_of(groups):gmatch("%S+") do group_points[#group_points + 1] = p end
  local rows = { "# " .. (sw.over or "lr") .. " y rgb group point" }
  for _, d in ipairs(div) do
    rows[#rows + 1] = string.format("%s %s %d %d %s", g(d.x),
      g(yhi + (0.08 + 0.05 * (d.color - 1)) * span), rgb_int(group_colors[d.color]),
      d.color - 1, group_points[d.color])
  end
  local by_tag = {}
  for i, gr in ipairs(cols) do by_tag[i] = { tag = gr.tag } end
  return { script = "lrsweep", data = file(f.name, blocks(out)), vars = { n = #out,
    colors = colors, dashes = dashes_of(by_tag), pts = points_of(cols),
    diverged = #div > 0 and file(f.name .. "_diverged", table.concat(rows, "\n") .. "\n") or "",
    xmin = xmin, xmax = xmax, xtics = xtics, ymin = ymin, ymax = ymax,
    xlabel = "peak " .. (sw.over == "lr" and "learning rate" or tostring(sw.over)),
    ylabel = "final " .. M.metric_words(sw.loss or "val_loss") },
    height = size.width * 0.6, values = values }
end

-- A sequential study's path (summary.sequential; report/sequential.lua): per comparison
-- the estimate at each look with its repeated interval against the seeds per variant, a
-- ring at the look where it stopped; the band of +-margin, zero, and the target effect
-- when the study declares one.  Each comparison has its treatment's colour.
local function sequential_figure(s, file, f, size)
  local seq = pseq.of(s.summary)
  if not seq then return nil, "the " .. s.name .. " study has no sequential design" end
  local list, comps, values, ys = pseq.path_data(s)
  if #list == 0 then return nil, "no look of the " .. s.name .. " study has an estimate" end
  local d = seq.design
  local tics, treated = {}, {}
  for i, n in ipairs(d.looks) do tics[i] = string.format("%d", n) end
  for i, e in ipairs(comps) do treated[i] = s.variant_by_name[e.treatment] or {} end
  local ylo, yhi = extent(ys)
  local ymin, ymax = padded(ylo, yhi, 0.06)
  return { script = "sequential", data = file(f.name, blocks(list)), vars = { n = #list,
    colors = colors_of(treated), xmax = d.looks[#d.looks] * 1.08, xtics = table.concat(tics, " "),
    ymin = ymin, ymax = ymax, margin = finite(d.margin) and d.margin or 0,
    target = finite(d.target) and d.target or nil,
    ylabel = "difference in " .. M.metric_words(s.primary) }, height = size.width * 0.6,
    values = values }
end

-- The kinds of figure a manifest entry names: its builder, the entry's fields it reads
-- (besides name, study, caption and width) and what it draws from: one study's run
-- records (the default), one study's summary (`summary`), or every study's summary
-- (`summaries`: the forest plot, whose entry names the primary `metric` whose
-- comparisons it gathers, or a `study` to draw that study's alone).
--   curves       column, ylabel, logy, zoom (a fraction: a second panel with the last
--                part of training on a fitted linear axis), settings (as forest's: a
--                variant that has a named setting's config is keyed by its label)
--   forest       metric, labels ({study = group label}), settings ({ {config = {key =
--                value, ...}, label =}, ...}: a setting named by its label wherever a
--                row's two variants have that config; plot_forest.setting_head), name_font
--                studies ({"<study>", ...}: only these, one question's panel: a panel
--                of more than about 15 rows cannot be read at print size)
--   lrsweep      labels ({group = label}): the study's lr_sweep summary
--   sequential   a sequential study's path, look by look (its summary)
--   tasks        shots (default 0): a task study's accuracy per task and variant (mean
--                and sd over seeds), chance and the bigram model marked; setups
--                ({<setup> = words}): the key's words for variants named <setup>-<norm>
M.KINDS = {
  curves = { build = curves_figure, fields = { column = "string", ylabel = "string",
    logy = "boolean?", zoom = "number?", settings = "table?" } },
  valend = { build = valend_figure, fields = {} },
  tasks = { build = tasks_figure, fields = { shots = "number?", setups = "table?" } },
  forest = { build = forest_figure, fields = { metric = "string?", labels = "table?",
    settings = "table?", studies = "table?" },
    summaries = true },
  divergence = { build = divergence_figure, fields = {} },
  effect = { build = effect_figure, fields = {} },
  reliability = { build = reliability_figure, fields = {} },
  classnorm = { build = classnorm_figure, fields = { column = "string" } },
  array = { build = array_figure, fields = { key = "string", script = "string" } },
  lrsweep = { build = lrsweep_figure, fields = { labels = "table?" }, summary = true },
  sequential = { build = sequential_figure, fields = {}, summary = true },
}

-- The width the appendix's figures are printed at (lua/repro/report/tex_tables.lua, appendix).
M.APPENDIX_WIDTH = "0.9\\linewidth"

-- The forest plot of each study the manifest does not list (the paper's appendix).
-- Its group's header is the manifest's label of the study (the `labels` of its first
-- forest figure), else the study's name.
function M.appendix_figures(ctx, forest_name)
  local labels
  for _, f in ipairs(ctx.manifest and ctx.manifest.figures or {}) do
    if f.kind == "forest" and f.labels and not labels then labels = f.labels end
  end
  local list = {}
  for _, s in ipairs(ctx.appendix) do
    list[#list + 1] = { name = forest_name(s), kind = "forest", study = s.name,
      metric = s.primary, width = M.APPENDIX_WIDTH, labels = labels }
  end
  return list
end

-- The printed width in inches of a figure entry: its `width` ("0.8\linewidth") times the
-- manifest's text_width (inches), or 5 in when either is missing.
local function printed_width(ctx, f)
  local frac = f.width and tonumber(f.width:match("^([%d.]+)\\linewidth$"))
  local text = ctx.manifest and ctx.manifest.text_width
  if frac and text then return frac * text end
  return 5.0
end

-- Whether a figure draws nothing but zeros (or nothing at all).
function M.all_zero(values)
  for _, x in ipairs(values or {}) do
    if finite(x) and x ~= 0 then return false end
  end
  return true
end

-- The spec of one figure entry f, or {skip = reason}.  Its data files are written only
-- when it is drawn.
local function build(ctx, f, file)
  local kind = M.KINDS[f.kind]
  local s = f.study and ctx.by_name[f.study]
  if f.study and not s then
    return { skip = data.absent_reason(ctx.experiments, f.study) }
  end
  local pending = {}
  local function later(name, text)
    local path = file(name)
    if text then pending[#pending + 1] = { name = name, text = text } end
    return path
  end
  local size = { width = printed_width(ctx, f) }
  local spec, skip
  if kind.summaries then
    if not f.metric then return { skip = "the " .. f.study .. " study has no primary metric" } end
    -- a manifest figure over every study draws the manifest's studies only: a study the
    -- paper does not list (a user's, a superseded one) has its own appendix figure
    -- (a figure's `studies`: only those, one question's panel of a split forest)
    local listed, only = {}, nil
    if f.studies then
      only = {}
      for _, n in ipairs(f.studies) do only[n] = true end
    end
    for _, x in ipairs(ctx.studies) do
      if (not ctx.manifest or not ctx.manifest.listed or ctx.manifest.listed[x.name]) and
          (not only or only[x.name]) then
        listed[#listed + 1] = x
      end
    end
    spec, skip = kind.build(s and { s } or listed, later, f, size)
  elseif not kind.summary and not s:has_records() then
    return { skip = "the run records of the " .. f.study .. " study are missing" }
  else
    -- the spec's named settings label its keys while it is built (plot_style.named)
    style.named = f.settings or {}
    local ok, a, b = pcall(kind.build, s, later, f, size)
    style.named = {}
    if not ok then error(a, 0) end
    spec, skip = a, b
  end
  if not spec then return { skip = skip } end
  if M.all_zero(spec.values) then
    return { skip = spec.zero or "every value it would draw is zero" }
  end
  local texts = {}
  for _, p in ipairs(pending) do
    file(p.name, p.text)
    texts[#texts + 1] = p.text
  end
  -- what it draws, for the report's check that entries of different parameters differ
  spec.data_text = table.concat(texts, "\f")
  spec.width = size.width
  return spec
end

-- Writes the data files of the figures (a list of manifest entries) into data_dir
-- (through ctx.out) and returns their specs: {name, script, data, vars, height} or
-- {name, skip = reason}.
function M.write_data(ctx, figures, data_dir)
  -- Writes data_dir/<name>.dat (when given text) and returns its path.
  local function file(name, text)
    local path = data_dir .. "/" .. name .. ".dat"
    if text then ctx.out:write(path, text) end
    return path
  end
  local specs = {}
  for _, f in ipairs(figures) do
    local spec = build(ctx, f, file)
    spec.name = f.name
    specs[#specs + 1] = spec
  end
  return specs
end

return M
