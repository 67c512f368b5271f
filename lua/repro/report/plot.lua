-- The figures of the report (lua/repro/report/init.lua): gnuplot data files and the driver
-- that renders plots/*.gp into the paper's PDF figures and their PNG copies.  The figures
-- are the manifest's (`figures`, each of a kind of M.KINDS) and, for every study it does
-- not list, the forest plot of its primary comparisons (M.appendix_figures).  A data file
-- holds one block per curve (a script selects it with `index`), each titled for
-- `title columnheader(1)`; no NaN is written.  Figures are drawn at their printed size;
-- one that cannot be drawn carries the reason (`skip`), printed in its place.
local base = require "repro.core.base"
local data = require "repro.report.data"
local gnuplot = require "repro.report.gnuplot"
local style = require "repro.report.plot_style"
local pdata = require "repro.report.plot_data"
local pforest = require "repro.report.plot_forest"
local pseq = require "repro.report.sequential"

local M = {}
local finite = base.finite
local g, title, extent = gnuplot.g, gnuplot.title, gnuplot.extent
M.gp_string, M.title = gnuplot.gp_string, gnuplot.title
M.fix_pdf_date, M.render, M.duplicates = gnuplot.fix_pdf_date, gnuplot.render, pforest.duplicates

-- Builders: (study or studies, data file writer, figure entry) -> {text (the data file's),
-- vars, values, and height in inches or aspect (height over width); script, data and zero
-- when not the default}, or nil and the reason the figure cannot be drawn.  `values` are
-- the numbers the figure draws on its value axis: when every one is zero (no run diverged,
-- say) the figure is not drawn and `zero` (or a generic sentence) says so in its place.
local function forest_figure(studies, file, f)
  local text, rows, width, values, xmin, xmax, heads = pforest.forest(studies, f.metric, f.labels,
    f.settings)
  if not text then
    if #studies == 1 then
      return nil, "the " .. studies[1].name .. " study has no comparison on " .. f.metric
    end
    return nil, "no study with primary metric " .. f.metric .. " has a comparison yet"
  end
  -- The left margin (in characters) fits the longest label; a row is 0.2 in high.
  -- f.name_font: the font of the study headers, for headers that are study names
  -- (identifiers): the standalone report sets them in the mono font, whose underscore is
  -- one character wide (LM Roman Bold's is a rule about two wide: `dropout_abl` read as
  -- `dropout__abl`).  The paper keeps its bold roman (its figures keep their bytes).
  local vars = { rows = rows, lmargin = math.floor(width * 1.15) + 2, nheads = #heads,
    xlabel = "difference in " .. style.metric_words(f.metric), namefont = f.name_font,
    xmin = xmin, xmax = xmax, xstep = gnuplot.nice_step(xmin, xmax, 5) }
  for i, h in ipairs(heads) do
    vars["head" .. i], vars["head_y" .. i], vars["head_kind" .. i] = h.text, h.y, h.kind
  end
  return { text = text, vars = vars, height = 0.75 + 0.2 * rows, values = values }
end

-- The groups of sweep summary sw, in its order, each with its first variant, style and tag
-- (the group's name after its level: a dash type per tag); or nil and why.
local function sweep_groups(s, sw)
  local groups = {}
  for _, name in ipairs(sw.order) do
    local grp = sw.groups[name]
    local v = type(grp) == "table" and type(grp.variants) == "table" and
      s.variant_by_name[grp.variants[1]]
    if not v then
      return nil, string.format("%s/summary.json: lr_sweep.groups.%s: expected its variants",
        s.dir, tostring(name))
    end
    local tag = name:sub(1, #v.level + 1) == v.level .. "-" and name:sub(#v.level + 2) or
      (name ~= v.level and name or "")
    groups[#groups + 1] = { name = name, points = grp.points or {}, first = v,
      color = v.color, point = v.point, tag = tag }
  end
  return groups
end

-- The loss against the swept value (a learning rate) per group of a study's `lr_sweep`
-- summary (lua/repro/analysis/lrsens.lua): the mean over seeds with the range from the
-- lowest to the highest seed, of the runs that did not diverge, and the group's mark above
-- the curves, on a row of its own, at each value where some seed diverged (the groups a
-- little apart along the axis, so that ranges at one value do not hide each other).  A
-- group is labelled by `labels[group]`, else by its norm and the settings in which the
-- groups differ (plot_label: "no norm, warmup 0").
local function lrsweep_figure(s, file, f)
  local sw = s.summary.lr_sweep
  if type(sw) ~= "table" or type(sw.groups) ~= "table" or type(sw.order) ~= "table" then
    return nil, "the " .. s.name .. " study's summary has no lr_sweep section (it sweeps no " ..
      "learning rate)"
  end
  local groups, why = sweep_groups(s, sw)
  if not groups then return nil, why end
  local over, firsts = sw.over or "lr", {}
  for i, gr in ipairs(groups) do firsts[i] = gr.first end
  -- the groups with a finite mean somewhere are drawn; every group's divergences are marked
  local out, drawn, xs, ys, values, div = {}, {}, {}, {}, {}, {}
  for gi, gr in ipairs(groups) do
    local label = f.labels and f.labels[gr.name] or style.plot_label(s, gr.first, firsts, over)
    local rows = { title(label), "# " .. over .. " mean min max n n_diverged" }
    for _, p in ipairs(gr.points) do
      if finite(p.value) and p.value > 0 then
        xs[#xs + 1] = p.value
        if (p.n or 0) > 0 and finite(p.mean) then
          rows[#rows + 1] = string.format("%s %s %s %s %d %d", g(p.value), g(p.mean),
            g(p.min), g(p.max), p.n, p.n_diverged or 0)
          values[#values + 1] = p.mean
          ys[#ys + 1], ys[#ys + 2] = p.min, p.max
        end
        if (p.n_diverged or 0) > 0 then div[#div + 1] = { x = p.value, group = gi } end
      end
    end
    if #rows > 2 then
      out[#out + 1] = table.concat(rows, "\n")
      drawn[#drawn + 1] = gr
    end
  end
  if #out == 0 then return nil, "every run of the " .. s.name .. " study diverged" end
  local xlo, xhi = extent(xs)
  local xmin, xmax, xtics = gnuplot.log_axis(xlo, xhi, 0.06)
  local ylo, yhi = extent(ys)
  local span = (yhi - ylo) > 0 and (yhi - ylo) or 1
  -- each group's divergences on a row of their own above the curves, in its mark
  local ymin, ymax = ylo - 0.05 * span, yhi + (#div > 0 and 0.1 + 0.05 * #groups or 0.05) * span
  local colors, points = style.style_list(groups, "color"), style.style_list(groups, "point")
  local rows = { "# " .. over .. " y rgb group point" }
  for _, d in ipairs(div) do
    -- the colour as gnuplot's `lc rgb variable` integer
    rows[#rows + 1] = string.format("%s %s %d %d %s", g(d.x),
      g(yhi + (0.08 + 0.05 * (d.group - 1)) * span), tonumber(colors[d.group]:sub(2), 16),
      d.group - 1, points[d.group])
  end
  return { text = gnuplot.blocks(out), values = values, aspect = 0.6, vars = { n = #out,
    colors = style.colors_of(drawn), dashes = style.dashes_of(drawn),
    pts = style.points_of(drawn),
    diverged = #div > 0 and file(f.name .. "_diverged", table.concat(rows, "\n") .. "\n") or "",
    xmin = xmin, xmax = xmax, xtics = xtics, ymin = ymin, ymax = ymax,
    xlabel = "peak " .. (sw.over == "lr" and "learning rate" or tostring(sw.over)),
    ylabel = "final " .. style.metric_words(sw.loss or "val_loss") } }
end

-- A sequential study's path (summary.sequential; report/sequential.lua): per comparison
-- the estimate at each look with its repeated interval against the seeds per variant, a
-- ring at the look where it stopped; the band of +-margin, zero, and the target effect
-- when the study declares one.  Each comparison has its treatment's colour.
local function sequential_figure(s, file, f)
  local seq = pseq.of(s.summary)
  if not seq then return nil, "the " .. s.name .. " study has no sequential design" end
  local list, comps, values, ys = pseq.path_data(s)
  if #list == 0 then return nil, "no look of the " .. s.name .. " study has an estimate" end
  local d = seq.design
  local tics, treated = {}, {}
  for i, n in ipairs(d.looks) do tics[i] = string.format("%d", n) end
  for i, e in ipairs(comps) do treated[i] = s.variant_by_name[e.treatment] or {} end
  local ylo, yhi = extent(ys)
  local ymin, ymax = gnuplot.padded(ylo, yhi, 0.06)
  return { text = gnuplot.blocks(list), values = values, aspect = 0.6, vars = { n = #list,
    colors = style.colors_of(treated), xmax = d.looks[#d.looks] * 1.08,
    xtics = table.concat(tics, " "), ymin = ymin, ymax = ymax,
    margin = finite(d.margin) and d.margin or 0, target = finite(d.target) and d.target or nil,
    ylabel = "difference in " .. style.metric_words(s.primary) } }
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
local build_of = pdata.figure
M.KINDS = {
  curves = { build = build_of.curves, fields = { column = "string", ylabel = "string",
    logy = "boolean?", zoom = "number?", settings = "table?" } },
  valend = { build = build_of.valend, fields = {} },
  tasks = { build = build_of.tasks, fields = { shots = "number?", setups = "table?" } },
  forest = { build = forest_figure, fields = { metric = "string?", labels = "table?",
    settings = "table?", studies = "table?" },
    summaries = true },
  divergence = { build = build_of.divergence, fields = {} },
  effect = { build = build_of.effect, fields = {} },
  reliability = { build = build_of.reliability, fields = {} },
  classnorm = { build = build_of.classnorm, fields = { column = "string" } },
  array = { build = build_of.array, fields = { key = "string", script = "string" } },
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
  return frac and text and frac * text or 5.0
end

-- Whether a figure draws nothing but zeros (or nothing at all).
function M.all_zero(values)
  for _, x in ipairs(values or {}) do
    if finite(x) and x ~= 0 then return false end
  end
  return true
end

-- The studies a figure over every study draws: the manifest's (a study the paper does not
-- list, a user's or a superseded one, has its own appendix figure), and of those only the
-- figure's `studies` when it names them (one question's panel of a split forest).
local function listed_studies(ctx, f)
  local listed = ctx.manifest and ctx.manifest.listed
  local only = f.studies and base.set_of(f.studies)
  local list = {}
  for _, x in ipairs(ctx.studies) do
    if (not listed or listed[x.name]) and (not only or only[x.name]) then list[#list + 1] = x end
  end
  return list
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
    if text then pending[#pending + 1] = { name = name, text = text } end
    return file(name)
  end
  local spec, skip
  if kind.summaries then
    if not f.metric then return { skip = "the " .. f.study .. " study has no primary metric" } end
    spec, skip = kind.build(s and { s } or listed_studies(ctx, f), later, f)
  elseif not kind.summary and not s:has_records() then
    return { skip = "the run records of the " .. f.study .. " study are missing" }
  else
    -- the spec's named settings label its keys while it is built (plot_style.named)
    style.named = f.settings or {}
    spec, skip = kind.build(s, later, f)
    style.named = {}
  end
  if not spec then return { skip = skip } end
  if M.all_zero(spec.values) then
    return { skip = spec.zero or "every value it would draw is zero" }
  end
  if spec.text then table.insert(pending, 1, { name = f.name, text = spec.text }) end
  local texts = {}
  for i, p in ipairs(pending) do
    file(p.name, p.text)
    texts[i] = p.text
  end
  local width = printed_width(ctx, f)
  -- data_text: what it draws, for the report's check that entries of different parameters differ
  return { script = spec.script or f.kind, data = spec.data or file(f.name), vars = spec.vars,
    width = width, height = spec.height or width * spec.aspect, values = spec.values,
    data_text = table.concat(texts, "\f") }
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
  for i, f in ipairs(figures) do
    specs[i] = build(ctx, f, file)
    specs[i].name = f.name
  end
  return specs
end

return M
