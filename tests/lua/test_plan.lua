-- `bin/repro plan`, `run-one`, `status`, `analyze` and `submit --slurm` without a cluster:
-- the printed commands carry the selection flags and train exactly the records of
-- `bin/repro run`; a run's state is done / running (lock held) / failed / pending
-- whoever trains it; SIGTERM stops a run with a checkpoint and the same command resumes
-- it bit-identically; submit --dry-run prints the scripts and writes nothing; a small
-- MaxArraySize splits the array; a real submission (a stand-in sbatch) writes the
-- scripts and submit.json.  The real Slurm test is tests/sh/test_slurm.sh.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"
local proc = require "repro.proc"
local record = require "repro.record"
local slurm = require "repro.run.slurm"
local t = check.new("test_plan")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 100000))

local TINY = "n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 20"
local function write_study(name, model, every)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return {
  name = %q,
  description = "a tiny study",
  base = { %s, warmup = 2, diag_every = 5, diag_windows = 4, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  checkpoint_every = %d,
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" },
}
]], name, model, corpus, every))
  return path
end

local RUNS = { "none/seed-1", "layernorm/seed-1", "none/seed-2", "layernorm/seed-2" }
local RESULT_FILES = { "config.json", "log.csv", "metrics.json" }

local function same_records(a, b, what, runs)
  local bad = {}
  for _, r in ipairs(runs or RUNS) do
    for _, f in ipairs(RESULT_FILES) do
      local x = fs.read(a .. "/" .. r .. "/" .. f)
      if not x or x ~= fs.read(b .. "/" .. r .. "/" .. f) then bad[#bad + 1] = r .. "/" .. f end
    end
  end
  return t:ok(#bad == 0, what .. ": differ or missing: " .. table.concat(bad, ", "))
end

local function lines(text)
  local out = {}
  for l in text:gmatch("[^\n]+") do out[#out + 1] = l end
  return out
end

local study = write_study("ptiny", TINY, 5)
local R = dir .. "/R" -- the reference: bin/repro run --jobs 2
local code, out, err = check.run(string.format("%s run %s --out-root %s --jobs 2", repro, study, R))
t:eq(code, 0, "reference run: " .. err)

-- 1. plan: one command per pending run, carrying --out-root, --set, --threads, --only.
local P = dir .. "/P"
code, out, err = check.run(string.format("%s plan %s --out-root %s --threads 1", repro, study, P))
local cmds = lines(out)
t:eq(code, 0, "plan exits 0: " .. err)
t:eq(#cmds, 4, "one command per pending run")
t:ok(cmds[1] == string.format("%s run-one %s --only variant=none,seed=1 --out-root %s --threads 1",
  repro, study, P), "the exact command: " .. tostring(cmds[1]))
t:ok(err:find("4 pending; 4 commands above", 1, true), "plan says what it printed: " .. err)
code, out = check.run(string.format("%s plan %s --out-root %s --only variant=layernorm " ..
  "--set iters=12,lr=0.001", repro, study, P))
cmds = lines(out)
t:ok(code == 0 and #cmds == 2 and cmds[2]:find("--only variant=layernorm,seed=2", 1, true) and
  cmds[2]:find("--set iters=12,lr=0.001", 1, true), "--only selects, --set is carried: " .. out)
code, _, err = check.run(string.format("%s plan %s --jobs 2", repro, study))
t:ok(code == 1 and err:find("repro plan: unknown option --jobs", 1, true), "unknown flag named: " .. err)
code, _, err = check.run(string.format("%s run-one %s --out-root %s", repro, study, P))
t:ok(code == 1 and err:find("needs exactly one --only variant=V,seed=S", 1, true),
  "run-one needs one run: " .. err)

-- 2. Every planned command, one after another: the records of `run --jobs 2`.
code, out, err = check.run(string.format("%s plan %s --out-root %s --threads 1 2>/dev/null | sh",
  repro, study, P))
t:eq(code, 0, "planned commands run: " .. err)
t:eq(select(2, out:gsub("done %(trained 20 steps", "")), 4, "four runs trained: " .. out)
same_records(R .. "/ptiny", P .. "/ptiny", "run-one vs run --jobs 2")
t:ok(not fs.exists(P .. "/ptiny/none/seed-1/attempt.json"), "no attempt.json in a done record")
code, out = check.run(string.format("%s status %s --out-root %s", repro, study, P))
t:ok(code == 0 and out:find("4 done, 0 running, 0 failed, 0 pending", 1, true) and
  out:find("summary: not written yet; every run is done", 1, true), "status: all done: " .. out)
code, out = check.run(string.format("%s plan %s --out-root %s", repro, study, P))
t:eq(out, "", "nothing left to plan")
code, out = check.run(string.format("%s plan %s --out-root %s --all", repro, study, P))
t:eq(#lines(out), 4, "--all plans every run")
local before = fs.read(P .. "/ptiny/none/seed-2/manifest.json")
code, out = check.run(string.format("%s plan %s --out-root %s --all 2>/dev/null | sh", repro,
  study, P))
t:ok(code == 0 and select(2, out:gsub("done %(reused%)", "")) == 4 and
  fs.read(P .. "/ptiny/none/seed-2/manifest.json") == before, "done runs are reused: " .. out)
code, out, err = check.run(string.format("%s analyze %s --out-root %s", repro, study, P))
t:ok(code == 0 and fs.read(P .. "/ptiny/summary.json") == fs.read(R .. "/ptiny/summary.json"),
  "analyze writes the same summary.json: " .. err)

-- 3. States: running (lock held), stopped by SIGTERM (pending, resumes bit-identically),
-- killed -9 (failed), an error (failed, with the message); analyze lists them.
-- A slower run (a few seconds on a slow machine, under a second on a fast one), caught
-- while it trains: once its first checkpoint exists it is stopped (SIGSTOP: it keeps its
-- lock) while the checks that need it running are made, so no check races its end.
local slow = write_study("pslow", "n_layer = 2, d_model = 64, n_head = 2, context = 64, " ..
  "batch = 8, iters = 300", 10)
local U = dir .. "/U"
code = check.run(string.format("%s run %s --out-root %s --only variant=none,seed=1", repro, slow, U))
t:eq(code, 0, "uninterrupted slow run")
local S = dir .. "/S"
local run_dir = S .. "/pslow/none/seed-1"
local function start_slow()
  return proc.spawn({ repro, "run-one", slow, "--only", "variant=none,seed=1", "--out-root", S,
    "--threads", "1" }, { stdout = S .. ".out", stderr = S .. ".err" })
end
local function wait_for(cond, what)
  local deadline = host.now() + 600 -- a loaded machine, or the sanitizers, slow it down
  while host.now() < deadline do
    if cond() then return true end
    proc.sleep(0.01)
  end
  return t:ok(false, "timed out waiting for " .. what)
end
local function ckpt_exists()
  local cfg = fs.read(run_dir .. "/config.json")
  return cfg and fs.exists(record.checkpoint_path(run_dir, fs.sha256(run_dir .. "/config.json")))
end
local function status_of(label)
  local _, o = check.run(string.format("%s status %s --out-root %s --only variant=none,seed=1",
    repro, slow, S))
  return o:match("\n  (%a+)%s+" .. label:gsub("%-", "%%-") .. "%s*([^\n]*)") , o
end

fs.mkdir_p(S)
local pid = start_slow()
wait_for(ckpt_exists, "a checkpoint")
t:ok(proc.kill(pid, "STOP"), "the training process is paused")
local state, o = status_of("none/seed-1")
t:ok(state == "running" and o:find("training, ", 1, true) and o:find("pid " .. pid, 1, true),
  "status: running while the lock is held: " .. o)
code, out, err = check.run(string.format("%s run-one %s --only variant=none,seed=1 --out-root %s",
  repro, slow, S))
t:ok(code == 75 and err:find("another process is training this run", 1, true),
  "a second run-one of the same run exits 75: " .. err)
code, out = check.run(string.format("%s plan %s --out-root %s", repro, slow, S))
t:ok(not out:find("variant=none,seed=1", 1, true), "plan leaves a running run out")
proc.kill(pid, "TERM") -- pending until it continues
proc.kill(pid, "CONT")
local _, how, status = proc.wait(true)
t:ok(how == "exit" and status == 130, "SIGTERM: exit status 130 (" .. tostring(how) .. " " ..
  tostring(status) .. ")")
t:ok((fs.read(S .. ".err") or ""):find("with a checkpoint; the same command resumes it", 1, true),
  "SIGTERM says it stopped with a checkpoint: " .. (fs.read(S .. ".err") or ""))
local state2, o2 = status_of("none/seed-1")
t:ok(state2 == "pending" and o2:find("stopped by a signal at step", 1, true) and
  o2:find("resumes from its checkpoint", 1, true), "status: stopped -> pending: " .. o2)
code, out, err = check.run(string.format("%s analyze %s --out-root %s", repro, slow, S))
t:ok(code == 1 and err:find("4 runs not done", 1, true) and err:find("pending  none/seed-1  stopped " ..
  "by a signal", 1, true), "analyze lists the runs not done and exits 1: " .. err)
code, out, err = check.run(string.format("%s run-one %s --only variant=none,seed=1 --out-root %s " ..
  "--threads 2", repro, slow, S))
t:ok(code == 0 and err:find("resuming from its checkpoint", 1, true) and
  out:find("from step", 1, true), "the same command resumes: " .. out .. err)
same_records(U .. "/pslow", S .. "/pslow", "SIGTERM then resume vs uninterrupted", { "none/seed-1" })

-- killed -9 mid-run: failed (nobody holds the lock, the attempt never said how it ended)
local K = dir .. "/K"
S, run_dir = K, K .. "/pslow/none/seed-1"
fs.mkdir_p(K)
pid = start_slow()
wait_for(ckpt_exists, "a checkpoint")
proc.kill(pid, "KILL")
proc.wait(true)
state, o = status_of("none/seed-1")
t:ok(state == "failed" and o:find("ended without finishing", 1, true), "status: kill -9 -> failed: " .. o)
code, out = check.run(string.format("%s plan %s --out-root %s", repro, slow, K))
t:ok(out:find("variant=none,seed=1", 1, true), "plan includes a failed run")

-- an error while writing the record: failed, with the message
local E = dir .. "/E"
fs.mkdir_p(E .. "/ptiny/none/seed-1/metrics.json/blocker")
code, out, err = check.run(string.format("%s run-one %s --only variant=none,seed=1 --out-root %s",
  repro, study, E))
t:ok(code == 1 and err:find("metrics.json", 1, true), "an error exits 1: " .. err)
code, o = check.run(string.format("%s status %s --out-root %s", repro, study, E))
-- (the one atomic writer names the file it could not put in place: "cannot write")
t:ok(o:find("\n  failed%s+none/seed%-1%s+error: filesystem: cannot %a+ [^\n]*metrics%.json"),
  "status: error -> failed: " .. o)

-- 4. submit --dry-run: the scripts and the sbatch commands, nothing written.
local D = dir .. "/D"
local bin = dir .. "/fakebin"
fs.mkdir_p(bin)
check.write(bin .. "/scontrol", "#!/bin/sh\necho 'MaxArraySize            = 3'\n")
check.write(bin .. "/sbatch", "#!/bin/sh\necho \"$@\" >> " .. dir .. "/sbatch.log\n" ..
  "n=$(wc -l < " .. dir .. "/sbatch.log)\necho $((100 + n))\n")
os.execute("chmod +x " .. bin .. "/scontrol " .. bin .. "/sbatch")
local env = "PATH=" .. bin .. ":$PATH "
code, out, err = check.run(string.format("%s%s submit --slurm %s --out-root %s --partition debug " ..
  "--time 1:00:00 --account lab --threads 2 --set iters=12 --dry-run", env, repro, study, D))
t:eq(code, 0, "submit --dry-run: " .. err)
for _, want in ipairs({ "#SBATCH --array=0-2\n", "#SBATCH --array=0-0\n", "#SBATCH --cpus-per-task=2",
  "#SBATCH --partition=debug", "#SBATCH --account=lab", "#SBATCH --time=1:00:00",
  "#SBATCH --signal=B:USR1@120", "#SBATCH --requeue", "  2) run=variant=none,seed=2 ;;",
  "  0) run=variant=layernorm,seed=2 ;;", " run-one " .. study .. " --only \"$run\" --out-root " .. D ..
  " --set iters=12 --threads 2 &", "exec " .. repro .. " analyze " .. study .. " --out-root " .. D ..
  " --set iters=12", "\nsbatch --parsable --dependency=afterany:<job id of array-1>:<job id of " ..
  "array-2> " .. D .. "/ptiny/slurm/analysis.sbatch\n" }) do
  t:ok(out:find(want, 1, true), "dry run shows " .. want)
end
t:ok(not fs.exists(D), "dry run wrote nothing")
t:ok(not fs.exists(dir .. "/sbatch.log"), "dry run submitted nothing")
code, out = check.run(string.format("%s%s submit --slurm %s --out-root %s --max-parallel 2 --dry-run",
  env, repro, study, D))
t:ok(out:find("#SBATCH --array=0-2%2\n", 1, true) and out:find("#SBATCH --array=0-0%1\n", 1, true) and
  out:find("\nsbatch --parsable --dependency=afterany:<job id of array-1> " .. D ..
  "/ptiny/slurm/array-2.sbatch", 1, true), "--max-parallel: %K, arrays one after another: " .. out)
code, _, err = check.run(string.format("%s submit --slurm %s --time 30s --dry-run", repro, study))
t:ok(code == 1 and err:find("--time 30s", 1, true), "a bad --time is refused: " .. err)
t:eq(slurm.time_seconds("1-02:03:04"), 93784, "D-HH:MM:SS")
t:eq(slurm.time_seconds("90"), 5400, "minutes")
t:eq(slurm.time_seconds("05:30"), 330, "MM:SS")
t:eq(slurm.signal_seconds(300), 60, "a short limit: signal at a fifth of it")

-- ... and for real, through the stand-in sbatch: scripts, submit.json, job ids.
code, out, err = check.run(string.format("%s%s submit --slurm %s --out-root %s --mem 300M", env,
  repro, study, D))
t:eq(code, 0, "submit: " .. err)
local log = fs.read(dir .. "/sbatch.log") or ""
t:ok(log == string.format("--parsable %s/ptiny/slurm/array-1.sbatch\n--parsable %s/ptiny/slurm/" ..
  "array-2.sbatch\n--parsable --dependency=afterany:101:102 %s/ptiny/slurm/analysis.sbatch\n", D, D, D),
  "sbatch calls: " .. log)
local sub = json.decode(fs.read(D .. "/ptiny/slurm/submit.json") or "null")
t:ok(sub and sub.analysis == "103" and sub.arrays[2].job == "102" and sub.arrays[2].runs[1] ==
  "layernorm/seed-2", "submit.json records jobs and runs")
t:eq(sub and sub.mem, "300M", "submit.json records the memory the tasks get")
t:ok(out:find("analysis job 103 after jobs 101, 102", 1, true), "submit names the jobs: " .. out)
code, o = check.run(string.format("%s%s status %s --out-root %s", env, repro, study, D))
t:ok(o:find("pending  layernorm/seed-2  slurm task 102_0", 1, true), "status names the task: " .. o)
local script = fs.read(D .. "/ptiny/slurm/array-1.sbatch") or ""
t:ok(script:find("^#!/bin/sh\n") and script:find("\n#SBATCH --array=0-2\n", 1, true),
  "array script written")

check.rmtree(dir)
t:done()
