-- How a figure tells a study's variants apart (lua/repro/report/plot.lua): a colour,
-- point type and dash type per level of the study's factor (lua/repro/report/data.lua,
-- factor_of), and a label in its key from the level's name and the settings in which
-- the variant differs.

local M = {}

-- Colour-blind-safe colours (Okabe-Ito) for the levels of a study's factor that it
-- gives none (lua/repro/report/data.lua: M.factor_of).
local SPARE_COLORS = { "#009E73", "#CC79A7", "#E69F00", "#56B4E9" }

-- Point types (filled circle, triangle, square, ...) for the levels the factor's `points`
-- leaves out, so that curves that lie on each other stay distinguishable where their
-- points are drawn.
local SPARE_POINTS = { 11, 13, 15 }

-- Per variant (or group), the style its level has (its field `field`, from the factor),
-- else the next of spare (cycling): the list joined by spaces, for a gnuplot word list.
function M.styles_of(variants, field, spare_list)
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

function M.points_of(variants)
  return M.styles_of(variants, "point", SPARE_POINTS)
end

function M.colors_of(variants)
  return M.styles_of(variants, "color", SPARE_COLORS)
end

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

-- A variant's name in a figure's key: its norm as the prose names it (the manifest's names,
-- when plain text: "no norm") and the settings in which it differs from the other
-- variants of `among` (default: the study's), from their configs ("label, lr 0.003",
-- "no norm, embed init std 1"); min_lr, which follows lr, and the keys in `skip` (a
-- sweep's swept key) are left out.
local KEY_NAMES = { embed_init_std = "embed init std", tok_init_std = "token init std",
  pos_init_std = "position init std", n_layer = "blocks", d_model = "width", n_head = "heads",
  iters = "steps", lr_schedule = "schedule" }

-- A variant's level of the factor as the prose names it (the factor's names), when that
-- is plain text.
function M.level_name(v)
  local p = v.prose_level
  return (p and not p:find("[\\$]")) and p or v.level_label
end

-- The label of the study's baseline level: what differences are drawn against.
function M.baseline_label(s)
  local b = s.factor.baseline
  return s.factor.labels[b] or tostring(b)
end

-- Keys whose values read as words in a key ("PyTorch Linear init", not "linear init torch").
local VALUE_NAMES = {
  linear_init = { torch = "PyTorch Linear init", gpt2 = "GPT-2 Linear init" },
  init = { torch = "PyTorch init", gpt2 = "GPT-2 init" },
  resid_rescale = { [true] = "residual rescaling", [false] = "no residual rescaling" },
  tie_embeddings = { [true] = "tied", [false] = "untied" },
  data = { ["data/devil.txt"] = "Devil's Dictionary", ["data/kjv.txt"] = "King James Bible",
    ["data/tinyshakespeare.txt"] = "Tiny Shakespeare" },
}

-- "key value" for each of the sorted keys, value(k) giving its value (nil: left out),
-- appended to parts and joined with ", ".
function M.settings_text(parts, keys, value)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local x = value(k)
    if x ~= nil then
      local named = VALUE_NAMES[k] and VALUE_NAMES[k][x]
      parts[#parts + 1] = named or ((KEY_NAMES[k] or k:gsub("_", " ")) .. " " ..
        (type(x) == "number" and string.format("%g", x) or tostring(x)))
    end
  end
  return table.concat(parts, ", ")
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

function M.plot_label(s, v, among, skip)
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
  -- a key the variant leaves unset by the value the engine trains with (Study:effective)
  local function value(k) return s:effective(v, k) end
  local head = { M.level_name(v) }
  local n = M.named_setting({ value }, differ)
  if n then
    head[2] = n.label
    for k in pairs(n.config) do differ[k] = nil end
  end
  local keys = {}
  for k in pairs(differ) do keys[#keys + 1] = k end
  return M.settings_text(head, keys, value)
end

return M
