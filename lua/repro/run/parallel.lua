-- A study's runs handed to another executor (GNU parallel, Slurm: run/slurm.lua), and
-- their state, whoever trains them: `bin/repro plan` (one sh-quoted `bin/repro run-one`
-- command per run not done), `run-one` (one run exactly as `bin/repro run` trains it; exit
-- 0 done, 130 stopped with a checkpoint, 75 another process is training it, 1 an error),
-- `status` (each run's state, run/runstate.lua) and `analyze` (the summary once every run
-- is done).  Any number of run-one may work at once, never beside a `bin/repro run` of the
-- study.  Flags: docs/COMMANDS.md; docs/DESIGN.md, "Scale-out".
local host = require "repro.host"
local proc = require "repro.proc"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local study = require "repro.study"
local record = require "repro.record"
local progress = require "repro.core.progress"
local planner = require "repro.plan"
local cost = require "repro.plan.cost"
local runstate = require "repro.run.runstate"
local config = require "repro.core.config"
local engine = require "engine"
local base = require "repro.core.base"

local M = {}

local put, say, shown, user_error = base.put, progress.say, fs.shown, base.user_error

-- --threads of plan, run-one and submit (a base.parse_options spec).
M.THREADS = { key = "threads", kind = "int", min = 1, max = engine.MAX_THREADS }

-- The options of a command on one study file (run, analyze, plan, run-one, status,
-- submit): --only (o.only parsed, o.only_raw as given), --set (o.set, its key=value list
-- o.set_raw), --out-root and --allow-large, and the command's own (extra: a
-- base.parse_options spec); the study file is o.file.
function M.parse(args, who, usage, extra)
  local spec = {
    ["--only"] = { key = "only_raw", kind = "value", repeats = true },
    ["--set"] = { key = "set_raw", kind = "list", repeats = true },
    ["--out-root"] = { key = "out_root", kind = "value" },
    ["--allow-large"] = { key = "allow_large", kind = "flag" },
  }
  for k, v in pairs(extra) do spec[k] = v end
  local o = base.parse_options(args, who, usage, spec)
  if o.help then return o end
  o.only, o.only_raw, o.set_raw = {}, o.only_raw or {}, o.set_raw or {}
  for i, raw in ipairs(o.only_raw) do o.only[i] = planner.parse_only(raw, who) end
  if #o.set_raw > 0 then o.set = config.parse_overrides(o.set_raw, who .. " --set") end
  if #o.targets > 1 then
    user_error("%s: one study file at a time (got %s and %s)", who, o.targets[1], o.targets[2])
  end
  o.file = o.targets[1] or user_error("%s", usage)
  return o
end

-- This binary as a command another process can run from any directory.
function M.exe()
  return host.exe:find("/", 1, true) and fs.absolute(host.exe) or host.exe
end

-- An argument for sh: bare when it holds only safe characters, else single-quoted.
function M.shell_word(s)
  if s ~= "" and not s:find("[^%w%-_./=,:+@%%]") then return s end
  return fs.quote(s)
end

-- M.batch(s, runs, dir), set by the command line: the runs to hand out now (a sequential
-- study's next look); nil hands out every run.
M.batch = nil

-- Loads the study of o with its selected runs planned (planner.plan: action, dir).  The
-- records root is `bin/repro run`'s (planner.out_root: --set without --out-root has a root
-- of its own).  writes: refuse a study directory that another study file made.  every:
-- all the selected runs, not only those M.batch hands out now (`bin/repro run`).
function M.load(o, writes, every)
  local out_root = planner.out_root(o.out_root, o.set)
  local s = study.load(o.file, o.set, { allow_large = o.allow_large, out_root = out_root })
  s.file_abs, s.file_rel = fs.absolute(o.file), fs.relative_to_root(o.file)
  if o.keep_model then s.keep_model = true end
  local dir = study.dir(out_root, s)
  if writes then study.check_owner(dir, o.file) end
  local runs = planner.selected(s, o.only)
  planner.plan(s, runs, out_root, o.force)
  if M.batch and not every then runs = M.batch(s, runs, dir) end
  return s, runs, out_root, dir
end

-- The argv of `bin/repro run-one` for run r, with o's --set, --threads and --allow-large.
function M.run_one_argv(o, s, r, out_root)
  local argv = { M.exe(), "run-one", s.file_abs, "--only",
    string.format("variant=%s,seed=%d", r.variant, r.seed), "--out-root", out_root }
  if #o.set_raw > 0 then
    argv[#argv + 1] = "--set"
    argv[#argv + 1] = table.concat(o.set_raw, ",")
  end
  if o.threads then
    argv[#argv + 1] = "--threads"
    argv[#argv + 1] = tostring(o.threads)
  end
  if o.allow_large then argv[#argv + 1] = "--allow-large" end
  return argv
end

-- argv as one line for sh; a word with a control character (a newline would make a
-- second command of GNU parallel's input) is refused.
function M.command_line(argv)
  local words = {}
  for i, a in ipairs(argv) do
    local c = base.control_char(a)
    if c then
      user_error("repro plan: %s holds a control character (%s): no command printed",
        base.printable(a), c)
    end
    words[i] = M.shell_word(a)
  end
  return table.concat(words, " ")
end

-- The threads of each `bin/repro plan` command without --threads: always written, since
-- a command without it would take every core, N of them at once.
M.PLAN_THREADS = 1

M.PLAN_USAGE = "usage: bin/repro plan lua/experiments/X.lua [--all] " ..
  "[--only variant=V,seed=S] [--set key=value,...] [--out-root DIR] [--threads N] [-0]"

function M.plan_main(args)
  local o = M.parse(args, "repro plan", M.PLAN_USAGE, { ["--threads"] = M.THREADS,
    ["--all"] = { key = "all", kind = "flag" }, ["-0"] = { key = "nul", kind = "flag" } })
  if o.help then return 0 end
  o.threads = o.threads or M.PLAN_THREADS
  local s, runs, out_root, dir = M.load(o)
  local n, running, pending = runstate.sort(runs)
  local lines = {}
  for i, r in ipairs(o.all and runs or pending) do
    lines[i] = M.command_line(M.run_one_argv(o, s, r, out_root))
  end
  for _, l in ipairs(lines) do
    io.stdout:write(host.isatty(1) and base.printable(l) or l, o.nul and "\0" or "\n")
  end
  say("plan %s: %d of its %d runs selected: %d done%s, %d running elsewhere (left out%s), " ..
    "%d failed, %d pending; %d command%s above; records in %s", s.name, #runs, #s.runs,
    n.done, o.all and "" or " (left out; --all includes them)", n.running,
    #running > 0 and (": " .. table.concat(running, ", ")) or "", n.failed, n.pending,
    #lines, #lines == 1 and "" or "s", shown(dir))
  local cores = sys.cores()
  local jobs = math.max(1, cores // o.threads)
  say("each command trains with --threads %d: run at most %d at once on the %d %s here " ..
    "(parallel -j %d; jobs x threads <= cores)", o.threads, jobs, cores,
    cores == 1 and "core" or "cores", jobs)
  if #pending > 0 then
    say("plan %s: %s", s.name, select(2, cost.line(pending, jobs, o.threads)))
  end
  say("then: %s analyze %s%s%s", M.shell_word(M.exe()), M.shell_word(s.file_abs),
    o.out_root and (" --out-root " .. M.shell_word(out_root)) or "",
    #o.set_raw > 0 and (" --set " .. M.shell_word(table.concat(o.set_raw, ","))) or "")
  return 0
end

-- The Slurm submission of a study (lua/repro/run/slurm.lua), if any: label -> "12_3", and
-- the analysis job id; queue states from squeue when it answers.
local function slurm_info(dir)
  local sub = json.table_of(fs.read(dir .. "/slurm/submit.json"))
  if not sub then return nil end
  local task_of, ids = {}, {}
  for _, a in ipairs(sub.arrays or {}) do
    ids[#ids + 1] = tostring(a.job)
    for i, label in ipairs(a.runs or {}) do
      task_of[label] = string.format("%s_%d", a.job, i - 1)
    end
  end
  if sub.analysis then ids[#ids + 1] = tostring(sub.analysis) end
  local queue = {}
  if #ids > 0 then
    -- the ids come from a records tree: one shell word, whatever they hold
    local out = fs.capture("squeue -h -r -o '%i %T' -j " .. M.shell_word(table.concat(ids, ",")))
    for id, st in (out or ""):gmatch("(%S+) (%S+)") do queue[id] = st end
  end
  return { task_of = task_of, queue = queue, analysis = sub.analysis and tostring(sub.analysis),
    submitted_utc = sub.submitted_utc }
end

M.STATUS_USAGE = "usage: bin/repro status lua/experiments/X.lua [--only variant=V,seed=S] " ..
  "[--set key=value,...] [--out-root DIR]"

function M.status_main(args)
  local o = M.parse(args, "repro status", M.STATUS_USAGE, {})
  if o.help then return 0 end
  local s, runs, _, dir = M.load(o)
  local slurm = slurm_info(dir)
  local rows, width = {}, 0
  for _, r in ipairs(runs) do width = math.max(width, #r.label) end
  local n = runstate.sort(runs, function(r, state, detail)
    if state == "done" then
      detail = planner.result_text(r)
    elseif state == "pending" and r.action == "copy" then
      detail = "an identical done record exists: " .. shown(r.source) .. " (copied when run)"
    end
    local task = slurm and slurm.task_of[r.label]
    if task and state ~= "done" then
      local q = slurm.queue[task]
      detail = detail .. (detail ~= "" and "; " or "") .. "slurm task " .. task ..
        (q and (" " .. q) or " (no longer queued)")
    end
    rows[#rows + 1] = string.format("  %-8s %-" .. width .. "s  %s", state, r.label, detail)
  end)
  put(string.format("study %s (%s): %d of its %d runs selected: %d done, %d running, " ..
    "%d failed, %d pending; records in %s", s.name, shown(s.file_abs), #runs, #s.runs,
    n.done, n.running, n.failed, n.pending, shown(dir)))
  for _, row in ipairs(rows) do put((row:gsub("%s+$", ""))) end
  if slurm and slurm.analysis then
    put(string.format("slurm: submitted %s; analysis job %s %s", tostring(slurm.submitted_utc),
      slurm.analysis, slurm.queue[slurm.analysis] or "(no longer queued)"))
  end
  local all_done = true
  for _, r in ipairs(s.runs) do
    all_done = all_done and record.status(dir .. "/" .. r.rel, r.cfg) == "done"
  end
  if fs.exists(dir .. "/summary.json") then
    put("summary: " .. shown(dir .. "/summary.json"))
  elseif all_done then
    put(string.format("summary: not written yet; every run is done: %s analyze %s%s", M.exe(),
      shown(s.file_abs), o.out_root and (" --out-root " .. o.out_root) or ""))
  else
    put("summary: not written yet (written when every run of the study is done)")
  end
  return 0
end

M.RUN_ONE_USAGE = "usage: bin/repro run-one lua/experiments/X.lua --only variant=V,seed=S " ..
  "[--set key=value,...] [--out-root DIR] [--threads N] [--keep-model]"

-- Takes the study directory's lock shared, waiting while a `bin/repro run` or `analyze`
-- holds it.  Returns whether it waited, or nil when a signal came meanwhile.
local function lock_study_shared(dir, who)
  local waited = false
  while not runstate.lock(dir, true, 1) do
    if not waited then
      say("repro run-one %s: a `bin/repro run` or `analyze` of the study holds %s; waiting",
        who, shown(dir))
    end
    waited = true
    if proc.sigints() > 0 then return nil end
    proc.sleep(0.5)
  end
  return waited
end

local function say_done(who, how, r)
  put(string.format("%s: done (%s)  %s", who, how, planner.result_text(r)))
  return 0
end

-- run-one of a run whose identical done record exists in another study.
local function copy_one(r, out_root, who)
  fs.mkdir_p(r.dir)
  if not runstate.lock(r.dir) then
    say("repro run-one %s: another process is training this run", who)
    return 75
  end
  -- the study's summary.json and manifest.json stay: a summary is rewritten only by
  -- `analyze --update`, and the report refuses one whose records digest no longer matches
  if record.status(r.dir, r.cfg) ~= "done" then planner.copy_record(r, out_root) end
  return say_done(who, "copied from " .. shown(r.source), r)
end

-- run-one of a run to train (or resume); returns the exit status.
local function train_one(o, s, r, who)
  local t0 = host.now()
  local bar = progress.new(r.cfg.iters, r.cfg.batch * r.cfg.context, who .. "  ")
  local m, why, msg = runstate.train(r.cfg, r.dir, {
    threads = o.threads or math.tointeger(tonumber(os.getenv("SLURM_CPUS_PER_TASK") or "")) or 0,
    checkpoint_every = s.checkpoint_every, study_file = s.file, keep_model = s.keep_model,
    on_step = function(step, row) bar:update(step, row.loss, row.lr) end,
    prepare = function()
      -- an earlier summary stays, as in `bin/repro run` (see copy_one)
      if r.action == "rerun" then planner.remove_checkpoint_of(r.dir, r.dir .. "/config.json") end
      if r.action == "resume" then say("%s: %s", who, record.resume_text(r.dir)) end
    end,
  })
  bar:finish()
  if why == "done" then return say_done(who, "finished by another process", r) end
  if not m then
    say("repro run-one %s: %s", who, msg)
    return 75
  end
  if m.interrupted or m.stopped then
    say("repro run-one %s: stopped at step %d of %d with a checkpoint; the same command " ..
      "resumes it from step %d", who, m.steps, r.cfg.iters, m.steps)
    return 130
  end
  local from = m.resumed_from or 0
  return say_done(who, string.format("trained %d steps%s in %s", m.steps - from,
    from > 0 and string.format(" from step %d", from) or "", progress.fmt_time(host.now() - t0)), r)
end

function M.run_one_main(args)
  local o = M.parse(args, "repro run-one", M.RUN_ONE_USAGE, { ["--threads"] = M.THREADS,
    ["--keep-model"] = { key = "keep_model", kind = "flag" } })
  if o.help then return 0 end
  if #o.only ~= 1 or not o.only[1].variant or not o.only[1].seed then
    user_error("repro run-one: needs exactly one --only variant=V,seed=S\n%s", M.RUN_ONE_USAGE)
  end
  proc.trap_signals() -- SIGINT/SIGTERM before training: stop before touching anything
  local s, runs, out_root, dir = M.load(o, true)
  local r = runs[1]
  local who = s.name .. " " .. r.label
  fs.mkdir_p(dir)
  local waited = lock_study_shared(dir, who)
  if waited == nil then return 130 end
  if waited then planner.plan(s, runs, out_root, false) end
  if proc.sigints() > 0 then
    say("repro run-one %s: stopped by a signal before training", who)
    return 130
  end
  if r.action == "reuse" then return say_done(who, "reused", r) end
  if r.action == "copy" then return copy_one(r, out_root, who) end
  return train_one(o, s, r, who)
end

-- `bin/repro analyze` with runs not done (runner.main): says which and why; exit 1.
function M.unfinished(s, queue)
  local lines = {}
  local n = runstate.sort(queue, function(r, state, detail)
    lines[#lines + 1] = string.format("  %-8s %s%s", state, r.label,
      detail ~= "" and ("  " .. detail) or "")
  end)
  say("repro analyze: study %s: %d of its %d runs not done (%d failed, %d running, %d pending); " ..
    "no summary:", s.name, #queue, #s.runs, n.failed, n.running, n.pending)
  for _, l in ipairs(lines) do say("%s", l) end
  say("Train them with `bin/repro run %s` (or submit the study again): finished runs are " ..
    "reused, stopped ones resume from their checkpoints.", s.file_rel or s.file)
  return 1
end

return M
