-- kill -9 at random points of a small study: at each of N_POINTS points (PCG32-chosen:
-- the moment, and whether the runner or one of its workers dies; every second point is a
-- moment shortly after a run's first checkpoint), a fresh study is
-- started with `bin/repro run --jobs 2` and that process is killed with SIGKILL; a
-- plain rerun must then finish, and every config.json, log.csv, metrics.json and the
-- summary.json must be byte-identical to an uninterrupted study's, every record must
-- verify, and no temporary file may be left.  Then SIGINT and SIGTERM, to `train --out`
-- and to `run`: both stop with the same message and exit status 130 after a checkpoint
-- (meanwhile a second `train --out` into the same directory is refused: the run lock),
-- stale temporary files planted meanwhile are removed, and the rerun resumes to the
-- uninterrupted bytes.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local host = require "repro.host"
local proc = require "repro.proc"
local sys = require "repro.sys"
local record = require "repro.record"
local t = check.new("test_kill")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local N_POINTS = 12
local g = require("pcg").new(20261126, 17)

local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local text = {}
for i = 1, 3000 do text[i] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ") end
local corpus = dir .. "/corpus.txt"
check.write(corpus, table.concat(text))

-- The analysis of a valid study, with the decision test when this tree's validator
-- knows it.
local function write_study(test_field)
  check.write(dir .. "/kill.lua", string.format([[
return {
  name = "kill",
  description = "kill -9 points",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 8, iters = 120,
    warmup = 2, diag_every = 20, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" },
    { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  checkpoint_every = 5,
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000%s },
}
]], corpus, test_field))
end
write_study(', test = "t"')
if not pcall(require("repro.study").load, dir .. "/kill.lua") then write_study("") end
local RUNS = { "none/seed-1", "layernorm/seed-1", "none/seed-2", "layernorm/seed-2" }

local function run(root)
  return check.run(string.format("%s run %s --jobs 2 --out-root %s", repro, dir .. "/kill.lua",
    root))
end

local function files(root)
  local out = {}
  for _, r in ipairs(RUNS) do
    for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
      out[r .. "/" .. f] = fs.read(root .. "/kill/" .. r .. "/" .. f)
    end
  end
  out["summary.json"] = fs.read(root .. "/kill/summary.json")
  return out
end

-- Temporary files anywhere under root.
local function leftovers(root)
  local found = {}
  local function walk(d)
    for _, name in ipairs(sys.listdir(d) or {}) do
      local p = d .. "/" .. name
      local st = sys.stat(p)
      if st and st.type == "dir" then
        walk(p)
      elseif name:find("%.tmp%.%d+") then
        found[#found + 1] = p
      end
    end
  end
  walk(root)
  return table.concat(found, ", ")
end

-- Live children of pid whose command line contains `what`.
local function children(pid, what)
  local out = {}
  for _, name in ipairs(sys.listdir("/proc") or {}) do
    if name:match("^%d+$") then
      local stat = fs.read("/proc/" .. name .. "/stat") or ""
      local ppid = stat:match("^%d+ %b() %S+ (%d+)")
      local cmdline = fs.read("/proc/" .. name .. "/cmdline") or ""
      if tonumber(ppid) == pid and cmdline:find(what, 1, true) then
        out[#out + 1] = tonumber(name)
      end
    end
  end
  table.sort(out)
  return out
end

local REF = dir .. "/ref"
local t0 = host.now()
local code, _, err = run(REF)
local wall = host.now() - t0
t:eq(code, 0, "uninterrupted study: " .. err)
local ref = files(REF)

local survived, killed_workers, mid_run = 0, 0, 0
for k = 1, N_POINTS do
  local root = string.format("%s/k%02d", dir, k)
  local at = 0.05 + g:uniform() * 0.85 * wall
  local want_worker = g:bounded(2) == 1
  local pid = proc.spawn({ repro, "run", dir .. "/kill.lua", "--jobs", "2", "--out-root", root },
    { stdout = root .. ".out", stderr = root .. ".err" })
  local victim, what, frozen = pid, "runner", {}
  if k % 2 == 0 then
    -- Even points: the first checkpoint of a run drawn at random, then a moment drawn over
    -- a fiftieth of the reference wall time; there the runner and its workers are frozen
    -- (SIGSTOP: one instant, however loaded the machine is) and the victim is the runner
    -- or that run's worker, so that at least half of the points hit a run in progress
    -- (odd points are moments over the whole study).  A run here trains 120 steps in
    -- about 0.12 s; the study takes about 0.6 s, so the moment is at most about 0.012 s
    -- after a checkpoint at step 5.  (At 60 steps, a moment over a tenth of the wall time
    -- and no freeze, the run could end first: 5 of 12 points hit a run in one CI run.)
    local r = RUNS[g:bounded(#RUNS) + 1]
    local deadline = host.now() + 60
    repeat
      local found = false
      for _, name in ipairs(sys.listdir(root .. "/kill/" .. r) or {}) do
        if name:match("^checkpoint%-%x+%.rptf$") then found = true end
      end
      if not found then proc.sleep(0.005) end
    until found or host.now() > deadline
    at = g:uniform() * 0.02 * wall
    proc.sleep(at)
    proc.kill(pid, "STOP") -- first the runner: it starts no worker while frozen
    frozen = children(pid, "run-worker")
    for _, w in ipairs(frozen) do proc.kill(w, "STOP") end
    frozen[#frozen + 1] = pid
    if want_worker then
      local w = children(pid, "/kill/" .. r .. "\0")
      if #w == 0 then w = children(pid, "run-worker") end
      if #w > 0 then victim, what = w[g:bounded(#w) + 1], "worker" end
    end
  else
    proc.sleep(at)
    if want_worker then -- the first moment from `at` on when a worker lives
      local until_ = host.now() + 1
      repeat
        local w = children(pid, "run-worker")
        if #w > 0 then victim, what = w[g:bounded(#w) + 1], "worker" end
        if what == "runner" then proc.sleep(0.01) end
      until what == "worker" or host.now() > until_
    end
  end
  proc.kill(victim, "KILL")
  for _, p in ipairs(frozen) do
    if p ~= victim then proc.kill(p, "CONT") end -- a worker of a killed runner dies with it
  end
  if what == "worker" then killed_workers = killed_workers + 1 end
  local deadline = host.now() + 120
  while host.now() < deadline do
    local p = proc.wait(false)
    if p == pid then break end
    proc.sleep(0.02)
  end
  local label = string.format("point %d (%s killed at %.2f s)", k, what, at)
  local done, partial = 0, 0
  for _, r in ipairs(RUNS) do
    local d = root .. "/kill/" .. r
    if fs.exists(d .. "/metrics.json") then done = done + 1 end
    for _, name in ipairs(sys.listdir(d) or {}) do
      if name:match("^checkpoint%-%x+%.rptf$") then partial = partial + 1 end
    end
  end
  if partial > 0 then mid_run = mid_run + 1 end
  -- Nothing half-written looks done.
  for _, r in ipairs(RUNS) do
    local d = root .. "/kill/" .. r
    if fs.exists(d .. "/metrics.json") then
      t:eq(record.verify(d), "verified", label .. ": " .. r .. " has metrics.json and verifies")
    end
  end
  code, _, err = run(root)
  local good = t:eq(code, 0, label .. ": the rerun finishes: " .. err)
  local got = files(root)
  for name, text_ in pairs(ref) do
    good = t:ok(got[name] == text_, label .. ": " .. name .. " byte-identical after the rerun")
      and good
  end
  for _, r in ipairs(RUNS) do
    good = t:eq(record.verify(root .. "/kill/" .. r), "verified", label .. ": " .. r .. " verifies")
      and good
  end
  good = t:eq(leftovers(root), "", label .. ": no temporary file left") and good
  if good then survived = survived + 1 end
end
-- SIGINT and SIGTERM.
local function wait_checkpoint(run_dir)
  local deadline = host.now() + 60
  while host.now() < deadline do
    for _, name in ipairs(sys.listdir(run_dir) or {}) do
      if name:match("^checkpoint%-%x+%.rptf$") then return true end
    end
    proc.sleep(0.005)
  end
  return false
end

local function wait_exit(pid)
  local deadline = host.now() + 120
  while host.now() < deadline do
    local p, how, status = proc.wait(false)
    if p == pid then return how, status end
    proc.sleep(0.01)
  end
end

local function plant(d)
  for _, name in ipairs({ "metrics.json.tmp.4242", "checkpoint-0123456789ab.rptf.tmp.4242" }) do
    check.write(d .. "/" .. name, "stale")
  end
end

-- 600 steps (about 0.5 s after the first checkpoint at step 5): the signal must land
-- while the run trains, even when this test is descheduled for a while (at 60 steps the
-- window was about 0.1 s)
local TRAIN = { "n_layer=1", "d_model=32", "n_head=2", "context=32", "batch=8", "iters=600",
  "warmup=2", "diag_every=20", "diag_windows=2", "data=" .. corpus }
local function train_argv(out)
  local argv = { repro, "train" }
  for _, kv in ipairs(TRAIN) do argv[#argv + 1] = kv end
  for _, a in ipairs({ "--out", out, "--checkpoint-every", "5" }) do argv[#argv + 1] = a end
  return argv
end
local function train(out)
  local argv = train_argv(out)
  for i = 1, #argv do argv[i] = fs.quote(argv[i]) end
  return check.run(table.concat(argv, " "))
end
code, _, err = train(dir .. "/t-ref")
t:eq(code, 0, "uninterrupted train: " .. err)
local messages = {}
for _, sig in ipairs({ "INT", "TERM" }) do
  local out = dir .. "/t-" .. sig
  local pid = proc.spawn(train_argv(out), { stdout = out .. ".out", stderr = out .. ".err" })
  t:ok(wait_checkpoint(out), "train, SIG" .. sig .. ": a checkpoint appeared")
  proc.kill(pid, sig)
  local how, status = wait_exit(pid)
  t:ok(how == "exit" and status == 130, "train, SIG" .. sig .. ": exit status 130, got " ..
    tostring(how) .. " " .. tostring(status))
  messages[sig] = ((fs.read(out .. ".err") or ""):match("repro train: interrupted[^\n]*") or "")
    :gsub("%d+", "N")
  t:ok(messages[sig]:find("rerun the same command to resume from step N (checkpoint saved)", 1, true),
    "train, SIG" .. sig .. ": says how to resume: " .. messages[sig])
  plant(out)
  code, _, err = train(out)
  t:eq(code, 0, "train, SIG" .. sig .. ": the rerun finishes: " .. err)
  local man = require("repro.core.json").decode(fs.read(out .. "/manifest.json"))
  t:ok((man.resumed_from_step or 0) > 0, "train, SIG" .. sig .. ": resumed from its checkpoint")
  for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
    t:ok(fs.read(out .. "/" .. f) == fs.read(dir .. "/t-ref/" .. f), "train, SIG" .. sig .. ": " ..
      f .. " byte-identical to the uninterrupted run")
  end
  t:eq(leftovers(out), "", "train, SIG" .. sig .. ": the planted stale files are gone")
end
t:eq(messages.TERM, messages.INT, "train: SIGTERM and SIGINT say the same")

-- Two `train --out` into one directory: the second is refused while the first trains.
do
  local out = dir .. "/t-lock"
  local argv = train_argv(out)
  for i, a in ipairs(argv) do
    if a:match("^iters=") then argv[i] = "iters=100000" end -- trains until killed
  end
  local pid = proc.spawn(argv, { stdout = out .. ".out", stderr = out .. ".err" })
  t:ok(wait_checkpoint(out), "train --out lock: a checkpoint appeared")
  for i = 1, #argv do argv[i] = fs.quote(argv[i]) end
  local before = fs.read(out .. "/config.json")
  code, _, err = check.run(table.concat(argv, " "))
  t:ok(code == 1 and err:find("is being written by another bin/repro process", 1, true),
    "train --out: a second process on the same record is refused: " .. err)
  proc.kill(pid, "KILL")
  wait_exit(pid)
  t:ok(fs.read(out .. "/config.json") == before, "train --out lock: the refused process wrote nothing")
end

local run_messages = {}
for _, sig in ipairs({ "INT", "TERM" }) do
  local root = dir .. "/r-" .. sig
  local pid = proc.spawn({ repro, "run", dir .. "/kill.lua", "--jobs", "2", "--out-root", root },
    { stdout = root .. ".out", stderr = root .. ".err" })
  t:ok(wait_checkpoint(root .. "/kill/none/seed-1"), "run, SIG" .. sig .. ": a checkpoint appeared")
  proc.kill(pid, sig)
  local how, status = wait_exit(pid)
  t:ok(how == "exit" and status == 130, "run, SIG" .. sig .. ": exit status 130, got " ..
    tostring(how) .. " " .. tostring(status))
  local e = fs.read(root .. ".err") or ""
  t:ok(e:find("Stopped with a checkpoint: ", 1, true) and e:find("Rerun the same command", 1, true),
    "run, SIG" .. sig .. ": says which runs stopped with a checkpoint: " .. e)
  run_messages[sig] = e:match("repro run: interrupted[^\n]*") or ""
  plant(root .. "/kill/none/seed-1")
  check.write(root .. "/kill/summary.json.tmp.4242", "stale")
  code, _, err = run(root)
  t:eq(code, 0, "run, SIG" .. sig .. ": the rerun finishes: " .. err)
  local got = files(root)
  for name, text_ in pairs(ref) do
    t:ok(got[name] == text_, "run, SIG" .. sig .. ": " .. name .. " byte-identical after the rerun")
  end
  t:eq(leftovers(root), "", "run, SIG" .. sig .. ": the planted stale files are gone")
end
t:ok(run_messages.INT ~= "" and run_messages.TERM == run_messages.INT,
  "run: SIGTERM and SIGINT say the same: " .. tostring(run_messages.TERM))

-- A SIGINT counted before training (proc.trap_signals, as a worker and `train --out` do
-- first thing: the runner passes Ctrl-C on at any moment) stops the run after its first
-- step with a checkpoint, where the rerun resumes to the uninterrupted bytes: it is
-- neither lost nor ignored.  Last in this file: this process counts SIGINT from here on.
do
  local out = dir .. "/t-early"
  local cfg = record.resolve(require("repro.core.config").parse_overrides(TRAIN, "test"))
  proc.trap_signals()
  proc.kill(host.pid(), "INT")
  local deadline = host.now() + 5
  while proc.sigints() == 0 and host.now() < deadline do proc.sleep(0.01) end
  t:eq(proc.sigints(), 1, "a SIGINT to this process is counted")
  local m = record.run(cfg, out, { checkpoint_every = 5, ledger = false })
  t:ok(m.interrupted and m.steps == 1, "a signal counted before training: stopped after step 1, " ..
    "got steps " .. tostring(m.steps) .. ", interrupted " .. tostring(m.interrupted))
  t:ok(record.status(out, cfg) ~= "done" and not fs.exists(out .. "/metrics.json"),
    "a signal counted before training: no record")
  local ck = 0
  for _, name in ipairs(sys.listdir(out) or {}) do
    if name:match("^checkpoint%-%x+%.rptf$") then ck = ck + 1 end
  end
  t:eq(ck, 1, "a signal counted before training: the checkpoint of step 1")
  code, _, err = train(out)
  t:eq(code, 0, "a signal counted before training: the rerun finishes: " .. err)
  for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
    t:ok(fs.read(out .. "/" .. f) == fs.read(dir .. "/t-ref/" .. f),
      "a signal counted before training: " .. f .. " byte-identical after the rerun")
  end
end

t:ok(killed_workers >= 1 and killed_workers < N_POINTS, "both runners and workers were killed (" ..
  killed_workers .. " workers)")
t:ok(mid_run >= N_POINTS // 2, "most points hit a run in progress (" .. mid_run .. ")")
print(string.format("test_kill: %d kill -9 points (%d workers, %d runners; %d with a run " ..
  "in progress), %d reruns byte-identical", N_POINTS, killed_workers, N_POINTS - killed_workers,
  mid_run, survived))
check.rmtree(dir)
t:done()
