-- The commands of bin/repro (besides running a script).
local engine = require "engine"
local json = require "repro.json"
local record = require "repro.record"
local progress = require "repro.progress"
local host = require "repro.host"
local sys = require "repro.sys"
local fs = require "repro.fs"

local M = {}
local commands = {}

local function user_error(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- "key=value" strings into a config table, typed by the engine's key list; a key given
-- twice is refused.
function M.parse_overrides(list, who)
  local types = {}
  for _, k in ipairs(engine.keys()) do types[k.name] = k.type end
  local cfg, given = {}, {}
  for _, a in ipairs(list) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if not k then user_error("%s: config: expected key=value, got '%s'", who, a) end
    local ty = types[k]
    if not ty then user_error("%s: config: unknown config key '%s'", who, k) end
    if given[k] then
      user_error("%s: config: %s is given twice (%s and %s)", who, k, given[k], a)
    end
    given[k] = a
    if ty == "integer" then
      local n = math.tointeger(tonumber(v))
      if not n then user_error("%s: config: %s=%s: expected an integer", who, k, v) end
      cfg[k] = n
    elseif ty == "number" then
      local n = tonumber(v)
      if not n then user_error("%s: config: %s=%s: expected a number", who, k, v) end
      cfg[k] = n + 0.0
    elseif ty == "boolean" then
      if v ~= "true" and v ~= "false" then
        user_error("%s: config: %s=%s: expected true or false", who, k, v)
      end
      cfg[k] = v == "true"
    else
      cfg[k] = v
    end
  end
  return cfg
end

local function check_config(cfg, who)
  local ok, err = pcall(engine.check, cfg)
  if not ok then
    err = record.engine_error(err)
    if type(err) ~= "table" then error(err, 0) end
    user_error("%s: %s", who, err.message)
  end
end

-- Takes the lock `bin/repro run`'s workers take on a run directory (host.lock, held
-- until this process ends), retrying briefly: a `bin/repro status` probe holds it for
-- an instant.
local function lock_record(dir, who)
  for _ = 1, 20 do
    local ok, got = pcall(host.lock, dir, false)
    if not ok then user_error("%s: filesystem: %s", who, tostring(got)) end
    if got then return end
    host.sleep(0.05)
  end
  user_error("%s: filesystem: %s is being written by another bin/repro process (train --out, " ..
    "run or run-one); nothing was changed", who, dir)
end

function commands.train(args)
  local kv, out, every, force = {}, nil, nil, false
  local i = 1
  local function once(name, v)
    if v ~= nil then user_error("repro train: %s is given twice", name) end
  end
  while i <= #args do
    local a = args[i]
    if a == "--out" then
      once("--out", out)
      out = args[i + 1] or user_error("repro train: --out needs a directory")
      i = i + 1
    elseif a == "--checkpoint-every" then
      once("--checkpoint-every", every)
      every = math.tointeger(tonumber(args[i + 1] or ""))
      if not every or every < 1 then
        user_error("repro train: --checkpoint-every needs an integer >= 1, got %s",
          args[i + 1] or "nothing")
      end
      i = i + 1
    elseif a == "--force" then
      force = true
    elseif a:match("^%-") then
      user_error("repro train: unknown option %s", a)
    else
      kv[#kv + 1] = a
    end
    i = i + 1
  end
  if every and not out then
    user_error("repro train: --checkpoint-every needs --out (the checkpoint goes into the record)")
  end
  if force and not out then user_error("repro train: --force needs --out") end
  local cfg = record.resolve(M.parse_overrides(kv, "repro train"))
  check_config(cfg, "repro train")
  if out then
    -- Refused before anything is written: a file in the way, a finished record of
    -- another config (without --force).
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
  local bar = progress.new(cfg.iters, cfg.batch * cfg.context)
  local function on_step(step, row) bar:update(step, row.loss, row.lr) end
  -- User errors ({message=}) pass through; an internal error keeps its traceback.
  local function keep(e)
    if type(e) == "table" then return e end
    return debug.traceback(tostring(e), 2)
  end
  local ok, metrics
  if out then
    ok, metrics = xpcall(record.run, keep, cfg, out, { on_step = on_step,
      checkpoint_every = every, force = force })
  else
    local run_cfg = {}
    for k, v in pairs(cfg) do run_cfg[k] = v end
    run_cfg.threads = record.cap_threads(cfg.threads, "repro train")
    ok, metrics = pcall(engine.train, run_cfg, { on_step = on_step })
    if not ok then metrics = record.engine_error(metrics) end
  end
  if not ok then
    bar:finish()
    if type(metrics) == "table" and type(metrics.message) == "string" then
      user_error("repro train: %s", metrics.message)
    end
    error(metrics, 0)
  end
  bar:finish()
  if metrics.interrupted then
    io.stderr:write("repro train: interrupted at step ", metrics.steps,
      out and "; rerun the same command to resume from the last checkpoint\n" or "\n")
    return 130
  end
  local line = record.results(metrics)
  line.tokens_per_s, line.eval_tokens_per_s, line.wall_s =
    metrics.tokens_per_s, metrics.eval_tokens_per_s, metrics.wall_s
  print(json.encode(line))
  return 0
end

-- The runner of lua/repro/runner.lua: a study, and one run of it in a worker process.
function commands.run(args) return require("repro.runner").main(args) end
commands["run-worker"] = function(args) return require("repro.runner").worker(args) end

-- The paper's tables, numbers and figures from the study summaries (lua/repro/report.lua).
function commands.report(args) return require("repro.report").main(args) end

-- Every record's checksums (lua/repro/verify.lua).
function commands.verify(args) return require("repro.verify").main(args) end

-- A study's runs on other executors (lua/repro/plan.lua, lua/repro/slurm.lua).
function commands.plan(args) return require("repro.plan").plan_main(args) end
commands["run-one"] = function(args) return require("repro.plan").run_one_main(args) end
function commands.status(args) return require("repro.plan").status_main(args) end
function commands.analyze(args) return require("repro.runner").main(args, true) end
function commands.submit(args) return require("repro.slurm").main(args) end
-- The studies in dependency order (lua/repro/order.lua).
function commands.studies(args) return require("repro.order").main(args) end

function commands.help()
  io.write([[
usage:
  bin/repro train [key=value ...] [--out DIR] [--checkpoint-every K] [--force]
  bin/repro run STUDY.lua [--jobs N] [--only variant=V,seed=S] [--dry-run] [--force]
                [--out-root DIR] [--set key=value,...] [--allow-large]
  bin/repro verify [DIR ...] [--strict]
  bin/repro plan STUDY.lua [--all] [--only ...] [--set ...] [--out-root DIR] [--threads N]
  bin/repro run-one STUDY.lua --only variant=V,seed=S [--set ...] [--out-root DIR]
                [--threads N]
  bin/repro status STUDY.lua [--only ...] [--set ...] [--out-root DIR]
  bin/repro analyze STUDY.lua [--set ...] [--out-root DIR]
  bin/repro submit --slurm STUDY.lua [--partition P] [--time T] [--max-parallel K]
                [--account A] [--threads N] [--only ...] [--set ...] [--out-root DIR]
                [--dry-run]
  bin/repro report [--experiments DIR] [--paper DIR] [--plots-data DIR] [--no-figures]
  bin/repro studies [--deps] [--dir DIR] [--out-root DIR]
  bin/repro SCRIPT.lua [args]
  bin/repro --version
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

function M.main(argv)
  local cmd = argv[1]
  local f = commands[cmd]
  if not f then
    user_error("repro: unknown command '%s' (commands: train, run, plan, run-one, status, " ..
      "analyze, submit, verify, report, studies, help; or a SCRIPT.lua)", cmd)
  end
  return f(table.move(argv, 2, #argv, 1, {}))
end

return M
