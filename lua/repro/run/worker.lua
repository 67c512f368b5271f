-- `bin/repro run-worker PPID DIR THREADS CHECKPOINT_EVERY PROGRESS_FILE [--study FILE]
-- [--git COMMIT DIRTY FILE_GIT] [--keep-model] key=value...`: one run for the process
-- pool of `bin/repro run` (run/pool.lua), an internal command.  It dies with the runner
-- PPID, trains through runstate.train (the run's lock and attempt.json), and writes
-- "STEP LOSS LR" into PROGRESS_FILE now and then; a thread count the runner writes into
-- PROGRESS_FILE.threads is used for the rest of the run.  Exit status: 0 when the record
-- is written, 130 when interrupted (checkpoint saved), 1 on an error, 75 when another
-- process is training the same run.  --git gives the git facts the runner read for the
-- manifest (record/provenance.lua), else the worker reads them itself.
local engine = require "engine"
local host = require "repro.host"
local proc = require "repro.proc"
local fs = require "repro.core.fs"
local record = require "repro.record"
local runstate = require "repro.run.runstate"
local config = require "repro.core.config"
local base = require "repro.core.base"

local M = {}

local PROGRESS_EVERY_S = 0.2

function M.main(args)
  local ppid = math.tointeger(tonumber(args[1] or ""))
  local dir, threads = args[2], math.tointeger(tonumber(args[3] or ""))
  local every, progress_path = math.tointeger(tonumber(args[4] or "")), args[5]
  if not (ppid and dir and threads and every and progress_path) then
    base.user_error("repro run-worker: internal command of `bin/repro run`")
  end
  if not proc.die_with_parent(ppid) then return 1 end
  -- from here a SIGINT or SIGTERM (the runner passes one on; Ctrl-C reaches the whole
  -- process group) is counted, never fatal: before training the run stops after its
  -- first step, after training the record is still written (record.run)
  proc.trap_signals()
  local i, study_file, git = 6, nil, nil
  if args[i] == "--study" then study_file, i = args[i + 1], i + 2 end
  if args[i] == "--git" then
    local why
    git, why = record.parse_git_args(args[i + 1], args[i + 2], args[i + 3])
    if not git then base.user_error("repro run-worker: " .. why) end
    i = i + 4
  end
  local keep_model = args[i] == "--keep-model"
  if keep_model then i = i + 1 end
  local cfg = record.resolve(config.parse_overrides(table.move(args, i, #args, 1, {}),
    "repro run-worker"))
  local last_progress, last_check = 0, 0
  local m, why, msg = runstate.train(cfg, dir, { threads = threads, checkpoint_every = every,
    study_file = study_file, keep_model = keep_model, git = git,
    threads_now = function()
      local now = host.now()
      if now - last_check < PROGRESS_EVERY_S then return nil end
      last_check = now
      local n = math.tointeger(tonumber(fs.read(progress_path .. ".threads") or ""))
      return n and n >= 1 and math.min(n, engine.MAX_THREADS) or nil
    end,
    on_step = function(step, row)
      local now = host.now()
      if now - last_progress < PROGRESS_EVERY_S then return end
      last_progress = now
      fs.write_atomic(progress_path, string.format("%d %.6g %.6g", step + 1, row.loss or 0 / 0,
        row.lr or 0 / 0))
    end })
  if why == "done" then return 0 end
  if not m then
    io.stderr:write(base.printable("repro run: " .. dir .. ": " .. tostring(msg), true), "\n")
    return 75
  end
  fs.write_atomic(progress_path, tostring(m.steps))
  return (m.interrupted or m.stopped) and 130 or 0
end

return M
