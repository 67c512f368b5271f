-- Finished run records read back for looking across runs: `bin/repro compare` and
-- `bin/repro export` (lua/repro/cli/compare.lua, lua/repro/cli/export.lua).
-- A target is a study name (its folder under the records root; `./X` names a directory),
-- a study file (lua/experiments/X.lua), or a directory (a path starting with /, ./ or
-- ../, or . or ..; another relative path under the records root first): every run record
-- at most four levels below it is read through lua/repro/record/reader.lua.  A refused
-- record, a symbolic link, a bad name or an undeclared variant or seed is skipped with a
-- warning.  Each run read is { study, variant, seed, dir, config, metrics, provenance,
-- stale }.
local engine = require "engine"
local json = require "repro.core.json"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local host = require "repro.host"
local reader = require "repro.record.reader"
local set = require "repro.record.set"
local study_records = require "repro.study.records"
local record = require "repro.record"
local records = require "repro.analysis.records"
local base = require "repro.core.base"

local M = {}

local user_error = base.user_error

-- The records root: out_root, else $REPRO_EXPERIMENTS, else <project root>/experiments.
M.root = fs.records_root

local function is_dir(path)
  local st = sys.stat(path)
  return st ~= nil and st.type == "dir"
end

local function is_run(dir)
  local a, b = sys.stat(dir .. "/config.json"), sys.stat(dir .. "/metrics.json")
  return a ~= nil and a.type == "file" and b ~= nil and b.type == "file"
end

-- The directory a target names (see the header); who names the command in errors.
local function target_dir(target, root, who)
  local name = target:match("([^/]+)%.lua$")
  if name then
    if not is_dir(root .. "/" .. name) then
      user_error("%s: %s: the study has no records under %s (run it first: bin/repro run %s)",
        who, target, fs.shown(root .. "/" .. name), target)
    end
    return root .. "/" .. name
  end
  local under_root = root .. "/" .. target
  -- a plain name is a study of the records root, never a folder of the working directory
  -- of that name (`compare tasks` from the project root is the tasks study, not tasks/)
  if not target:find("/", 1, true) and target ~= "." and target ~= ".." then
    if is_dir(under_root) then return under_root end
    user_error("%s: %s: no study with records under %s%s", who, target, fs.shown(root),
      is_dir(target) and string.format(" (for the folder %s here, give it as ./%s)", target,
      target) or "")
  end
  -- a path: as given when it starts with /, ./ or ../, else under the records root first
  local explicit = target:match("^/") or target:match("^%.%.?/") or target == "." or
    target == ".."
  if not explicit and is_dir(under_root) then return under_root end
  if is_dir(target) then return target end
  user_error("%s: %s: neither a directory nor a study with records under %s", who, target,
    fs.shown(root))
end

-- Every run directory at or below dir (depth <= 4), in name order, and the symbolic
-- links met on the way (never followed); corrupt-* folders (records put aside), slurm/
-- and the folders of `skip` (a set: study folders already read) are not searched.
local function find_runs(dir, depth, out, links, skip)
  if is_run(dir) then
    out[#out + 1] = dir
    return
  end
  if depth == 0 then return end
  for _, n in ipairs(sys.listdir(dir) or {}) do
    local sub = dir .. "/" .. n
    local st = sys.lstat(sub)
    if st and st.type == "link" then
      links[#links + 1] = sub
    elseif st and st.type == "dir" and not record.is_aside(n) and n ~= "slurm" and
        not skip[sub] then
      find_runs(sub, depth - 1, out, links, skip)
    end
  end
end

-- The full config of a record's config.json: defaults, the record's values, derived
-- keys resolved from their source (resid_rescale, a boolean, from the init scheme:
-- on under gpt2, off under torch; engine/config.h).
local function full_config(cfg)
  local full = engine.defaults()
  for k, v in pairs(cfg) do full[k] = v end
  for _, k in ipairs(engine.keys()) do
    if full[k.name] == nil and k.derived_from then
      local from = full[k.derived_from]
      if k.name == "resid_rescale" then from = from == "gpt2" end
      full[k.name] = from
    end
  end
  full.threads = nil
  return full
end

-- The config keys a run table has, in engine.keys() order (threads left out).
function M.config_keys()
  local keys = {}
  for _, k in ipairs(engine.keys()) do
    if k.name ~= "threads" then keys[#keys + 1] = k.name end
  end
  return keys
end

-- The column of metric m in a table that also has config keys: m, or "metrics.<m>" when
-- a config key has that name (embed_norm: the config's norm, the metric's norm value).
function M.metric_column(m)
  for _, k in ipairs(engine.keys()) do
    if k.name == m then return "metrics." .. m end
  end
  return m
end

-- The metrics read_run computes from log.csv (the rest come from metrics.json).
M.LOG_METRICS = { n_spikes = true, max_loss_ratio = true }

-- One run record, already accepted by the record reader (rec: reader.read's result);
-- with_derived adds M.LOG_METRICS, read from log.csv row by row.  run.stale lists the
-- task files changed since the record was scored on them (record.stale_task_files; cache
-- as its).
local function read_run(rec, with_derived, cache)
  local dir, m = rec.dir, rec.metrics
  local metrics = {}
  for k, v in pairs(m) do
    if type(k) == "string" and (type(v) == "number" or type(v) == "boolean") then
      metrics[k] = v
    end
  end
  local log_sha = rec.verified.sha256["log.csv"]
  local loss, n
  if with_derived then loss, n = records.log_losses(dir, log_sha) end
  if loss then
    local n_spikes, max_ratio = records.spikes(loss, n)
    metrics.n_spikes = n_spikes
    metrics.max_loss_ratio = not records.masked("max_loss_ratio", m.diverged == true) and
      max_ratio or nil
  end
  local variant_dir, seed_dir = dir:match("([^/]+)/([^/]+)/*$")
  local run = { dir = dir, config = full_config(rec.config), metrics = metrics,
    log_sha256 = log_sha, seed = math.tointeger(rec.config.seed), variant = variant_dir or dir,
    study = dir:match("([^/]+)/[^/]+/[^/]+/*$") or "",
    stale = record.stale_task_files(rec.verified.manifest, cache) }
  if not record.seed_of_dir(seed_dir) then
    -- a run record outside the <study>/<variant>/seed-<s>/ layout: named by its folder
    run.variant, run.study = dir:match("([^/]+)/*$") or dir, ""
  end
  return run
end

-- Why the run read from rd (at or below the target top) breaks the name rules (the
-- header), or nil.
local function misnamed(run, rd, top)
  local names = {}
  for part in rd:sub(#top + 1):gmatch("[^/]+") do names[#names + 1] = { part, "folder name" } end
  if run.study ~= "" then names[#names + 1] = { run.study, "study folder" } end
  names[#names + 1] = { run.variant, "folder name" }
  for _, n in ipairs(names) do
    if not base.valid_name(n[1]) then
      return string.format("the %s '%s' is not a name (%s)", n[2], n[1], base.NAME_RULE)
    end
  end
  local seed_dir = rd:match("([^/]+)/*$")
  local s = seed_dir:match("^seed%-(%d+)$")
  if s and record.seed_of_dir(seed_dir) == nil then
    return string.format("its folder %s is not a seed folder's one spelling (seed-%s)", seed_dir,
      tostring(math.tointeger(tonumber(s))))
  end
  if s and record.seed_of_dir(seed_dir) ~= run.seed then
    return string.format("its folder %s holds a run of seed %s", seed_dir, tostring(run.seed))
  end
  return nil
end

-- The position of each variant in the study's own order (its summary.json's variants,
-- when it has one), by the study's records folder.
local variant_order = setmetatable({}, { __index = function(cache, study_dir)
  local pos = {}
  local sum = json.table_of(fs.read(study_dir .. "/summary.json"))
  if sum and type(sum.variants) == "table" then
    for i, v in ipairs(sum.variants) do
      if type(v) == "table" and type(v.name) == "string" then pos[v.name] = i end
    end
  end
  cache[study_dir] = pos
  return pos
end })

-- Runs of one target in study order: study folder, then the study's variant order
-- (else by name), then seed.
local function sort_runs(runs)
  local function key(r)
    local study_dir = r.dir:match("^(.*)/[^/]+/[^/]+/*$") or ""
    return study_dir, variant_order[study_dir][r.variant] or math.huge
  end
  table.sort(runs, function(a, b)
    local da, va = key(a)
    local db, vb = key(b)
    if da ~= db then return da < db end
    if va ~= vb then return va < vb end
    if a.variant ~= b.variant then return a.variant < b.variant end
    return (a.seed or 0) < (b.seed or 0)
  end)
  return runs
end

-- The runs of the targets (a list; none: every study under the records root), in the
-- order of the targets, then of the studies' folders, their variants and seeds.  A study's
-- folder is read as its record set (lua/repro/study/records.lua): its members only, each
-- with its provenance (run.provenance: record/set.lua assess); what else it holds is named
-- as not part of the study, and its counts in one line (set.count_text).  Records of no
-- study (a `train --out` folder) are read as they are, under the name rules.  who names
-- the command in messages; say receives warnings (records skipped, adopted ones named).
-- opts: out_root, with_derived (false: without the M.LOG_METRICS, which need log.csv),
-- log (true: the caller reads log.csv itself).  Without either, log.csv is never read:
-- record.verify leaves it to any later reader (its `log` option).
function M.collect(targets, opts, who, say)
  local root = M.root(opts.out_root)
  local vopts = opts.with_derived == false and not opts.log and { log = false } or nil
  if #targets == 0 then
    if not is_dir(root) then user_error("%s: no records root %s", who, fs.shown(root)) end
    targets = { root }
  end
  local runs, seen, task_sums = {}, {}, {}
  local function warn(dir, state, why)
    local w = reader.warning(who, dir, state, why)
    if w then say("%s", w) end
  end
  -- rec read from rd, with its provenance level, into the list mine (once per real path)
  local function take(mine, rd, rec, prov)
    local real = sys.realpath(rd) or rd
    if seen[real] then return end
    seen[real] = true
    local run = read_run(rec, opts.with_derived ~= false, task_sums)
    run.provenance = prov
    if prov and prov.level == "adopted" then
      say("%s: %s: %s", who, base.printable(fs.shown(rd)), set.level_text(prov))
    end
    if #run.stale > 0 then say("%s", M.stale_line(who, rd, run.stale)) end
    mine[#mine + 1] = run
  end
  local function read_study(mine, sdir, d)
    local sr = study_records.read(sdir, d, vopts)
    for _, b in ipairs(sr.refused) do warn(b.dir, b.state, b.why) end
    for _, m in ipairs(sr.records) do
      local rec, why = reader.load(m.dir, m.kept)
      if rec and math.tointeger(rec.config.seed) ~= m.seed then
        say("%s: %s: skipped: its folder seed-%d holds a run of seed %s", who, fs.shown(m.dir),
          m.seed, base.printable(tostring(rec.config.seed)))
      elseif rec then
        take(mine, m.dir, rec, m.provenance)
      else
        say("%s: %s: skipped: %s", who, fs.shown(m.dir), why)
      end
    end
    for _, x in ipairs(sr.outside) do say("%s: %s", who, set.outside_text(d.name, x)) end
    say("%s: %s: %s", who, base.printable(d.name), set.count_text(sr.counts))
  end
  -- one record of no study, under the name rules, its provenance assessed alone
  local function read_loose(rd, top)
    local rec, state, why = reader.read(rd, top, vopts)
    local bad = rec and misnamed(read_run(rec, false, task_sums), rd, top)
    if bad then
      say("%s: %s: skipped: %s", who, fs.shown(rd), bad)
    elseif rec then
      return { dir = rd, kept = rec.verified, rec = rec }
    else
      warn(rd, state, why)
    end
  end
  for _, t in ipairs(targets) do
    local dir = target_dir(t, root, who):gsub("/+$", "")
    local mine = {}
    local d = study_records.design_of(dir)
    local sdir, sd = study_records.study_of_record(dir)
    if d then
      read_study(mine, dir, d)
    elseif sdir and is_run(dir) then
      if set.is_member(sd, sdir, dir) then
        local rec, state, why = reader.read(dir, sdir, vopts)
        if rec then
          take(mine, dir, rec, set.assess({ { dir = dir, kept = rec.verified } },
            sdir:match("^(.*)/[^/]+$") or ".", vopts)[dir])
        else
          warn(dir, state, why)
        end
      else
        for _, x in ipairs(set.outsiders(sd, sdir)) do
          if x.path == dir then say("%s: %s", who, set.outside_text(sd.name, x)) end
        end
      end
    else
      -- the study folders under it, then the records of no study
      local studies = {}
      study_records.each_study(dir, function(sub, sdesign)
        studies[sub] = true
        read_study(mine, sub, sdesign)
      end)
      local found, links = {}, {}
      find_runs(dir, 4, found, links, studies)
      for _, l in ipairs(links) do
        say("%s: %s: skipped: a symbolic link (records trees hold none; not followed)", who,
          fs.shown(l))
      end
      local loose = {}
      for _, rd in ipairs(found) do loose[#loose + 1] = read_loose(rd, dir) end
      for _, r in ipairs(loose) do
        take(mine, r.dir, r.rec, set.assess({ r }, r.dir:match("^(.*)/[^/]+/[^/]+/[^/]+$") or
          ".", vopts)[r.dir])
      end
    end
    for _, r in ipairs(sort_runs(mine)) do runs[#runs + 1] = r end
  end
  if #runs == 0 then
    user_error("%s: no finished run records under %s", who, table.concat(targets, ", "))
  end
  return runs
end

-- The mark of a run whose task metrics came from task files that changed since
-- (run.stale), in verify's words: "<who>: <dir>: STALE: scored on task files that changed
-- since: ...; its task metrics are not these files'".
function M.stale_line(who, dir, stale)
  return string.format("%s: %s: STALE: %s; its task metrics are not these files'", who,
    base.printable(fs.shown(dir)), record.stale_text(stale))
end

-- A number as the shortest text that reads back as the same double (integers as such).
function M.num(x)
  if math.type(x) == "integer" or base.whole(x) then return string.format("%d", x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  for p = 14, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

-- A text cell that is a real number (-0.19, 1e-3, +5, .5, inf, -inf, nan) in the
-- notation pandas and R read as a number: kept as it is by M.csv_field.
local function numeric_text(s)
  local body = s:match("^[+-]?(.*)$")
  if body == "inf" or body == "nan" then return true end
  local mant = body:match("^(.-)[eE][+-]?%d+$") or body
  return mant:match("^%d+%.?%d*$") ~= nil or mant:match("^%.%d+$") ~= nil
end

-- Spreadsheets read a cell that starts with one of these as a formula (CSV injection):
-- = + - @, tab, CR, their full-width forms, also after leading blanks.
local FORMULA_START = { "=", "+", "-", "@", "\t", "\r", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}",
  "\u{FF20}" }

-- A text cell as a spreadsheet cannot run it: one that would start a formula (after any
-- leading blanks) gets a leading apostrophe, the usual neutralization, unless it is a
-- real number (numeric_text), which stays a number for pandas and R.
function M.csv_text(s)
  if numeric_text(s) then return s end
  local rest = s:match("^ *(.*)$")
  for _, c in ipairs(FORMULA_START) do
    if rest:sub(1, #c) == c then return "'" .. s end
  end
  return s
end

-- A value as a CSV field, header or cell: numbers by M.num (so -0.19, 1e-05 and -inf stay
-- numbers), booleans true/false, nil empty, text through M.csv_text; quoted when it holds
-- a comma, a quote or a line break.  Every CSV the suite writes (export, export --curves,
-- compare --csv) is made of these fields.
function M.csv_field(v)
  if v == nil then return "" end
  if type(v) == "number" then return M.num(v) end
  local s = type(v) == "string" and M.csv_text(v) or tostring(v)
  if s:find('[,"\r\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

function M.csv_line(fields)
  local out = {}
  for i = 1, fields.n or #fields do out[i] = M.csv_field(fields[i]) end
  return table.concat(out, ",") .. "\n"
end

-- The text as it reaches stdout: as it is for a file or a pipe (the data for pandas, R
-- or jq), through base.printable (newlines kept) when stdout is a terminal, so a value
-- from a record never drives it.
local function to_stdout(text)
  io.write(host.isatty(1) and base.printable(text, true) or text)
end

-- Writes text to path atomically, or to stdout (to_stdout) without a path.
function M.emit(text, path)
  if path then fs.write_atomic(path, text) else to_stdout(text) end
end

-- A stream of output text for path (through the atomic writer, fs.atomic: renamed over
-- path by close, removed by abort: never half-written under the real name), or for stdout
-- without a path; written in chunks of about 64 KiB, so a long output is never held.
function M.stream(path)
  local w = path and fs.atomic(path)
  local buf, size = {}, 0
  local function flush()
    if #buf == 0 then return end
    local text = table.concat(buf)
    buf, size = {}, 0
    if not path then return to_stdout(text) end
    local ok, err = w:write(text)
    if not ok then
      w:abort()
      user_error("filesystem: %s", err)
    end
  end
  local st = {}
  function st.write(text)
    buf[#buf + 1] = text
    size = size + #text
    if size >= 65536 then flush() end
  end
  function st.close()
    flush()
    if not path then return end
    local ok, err = w:commit()
    if not ok then user_error("filesystem: %s", err) end
  end
  function st.abort()
    if path then w:abort() end
  end
  return st
end

return M
