-- Reading another study's results from a study file, and the dependencies that creates.
-- Host functions (study.API, run in the sandbox's child; each reads the study's
-- <out-root>/<study>/summary.json): repro.best_lr(study, group), a sweep group's best peak
-- learning rate; repro.best_config(study, group), that grid point's config overrides
-- exactly as the sweep's file gave them (compute nothing from them); repro.result(study,
-- key, ...), the value at summary[key][...] (a JSON null reads as false).  What a study
-- reads goes into its configs, so their hashes cover it.  A study depends on the studies
-- it reads, its seeds' pilot and its `depends`; M.listing_source lists them for
-- `bin/repro studies`.  More: lua/experiments/README.md, "Reading another study's results".
local host = require "repro.host"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local base = require "repro.core.base"

local M = {}

-- The state of one evaluation, set by M.begin in the host before the sandbox forks; the
-- functions below run in the child, which sees it as it was at the fork.
local state = { root = nil, listing = false, reads = {}, unread = 0, cache = {} }

-- What a study that has no results yet reads as in listing mode, one kind per evaluation.
M.PLACEHOLDERS = { "nil", "zero", "table" }
local PLACEHOLDER = { ["nil"] = function() return nil end, zero = function() return 0 end,
  table = function() return {} end }

-- Before evaluating a study: where the results are, and whether this is a listing (the
-- placeholder kind of M.PLACEHOLDERS; false or nil for a real evaluation).
function M.begin(root, listing)
  state.root, state.listing, state.reads, state.unread, state.cache =
    root, listing or false, {}, 0, {}
end

local fail = base.user_error

local function check_name(study, what)
  if not base.valid_name(study) then
    fail("expected the name of a study as %s, got %s", what, type(study) == "string" and
      string.format("'%s'", study) or ("a " .. type(study)))
  end
end

-- The summary of `study` (decoded), or, in listing mode when it does not exist, nil.
-- Read and decoded once per evaluation (state.cache), so that calls in a loop cost no
-- file reads; the sandbox counts what the calls do against the study's limits
-- (lua/lsandbox.c: memory, instructions, at least 1000 per call, time).
local function summary_of(study)
  -- never relative to the working directory: an evaluation that did not begin() reads
  -- the project's records root, the one `run` reads by default
  local root = state.root or (host.root .. "/experiments")
  local dir = root .. "/" .. study
  local path = dir .. "/summary.json"
  local cached = state.cache[study]
  if cached then return cached, path end
  state.reads[#state.reads + 1] = study
  local text, why = fs.read(path)
  if not text and fs.exists(path) then
    -- a FIFO, a device, a link or an oversized file: refused at once, never waited on
    fail("the study '%s': %s", study, why)
  end
  if not text then
    if state.listing then
      state.unread = state.unread + 1
      return nil, nil, PLACEHOLDER[state.listing]()
    end
    if fs.exists(dir) then
      fail("the study '%s' has not finished: %s exists but has no summary.json (its run " ..
        "was interrupted or is still going; finish it first: bin/repro run " ..
        "lua/experiments/%s.lua)", study, dir, study)
    end
    fail("the study '%s' has no results: %s does not exist (run it first: bin/repro run " ..
      "lua/experiments/%s.lua; make reproduce runs studies in the order of what they read)",
      study, path, study)
  end
  local doc = json.table_of(text)
  if not doc then fail("%s: not a study summary (invalid JSON)", path) end
  state.cache[study] = doc
  return doc, path
end

-- The sweep group `group` of `study`'s summary (with a best point), or a placeholder.
local function best_group(study, group)
  check_name(study, "argument 1")
  if type(group) ~= "string" then
    fail("expected the name of a group of the sweep as argument 2, got a %s", type(group))
  end
  local sum, path, placeholder = summary_of(study)
  if sum == nil then return placeholder end
  local sweep = sum.lr_sweep
  if type(sweep) ~= "table" or type(sweep.groups) ~= "table" then
    fail("the study '%s' is not a learning-rate sweep: %s has no lr_sweep section (its " ..
      "analysis has no sweep)", study, path)
  end
  local g = sweep.groups[group]
  if type(g) ~= "table" then
    -- " (did you mean ...)" is left to the list of names: a sweep has few groups
    fail("the sweep '%s' has no group '%s' (its groups: %s)", study, group,
      table.concat(base.sorted_keys(sweep.groups), ", "))
  end
  if type(g.best_lr) ~= "number" then
    fail("the sweep '%s' gives no best learning rate for group '%s': %s", study, group,
      type(g.no_best) == "string" and g.no_best or "its summary has none")
  end
  return nil, g
end

local function best_lr(study, group)
  local placeholder, g = best_group(study, group)
  if not g then return placeholder end
  return g.best_lr
end

local function best_config(study, group)
  local placeholder, g = best_group(study, group)
  if not g then return placeholder end
  if type(g.best_overrides) ~= "table" then
    fail("the sweep '%s' has no best_overrides for group '%s' (a summary from before they " ..
      "were recorded: run it again)", study, group)
  end
  return g.best_overrides
end

-- A copy of a decoded JSON value with every null as false (plain data for the sandbox).
local function plain(v)
  if v == json.null then return false end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = plain(x) end
  return out
end

local function result(study, ...)
  check_name(study, "argument 1")
  local keys = table.pack(...)
  if keys.n == 0 then fail("expected at least one key after the study name") end
  local sum, path, placeholder = summary_of(study)
  if sum == nil then return placeholder end
  local v, where = sum, ""
  for i = 1, keys.n do
    local k = keys[i]
    if type(k) ~= "string" and math.type(k) ~= "integer" then
      fail("argument %d: expected a key (a string or an integer), got a %s", i + 1, type(k))
    end
    where = where .. (type(k) == "string" and ("." .. k) or ("[" .. k .. "]"))
    if type(v) ~= "table" or v[k] == nil or v[k] == json.null then
      fail("%s has no field %s", path, where:sub(1, 1) == "." and where:sub(2) or where)
    end
    v = v[k]
  end
  return plain(v)
end

-- The functions offered to study files (lua/repro/study/init.lua adds them to its M.API).
M.API = { best_lr = best_lr, best_config = best_config, result = result }

-- Listing mode: the source is wrapped (on its first line, so line numbers stay) so that
-- the evaluation returns M.finish's table instead of the study's.
local FINISH = "_listing_finish"

function M.listing_source(src)
  return "local __repro = repro; return __repro." .. FINISH .. "(pcall(function(...) " ..
    src .. "\nend, ...))"
end

-- The API of a listing evaluation: M.API plus the finishing function.
function M.listing_api(api)
  local t = {}
  for k, f in pairs(api) do t[k] = f end
  -- What a listing needs: the names read, the declared depends, the pilot, and the
  -- study's error if it raised one.
  t[FINISH] = function(ok, value)
    local out = { reads = state.reads, ok = ok, unread = state.unread }
    if not ok then
      out.error = type(value) == "table" and tostring(value.message) or tostring(value)
    elseif type(value) == "table" then
      out.name = value.name
      out.depends = value.depends
      out.fields = {} -- which of a study's own fields it has (the script guard's test)
      for _, k in ipairs({ "variants", "analysis", "seeds", "base" }) do
        if value[k] ~= nil then out.fields[#out.fields + 1] = k end
      end
      local seeds = value.seeds
      if type(seeds) == "table" and type(seeds.count) == "table" then
        out.pilot = seeds.count.pilot
      end
    end
    return out
  end
  return t
end

-- The dependencies of a study from its validated `depends` list, its pilot and the
-- studies a listing evaluation read (`listed`, M.listing_api's result): a sorted list of
-- distinct names.
function M.collect(listed)
  local set = {}
  local depends = type(listed.depends) == "table" and listed.depends or {}
  for _, list in ipairs({ listed.reads or {}, depends, { listed.pilot } }) do
    for _, n in ipairs(list) do
      if type(n) == "string" then set[n] = true end
    end
  end
  return base.sorted_keys(set)
end

return M
