-- The state of one run of a study, the same whoever trains it (`bin/repro run`'s workers,
-- `bin/repro run-one`, a Slurm array task): done, running (a process holds the run
-- directory's lock), failed (the last attempt raised an error or ended without saying how)
-- or pending.  DIR/attempt.json describes the latest attempt; it is removed once the record
-- is done.  Without flock(2), a "running" attempt whose heartbeat is fresh counts as running.
local base = require "repro.core.base"
local host = require "repro.host"
local proc = require "repro.proc"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local sys = require "repro.sys"

local M = {}

M.HEARTBEAT_S = 5
local STALE_S = 60 -- a heartbeat older than this, without a lock to probe: not running
local LOCK_TRIES = 20 -- x 0.05 s: a status probe holds the lock for microseconds

local function attempt_path(dir) return dir .. "/attempt.json" end

local function read_attempt(dir) return json.table_of(fs.read(attempt_path(dir))) end

local function write_attempt(dir, a)
  a.updated_unix = os.time()
  fs.write_atomic(attempt_path(dir), json.pretty(a))
end

-- Where the attempt ran, for messages: "host vm pid 123, slurm job 12_3".
local function where(a)
  local t = {}
  local pid = math.tointeger(a.pid)
  if a.host then t[#t + 1] = "host " .. a.host .. (pid and (" pid " .. pid) or "") end
  if a.slurm_job then t[#t + 1] = "slurm job " .. a.slurm_job end
  return table.concat(t, ", ")
end

-- state, detail: one of done | running | failed | pending, and a short explanation.
function M.state(dir, cfg)
  local rs, info = record.status(dir, cfg)
  if rs == "done" then return "done", "" end
  local a = read_attempt(dir)
  local attempt = a and a.state
  local held, no_flock = proc.lock_held(dir)
  if held == nil and attempt == "running" and a.updated_unix and
    os.time() - a.updated_unix <= STALE_S then
    held = true
  end
  if held then
    local t = { "training" }
    if a and a.step then t[#t + 1] = string.format("step %d/%d", a.step, cfg.iters) end
    if a then t[#t + 1] = where(a) .. ", since " .. tostring(a.start_utc) end
    if no_flock then t[#t + 1] = "(no lock on this filesystem: heartbeat)" end
    return "running", table.concat(t, ", ")
  end
  if rs == "changed" then return "pending", "recorded with another config: reruns from scratch" end
  if rs == "stale" then return "pending", record.stale_text(info.files) .. ": trained again" end
  local resumable = rs == "partial" and "resumes from its checkpoint"
  local step, suffix = tostring(a and a.step or "?"), resumable and ("; " .. resumable) or ""
  if attempt == "error" then
    return "failed", string.format("error: %s (%s)%s", tostring(a.message), where(a), suffix)
  elseif attempt == "running" then
    return "failed", string.format("ended without finishing (killed, out of memory or a lost " ..
      "node?) after step %s (%s)%s", step, where(a), suffix)
  elseif attempt == "stopped" then
    return "pending", string.format("stopped by a signal at step %s (%s); %s", step, where(a),
      resumable or "no checkpoint: starts over")
  end
  return "pending", resumable or ""
end

-- The runs by state (M.state): the count of each state, the labels of the runs being
-- trained elsewhere, and the runs to hand out (failed or pending), in order.  each(r,
-- state, detail), if given, sees every run.
function M.sort(runs, each)
  local n, running, todo = { done = 0, running = 0, failed = 0, pending = 0 }, {}, {}
  for _, r in ipairs(runs) do
    local state, detail = M.state(r.dir, r.cfg)
    n[state] = n[state] + 1
    if state == "running" then
      running[#running + 1] = r.label
    elseif state ~= "done" then
      todo[#todo + 1] = r
    end
    if each then each(r, state, detail) end
  end
  return n, running, todo
end

-- Takes dir's lock for the life of this process (shared: beside other shared holders),
-- trying `tries` times 0.05 s apart (a `status` probe holds it for an instant).  Returns
-- true; false when another process holds it; or true and a warning when the filesystem
-- has no flock(2).
function M.lock(dir, shared, tries)
  for _ = 1, tries or LOCK_TRIES do
    local ok, got = pcall(proc.lock, dir, false, shared)
    if not ok then
      return true, "cannot lock " .. dir .. " (" .. tostring(got) .. "): two processes " ..
        "training this run at once would not be noticed (their records would still be " ..
        "identical, each file written atomically)"
    end
    if got then return true end
    proc.sleep(0.05)
  end
  return false
end

-- Trains cfg into dir with record.run (opts go to it), holding the run directory's lock and
-- keeping attempt.json up to date; opts.prepare(), if given, runs once the lock is held.
-- Returns the metrics; or nil, "busy" and a message when another process holds the lock;
-- or nil, "done" when the record became done meanwhile (in both cases nothing was
-- touched).  An error is recorded in attempt.json and raised again.
function M.train(cfg, dir, opts)
  fs.mkdir_p(dir)
  local locked, warning = M.lock(dir)
  if not locked then
    local a = read_attempt(dir)
    return nil, "busy", "another process is training this run" ..
      (a and (" (" .. where(a) .. ")") or "")
  end
  if warning then io.stderr:write(base.printable("warning: " .. warning, true), "\n") end
  if record.status(dir, cfg) == "done" then return nil, "done", "already done" end
  if opts.prepare then opts.prepare() end
  local array, task = os.getenv("SLURM_ARRAY_JOB_ID"), os.getenv("SLURM_ARRAY_TASK_ID")
  local a = { state = "running", host = host.hostname(), pid = host.pid(), start_utc = record.utc(),
    slurm_job = array and task and (array .. "_" .. task) or os.getenv("SLURM_JOB_ID") }
  write_attempt(dir, a)
  local last = host.now()
  local on_step = opts.on_step
  opts.on_step = function(step, row)
    local now = host.now()
    if now - last >= M.HEARTBEAT_S then
      last = now
      a.step = step + 1
      write_attempt(dir, a)
    end
    if on_step then return on_step(step, row) end
  end
  local ok, m = pcall(record.run, cfg, dir, opts)
  if not ok then
    a.state, a.end_utc = "error", record.utc()
    a.message = type(m) == "table" and tostring(m.message) or tostring(m)
    if not pcall(write_attempt, dir, a) then
      -- a full disk refuses the temporary copy: overwrite attempt.json in place (an
      -- existing regular file only, never through a link), whose truncation frees the
      -- blocks the shorter failed state then takes
      sys.overwrite(attempt_path(dir), json.pretty({ state = "error",
        message = a.message:sub(1, 200), host = a.host, pid = a.pid, end_utc = a.end_utc }))
    end
    error(m, 0)
  end
  if m.interrupted or m.stopped then
    a.state, a.step, a.end_utc = "stopped", m.steps, record.utc()
    write_attempt(dir, a)
  else
    os.remove(attempt_path(dir))
  end
  return m
end

return M
