-- `bin/repro run STUDY.lua`: every run of a study, then its analysis.
--
--   bin/repro run FILE [--jobs N] [--only variant=V,seed=S]... [--dry-run] [--force]
--                      [--out-root DIR] [--set key=value[,key=value...]]
--
-- Runs go to OUT/<study>/<variant>/seed-<s>/ with OUT = --out-root, else
-- $REPRO_EXPERIMENTS, else <project root>/experiments.  For each run:
--   done (record complete, config hash matches)     reused
--   a done record with byte-identical config.json
--   in another study under OUT                       copied (its manifest says so)
--   partial (checkpoint of this config)              resumed from the checkpoint
--   changed (a record of another config)             rerun from scratch
--   missing                                          trained
-- --force retrains the selected runs from scratch; --dry-run lists the plan and
-- writes nothing; --set overrides config keys of every run (e.g. a quick budget) and
-- is recorded in the summary.
--
-- Each run trains in a worker process (`bin/repro run-worker`, below) with
-- threads = cores / N, so records are byte-identical for any N.  A worker dies with the
-- runner (kill -9 included); every file of a record is written atomically with
-- metrics.json last, so a killed run never looks done.  Ctrl-C (or SIGTERM) stops every
-- worker after its current step with a checkpoint, then says which runs finished.  The
-- study directory is locked (flock) while a runner or its workers live, so two runners
-- never write one study (`bin/repro run-one` takes it shared, lua/repro/plan.lua); each
-- worker also locks its run directory and keeps its attempt.json (lua/repro/runstate.lua),
-- so `bin/repro status` sees it.  An earlier OUT/<study>/summary.json is removed before
-- any record changes; when every run of the study is done, the analysis
-- (lua/repro/analysis.lua) writes it again with OUT/<study>/manifest.json (this
-- invocation's timings) and prints the verdicts on stdout.
local engine = require "engine"
local host = require "repro.host"
local fs = require "repro.fs"
local json = require "repro.json"
local record = require "repro.record"
local study = require "repro.study"
local analysis = require "repro.analysis"
local progress = require "repro.progress"

local M = {}

local function user_error(fmt, ...) study.user_error(string.format(fmt, ...)) end
local tty = host.isatty(2)
local PLAIN_EVERY_S = 15 -- status line period when stderr is not a terminal
local POLL_S = 0.1

local function say(fmt, ...)
  if tty then io.stderr:write("\r\27[K") end
  io.stderr:write(string.format(fmt, ...), "\n")
  io.stderr:flush()
end

local function cores()
  return require("repro.sys").cores()
end

-- Paths shown relative to the working directory when they are under it.
local function shown(path)
  local cwd = os.getenv("PWD")
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end

local function relative_to_root(path)
  local abs = path:sub(1, 1) == "/" and path or ((os.getenv("PWD") or ".") .. "/" .. path)
  abs = abs:gsub("/%./", "/")
  if abs:sub(1, #host.root + 1) == host.root .. "/" then return abs:sub(#host.root + 2) end
  return path
end

-- key=value arguments that rebuild cfg exactly (floats with 17 significant digits).
local function config_args(cfg)
  local out = {}
  for _, k in ipairs(engine.keys()) do
    local v = cfg[k.name]
    if k.name ~= "threads" and v ~= nil then
      if k.type == "integer" then
        out[#out + 1] = string.format("%s=%d", k.name, v)
      elseif k.type == "number" then
        out[#out + 1] = string.format("%s=%.17g", k.name, v)
      else
        out[#out + 1] = k.name .. "=" .. tostring(v)
      end
    end
  end
  return out
end

local function parse_args(args)
  local o = { only = {}, set = nil }
  local i = 1
  local function value(name)
    i = i + 1
    return args[i] or user_error("repro run: %s needs a value", name)
  end
  local function once(name, v)
    if v ~= nil then user_error("repro run: %s is given twice", name) end
  end
  while i <= #args do
    local a = args[i]
    if a == "--jobs" then
      once("--jobs", o.jobs)
      local v = value("--jobs")
      o.jobs = math.tointeger(tonumber(v))
      if not o.jobs or o.jobs < 1 then
        user_error("repro run: --jobs needs an integer >= 1, got %s", v)
      end
    elseif a == "--only" then
      local sel = {}
      for kv in value("--only"):gmatch("[^,]+") do
        local k, v = kv:match("^(%w+)=(.+)$")
        if (k == "variant" or k == "seed") and sel[k] ~= nil then
          user_error("repro run: --only gives %s twice", k)
        end
        if k == "variant" then
          sel.variant = v
        elseif k == "seed" then
          sel.seed = math.tointeger(tonumber(v)) or
            user_error("repro run: --only seed=%s: expected an integer", v)
        else
          user_error("repro run: --only expects variant=V,seed=S, got '%s'", kv)
        end
      end
      o.only[#o.only + 1] = sel
    elseif a == "--dry-run" then
      o.dry_run = true
    elseif a == "--force" then
      o.force = true
    elseif a == "--out-root" then
      once("--out-root", o.out_root)
      o.out_root = value("--out-root")
    elseif a == "--allow-large" then
      o.allow_large = true
    elseif a == "--set" then
      o.set_list = o.set_list or {}
      for kv in value("--set"):gmatch("[^,]+") do o.set_list[#o.set_list + 1] = kv end
      o.set = require("repro.cli").parse_overrides(o.set_list, "repro run --set")
    elseif a:match("^%-") then
      user_error("repro run: unknown option %s", a)
    elseif o.file then
      user_error("repro run: one study file at a time (got %s and %s)", o.file, a)
    else
      o.file = a
    end
    i = i + 1
  end
  if not o.file then
    user_error("usage: bin/repro run lua/experiments/X.lua [--jobs N] [--only variant=V,seed=S] "
      .. "[--dry-run] [--force] [--out-root DIR] [--set key=value,...] [--allow-large]")
  end
  return o
end

local function selected(s, only)
  if #only == 0 then return s.runs end
  local variants, seeds = {}, {}
  for _, v in ipairs(s.variants) do variants[v.name] = true end
  for _, x in ipairs(s.seeds) do seeds[x] = true end
  for _, sel in ipairs(only) do
    if sel.variant and not variants[sel.variant] then
      user_error("repro run: --only variant=%s: the study has no such variant", sel.variant)
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

-- Records of other studies under out_root: config.json text -> list of run directories.
local function other_records(out_root, study_dir)
  local index = {}
  local list = fs.capture("find " .. fs.quote(out_root) .. " -mindepth 4 -maxdepth 4 " ..
    "-path '*/seed-*/config.json' -name config.json") or ""
  local paths = {}
  for p in list:gmatch("[^\n]+") do
    if p:sub(1, #study_dir + 1) ~= study_dir .. "/" then paths[#paths + 1] = p end
  end
  table.sort(paths)
  for _, p in ipairs(paths) do
    local text = fs.read(p)
    if text then
      index[text] = index[text] or {}
      table.insert(index[text], (p:gsub("/config%.json$", "")))
    end
  end
  return index
end

local function plan(s, runs, out_root, force)
  local dir = study.dir(out_root, s)
  local index
  for _, r in ipairs(runs) do
    r.dir = dir .. "/" .. r.rel
    r.source = nil
    r.status, r.info = record.status(r.dir, r.cfg)
    if r.status == "changed" and r.info.finished and not force then
      r.action = "refuse" -- a finished record is never overwritten by another config
    elseif force then
      r.action = "train"
    elseif r.status == "done" then
      r.action = "reuse"
    else
      index = index or other_records(out_root, dir)
      for _, src in ipairs(index[record.config_text(r.cfg)] or {}) do
        if record.status(src, r.cfg) == "done" then
          r.source = src
          break
        end
      end
      if r.source then
        r.action = "copy"
      else
        r.action = ({ partial = "resume", changed = "rerun", corrupt = "repair" })[r.status] or
          "train"
      end
    end
  end
end

-- The runs refused by plan(): finished records of another config, without --force.
local function refusal(runs)
  local t = {}
  for _, r in ipairs(runs) do
    if r.action == "refuse" then
      t[#t + 1] = string.format("%s (%s)", r.label, table.concat(r.info.keys, ", "))
    end
  end
  if #t == 0 then return nil end
  return string.format("repro run: record: %d finished record%s of another config: %s; a " ..
    "finished record is never overwritten without --force (nothing was written)", #t,
    #t == 1 and " holds a run" or "s hold runs", table.concat(t, "; "))
end

local ACTION_TEXT = {
  reuse = "reuse   ", copy = "copy    ", resume = "resume  ", rerun = "rerun   ", train = "train   ",
  repair = "repair  ", refuse = "REFUSED ",
}

local function print_plan(s, runs, out_root, threads, jobs)
  local n = {}
  for _, r in ipairs(runs) do n[r.action] = (n[r.action] or 0) + 1 end
  print(string.format("study %s (%s): %d of its %d runs selected; %d job%s x %d thread%s; " ..
    "records in %s", s.name, shown(s.file), #runs, #s.runs, jobs, jobs == 1 and "" or "s",
    threads, threads == 1 and "" or "s", shown(study.dir(out_root, s))))
  for _, r in ipairs(runs) do
    local why = ({
      reuse = "done, config unchanged" .. (r.info.verified and "" or ", no checksum"),
      copy = r.source and ("identical done record " .. shown(r.source)),
      resume = "from its checkpoint",
      rerun = "config changed: " .. table.concat(r.info.keys or {}, ", "),
      repair = "failed its checks: " .. table.concat(r.info.problems or {}, "; ") ..
        "; its files are kept aside",
      refuse = "finished with another config: " .. table.concat(r.info.keys or {}, ", ") ..
        "; needs --force",
      train = r.status == "done" and "--force" or (r.status == "missing" and "" or r.status),
    })[r.action]
    print(string.format("  %s%-28s %d steps%s", ACTION_TEXT[r.action], r.label, r.cfg.iters,
      why ~= "" and ("  (" .. why .. ")") or ""))
  end
  print(string.format("dry run: %d to train (%d resumed), %d reused, %d copied; nothing written",
    (n.train or 0) + (n.resume or 0) + (n.rerun or 0) + (n.repair or 0), n.resume or 0,
    n.reuse or 0, n.copy or 0))
  if n.refuse then print(refusal(runs)) end
end

local function remove_checkpoint_of(dir, config_path)
  if fs.exists(config_path) then
    os.remove(record.checkpoint_path(dir, fs.sha256(config_path)))
  end
end

-- Copies the done record src into r.dir (metrics.json last), noting where it came from.
local function copy_record(r, out_root)
  fs.mkdir_p(r.dir)
  os.remove(r.dir .. "/metrics.json")
  remove_checkpoint_of(r.dir, r.dir .. "/config.json")
  fs.write_atomic(r.dir .. "/config.json", assert(fs.read(r.source .. "/config.json")))
  fs.write_atomic(r.dir .. "/log.csv", assert(fs.read(r.source .. "/log.csv")))
  local manifest = json.decode(assert(fs.read(r.source .. "/manifest.json")))
  manifest.copied_from = manifest.copied_from or r.source:sub(#out_root + 2)
  manifest.copied_utc = os.date("!%Y-%m-%dT%H:%M:%SZ")
  fs.write_atomic(r.dir .. "/manifest.json", json.pretty(manifest))
  fs.write_atomic(r.dir .. "/metrics.json", assert(fs.read(r.source .. "/metrics.json")))
end

-- Rough cost of one step, for the study ETA: tokens x (parameters + attention).
local function step_cost(cfg)
  return cfg.batch * cfg.context * (engine.param_count(cfg) + cfg.n_layer * cfg.context * cfg.d_model)
end

local function result_text(r)
  local text = fs.read(r.dir .. "/metrics.json")
  local ok, m = pcall(json.decode, text or "")
  if not ok or type(m) ~= "table" then return "" end
  if m.diverged then
    return string.format("diverged at step %s", tostring(math.tointeger(m.diverge_step)))
  end
  return m.val_loss and string.format("val_loss %.4f", m.val_loss) or ""
end

-- Trains the queue in `jobs` workers; returns the lists of runs that finished, were
-- stopped (with a checkpoint), failed and were not started, and whether Ctrl-C was
-- pressed.
local function execute(s, queue, jobs, threads, total_done, total)
  local tmp = fs.capture("mktemp -d -t repro-run.XXXXXX")
  if not tmp then
    user_error("repro run: filesystem: cannot create a temporary directory for progress " ..
      "files (mktemp -d in $TMPDIR or /tmp failed)")
  end
  host.trap_signals()
  local seen_int = host.sigints()
  local interrupted = false
  local running, nrunning = {}, 0
  local finished, stopped, failed = {}, {}, {}
  local next_i = 1
  local t0, work_done = nil, 0
  local remaining = 0
  for _, r in ipairs(queue) do
    r.cost = step_cost(r.cfg)
    remaining = remaining + r.cfg.iters * r.cost
  end
  local last_plain = host.now()

  local function read_step(w)
    local v = math.tointeger(tonumber(fs.read(w.progress) or ""))
    if v then
      if not w.base then w.base = w.run.action == "resume" and v or 0 end
      w.step = v
    end
  end

  local function status_line()
    local now = host.now()
    local done_work, left = work_done, remaining
    local parts = {}
    for _, w in pairs(running) do
      read_step(w)
      local step = w.step or 0
      done_work = done_work + (step - (w.base or step)) * w.run.cost
      left = left - step * w.run.cost
      -- after its last step a run evaluates the whole validation split: no step moves
      parts[#parts + 1] = step >= w.run.cfg.iters and (w.run.label .. " evaluating") or
        string.format("%s step %d/%d", w.run.label, step, w.run.cfg.iters)
    end
    table.sort(parts)
    local eta = (t0 and done_work > 0) and left * (now - t0) / done_work or nil
    local text = string.format("[%d/%d done] %s  ETA %s", total_done, total,
      table.concat(parts, ", "), progress.fmt_time(eta))
    if tty then
      io.stderr:write("\r", text, "\27[K")
      io.stderr:flush()
    elseif now - last_plain >= PLAIN_EVERY_S then
      last_plain = now
      say("%s", text)
    end
  end

  local function start(r)
    if r.action == "rerun" then remove_checkpoint_of(r.dir, r.dir .. "/config.json") end
    if r.action == "train" and r.status ~= "missing" then -- --force: from scratch
      os.remove(r.dir .. "/metrics.json")
      remove_checkpoint_of(r.dir, r.dir .. "/config.json")
      fs.write_atomic(r.dir .. "/config.json", record.config_text(r.cfg))
      remove_checkpoint_of(r.dir, r.dir .. "/config.json")
    end
    local w = { run = r, progress = string.format("%s/%d", tmp, next_i) }
    local argv = { host.exe, "run-worker", tostring(host.pid()), r.dir, tostring(threads),
      tostring(s.checkpoint_every), w.progress }
    for _, kv in ipairs(config_args(r.cfg)) do argv[#argv + 1] = kv end
    w.pid = host.spawn(argv)
    running[w.pid] = w
    nrunning = nrunning + 1
    t0 = t0 or host.now()
    say("[%d/%d done] start %s (%s, %d steps, %d thread%s)", total_done, total, r.label,
      r.action == "resume" and "resuming from its checkpoint" or
        (r.action == "rerun" and "config changed" or
        (r.action == "repair" and "its record failed its checks" or "new")), r.cfg.iters, threads,
      threads == 1 and "" or "s")
  end

  local function reap(pid, how, code)
    local w = running[pid]
    if not w then return end
    running[pid] = nil
    nrunning = nrunning - 1
    read_step(w)
    local r = w.run
    remaining = remaining - r.cfg.iters * r.cost
    work_done = work_done + ((w.step or 0) - (w.base or 0)) * r.cost
    if record.status(r.dir, r.cfg) == "done" then
      total_done = total_done + 1
      finished[#finished + 1] = r
      say("[%d/%d done] done  %s  %s", total_done, total, r.label, result_text(r))
    elseif how == "exit" and code == 130 then
      r.stopped_at = w.step
      stopped[#stopped + 1] = r
      say("[%d/%d done] stopped %s at step %s (checkpoint saved)", total_done, total, r.label,
        tostring(w.step or "?"))
    else
      r.failure = how == "signal" and ("killed by signal " .. code) or ("exit status " .. code)
      failed[#failed + 1] = r
      say("[%d/%d done] FAILED %s (%s)", total_done, total, r.label, r.failure)
    end
  end

  while true do
    if host.sigints() > seen_int then
      seen_int = host.sigints()
      if not interrupted then
        say("repro run: interrupted; stopping every run after its current step...")
      end
      interrupted = true
      for pid in pairs(running) do host.kill(pid, "INT") end
    end
    while true do
      local pid, how, code = host.wait(false)
      if not pid then break end
      reap(pid, how, code)
    end
    while not interrupted and nrunning < jobs and next_i <= #queue do
      start(queue[next_i])
      next_i = next_i + 1
    end
    if nrunning == 0 and (interrupted or next_i > #queue) then break end
    status_line()
    host.sleep(POLL_S)
  end
  if tty then io.stderr:write("\r\27[K") end
  for i = 1, #queue do os.remove(string.format("%s/%d", tmp, i)) end
  os.remove(tmp)
  local not_started = {}
  for i = next_i, #queue do not_started[#not_started + 1] = queue[i] end
  return finished, stopped, failed, not_started, interrupted
end

local function labels(runs)
  local t = {}
  for _, r in ipairs(runs) do t[#t + 1] = r.label end
  return table.concat(t, ", ")
end

local function write_study_manifest(s, dir, facts)
  local commit, dirty = record.git_info()
  local sum = 0
  for _, r in ipairs(s.runs) do
    local ok, m = pcall(json.decode, fs.read(dir .. "/" .. r.rel .. "/manifest.json") or "")
    if ok and type(m) == "table" and not m.copied_from and type(m.wall_s) == "number" then
      sum = sum + m.wall_s
    end
  end
  facts.study, facts.file = s.name, s.file_rel
  facts.git_commit, facts.git_dirty = commit, dirty
  facts.host, facts.repro_version = host.hostname(), host.version
  facts.runs_wall_s_sum = sum
  fs.write_atomic(dir .. "/manifest.json", json.pretty(facts))
end

-- The records root: --out-root, else $REPRO_EXPERIMENTS, else <root>/experiments; absolute.
-- With --set overrides (`set`) and no --out-root, a root of their own,
-- <that root>-set/<12 hex of the overrides' SHA-256>, so they never mix with (or
-- overwrite) the study's canonical records.
function M.out_root(given, set)
  local env_root = os.getenv("REPRO_EXPERIMENTS")
  local out_root = given or (env_root ~= "" and env_root) or (host.root .. "/experiments")
  if out_root:sub(1, 1) ~= "/" then out_root = (os.getenv("PWD") or ".") .. "/" .. out_root end
  if set and next(set) and not given then
    local keys = {}
    for k in pairs(set) do keys[#keys + 1] = k end
    table.sort(keys)
    for i, k in ipairs(keys) do
      local v = set[k]
      keys[i] = k .. "=" .. (math.type(v) == "float" and string.format("%.17g", v) or tostring(v))
    end
    out_root = out_root:gsub("/+$", "") .. "-set/" ..
      fs.sha256_text(table.concat(keys, ",")):sub(1, 12)
  end
  return out_root
end

-- For `bin/repro plan`, `run-one`, `status` and `submit` (lua/repro/plan.lua, slurm.lua).
M.selected, M.plan, M.copy_record, M.shown = selected, plan, copy_record, shown
M.remove_checkpoint_of, M.result_text, M.relative_to_root =
  remove_checkpoint_of, result_text, relative_to_root

-- analyze_only (`bin/repro analyze`): the same, except that it trains nothing: with any
-- run of the study not done it lists them with their state and exits 1, no summary.
function M.main(args, analyze_only)
  local o = parse_args(args)
  if analyze_only and (o.jobs or o.force or o.dry_run or #o.only > 0) then
    user_error("repro analyze: takes only --out-root and --set (it trains nothing and " ..
      "analyses every run of the study)")
  end
  -- out_root: where a seeds-from-power study finds its pilot's summary
  local s = study.load(o.file, o.set, { allow_large = o.allow_large,
    out_root = M.out_root(o.out_root, o.set) })
  s.file_rel = relative_to_root(o.file)
  local out_root = M.out_root(o.out_root, o.set)
  if o.set and not o.out_root then
    say("repro run: runs changed by --set go to %s (their own records root; --out-root " ..
      "chooses another)", shown(out_root))
  end
  local jobs = o.jobs or s.jobs
  if jobs > cores() then
    say("repro run: %d jobs, more than the %d CPU%s this process may use: running %d at once " ..
      "(results do not depend on it)", jobs, cores(), cores() == 1 and "" or "s", cores())
    jobs = cores()
  end
  local threads = math.max(1, cores() // jobs)
  local runs = selected(s, o.only)
  local dir = study.dir(out_root, s)
  study.check_owner(dir, o.file)
  plan(s, runs, out_root, o.force)
  if o.dry_run then
    print_plan(s, runs, out_root, threads, jobs)
    return 0
  end
  local refused = refusal(runs)
  if refused then user_error("%s", refused) end

  fs.mkdir_p(dir)
  if not host.lock(dir, false) then
    say("repro run: another bin/repro run is working on %s; waiting for it to finish", shown(dir))
    host.lock(dir, true)
    plan(s, runs, out_root, o.force)
    refused = refusal(runs)
    if refused then user_error("%s", refused) end
  end
  -- Under the lock: a killed runner's temporary files are stale.
  fs.remove_stale_tmp(dir)
  local t_start, start_utc = host.now(), os.date("!%Y-%m-%dT%H:%M:%SZ")
  -- From here on the records may change: an old summary would describe other records.
  local old_summary = fs.read(dir .. "/summary.json")
  local old_manifest = fs.read(dir .. "/manifest.json")
  os.remove(dir .. "/summary.json")
  os.remove(dir .. "/manifest.json")
  local count = {}
  local queue = {}
  local total_done = 0
  for _, r in ipairs(runs) do
    count[r.action] = (count[r.action] or 0) + 1
    if r.status == "corrupt" then
      local aside = record.put_aside(r.dir)
      say("record %s failed its checks (%s): its files are kept in %s; it is trained again",
        r.label, table.concat(r.info.problems, "; "), shown(aside))
      r.status = "missing"
    end
    if r.action == "reuse" then
      total_done = total_done + 1
    elseif r.action == "copy" then
      copy_record(r, out_root)
      total_done = total_done + 1
      say("copied %s from %s (identical config)", r.label, shown(r.source))
    else
      queue[#queue + 1] = r
    end
  end
  if analyze_only and #queue > 0 then return require("repro.plan").unfinished(s, queue) end
  say("study %s: %d runs selected: %d to train (%d resumed, %d rerun after a config change), " ..
    "%d reused, %d copied; %d job%s x %d thread%s", s.name, #runs, #queue, count.resume or 0,
    count.rerun or 0, count.reuse or 0, count.copy or 0, jobs, jobs == 1 and "" or "s", threads,
    threads == 1 and "" or "s")

  local finished, stopped, failed, not_started, interrupted =
    execute(s, queue, jobs, threads, total_done, #runs)
  if interrupted or #failed > 0 then
    local done = {}
    for _, r in ipairs(runs) do
      if record.status(r.dir, r.cfg) == "done" then done[#done + 1] = r end
    end
    say("repro run: %s. Finished: %d of %d runs%s.", interrupted and "interrupted" or
      "some runs failed", #done, #runs, #done > 0 and (" (" .. labels(done) .. ")") or "")
    if #stopped > 0 then
      local t = {}
      for _, r in ipairs(stopped) do
        t[#t + 1] = string.format("%s at step %s", r.label, tostring(r.stopped_at or "?"))
      end
      say("Stopped with a checkpoint: %s.", table.concat(t, ", "))
    end
    if #failed > 0 then
      local t = {}
      for _, r in ipairs(failed) do t[#t + 1] = r.label .. " (" .. r.failure .. ")" end
      say("Failed: %s.", table.concat(t, ", "))
    end
    if #not_started > 0 then say("Not started: %s.", labels(not_started)) end
    say("Rerun the same command to finish only what is missing.")
    return interrupted and 130 or 1
  end

  -- The analysis needs every run of the study, not only the selected ones.
  local records, missing = {}, {}
  for _, r in ipairs(s.runs) do
    local rdir = dir .. "/" .. r.rel
    records[r.variant] = records[r.variant] or {}
    if record.status(rdir, r.cfg) == "done" then
      records[r.variant][r.seed] = assert(analysis.read_run(rdir, study.metric_names()))
    else
      missing[#missing + 1] = r.label
    end
  end
  if #missing > 0 then
    say("repro run: %d run%s of the study %s not done (%s); no summary. Run the study " ..
      "without --only to complete it.", #missing, #missing == 1 and "" or "s",
      #missing == 1 and "is" or "are", table.concat(missing, ", "))
    return 0
  end
  local summary = analysis.summarize(s, records)
  local path = dir .. "/summary.json"
  local text = json.pretty(summary)
  fs.write_atomic(path, text)
  local diverged = 0
  for _, v in pairs(summary.per_variant) do diverged = diverged + v.n_diverged end
  if #finished == 0 and not count.copy and text == old_summary and old_manifest then
    -- Nothing trained or copied and the same summary: keep the manifest of the invocation
    -- that made it, so rerunning a finished study changes no file (make reproduce).
    fs.write_atomic(dir .. "/manifest.json", old_manifest)
  else
    write_study_manifest(s, dir, {
      start_utc = start_utc, end_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"),
      wall_s = host.now() - t_start, jobs = not analyze_only and jobs or nil,
      threads_per_job = not analyze_only and threads or nil,
      runs = #s.runs, runs_trained = #finished, runs_reused = count.reuse or 0,
      runs_copied = count.copy or 0, runs_diverged = diverged,
      command_line_overrides = s.set and json.object(s.set) or nil,
    })
  end
  say("study %s: %d trained, %d reused, %d copied in %s", s.name, #finished, count.reuse or 0,
    count.copy or 0, progress.fmt_time(host.now() - t_start))
  io.write(analysis.verdict_table(summary))
  print("summary: " .. shown(path))
  return 0
end

-- bin/repro run-worker PPID DIR THREADS CHECKPOINT_EVERY PROGRESS_FILE key=value...
-- One run for the runner: exit 0 when its record is written (diverged included), 130
-- when interrupted (checkpoint saved), 1 on an error, 75 when another process (a
-- `bin/repro run-one`) is training the same run.
function M.worker(args)
  local ppid = math.tointeger(tonumber(args[1] or ""))
  local dir, threads = args[2], math.tointeger(tonumber(args[3] or ""))
  local every, progress_path = math.tointeger(tonumber(args[4] or "")), args[5]
  if not (ppid and dir and threads and every and progress_path) then
    user_error("repro run-worker: internal command of `bin/repro run`")
  end
  if not host.die_with_parent(ppid) then return 1 end
  local cfg = record.resolve(require("repro.cli").parse_overrides(
    table.move(args, 6, #args, 1, {}), "repro run-worker"))
  local last = 0
  -- Holds the run directory's lock and keeps its attempt.json (lua/repro/runstate.lua).
  local m, why, msg = require("repro.runstate").train(cfg, dir, { threads = threads,
    checkpoint_every = every,
    on_step = function(step)
      local now = host.now()
      if now - last >= 0.2 then
        last = now
        fs.write_atomic(progress_path, tostring(step + 1))
      end
    end })
  if not m then
    if why == "done" then return 0 end
    io.stderr:write("repro run: ", dir, ": ", msg, "\n")
    return 75
  end
  fs.write_atomic(progress_path, tostring(m.steps))
  if m.interrupted or m.stopped then return 130 end
  return 0
end

return M
