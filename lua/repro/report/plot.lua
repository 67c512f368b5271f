-- The figures of the report (lua/repro/report/init.lua): gnuplot data files and the driver
-- that renders plots/*.gp into the paper's PDF figures and their PNG copies.
--
-- A data file holds one block per curve (blocks separated by two blank lines, so a
-- script selects them with `index`), each block starting with its quoted title for
-- `title columnheader(1)`.  Numbers are written with 6 significant digits; a step
-- where no run has a finite value is left out, never written as NaN.  A figure spec
-- names its script, data file and the gnuplot variables the script reads (block count,
-- colours and dash types per block, axis labels, axis ranges fitted to the data); a
-- figure whose study or records are missing, or whose data are all zero (no run
-- diverged), carries the reason instead (`skip`) and is not rendered: the paper prints
-- that sentence in its place.  Figures are drawn at the size they are printed (the
-- entry's width times the manifest's text_width), so their text is the size it is set in.
--
-- The figures are those of the paper's manifest (paper/paper.lua: its `figures`, each
-- naming a kind of M.KINDS and that kind's fields) and, for every study the manifest does
-- not list, the forest plot of its primary comparisons (M.appendix_figures).
local fs = require "repro.core.fs"
local host = require "repro.host"
local stats = require "stats"
local F = require "repro.report.texfmt"
local data = require "repro.report.data"

local M = {}
local finite = F.finite

-- Colour-blind-safe colours (Okabe-Ito) for the levels of a study's factor that it
-- gives none (lua/repro/report/data.lua: M.factor_of).
local SPARE_COLORS = { "#009E73", "#CC79A7", "#E69F00", "#56B4E9" }

local function g(x)
  if not finite(x) then return nil end
  local s = string.format("%.6g", x)
  if s == "-0" then s = "0" end
  return s
end

-- Text for gnuplot as one line: a control character (a newline would end a command or
-- a data line) becomes a space.
local function one_line(s)
  return (tostring(s):gsub("[%z\1-\31\127]", " "))
end

-- A gnuplot string literal in single quotes ('' is a quote): gnuplot performs neither
-- backquote (command) nor macro substitution inside single quotes, and no backslash
-- escapes, so any text is inert there.  Every string reaches gnuplot this way, as a
-- variable assigned with -e, or as data in a data file; the scripts evaluate none.
local function gp_string(s)
  return "'" .. one_line(s):gsub("'", "''") .. "'"
end
M.gp_string = gp_string

-- A title in a data file (`title columnheader(1)`, `ytic(7)`): data is never
-- substituted or evaluated; plain text (gnuplot runs with enhanced text off).
local function title(s)
  return '"' .. one_line(s):gsub('"', "'") .. '"'
end
M.title = title

-- Point types (filled circle, triangle, square, ...) for the levels the factor's `points`
-- leaves out, so that curves that lie on each other stay distinguishable where their
-- points are drawn.
local SPARE_POINTS = { 11, 13, 15 }

-- Per variant (or group), the style its level has (its field `field`, from the factor),
-- else the next of spare (cycling): the list joined by spaces, for a gnuplot word list.
local function styles_of(variants, field, spare_list)
  local out, spare = {}, 0
  for i, v in ipairs(variants) do
    local x = v[field]
    if not x then
      spare = spare % #spare_list + 1
      x = spare_list[spare]
    end
    out[i] = tostring(x)
  end
  return table.concat(out, " ")
end

local function points_of(variants)
  return styles_of(variants, "point", SPARE_POINTS)
end

-- Axis ranges fitted to the data ----------------------------------------------------------

-- The smallest and largest finite number of a list (nil, nil when it has none).
local function extent(xs)
  local lo, hi
  for _, x in ipairs(xs) do
    if finite(x) then
      if not lo or x < lo then lo = x end
      if not hi or x > hi then hi = x end
    end
  end
  return lo, hi
end

-- A linear range [lo, hi] widened by `pad` of its span on each side (a zero span gets
-- one of its own size, or 1).
local function padded(lo, hi, pad)
  local span = hi - lo
  if span <= 0 then span = math.abs(hi) > 0 and math.abs(hi) or 1 end
  return lo - pad * span, hi + pad * span
end

-- A tick step of 1, 2 or 5 x 10^k giving about `n` intervals over [lo, hi].
local function nice_step(lo, hi, n)
  local raw = (hi - lo) / n
  if not (raw > 0) then return 1 end
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local r = raw / mag
  return (r >= 5 and 5 or r >= 2 and 2 or 1) * mag
end

-- A logarithmic range fitted to [lo, hi] (both > 0) with `pad` of a factor on each
-- side (at least one decade in all), and its tics as a gnuplot word list: 1-2-5 steps when it
-- spans less than two decades, 1-3 steps up to four, decades beyond.
local function log_axis(lo, hi, pad)
  local f = (hi / lo) ^ pad
  if f < 1.02 then f = 1.02 end
  local a, b = lo / f, hi * f
  if b / a < 10 then
    -- at least a decade, around the data's geometric middle
    local mid = math.sqrt(lo * hi)
    a, b = mid / math.sqrt(10), mid * math.sqrt(10)
  end
  local decades = math.log(b / a, 10)
  local mant = decades < 2 and { 1, 2, 5 } or decades < 4 and { 1, 3 } or { 1 }
  local tics = {}
  for k = math.floor(math.log(a, 10)), math.ceil(math.log(b, 10)) do
    for _, m in ipairs(mant) do
      local x = m * 10 ^ k
      if x >= a and x <= b then tics[#tics + 1] = g(x) end
    end
  end
  return a, b, table.concat(tics, " ")
end
M.log_axis = log_axis

local function colors_of(variants)
  return styles_of(variants, "color", SPARE_COLORS)
end

-- Dash type per variant: 1 for the first tag (the name's part after the norm, the
-- setting: "std0.02", "tuned"), 2 for the second, ...
local function dashes_of(variants)
  local index, n, d = {}, 0, {}
  for i, v in ipairs(variants) do
    local key = v.tag or ""
    if not index[key] then
      n = n + 1
      index[key] = n
    end
    d[i] = string.format("%d", index[key])
  end
  return table.concat(d, " ")
end

local function blocks(list)
  return table.concat(list, "\n\n\n") .. "\n"
end

-- A variant's name in a figure's key: its norm as the prose names it (the manifest's names,
-- when plain text: "no norm") and the settings in which it differs from the other
-- variants of `among` (default: the study's), from their configs ("LayerNorm, lr 0.003",
-- "no norm, embed init std 1"); min_lr, which follows lr, and the keys in `skip` (a
-- sweep's swept key) are left out.
local KEY_NAMES = { embed_init_std = "embed init std", tok_init_std = "token init std",
  pos_init_std = "position init std" }

-- A variant's level of the factor as the prose names it (the factor's names), when that
-- is plain text.
local function level_name(v)
  local p = v.prose_level
  return (p and not p:find("[\\$]")) and p or v.level_label
end

-- The label of the study's baseline level: what differences are drawn against.
local function baseline_label(s)
  local b = s.factor.baseline
  return s.factor.labels[b] or tostring(b)
end

-- "key value" for each of the sorted keys, value(k) giving its value (nil: left out),
-- appended to parts and joined with ", ".
local function settings_text(parts, keys, value)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local x = value(k)
    if x ~= nil then
      parts[#parts + 1] = (KEY_NAMES[k] or k:gsub("_", " ")) .. " " ..
        (type(x) == "number" and string.format("%g", x) or tostring(x))
    end
  end
  return table.concat(parts, ", ")
end

local function plot_label(s, v, among, skip)
  local function counts(k) return k ~= s.factor.key and k ~= "min_lr" and k ~= skip end
  local differ = {}
  for _, w in ipairs(among or s.variants) do
    for k, x in pairs(w.overrides) do
      if counts(k) and v.overrides[k] ~= x then differ[k] = true end
    end
    for k, x in pairs(v.overrides) do
      if counts(k) and w.overrides[k] ~= x then differ[k] = true end
    end
  end
  local keys = {}
  for k in pairs(differ) do keys[#keys + 1] = k end
  return settings_text({ level_name(v) }, keys, function(k)
    if v.overrides[k] ~= nil then return v.overrides[k] end
    return s.base[k]
  end)
end

-- Per step over a variant's seeds: mean, min, max and count of the finite values of a
-- log.csv column.  Returns the block text and its points ({step, mean, min, max}), or
-- nil when no run has the column.
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
local function curves(s, column)
  local list, pts = {}, {}
  for _, v in ipairs(s.variants) do
    local b, p = curve_block(s, v, column)
    if not b then return nil end
    list[#list + 1] = b
    for _, x in ipairs(p) do pts[#pts + 1] = x end
  end
  return blocks(list), pts
end

-- End-of-training validation loss per seed, and per variant its mean and sd.
local function valend(s)
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

local ci_of = data.interval

-- A setting's overrides as plain text, the factor's key and the final learning rate
-- (which follows the peak) left out: "lr 0.003"; nil when nothing is left.
local function overrides_text(ov, factor_key)
  local keys = {}
  for k in pairs(ov) do
    if k ~= factor_key and k ~= "min_lr" then keys[#keys + 1] = k end
  end
  if #keys == 0 then return nil end
  return settings_text({}, keys, function(k) return ov[k] end)
end

-- What tells a study's settings apart in a label: the parts of its variants' names
-- (split at a "-" before a letter, the factor's level left out) that not every setting shares:
-- "untied" for t0.02-p1-untied-w30cos-layernorm beside t0.02-p1-tied-w30cos-layernorm,
-- "L2d64" for layernorm-L2d64.  Returns {variant name -> head}; empty with one setting.
local function setting_heads(s)
  local settings = s:settings()
  local heads = {}
  if #settings <= 1 then return heads end
  local parts, count = {}, {}
  for i, st in ipairs(settings) do
    local v = st.variants[1]
    local list, seen = {}, {}
    for part in (v.name:gsub("%-(%a)", "\0%1") .. "\0"):gmatch("([^%z]+)%z") do
      if part ~= v.level and not seen[part] then
        seen[part] = true
        list[#list + 1] = part
        count[part] = (count[part] or 0) + 1
      end
    end
    parts[i] = list
  end
  for i, st in ipairs(settings) do
    local keep = {}
    for _, part in ipairs(parts[i]) do
      if count[part] < #settings then keep[#keep + 1] = part end
    end
    local head = #keep > 0 and table.concat(keep, "-") or
      (st.label ~= "" and (overrides_text(st.variants[1].overrides, s.factor.key) or st.label) or nil)
    for _, v in ipairs(st.variants) do heads[v.name] = head end
  end
  return heads
end

local function plain_label(s, c, heads)
  local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
  if t and b and t.setting == b.setting then
    local head = heads[t.name] and (heads[t.name] .. ": ") or ""
    return head .. level_name(t) .. " - " .. level_name(b)
  end
  if t and b then
    -- each side with the settings in which the two differ: "matched LayerNorm, lr 0.01"
    return plot_label(s, t, { b }) .. " - " .. plot_label(s, b, { t })
  end
  return c.treatment .. " - " .. c.baseline
end

-- The runs a comparison c of study s rests on, by origin (Study:origin: a run copied
-- from another study is that study's run): {"t:<origin>" | "b:<origin>" -> true} over
-- its seeds, the treatment's and the baseline's apart, and their number.
local function run_set(s, c)
  local set, n = {}, 0
  for _, seed in ipairs(type(c.seeds) == "table" and c.seeds or s.seeds) do
    for _, k in ipairs({ "t:" .. s:origin(c.treatment, seed), "b:" .. s:origin(c.baseline, seed) }) do
      if not set[k] then
        set[k] = true
        n = n + 1
      end
    end
  end
  return set, n
end

-- Seeds as plain text: "1-3" when consecutive, else "1, 3, 4".
local function seed_text(seeds)
  local run = #seeds > 1
  for i = 2, #seeds do
    if seeds[i] ~= seeds[i - 1] + 1 then run = false end
  end
  if run then return string.format("%d-%d", seeds[1], seeds[#seeds]) end
  local t = {}
  for i, x in ipairs(seeds) do t[i] = string.format("%d", x) end
  return table.concat(t, ", ")
end

local function subset(a, b)
  for k in pairs(a) do
    if not b[k] then return false end
  end
  return true
end

-- Which rows repeat another's runs: row i is shown through row j when i's run set is
-- part of j's and j's is larger, or the same and j comes first.  Returns {i -> j} with
-- every j a row that is shown (the first such one); rows are {set =, n =}.
function M.duplicates(rows)
  local function shows(j, i)
    local a, b = rows[i], rows[j]
    return j ~= i and subset(a.set, b.set) and (b.n > a.n or j < i)
  end
  local kept = {}
  for i = 1, #rows do
    kept[i] = true
    for j = 1, #rows do
      if shows(j, i) then
        kept[i] = false
        break
      end
    end
  end
  local dup = {}
  for i = 1, #rows do
    if not kept[i] then
      for j = 1, #rows do
        if kept[j] and shows(j, i) then
          dup[i] = j
          break
        end
      end
    end
  end
  return dup
end

-- Forest rows of every study of `studies` whose primary metric is `metric`, grouped by
-- study (a header row each, `labels[study]` or the study's name), each set of runs
-- once: a comparison whose runs another row already shows (a study that copied them) is
-- left out and named in its group's header.  Returns the data (y mean lo hi mde
-- min_effect label), the number of rows with headers, the longest row label's length,
-- the values drawn, the x range and the headers ({text, y, kind}).
local function forest(studies, metric, labels)
  local rows = {}
  for _, s in ipairs(studies) do
    if s.primary == metric then
      local heads = setting_heads(s)
      for _, c in ipairs(s:comparisons()) do
        if finite(c.mean) then
          local ci = ci_of(c)
          local set, n = run_set(s, c)
          rows[#rows + 1] = { study = s, mean = c.mean, lo = ci and ci[1] or c.mean,
            hi = ci and ci[2] or c.mean, mde = data.mde(c), min_effect = s.analysis.min_effect,
            label = plain_label(s, c, heads) .. (ci and "" or " (no CI)"), set = set, n = n,
            head = heads[c.treatment], seeds = type(c.seeds) == "table" and seed_text(c.seeds)
              or nil }
        end
      end
    end
  end
  if #rows == 0 then return nil end
  local dup = M.duplicates(rows)
  -- Groups in order of first appearance; each header notes the rows it left out.
  local groups, by_study = {}, {}
  for i, r in ipairs(rows) do
    local grp = by_study[r.study]
    if not grp then
      grp = { study = r.study, rows = {}, notes = {}, noted = {} }
      by_study[r.study] = grp
      groups[#groups + 1] = grp
    end
    local j = dup[i]
    if j then
      local src = rows[j]
      local note = (r.head and (r.head .. ": ") or "") .. "the runs of " ..
        src.study.name .. (r.n < src.n and r.seeds and (" (seeds " .. r.seeds .. ")") or "") ..
        (j < i and ", shown above" or ", shown below")
      if not grp.noted[note] then
        grp.noted[note] = true
        grp.notes[#grp.notes + 1] = note
      end
    else
      grp.rows[#grp.rows + 1] = r
    end
  end
  local total = #groups
  for _, grp in ipairs(groups) do total = total + #grp.rows + #grp.notes end
  local body, heads = { "# y mean lo hi mde min_effect label" }, {}
  local y, width, values, xs = total, 0, {}, { 0 }
  -- a header is data: its text, row and kind (1 a study, 2 a note) as gnuplot variables
  local function label_at(text, kind)
    heads[#heads + 1] = { text = one_line(text):gsub('"', "'"), y = y, kind = kind }
    y = y - 1
  end
  for _, grp in ipairs(groups) do
    label_at(labels and labels[grp.study.name] or grp.study.name, 1)
    for _, note in ipairs(grp.notes) do label_at("    " .. note, 2) end
    for _, r in ipairs(grp.rows) do
      local mde, me = r.mde or 0, r.min_effect or 0
      body[#body + 1] = string.format("%d %s %s %s %s %s %s", y, g(r.mean), g(r.lo), g(r.hi),
        g(mde) or "0", g(me) or "0", title(r.label))
      width = math.max(width, #r.label)
      values[#values + 1], values[#values + 2], values[#values + 3] = r.mean, r.lo, r.hi
      for _, x in ipairs({ r.lo, r.hi, mde, -mde, me, -me }) do xs[#xs + 1] = x end
      y = y - 1
    end
  end
  local lo, hi = extent(xs)
  lo, hi = padded(lo, hi, 0.04)
  return table.concat(body, "\n") .. "\n", total, width, values, lo, hi, heads
end

-- Norms in order of first appearance, each with its variants.
local function by_level(s)
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

local function divergence(s)
  local out, cols, values, lrs = {}, {}, {}, {}
  for _, n in ipairs(by_level(s)) do
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
  return blocks(out), colors_of(cols), #out, values, lrs
end

-- The effect of each norm against `none` within each setting, by parameter count.
local function effect_by_size(s)
  local params = {}
  for _, st in ipairs(s:settings()) do params[st.key] = s:setting_params(st) end
  local out, cols, all = {}, {}, {}
  for _, n in ipairs(by_level(s)) do
    if n.level ~= s.factor.baseline then
      local rows = { title(n.label .. " - " .. baseline_label(s)), "# params mean lo hi" }
      local pts = {}
      for _, c in ipairs(s:comparisons()) do
        local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
        if t and b and t.level == n.level and b.level == s.factor.baseline and
            t.setting == b.setting
            and finite(params[t.setting]) and finite(c.mean) then
          local ci = ci_of(c) or { c.mean, c.mean }
          pts[#pts + 1] = { p = params[t.setting], mean = c.mean, lo = ci[1], hi = ci[2] }
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
  return blocks(out), colors_of(cols), #out, all
end

-- Reliability: per variant, the bins pooled over seeds (confidence and accuracy weighted
-- by count).
local function reliability(s)
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
local function array_metric(s, key)
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


-- Builders: (study or studies, data file writer, figure entry, size) -> spec fields
-- {script, data, vars, height, values, zero}, or nil and the reason the figure cannot be
-- drawn.  size.width is the printed width in inches.  `values` are the numbers the
-- figure draws on its value axis: when every one is zero (no run diverged, say) the
-- figure is not drawn and `zero` (or a generic sentence) says so in its place.
local function curves_figure(s, file, f, size)
  local text, pts = curves(s, f.column)
  if not text then return nil, "the run records have no " .. f.column .. " column" end
  local values, ys, last = {}, {}, 0
  for _, p in ipairs(pts) do
    values[#values + 1] = p.mean
    ys[#ys + 1], ys[#ys + 2] = p.min, p.max
    last = math.max(last, p.step)
  end
  local vars = { n = #s.variants, colors = colors_of(s.variants), dashes = dashes_of(s.variants),
    pts = points_of(s.variants), ylabel = f.ylabel, logy = 0,
    points = f.column:match("^d_") and 1 or 0, zoom = 0 }
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
  local points, means, values = valend(s)
  return { script = "valend", data = file(f.name, points), vars = {
    means = file(f.name .. "_mean", means), n = #s.variants, colors = colors_of(s.variants) },
    height = size.width * 0.7, values = values }
end

local function forest_figure(studies, file, f, size)
  local text, rows, width, values, xmin, xmax, heads = forest(studies, f.metric, f.labels)
  if not text then
    if #studies == 1 then
      return nil, "the " .. studies[1].name .. " study has no comparison on " .. f.metric
    end
    return nil, "no study with primary metric " .. f.metric .. " has a comparison yet"
  end
  local spec = F.METRIC[f.metric]
  local label = spec and spec.label:gsub("\\ ", " "):gsub("%$", "") or f.metric
  -- The left margin (in characters) fits the longest label; a row is 0.2 in high.
  local vars = { rows = rows, lmargin = math.floor(width * 1.15) + 2, nheads = #heads,
    xlabel = "difference in " .. label,
    xmin = xmin, xmax = xmax, xstep = nice_step(xmin, xmax, 5) }
  for i, h in ipairs(heads) do
    vars["head" .. i], vars["head_y" .. i], vars["head_kind" .. i] = h.text, h.y, h.kind
  end
  return { script = "forest", data = file(f.name, text), vars = vars,
    height = 0.75 + 0.2 * rows, values = values }
end

local function divergence_figure(s, file, f, size)
  local text, colors, n, values, lrs = divergence(s)
  if #lrs == 0 then return nil, "the " .. s.name .. " study's variants name no learning rate" end
  local lo, hi = extent(lrs)
  local xmin, xmax, xtics = log_axis(lo, hi, 0.1)
  return { script = "divergence", data = file(f.name, text), vars = { n = n, colors = colors,
    xmin = xmin, xmax = xmax, xtics = xtics }, height = size.width * 0.6, values = values,
    zero = "no run of the " .. s.name .. " study diverged, at any learning rate" }
end

-- A parameter count as a tick label: "104k", "1.6M".
local function count_label(p)
  if p >= 1e6 then return (string.format("%.2g", p / 1e6)) .. "M" end
  return string.format("%dk", math.floor(p / 1000 + 0.5))
end

local function effect_figure(s, file, f, size)
  local text, colors, n, pts = effect_by_size(s)
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
    min_effect = me, xmin = xmin, xmax = xmax, xtics = table.concat(tics, " "),
    xtic_labels = table.concat(tic_labels, " "),
    ymin = ymin, ymax = ymax,
    ylabel = "difference in " .. (s.primary or "?"):gsub("_", " ") .. " vs " ..
      baseline_label(s) },
    height = size.width * 0.62, values = values }
end

local function reliability_figure(s, file, f, size)
  local text, values = reliability(s)
  if not text then return nil, "the run records have no reliability bins" end
  return { script = "reliability", data = file(f.name, text), vars = { n = #s.variants,
    colors = colors_of(s.variants), pts = points_of(s.variants) }, height = size.width * 0.9,
    values = values }
end

local CLASSES = { "letter", "digit", "punct", "space" }

-- One panel per character class that has values; the script reads <data>_<class>.dat.
local function classnorm_figure(s, file, f, size)
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
  local lo, hi = extent(ys)
  if not (lo and lo > 0) then lo, hi = 1e-3, 1 end
  local ymin, ymax, ytics = log_axis(lo, hi, 0.05)
  return { script = "classnorm", data = file(f.name):sub(1, -5),
    vars = { classes = table.concat(present, " "), n = #s.variants,
      colors = colors_of(s.variants), ymin = ymin, ymax = ymax, ytics = ytics,
      xstep = nice_step(0, last, 2), xmax = last },
    height = size.width * 0.42, values = values }
end

local function array_figure(s, file, f, size)
  local text, values = array_metric(s, f.key)
  if not text then return nil, "the run records have no " .. f.key end
  return { script = f.script, data = file(f.name, text), vars = { n = #s.variants,
    colors = colors_of(s.variants), pts = points_of(s.variants) }, height = size.width * 0.6,
    values = values }
end

-- An "#rrggbb" colour as gnuplot's `lc rgb variable` integer.
local function rgb_int(hex)
  return tonumber(hex:sub(2), 16)
end

-- The loss against the swept value (a learning rate) per group of a study's `lr_sweep`
-- summary (lua/repro/analysis/lrsens.lua): the mean over seeds with the range from the lowest to
-- the highest seed, of the runs that did not diverge, and a cross above the curves at
-- each value where some seed diverged (the groups a little apart along the axis, so
-- that ranges at one value do not hide each other).  A group is labelled by its norm and
-- the settings in which the groups differ (plot_label: "no norm, warmup 0"), or by
-- `labels[group]`.
local function lrsweep_figure(s, file, f, size)
  local sw = s.summary.lr_sweep
  if type(sw) ~= "table" or type(sw.groups) ~= "table" or type(sw.order) ~= "table" then
    return nil, "the " .. s.name .. " study's summary has no lr_sweep section (it sweeps no " ..
      "learning rate)"
  end
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
  if #out == 0 then return nil, "every run of the " .. s.name .. " study diverged" end
  local xlo, xhi = extent(xs)
  local xmin, xmax, xtics = log_axis(xlo, xhi, 0.06)
  local ylo, yhi = extent(ys)
  local span = (yhi - ylo) > 0 and (yhi - ylo) or 1
  local ymin, ymax = ylo - 0.05 * span, yhi + (#div > 0 and 0.16 or 0.05) * span
  local colors = colors_of(cols)
  local group_colors = {}
  for c in colors_of(groups):gmatch("%S+") do group_colors[#group_colors + 1] = c end
  local rows = { "# " .. (sw.over or "lr") .. " y rgb group" }
  for _, d in ipairs(div) do
    rows[#rows + 1] = string.format("%s %s %d %d", g(d.x), g(yhi + 0.09 * span),
      rgb_int(group_colors[d.color]), d.color - 1)
  end
  local by_tag = {}
  for i, gr in ipairs(cols) do by_tag[i] = { tag = gr.tag } end
  return { script = "lrsweep", data = file(f.name, blocks(out)), vars = { n = #out,
    colors = colors, dashes = dashes_of(by_tag), pts = points_of(cols),
    diverged = #div > 0 and file(f.name .. "_diverged", table.concat(rows, "\n") .. "\n") or "",
    xmin = xmin, xmax = xmax, xtics = xtics, ymin = ymin, ymax = ymax,
    xlabel = "peak " .. (sw.over == "lr" and "learning rate" or tostring(sw.over)),
    ylabel = "final " .. tostring(sw.loss or "val_loss"):gsub("_", " ") .. " (nats)" },
    height = size.width * 0.6, values = values }
end

-- The kinds of figure a manifest entry names: its builder, the entry's fields it reads
-- (besides name, study, caption and width) and what it draws from: one study's run
-- records (the default), one study's summary (`summary`), or every study's summary
-- (`summaries`: the forest plot, whose entry names the primary `metric` whose
-- comparisons it gathers, or a `study` to draw that study's alone).
--   curves       column, ylabel, logy, zoom (a fraction: a second panel with the last
--                part of training on a fitted linear axis)
--   forest       metric, labels ({study = group label})
--   lrsweep      labels ({group = label}): the study's lr_sweep summary
M.KINDS = {
  curves = { build = curves_figure, fields = { column = "string", ylabel = "string",
    logy = "boolean?", zoom = "number?" } },
  valend = { build = valend_figure, fields = {} },
  forest = { build = forest_figure, fields = { metric = "string?", labels = "table?" },
    summaries = true },
  divergence = { build = divergence_figure, fields = {} },
  effect = { build = effect_figure, fields = {} },
  reliability = { build = reliability_figure, fields = {} },
  classnorm = { build = classnorm_figure, fields = { column = "string" } },
  array = { build = array_figure, fields = { key = "string", script = "string" } },
  lrsweep = { build = lrsweep_figure, fields = { labels = "table?" }, summary = true },
}

-- The width the appendix's figures are printed at (lua/repro/report/tex_tables.lua, appendix).
M.APPENDIX_WIDTH = "0.9\\linewidth"

-- The forest plot of each study the manifest does not list (the paper's appendix).
function M.appendix_figures(ctx, forest_name)
  local list = {}
  for _, s in ipairs(ctx.appendix) do
    list[#list + 1] = { name = forest_name(s), kind = "forest", study = s.name,
      metric = s.primary, width = M.APPENDIX_WIDTH }
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
    local listed = {}
    for _, x in ipairs(ctx.studies) do
      if not ctx.manifest or not ctx.manifest.listed or ctx.manifest.listed[x.name] then
        listed[#listed + 1] = x
      end
    end
    spec, skip = kind.build(s and { s } or listed, later, f, size)
  elseif not kind.summary and not s:has_records() then
    return { skip = "the run records of the " .. f.study .. " study are missing" }
  else
    spec, skip = kind.build(s, later, f, size)
  end
  if not spec then return { skip = skip } end
  if M.all_zero(spec.values) then
    return { skip = spec.zero or "every value it would draw is zero" }
  end
  for _, p in ipairs(pending) do file(p.name, p.text) end
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

-- Gnuplot's -e text for a spec: every variable assigned.
local function assignments(spec, fmt, out_path, gp_dir)
  local vars = { data = spec.data, fmt = fmt, out = out_path, gpdir = gp_dir,
    width = spec.width, height = spec.height }
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
