-- The figures of the report (lua/repro/report.lua): gnuplot data files and the driver
-- that renders plots/*.gp into the paper's PDF figures and their PNG copies.
--
-- A data file holds one block per curve (blocks separated by two blank lines, so a
-- script selects them with `index`), each block starting with its quoted title for
-- `title columnheader(1)`.  Numbers are written with 6 significant digits; a step
-- where no run has a finite value is left out, never written as NaN.  A figure spec
-- names its script, data file and the gnuplot variables the script reads (block count,
-- colours and dash types per block, axis labels); a figure whose study or records are
-- missing carries the reason instead (`skip`) and is not rendered.
--
-- The figures are those of the paper's manifest (paper/paper.lua: its `figures`, each
-- naming a kind of M.KINDS and that kind's fields) and, for every study the manifest does
-- not list, the forest plot of its primary comparisons (M.appendix_figures).
local fs = require "repro.fs"
local host = require "repro.host"
local stats = require "stats"
local F = require "repro.texfmt"
local data = require "repro.report_data"

local M = {}
local finite = F.finite

-- Colour-blind-safe colours (Okabe-Ito) per embedding norm; others take the rest.
local NORM_COLOR = { none = "#000000", layernorm = "#0072B2", rmsnorm = "#D55E00" }
local SPARE_COLORS = { "#009E73", "#CC79A7", "#E69F00", "#56B4E9" }

local function g(x)
  if not finite(x) then return nil end
  local s = string.format("%.6g", x)
  if s == "-0" then s = "0" end
  return s
end

-- A gnuplot string literal (single quotes; '' is a quote).
local function gp_string(s)
  return "'" .. tostring(s):gsub("'", "''") .. "'"
end

-- Plain ASCII title (gnuplot runs with enhanced text off).
local function title(s)
  return '"' .. tostring(s):gsub('"', "'") .. '"'
end

local function colors_of(variants)
  local c, spare = {}, 0
  for i, v in ipairs(variants) do
    local col = NORM_COLOR[v.norm]
    if not col then
      spare = spare % #SPARE_COLORS + 1
      col = SPARE_COLORS[spare]
    end
    c[i] = col
  end
  return table.concat(c, " ")
end

-- Dash type per variant: 1 for the first setting, 2 for the second, ...
local function dashes_of(s, variants)
  local index = {}
  for i, st in ipairs(s:settings()) do index[st.key] = i end
  local d = {}
  for i, v in ipairs(variants) do d[i] = string.format("%d", index[v.setting] or 1) end
  return table.concat(d, " ")
end

local function blocks(list)
  return table.concat(list, "\n\n\n") .. "\n"
end

-- Per step over a variant's seeds: mean, min, max and count of the finite values of a
-- log.csv column.  Returns the block text, or nil when no run has the column.
local function curve_block(s, v, column)
  local by_step, steps = {}, {}
  local have = false
  for _, seed in ipairs(s.seeds) do
    local log = s:log(v.name, seed)
    local col = log and log.data[column]
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
  local rows = { title(v.label), "# step mean min max n" }
  for _, step in ipairs(steps) do
    local xs = by_step[step]
    local sum, lo, hi = 0, math.huge, -math.huge
    for _, x in ipairs(xs) do
      sum = sum + x
      lo = math.min(lo, x)
      hi = math.max(hi, x)
    end
    rows[#rows + 1] = string.format("%d %s %s %s %d", step, g(sum / #xs), g(lo), g(hi), #xs)
  end
  return table.concat(rows, "\n")
end

local function curves(s, column)
  local list = {}
  for _, v in ipairs(s.variants) do
    local b = curve_block(s, v, column)
    if not b then return nil end
    list[#list + 1] = b
  end
  return blocks(list)
end

-- End-of-training validation loss per seed, and per variant its mean and sd.
local function valend(s)
  local points, means = {}, { "# x mean sd label" }
  for i, v in ipairs(s.variants) do
    local rows = { title(v.label), "# x val_loss seed" }
    local n = #s.seeds
    for j, seed in ipairs(s.seeds) do
      local x = s:value(v.name, seed, "val_loss")
      if x then
        rows[#rows + 1] = string.format("%s %s %d", g(i + (j - (n + 1) / 2) * 0.06), g(x), seed)
      end
    end
    points[#points + 1] = table.concat(rows, "\n")
    local st = s:stat(v.name, "val_loss")
    if finite(st.mean) then
      means[#means + 1] = string.format("%d %s %s %s", i, g(st.mean), g(st.sd) or "0",
        title(v.label))
    end
  end
  return blocks(points), table.concat(means, "\n") .. "\n"
end

local ci_of = data.interval

local function plain_label(s, c)
  local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
  if t and b and t.setting == b.setting then
    local head = #s:settings() > 1 and (t.tag .. ": ") or ""
    return head .. t.norm_label .. " - " .. b.norm_label
  end
  return c.treatment .. " - " .. c.baseline
end

-- Forest rows of every study of `studies` whose primary metric is `metric`, top to bottom.
local function forest(studies, metric)
  local rows = {}
  for _, s in ipairs(studies) do
    if s.primary == metric then
      for _, c in ipairs(s:comparisons()) do
        if finite(c.mean) then
          local ci = ci_of(c)
          local lo = ci and g(ci[1]) or g(c.mean)
          local hi = ci and g(ci[2]) or g(c.mean)
          rows[#rows + 1] = { mean = g(c.mean), lo = lo, hi = hi, mde = g(data.mde(c)) or "0",
            min_effect = g(s.analysis.min_effect) or "0",
            label = s.name .. " " .. plain_label(s, c) .. (ci and "" or " (no CI)") }
        end
      end
    end
  end
  if #rows == 0 then return nil, 0, 0 end
  local out = { "# y mean lo hi mde min_effect label" }
  local width = 0
  for i, r in ipairs(rows) do
    out[#out + 1] = string.format("%d %s %s %s %s %s %s", #rows - i + 1, r.mean, r.lo, r.hi,
      r.mde, r.min_effect, title(r.label))
    width = math.max(width, #r.label)
  end
  return table.concat(out, "\n") .. "\n", #rows, width
end

-- Norms in order of first appearance, each with its variants.
local function by_norm(s)
  local list, index = {}, {}
  for _, v in ipairs(s.variants) do
    if not index[v.norm] then
      list[#list + 1] = { norm = v.norm, label = v.norm_label, variants = {} }
      index[v.norm] = list[#list]
    end
    local t = index[v.norm].variants
    t[#t + 1] = v
  end
  return list
end

local function divergence(s)
  local out, cols = {}, {}
  for _, n in ipairs(by_norm(s)) do
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
    end
    out[#out + 1] = table.concat(rows, "\n")
    cols[#cols + 1] = { norm = n.norm }
  end
  return blocks(out), colors_of(cols), #out
end

-- The effect of each norm against `none` within each setting, by parameter count.
local function effect_by_size(s)
  local params = {}
  for _, st in ipairs(s:settings()) do params[st.key] = s:setting_params(st) end
  local out, cols = {}, {}
  for _, n in ipairs(by_norm(s)) do
    if n.norm ~= "none" then
      local rows = { title(n.label .. " - none"), "# params mean lo hi" }
      local pts = {}
      for _, c in ipairs(s:comparisons()) do
        local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
        if t and b and t.norm == n.norm and b.norm == "none" and t.setting == b.setting
            and finite(params[t.setting]) and finite(c.mean) then
          local ci = ci_of(c) or { c.mean, c.mean }
          pts[#pts + 1] = { p = params[t.setting], mean = c.mean, lo = ci[1], hi = ci[2] }
        end
      end
      table.sort(pts, function(a, b) return a.p < b.p end)
      for _, p in ipairs(pts) do
        rows[#rows + 1] = string.format("%d %s %s %s", p.p, g(p.mean), g(p.lo), g(p.hi))
      end
      if #pts > 0 then
        out[#out + 1] = table.concat(rows, "\n")
        cols[#cols + 1] = { norm = n.norm }
      end
    end
  end
  if #out == 0 then return nil end
  return blocks(out), colors_of(cols), #out
end

-- Reliability: per variant, the bins pooled over seeds (confidence and accuracy weighted
-- by count).
local function reliability(s)
  local out = {}
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
    local rows = { title(v.label), "# confidence accuracy count" }
    for k = 1, nb do
      if n[k] then
        rows[#rows + 1] = string.format("%s %s %d", g(conf[k] / n[k]), g(acc[k] / n[k]),
          math.floor(n[k] + 0.5))
      end
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return blocks(out)
end

-- Mean, min and max over seeds of an array metric (resid_norm, loss_by_position), by
-- index from 0.
local function array_metric(s, key)
  local out = {}
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
    local rows = { title(v.label), "# index mean min max" }
    for i = 1, len do
      local xs = cols[i]
      if xs then
        local sm = stats.summary(xs)
        rows[#rows + 1] = string.format("%d %s %s %s", i - 1, g(sm.mean), g(sm.min), g(sm.max))
      end
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return blocks(out)
end


-- Builders: (study or studies, data file writer, figure entry) -> spec fields
-- {script, data, vars, height}, or nil and the reason the figure cannot be drawn.
local function curves_figure(s, file, f)
  local text = curves(s, f.column)
  if not text then return nil, "the run records have no " .. f.column .. " column" end
  return { script = "curves", data = file(f.name, text), vars = { n = #s.variants,
    colors = colors_of(s.variants), dashes = dashes_of(s, s.variants), ylabel = f.ylabel,
    logy = f.logy and 1 or 0, points = f.column:match("^d_") and 1 or 0 } }
end

local function valend_figure(s, file, f)
  local points, means = valend(s)
  return { script = "valend", data = file(f.name, points), vars = {
    means = file(f.name .. "_mean", means), n = #s.variants, colors = colors_of(s.variants) } }
end

local function forest_figure(studies, file, f)
  local text, rows, width = forest(studies, f.metric)
  if not text then
    return nil, "no study with primary metric " .. f.metric .. " has been run yet"
  end
  local spec = F.METRIC[f.metric]
  local label = spec and spec.label:gsub("\\ ", " "):gsub("%$", "") or f.metric
  -- The left margin (in characters) fits the longest label.
  return { script = "forest", data = file(f.name, text), vars = { rows = rows,
    lmargin = width + 2, xlabel = "difference treatment - baseline in " .. label } }
end

local function divergence_figure(s, file, f)
  local text, colors, n = divergence(s)
  return { script = "divergence", data = file(f.name, text), vars = { n = n, colors = colors } }
end

local function effect_figure(s, file, f)
  local text, colors, n = effect_by_size(s)
  if not text then return nil, "the study has no within-setting comparison against none" end
  return { script = "effect", data = file(f.name, text), vars = { n = n, colors = colors,
    min_effect = s.analysis.min_effect or 0,
    ylabel = "difference in " .. (s.primary or "?"):gsub("_", " ") .. " vs none" } }
end

local function reliability_figure(s, file, f)
  local text = reliability(s)
  if not text then return nil, "the run records have no reliability bins" end
  return { script = "reliability", data = file(f.name, text), vars = { n = #s.variants,
    colors = colors_of(s.variants) } }
end

local CLASSES = { "letter", "digit", "punct", "space" }

-- One panel per character class that has values; the script reads <data>_<class>.dat.
local function classnorm_figure(s, file, f)
  local present = {}
  for _, cls in ipairs(CLASSES) do
    local text = curves(s, "d_embed_norm_" .. cls)
    if text then
      file(f.name .. "_" .. cls, text)
      present[#present + 1] = cls
    end
  end
  if #present == 0 then
    return nil, "the run records have no per-class embedding norms (d_embed_norm_<class>)"
  end
  return { script = "classnorm", data = file(f.name):sub(1, -5),
    vars = { classes = table.concat(present, " "), n = #s.variants,
      colors = colors_of(s.variants) }, height = 1.9 * math.ceil(#present / 2) + 0.4 }
end

local function array_figure(s, file, f)
  local text = array_metric(s, f.key)
  if not text then return nil, "the run records have no " .. f.key end
  return { script = f.script, data = file(f.name, text), vars = { n = #s.variants,
    colors = colors_of(s.variants) } }
end

-- The kinds of figure a manifest entry names: its builder, the entry's fields it reads
-- (besides name, study, caption and width) and whether it draws one study from its run
-- records (else every study's summary: the forest plot, whose entry names the primary
-- `metric` whose comparisons it gathers, or a `study` to draw that study's alone).
M.KINDS = {
  curves = { build = curves_figure, fields = { column = "string", ylabel = "string",
    logy = "boolean?" } },
  valend = { build = valend_figure, fields = {} },
  forest = { build = forest_figure, fields = { metric = "string?" }, summaries = true },
  divergence = { build = divergence_figure, fields = {} },
  effect = { build = effect_figure, fields = {} },
  reliability = { build = reliability_figure, fields = {} },
  classnorm = { build = classnorm_figure, fields = {} },
  array = { build = array_figure, fields = { key = "string", script = "string" } },
}

-- The forest plot of each study the manifest does not list (the paper's appendix).
function M.appendix_figures(ctx, forest_name)
  local list = {}
  for _, s in ipairs(ctx.appendix) do
    list[#list + 1] = { name = forest_name(s), kind = "forest", study = s.name,
      metric = s.primary }
  end
  return list
end

-- The spec of one figure entry f, or {skip = reason}.
local function build(ctx, f, file)
  local kind = M.KINDS[f.kind]
  local s = f.study and ctx.by_name[f.study]
  if f.study and not s then
    return { skip = data.absent_reason(ctx.experiments, f.study) }
  end
  if kind.summaries then
    if not f.metric then return { skip = "the " .. f.study .. " study has no primary metric" } end
    local spec, skip = kind.build(s and { s } or ctx.studies, file, f)
    return spec or { skip = skip }
  end
  if not s:has_records() then
    return { skip = "the run records of the " .. f.study .. " study are missing" }
  end
  local spec, skip = kind.build(s, file, f)
  return spec or { skip = skip }
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

-- Gnuplot's -e text for a spec: every variable assigned.
local function assignments(spec, fmt, out_path, gp_dir)
  local vars = { data = spec.data, fmt = fmt, out = out_path, gpdir = gp_dir,
    height = spec.height }
  for k, v in pairs(spec.vars or {}) do vars[k] = v end
  local keys = {}
  for k in pairs(vars) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = vars[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "number" and g(v) or gp_string(v))
  end
  return table.concat(parts, "; ")
end

-- cairo 1.16 stamps the PDF with its creation time; a fixed one of the same length keeps
-- the bytes (and the cross-reference offsets) reproducible.
local function fix_pdf_date(text)
  return (text:gsub("(/CreationDate %(D:)(%d+)", function(head, digits)
    return head .. (#digits == 14 and "19700101000000" or string.rep("0", #digits))
  end))
end
M.fix_pdf_date = fix_pdf_date

-- Renders every spec without a skip reason: opts.gp_dir (scripts), opts.figures (PDF
-- directory; PNGs go to its png/), opts.out (report output).  Returns {name -> true}.
function M.render(specs, opts)
  local done = {}
  local errf = os.tmpname()
  for _, spec in ipairs(specs) do
    if not spec.skip then
      for _, fmt in ipairs({ "pdf", "png" }) do
        local final = fmt == "pdf" and (opts.figures .. "/" .. spec.name .. ".pdf")
          or (opts.figures .. "/png/" .. spec.name .. ".png")
        local tmp = string.format("%s.tmp.%d.%s", final, host.pid(), fmt)
        local script = opts.gp_dir .. "/" .. spec.script .. ".gp"
        local cmd = "gnuplot -e " .. fs.quote(assignments(spec, fmt, tmp, opts.gp_dir)) .. " " ..
          fs.quote(script) .. " 2>" .. fs.quote(errf)
        local ok = os.execute(cmd)
        local err = fs.read(errf) or ""
        local text = fs.read(tmp)
        os.remove(tmp)
        if not ok or not text or #text == 0 then
          os.remove(errf)
          error({ message = string.format("report: gnuplot failed on %s for %s:\n%s", script,
            spec.name, err) }, 0)
        end
        if err:match("%S") then
          io.stderr:write(string.format("report: gnuplot, %s (%s):\n%s", spec.name, fmt, err))
        end
        if fmt == "pdf" then text = fix_pdf_date(text) end
        opts.out:write(final, text)
      end
      done[spec.name] = true
    end
  end
  os.remove(errf)
  return done
end

return M
