-- `bin/repro run-worker PPID DIR THREADS CHECKPOINT_EVERY PROGRESS_FILE [--study FILE]
-- [--git COMMIT DIRTY FILE_GIT] [--keep-model] key=value...`:
-- one run for the process pool of `bin/repro run` (lua/repro/run/pool.lua), an internal
-- command.  It dies with the runner PPID (kill -9 included), holds the run directory's
-- lock and keeps its attempt.json (lua/repro/run/runstate.lua), and writes the step it
-- reached, its loss and learning rate ("STEP LOSS LR") into PROGRESS_FILE now and then.  When the runner writes a thread count into
-- PROGRESS_FILE.threads (a study's last runs, once other workers are done), the rest of
-- the run uses it (results do not depend on it).  Exit status: 0 when the record is
-- written (diverged included), 130 when interrupted (checkpoint saved), 1 on an error, 75
-- when another process (a `bin/repro run-one`) is training the same run.  FILE, the study
-- file, goes into the run's manifest with its git status; --git gives the git facts the runner
-- read (record/provenance.lua, git_facts), else the worker reads them itself.
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
  local first, study_file = 6, nil
  if args[6] == "--study" then first, study_file = 8, args[7] end
  local git
  if args[first] == "--git" then
    local why
    git, why = record.parse_git_args(args[first + 1], args[first + 2], args[first + 3])
    if not git then base.user_error("repro run-worker: " .. why) end
    first = first + 4
  end
  local keep_model = args[first] == "--keep-model"
  if keep_model then first = first + 1 end
  local cfg = record.resolve(config.parse_overrides(table.move(args, first, #args, 1, {}),
    "repro run-worker"))
  local last, last_check, threads_path = 0, 0, progress_path .. ".threads"
  local m, why, msg = runstate.train(cfg, dir, { threads = threads, checkpoint_every = every,
    study_file = study_file, keep_model = keep_model, git = git,
    threads_now = function()
      local now = host.now()
      if now - last_check < PROGRESS_EVERY_S then return nil end
      last_check = now
      local n = math.tointeger(tonumber(fs.read(threads_path) or ""))
      return n and n >= 1 and math.min(n, engine.MAX_THREADS) or nil
    end,
    on_step = function(step, row)
      local now = host.now()
      if now - last >= PROGRESS_EVERY_S then
        last = now
        fs.write_atomic(progress_path, string.format("%d %.6g %.6g", step + 1, row.loss or 0 / 0,
          row.lr or 0 / 0))
      end
    end })
  if not m then
    if why == "done" then return 0 end
    io.stderr:write(base.printable("repro run: " .. dir .. ": " .. tostring(msg), true), "\n")
    return 75
  end
  fs.write_atomic(progress_path, tostring(m.steps))
  if m.interrupted or m.stopped then return 130 end
  return 0
end

return M
