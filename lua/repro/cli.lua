-- The commands of bin/repro (besides running a script).
local engine = require "engine"
local json = require "repro.json"
local record = require "repro.record"
local progress = require "repro.progress"

local M = {}
local commands = {}

local function user_error(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- "key=value" strings into a config table, typed by the engine's key list.
function M.parse_overrides(list, who)
  local types = {}
  for _, k in ipairs(engine.keys()) do types[k.name] = k.type end
  local cfg = {}
  for _, a in ipairs(list) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if not k then user_error("%s: expected key=value, got '%s'", who, a) end
    local ty = types[k]
    if not ty then user_error("%s: unknown config key '%s'", who, k) end
    if ty == "integer" then
      local n = math.tointeger(tonumber(v))
      if not n then user_error("%s: %s=%s: expected an integer", who, k, v) end
      cfg[k] = n
    elseif ty == "number" then
      local n = tonumber(v)
      if not n then user_error("%s: %s=%s: expected a number", who, k, v) end
      cfg[k] = n + 0.0
    elseif ty == "boolean" then
      if v ~= "true" and v ~= "false" then
        user_error("%s: %s=%s: expected true or false", who, k, v)
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
  if not ok then user_error("%s: %s", who, tostring(err)) end
end

function commands.train(args)
  local kv, out, every = {}, nil, 0
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--out" then
      out = args[i + 1] or user_error("repro train: --out needs a directory")
      i = i + 1
    elseif a == "--checkpoint-every" then
      every = math.tointeger(tonumber(args[i + 1] or "")) or
        user_error("repro train: --checkpoint-every needs an integer")
      i = i + 1
    elseif a:match("^%-") then
      user_error("repro train: unknown option %s", a)
    else
      kv[#kv + 1] = a
    end
    i = i + 1
  end
  local cfg = record.resolve(M.parse_overrides(kv, "repro train"))
  check_config(cfg, "repro train")
  local bar = progress.new(cfg.iters, cfg.batch * cfg.context)
  local function on_step(step, row) bar:update(step, row.loss, row.lr) end
  local metrics
  if out then
    metrics = record.run(cfg, out, { on_step = on_step, checkpoint_every = every })
  else
    metrics = engine.train(cfg, { on_step = on_step })
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

-- A study's runs on other executors (lua/repro/plan.lua, lua/repro/slurm.lua).
function commands.plan(args) return require("repro.plan").plan_main(args) end
commands["run-one"] = function(args) return require("repro.plan").run_one_main(args) end
function commands.status(args) return require("repro.plan").status_main(args) end
function commands.analyze(args) return require("repro.runner").main(args, true) end
function commands.submit(args) return require("repro.slurm").main(args) end

function commands.help()
  io.write([[
usage:
  bin/repro train [key=value ...] [--out DIR] [--checkpoint-every K]
  bin/repro run STUDY.lua [--jobs N] [--only variant=V,seed=S] [--dry-run] [--force]
                [--out-root DIR] [--set key=value,...]
  bin/repro plan STUDY.lua [--all] [--only ...] [--set ...] [--out-root DIR] [--threads N]
  bin/repro run-one STUDY.lua --only variant=V,seed=S [--set ...] [--out-root DIR]
                [--threads N]
  bin/repro status STUDY.lua [--only ...] [--set ...] [--out-root DIR]
  bin/repro analyze STUDY.lua [--set ...] [--out-root DIR]
  bin/repro submit --slurm STUDY.lua [--partition P] [--time T] [--max-parallel K]
                [--account A] [--threads N] [--only ...] [--set ...] [--out-root DIR]
                [--dry-run]
  bin/repro report [--experiments DIR] [--paper DIR] [--plots-data DIR] [--no-figures]
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
      "analyze, submit, report, help; or a SCRIPT.lua)", cmd)
  end
  return f(table.move(argv, 2, #argv, 1, {}))
end

return M
