-- The plan of a study's runs: where their records go and what each needs, the same for
-- `bin/repro run` (cli/run.lua) and for plan, run-one, status and submit (run/parallel.lua,
-- run/slurm.lua).  Records go to OUT/<study>/<variant>/seed-<s>/ (M.out_root gives OUT).
-- M.plan gives each selected run an action from its record (record.status; docs/DESIGN.md
-- "Plan"): reuse (done), copy (a done record of the same config.json in another study's
-- record set), resume (partial), rerun (an unfinished record of another config), repair
-- (corrupt) or retrain (stale), these two after putting its files aside, train (missing,
-- or --force), or refuse (without --force: a finished record of another config, or one
-- without checksums).
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local json = require "repro.core.json"
local host = require "repro.host"
local record = require "repro.record"
local provenance = require "repro.record.provenance"
local study = require "repro.study"
local study_records = require "repro.study.records"
local set = require "repro.record.set"
local reader = require "repro.record.reader"
local base = require "repro.core.base"

-- A line on stdout; text from data in it goes through base.printable.
local put = base.put

local M = {}

local user_error = base.user_error
local shown = fs.shown

-- The readable part of a --set root's name: the overrides as key=value, sorted, joined
-- by "+" (numbers as the shortest text that reads back), characters other than letters,
-- digits and . _ = + - as "_" (no "/", space, comma or quote: the name is safe in a
-- shell word and an sbatch line), at most M.SLUG_MAX characters.
M.SLUG_MAX = 60
function M.set_slug(set)
  local keys = base.sorted_keys(set)
  for i, k in ipairs(keys) do
    local v = set[k]
    if math.type(v) == "float" then
      local p = 14
      while p < 17 and tonumber(string.format("%." .. p .. "g", v)) ~= v do p = p + 1 end
      v = string.format("%." .. p .. "g", v)
    end
    keys[i] = k .. "=" .. tostring(v)
  end
  return (table.concat(keys, "+"):gsub("[^%w._=+%-]", "_"):sub(1, M.SLUG_MAX))
end

-- The records root: `given` (--out-root), else $REPRO_EXPERIMENTS, else <root>/experiments;
-- absolute.  With --set overrides (`set`) and no --out-root, a root of their own,
-- <that root>-set/<slug of the overrides>-<8 hex of their SHA-256> (M.set_slug; e.g.
-- experiments-set/iters=40+lr=0.003-1a2b3c4d), so they never mix with (or overwrite) the
-- study's canonical records; a root of the earlier form <that root>-set/<12 hex> that
-- exists is used instead, so the runs made before keep being reused.
function M.out_root(given, set)
  if given == "" then
    base.user_error("repro: --out-root \"\": an empty path (the records would go into the " ..
      "current directory); give a directory")
  end
  local out_root = fs.records_root(given)
  if out_root:sub(1, 1) ~= "/" then out_root = (os.getenv("PWD") or ".") .. "/" .. out_root end
  if set and next(set) and not given then
    local keys = base.sorted_keys(set)
    for i, k in ipairs(keys) do
      local v = set[k]
      keys[i] = k .. "=" .. (math.type(v) == "float" and string.format("%.17g", v) or tostring(v))
    end
    local hash = fs.sha256_text(table.concat(keys, ","))
    local parent = out_root:gsub("/+$", "") .. "-set/"
    local legacy = parent .. hash:sub(1, 12)
    if fs.exists(legacy) then return legacy end
    out_root = parent .. M.set_slug(set) .. "-" .. hash:sub(1, 8)
  end
  return out_root
end

-- The value of one --only, "variant=V,seed=S" (either part alone too), as {variant=,
-- seed=}; `who` names the command in a message.  The one parser of --only, for
-- `bin/repro run` and for plan, run-one, status and submit.
function M.parse_only(raw, who)
  local sel = {}
  if not raw:find("[^,%s]") then user_error("%s: --only is empty: name a variant or a seed", who) end
  for kv in raw:gmatch("[^,]+") do
    local k, v = kv:match("^(%w+)=(.+)$")
    if (k == "variant" or k == "seed") and sel[k] ~= nil then
      user_error("%s: --only %s: %s is given twice", who, raw, k)
    end
    if k == "variant" then
      sel.variant = v
    elseif k == "seed" then
      sel.seed = math.tointeger(tonumber(v)) or
        user_error("%s: --only seed=%s: expected an integer", who, v)
    else
      user_error("%s: --only expects variant=V,seed=S, got '%s'%s", who, kv,
        k and base.suggest(k, { "variant", "seed" }) or "")
    end
  end
  return sel
end

-- The runs of study s that `only` (the --only selections {variant=, seed=}) selects;
-- every run when there is none.  A selection naming no variant or seed of s is refused.
function M.selected(s, only)
  if #only == 0 then return s.runs end
  local variants, seeds = {}, base.set_of(s.seeds)
  for _, v in ipairs(s.variants) do variants[v.name] = true end
  for _, sel in ipairs(only) do
    if sel.variant and not variants[sel.variant] then
      user_error("repro run: --only variant=%s: the study has no such variant%s", sel.variant,
        base.suggest(sel.variant, variants))
    end
    if sel.seed and not seeds[sel.seed] then
      user_error("repro run: --only seed=%d: not one of the study's seeds", sel.seed)
    end
  end
  local out = {}
  for _, r in ipairs(s.runs) do
    for _, sel in ipairs(only) do
      if (not sel.variant or sel.variant == r.variant) and (not sel.seed or sel.seed == r.seed) then
        out[#out + 1] = r
        break
      end
    end
  end
  return out
end

-- The entries of dir that are real directories (never a symbolic link) with a name of
-- the suite's rule (base.valid_name), sorted.
local function subdirs(dir)
  local out = {}
  for _, n in ipairs(sys.listdir(dir) or {}) do
    local st = base.valid_name(n) and sys.lstat(dir .. "/" .. n)
    if st and st.type == "dir" then out[#out + 1] = n end
  end
  return out
end

-- The folder of the study file of a study folder named `name` under the records root: a
-- study file <name>.lua beside the planned study's own file (the study set the plan
-- knows) or in lua/experiments/; nil for any other folder (one planted in a records
-- tree, or left by a study since removed), which is never a copy source.
local function known_study(name, s)
  local own = (s.file or ""):match("^(.*)/[^/]*$")
  for _, d in ipairs({ own, host.root .. "/lua/experiments" }) do
    local st = d and sys.lstat(d .. "/" .. name .. ".lua")
    if st and st.type == "file" then return d end
  end
  return nil
end

-- Records of other known studies (known_study) under out_root: config.json text -> list
-- of run directories.  Only the members of each study's record set are candidates
-- (study/records.lua: the canonical seed folders of the variants and seeds of its
-- design), never another folder of the tree, and only one holding its seed's config and
-- reached through no symbolic link.
local function other_records(out_root, study_dir, s)
  local index = {}
  for _, st in ipairs(subdirs(out_root)) do
    local sdir = out_root .. "/" .. st
    local studies = sdir ~= study_dir and known_study(st, s)
    local d = studies and study_records.design_of(sdir, { studies = studies })
    for _, m in ipairs(d and set.members(d, sdir) or {}) do
      local text = not reader.link_in(m.dir, out_root) and fs.read(m.dir .. "/config.json")
      local c = json.table_of(text)
      if c and c.seed == m.seed then
        index[text] = index[text] or {}
        table.insert(index[text], m.dir)
      end
    end
  end
  return index
end

-- An identical done (verified) record in another study (its directory), looked up in
-- `index`; a record that was itself copied counts as its source would.
local function copy_source(index, r)
  for _, src in ipairs(index[record.config_text(r.cfg)] or {}) do
    if record.status(src, r.cfg) == "done" then return src end
  end
  return nil
end

-- Sets r.dir, r.status, r.info, r.action and r.source (copy) for each of runs.
function M.plan(s, runs, out_root, force)
  local dir = study.dir(out_root, s)
  fs.no_link(dir, "the study directory")
  local why, at = fs.out_dir_problem(dir)
  if why then
    user_error("repro run: the records folder %s cannot be made: %s is %s, not a directory " ..
      "(nothing was run)", shown(dir), shown(at), why)
  end
  local index
  for _, r in ipairs(runs) do
    r.dir = dir .. "/" .. r.rel
    fs.no_link(r.dir:match("^(.*)/[^/]+$"), "the variant directory")
    fs.no_link(r.dir, "the run directory")
    r.source = nil
    r.status, r.info = record.status(r.dir, r.cfg)
    if not force and (r.status == "changed" and r.info.finished or r.status == "untrusted") then
      -- a finished record is never overwritten by another config, nor one without
      -- checksums (lua/repro/record/init.lua: never trusted, kept)
      r.action = "refuse"
    elseif force then
      r.action = "train"
    elseif r.status == "done" then
      r.action = "reuse"
    else
      index = index or other_records(out_root, dir, s)
      r.source = copy_source(index, r)
      if r.source then
        r.action = "copy"
      else
        r.action = ({ partial = "resume", changed = "rerun", corrupt = "repair",
          stale = "retrain" })[r.status] or "train"
      end
    end
  end
end

-- The message for the runs M.plan refused (finished records of another config, without
-- --force), or nil when there is none.
function M.refusal(runs)
  local t, u = {}, {}
  for _, r in ipairs(runs) do
    if r.action == "refuse" and r.status == "untrusted" then
      u[#u + 1] = fs.shown(r.dir)
    elseif r.action == "refuse" then
      t[#t + 1] = string.format("%s (%s)", r.label, table.concat(r.info.keys, ", "))
    end
  end
  if #u > 0 then
    return string.format("repro run: record: %d finished record%s without checksums " ..
      "(manifest.json's sha256 and manifest_sha256), not trusted: %s; review %s, then `bin/repro verify --rehash DIR` adds the checksums, or " ..
      "--force trains %s again (nothing was written)", #u, #u == 1 and "" or "s",
      table.concat(u, ", "), #u == 1 and "it" or "them", #u == 1 and "it" or "them")
  end
  if #t == 0 then return nil end
  return string.format("repro run: record: %d finished record%s of another config: %s; a " ..
    "finished record is never overwritten without --force (nothing was written)", #t,
    #t == 1 and " holds a run" or "s hold runs", table.concat(t, "; "))
end

-- Why run r gets its action, for the dry run ("" when nothing needs saying).
local function why(r)
  return ({
    reuse = "done, config unchanged",
    copy = r.source and ("identical done record " .. shown(r.source)),
    resume = "from its checkpoint",
    rerun = "config changed: " .. table.concat(r.info.keys or {}, ", "),
    repair = "failed its checks: " .. table.concat(r.info.problems or {}, "; ") ..
      "; its files are kept aside",
    retrain = r.status == "stale" and (record.stale_text(r.info.files) ..
      "; its files are kept aside"),
    refuse = r.status == "untrusted" and record.UNTRUSTED or ("finished with another " ..
      "config: " .. table.concat(r.info.keys or {}, ", ") .. "; needs --force"),
    train = r.status == "done" and "--force" or (r.status == "missing" and "" or r.status),
  })[r.action]
end

-- The plan on stdout (`bin/repro run --dry-run`): one line per run, then the counts.
function M.print(s, runs, out_root, threads, jobs)
  local n = {}
  for _, r in ipairs(runs) do n[r.action] = (n[r.action] or 0) + 1 end
  put(string.format("study %s (%s): %d of its %d runs selected; %d job%s x %d thread%s; " ..
    "records in %s", s.name, shown(s.file), #runs, #s.runs, jobs, jobs == 1 and "" or "s",
    threads, threads == 1 and "" or "s", shown(study.dir(out_root, s))))
  if s.seeds_from_power then put(study.seeds_text(s.seeds_from_power)) end
  for _, r in ipairs(runs) do
    local w = why(r)
    put(string.format("  %-8s%-28s %d steps%s", r.action == "refuse" and "REFUSED" or r.action,
      r.label, r.cfg.iters, w ~= "" and ("  (" .. w .. ")") or ""))
  end
  put(string.format("dry run: %d to train (%d resumed), %d reused, %d copied; nothing written",
    (n.train or 0) + (n.resume or 0) + (n.rerun or 0) + (n.repair or 0) + (n.retrain or 0),
    n.resume or 0, n.reuse or 0, n.copy or 0))
  if n.refuse then put(M.refusal(runs)) end
end

-- Removes the checkpoint of the config in config_path (a run about to start over).
function M.remove_checkpoint_of(dir, config_path)
  if fs.exists(config_path) then
    os.remove(record.checkpoint_path(dir, fs.sha256(config_path)))
  end
end

-- Copies the done record r.source into r.dir: every file its manifest lists (config.json,
-- log.csv, tasks.csv when it has one, the kept model when it names one), then the
-- manifest, metrics.json last.  The copy's manifest says where it came from
-- (`copied_from`: the immediate source, relative to out_root) and names the source's
-- checksums (`copied_manifest_sha256`: the source manifest's own digest, which covers its
-- `sha256` of every file); each file is checked against the source manifest's SHA-256 as
-- it is read, so a source changed since it was planned is not copied (an error naming
-- it).  The provenance journal notes the copy and its source: the copy is vouched for
-- while that source is in the tree with the same files (record/set.lua).
function M.copy_record(r, out_root)
  local manifest = json.decode(assert(fs.read(r.source .. "/manifest.json")))
  local sums = type(manifest.sha256) == "table" and manifest.sha256 or {}
  local files = { "config.json", "log.csv" }
  if sums[record.TASKS_FILE] ~= nil then files[#files + 1] = record.TASKS_FILE end
  local texts = {}
  for _, f in ipairs(files) do
    local rerr
    texts[f], rerr = fs.read(r.source .. "/" .. f)
    if not texts[f] then
      user_error("repro run: record: %s/%s cannot be read (%s): not copied", shown(r.source), f,
        base.printable(tostring(rerr)))
    end
    if sys.sha256(texts[f]) ~= sums[f] then
      user_error("repro run: record: %s/%s does not match its manifest's SHA-256 (changed " ..
        "since the plan): not copied", shown(r.source), f)
    end
  end
  local metrics_text = fs.read(r.source .. "/metrics.json")
  if not metrics_text or sys.sha256(metrics_text) ~= sums["metrics.json"] then
    user_error("repro run: record: %s/metrics.json does not match its manifest's SHA-256 " ..
      "(changed since the plan): not copied", shown(r.source))
  end
  local model
  if type(manifest.model_sha256) == "string" then
    model = fs.read(r.source .. "/" .. record.MODEL)
    if model and sys.sha256(model) ~= manifest.model_sha256 then model = nil end
    if not model then manifest.model_sha256 = nil end -- the weights are not carried over
  end
  fs.mkdir_p(r.dir)
  os.remove(r.dir .. "/metrics.json")
  M.remove_checkpoint_of(r.dir, r.dir .. "/config.json")
  os.remove(r.dir .. "/" .. record.TASKS_FILE)
  os.remove(r.dir .. "/" .. record.MODEL)
  for _, f in ipairs(files) do fs.write_atomic(r.dir .. "/" .. f, texts[f]) end
  if model then fs.write_atomic(r.dir .. "/" .. record.MODEL, model) end
  local source = r.source:sub(#out_root + 2)
  manifest.copied_manifest_sha256 = manifest.manifest_sha256
  manifest.copied_from = source
  manifest.copied_utc = os.date("!%Y-%m-%dT%H:%M:%SZ")
  fs.write_atomic(r.dir .. "/manifest.json", record.manifest_text(manifest))
  -- the journal first: a copy that looks done is never one it does not know
  local sums = { ["metrics.json"] = sys.sha256(metrics_text) }
  for _, f in ipairs(files) do sums[f] = sys.sha256(texts[f]) end
  provenance.note_record(r.dir, sums, "copied", source)
  fs.write_atomic(r.dir .. "/metrics.json", metrics_text)
end

-- A done run's result in a few words ("val_loss 3.1234", "diverged at step 12"); "" when
-- its metrics.json cannot be read.
function M.result_text(r)
  local m = json.table_of(fs.read(r.dir .. "/metrics.json"))
  if not m then return "" end
  if m.diverged then
    return string.format("diverged at step %s", tostring(math.tointeger(m.diverge_step)))
  end
  return m.val_loss and string.format("val_loss %.4f", m.val_loss) or ""
end

return M
