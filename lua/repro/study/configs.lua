-- The configs of a study's runs: the overrides of its base, its variants and the command
-- line's --set, checked against the engine's keys (lua/repro/study/init.lua loads a study
-- through them), merged into each variant's config (M.overrides) and checked by the
-- engine's own rules.
local base = require "repro.core.base"
local engine = require "engine"
local record = require "repro.record"
local tasks = require "repro.tasks"
local prob = require "repro.study.problems"

local M = {}

local is_list, typename, suggest = prob.is_list, prob.typename, base.suggest

-- Keys a study may not set: the runner owns them.
local RESERVED = {
  seed = "comes from the study's seeds list",
  threads = "is set by the runner from --jobs (results do not depend on it)",
}
-- What a config key of each engine type takes, in words.
local WANT = { integer = "an integer", number = "a number", string = "a string",
  boolean = "true or false" }

-- Config overrides in table `t` (a base or a variant), skipping `skip` keys.
local function check_overrides(P, t, path, types, skip)
  local known = {}
  for k in pairs(types) do
    if not RESERVED[k] then known[#known + 1] = k end
  end
  table.sort(known)
  local function is_key(k) return type(k) == "string" and types[k] ~= nil end
  local keys = {}
  for k in pairs(t) do
    if is_key(k) and not (skip and skip[k]) then keys[#keys + 1] = k end
  end
  table.sort(keys)
  prob.unknown_keys(P, t, function(k) return is_key(k) or (skip and skip[k]) end, path .. ".",
    function(k) return "unknown config key '" .. k .. "'" .. suggest(k, known) end)
  local out = {}
  for _, k in ipairs(keys) do
    local v = t[k]
    if RESERVED[k] then
      P.add(path .. "." .. k, k .. " cannot be set in a study: it " .. RESERVED[k], k)
    else
      local ty = types[k]
      if ty == "integer" then v = prob.as_integer(v) end
      if WANT[ty] and (ty == "integer" and math.type(v) or type(v)) ~= ty then
        P.add(path .. "." .. k, "expected " .. WANT[ty] .. ", got " .. typename(v), k)
      elseif ty == "string" and base.control_char(v) then
        P.add(path .. "." .. k, "holds a control character (" .. base.control_char(v) .. ")", k)
      else
        out[k] = ty == "number" and v + 0.0 or v
      end
    end
  end
  return out
end

-- The config overrides of variant v: the study's base, the variant's, then the command
-- line's --set.  A --set lr without a --set min_lr drops the study's min_lr, so that
-- min_lr follows the new lr (lr x min_lr_ratio, record.resolve) instead of staying at a
-- value the study chose for its own lr.
function M.overrides(s, v)
  local o = {}
  for k, x in pairs(s.base) do o[k] = x end
  for k, x in pairs(v.overrides) do o[k] = x end
  local set = s.set or {}
  if set.lr ~= nil and set.min_lr == nil then o.min_lr = nil end
  for k, x in pairs(set) do o[k] = x end
  return o
end

-- base, the command line's --set, and the variants; returns the variants by name
-- ({path, overrides}) and their names in order.
function M.check(P, t, s, set, types)
  s.base = {}
  if t.base ~= nil then
    if type(t.base) ~= "table" then
      P.add("base", "expected a table of config overrides")
    else
      s.base = check_overrides(P, t.base, "base", types)
    end
  end
  s.set = set and check_overrides(P, set, "--set", types) or nil
  s.variants = {}
  local variants, variant_names = {}, {}
  if t.variants == nil then return variants, variant_names end
  if not is_list(t.variants) or #t.variants == 0 then
    P.add("variants", "expected a non-empty list of {name = ..., key = value, ...}")
    return variants, variant_names
  end
  for i, v in ipairs(t.variants) do
    local path = "variants[" .. i .. "]"
    if type(v) ~= "table" then
      P.add(path, "expected a table {name = ..., key = value, ...}")
    elseif not base.valid_name(v.name) then
      P.add(path .. ".name", "expected a name of " .. base.NAME_RULE, "name")
    elseif variants[v.name] then
      P.add(path .. ".name", "variant '" .. v.name .. "' is listed twice (also " ..
        variants[v.name].path .. ")", v.name, 2)
    else
      local o = check_overrides(P, v, path, types, { name = true })
      variants[v.name] = { path = path, overrides = o }
      variant_names[#variant_names + 1] = v.name
      s.variants[#s.variants + 1] = { name = v.name, overrides = o, path = path }
    end
  end
  return variants, variant_names
end

-- Every variant's full config against the engine's rules and the corpus (once per
-- variant: the seed does not change validity), each problem at the field that set the key.
function M.check_engine(P, s)
  local fits, told = {}, {}
  for _, v in ipairs(s.variants) do
    local o = M.overrides(s, v)
    o.seed = s.seeds[1]
    local cok, cerr = pcall(record.resolve, o)
    if cok then
      local cfg = cerr
      cok, cerr = pcall(engine.check, cfg)
      -- every task item checked against this model's vocabulary and window now, not
      -- after training (tasks.fit_problem), once per suite, corpus and window
      local fit_key = cok and cfg.tasks and cfg.tasks ~= "" and
        (tostring(cfg.tasks) .. "\0" .. tostring(cfg.data) .. "\0" .. tostring(cfg.context))
      if fit_key and fits[fit_key] == nil then fits[fit_key] = tasks.fit_problem(cfg) or false end
      if fit_key and fits[fit_key] and not told[fit_key] then
        told[fit_key] = true
        P.add((s.set and s.set.tasks ~= nil and "--set tasks") or
          (v.overrides.tasks ~= nil and (v.path .. ".tasks")) or "base.tasks",
          fits[fit_key], "tasks")
      end
    elseif type(cerr) == "table" then
      cerr = cerr.message
    end
    if not cok then
      local msg = tostring(cerr):gsub("^%a+: ", "", 1)
      -- the keys the message names ("warmup=30: must not exceed iters=10"), first the
      -- one it is about; it is reported where the first of them is set, in the order a
      -- run's config takes them: --set (no line), else the variant, else base (once for
      -- every variant it breaks)
      local keys = {}
      for k in msg:gmatch("%f[%w_]([%a_][%w_]*)=") do keys[#keys + 1] = k end
      local first = keys[1] or msg:match("^([%a_][%w_]*):")
      keys[#keys + 1] = first
      local where, key = "variants[" .. v.path:match("%d+") .. "] (" .. v.name .. ")", first
      local found = false
      for _, place in ipairs({ { s.set or {}, "--set " }, { v.overrides, v.path .. "." },
        { s.base, "base." } }) do
        for _, k in ipairs(keys) do
          if not found and place[1][k] ~= nil then where, key, found = place[2] .. k, k, true end
        end
      end
      P.add(where, msg, key)
    end
  end
end

return M
