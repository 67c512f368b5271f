-- The process pool of `bin/repro run`: a queue of planned runs trained in `jobs` worker
-- processes at once (`bin/repro run-worker`, run/worker.lua), each with `threads` threads.
-- Progress goes to stderr: a line for the study (runs done, ETA) and one per running run,
-- redrawn in place on a terminal, printed every PLAIN_EVERY_S otherwise.  Once nothing is
-- left to start, the cores of finished workers go to the runs still training (results do
-- not depend on it).  A worker dies with the runner (kill -9 included); Ctrl-C (or
-- SIGTERM) stops every worker after its current step with a checkpoint.
local engine = require "engine"
local host = require "repro.host"
local proc = require "repro.proc"
local fs = require "repro.core.fs"
local record = require "repro.record"
local progress = require "repro.core.progress"
local config = require "repro.core.config"
local planner = require "repro.plan"
local textable = require "repro.core.textable"
local base = require "repro.core.base"

local M = {}

local tty = host.isatty(2)
-- progress period when stderr is not a terminal: $REPRO_PROGRESS_S, else 15 s
local PLAIN_EVERY_S = tonumber(os.getenv("REPRO_PROGRESS_S") or "") or 15
local POLL_S = 0.1

local P = {}
P.__index = P

-- Rough cost of one step, for the study ETA: tokens x (parameters + attention).
local function step_cost(cfg)
  return cfg.batch * cfg.context *
    (engine.param_count(cfg) + cfg.n_layer * cfg.context * cfg.d_model)
end

-- The step worker w reached, its loss and lr, from its progress file ("STEP LOSS LR";
-- w.base: where it started), and its speed since the first step seen.
local function read_step(w)
  local step, loss, lr = (fs.read(w.progress) or ""):match("^(%d+)%s*(%S*)%s*(%S*)")
  local v = math.tointeger(tonumber(step or ""))
  if not v then return end
  w.base = w.base or (w.run.action == "resume" and v or 0)
  w.step, w.loss, w.lr = v, tonumber(loss) or w.loss, tonumber(lr) or w.lr
  local now = host.now()
  w.first = w.first or { step = v, t = now }
  if v > w.first.step then w.rate = (v - w.first.step) / (now - w.first.t) end
end

-- One running run: "none/seed-1  step 40/300  loss 2.8123  lr 3.00e-04  21000 tok/s  ETA 52s".
local function run_line(w)
  local r, step = w.run, w.step or 0
  if step >= r.cfg.iters then return r.label .. "  evaluating" end
  local tok = w.rate and string.format("%.0f", w.rate * r.cfg.batch * r.cfg.context) or "?"
  return string.format("%s  step %d/%d  loss %s  lr %s  %s tok/s  ETA %s", r.label, step,
    r.cfg.iters, w.loss and string.format("%.4f", w.loss) or "?",
    w.lr and string.format("%.2e", w.lr) or "?", tok,
    progress.fmt_time(w.rate and (r.cfg.iters - step) / w.rate or nil))
end

-- Removes the progress block from the terminal (before a message, and at the end); only
-- a terminal has one.
function P:clear_block()
  if self.block > 0 then
    io.stderr:write("\r", self.block > 1 and ("\27[" .. (self.block - 1) .. "A") or "", "\27[J")
    self.block = 0
  end
end

-- A message on a line of its own, above the progress block, after "[3/12 done] ".
function P:say(fmt, ...)
  self:clear_block()
  progress.say("[%d/%d done] " .. fmt, self.total_done, self.total, ...)
end

-- The study's ETA: the runs still to train scheduled on the pool's `jobs` workers.  A
-- running run ends after its own ETA (its steps left at its own speed); a run not started
-- takes its steps x cost at one worker's speed (cost units per second: the running runs'
-- mean, else that of the work done so far per worker), on the worker that frees first.
-- So once the last run trains alone, the study's ETA is that run's, not the work left
-- over the pool's total speed.  nil until a speed is known.
function P:eta(now)
  local slots, speed_sum, speeds, unknown = {}, 0, 0, 0
  for _, w in pairs(self.running) do
    local left = math.max(w.run.cfg.iters - (w.step or 0), 0)
    if w.rate then
      slots[#slots + 1] = left / w.rate
      speed_sum, speeds = speed_sum + w.rate * w.run.cost, speeds + 1
    else
      slots[#slots + 1] = 0 -- a run whose speed is not known yet: as if it just began
      unknown = unknown + left * w.run.cost
    end
  end
  local speed
  if speeds > 0 then
    speed = speed_sum / speeds
  elseif self.t0 and self.work_done > 0 and now > self.t0 then
    speed = self.work_done / ((now - self.t0) * self.jobs)
  end
  if not speed then return nil end
  while #slots < self.jobs do slots[#slots + 1] = 0 end
  local function add(work)
    local best = 1
    for i = 2, #slots do if slots[i] < slots[best] then best = i end end
    slots[best] = slots[best] + work / speed
  end
  if unknown > 0 then add(unknown) end
  for i = self.next_i, #self.queue do add(self.queue[i].cfg.iters * self.queue[i].cost) end
  return math.max(0, table.unpack(slots))
end

-- "[3/12 done] 2 running  study ETA 2m10s" and a line per running run (run_line).
function P:status_line()
  local now = host.now()
  local lines = {}
  for _, w in pairs(self.running) do
    read_step(w)
    lines[#lines + 1] = "  " .. base.printable(run_line(w))
  end
  table.sort(lines)
  table.insert(lines, 1, string.format("[%d/%d done] %d running  study ETA %s", self.total_done,
    self.total, #lines, progress.fmt_time(self:eta(now))))
  if tty then
    for i, l in ipairs(lines) do lines[i] = textable.cut(l, self.width - 1) end
    self:clear_block()
    io.stderr:write(table.concat(lines, "\n"))
    io.stderr:flush()
    self.block = #lines
  elseif now - self.last_plain >= PLAIN_EVERY_S then
    self.last_plain = now
    progress.say("%s", table.concat(lines, "\n"))
  end
end

-- What a run's record needs before its worker starts: a rerun drops the checkpoint of
-- the old config; --force starts from scratch.
local function clear_for(r)
  local config_path = r.dir .. "/config.json"
  if r.action == "rerun" then planner.remove_checkpoint_of(r.dir, config_path) end
  if r.action == "train" and r.status ~= "missing" then
    os.remove(r.dir .. "/metrics.json")
    planner.remove_checkpoint_of(r.dir, config_path)
    fs.write_atomic(config_path, record.config_text(r.cfg))
    planner.remove_checkpoint_of(r.dir, config_path)
  end
end

-- The git facts every worker's manifest gets (record.git_facts of the pool's one study
-- file), read again once they are GIT_EVERY_S old (record/provenance.lua says why).
function P:git_facts(s)
  local now = host.now()
  if not self.git or now - self.git_t >= record.GIT_EVERY_S then
    self.git, self.git_t = record.git_facts(s.file), now
  end
  return self.git
end

local START_REASON = { resume = "resuming from its checkpoint", rerun = "config changed",
  repair = "its record failed its checks", retrain = "its task files changed since it was scored" }

function P:start(s, r)
  clear_for(r)
  local w = { run = r, progress = string.format("%s/%d", self.tmp, self.next_i),
    threads = self.threads }
  local argv = { host.exe, "run-worker", tostring(host.pid()), r.dir, tostring(self.threads),
    tostring(s.checkpoint_every), w.progress, "--study", s.file,
    table.unpack(record.git_args(self:git_facts(s))) }
  if s.keep_model then argv[#argv + 1] = "--keep-model" end
  for _, kv in ipairs(config.args(r.cfg)) do argv[#argv + 1] = kv end
  w.pid = proc.spawn(argv)
  self.running[w.pid] = w
  self.nrunning = self.nrunning + 1
  self.t0 = self.t0 or host.now()
  self:say("start %s (%s, %d steps, %d thread%s)", r.label,
    r.action == "resume" and record.resume_text(r.dir) or START_REASON[r.action] or "new",
    r.cfg.iters, self.threads, self.threads == 1 and "" or "s")
end

-- A worker ended (proc.wait's how and code): its run finished, stopped with a
-- checkpoint (exit 130), stopped as it started (killed by the SIGINT or SIGTERM the
-- runner passed on, before the worker could count it) or failed.
function P:reap(pid, how, code)
  local w = self.running[pid]
  if not w then return end
  self.running[pid] = nil
  self.nrunning = self.nrunning - 1
  read_step(w)
  local r = w.run
  self.work_done = self.work_done + ((w.step or 0) - (w.base or 0)) * r.cost
  if record.status(r.dir, r.cfg) == "done" then
    self.total_done = self.total_done + 1
    self.finished[#self.finished + 1] = r
    self:say("done  %s  %s", r.label, planner.result_text(r))
  elseif how == "exit" and code == 130 then
    r.stopped_at = w.step
    self.stopped[#self.stopped + 1] = r
    local step = tostring(w.step or "?")
    self:say("stopped %s at step %s of %d (checkpoint saved: a rerun resumes from step %s)",
      r.label, step, r.cfg.iters, step)
  elseif how == "signal" and (code == 2 or code == 15) and self.interrupted then
    -- SIGINT or SIGTERM (2, 15: fixed by POSIX) passed on before the worker counted
    -- them (worker.lua traps them first thing): it had not begun to train
    r.stopped_at = "start"
    self.stopped[#self.stopped + 1] = r
    self:say("stopped %s as its worker started, before its first step (a rerun starts it, " ..
      "or resumes it from an earlier checkpoint)", r.label)
  else
    r.failure = how == "signal" and ("killed by signal " .. code) or ("exit status " .. code)
    self.failed[#self.failed + 1] = r
    self:say("FAILED %s (%s)", r.label, r.failure)
  end
end

-- With nothing left to start, every running worker gets an equal share of the pool's
-- jobs x threads cores, told through its progress file's .threads (worker.lua reads it
-- between steps).  Only ever more threads: a run never gives cores back.
function P:share_cores()
  if self.interrupted or self.next_i <= #self.queue or self.nrunning == 0 then return end
  local per = math.min(self.jobs * self.threads // self.nrunning, engine.MAX_THREADS)
  for _, w in pairs(self.running) do
    if per > w.threads then
      w.threads = per
      fs.write_atomic(w.progress .. ".threads", tostring(per))
      self:say("%s continues with %d threads (no run left to start)", w.run.label, per)
    end
  end
end

-- On a new SIGINT or SIGTERM: every worker is told to stop after its current step.
function P:check_signals()
  if proc.sigints() <= self.seen_int then return end
  self.seen_int = proc.sigints()
  if not self.interrupted then
    self:clear_block()
    progress.say("repro run: interrupted; stopping every run after its current step...")
  end
  self.interrupted = true
  for pid in pairs(self.running) do proc.kill(pid, "INT") end
end

-- Trains the queue of study s in `jobs` workers of `threads` threads; total_done of the
-- study's `total` selected runs are done already (for the status line).  Returns the
-- lists of runs that finished, were stopped (with a checkpoint), failed and were not
-- started, and whether Ctrl-C was pressed.
function M.run(s, queue, jobs, threads, total_done, total)
  for _, r in ipairs(queue) do r.cost = step_cost(r.cfg) end
  -- the workers' progress files go in the process's private folder (removed at exit, or
  -- by the next start after a kill)
  local p = setmetatable({ tmp = fs.private_subdir("run"), queue = queue, jobs = jobs,
    threads = threads, total_done = total_done, total = total, interrupted = false,
    running = {}, nrunning = 0, finished = {}, stopped = {}, failed = {}, next_i = 1,
    work_done = 0, last_plain = host.now(), block = 0,
    width = tty and (textable.width(2) or 80) or nil }, P)
  proc.trap_signals()
  p.seen_int = 0 -- a signal since proc.trap_signals (a wait for the study lock, say) counts
  while true do
    p:check_signals()
    local pid, how, code = proc.wait(false)
    while pid do
      p:reap(pid, how, code)
      pid, how, code = proc.wait(false)
    end
    while not p.interrupted and p.nrunning < jobs and p.next_i <= #queue do
      p:start(s, queue[p.next_i])
      p.next_i = p.next_i + 1
    end
    if p.nrunning == 0 and (p.interrupted or p.next_i > #queue) then break end
    p:share_cores()
    p:status_line()
    proc.sleep(POLL_S)
  end
  p:clear_block()
  fs.remove_tree(p.tmp)
  return p.finished, p.stopped, p.failed, table.move(queue, p.next_i, #queue, 1, {}), p.interrupted
end

-- The pool object's methods, for tests/lua/test_stop_last.lua (P:eta).
M._P = P

return M
