-- Study files: load, validate and expand into runs.
--
-- A study file is plain Lua returning a table (docs/DESIGN.md, lua/experiments/README.md):
--
--   name, description      the study's directory name under experiments/, and prose
--   base                   config overrides shared by every run
--   variants               list of { name = "...", <config key> = value, ... }
--   seeds                  list of distinct integers; every variant runs every seed.  Or
--                          seeds from power: { count = { power = 0.8, pilot = "<study>" },
--                          first = 101 } (or sd = x instead of pilot): n is the least seed
--                          count whose pre-registered test has that power for min_effect
--                          at the Holm first-step level alpha / m (stats.seeds_needed),
--                          with the paired-difference sd stated, or the largest sd of
--                          the pilot's comparisons on the primary metric (its
--                          <out-root>/<pilot>/summary.json); the seeds are first, first +
--                          1, ..., none of them the pilot's (M.load, opts.out_root);
--                          count.max (optional) caps n at a pre-registered budget, and
--                          the summary then says the design is underpowered;
--                          count.min (optional) is a floor on n;
--                          count.upper = 0.8 (optional, with a pilot) sizes n with the
--                          one-sided 80 % upper confidence limit of the pilot's sd
--                          (stats.sd_upper, its df = pairs - 1 or the comparison's df)
--                          instead of the sd itself, against a small pilot's optimism
--   analysis               the pre-registered analysis (lua/repro/analysis/init.lua):
--                          baseline, metrics, primary, better, min_effect, alpha,
--                          correction ("holm"), resamples, test ("t" | "signflip": the
--                          decision test), and optionally comparisons, interactions,
--                          bootstrap ("exact" | "monte-carlo"), secondary (metrics
--                          compared outside the Holm family, exploratory),
--                          registered_rule (the decision rule the study was pre-registered
--                          under, default the current analysis.RULE; 1 for the studies
--                          that ran before issue 13).  The Holm family is the primary
--                          metric's comparisons and interactions (m tests); a design whose
--                          test cannot reach alpha / m with its seeds (the sign flip's
--                          smallest p is 2^(1 - n)) is refused with the seed count it
--                          needs, or, registered under an earlier rule, accepted with a
--                          note in the summary (analysis.design_notes).  comparisons is
--                          a list of {treatment, baseline} pairs; without it, every
--                          variant against the baseline, no other pair.  comparisons = {}
--                          pre-registers no test (a descriptive study: no family, no
--                          verdicts).  sweep: a learning-rate sweep's groups,
--                          analysed for best value, divergence and LR sensitivity, and
--                          optionally outcomes over the grid (lua/repro/study/sweep.lua).
--                          A field named in `extensions` is that extension's.
--   extensions             optional: analysis sections of the project's own code, a table
--                          { <field> = "<path of a Lua file from the project root>" }
--                          (lua/repro/core/extension.lua), e.g. this paper's claim stages
--                          { claim = "paper/lib/claim.lua" }.  The file returns
--                          { check = function(P, spec, variants, variant_names) -> the
--                          normalized spec (problems to P), summarize = function(s, runs,
--                          summary) -> the summary's section of the same name, and
--                          optionally check_design = function(P, spec, n_seeds, alpha) }.
--                          The section may carry `pilot` (one comparison, offered to a
--                          later study as its pilot_comparisons) and `text` (lines the
--                          console prints after the verdicts).  A study that names no
--                          extension gets no such section.
--   factor                 optional: the config key whose values the variants compare
--                          (their levels; the other keys in which they differ are their
--                          setting), for the report's labels and figures; without it
--                          each variant is a level of its own.  Its baseline is the
--                          analysis's baseline variant.  Goes into the summary.
--   checkpoint_every       steps between checkpoints (default 50)
--   jobs                   default worker count for `bin/repro run` (default 1)
--   depends                optional list of studies this one needs first, besides those it
--                          reads with repro.best_lr / repro.result and its pilot (e.g. a study
--                          that copies another's runs); `bin/repro studies` orders by all of
--                          them (lua/repro/study/depends.lua, lua/repro/cli/studies.lua)
--
-- A study file is data that may use loops and functions to build its tables.  It is
-- evaluated in a sandbox (lua/lsandbox.c): a child process with a Lua state of its own
-- (none of the host's tables, functions or string metatable), Lua's pure libraries
-- only (no io, os, debug, load, require, collectgarbage, string.dump, coroutines,
-- xpcall, __gc metamethods), and the limits of M.LIMITS; only plain data (tables,
-- strings, numbers, booleans) comes back, copied, and is validated here.  Its `name`
-- must be its file name, and no other study of lua/experiments/ may use it.  A study of
-- more than M.MAX_SEEDS seeds or M.MAX_RUNS runs needs opts.allow_large
-- (`bin/repro run --allow-large`).  Everything is validated before anything runs;
-- every problem is reported in one message, each line naming the file, the line when
-- the offending name can be found in the source, and the field path
-- (`variants[2].embed_nrom`).
--
-- M.API: the host functions a study may call, as repro.<name>(...).  To offer one, add
-- `M.API.name = function(...) ... end` (from the module that implements it): it runs in
-- the evaluating child, in the host's state, with copies of the study's arguments, and
-- must be a pure, read-only function of its arguments and of files (anything it
-- changes is lost with the child); it returns plain data, copied back to the study;
-- an error it raises ({message=} or a string) becomes the study's error, reported as
-- `study: FILE:LINE: repro.name: message`.  Say in lua/experiments/README.md what it
-- returns.  A study that calls it records the resolved values in its configs, so a
-- changed input changes the config hashes.
local base = require "repro.core.base"
local engine = require "engine"
local stats = require "stats"
local record = require "repro.record"
local sandbox = require "repro.sandbox"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local host = require "repro.host"
local depends = require "repro.study.depends"
local sweep = require "repro.study.sweep"
local extension = require "repro.core.extension"

local M = {}

M.CHECKPOINT_EVERY = 50

-- Metrics computed by lua/repro/analysis/init.lua from a run's log.csv and metrics.json.
M.DERIVED_METRICS = { "diverged", "n_spikes", "max_loss_ratio" }

-- The scalar results engine.train documents (lua/lengine.c); every numeric top-level
-- field of metrics.json is usable, these are the names a study may list.
M.ENGINE_METRICS = require("engine").metric_names()

local TOP_FIELDS = { "name", "description", "base", "variants", "seeds", "analysis",
  "checkpoint_every", "jobs", "depends", "extensions", "factor" }
local ANALYSIS_FIELDS = { "baseline", "metrics", "primary", "better", "min_effect", "alpha",
  "correction", "resamples", "comparisons", "interactions", "bootstrap", "secondary", "test",
  "registered_rule", "sweep" }
local REQUIRED_ANALYSIS = { "baseline", "metrics", "primary", "better", "min_effect", "alpha",
  "correction", "resamples", "test" }
-- The decision rule of lua/repro/analysis/init.lua (analysis.RULE, kept here so that loading a
-- study does not load the analysis).
M.RULE = 2
-- Keys a study may not set: the runner owns them.
local RESERVED = {
  seed = "comes from the study's seeds list",
  threads = "is set by the runner from --jobs (results do not depend on it)",
}

local function user_error(msg) base.user_error("%s", msg) end
M.user_error = user_error

-- The sandbox's limits, defined once in lua/lsandbox.c (sandbox.LIMITS: memory of the
-- study's Lua state, VM instructions, wall-clock seconds, size and depth of the returned
-- data); a copy, which a test may tighten.
M.LIMITS = {}
for k, v in pairs(sandbox.LIMITS) do M.LIMITS[k] = v end
M.MAX_SOURCE_BYTES = 1024 * 1024
-- Plans above these need opts.allow_large (`bin/repro run --allow-large`).
M.MAX_SEEDS, M.MAX_RUNS = 100, 1000
M.API = {}
-- Another study's results (lua/repro/study/depends.lua): repro.best_lr, repro.result.
for name, f in pairs(depends.API) do M.API[name] = f end

local function sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- " (did you mean 'x'?)" for the closest known name within a small edit distance (none
-- for a long name: the distance is quadratic in its length).
local function suggest(name, known)
  if #name > 64 then return "" end
  local best, bd = nil, math.huge
  for _, k in ipairs(known) do
    local d = distance(name, k)
    if d < bd then best, bd = k, d end
  end
  if best and bd <= math.max(2, #name // 4) then
    return string.format(" (did you mean '%s'?)", best)
  end
  return ""
end

function M.metric_names()
  local all = {}
  for _, m in ipairs(M.DERIVED_METRICS) do all[#all + 1] = m end
  for _, m in ipairs(M.ENGINE_METRICS) do all[#all + 1] = m end
  return all
end

-- The line of the n-th occurrence of `token` in the source as a whole word (or as a
-- quoted string when it is not an identifier), or nil.
local function find_line(src, token, nth)
  if not src or token == nil then return nil end
  token = tostring(token)
  local pat
  if token:match("^[%a_][%w_]*$") then
    pat = "%f[%w_]" .. token:gsub("%p", "%%%0") .. "%f[^%w_]"
  else
    pat = "[\"']" .. token:gsub("%p", "%%%0") .. "[\"']"
  end
  local n = 0
  local line = 0
  for l in (src .. "\n"):gmatch("(.-)\n") do
    line = line + 1
    if not l:match("^%s*%-%-") and l:find(pat) then
      n = n + 1
      if n >= (nth or 1) then return line end
    end
  end
  return nil
end

-- At most this many problems are reported (and located in the source), the rest counted:
-- validation stays linear in the study's size however many problems it has.
M.MAX_PROBLEMS = 20
-- The M.MAX_PROBLEMS smallest of the strings given to add (sorted, in `list`) and how
-- many were given (`n`): the problems shown are the first ones in key order, found in
-- linear time (no sort of 200,000 unknown keys).
local function new_smallest()
  local S = { list = {}, n = 0 }
  function S.add(k)
    S.n = S.n + 1
    local l = S.list
    if #l >= M.MAX_PROBLEMS and k >= l[#l] then return end
    local i = #l + 1
    while i > 1 and l[i - 1] > k do i = i - 1 end
    table.insert(l, i, k)
    if #l > M.MAX_PROBLEMS then l[#l] = nil end
  end
  return S
end

-- A problem's text is cut to this many bytes (a 1 MB key is shown by its start).
local MAX_PROBLEM_BYTES = 300

-- A collector of problems; `add(path, msg, token, nth)` locates `token` in the source
-- (msg may be a function giving the text, called only for a problem that is shown).  A
-- problem found again (a base key that breaks every variant) is listed once.
local function problems(file, src)
  local list, more, seen = {}, 0, {}
  local P = {}
  function P.add(path, msg, token, nth)
    if #list >= M.MAX_PROBLEMS then
      more = more + 1
      return
    end
    if type(msg) == "function" then msg = msg() end -- a suggestion, computed when shown
    if token == nil then token = path and path:match("([%a_][%w_]*)$") end
    local line = token and #tostring(token) <= 200 and find_line(src, token, nth)
    local where = line and string.format("%s:%d: ", file, line) or (file .. ": ")
    local text = base.printable(where .. (path and (path .. ": ") or "") .. msg)
    if #text > MAX_PROBLEM_BYTES then
      text = text:sub(1, MAX_PROBLEM_BYTES) .. string.format("... (%d bytes)", #text)
    end
    if not seen[text] then
      seen[text] = true
      list[#list + 1] = text
    end
  end
  function P.count(n) more = more + n end -- problems found but neither shown nor located
  function P.raise()
    if #list > 0 then
      local n = #list + more
      local head = n == 1 and "study: " or
        string.format("study: %s: %d problems in the study (nothing was run)%s:\n  ", file, n,
          more > 0 and string.format("; the first %d", #list) or "")
      user_error(head .. table.concat(list, "\n  ") ..
        (more > 0 and string.format("\n  ... and %d more", more) or ""))
    end
  end
  return P
end

-- The study file's source, evaluated in the sandbox: the returned value, or a user
-- error naming the file and what failed.
local function evaluate(path, listing)
  local st = sys.stat(path)
  if st and st.type ~= "file" then
    user_error(string.format("study: %s: not a regular file (%s)", path,
      st.type == "dir" and "a directory" or "a device, pipe or socket"))
  end
  if st and st.size > M.MAX_SOURCE_BYTES then
    user_error(string.format("study: %s: %d bytes, more than the %d MiB a study file may " ..
      "have", path, st.size, M.MAX_SOURCE_BYTES // (1024 * 1024)))
  end
  local f, err = io.open(path, "rb")
  if not f then
    user_error(string.format("study: %s: cannot read the study file: %s", path, err))
  end
  local src = f:read(M.MAX_SOURCE_BYTES + 1)
  f:close()
  if src == nil then
    user_error(string.format("study: %s: cannot read the study file", path))
  end
  local ok, value, msg
  if listing then
    ok, value, msg = sandbox.eval(depends.listing_source(src), "@" .. path, M.LIMITS,
      depends.listing_api(M.API))
    -- a syntax error is reported as the plain source gives it
    if not ok and value == "syntax" then listing = false end
  end
  if not listing then ok, value, msg = sandbox.eval(src, "@" .. path, M.LIMITS, M.API) end
  if ok then return value, src end
  local L = M.LIMITS
  local where = " of a study file (lua/lsandbox.c, sandbox.LIMITS)"
  local why = ({
    memory = string.format("exceeded the %d MiB memory limit", L.memory_bytes // (1024 * 1024))
      .. where,
    instructions = string.format("exceeded the limit of %d Lua instructions", L.instructions)
      .. where .. ": an endless loop?",
    time = string.format("exceeded the %g s time limit", L.wall_s) .. where,
    result = "what it returns is not plain data: " .. tostring(msg),
    crashed = "its evaluation failed: " .. tostring(msg),
  })[value]
  if why then user_error(string.format("study: %s: %s", path, why)) end
  -- syntax and runtime errors: the message names file:line when Lua knows them
  if msg:sub(1, #path + 1) == path .. ":" then user_error("study: " .. msg) end
  user_error(string.format("study: %s: %s", path, msg))
end

local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function typename(v)
  if math.type(v) then return math.type(v) == "integer" and "an integer" or "a number" end
  return "a " .. type(v)
end

-- Config overrides in table `t` (a base or a variant), skipping `skip` keys.
local function check_overrides(P, t, path, types, skip)
  local known = {}
  for k in pairs(types) do
    if not RESERVED[k] then known[#known + 1] = k end
  end
  table.sort(known)
  local keys, unknown = {}, new_smallest()
  for k in pairs(t) do
    if skip and skip[k] then
      -- handled by the caller
    elseif type(k) ~= "string" or not types[k] then
      unknown.add(tostring(k))
    else
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  for _, k in ipairs(unknown.list) do
    P.add(path .. "." .. k, function()
      return "unknown config key '" .. k .. "'" .. suggest(k, known)
    end, k)
  end
  P.count(unknown.n - #unknown.list)
  local out = {}
  for _, k in ipairs(keys) do
    local v = t[k]
    if RESERVED[k] then
      P.add(path .. "." .. k, k .. " cannot be set in a study: it " .. RESERVED[k], k)
    else
      local ty = types[k]
      if ty == "integer" and math.type(v) == "float" and v == math.floor(v) then
        v = math.tointeger(v)
      end
      if ty == "integer" and math.type(v) ~= "integer" then
        P.add(path .. "." .. k, "expected an integer, got " .. typename(v), k)
      elseif ty == "number" and type(v) ~= "number" then
        P.add(path .. "." .. k, "expected a number, got " .. typename(v), k)
      elseif ty == "string" and type(v) ~= "string" then
        P.add(path .. "." .. k, "expected a string, got " .. typename(v), k)
      elseif ty == "string" and base.control_char(v) then
        P.add(path .. "." .. k, "holds a control character (" .. base.control_char(v) .. ")", k)
      elseif ty == "boolean" and type(v) ~= "boolean" then
        P.add(path .. "." .. k, "expected true or false, got " .. typename(v), k)
      else
        out[k] = ty == "number" and v + 0.0 or v
      end
    end
  end
  return out
end

local function check_pair(P, pair, path, variants, names)
  if not (is_list(pair) and #pair == 2 and type(pair[1]) == "string"
      and type(pair[2]) == "string") then
    P.add(path, "expected a pair {treatment, baseline} of variant names")
    return nil
  end
  local ok = true
  for i = 1, 2 do
    if not variants[pair[i]] then
      P.add(path .. "[" .. i .. "]", function()
        return "unknown variant '" .. pair[i] .. "'" .. suggest(pair[i], names)
      end, pair[i])
      ok = false
    end
  end
  if ok and pair[1] == pair[2] then
    P.add(path, "compares variant '" .. pair[1] .. "' with itself", pair[1])
    ok = false
  end
  return ok and { pair[1], pair[2] } or nil
end

-- check_analysis in steps: each checks some fields of the study's `analysis` table `a`,
-- reports their problems to P (in the order check_analysis calls the steps, so a study's
-- list of problems reads the same each time) and fills the normalized `out`.

-- What each analysis field takes, for the message of a missing one and the comments of
-- `bin/repro new` (lua/repro/cli/new.lua): {field, text, required}, in the order a study
-- file lists them.  variant_names (optional) are the study's variants.
function M.analysis_fields(variant_names)
  local v = "the name of a variant"
  if variant_names and #variant_names > 0 then
    v = "one of the variants: \"" .. table.concat(variant_names, "\", \"") .. "\""
  end
  return {
    { "baseline", v .. " (without comparisons, every other variant is compared with it)", true },
    { "metrics", "a non-empty list of metric names, e.g. { \"val_loss\", \"val_acc\" }; " ..
      "the names: " .. table.concat(M.metric_names(), ", "), true },
    { "primary", "one of analysis.metrics: the metric the verdicts are about", true },
    { "better", "\"lower\" or \"higher\" (which way the primary metric improves)", true },
    { "min_effect", "a number > 0 in the primary metric's units: the smallest difference " ..
      "that matters (e.g. 0.02 nats of val_loss, about 2 % perplexity)", true },
    { "alpha", "a number in (0, 1), e.g. 0.05", true },
    { "correction", "\"holm\" (the only one)", true },
    { "resamples", "an integer >= " .. stats.MIN_RESAMPLES .. ": bootstrap resamples, " ..
      "e.g. 10000", true },
    { "test", "\"t\" (the paired t-test) or \"signflip\" (the exact sign-flip test): " ..
      "the decision test", true },
    { "comparisons", "optional: a list of { treatment, baseline } pairs of variant names; " ..
      "{} pre-registers no test (a descriptive study)", false },
    { "secondary", "optional: metric names compared outside the Holm family (exploratory)",
      false },
    { "interactions", "optional: a list of { name = , a = { t, b }, b = { t, b } }: " ..
      "differences of two paired differences", false },
    { "bootstrap", "optional: \"exact\" (default) or \"monte-carlo\"", false },
    { "registered_rule", "optional: the decision rule pre-registered, an integer from 1 to " ..
      M.RULE .. " (default " .. M.RULE .. ", the current one)", false },
    { "sweep", "optional: a learning-rate sweep's groups (lua/repro/study/sweep.lua)", false },
  }
end

-- Unknown fields, and the required ones that are missing, with what they take.
local function check_analysis_fields(P, a, variant_names, ext)
  local fields = set_of(ANALYSIS_FIELDS)
  for name in pairs(ext) do fields[name] = true end
  for k in pairs(a) do
    if not fields[k] then
      P.add("analysis." .. tostring(k), function()
        return "unknown field" .. suggest(tostring(k), ANALYSIS_FIELDS)
      end, tostring(k))
    end
  end
  local takes = {}
  for _, f in ipairs(M.analysis_fields(variant_names)) do takes[f[1]] = f[2] end
  for _, k in ipairs(REQUIRED_ANALYSIS) do
    if a[k] == nil then P.add("analysis." .. k, "missing (it is part of the pre-registration); " ..
      "expected " .. takes[k], "analysis") end
  end
end

-- A list of metric names at analysis.<field>; `seen` holds names already taken (a
-- repeat is an error, `twice` says why), and is updated.
local function metric_list(P, a, field, nonempty, seen, twice)
  local known = set_of(M.metric_names())
  local list = {}
  local value = a[field]
  if value == nil then return list end
  if not is_list(value) or (nonempty and #value == 0) then
    P.add("analysis." .. field, "expected a " .. (nonempty and "non-empty " or "") ..
      "list of metric names")
    return list
  end
  for i, m in ipairs(value) do
    local path = "analysis." .. field .. "[" .. i .. "]"
    if type(m) ~= "string" or not known[m] then
      P.add(path, function()
        return "unknown metric '" .. tostring(m) .. "'" .. suggest(tostring(m), M.metric_names())
      end, tostring(m))
    elseif seen[m] then
      P.add(path, "metric '" .. m .. "' " .. twice, m, 2)
    else
      seen[m] = true
      list[#list + 1] = m
    end
  end
  return list
end

-- baseline, metrics, secondary (compared like the others but outside the Holm family:
-- exploratory) and primary.
local function check_metrics(P, a, out, variants, variant_names)
  if a.baseline ~= nil then
    if type(a.baseline) ~= "string" or not variants[a.baseline] then
      P.add("analysis.baseline", "unknown variant '" .. tostring(a.baseline) .. "'" ..
        suggest(tostring(a.baseline), variant_names), "baseline")
    else
      out.baseline = a.baseline
    end
  end
  local seen = {}
  out.metrics = metric_list(P, a, "metrics", true, seen, "is listed twice")
  out.secondary = metric_list(P, a, "secondary", false, seen,
    "is already listed in analysis.metrics or analysis.secondary")
  if a.primary ~= nil then
    if type(a.primary) ~= "string" or not set_of(out.metrics)[a.primary] then
      P.add("analysis.primary", "'" .. tostring(a.primary) ..
        "' is not one of analysis.metrics", "primary")
    else
      out.primary = a.primary
    end
  end
end

-- The decision's parameters: better, min_effect, alpha, correction.
local function check_decision(P, a, out)
  if a.better ~= nil then
    if a.better ~= "lower" and a.better ~= "higher" then
      P.add("analysis.better", "expected \"lower\" or \"higher\", got " .. tostring(a.better),
        "better")
    else
      out.better = a.better
    end
  end
  if a.min_effect ~= nil then
    if type(a.min_effect) ~= "number" or not (a.min_effect > 0 and a.min_effect < math.huge) then
      P.add("analysis.min_effect", "expected a number > 0 (in the primary metric's units)",
        "min_effect")
    else
      out.min_effect = a.min_effect + 0.0
    end
  end
  if a.alpha ~= nil then
    if type(a.alpha) ~= "number" or not (a.alpha > 0 and a.alpha < 1) then
      P.add("analysis.alpha", "expected a number in (0, 1)", "alpha")
    else
      out.alpha = a.alpha + 0.0
    end
  end
  if a.correction ~= nil and a.correction ~= "holm" then
    P.add("analysis.correction", "only \"holm\" is supported, got " .. tostring(a.correction),
      "correction")
  end
  out.correction = "holm"
end

-- The test and its resampling: resamples, bootstrap, test, registered_rule.
local function check_test(P, a, out)
  if a.resamples ~= nil then
    if math.type(a.resamples) ~= "integer" or a.resamples < stats.MIN_RESAMPLES then
      P.add("analysis.resamples", "expected an integer >= " .. stats.MIN_RESAMPLES, "resamples")
    else
      out.resamples = a.resamples
    end
  end
  out.bootstrap = a.bootstrap or "exact"
  if out.bootstrap ~= "exact" and out.bootstrap ~= "monte-carlo" then
    P.add("analysis.bootstrap", "expected \"exact\" or \"monte-carlo\"", "bootstrap")
  end
  if a.test ~= nil then
    if a.test ~= "t" and a.test ~= "signflip" then
      P.add("analysis.test", "expected \"t\" (the paired t-test) or \"signflip\" (the exact " ..
        "sign-flip test), got " .. tostring(a.test), "test")
    else
      out.test = a.test
    end
  end
  out.registered_rule = M.RULE
  if a.registered_rule ~= nil then
    if math.type(a.registered_rule) ~= "integer" or a.registered_rule < 1
        or a.registered_rule > M.RULE then
      P.add("analysis.registered_rule", string.format("expected an integer from 1 to %d " ..
        "(the current decision rule)", M.RULE), "registered_rule")
    else
      out.registered_rule = a.registered_rule
    end
  end
end

-- The comparisons: the listed {treatment, baseline} pairs, or without a list every
-- variant against the baseline (out.baseline, when valid).
local function check_comparisons(P, a, out, variants, variant_names)
  local comparisons, seen = {}, {}
  local function add_cmp(pair)
    local key = pair[1] .. "\0" .. pair[2]
    if seen[key] then return false end
    seen[key] = true
    comparisons[#comparisons + 1] = pair
    return true
  end
  if a.comparisons ~= nil then
    if not is_list(a.comparisons) then
      P.add("analysis.comparisons", "expected a list of {treatment, baseline} pairs ({} for " ..
        "none: a descriptive study)")
    else
      for i, pair in ipairs(a.comparisons) do
        local p = check_pair(P, pair, "analysis.comparisons[" .. i .. "]", variants,
          variant_names)
        if p and not add_cmp(p) then
          P.add("analysis.comparisons[" .. i .. "]", string.format(
            "the comparison %s vs %s is listed twice", p[1], p[2]), "comparisons")
        end
      end
    end
  elseif out.baseline then
    for _, v in ipairs(variant_names) do
      if v ~= out.baseline then add_cmp({ v, out.baseline }) end
    end
  end
  out.comparisons = comparisons
end

-- One interaction {name=, a={t, b}, b={t, b}} at `path`; names holds the names taken.
local function check_interaction(P, it, path, names, variants, variant_names)
  if type(it) ~= "table" then
    P.add(path, "expected a table {name=, a={t, b}, b={t, b}}")
    return nil
  end
  for k in pairs(it) do
    if k ~= "name" and k ~= "a" and k ~= "b" then
      P.add(path .. "." .. tostring(k), "unknown field (expected name, a, b)", tostring(k))
    end
  end
  if type(it.name) ~= "string" or it.name == "" then
    P.add(path .. ".name", "expected a string")
  elseif names[it.name] then
    P.add(path .. ".name", "interaction '" .. it.name .. "' is listed twice", it.name, 2)
  end
  local pa = check_pair(P, it.a, path .. ".a", variants, variant_names)
  local pb = check_pair(P, it.b, path .. ".b", variants, variant_names)
  if type(it.name) == "string" and pa and pb then
    names[it.name] = true
    return { name = it.name, a = pa, b = pb }
  end
  return nil
end

local function check_interactions(P, a, out, variants, variant_names)
  local interactions = {}
  if a.interactions ~= nil then
    if not is_list(a.interactions) then
      P.add("analysis.interactions", "expected a list of {name=, a={t, b}, b={t, b}}")
    else
      local names = {}
      for i, it in ipairs(a.interactions) do
        interactions[#interactions + 1] = check_interaction(P, it, "analysis.interactions[" ..
          i .. "]", names, variants, variant_names)
      end
    end
  end
  out.interactions = interactions
end

-- The study's pre-registered analysis (header), normalized; P collects the problems.
local function check_analysis(P, a, variants, variant_names, ext)
  local out = {}
  if type(a) ~= "table" then
    P.add("analysis", "expected a table, got " .. typename(a))
    return out
  end
  check_analysis_fields(P, a, variant_names, ext)
  check_metrics(P, a, out, variants, variant_names)
  check_decision(P, a, out)
  check_test(P, a, out)
  out.design_notes = {}
  check_comparisons(P, a, out, variants, variant_names)
  check_interactions(P, a, out, variants, variant_names)
  for _, name in ipairs(sorted_keys(ext)) do
    if a[name] ~= nil then out[name] = ext[name].check(P, a[name], variants, variant_names) end
  end
  if a.sweep ~= nil then out.sweep = sweep.check(P, a.sweep, variants) end
  return out
end

-- The seeds-from-power form (header): {power, pilot | sd, first}, or nil after reporting.
local function check_seeds_spec(P, t)
  local ok = true
  for k in pairs(t) do
    if k ~= "count" and k ~= "first" then
      P.add("seeds." .. tostring(k), "unknown field (seeds from power: count = {power =, " ..
        "pilot = | sd =}, first =)", tostring(k))
      ok = false
    end
  end
  local c, spec = t.count, {}
  if type(c) ~= "table" then
    P.add("seeds.count", string.format("expected a table { power = %g, pilot = \"<study>\" } " ..
      "or { power = %g, sd = x }", stats.DEFAULT_POWER, stats.DEFAULT_POWER), "count")
    return nil
  end
  for k in pairs(c) do
    if k ~= "power" and k ~= "pilot" and k ~= "sd" and k ~= "max" and k ~= "upper" and
        k ~= "min" then
      P.add("seeds.count." .. tostring(k), "unknown field (expected power, pilot, sd, min, " ..
        "max or upper)", tostring(k))
      ok = false
    end
  end
  if type(c.power) ~= "number" or not (c.power > 0 and c.power < 1) then
    P.add("seeds.count.power", "expected the target power, a number in (0, 1)", "power")
    ok = false
  end
  if (c.pilot == nil) == (c.sd == nil) then
    P.add("seeds.count", "expected exactly one of pilot (a study whose summary gives the " ..
      "paired-difference sd) and sd (the sd itself)", "count")
    ok = false
  elseif c.pilot ~= nil and (type(c.pilot) ~= "string" or not c.pilot:match("^[%w][%w_.%-]*$")) then
    P.add("seeds.count.pilot", "expected the name of a study", "pilot")
    ok = false
  elseif c.sd ~= nil and (type(c.sd) ~= "number" or not (c.sd > 0 and c.sd < math.huge)) then
    P.add("seeds.count.sd", "expected a number > 0 (in the primary metric's units)", "sd")
    ok = false
  end
  if c.upper ~= nil and (type(c.upper) ~= "number" or not (c.upper > 0 and c.upper < 1)) then
    P.add("seeds.count.upper", "expected the confidence level of the pilot sd's upper " ..
      "limit, a number in (0, 1) (e.g. 0.8)", "upper")
    ok = false
  elseif c.upper ~= nil and c.pilot == nil then
    P.add("seeds.count.upper", "an upper confidence limit needs a pilot (its degrees of " ..
      "freedom); with a stated sd, state the sd you mean", "upper")
    ok = false
  end
  if c.min ~= nil and (math.type(c.min) ~= "integer" or c.min < 2 or
      (math.type(c.max) == "integer" and c.min > c.max)) then
    P.add("seeds.count.min", "expected the fewest seeds the design runs whatever power " ..
      "asks, an integer >= 2 (and <= max)", "min")
    ok = false
  end
  if c.max ~= nil and (math.type(c.max) ~= "integer" or c.max < 2) then
    P.add("seeds.count.max", "expected the largest seed count the budget allows, an integer " ..
      ">= 2", "max")
    ok = false
  end
  local first = t.first
  if math.type(first) == "float" and first == math.floor(first) then first = math.tointeger(first) end
  if math.type(first) ~= "integer" or first < 0 then
    P.add("seeds.first", "expected the first seed, an integer >= 0 (the seeds are first, " ..
      "first + 1, ...)", "first")
    ok = false
  end
  if not ok then return nil end
  spec.power, spec.pilot, spec.sd, spec.first = c.power + 0.0, c.pilot, c.sd, first
  spec.max, spec.upper, spec.min = c.max, c.upper, c.min
  return spec
end

-- The seeds a study computed from power, with the inputs behind the count (s.seeds_from_power,
-- as the summary keeps it), in one line for the dry run and the verdict table.
function M.seeds_text(p)
  local text = string.format("seeds from power: n = %d seeds (%d .. %d) for %g %% power at " ..
    "the minimum effect delta = %g with paired-difference sd %.4g (%s): d_z = %.3g, %s test " ..
    "at alpha / m = %g / %d = %.4g; power at n: %.3g", p.n, p.first, p.first + p.n - 1,
    100 * p.power, p.delta, p.sd, p.sd_source, p.d_z, p.test == "t" and "paired t" or
    "sign-flip", p.alpha, p.m, p.level, p.power_achieved)
  if p.capped then
    text = text .. string.format(" (power asks for %d; the pre-registered maximum caps them " ..
      "at %d: underpowered)", p.n_uncapped, p.n)
  end
  return text
end

-- Where other studies' summaries are read (a pilot, repro.best_lr): opts.out_root, else
-- $REPRO_EXPERIMENTS, else <project root>/experiments.
function M.results_root(opts)
  local root = (opts and opts.out_root) or os.getenv("REPRO_EXPERIMENTS")
  if not root or root == "" then root = host.root .. "/experiments" end
  return root
end

-- The pilot's paired-difference sd on `metric`: the largest over its comparisons (its
-- summary's pilot_comparisons when it has them: the comparisons it offers a later study
-- as a pilot, e.g. a sweep's at each group's best learning rate), the list of them, and
-- its seeds; or nil and why.
local function pilot_sd(root, pilot, metric)
  local path = root .. "/" .. pilot .. "/summary.json"
  -- a regular file under the size cap only (a FIFO or a link to /dev/zero is refused)
  local text, why = fs.read(path)
  if not text then
    if not fs.exists(path) then
      return nil, "the pilot study has no summary " .. path .. " (run it first)"
    end
    return nil, path .. ": " .. tostring(why)
  end
  local ok, sum = pcall(require("cjson").decode, text)
  if not ok or type(sum) ~= "table" then return nil, path .. ": not a study summary" end
  local best, best_df, used = nil, nil, {}
  local list = type(sum.pilot_comparisons) == "table" and sum.pilot_comparisons or
    sum.comparisons
  for _, c in ipairs(type(list) == "table" and list or {}) do
    if type(c) == "table" and c.metric == metric and type(c.sd) == "number" then
      -- degrees of freedom of the sd: stated (a pooled estimate), else pairs - 1
      local df = type(c.df) == "number" and c.df or (type(c.n) == "number" and c.n - 1)
      used[#used + 1] = { treatment = c.treatment, baseline = c.baseline, sd = c.sd, n = c.n,
        df = type(c.df) == "number" and c.df or nil }
      if not best or c.sd > best then best, best_df = c.sd, df end
    end
  end
  if not best or not (best > 0) then
    return nil, string.format("%s: no comparison on %s with a paired-difference sd > 0", path,
      metric)
  end
  local seeds = {}
  for _, x in ipairs(type(sum.seeds) == "table" and sum.seeds or {}) do seeds[x] = true end
  -- named relative to the project root, so that the summary's bytes do not depend on
  -- where the repository is
  return best, used, seeds, fs.relative_to_root(path) .. (list == sum.pilot_comparisons and
    ": its pilot_comparisons" or ""), best_df
end

-- The design against the decision rule: the Holm family size m, the seeds from power
-- (when the study asks for them), and whether the test can reach alpha / m at all.
local function check_design(P, s, opts, given)
  local an = s.analysis
  an.m = #(an.comparisons or {}) + #(an.interactions or {})
  if not (an.test and an.alpha and an.m > 0) then return end
  local level = an.alpha / an.m
  local spec = s.seeds_spec
  if spec and an.min_effect and an.primary then
    local sd, used, pilot_seeds, source = spec.sd, nil, {}, "stated in the study file"
    local sd_pilot, df
    if spec.pilot then
      local list_or_why
      sd, list_or_why, pilot_seeds, source, df = pilot_sd(M.results_root(opts), spec.pilot,
        an.primary)
      if not sd then
        P.add("seeds.count.pilot", list_or_why, "pilot")
        return
      end
      used = list_or_why
      source = "the largest paired-difference sd of the pilot's comparisons on " ..
        an.primary .. " (" .. source .. ")"
      if spec.upper then
        -- without a small pilot's optimism: its sd's one-sided upper confidence limit
        if not (type(df) == "number" and df > 0) then
          P.add("seeds.count.upper", "the pilot's comparison gives no degrees of freedom " ..
            "(pairs - 1 or df) for its sd", "upper")
          return
        end
        sd_pilot = sd
        sd = stats.sd_upper(sd_pilot, df, spec.upper)
        source = string.format("the %g %% upper confidence limit (chi-square, %g degrees of " ..
          "freedom) of %s, %.4g", 100 * spec.upper, df, source, sd_pilot)
      end
    end
    local ok, n, g = pcall(stats.seeds_needed, { sd = sd, delta = an.min_effect,
      alpha = an.alpha, m = an.m, power = spec.power, test = an.test })
    if not ok then
      P.add("seeds.count", tostring(n):gsub("^.-%(", "("), "count")
      return
    end
    -- a pre-registered budget cap: fewer seeds than power asks for, said in the summary
    local uncapped, power_at_n = n, g.power_achieved
    if spec.max and n > spec.max then
      n = spec.max
      power_at_n = stats.power(n, g.d_z, { alpha = g.level })
      an.design_notes[#an.design_notes + 1] = string.format("seeds from power: %d seeds " ..
        "would give %g %% power at the minimum effect %g (paired sd %.4g, alpha / m = %.4g); " ..
        "the pre-registered maximum caps them at %d, where the power is %.3g: the design is " ..
        "underpowered for the minimum effect", uncapped, 100 * spec.power, an.min_effect, sd,
        g.level, n, power_at_n)
    end
    -- a pre-registered floor: more seeds than power asks for (power at n said)
    if spec.min and n < spec.min then
      n = spec.min
      power_at_n = stats.power(n, g.d_z, { alpha = g.level })
    end
    for i = 0, n - 1 do
      if pilot_seeds[spec.first + i] then
        P.add("seeds.first", string.format("seed %d is one of the pilot's: the seeds must " ..
          "be fresh (choose first so that first .. first + %d avoid them)", spec.first + i,
          n - 1), "first")
        return
      end
      s.seeds[i + 1] = spec.first + i
    end
    s.seeds_from_power = { power = spec.power, pilot = spec.pilot, sd = sd, sd_source = source,
      pilot_comparisons = used, delta = an.min_effect, alpha = an.alpha, m = an.m,
      level = g.level, test = an.test, d_z = g.d_z, n = n, n_power = g.n_power,
      n_reach = g.n_reach, power_achieved = power_at_n, first = spec.first, max = spec.max,
      n_uncapped = uncapped, capped = uncapped > n, upper = spec.upper, min = spec.min,
      sd_pilot = sd_pilot, df = spec.upper and df or nil }
  end
  local n = #s.seeds
  -- a seeds list with problems (already reported) says nothing about the design
  if n == 0 or (not spec and (not is_list(given) or #given ~= n)) then return end
  local need = stats.min_seeds(an.test, level)
  if n < need then
    local msg = string.format("the %s with %d seed%s cannot reach the Holm first-step level " ..
      "alpha / m = %g / %d = %.4g (%s): the design needs at least %d seeds", an.test == "t" and
      "paired t-test" or "exact sign-flip test", n, n == 1 and "" or "s", an.alpha, an.m, level,
      an.test == "t" and "it needs 2 pairs" or string.format("its smallest p is 2^(1 - %d) = %.4g",
        n, 2.0 ^ (1 - n)), need)
    if an.registered_rule < M.RULE then
      an.design_notes[#an.design_notes + 1] = msg .. string.format(" (accepted: the study was " ..
        "pre-registered under decision rule %d, before this check existed)", an.registered_rule)
    else
      P.add("analysis.test", msg, "test")
    end
  end
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

-- The runs of a valid study: seed-major (every variant of the first seed, then the
-- next seed), so an interrupted study has complete pairs early.
local function expand(s)
  local runs = {}
  for _, seed in ipairs(s.seeds) do
    for _, v in ipairs(s.variants) do
      local o = M.overrides(s, v)
      o.seed = seed
      local cfg = record.resolve(o)
      cfg.threads = nil
      runs[#runs + 1] = { variant = v.name, seed = seed, cfg = cfg,
        label = string.format("%s/seed-%d", v.name, seed),
        rel = string.format("%s/seed-%d", v.name, seed) }
    end
  end
  return runs
end

-- A study's records go to <out-root>/<name>/: the name must be the file's, and no other
-- study file of lua/experiments/ may have it, so two study files never share a records
-- folder (the runner also checks the folder's own manifest, M.check_owner).
local function check_identity(P, path, name)
  local base = path:match("([^/]+)%.lua$") or path:match("([^/]+)$")
  if name ~= base then
    P.add("name", string.format("\"%s\" differs from the file name \"%s\": the records " ..
      "folder is <out-root>/%s/, so a study's name must be its file name (rename the file " ..
      "or the name)", name, base, name))
    return
  end
  local other = host.root .. "/lua/experiments/" .. name .. ".lua"
  local mine = sys.realpath(path)
  if sys.stat(other) and sys.realpath(other) ~= mine then
    P.add("name", string.format("\"%s\" is already the name of the study %s: both would " ..
      "write the records folder <out-root>/%s/ (rename this study, file and name)", name,
      other, name))
  end
end

-- Refuses to let the study at `file` write `dir` (<out-root>/<name>/) when the folder's
-- manifest.json or summary.json says another, existing study file made it.
function M.check_owner(dir, file)
  local mine = sys.realpath(file)
  for _, f in ipairs({ "manifest.json", "summary.json" }) do
    local text = io.open(dir .. "/" .. f, "rb")
    if text then
      local ok, doc = pcall(require("cjson").decode, text:read("a"))
      text:close()
      local owner = ok and type(doc) == "table" and type(doc.file) == "string" and doc.file
      if owner then
        local abs = owner:sub(1, 1) == "/" and owner or (host.root .. "/" .. owner)
        local theirs = sys.realpath(abs)
        if theirs and mine and theirs ~= mine then
          user_error(string.format("study: %s: the records folder %s belongs to the study " ..
            "%s (its %s says so): use another --out-root, or rename this study", file, dir,
            abs, f))
        end
      end
    end
  end
end

-- M.load in steps: each checks some fields of the study file's table `t`, reports their
-- problems to P (in the order M.load calls the steps) and fills the normalized study `s`.

-- Unknown and missing top-level fields, name, description.
local function check_top(P, t, path, s)
  local top = set_of(TOP_FIELDS)
  local unknown = new_smallest()
  for k in pairs(t) do
    if not top[k] then unknown.add(tostring(k)) end
  end
  for _, k in ipairs(unknown.list) do
    P.add(k, function() return "unknown field" .. suggest(k, TOP_FIELDS) end, k)
  end
  P.count(unknown.n - #unknown.list)
  for _, k in ipairs({ "name", "description", "variants", "seeds", "analysis" }) do
    if t[k] == nil then P.add(k, "missing", false) end
  end
  if t.name ~= nil then
    if not base.valid_name(t.name) then
      P.add("name", "expected a name of " .. base.NAME_RULE .. " (it names a directory)")
    else
      s.name = t.name
      check_identity(P, path, s.name)
    end
  end
  if t.description ~= nil and type(t.description) ~= "string" then
    P.add("description", "expected a string")
  elseif t.description ~= nil and not utf8.len(t.description) then
    P.add("description", "is not valid UTF-8 (the paper prints it)")
  elseif t.description ~= nil and t.description:find("[%z\1-\8\11-\31\127]") then
    P.add("description", "holds a control character (" .. base.control_char(
      t.description:match("[%z\1-\8\11-\31\127]")) .. "): only text, tabs and newlines")
  end
end

-- extensions: { field = path }, each loaded (lua/repro/core/extension.lua) and checked
-- for the functions it must offer; fills s.extensions = { field = module }.
local function check_extensions(P, t, s)
  s.extensions = {}
  if t.extensions == nil then return end
  if type(t.extensions) ~= "table" or is_list(t.extensions) and next(t.extensions) then
    P.add("extensions", "expected a table { <analysis field> = \"<path of a Lua file from " ..
      "the project root>\" }")
    return
  end
  for _, name in ipairs(sorted_keys(t.extensions)) do
    local path = "extensions." .. tostring(name)
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") or set_of(ANALYSIS_FIELDS)[name]
        or set_of(TOP_FIELDS)[name] then
      P.add(path, "expected the name of an analysis field of the extension's own (not one " ..
        "of the suite's)", tostring(name))
    else
      local ok, m = pcall(extension.load, t.extensions[name], s.file .. ": " .. path)
      if not ok then
        P.add(path, type(m) == "table" and m.message or tostring(m), name)
      elseif type(m.check) ~= "function" or type(m.summarize) ~= "function" then
        P.add(path, t.extensions[name] .. " offers no check and summarize functions", name)
      else
        s.extensions[name] = m
      end
    end
  end
end

-- depends: the studies this one needs first.
local function check_depends(P, t, s)
  s.depends = {}
  if t.depends == nil then return end
  if not is_list(t.depends) then
    P.add("depends", "expected a list of study names (the studies this one needs first)")
    return
  end
  for i, d in ipairs(t.depends) do
    if not base.valid_name(d) then
      P.add("depends[" .. i .. "]", "expected the name of a study", "depends")
    elseif d == t.name then
      P.add("depends[" .. i .. "]", "a study cannot depend on itself", "depends")
    else
      s.depends[#s.depends + 1] = d
    end
  end
end

-- base, the command line's --set, and the variants; returns the variants by name
-- ({path, overrides}) and their names in order.
local function check_configs(P, t, s, set, types)
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

-- seeds: a list, or seeds from power (s.seeds_spec, resolved by check_design).
local function check_seeds(P, t, s)
  s.seeds = {}
  if type(t.seeds) == "table" and (t.seeds.count ~= nil or t.seeds.first ~= nil) then
    s.seeds_spec = check_seeds_spec(P, t.seeds)
    return
  end
  if t.seeds == nil then return end
  if not is_list(t.seeds) or #t.seeds == 0 then
    P.add("seeds", "expected a non-empty list of integers")
    return
  end
  local seen = {}
  for i, seed in ipairs(t.seeds) do
    if math.type(seed) == "float" and seed == math.floor(seed) then
      seed = math.tointeger(seed)
    end
    if math.type(seed) ~= "integer" or seed < 0 then
      P.add("seeds[" .. i .. "]", "expected an integer >= 0, got " .. tostring(seed), "seeds")
    elseif seen[seed] then
      P.add("seeds[" .. i .. "]", "seed " .. seed .. " is listed twice", "seeds")
    else
      seen[seed] = true
      s.seeds[#s.seeds + 1] = seed
    end
  end
end

-- checkpoint_every and jobs.
local function check_run_settings(P, t, s, types)
  s.checkpoint_every = M.CHECKPOINT_EVERY
  if t.checkpoint_every ~= nil then
    if math.type(t.checkpoint_every) ~= "integer" or t.checkpoint_every < 1 then
      P.add("checkpoint_every", "expected an integer >= 1")
    else
      s.checkpoint_every = t.checkpoint_every
    end
  end
  s.jobs = 1
  if t.jobs ~= nil then
    if math.type(t.jobs) ~= "integer" or t.jobs < 1 then
      P.add("jobs", "expected an integer >= 1")
    else
      s.jobs = t.jobs
    end
  end
  if t.factor ~= nil then
    if type(t.factor) ~= "string" or not types[t.factor] then
      P.add("factor", "expected the config key whose values the variants compare (a " ..
        "key of `bin/repro help`)", tostring(t.factor))
    else
      s.factor = t.factor
    end
  end
end

-- The M.MAX_SEEDS / M.MAX_RUNS ceiling, unless opts.allow_large.
local function check_size(P, s, opts)
  if opts.allow_large then return end
  if #s.seeds > M.MAX_SEEDS then
    P.add("seeds", string.format("%d seeds, more than the %d a study may have without " ..
      "--allow-large", #s.seeds, M.MAX_SEEDS), "seeds")
  elseif #s.seeds * #s.variants > M.MAX_RUNS then
    P.add(nil, string.format("%d variants x %d seeds = %d runs, more than the %d a study " ..
      "may have without --allow-large", #s.variants, #s.seeds, #s.seeds * #s.variants,
      M.MAX_RUNS))
  end
end

-- Every variant's full config against the engine's rules and the corpus (once per
-- variant: the seed does not change validity), each problem at the field that set the key.
local function check_engine(P, s)
  for _, v in ipairs(s.variants) do
    local o = M.overrides(s, v)
    o.seed = s.seeds[1]
    local cok, cerr = pcall(record.resolve, o)
    if cok then
      cok, cerr = pcall(engine.check, cerr)
    elseif type(cerr) == "table" then
      cerr = cerr.message
    end
    if not cok then
      local msg = tostring(cerr):gsub("^%a+: ", "", 1)
      -- the keys the message names ("warmup=30: must not exceed iters=10"), first the
      -- one it is about; it is reported where the first of them is set: the variant,
      -- else --set, else base (once for every variant it breaks)
      local keys = {}
      for k in msg:gmatch("%f[%w_]([%a_][%w_]*)=") do keys[#keys + 1] = k end
      local first = keys[1] or msg:match("^([%a_][%w_]*):")
      keys[#keys + 1] = first
      local where, key = "variants[" .. v.path:match("%d+") .. "] (" .. v.name .. ")", first
      local found = false
      for _, place in ipairs({ "variant", "set", "base" }) do
        for _, k in ipairs(keys) do
          if not found then
            if place == "variant" and v.overrides[k] ~= nil then
              where, key, found = v.path .. "." .. k, k, true
            elseif place == "set" and s.set and s.set[k] ~= nil then
              where, key, found = "--set " .. k, k, true
            elseif place == "base" and s.base[k] ~= nil then
              where, key, found = "base." .. k, k, true
            end
          end
        end
      end
      P.add(where, msg, key)
    end
  end
end

-- Loads and validates the study at `path`.  `set` (optional) holds config overrides
-- from the command line applied to every run last.  Returns the normalized study:
-- name, description, file, source, base, variants = {{name, overrides}}, seeds,
-- analysis, checkpoint_every, jobs, set, runs = {{variant, seed, cfg, label, rel}}.
-- Raises a user error ({message=}) listing every problem.  opts.allow_large lifts the
-- M.MAX_SEEDS / M.MAX_RUNS ceiling.
function M.load(path, set, opts)
  opts = opts or {}
  depends.begin(M.results_root(opts), false)
  local t, src = evaluate(path)
  local P = problems(path, src)
  if type(t) ~= "table" then
    P.add(nil, "the study file must return a table, got " .. type(t))
    P.raise()
  end
  local types = {}
  for _, k in ipairs(engine.keys()) do types[k.name] = k.type end
  local s = { file = path, source = src, description = t.description }
  check_top(P, t, path, s)
  check_depends(P, t, s)
  check_extensions(P, t, s)
  local variants, variant_names = check_configs(P, t, s, set, types)
  check_seeds(P, t, s)
  check_run_settings(P, t, s, types)
  if t.analysis ~= nil then
    s.analysis = check_analysis(P, t.analysis, variants, variant_names, s.extensions)
  end
  if s.analysis then check_design(P, s, opts, t.seeds) end
  if s.analysis and s.analysis.sweep then
    sweep.check_design(P, s.analysis.sweep, #s.seeds, s.analysis.alpha)
  end
  for name, m in pairs(s.extensions) do
    if s.analysis and s.analysis[name] ~= nil and m.check_design then
      m.check_design(P, s.analysis[name], #s.seeds, s.analysis.alpha)
    end
  end
  check_size(P, s, opts)
  P.raise()
  check_engine(P, s)
  P.raise()
  s.runs = expand(s)
  return s
end

-- The studies the study at `path` needs first: those it reads (repro.best_lr,
-- repro.result), its pilot and its `depends` (lua/repro/study/depends.lua), as a sorted list,
-- from evaluations in listing mode (a study that has no results yet reads as a
-- placeholder: nil, else 0, else an empty table, until the study returns its table).
-- Its results are read under M.results_root(opts).  Raises a user error when the study
-- file fails for another reason; when it fails with every placeholder, its dependencies
-- are the studies it read (its `depends` cannot be known then).
function M.dependencies(path, opts)
  local reads, msg = {}, nil
  for _, kind in ipairs(depends.PLACEHOLDERS) do
    depends.begin(M.results_root(opts), kind)
    local listed = evaluate(path, true)
    if type(listed) ~= "table" or listed.reads == nil then
      user_error(string.format("study: %s: the study file must return a table", path))
    end
    for _, n in ipairs(listed.reads) do reads[#reads + 1] = n end
    msg = tostring(listed.error)
    msg = msg:sub(1, #path + 1) == path .. ":" and "study: " .. msg or
      string.format("study: %s: %s", path, msg)
    if listed.ok then
      listed.reads = reads
      return depends.collect(listed), listed
    end
    if (listed.unread or 0) == 0 then user_error(msg) end
  end
  -- it fails with every placeholder: what it read is all that is known
  return depends.collect({ reads = reads }), { reads = reads, ok = false, error = msg }
end

-- The study's directory under an output root.
function M.dir(out_root, s)
  return out_root .. "/" .. s.name
end

return M
