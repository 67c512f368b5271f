-- Study files: load, validate and expand into runs.
-- M.load(path, set, opts) evaluates a study file in the sandbox (lua/lsandbox.c, M.LIMITS),
-- checks every field before anything runs (the analysis in rule.lua, seeds from power in
-- power.lua), reports every problem in one message, and returns the normalized study with
-- its runs; M.dependencies lists the studies it needs first.  The fields, the sandbox and
-- the limits: lua/experiments/README.md.
--
-- M.API: the host functions a study may call, as repro.<name>(...).  Add one as
-- `M.API.name = function(...) ... end` from the module that implements it: it runs in the
-- evaluating child, in the host's state, with copies of the study's arguments; it must be a
-- pure, read-only function of its arguments and of files (what it changes is lost with
-- the child) and return plain data.  Its error reads `study: FILE:LINE: repro.name:
-- message`.  Say in lua/experiments/README.md what it returns.
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local engine = require "engine"
local record = require "repro.record"
local sandbox = require "repro.sandbox"
local sys = require "repro.sys"
local host = require "repro.host"
local depends = require "repro.study.depends"
local sweep = require "repro.study.sweep"
local sequential = require "repro.study.sequential"
local prob = require "repro.study.problems"
local rule = require "repro.study.rule"
local power = require "repro.study.power"
local configs = require "repro.study.configs"
local extension = require "repro.core.extension"

local M = {}

M.CHECKPOINT_EVERY = 50

-- From the modules the checks live in (rule.lua, power.lua, problems.lua), under the
-- names the rest of the suite knows.
M.metric_names, M.analysis_fields, M.RULE = rule.metric_names, rule.analysis_fields, rule.RULE
M.is_requested_metric = rule.is_requested_metric
M.seeds_text, M.results_root = power.seeds_text, power.results_root
M.MAX_PROBLEMS = prob.MAX_PROBLEMS
local sorted_keys, set_of, suggest = base.sorted_keys, base.set_of, base.suggest
local is_list = prob.is_list

local TOP_FIELDS = { "name", "description", "base", "variants", "seeds", "analysis",
  "checkpoint_every", "jobs", "keep_model", "depends", "extensions", "factor" }
local user_error = base.user_error

-- The sandbox's limits, defined once in lua/lsandbox.c (sandbox.LIMITS: memory of the
-- study's Lua state, VM instructions, wall-clock seconds, size and depth of the returned
-- data); a copy, which a test may tighten.
M.LIMITS = {}
for k, v in pairs(sandbox.LIMITS) do M.LIMITS[k] = v end
M.MAX_SOURCE_BYTES = 1024 * 1024
-- The longest description: one line of the paper (TeX), the HTML report and the terminal
-- print it; 2000 bytes is a long paragraph and far below any of their limits.
M.MAX_DESCRIPTION_BYTES = 2000
-- Plans above these need opts.allow_large (`bin/repro run --allow-large`).
M.MAX_SEEDS, M.MAX_RUNS = 100, 1000
M.API = {}
-- Another study's results (lua/repro/study/depends.lua): repro.best_lr, repro.result.
for name, f in pairs(depends.API) do M.API[name] = f end

-- The limits of the next of several evaluations of one file that share one budget of
-- M.LIMITS.wall_s seconds (the listing's evaluations with each placeholder, the script
-- guard's): started at t0 (host.now()); a user error naming the file once it is spent.
function M.shared_limits(path, t0)
  local left = M.LIMITS.wall_s - (host.now() - t0)
  if left <= 0.05 then
    user_error("study: %s: exceeded the %g s time limit of a study file " ..
      "(lua/lsandbox.c, sandbox.LIMITS; one budget for all the evaluations of the file)",
      path, M.LIMITS.wall_s)
  end
  local l = {}
  for k, v in pairs(M.LIMITS) do l[k] = v end
  l.wall_s = left
  return l
end

-- The study file's source, evaluated in the sandbox (limits: M.LIMITS unless given): the
-- returned value, or a user error naming the file and what failed.
local function evaluate(path, listing, limits)
  local why = fs.path_problem(path)
  if why then user_error("study: %s", base.printable(why)) end
  local st = sys.stat(path)
  if st and st.type ~= "file" then
    user_error("study: %s: not a regular file (%s)", path,
      st.type == "dir" and "a directory" or "a device, pipe or socket")
  end
  if st and st.size > M.MAX_SOURCE_BYTES then
    user_error("study: %s: %d bytes, more than the %d MiB a study file may have", path,
      st.size, M.MAX_SOURCE_BYTES // (1024 * 1024))
  end
  local src, err = fs.read(path, M.MAX_SOURCE_BYTES)
  if not src then
    user_error("study: %s: cannot read the study file: %s", path, base.printable(tostring(err)))
  end
  local ok, value, msg
  if listing then
    ok, value, msg = sandbox.eval(depends.listing_source(src), "@" .. path, limits or M.LIMITS,
      depends.listing_api(M.API))
    -- a syntax error is reported as the plain source gives it
    if not ok and value == "syntax" then listing = false end
  end
  if not listing then ok, value, msg = sandbox.eval(src, "@" .. path, limits or M.LIMITS, M.API) end
  if ok then return value, src end
  local why = M.sandbox_failure(value, msg, "a study file")
  if why then user_error("study: %s: %s", path, why) end
  -- syntax and runtime errors: the message names file:line when Lua knows them
  if msg:sub(1, #path + 1) == path .. ":" then user_error("study: %s", msg) end
  user_error("study: %s: %s", path, msg)
end

-- Why the sandbox stopped evaluating `what` (a study file, the paper's manifest), from
-- its failure code and message, in words; nil for a syntax or runtime error.
function M.sandbox_failure(code, msg, what)
  local L = M.LIMITS
  local where = " of " .. what .. " (lua/lsandbox.c, sandbox.LIMITS)"
  return ({
    memory = string.format("exceeded the %d MiB memory limit", L.memory_bytes // (1024 * 1024))
      .. where,
    instructions = string.format("exceeded the limit of %d Lua instructions", L.instructions)
      .. where .. ": an endless loop?",
    time = string.format("exceeded the %g s time limit", L.wall_s) .. where,
    result = "what it returns is not plain data: " .. tostring(msg),
    crashed = "its evaluation failed: " .. tostring(msg),
  })[code]
end

-- The runs of a valid study: seed-major (every variant of the first seed, then the
-- next seed), so an interrupted study has complete pairs early.
local function expand(s)
  local runs = {}
  for _, seed in ipairs(s.seeds) do
    for _, v in ipairs(s.variants) do
      local o = configs.overrides(s, v)
      o.seed = seed
      local cfg = record.resolve(o)
      cfg.threads = nil
      local rel = string.format("%s/seed-%d", v.name, seed)
      runs[#runs + 1] = { variant = v.name, seed = seed, cfg = cfg, label = rel, rel = rel }
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
-- manifest.json or summary.json says another, existing study file made it.  Both come
-- with the records tree, so both are read by the safe reader (fs.read: a regular file,
-- no link, size-bounded, opened non-blocking): one that exists but is not such a file (a
-- FIFO, a link to /dev/zero) is refused, naming it, never waited on or read without end.
function M.check_owner(dir, file)
  local mine = sys.realpath(file)
  for _, f in ipairs({ "manifest.json", "summary.json" }) do
    local path = dir .. "/" .. f
    if sys.lstat(path) then
      local text, rerr = fs.read(path)
      if not text then
        user_error("study: %s: the records folder's %s cannot be read: %s", file, f,
          base.printable(tostring(rerr)))
      end
      local doc = json.table_of(text)
      local owner = doc and type(doc.file) == "string" and doc.file
      if owner then
        local abs = owner:sub(1, 1) == "/" and owner or (host.root .. "/" .. owner)
        local theirs = sys.realpath(abs)
        if theirs and mine and theirs ~= mine then
          user_error("study: %s: the records folder %s belongs to the study %s (its %s " ..
            "says so): use another --out-root, or rename this study", file, dir, abs, f)
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
  prob.unknown_keys(P, t, function(k) return top[k] end, "",
    function(k) return "unknown field" .. suggest(k, TOP_FIELDS) end)
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
  elseif t.description ~= nil and #t.description > M.MAX_DESCRIPTION_BYTES then
    P.add("description", string.format("is %d bytes, more than the %d a description may " ..
      "have (the paper, the HTML report and the terminal print it on one line; TeX's line " ..
      "buffer is finite)", #t.description, M.MAX_DESCRIPTION_BYTES))
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
    P.add("extensions", "expected a table { <analysis field> = \"<name of an extension in " ..
      "paper/lib/ or extensions/>\" }")
    return
  end
  for _, name in ipairs(sorted_keys(t.extensions)) do
    local path = "extensions." .. tostring(name)
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") or set_of(rule.ANALYSIS_FIELDS)[name]
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


-- seeds: a list, or seeds from power (s.seeds_spec, resolved by check_design).
local function check_seeds(P, t, s)
  s.seeds = {}
  if type(t.seeds) == "table" and (t.seeds.count ~= nil or t.seeds.first ~= nil) then
    s.seeds_spec = power.check_spec(P, t.seeds)
    return
  end
  if t.seeds == nil then return end
  if not is_list(t.seeds) or #t.seeds == 0 then
    P.add("seeds", "expected a non-empty list of integers")
    return
  end
  local seen = {}
  for i, seed in ipairs(t.seeds) do
    seed = prob.as_integer(seed)
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

-- checkpoint_every, keep_model and jobs.
local function check_run_settings(P, t, s, types)
  s.checkpoint_every = P.check("checkpoint_every", t.checkpoint_every, prob.integer_from(1),
    "expected an integer >= 1") or M.CHECKPOINT_EVERY
  s.keep_model = P.check("keep_model", t.keep_model, prob.boolean, "expected true or false")
    or nil
  s.jobs = P.check("jobs", t.jobs, prob.integer_from(1), "expected an integer >= 1") or 1
  s.factor = P.check("factor", t.factor, function(v) return types[v] ~= nil end,
    "expected the config key whose values the variants compare (a key of `bin/repro help`)",
    tostring(t.factor))
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
  local P = prob.collector(path, src)
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
  local variants, variant_names = configs.check(P, t, s, set, types)
  check_seeds(P, t, s)
  check_run_settings(P, t, s, types)
  if t.analysis ~= nil then
    s.analysis = rule.check(P, t.analysis, variants, variant_names, s.extensions)
  end
  local an = s.analysis
  if an then
    power.check_design(P, s, opts, t.seeds)
    if an.sequential then sequential.check_design(P, an.sequential, #s.seeds) end
    if an.sweep then sweep.check_design(P, an.sweep, #s.seeds, an.alpha) end
    for _, name in ipairs(base.sorted_keys(s.extensions)) do
      local m = s.extensions[name]
      if an[name] ~= nil and m.check_design then
        m.check_design(P, an[name], #s.seeds, an.alpha)
      end
    end
  end
  check_size(P, s, opts)
  P.raise()
  configs.check_engine(P, s)
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
-- are the studies it read (its `depends` cannot be known then).  Its evaluations share one
-- time budget, a study file's M.LIMITS.wall_s (M.shared_limits), not one each; the
-- instruction and memory limits hold for each evaluation.
function M.dependencies(path, opts)
  local reads, msg = {}, nil
  local t0 = host.now() -- one time budget for the file's evaluations, not one each
  for _, kind in ipairs(depends.PLACEHOLDERS) do
    depends.begin(M.results_root(opts), kind)
    local listed = evaluate(path, true, M.shared_limits(path, t0))
    if type(listed) ~= "table" or listed.reads == nil then
      user_error("study: %s: the study file must return a table", path)
    end
    for _, n in ipairs(listed.reads) do reads[#reads + 1] = n end
    msg = tostring(listed.error)
    msg = msg:sub(1, #path + 1) == path .. ":" and "study: " .. msg or
      string.format("study: %s: %s", path, msg)
    if listed.ok then
      listed.reads = reads
      return depends.collect(listed), listed
    end
    if (listed.unread or 0) == 0 then user_error("%s", msg) end
  end
  -- it fails with every placeholder: what it read is all that is known
  return depends.collect({ reads = reads }), { reads = reads, ok = false, error = msg }
end

-- The study's directory under an output root.
function M.dir(out_root, s)
  return out_root .. "/" .. s.name
end

return M
