-- The commands of bin/repro (besides running a script): `train` here, the others in the
-- modules of the command table below.
local engine = require "engine"
local json = require "repro.core.json"
local record = require "repro.record"
local tasks = require "repro.tasks"
local progress = require "repro.core.progress"
local proc = require "repro.proc"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local config = require "repro.core.config"
local base = require "repro.core.base"
local runner = require "repro.cli.run"
local worker = require "repro.run.worker"
local report = require "repro.report"
local standalone = require "repro.report.standalone"
local parallel = require "repro.run.parallel"
local slurm = require "repro.run.slurm"
local order = require "repro.cli.studies"
local study = require "repro.study"
local depends = require "repro.study.depends"
local sandbox = require "repro.sandbox"
local host = require "repro.host"
local compare = require "repro.cli.compare"
local export = require "repro.cli.export"
local newstudy = require "repro.cli.new"
local taskcmd = require "repro.cli.tasks"
local kept = require "repro.cli.model"
local costcmd = require "repro.cli.cost"
local corpora_cmd = require "repro.cli.corpora"
local verify = require "repro.cli.verify"
local audit = require "repro.cli.audit"
local ledger = require "repro.cli.ledger"
local textable = require "repro.core.textable"

local M = {}
local commands = {}

local user_error = base.user_error

-- Takes the lock `bin/repro run`'s workers take on a run directory (proc.lock, held
-- until this process ends), retrying briefly: a `bin/repro status` probe holds it for
-- an instant.
local function lock_record(dir, who)
  for _ = 1, 20 do
    local ok, got = pcall(proc.lock, dir, false)
    if not ok then user_error("%s: filesystem: %s", who, tostring(got)) end
    if got then return end
    proc.sleep(0.05)
  end
  user_error("%s: filesystem: %s is being written by another bin/repro process (train --out, " ..
    "run or run-one); nothing was changed", who, dir)
end

local TRAIN_USAGE = "usage: bin/repro train [key=value ...] [--out DIR] [--checkpoint-every K] " ..
  "[--force] [--json] [--keep-model]"

local function parse_train_args(args)
  local o = base.parse_options(args, "repro train", TRAIN_USAGE, {
    ["--out"] = { key = "out", kind = "value", needs = "a directory" },
    ["--checkpoint-every"] = { key = "every", kind = "int", min = 1 },
    ["--force"] = { key = "force", kind = "flag" },
    ["--json"] = { key = "json", kind = "flag" },
    ["--keep-model"] = { key = "keep_model", kind = "flag" } })
  o.kv = o.targets
  for _, f in ipairs({ { "every", "--checkpoint-every needs --out (the checkpoint goes into " ..
      "the record)" }, { "force", "--force needs --out" },
      { "keep_model", "--keep-model needs --out (the model goes into the record)" } }) do
    if o[f[1]] and not o.out then user_error("repro train: %s", f[2]) end
  end
  return o
end

-- Refuses, before anything is written, an --out that is a file or holds a finished
-- record of another config (without --force); then creates and locks it.
local function prepare_out(out, cfg, force)
  local st = sys.stat(out)
  if st and st.type ~= "dir" then
    user_error("repro train: filesystem: --out %s exists and is not a directory", out)
  end
  local state, info = record.status(out, cfg)
  if state == "changed" and info.finished and not force then
    user_error("repro train: record: %s holds a finished run of another config (%s): " ..
      "not overwritten without --force", out, table.concat(info.keys, ", "))
  end
  local ok, err = pcall(fs.mkdir_p, out)
  if not ok then user_error("repro train: %s", err.message or tostring(err)) end
  lock_record(out, "repro train")
end

-- Trains cfg (into the record o.out, if given) with a progress bar: ok and the metrics,
-- or false and the error.
local function train_with_bar(cfg, o)
  local bar = progress.new(cfg.iters, cfg.batch * cfg.context)
  local function on_step(step, row) bar:update(step, row.loss, row.lr) end
  -- User errors ({message=}) pass through; an internal error keeps its traceback.
  local function keep(e)
    if type(e) == "table" then return e end
    return debug.traceback(tostring(e), 2)
  end
  local ok, metrics
  if o.out then
    ok, metrics = xpcall(record.run, keep, cfg, o.out, { on_step = on_step,
      checkpoint_every = o.every, force = o.force, keep_model = o.keep_model })
  else
    local run_cfg = {}
    for k, v in pairs(cfg) do run_cfg[k] = v end
    run_cfg.threads = record.cap_threads(cfg.threads, "repro train")
    -- a task suite is scored as a record's run scores it, so the JSON line has its metrics
    local suite = cfg.tasks and cfg.tasks ~= "" and
      tasks.load(record.data_path(cfg), cfg.tasks) or nil
    ok, metrics = pcall(engine.train, run_cfg, { on_step = on_step,
      tasks = suite and suite.sets or nil })
    if not ok then
      metrics = record.engine_error(metrics)
    elseif suite and metrics.tasks then
      for k, v in pairs(tasks.metrics(suite.sets, metrics.tasks)) do metrics[k] = v end
      metrics.tasks = nil
    end
  end
  bar:finish()
  return ok, metrics
end

-- The result of `bin/repro train` in a few lines (what a terminal shows without --json).
function M.train_summary(m, out)
  local lines = {}
  if m.diverged then
    lines[1] = string.format("diverged at step %s (lr %s); loss at initialization %.4f",
      tostring(math.tointeger(m.diverge_step) or m.diverge_step), tostring(m.diverge_lr),
      m.init_loss or 0 / 0)
  else
    lines[1] = string.format("val_loss %.4f  val_ppl %.3f  val_acc %.4f  ece %.4f",
      m.val_loss, m.val_ppl, m.val_acc, m.ece or 0 / 0)
    lines[2] = string.format("train_loss %.4f  final_grad_norm %.3f  params %d",
      m.train_loss or 0 / 0, m.final_grad_norm or 0 / 0, math.tointeger(m.params) or 0)
  end
  lines[#lines + 1] = string.format("%d steps in %s, %.0f tokens/s", math.tointeger(m.steps) or 0,
    progress.fmt_time(m.wall_s), m.tokens_per_s or 0)
  lines[#lines + 1] = out and ("record: " .. out .. " (metrics.json has every metric)") or
    "every metric: bin/repro train ... --json"
  return table.concat(lines, "\n") .. "\n"
end

-- A user error ({message=}) as `repro train`'s; an internal error as it is.
local function fail(e)
  if type(e) == "table" and type(e.message) == "string" then
    user_error("repro train: %s", e.message)
  end
  error(e, 0)
end

function commands.train(args)
  local o = parse_train_args(args)
  if o.help then return 0 end
  local rok, cfg = pcall(record.resolve, config.parse_overrides(o.kv, "repro train"))
  if not rok then fail(cfg) end
  local cok, cerr = pcall(engine.check, cfg)
  if not cok then fail(record.engine_error(cerr)) end
  -- a record: SIGINT and SIGTERM are counted from here (record.run stops after the step
  -- it is in, or before the first), so one that arrives while the record is written,
  -- after the last step, lets it finish instead of killing it half-written
  if o.out then
    proc.trap_signals()
    prepare_out(o.out, cfg, o.force)
  end
  local ok, metrics = train_with_bar(cfg, o)
  if not ok then fail(metrics) end
  if metrics.interrupted then
    io.stderr:write("repro train: interrupted at step ", metrics.steps, " of ", cfg.iters,
      o.out and ("; rerun the same command to resume from step " .. metrics.steps ..
      " (checkpoint saved)\n") or " (no checkpoint without --out)\n")
    return 130
  end
  local line = record.results(metrics)
  line.tokens_per_s, line.eval_tokens_per_s, line.wall_s =
    metrics.tokens_per_s, metrics.eval_tokens_per_s, metrics.wall_s
  -- on a terminal a few lines for a person; the whole JSON with --json or into a pipe
  if o.json or not host.isatty(1) then
    print(json.encode(line))
  else
    io.write(base.printable(M.train_summary(metrics, o.out), true))
  end
  return 0
end

-- A study's runs on other executors (lua/repro/run/parallel.lua, lua/repro/run/slurm.lua).
-- A sequential study goes to them one look at a time: the runs of the comparisons still
-- open (lua/repro/analysis/sequential.lua); plan or submit again after a look finishes.
parallel.batch = function(s, runs, dir)
  if not (s.analysis and s.analysis.sequential) then return runs end
  local look = runner.next_look(s, runs, dir)
  io.stderr:write(string.format("%s is sequential: %s\n", s.name, look and
    "the runs of its next look only; plan or submit again once they finish" or
    "every comparison is decided: nothing to run (analyze writes its summary)"))
  return look or {}
end

-- The other commands, each in its module: `report STUDY` is that study's own report
-- (report/standalone.lua), `report` alone the paper's.
commands.run = runner.main
commands.analyze = function(args) return runner.main(args, true) end
commands.report = function(args)
  if args[1] and not args[1]:match("^%-") then return standalone.main(args) end
  return report.main(args)
end
commands["run-worker"] = worker.main
commands.plan = parallel.plan_main
commands["run-one"] = parallel.run_one_main
commands.status = parallel.status_main
commands.submit = slurm.main
commands.sample = kept.sample_main
commands.eval = kept.eval_main
commands["export-model"] = kept.export_main
for name, module in pairs({ verify = verify, audit = audit, studies = order, compare = compare,
    export = export, new = newstudy, tasks = taskcmd, cost = costcmd, corpora = corpora_cmd,
    ledger = ledger }) do
  commands[name] = module.main
end

-- Every command's usage lines, "usage:" taken off, in the order `help` lists them: each
-- { line =, note = }, the text its own --help prints and a note said after it.
local function usage_lines()
  local out = {}
  for _, u in ipairs({ { TRAIN_USAGE },
    { runner.USAGE, "(write a summary that differs from the one on disk)" },
    { verify.USAGE }, { parallel.PLAN_USAGE }, { parallel.RUN_ONE_USAGE },
    { parallel.STATUS_USAGE }, { runner.ANALYZE_USAGE }, { slurm.USAGE }, { report.USAGE },
    { standalone.USAGE },
    { ledger.USAGE, "(the statement ledger: each finding sentence, its analyses and verdicts)" },
    { order.USAGE }, { costcmd.USAGE }, { compare.USAGE }, { export.USAGE },
    { newstudy.USAGE }, { taskcmd.USAGE }, { kept.SAMPLE_USAGE }, { kept.EVAL_USAGE },
    { kept.EXPORT_USAGE },
    { audit.USAGE, "(retrains N records per study chosen by PCG32, compares their bytes)" },
    { corpora_cmd.USAGE },
    { "bin/repro script FILE.lua [args]", "(a Lua file outside the sandbox; never a study)" },
    { "bin/repro --version" } }) do
    for line in u[1]:gmatch("[^\n]+") do
      out[#out + 1] = { line = line:gsub("^usage:", ""):match("^%s*(.-)$"), note = u[2] }
    end
  end
  return out
end

-- `bin/repro --help` is `bin/repro help`: the usages (a bracketed option is never cut: its
-- spaces are NULs while the line wraps), the environment, the config keys.
function commands.help()
  io.write("usage:\n")
  for _, u in ipairs(usage_lines()) do
    local text = u.line:gsub("%b[]", function(b) return (b:gsub(" ", "\0")) end)
    io.write((textable.wrap(text .. (u.note and " " .. u.note or ""), 94, "  ",
      string.rep(" ", 16)):gsub("\0", " ")), "\n")
  end
  io.write([[
environment:
  REPRO_DATA_ANYWHERE=1  a corpus (`data`) outside the project's data directory
                         (data/, symbolic links and '..' resolved) is allowed; without it
                         one elsewhere is refused
  REPRO_EXPERIMENTS      the records root (default: experiments/ of the project)
  REPRO_ROOT             the project root (default: found from this binary's path)
config keys (defaults):
]])
  local d = engine.defaults()
  for _, k in ipairs(engine.keys()) do
    local dflt = k.derived_from and ("= " .. k.derived_from) or tostring(d[k.name])
    io.write(string.format("  %-15s %-26s %s\n", k.name, dflt, k.help))
  end
  io.write("definitions:\n", engine.definitions())
  return 0
end

-- The project's folders of Lua scripts (from the project root): the one table of places
-- whose files `script` runs even when they fail in the study sandbox (they require the
-- suite's modules, which the sandbox has not).
M.SCRIPT_DIRS = { "tests", "scripts" }

-- `bin/repro script FILE.lua` (lua/repro.c; the word `script` is required) runs a Lua
-- file outside the sandbox, with io and os: refused for a study file, which is data and
-- runs sandboxed through `bin/repro run`.  Refused: a file under lua/experiments/ (by its
-- path as given or resolved), a path with a symbolic link or ".." in it (fs.path_problem),
-- a file whose evaluation in the study sandbox returns a table with a study's fields, and
-- a file whose evaluation there fails (an error, a limit) unless it lies in one of the
-- project's script folders (M.SCRIPT_DIRS): outside them only a file the sandbox proves
-- to be no study runs, so a study cannot dodge the guard by failing in the sandbox.
-- The evaluation is `run`'s from any working directory (the results its host functions
-- read come from the records root, never from the current folder), and one with each
-- placeholder for those results too (depends.PLACEHOLDERS), all four sharing one time
-- budget of a study file (study.shared_limits).
local STUDY_FIELDS = { "variants", "analysis", "seeds", "base" }
function M.guard_script(path)
  local function refuse(why)
    user_error("repro script: %s %s: a study runs sandboxed, with `bin/repro run %s` (or " ..
      "plan, status, analyze); `bin/repro script` runs only a Lua file that is no study",
      base.printable(path), why, base.printable(path))
  end
  local why = fs.path_problem(path)
  if why then refuse("is refused (" .. why .. ")") end
  local function under(real, dir)
    local d = sys.realpath(host.root .. "/" .. dir)
    return real and d and real:sub(1, #d + 1) == d .. "/"
  end
  local real = sys.realpath(path)
  if under(real, "lua/experiments") or ("/" .. path):find("/lua/experiments/", 1, true) then
    refuse("is a study file (it is under lua/experiments/)")
  end
  local src, rerr = fs.read(path, study.MAX_SOURCE_BYTES)
  if not src then user_error("repro script: %s", base.printable(rerr)) end
  -- a file that does not compile runs nothing: the host reports its syntax error
  if not load(src, "@" .. path, "t") then return end
  -- evaluated as `run` evaluates a study, whatever the working directory: its host
  -- functions read the records root `run` reads by default (study.results_root)
  local root = study.results_root({})
  local t0 = host.now() -- one time budget for the evaluations below (study.shared_limits)
  depends.begin(root, false)
  local ok, value = sandbox.eval(src, "@" .. path, study.shared_limits(path, t0), study.API)
  if ok and type(value) == "table" then
    for _, k in ipairs(STUDY_FIELDS) do
      if value[k] ~= nil then refuse("returns a study table (it has `" .. k .. "`)") end
    end
  end
  -- and with every placeholder for the results it reads (depends.PLACEHOLDERS), as
  -- `run --out-root DIR` or `studies` may see it: a file that returns a study's fields
  -- whatever another study's results are (one asking pcall whether they exist, say) is
  -- a study
  for _, kind in ipairs(depends.PLACEHOLDERS) do
    depends.begin(root, kind)
    local lok, listed = sandbox.eval(depends.listing_source(src), "@" .. path,
      study.shared_limits(path, t0), depends.listing_api(study.API))
    if lok and type(listed) == "table" and type(listed.fields) == "table" and
        #listed.fields > 0 then
      refuse("returns a study table (it has `" .. tostring(listed.fields[1]) .. "`)")
    end
  end
  depends.begin(nil, false)
  if not ok then
    for _, dir in ipairs(M.SCRIPT_DIRS) do
      if under(real, dir) then return end
    end
    refuse("fails in the study sandbox, so nothing proves it is no study (a script of the " ..
      "project's own goes in " .. table.concat(M.SCRIPT_DIRS, "/ or ") .. "/)")
  end
end

-- The environment variables whose values become paths or values of a command.
M.ENV_CHECKED = { "PWD", "REPRO_EXPERIMENTS", "REPRO_ROOT", "SLURM_CPUS_PER_TASK" }

-- Refuses a command-line argument or an environment value (M.ENV_CHECKED) that holds a
-- control character (newline, NUL, escape, ...), naming the flag: such a value would
-- become a second line of a `plan` command or an sbatch script, or rewrite a terminal.
function M.check_argv(cmd, args)
  for i, a in ipairs(args) do
    local c = base.control_char(a)
    if c then
      local flag = args[i - 1] and args[i - 1]:match("^%-%-[%w-]+$") and not a:match("^%-%-")
        and ("the value of " .. args[i - 1]) or a:match("^%-%-[%w-]+") or
        string.format("argument %d", i)
      user_error("repro %s: %s holds a control character (%s): refused (paths and values " ..
        "are one line of printable text)", cmd, flag, c)
    end
  end
  for _, name in ipairs(M.ENV_CHECKED) do
    local c = base.control_char(os.getenv(name) or "")
    if c then
      user_error("repro %s: the environment variable %s holds a control character (%s): " ..
        "refused", cmd, name, c)
    end
  end
end

function M.main(argv)
  local cmd = argv[1]
  if cmd == "--help" then cmd = "help" end
  local f = commands[cmd]
  if not f then
    local names, seen = {}, { help = true }
    for _, u in ipairs(usage_lines()) do
      local name = u.line:match("^bin/repro (%a[%w-]*)")
      if name and not seen[name] then names[#names + 1], seen[name] = name, true end
    end
    user_error("repro: unknown command '%s'%s (commands: %s, help)", base.printable(cmd),
      base.suggest(base.printable(cmd), commands), table.concat(names, ", "))
  end
  local args = table.move(argv, 2, #argv, 1, {})
  M.check_argv(cmd, args)
  return f(args)
end

return M
