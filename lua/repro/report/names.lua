-- How the report names a study's levels and settings: its treatment factor (what its
-- variants compare, with their labels, prose names, colours and points) and the phrases
-- the prose gives its variants (lua/repro/report/data.lua builds a Study with them).
local texfmt = require "repro.report.texfmt"
local engine = require "engine"
local base = require "repro.core.base"

local M = {}

-- A study's treatment factor: what its variants compare, and how the report shows it.
--   key       the config key whose values are the factor's levels (the other keys in
--             which variants differ are their setting); nil: each variant is a level of
--             its own, named by its name, and the variants share one setting
--   baseline  the level the others are drawn against (default: the level of the
--             analysis's baseline variant, else of the first variant)
--   labels    level -> its label in tables and figures (default the level itself)
--   names     level -> its name in the prose (default its label)
--   colors    level -> a gnuplot colour "#rrggbb"; points: level -> a point type (a
--             factor that gives none: its first levels, in order, get M.DEFAULT_COLORS
--             and M.DEFAULT_POINTS; any other level the next spare one of the figure)
-- The paper's manifest gives one for every study of the paper (its `factor`); a study
-- alone reads its summary's `factor` (the study file's, when it declares one: a config
-- key), else each variant is its own level.
M.DEFAULT_COLORS = { "#000000", "#0072B2", "#D55E00" } -- Okabe-Ito black, blue, vermilion
M.DEFAULT_POINTS = { 7, 9, 5 } -- filled circle, triangle, square

function M.factor_of(sum, given)
  local f = {}
  for k, v in pairs(given or {}) do f[k] = v end
  if not given and type(sum.factor) == "string" then f.key = sum.factor end
  f.labels, f.names = f.labels or {}, f.names or {}
  f.colors, f.points = f.colors or {}, f.points or {}
  return f
end

-- A config value as the prose writes it (LaTeX): integers as they are, other numbers
-- through siunitx, strings escaped, booleans as true/false.
local function value_text(v)
  if math.type(v) == "integer" or base.whole(v) then
    return string.format("%d", v)
  end
  if type(v) == "number" then return "\\num{" .. string.format("%g", v) .. "}" end
  return texfmt.escape(tostring(v))
end

-- The phrase of one config key's value: the manifest's format (a string with %s for the
-- value, or a table from value to phrase), else "with <key> = <value>".
local function key_phrase(format, key, v)
  if type(format) == "table" then
    local p = format[v]
    if p == nil then p = format[tostring(v)] end
    if type(p) == "string" then return p end
  elseif type(format) == "string" then
    return (format:gsub("%%s", function() return value_text(v) end))
  end
  return "with " .. texfmt.escape(key) .. " = " .. value_text(v)
end

-- The config keys other than the factor's in which the variants of s differ (value_of:
-- a variant's value of a key), in the manifest's order (names.keys), then by name; with
-- each key's manifest format and label.
local function differing_keys(s, names, value_of)
  local f = s.factor
  local seen, keys = {}, {}
  for _, v in ipairs(s.variants) do
    for k in pairs(v.overrides) do
      if f.key and k ~= f.key and not seen[k] then
        seen[k] = true
        keys[#keys + 1] = k
      end
    end
  end
  local differ = {}
  for _, k in ipairs(keys) do
    for _, v in ipairs(s.variants) do
      if value_of(v, k) ~= value_of(s.variants[1], k) then differ[k] = true end
    end
  end
  local format, label, order = {}, {}, {}
  for _, e in ipairs(names.keys or {}) do
    format[e.key] = e.format
    label[e.key] = e.label
    if differ[e.key] then order[#order + 1] = e.key end
  end
  local rest = {}
  for k in pairs(differ) do
    if format[k] == nil then rest[#rest + 1] = k end
  end
  table.sort(rest)
  for _, k in ipairs(rest) do order[#order + 1] = k end
  return order, format, label
end

-- The names the prose gives the variants of study s (LaTeX), from `names` (the paper's
-- manifest: names.keys = a list of {key =, format =, label =}, format a string with %s,
-- a table from value to phrase, or false to leave the key out where the other keys tell
-- the settings apart; the factor's own values are named by s.factor.names).  Each variant
-- gets
--   prose_level    the name of its factor value (s.factor.names, else its label)
--   prose_setting  a phrase for the config keys other than the factor's in which the
--                  study's variants differ ("at lr 0.003"), "" when they differ in none;
--                  keys in the manifest's order, then the others by name
--   prose          the two together ("its label at lr 0.003")
--   table_setting  the tables' phrase of the same keys, ", " between them: each key's
--                  names.keys label (as format; "warmup %s"), else its format, else
--                  "<key> = <value>"
--   key_order, key_values, key_phrases, key_prose  those keys in order, and each key's
--                  value, table phrase and prose phrase (none for a key whose format is
--                  false)
-- No paper is named here: without a manifest every key reads "with <key> = <value>".
function M.name_variants(s, names)
  names = names or {}
  local f = s.factor
  local base, defaults = s.base or s.summary.base or {}, engine.defaults()
  -- a key the variant leaves unset (one derived from another, as the embeddings' std from
  -- the init scheme) is named by the value the engine trains with (Study:effective)
  local function value_of(v, k)
    if v.overrides[k] == nil and base[k] == nil and defaults[k] ~= nil then return defaults[k] end
    return s:effective(v, k)
  end
  local order, format, label = differing_keys(s, names, value_of)
  -- `short`: the tables' phrase (the key's label, else its format, else "<key> = <value>").
  local function phrase(v, hide, short)
    local parts = {}
    for _, k in ipairs(order) do
      if not (hide and format[k] == false) then
        local f = format[k]
        if short then
          f = label[k] or (f ~= false and f) or (texfmt.escape(k) .. " = %s")
        end
        parts[#parts + 1] = key_phrase(f, k, value_of(v, k))
      end
    end
    return table.concat(parts, short and ", " or " ")
  end
  -- Leave out the keys the manifest hides only if the settings stay distinct.
  local hide, by_phrase = true, {}
  for _, v in ipairs(s.variants) do
    local p = phrase(v, true)
    if by_phrase[p] and by_phrase[p] ~= v.setting then hide = false end
    by_phrase[p] = v.setting
  end
  for _, v in ipairs(s.variants) do
    v.prose_level = f.names[v.level] or texfmt.escape(v.level_label)
    v.prose_setting = phrase(v, hide)
    v.prose = v.prose_setting ~= "" and (v.prose_level .. " " .. v.prose_setting) or
      v.prose_level
    v.table_setting = phrase(v, hide, true)
  end
  -- each differing key's value and table phrase, for a label that names only the keys in
  -- which two settings differ (Study:interaction_label)
  for _, v in ipairs(s.variants) do
    v.key_values, v.key_phrases, v.key_prose = {}, {}, {}
    for _, k in ipairs(order) do
      v.key_values[k] = value_of(v, k)
      if format[k] ~= false then
        v.key_phrases[k] = key_phrase(label[k] or format[k] or (texfmt.escape(k) .. " = %s"),
          k, value_of(v, k))
        v.key_prose[k] = key_phrase(format[k], k, value_of(v, k))
      end
    end
    v.key_order = order
  end
end

return M
