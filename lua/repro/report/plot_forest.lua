-- The forest plot's rows (lua/repro/report/plot.lua): each primary comparison of the
-- studies drawn, labelled by its study, setting and levels, each set of runs shown once
-- (a run copied from another study is that study's run).
local base = require "repro.core.base"
local data = require "repro.report.data"
local gnuplot = require "repro.report.gnuplot"
local style = require "repro.report.plot_style"
local words = require "repro.analysis.words"

local M = {}
local g, title = gnuplot.g, gnuplot.title

-- Keys in the order a head names them (model, then data, init and training); others after,
-- by name.
local HEAD_ORDER = {}
for i, k in ipairs({ "n_layer", "d_model", "data", "init", "linear_init", "embed_init_std",
  "tok_init_std", "pos_init_std", "resid_rescale", "tie_embeddings", "dropout", "warmup",
  "lr_schedule", "iters", "lr" }) do HEAD_ORDER[k] = i end

-- What tells comparison t - b's setting apart from the study's others, in words from the
-- config (never from variant names): the keys in which the study's variants differ (the
-- factor's key, min_lr and n_head, which follow lr and width, left out) and t and b
-- agree, "blocks 2, width 64"; nil when none.  A named setting (plot_style.named: the
-- figure spec's `settings`) whose config both t and b have, and which names one of those
-- keys at least, stands first by its label, in place of the keys it names.
function M.setting_head(s, t, b)
  local function value(v) return function(k) return s:effective(v, k) end end
  local seen, differ, keys = {}, {}, {}
  for _, v in ipairs(s.variants) do
    for k in pairs(v.overrides) do
      if not seen[k] and k ~= s.factor.key and k ~= "min_lr" and k ~= "n_head" then
        seen[k] = true
        for _, w in ipairs(s.variants) do
          if s:effective(w, k) ~= s:effective(s.variants[1], k) then differ[k] = true end
        end
        if differ[k] then keys[#keys + 1] = k end
      end
    end
  end
  table.sort(keys, function(x, y)
    local rx, ry = HEAD_ORDER[x] or math.huge, HEAD_ORDER[y] or math.huge
    if rx ~= ry then return rx < ry end
    return x < y
  end)
  local parts = {}
  local n = style.named_setting({ value(t), value(b) }, differ)
  if n then parts[1] = n.label end
  for _, k in ipairs(keys) do
    local x = s:effective(t, k)
    if not (n and n.config[k] ~= nil) and x ~= nil and x == s:effective(b, k) then
      parts[#parts + 1] = style.setting_words(k, x)
    end
  end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

function M.plain_label(s, c)
  local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
  if not (t and b) then return c.treatment .. " - " .. c.baseline end
  local head = M.setting_head(s, t, b)
  head = head and (head .. ": ") or ""
  if t.setting == b.setting then
    return head .. style.level_name(t) .. " - " .. style.level_name(b)
  end
  -- each side with the settings in which the two differ: "label, lr 0.01"
  return head .. style.plot_label(s, t, { b }) .. " - " .. style.plot_label(s, b, { t })
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
  return words.int_list(seeds)
end

-- Which rows repeat another's runs: row i is shown through row j when i's run set is
-- part of j's and j's is larger, or the same and j comes first.  Returns {i -> j} with
-- j the first row that shows i and is itself shown; rows are {set =, n =}.
function M.duplicates(rows)
  local function shows(j, i)
    if j == i or not (rows[j].n > rows[i].n or j < i) then return false end
    for k in pairs(rows[i].set) do
      if not rows[j].set[k] then return false end
    end
    return true
  end
  local function shown_through(i, kept)
    for j = 1, #rows do
      if (not kept or kept[j]) and shows(j, i) then return j end
    end
  end
  local kept = {}
  for i = 1, #rows do kept[i] = not shown_through(i) end
  local dup = {}
  for i = 1, #rows do
    if not kept[i] then dup[i] = shown_through(i, kept) end
  end
  return dup
end

-- A row per primary comparison with a mean of the studies whose primary metric is `metric`.
local function forest_rows(studies, metric)
  local rows = {}
  for _, s in ipairs(studies) do
    if s.primary == metric then
      for _, c in ipairs(s:comparisons()) do
        if base.finite(c.mean) then
          local ci = data.interval(c)
          local set, n = run_set(s, c)
          rows[#rows + 1] = { study = s, mean = c.mean, lo = ci and ci[1] or c.mean,
            hi = ci and ci[2] or c.mean, mde = data.mde(c), min_effect = s.analysis.min_effect,
            label = M.plain_label(s, c) .. (ci and "" or " (no CI)"), set = set, n = n,
            head = M.setting_head(s, s.variant_by_name[c.treatment] or {},
              s.variant_by_name[c.baseline] or {}),
            seeds = type(c.seeds) == "table" and seed_text(c.seeds) or nil }
        end
      end
    end
  end
  return rows
end

-- The rows in groups by study, in order of first appearance, a row whose runs another
-- row shows (M.duplicates) left out and noted once in its group's header.
local function forest_groups(rows)
  local dup, groups, by_study = M.duplicates(rows), {}, {}
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
  return groups
end

-- Forest rows of every study of `studies` whose primary metric is `metric`, grouped by
-- study (a header row each, `labels[study]` or the study's name), each set of runs
-- once: a comparison whose runs another row already shows (a study that copied them) is
-- left out and named in its group's header.  Returns the data (y mean lo hi mde
-- min_effect label), the number of rows with headers, the longest row label's length,
-- the values drawn, the x range and the headers ({text, y, kind}).
function M.forest(studies, metric, labels, settings)
  local before = style.named
  style.named = settings or {}
  local rows = forest_rows(studies, metric)
  style.named = before
  if #rows == 0 then return nil end
  local groups = forest_groups(rows)
  local total = #groups
  for _, grp in ipairs(groups) do total = total + #grp.rows + #grp.notes end
  local body, heads = { "# y mean lo hi mde min_effect label" }, {}
  local y, width, values, xs = total, 0, {}, { 0 }
  -- a header is data: its text, row and kind (1 a study, 2 a note) as gnuplot variables
  local function label_at(text, kind)
    heads[#heads + 1] = { text = gnuplot.one_line(text):gsub('"', "'"), y = y, kind = kind }
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
  local lo, hi = gnuplot.extent(xs)
  lo, hi = gnuplot.padded(lo, hi, 0.04)
  return table.concat(body, "\n") .. "\n", total, width, values, lo, hi, heads
end

return M
