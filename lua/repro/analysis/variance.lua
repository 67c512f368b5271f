-- Sources of variance: the two-way random-effects ANOVA components of a study whose
-- runs cross init_seed and data_seed (lua/experiments/README.md).
local stats = require "stats"
local json = require "repro.core.json"

local M = {}

-- y[init][data] of a list of cells {init, data, value}, with the sorted init and data
-- seeds; or nil and why.
local function grid(cells)
  local inits, datas, seen_i, seen_d, at = {}, {}, {}, {}, {}
  for _, c in ipairs(cells) do
    if not seen_i[c[1]] then seen_i[c[1]] = true; inits[#inits + 1] = c[1] end
    if not seen_d[c[2]] then seen_d[c[2]] = true; datas[#datas + 1] = c[2] end
    local k = c[1] .. "/" .. c[2]
    if at[k] then return nil, "two runs share init_seed " .. c[1] .. " and data_seed " .. c[2] end
    at[k] = c[3]
  end
  table.sort(inits)
  table.sort(datas)
  if #inits < 2 or #datas < 2 then return nil, { reason = "too_few_seeds" } end
  local y = {}
  for i, a in ipairs(inits) do
    y[i] = {}
    for j, b in ipairs(datas) do
      local x = at[a .. "/" .. b]
      if x == nil then
        return nil, { reason = "missing_cell", init_seed = a, data_seed = b }
      end
      y[i][j] = x
    end
  end
  return y, inits, datas
end

-- The ANOVA components of a list of cells, as the summary keeps them; {reason = code}
-- when the cells make no complete grid (too_few_seeds, missing_cell).
local function components(cells)
  local y, inits, datas = grid(cells)
  if not y then return inits end
  local r = stats.anova2(y)
  local out = { init_seeds = json.array(inits), data_seeds = json.array(datas), mean = r.mean }
  -- the table's rows are the init seeds, its columns the data seeds
  for _, k in ipairs({ "var", "share", "negative", "ms", "df", "f", "p" }) do
    out[k .. "_init"], out[k .. "_data"] = r[k .. "_row"], r[k .. "_col"]
    out[k .. "_resid"] = r[k .. "_resid"]
  end
  return out
end

-- Whether some run of study s has init_seed ~= data_seed.
local function crossed(s, runs)
  for _, v in ipairs(s.variants) do
    for _, seed in ipairs(s.seeds) do
      local r = runs[v.name][seed]
      if (r.init_seed or seed) ~= (r.data_seed or seed) then return true end
    end
  end
  return false
end

-- Two-way random-effects ANOVA components when the runs cross init_seed and data_seed
-- (header): per variant and metric of an.metrics, and per primary comparison's
-- differences; nil otherwise.
function M.variance_components(s, runs, comparisons, an)
  if not crossed(s, runs) then return nil end
  local out = {
    method = "anova2", by_variant = {}, by_comparison = json.array({}),
  }
  for _, v in ipairs(s.variants) do
    local per = {}
    for _, m in ipairs(an.metrics) do
      local cells = {}
      for _, seed in ipairs(s.seeds) do
        local r = runs[v.name][seed]
        if r.values[m] ~= nil then
          cells[#cells + 1] = { r.init_seed or seed, r.data_seed or seed, r.values[m] }
        end
      end
      per[m] = components(cells)
    end
    out.by_variant[v.name] = per
  end
  for _, c in ipairs(comparisons) do
    if c.metric == an.primary then
      local cells = {}
      for i, seed in ipairs(c.seeds) do
        local r = runs[c.baseline][seed]
        cells[#cells + 1] = { r.init_seed or seed, r.data_seed or seed, c.b[i] - c.a[i] }
      end
      local e = components(cells)
      e.treatment, e.baseline, e.metric = c.treatment, c.baseline, c.metric
      out.by_comparison[#out.by_comparison + 1] = e
    end
  end
  return out
end

return M
