-- How a figure tells a study's variants apart (lua/repro/report/plot.lua): a colour,
-- point type and dash type per level of the study's factor (lua/repro/report/data.lua,
-- factor_of), and a label in its key from the level's name and the settings in which
-- the variant differs; and a metric's words on an axis.
local F = require "repro.report.texfmt"

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

-- Colour-blind-safe colours (Okabe-Ito) for the levels of a study's factor that it
-- gives none (lua/repro/report/data.lua: M.factor_of).
local SPARE_COLORS = { "#009E73", "#CC79A7", "#E69F00", "#56B4E9" }

-- Point types (filled circle, triangle, square, ...) for the levels the factor's `points`
-- leaves out, so that curves that lie on each other stay distinguishable where their
-- points are drawn.
local SPARE_POINTS = { 11, 13, 15 }

-- Per variant (or group), the style its level has (its field "color" or "point", from the
-- factor), else the next spare one (cycling).
function M.style_list(variants, field)
  local spare_list = field == "color" and SPARE_COLORS or SPARE_POINTS
  local out, spare = {}, 0
  for i, v in ipairs(variants) do
    local x = v[field]
    if not x then
      spare = spare % #spare_list + 1
      x = spare_list[spare]
    end
    out[i] = tostring(x)
  end
  return out
end

-- The same as a gnuplot word list.
function M.points_of(variants) return table.concat(M.style_list(variants, "point"), " ") end
function M.colors_of(variants) return table.concat(M.style_list(variants, "color"), " ") end

-- Dash type per variant: 1 for the first tag (the name's part after the norm, the
-- setting: "std0.02", "tuned"), 2 for the second, ...
function M.dashes_of(variants)
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

-- A variant's level of the factor as the prose names it (the factor's names), when that
-- is plain text.
function M.level_name(v)
  local p = v.prose_level
  return (p and not p:find("[\\$]")) and p or v.level_label
end

-- Keys and values in words in a figure's key ("embed init std 1", "PyTorch Linear init").
local KEY_NAMES = { embed_init_std = "embed init std", tok_init_std = "token init std",
  pos_init_std = "position init std", n_layer = "blocks", d_model = "width", n_head = "heads",
  iters = "steps", lr_schedule = "schedule" }
local VALUE_NAMES = {
  linear_init = { torch = "PyTorch Linear init", gpt2 = "GPT-2 Linear init" },
  init = { torch = "PyTorch init", gpt2 = "GPT-2 init" },
  resid_rescale = { [true] = "residual rescaling", [false] = "no residual rescaling" },
  tie_embeddings = { [true] = "tied", [false] = "untied" },
  data = { ["data/devil.txt"] = "Devil's Dictionary", ["data/kjv.txt"] = "King James Bible",
    ["data/tinyshakespeare.txt"] = "Tiny Shakespeare" },
}

-- One setting in words: "lr 0.003", "blocks 2", "tied".
function M.setting_words(k, x)
  return VALUE_NAMES[k] and VALUE_NAMES[k][x] or ((KEY_NAMES[k] or k:gsub("_", " ")) .. " " ..
    (type(x) == "number" and string.format("%g", x) or tostring(x)))
end

-- Settings a figure names by what they are (its spec's `settings`, which the report sets
-- here while it builds that figure): { {config = {key = value, ...}, label = "..."}, ...}.
M.named = {}

-- The first named setting whose config every function of `values` (key -> the value a
-- variant trains with) has, and which names one key of the set `keys` at least; nil if none.
function M.named_setting(values, keys)
  for _, n in ipairs(M.named) do
    local all, names_one = true, false
    for k, x in pairs(n.config) do
      for _, value in ipairs(values) do
        if value(k) ~= x then all = false end
      end
      names_one = names_one or keys[k] == true
    end
    if all and names_one then return n end
  end
  return nil
end

-- A variant's name in a figure's key: its norm as the prose names it and the settings in
-- which it differs from the other variants of `among` (default: the study's), from their
-- configs ("label, lr 0.003", "no norm, embed init std 1"), a named setting by its label;
-- the factor's key, min_lr (which follows lr) and `skip` (a sweep's swept key) left out.
function M.plot_label(s, v, among, skip)
  local differ = {}
  local function compare(k, w)
    if k ~= s.factor.key and k ~= "min_lr" and k ~= skip and v.overrides[k] ~= w.overrides[k] then
      differ[k] = true
    end
  end
  for _, w in ipairs(among or s.variants) do
    for k in pairs(w.overrides) do compare(k, w) end
    for k in pairs(v.overrides) do compare(k, w) end
  end
  -- a key the variant leaves unset by the value the engine trains with (Study:effective)
  local function value(k) return s:effective(v, k) end
  local parts = { M.level_name(v) }
  local n = M.named_setting({ value }, differ)
  if n then
    parts[2] = n.label
    for k in pairs(n.config) do differ[k] = nil end
  end
  local keys = {}
  for k in pairs(differ) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local x = value(k)
    if x ~= nil then parts[#parts + 1] = M.setting_words(k, x) end
  end
  return table.concat(parts, ", ")
end

return M
