-- Run records (docs/DESIGN.md "Run records"): DIR/config.json, manifest.json, log.csv,
-- metrics.json, and with opts.keep_model the final weights, model.rptf.  M.run trains a
-- run into its record, M.status says what a record is for a config (done, partial,
-- corrupt, ...), M.verify checks its checksums, M.put_aside moves a corrupt or stale one
-- aside and M.rehash checksums one after a review.  The checksums detect corruption, not
-- forgery: only retraining (`bin/repro audit`) shows a forged record.
local engine = require "engine"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local host = require "repro.host"
local sys = require "repro.sys"
local proc = require "repro.proc"
local base = require "repro.core.base"
local provenance = require "repro.record.provenance"
local tasks = require "repro.tasks"

local M = {}

-- A kept model's file name in its record.
M.MODEL = "model.rptf"

-- A log.csv column by its name or its alias: the periodic validation diagnostics are
-- logged as d_<name> (d_val_loss, d_val_acc, ...: engine/train.h), and <name> names them
-- too wherever a column is typed or shown (export --columns, the report's curves), while
-- the files keep their column names.  known: the set of columns; returns the column or nil.
function M.log_column(name, known)
  return known[name] and name or known["d_" .. name] and "d_" .. name or nil
end

-- The name a log column is shown by: d_<name> as <name> (M.log_column's alias).
function M.log_column_label(column)
  return (column:gsub("^d_", ""))
end

-- The files manifest.json's `sha256` covers.
M.HASHED = { "config.json", "log.csv", "metrics.json" }
-- A run with a task suite (config key tasks) also has its per-item correctness file,
-- covered by the same checksums (and by set.digest) when present.
M.TASKS_FILE = "tasks.csv"
local HASHED_WITH_TASKS = { "config.json", "log.csv", "metrics.json", M.TASKS_FILE }
local function hashed(dir, sums)
  local named = type(sums) == "table" and sums[M.TASKS_FILE] ~= nil
  return (named or sys.lstat(dir .. "/" .. M.TASKS_FILE)) and HASHED_WITH_TASKS or M.HASHED
end

-- The seed a run folder's name gives, by its one canonical spelling only: "seed-<s>",
-- <s> a non-negative integer in decimal without leading zeros (seed-0, seed-7, seed-12);
-- nil for any other name (seed-01, seed-001, seed-+1, seed-7x), so one seed has one
-- folder and is counted once.
function M.seed_of_dir(name)
  local digits = type(name) == "string" and name:match("^seed%-(%d+)$")
  local n = digits and #digits <= 18 and math.tointeger(tonumber(digits))
  return n and string.format("%d", n) == digits and n or nil
end

-- A record file is a regular file: a directory in its place (a blocked write) is not,
-- and neither is a symbolic link (records trees hold none: never followed).
local function is_file(path)
  local st = sys.lstat(path)
  return st ~= nil and st.type == "file"
end

-- Fields of engine.train's result that are not results: timings go to the manifest,
-- run state is implied by the record being done.
local NOT_RESULTS = { tokens_per_s = true, eval_tokens_per_s = true, wall_s = true,
  interrupted = true, stopped = true, resumed_from = true }

-- The full config of overrides over the defaults (unknown keys are refused by
-- engine.check).  min_lr, when not given, is lr x min_lr_ratio rounded to the 14
-- significant digits config.json keeps, so that the record's config.json gives the same
-- value back (the default 3e-4 x 0.1 is exactly the earlier default min_lr 3e-5).  Giving
-- both min_lr and a min_lr_ratio other than the default that it does not match is an
-- error (a full config, e.g. a worker's arguments, gives both).
function M.resolve(overrides)
  overrides = overrides or {}
  local cfg = engine.defaults()
  local default_ratio = cfg.min_lr_ratio
  for k, v in pairs(overrides) do cfg[k] = v end
  local lr, ratio = cfg.lr, cfg.min_lr_ratio
  if type(lr) == "number" and type(ratio) == "number" then
    local derived = tonumber(string.format("%.14g", lr * ratio))
    if overrides.min_lr == nil then
      cfg.min_lr = derived
    elseif ratio ~= default_ratio and overrides.min_lr ~= derived then
      base.user_error("config: min_lr=%s and min_lr_ratio=%s are both given and disagree " ..
        "(lr x min_lr_ratio = %s): give one of them", tostring(overrides.min_lr),
        tostring(ratio), tostring(derived))
    end
  end
  return cfg
end

-- Omittable keys at their default (engine.canonical) are left out, so configs written
-- before those keys existed keep their bytes and hashes.
function M.config_text(cfg)
  local c = {}
  for k, v in pairs(engine.canonical(cfg)) do
    if k ~= "threads" then c[k] = v end
  end
  return json.pretty(c)
end

-- The digest of a manifest's own fields (decoded, `man`): the SHA-256 of the canonical
-- serialization (json.pretty: sorted keys, 14 significant digits) of every field but
-- manifest_sha256 itself.  It covers what the paper prints from a manifest (cpu,
-- copied_from, times) and the checksums themselves.
function M.manifest_digest(man)
  local t = {}
  for k, v in pairs(man) do
    if k ~= "manifest_sha256" then t[k] = v end
  end
  return sys.sha256(json.pretty(json.object(t)))
end

-- The text of manifest.json for the fields of man, with their digest (manifest_sha256).
function M.manifest_text(man)
  man.manifest_sha256 = M.manifest_digest(man)
  return json.pretty(man)
end

-- The integrity of the record in dir, whatever its config:
--   "verified"     manifest.json's sha256 matches config.json, log.csv and metrics.json,
--                  and its manifest_sha256 the manifest's other fields
--   "no checksum"  a finished record from before records carried checksums, consistent
--                  (metrics.json names config.json's SHA-256, log.csv has its rows), or
--                  one whose files match but whose manifest has no manifest_sha256
--   "mismatch"     a file differs from its recorded SHA-256, is missing or inconsistent,
--                  or a field of manifest.json changed (manifest_sha256)
--   "unfinished"   no metrics.json (training, stopped, killed, or never started)
-- and a list of problems (each naming the file) for "mismatch".  For "verified", a third
-- value: the bytes that were verified, read once (fs.read: the safe reader) and hashed
-- from that same text, { texts = {config.json, metrics.json [, tasks.csv] -> text},
-- sha256 = {file -> sum}, manifest = the decoded manifest.json whose digest was checked }
-- (log.csv by its sum only): a reader uses these texts, never
-- a second read of the file, which may have been swapped since (record/reader.lua).
-- opts.log = false leaves log.csv unread, for a reader that never reads it: its sum is
-- then the manifest's, and any later reader of it checks that sum as it streams
-- (record/reader.lua each_log_row), so a changed log.csv is never what is shown.
function M.verify(dir, opts)
  if not is_file(dir .. "/metrics.json") then return "unfinished", {} end
  local problems, kept = {}, { texts = {}, sha256 = {} }
  local function bad(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end
  local mtext = fs.read(dir .. "/manifest.json")
  local man = json.table_of(mtext)
  if not mtext then
    bad("manifest.json: missing")
  elseif not man then
    bad("manifest.json: not valid JSON")
  elseif man.sha256 ~= nil then
    local sums = type(man.sha256) == "table" and man.sha256 or {}
    for _, f in ipairs(hashed(dir, sums)) do
      local want, path, got = sums[f], dir .. "/" .. f
      if f ~= "log.csv" then
        local text = is_file(path) and fs.read(path)
        got = text and sys.sha256(text)
        kept.texts[f] = text or nil
      elseif opts and opts.log == false then
        got = is_file(path) and want or nil
      else
        -- hashed as a stream (a long log is never held); its readers stream it again and
        -- compare what they read with this sum (record/reader.lua each_log_row)
        got = sys.sha256_file(path, true)
      end
      kept.sha256[f] = got
      if type(want) ~= "string" or not want:match("^%x+$") or #want ~= 64 then
        bad("manifest.json: sha256[%q] missing or malformed", f)
      elseif not got then
        bad("%s: missing", f)
      elseif got ~= want then
        bad("%s: SHA-256 %s, but manifest.json recorded %s (changed after it was written)",
          f, got:sub(1, 12), want:sub(1, 12))
      end
    end
    local digest = man.manifest_sha256
    if digest == nil then
      if #problems == 0 then return "no checksum", problems end
    elseif digest ~= M.manifest_digest(man) then
      bad("manifest.json: its fields changed after it was written (manifest_sha256 %s is " ..
        "not the digest of the others)", type(digest) == "string" and
        base.printable(digest:sub(1, 12)) or "malformed")
    end
    kept.manifest = man
    if #problems == 0 then return "verified", problems, kept end
    return "mismatch", problems
  end
  -- Without checksums: the consistency the record's own fields allow.
  local cfg_sha = sys.sha256_file(dir .. "/config.json", true)
  local m = json.table_of(fs.read(dir .. "/metrics.json"))
  local log = fs.read(dir .. "/log.csv")
  if not cfg_sha then bad("config.json: missing") end
  if not m then
    bad("metrics.json: not valid JSON")
  else
    if cfg_sha and m.config_sha256 ~= cfg_sha then
      bad("metrics.json: config_sha256 is not the SHA-256 of config.json")
    end
    for _, k in ipairs(base.sorted_keys(m)) do
      if type(m[k]) == "string" and k ~= "config_sha256" then
        bad("metrics.json: %s is a string, not a number", tostring(k))
      end
    end
    local steps = type(m.steps) == "number" and math.tointeger(m.steps)
    local rows = log and select(2, log:gsub("\n", "")) - 1 -- less the header
    if not steps then
      bad("metrics.json: steps is not an integer")
    elseif rows and rows ~= steps then
      bad("log.csv: %d rows for %d steps", rows, steps)
    end
  end
  if not log then bad("log.csv: missing") end
  if #problems == 0 then return "no checksum", problems end
  return "mismatch", problems
end

-- The file a `task_files` entry of a manifest names: "tasks/..." under the project root,
-- or an absolute path under the tasks root (REPRO_TASKS); nil for any other name (one with
-- "..", or elsewhere), so that a records tree from elsewhere makes the suite read no
-- other file.
local function task_file_path(path)
  if type(path) ~= "string" or path:find("..", 1, true) or
      not path:match("^[%w_%-/%.]+$") then
    return nil
  end
  if path:match("^tasks/") then return host.root .. "/" .. path end
  local root = tasks.root() .. "/"
  if path:sub(1, #root) == root then return path end
  return nil
end

-- The task files whose bytes changed since the record of manifest `man` was scored on
-- them (its `task_files`, each file's SHA-256 then): a list, in name order, of {path =,
-- recorded =, now = the SHA-256 now, or nil when it cannot be read}; empty when none
-- changed.  Such a record is stale: its task scores are not the task files' any more.
-- cache (optional, {file -> SHA-256 now}) hashes each file once for a reader of many
-- records.
function M.stale_task_files(man, cache)
  local out = {}
  if type(man) ~= "table" or type(man.task_files) ~= "table" then return out end
  cache = cache or {}
  for _, path in ipairs(base.sorted_keys(man.task_files)) do
    local file, want = task_file_path(path), man.task_files[path]
    if file and cache[file] == nil then cache[file] = sys.sha256_file(file, true) or false end
    if file and cache[file] ~= want then
      out[#out + 1] = { path = path, recorded = want, now = cache[file] or nil }
    end
  end
  return out
end

-- The words for M.stale_task_files' list: "scored on task files that changed since:
-- tasks/a.jsonl (SHA-256 0123456789ab then, now 456789abcdef)".
function M.stale_text(list)
  local t = {}
  for _, f in ipairs(list) do
    t[#t + 1] = string.format("%s (SHA-256 %s then, %s)", base.printable(f.path),
      base.printable(tostring(f.recorded):sub(1, 12)),
      f.now and ("now " .. f.now:sub(1, 12)) or "now missing or unreadable")
  end
  return "scored on task files that changed since: " .. table.concat(t, ", ")
end

-- The digest a summary is current against (`inputs_sha256`): the verified records
-- (record/set.lua digest), the study file's bytes, the command line's --set overrides, and
-- the bytes now of every corpus and task file the records were made from (their
-- config's `data`, their manifest's `task_files` under tasks/).  `bin/repro analyze`
-- writes it; the report refuses a summary whose inputs changed since and trusts the rest.
-- `records`: {digest =, inputs =} of a set.digest(study_dir, design, inputs) just made.
-- A corpus is hashed only where
-- engine.check accepts its record's config (inside the data directory): config.json
-- comes with the records tree.
function M.inputs_digest(study_dir, study_file, overrides, records)
  local lines = { "records " .. records.digest,
    "study " .. (sys.sha256_file(study_file, true) or "unreadable"),
    "overrides " .. (type(overrides) == "table" and json.encode(overrides) or "none") }
  local files = {}
  for _, r in ipairs(records.inputs) do
    local cfg = json.table_of(r.config)
    if cfg and type(cfg.data) == "string" and cfg.data ~= "" then
      files["corpus " .. cfg.data] = pcall(engine.check, cfg) and M.data_path(cfg) or false
    end
    local man = json.table_of(fs.read(r.dir .. "/manifest.json"))
    if man and type(man.task_files) == "table" then
      for path in pairs(man.task_files) do
        local file = task_file_path(path)
        if file then files["task " .. path] = file end
      end
    end
  end
  for _, k in ipairs(base.sorted_keys(files)) do
    lines[#lines + 1] = k .. " " .. (files[k] and sys.sha256_file(files[k], true) or "unreadable")
  end
  return sys.sha256(table.concat(lines, "\n"))
end

-- How a record came to be, from its manifest (decoded, `man`): "copied" (another study's
-- record, `copied_from`), "resumed" (trained from a checkpoint found in its folder,
-- `resumed_from_step` > 0, or a checkpoint met at step 0: the weights it began from were
-- not made by this run) or nil (trained from step 0), and the words that say it.  What a
-- record says of itself: `verify` prints it, but only the provenance journal and git vouch
-- for a record (record/set.lua).
function M.adopted(man)
  if type(man) ~= "table" then return nil end
  if type(man.copied_from) == "string" then
    return "copied", "copied from " .. base.printable(man.copied_from)
  end
  local step = math.tointeger(man.resumed_from_step)
  if step and (step > 0 or type(man.resumed_checkpoint_sha256) == "string") then
    return "resumed", string.format("resumed from a checkpoint at step %d%s%s", step,
      type(man.resumed_checkpoint_sha256) == "string" and
      (" (SHA-256 " .. base.printable(man.resumed_checkpoint_sha256:sub(1, 12)) .. ")") or "",
      man.resumed_checkpoint_known == true and ", one this suite wrote for the run" or
      man.resumed_checkpoint_known == false and
      ", NOT one this suite recorded writing for the run (planted, or written just before " ..
      "a kill -9)" or "")
  end
  return nil
end

M.UNTRUSTED = "manifest.json holds no checksums (sha256, manifest_sha256): not trusted " ..
  "(review the record, then `bin/repro verify --rehash DIR` adds them)"

-- Adds the checksums of config.json, log.csv and metrics.json and the digest of the
-- manifest's own fields to the manifest.json of a record without them (M.verify: "no
-- checksum": consistent, or its files matching checksums it already has):
-- `bin/repro verify --rehash`, after a review of the record.  Only manifest.json is
-- rewritten (atomically); the other three files are never touched.  Returns true, or
-- false and why not.
function M.rehash(dir)
  local state = M.verify(dir)
  if state ~= "no checksum" then return false, state end
  local man = json.table_of(fs.read(dir .. "/manifest.json"))
  if not man then return false, "manifest.json unreadable" end
  if man.sha256 == nil then
    man.sha256 = {}
    for _, f in ipairs(M.HASHED) do man.sha256[f] = sys.sha256_file(dir .. "/" .. f, true) end
  end
  fs.write_atomic(dir .. "/manifest.json", M.manifest_text(man))
  return true
end

-- A config value as changed_keys shows it: an integer without a decimal point, any other
-- number in the fewest digits that give it back.
local function shown_value(v)
  if v == nil then return "(absent)" end
  if type(v) ~= "number" then return tostring(v) end
  if math.tointeger(v) then return string.format("%d", v) end
  for digits = 15, 17 do
    local t = string.format("%." .. digits .. "g", v)
    if tonumber(t) == v then return t end
  end
  return tostring(v)
end

-- "key old -> new" for each key where the config text `have` differs from cfg.
local function changed_keys(have, cfg)
  local old, new = json.table_of(have), json.decode(M.config_text(cfg))
  if not old then return { "config.json unreadable" } end
  local keys = {}
  for _, t in ipairs({ old, new }) do
    for k in pairs(t) do keys[tostring(k)] = true end
  end
  local out = {}
  for _, k in ipairs(base.sorted_keys(keys)) do
    if old[k] ~= new[k] then
      out[#out + 1] = string.format("%s %s -> %s", k, shown_value(old[k]), shown_value(new[k]))
    end
  end
  return out
end

-- The state of the run cfg in dir, and details:
--   "done"     finished for this config and verified  {verified = true}
--   "stale"    done, but scored on task files that changed since {files =
--              M.stale_task_files}: not current, trained again
--   "corrupt"  finished but failing M.verify           {problems = {...}}
--   "untrusted" finished, consistent, but without checksums {problems = {...}}
--   "changed"  config.json is another config's         {finished = bool, keys = {...}}
--   "partial"  a checkpoint of this config (resumes)
--   "missing"  anything else
function M.status(dir, cfg)
  local text = M.config_text(cfg)
  local have = fs.read(dir .. "/config.json")
  if is_file(dir .. "/metrics.json") then
    local state, problems, kept = M.verify(dir)
    if state == "mismatch" then return "corrupt", { problems = problems } end
    if have ~= text then
      return "changed", { finished = true, keys = changed_keys(have, cfg) }
    end
    if state == "no checksum" then
      return "untrusted", { problems = { M.UNTRUSTED } }
    end
    local stale = M.stale_task_files(kept.manifest)
    if #stale > 0 then return "stale", { files = stale } end
    return "done", { verified = true }
  end
  if have and have ~= text then
    return "changed", { finished = false, keys = changed_keys(have, cfg) }
  end
  if have and fs.exists(M.checkpoint_path(dir, fs.sha256(dir .. "/config.json"))) then
    return "partial", {}
  end
  return "missing", {}
end

-- Whether name is a folder M.put_aside makes in a run folder (<kind>-<UTC time>): kept,
-- never read as records.
function M.is_aside(name)
  return name:match("^corrupt%-") ~= nil or name:match("^stale%-") ~= nil
end

-- Moves a corrupt or stale record's files (metrics.json first, so it stops looking done)
-- into DIR/<kind>-<UTC time>/ (kind: "corrupt", the default, or "stale") and returns that
-- directory.
function M.put_aside(dir, kind)
  local stem = dir .. "/" .. (kind or "corrupt") .. "-" .. os.date("!%Y%m%dT%H%M%SZ")
  local aside, n = stem, 1
  while fs.exists(aside) do
    n = n + 1
    aside = stem .. "-" .. n
  end
  fs.mkdir_p(aside)
  for _, f in ipairs({ "metrics.json", "config.json", "log.csv", "manifest.json", M.TASKS_FILE }) do
    if fs.exists(dir .. "/" .. f) then
      local ok, err = os.rename(dir .. "/" .. f, aside .. "/" .. f)
      if not ok then base.user_error("filesystem: cannot move %s", err) end
    end
  end
  return aside
end

local ENGINE_KINDS = base.set_of(engine.error_kinds)

-- An error of engine.check / engine.train: the engine's own ("<kind>: <message>", the
-- kind one of engine.error_kinds) as a user error; any other (one raised by an on_step
-- callback, a user error or a bug with its traceback) as it is.
function M.engine_error(err)
  if type(err) == "string" and ENGINE_KINDS[err:match("^(%a+): ")] then
    return { message = err }
  end
  return err
end

-- How a run resuming in dir says where its checkpoint came from: "resuming from its
-- checkpoint", or, when the provenance journal does not say this suite wrote it for the
-- run, that the record will be adopted.
function M.resume_text(dir)
  local ckpt = M.checkpoint_path(dir, fs.sha256(dir .. "/config.json"))
  local sum = sys.lstat(ckpt) and sys.sha256_file(ckpt, true)
  if sum and provenance.knows_checkpoint(ckpt, sum) then return "resuming from its checkpoint" end
  return "resuming from a checkpoint this checkout's suite did not record writing for it: " ..
    "the record will be " .. provenance.ADOPTED
end

function M.checkpoint_path(dir, sha)
  return string.format("%s/checkpoint-%s.rptf", dir, (sha or ""):sub(1, 12))
end

-- A number as its log.csv field (the inverse of reader.log_number): nan, inf and -inf
-- spelled the same on every C library.
local function log_field(x)
  if base.finite(x) then return string.format("%.9g", x) end
  return x ~= x and "nan" or x > 0 and "inf" or "-inf"
end

-- The text of log.csv.  rows: tables keyed by column name; an absent value is an empty
-- field.
local function log_csv(rows, columns)
  local out = { table.concat(columns, ",") }
  for _, r in ipairs(rows) do
    local f = {}
    for i, k in ipairs(columns) do
      local v = r[k]
      f[i] = v == nil and "" or (k == "step" and string.format("%d", v) or log_field(v))
    end
    out[#out + 1] = table.concat(f, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

M.git_info, M.file_git_status = provenance.git_info, provenance.file_git_status
M.git_facts, M.git_args, M.parse_git_args = provenance.git_facts, provenance.git_args,
  provenance.parse_git_args
M.GIT_EVERY_S = provenance.GIT_EVERY_S

function M.data_path(cfg)
  return cfg.data:sub(1, 1) == "/" and cfg.data or (host.root .. "/" .. cfg.data)
end

-- The result fields of engine.train's metrics, a non-finite number (NaN inside arrays, an
-- overflowing val_ppl) written as null.
function M.results(metrics)
  local function clean(v)
    if type(v) == "number" and not base.finite(v) then return json.null end
    if type(v) ~= "table" then return v end
    local t = {}
    for k, x in pairs(v) do t[k] = clean(x) end
    return t
  end
  local out = {}
  for k, v in pairs(metrics) do
    if not NOT_RESULTS[k] then out[k] = clean(v) end
  end
  return out
end

-- The time now in UTC, as the records write it ("2026-12-07T18:40:00Z").
function M.utc() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- A thread count above the CPUs this process may use is capped to them, with a
-- warning on stderr (results do not depend on it); 0 stays "every CPU".
function M.cap_threads(threads, who)
  local cores = sys.cores()
  if threads and threads > cores then
    io.stderr:write(string.format("%s: threads=%d is more than the %d CPU%s this process may " ..
      "use: using %d (results do not depend on the thread count)\n", who or "repro", threads,
      cores, cores == 1 and "" or "s", cores))
    return cores
  end
  return threads
end

-- Makes dir ready for a run of cfg: refuses to overwrite a finished record of another
-- config (unless opts.force), removes stale temporary files, puts a corrupt record aside,
-- and writes config.json; returns its text and SHA-256.
local function prepare(cfg, dir, opts)
  local state, info = M.status(dir, cfg)
  if state == "changed" and info.finished and not opts.force then
    base.user_error("record: %s holds a finished run of another config (%s): not overwritten " ..
      "without --force", dir, table.concat(info.keys, ", "))
  end
  fs.mkdir_p(dir)
  fs.remove_stale_tmp(dir)
  if state == "corrupt" or state == "stale" then
    local what = state == "corrupt" and
      string.format("failed its checks (%s)", table.concat(info.problems, "; ")) or
      "was " .. M.stale_text(info.files)
    io.stderr:write(base.printable(string.format("record: %s %s; its files are kept in %s " ..
      "and the run is trained again", dir, what, M.put_aside(dir, state))), "\n")
  end
  os.remove(dir .. "/metrics.json") -- from here on the record is not done
  local text = M.config_text(cfg)
  if fs.read(dir .. "/config.json") ~= text then
    fs.write_atomic(dir .. "/config.json", text)
  end
  return text, fs.sha256(dir .. "/config.json")
end

-- Trains cfg from checkpoint ckpt when it holds one: the engine's metrics, the log rows,
-- and the threads used (th: threads, now, changed, core_s and t_last, the core-seconds
-- so far when opts.threads_now changed the count).
--
-- The checkpoints this suite wrote are noted in the provenance journal outside the
-- records tree (provenance.JOURNAL): each complete checkpoint, just before the engine
-- renames it into place, so a kill -9 never leaves one of its own unnoted, with the step
-- and opts.ledger_tag: "own" when the run began from step 0 or from checkpoints all noted
-- so, "adopted" when from one that was not (what grew from a foreign checkpoint stays
-- foreign), nil for no entry.  A run that finds a checkpoint in its folder, at any step,
-- 0 included, says in its manifest whether it is one of its own
-- (`resumed_checkpoint_known`): a checkpoint planted in a records tree is not, nor one
-- written just before a kill -9 (or before `make clean` removed build/).  The entry goes
-- when the record is complete, and the record's own entry says how it was made.
local function train(cfg, ckpt, sha, opts, t0, task_sets)
  local rows = {}
  local run_cfg = {}
  for k, v in pairs(cfg) do run_cfg[k] = v end
  run_cfg.threads = M.cap_threads(opts.threads or cfg.threads)
  local threads = run_cfg.threads ~= 0 and run_cfg.threads or sys.cores()
  local th = { threads = threads, now = threads, changed = false, core_s = 0, t_last = t0 }
  local signalled = false
  local tok, metrics = pcall(engine.train, run_cfg, {
    checkpoint = ckpt, checkpoint_every = opts.checkpoint_every or 0, resume = true,
    model = opts.model,
    on_checkpoint = function(step, tmp)
      if opts.ledger_tag then provenance.note_checkpoint(ckpt, step, opts.ledger_tag, tmp) end
    end,
    config_id = sha, -- inside every checkpoint: another config's is refused
    tasks = task_sets,
    on_step = function(step, row)
      rows[#rows + 1] = row
      -- a SIGINT or SIGTERM counted by proc.trap_signals (a worker's, `train`'s) outside
      -- the engine's own handler, before training or between steps: stop here, as the
      -- engine does on one that arrives while it trains
      if proc.sigints() > 0 then
        signalled = true
        return true
      end
      local want = opts.threads_now and opts.threads_now()
      if want and want ~= th.now then
        local t = host.now()
        th.core_s, th.t_last = th.core_s + (t - th.t_last) * th.now, t
        engine.set_threads(want)
        th.now, th.changed = want, true
      end
      if opts.on_step then return opts.on_step(step, row) end
    end,
  })
  if not tok then error(M.engine_error(metrics), 0) end
  if signalled then metrics.interrupted = true end
  return metrics, rows, th
end

-- Trains cfg and writes its record into dir.  opts: keep_model (write DIR/model.rptf and
-- its model_sha256), threads, checkpoint_every, ledger (false: no entry in
-- the provenance journal, for a run in a temporary folder that is never resumed),
-- on_step(step, row) for progress, force (overwrite a finished record of another
-- config), threads_now() (called after each step: a thread count for the rest of the
-- run, or nil to keep it; the manifest then gives the last count and the core-seconds).
-- Stale temporary files in dir are removed first and a corrupt record is put aside
-- (M.put_aside, said on stderr): call it holding dir's lock (or with no other process
-- writing dir).  Returns the engine's metrics table; the record is complete
-- only when the run finished (not interrupted or stopped): log.csv, then manifest.json
-- with the checksums, then metrics.json last.
function M.run(cfg, dir, opts)
  opts = opts or {}
  local cok, cerr = pcall(engine.check, cfg)
  if not cok then error(M.engine_error(cerr), 0) end
  local text, sha = prepare(cfg, dir, opts)
  local ckpt = M.checkpoint_path(dir, sha)
  local start, t0 = M.utc(), host.now()
  local suite = cfg.tasks and cfg.tasks ~= "" and tasks.load(M.data_path(cfg), cfg.tasks) or nil
  local model = dir .. "/" .. M.MODEL
  os.remove(model) -- a kept model is this record's only: never an older config's
  -- a checkpoint met here was not necessarily written by this suite for this run (a
  -- records tree from elsewhere can hold one): its SHA-256 goes into the manifest
  -- with the step it resumed from, `verify` names every resumed record and `audit`
  -- draws them first
  local ledger = opts.ledger ~= false
  if ledger then pcall(provenance.journal_prune) end
  local ckpt_sha = sys.lstat(ckpt) and sys.sha256_file(ckpt, true) or nil
  local ckpt_known = ckpt_sha ~= nil and provenance.knows_checkpoint(ckpt, ckpt_sha)
  local tag = ledger and ((ckpt_sha == nil or ckpt_known) and "own" or "adopted") or nil
  local metrics, rows, th = train(cfg, ckpt, sha, setmetatable({ ledger_tag = tag,
    model = opts.keep_model and model or nil }, { __index = opts }), t0, suite and suite.sets)
  if metrics.interrupted or metrics.stopped then return metrics end

  local log_text = log_csv(rows, engine.log_columns(cfg))
  local task_results = metrics.tasks
  metrics.tasks = nil
  local out = M.results(metrics)
  out.config_sha256 = sha
  local items_text
  if suite and task_results then
    for k, v in pairs(tasks.metrics(suite.sets, task_results)) do out[k] = v end
    items_text = tasks.items_csv(suite.sets, task_results)
    fs.write_atomic(dir .. "/" .. M.TASKS_FILE, items_text)
  end
  local metrics_text = json.pretty(out)
  local sums = { ["config.json"] = sys.sha256(text), ["log.csv"] = sys.sha256(log_text),
    ["metrics.json"] = sys.sha256(metrics_text),
    [M.TASKS_FILE] = items_text and sys.sha256(items_text) or nil }
  -- the caller's table holds every field of metrics.json too (config_sha256, the task
  -- metrics): `bin/repro train`'s JSON line is metrics.json's fields and its timings
  for k, v in pairs(out) do if metrics[k] == nil then metrics[k] = v end end
  fs.write_atomic(dir .. "/log.csv", log_text)
  local git = opts.git or provenance.git_facts(opts.study_file)
  fs.write_atomic(dir .. "/manifest.json", M.manifest_text({
    repro_version = host.version, git_commit = git.commit, git_dirty = git.dirty,
    compiler = host.compiler, cflags = host.cflags, isa = host.isa, lua = host.lua, gsl = host.gsl,
    corpus = cfg.data, corpus_sha256 = (sys.sha256_file(M.data_path(cfg))) or "unreadable",
    host = host.hostname(), cpu = provenance.cpu_model(), threads = th.threads,
    threads_last = th.changed and th.now or nil,
    core_s = th.changed and th.core_s + (host.now() - th.t_last) * th.now or nil,
    start_utc = start, end_utc = M.utc(), wall_s = host.now() - t0,
    train_wall_s = metrics.wall_s, tokens_per_s = metrics.tokens_per_s,
    eval_tokens_per_s = metrics.eval_tokens_per_s,
    resumed_from_step = metrics.resumed_from,
    -- a checkpoint met at step 0 counts too: its weights need not be this config's init
    resumed_checkpoint_sha256 = ckpt_sha,
    resumed_checkpoint_known = ckpt_sha and ckpt_known,
    peak_rss_bytes = host.peak_rss_bytes(),
    study_file = opts.study_file and fs.relative_to_root(opts.study_file) or nil,
    study_file_git = opts.study_file and git.file_git or nil,
    sha256 = sums,
    task_files = suite and suite.files or nil,
    model_sha256 = opts.keep_model and not metrics.diverged and
      sys.sha256_file(model, true) or nil,
  }))
  -- the journal first: a record that looks done is never one it does not know
  if ledger then
    provenance.note_record(dir, sums, tag == "own" and "trained" or "resumed_foreign")
  end
  fs.write_atomic(dir .. "/metrics.json", metrics_text)
  os.remove(ckpt)
  if ledger then provenance.forget_checkpoint(ckpt) end
  return metrics
end

return M
