-- `bin/repro sample RUN` and `bin/repro eval RUN`: what a kept model (a run trained with
-- --keep-model, or by a study with keep_model = true) does after its run.
--
--   bin/repro sample RUN [--prompt TEXT] [--n N] [--seed S] [--temperature T]
--       N bytes (default 200) generated after TEXT (default a newline), printed after it;
--       each byte drawn from the softmax of the last position's logits / T (default 1;
--       0: the most likely byte) with PCG32 stream (S, sample) (default seed 0), so the
--       same command prints the same text on any machine and thread count.
--   bin/repro eval RUN [--split val] [--json]
--       the kept model's metrics on the validation split, computed as the run's final
--       evaluation was (engine/train.h train_eval_model), beside the record's
--       metrics.json: exit status 1 when val_loss differs from the record's by more
--       than M.TOLERANCE.  Evaluations are a table of kinds (M.EVALUATIONS): the task
--       suites (`--tasks SUITE`) are to be one more entry, with no change here.
--
-- RUN is a record directory (experiments/<study>/<variant>/seed-<s>), or that path
-- relative to the records root ($REPRO_EXPERIMENTS, else experiments/).  The record must
-- verify (lua/repro/record/init.lua M.verify) and its model.rptf must have the SHA-256
-- its manifest.json recorded (model_sha256); the model carries its config's hash inside,
-- which the engine checks too.
local engine = require "engine"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local sys = require "repro.sys"
local host = require "repro.host"
local record = require "repro.record"

local M = {}

local user_error = base.user_error

-- The largest difference of val_loss `eval` accepts against the record's.
M.TOLERANCE = 1e-6

-- The record directory RUN names: as given, else under the records root.
local function record_dir(run, who)
  local st = sys.stat(run)
  if st and st.type == "dir" then return run end
  local root = os.getenv("REPRO_EXPERIMENTS")
  root = (root and root ~= "") and root or (host.root .. "/experiments")
  local under = root .. "/" .. run
  st = sys.stat(under)
  if st and st.type == "dir" then return under end
  user_error("%s: %s is not a run record directory (nor %s)", who, base.printable(run),
    base.printable(under))
end

-- The largest model.rptf read (the weights of a model far above any study's size).
M.MODEL_MAX_BYTES = 1024 * 1024 * 1024

-- The kept model of record RUN: {dir, cfg, model, config_id, metrics}, or a user error
-- saying what is missing and how to get it.  Read once: config.json, metrics.json and
-- manifest.json are the texts record.verify verified, and model is a private copy
-- (fs.private_subdir) of the bytes whose SHA-256 was checked.
function M.load(run, who)
  local dir = record_dir(run, who)
  local state, problems, kept = record.verify(dir)
  if state == "unfinished" then
    user_error("%s: %s holds no finished run (no metrics.json)", who, dir)
  elseif state ~= "verified" then
    user_error("%s: %s: its record does not verify (%s)%s", who, dir, state,
      #problems > 0 and (": " .. table.concat(problems, "; ")) or "")
  end
  local man = kept.manifest
  local model = dir .. "/" .. record.MODEL
  if not fs.exists(model) then
    user_error("%s: %s has no kept model (%s): train it with --keep-model (`bin/repro train " ..
      "... --out DIR --keep-model`, or `bin/repro run STUDY.lua --keep-model`; a finished " ..
      "run is retrained for it with --force --only variant=V,seed=S)", who, dir, record.MODEL)
  end
  -- read once: the bytes hashed here are the bytes the engine loads (a private copy), so
  -- a model.rptf swapped after the check is never what is sampled or evaluated
  local bytes, rerr = fs.read(model, M.MODEL_MAX_BYTES)
  if not bytes then user_error("%s: %s", who, base.printable(tostring(rerr))) end
  local got = sys.sha256(bytes)
  if type(man.model_sha256) ~= "string" then
    user_error("%s: %s: manifest.json records no model_sha256, so %s is not this record's " ..
      "model: refused", who, dir, record.MODEL)
  elseif got ~= man.model_sha256 then
    user_error("%s: %s: SHA-256 %s, but manifest.json recorded %s (changed after it was " ..
      "written): refused", who, model, tostring(got):sub(1, 12), man.model_sha256:sub(1, 12))
  end
  local copy = fs.private_subdir("model") .. "/" .. record.MODEL
  fs.write_atomic(copy, bytes)
  local cfg = json.decode(kept.texts["config.json"])
  local metrics = json.decode(kept.texts["metrics.json"])
  return { dir = dir, cfg = cfg, model = copy, config_id = metrics.config_sha256,
    metrics = metrics }
end

-- An engine error as the message of a user error.
local function engine_call(who, f, ...)
  local ok, res = pcall(f, ...)
  if ok then return res end
  local e = record.engine_error(res)
  if type(e) == "table" and e.message then user_error("%s: %s", who, e.message) end
  error(res, 0)
end

local SAMPLE_USAGE = "usage: bin/repro sample RUN [--prompt TEXT] [--n N] [--seed S] " ..
  "[--temperature T]"

local function number_option(v, who, flag, integer, min)
  local x = tonumber(v)
  if integer then x = math.tointeger(x) end
  if not x or x ~= x or x < min or x == math.huge then
    user_error("%s: %s needs %s >= %s, got %s", who, flag, integer and "an integer" or
      "a number", tostring(min), base.printable(v))
  end
  return x
end

function M.sample_main(args)
  local who = "repro sample"
  local o = base.parse_options(args, who, SAMPLE_USAGE, {
    ["--prompt"] = { key = "prompt", kind = "value" }, ["--n"] = { key = "n", kind = "value" },
    ["--seed"] = { key = "seed", kind = "value" },
    ["--temperature"] = { key = "temperature", kind = "value" } })
  if o.help then return 0 end
  if #o.targets ~= 1 then user_error("%s: one RUN\n%s", who, SAMPLE_USAGE) end
  local n = o.n and number_option(o.n, who, "--n", true, 0) or 200
  if n > 1 << 24 then user_error("%s: --n at most %d, got %d", who, 1 << 24, n) end
  local seed = o.seed and number_option(o.seed, who, "--seed", true, 0) or 0
  local temperature = o.temperature and number_option(o.temperature, who, "--temperature",
    false, 0) or 1.0
  local prompt = o.prompt or "\n"
  if prompt == "" then user_error("%s: --prompt is empty (give at least one character)", who) end
  local k = M.load(o.targets[1], who)
  local text = engine_call(who, engine.sample, k.cfg, k.model, k.config_id, prompt, n, seed,
    temperature)
  io.write(prompt, text, "\n")
  return 0
end

-- The kinds of evaluation `eval` offers: each takes the kept model (M.load) and returns
-- rows {metric, value, recorded} and whether they agree with the record.
M.EVALUATIONS = {
  val = function(k, who)
    local m = engine_call(who, engine.evaluate, k.cfg, k.model, k.config_id)
    local rows, agree = {}, true
    for _, name in ipairs({ "val_loss", "val_ppl", "val_acc", "ece", "brier" }) do
      if m[name] ~= nil then
        rows[#rows + 1] = { metric = name, value = m[name], recorded = k.metrics[name] }
      end
    end
    local rec = k.metrics.val_loss
    if type(rec) ~= "number" or math.abs(m.val_loss - rec) > M.TOLERANCE then agree = false end
    return rows, agree
  end,
}

local EVAL_USAGE = "usage: bin/repro eval RUN [--split val] [--json]"

function M.eval_main(args)
  local who = "repro eval"
  local o = base.parse_options(args, who, EVAL_USAGE, {
    ["--split"] = { key = "split", kind = "value" },
    ["--tasks"] = { key = "tasks", kind = "value" },
    ["--json"] = { key = "json", kind = "flag" } })
  if o.help then return 0 end
  if #o.targets ~= 1 then user_error("%s: one RUN\n%s", who, EVAL_USAGE) end
  if o.tasks then
    if not M.EVALUATIONS.tasks then
      user_error("%s: --tasks: task suites are not part of this build yet (only --split val)",
        who)
    end
    if o.split then user_error("%s: give one of --split and --tasks", who) end
  end
  local kind = o.tasks and "tasks" or (o.split or "val")
  if not M.EVALUATIONS[kind] then
    user_error("%s: --split %s: the splits are: val", who, base.printable(kind))
  end
  local k = M.load(o.targets[1], who)
  local rows, agree = M.EVALUATIONS[kind](k, who, o.tasks)
  if o.json then
    local out = json.object({ run = k.dir, evaluation = kind, agrees = agree,
      metrics = json.object({}), recorded = json.object({}) })
    for _, r in ipairs(rows) do
      out.metrics[r.metric] = r.value
      out.recorded[r.metric] = r.recorded
    end
    print(json.encode(out))
  else
    print(string.format("%s (%s split, kept model)", k.dir, kind))
    print(string.format("  %-10s %14s %14s %10s", "metric", "evaluated", "record", "|diff|"))
    for _, r in ipairs(rows) do
      local d = type(r.recorded) == "number" and math.abs(r.value - r.recorded) or nil
      print(string.format("  %-10s %14.8f %14s %10s", r.metric, r.value,
        r.recorded and string.format("%.8f", r.recorded) or "-",
        d and string.format("%.1e", d) or "-"))
    end
  end
  if not agree then
    io.stderr:write(string.format("%s: val_loss differs from the record's by more than %g: " ..
      "the model is not the one this record's run ended with\n", who, M.TOLERANCE))
    return 1
  end
  return 0
end

return M
