-- `bin/repro run` end to end on tiny studies over a synthetic corpus: records and
-- summary, reuse without retraining, a config change reruns only the changed runs,
-- --jobs 1 and 2 give the same bytes, records copied across studies, a diverging
-- config recorded as diverged, and kill -9 / Ctrl-C followed by a rerun giving the same
-- bytes as an uninterrupted study.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"
local proc = require "repro.proc"
local record = require "repro.record"
local t = check.new("test_study")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()

-- A corpus of random words: the model learns something, quickly.
local pcg = require "pcg"
local g = pcg.new(11, 0)
local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local text = {}
for i = 1, 5000 do
  text[#text + 1] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ")
end
local corpus = dir .. "/corpus.txt"
check.write(corpus, table.concat(text))

-- A study file: three variants, each norm against none and the two norms against each
-- other, `opts` tweaks it.
local function write_study(path, opts)
  opts = opts or {}
  local base = opts.base or "n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, " ..
    "iters = 12, warmup = 2"
  check.write(path, string.format([[
return {
  name = %q,
  description = "a tiny study",
  base = { %s, data = %q },
  variants = {
    { name = "none", embed_norm = "none" },
    { name = "layernorm", embed_norm = "layernorm" },
    { name = "rmsnorm", embed_norm = "rmsnorm"%s },
  },
  seeds = { 1, 2 },
  checkpoint_every = %d,
  analysis = { baseline = "none", metrics = { "val_loss", "val_acc", "n_spikes" },
    comparisons = { { "layernorm", "none" }, { "rmsnorm", "none" }, { "layernorm", "rmsnorm" } },
    primary = "val_loss", better = "lower", min_effect = 0.01, alpha = 0.05,
    correction = "holm", resamples = 1000,
    test = "t" },
}
]], opts.name or "tiny", base, corpus, opts.rms or "", opts.every or 4))
end

local function run(study_file, root, extra)
  return check.run(string.format("%s run %s --out-root %s %s", repro, study_file, root, extra or ""))
end

local RUNS = { "none/seed-1", "layernorm/seed-1", "rmsnorm/seed-1", "none/seed-2",
  "layernorm/seed-2", "rmsnorm/seed-2" }
local RESULT_FILES = { "config.json", "log.csv", "metrics.json" }

-- Every result file of two study directories (not the manifests, which hold timings).
local function same_runs(a_dir, b_dir, what)
  local all = true
  for _, r in ipairs(RUNS) do
    for _, f in ipairs(RESULT_FILES) do
      local a = fs.read(a_dir .. "/" .. r .. "/" .. f)
      if not a or a ~= fs.read(b_dir .. "/" .. r .. "/" .. f) then
        all = false
        t:ok(false, what .. ": " .. r .. "/" .. f .. " differs or is missing")
      end
    end
  end
  return all
end

-- ... plus summary.json.
local function same_results(root_a, root_b, name, what)
  local a_dir, b_dir = root_a .. "/" .. name, root_b .. "/" .. name
  local all = same_runs(a_dir, b_dir, what)
  local a = fs.read(a_dir .. "/summary.json")
  all = all and a ~= nil and a == fs.read(b_dir .. "/summary.json")
  t:ok(all, what .. ": records and summary.json byte-identical")
end

local function manifests(root, name)
  local m = {}
  for _, r in ipairs(RUNS) do m[r] = fs.read(root .. "/" .. name .. "/" .. r .. "/manifest.json") end
  return m
end

-- 1. End to end.
local tiny = dir .. "/tiny.lua"
write_study(tiny)
local A = dir .. "/A"
local code, out, err = run(tiny, A)
t:eq(code, 0, "run exits 0: " .. err)
t:ok(out:find("verdicts on val_loss", 1, true) and out:find("layernorm  none", 1, true),
  "stdout has the verdict table: " .. out)
t:ok(select(2, out:gsub("\n      because ", "")) == 3, "each verdict row carries its reason: " .. out)
t:ok(out:find("summary: " .. A .. "/tiny/summary.json", 1, true), "stdout names summary.json")
t:ok(err:find("[6/6 done]", 1, true), "progress counts runs done/total: " .. err)
for _, r in ipairs(RUNS) do
  t:ok(fs.exists(A .. "/tiny/" .. r .. "/metrics.json"), r .. " is done")
end
local man = json.decode(fs.read(A .. "/tiny/none/seed-1/manifest.json"))
for _, k in ipairs({ "git_commit", "git_dirty", "compiler", "cflags", "lua", "gsl", "corpus_sha256",
  "host", "cpu", "threads", "start_utc", "end_utc", "wall_s", "tokens_per_s", "peak_rss_bytes" }) do
  t:ok(man[k] ~= nil, "manifest has " .. k)
end
local sum = json.decode(fs.read(A .. "/tiny/summary.json"))
t:eq(sum.study, "tiny", "summary: study")
t:eq(#sum.seeds, 2, "summary: seeds")
t:eq(sum.variants[3].overrides.embed_norm, "rmsnorm", "summary: variant overrides")
t:eq(sum.analysis.primary, "val_loss", "summary: analysis")
t:ok(require("repro.analysis.words").family(sum.analysis):find("3 comparisons", 1, true),
  "summary: family")
t:eq(#sum.per_variant.none.metrics.val_loss.values, 2, "summary: per-seed values")
t:eq(sum.per_variant.none.n_diverged, 0, "summary: no divergence")
t:eq(#sum.comparisons, 9, "summary: 3 comparisons x 3 metrics")
t:eq(#sum.verdicts, 3, "summary: one verdict per comparison")
t:ok(sum.comparisons[1].p_holm and sum.comparisons[1].reject_holm ~= nil, "summary: Holm")

-- Every scalar result the engine writes is a metric a study may name.
local names = {}
for _, k in ipairs(require("repro.study").metric_names()) do names[k] = true end
local unlisted = {}
for k, v in pairs(json.decode(fs.read(A .. "/tiny/none/seed-1/metrics.json"))) do
  if type(v) == "number" and k ~= "vocab" and not names[k] then unlisted[#unlisted + 1] = k end
end
t:eq(table.concat(unlisted, ", "), "", "metrics.json fields missing from study.ENGINE_METRICS")

-- 2. Reuse: nothing retrains, nothing is rewritten.
local before = manifests(A, "tiny")
local summary_before = fs.read(A .. "/tiny/summary.json")
code, out, err = run(tiny, A)
t:eq(code, 0, "second run exits 0")
t:ok(err:find("0 to train", 1, true) and err:find("6 reused", 1, true), "all reused: " .. err)
local after = manifests(A, "tiny")
for _, r in ipairs(RUNS) do t:ok(before[r] == after[r], r .. " not retrained") end
t:ok(summary_before == fs.read(A .. "/tiny/summary.json"), "same summary")

-- 3. A config change: finished records of the old config are never overwritten
-- without --force (the message says which keys changed); with --force and --only,
-- only the changed runs retrain.
write_study(tiny, { rms = ", lr = 1e-3" })
code, out, err = run(tiny, A, "--dry-run")
t:ok(code == 1 and out:find("REFUSED rmsnorm/seed-1", 1, true) and
  out:find("lr 0.0003 -> 0.001, min_lr 3e-05 -> 0.0001; needs --force", 1, true) and
  out:find("reuse   none/seed-1", 1, true), "dry run shows the refusal and exits 1: " .. out)
t:ok(fs.read(A .. "/tiny/rmsnorm/seed-1/manifest.json") == before["rmsnorm/seed-1"],
  "dry run changed nothing")
code, out, err = run(tiny, A)
t:ok(code == 1 and err:find("rmsnorm/seed-1 (lr 0.0003 -> 0.001, min_lr 3e-05 -> 0.0001)", 1, true) and
  err:find("without --force", 1, true), "a changed config is refused: " .. err)
t:ok(fs.read(A .. "/tiny/summary.json") == summary_before, "the refusal changed nothing")
-- the summary changes with the config: written only with --update (test_update.lua)
code, out, err = run(tiny, A, "--force --only variant=rmsnorm --update")
t:eq(code, 0, "run --force --update after a change exits 0")
t:ok(err:find("2 to train", 1, true), "two retrained: " .. err)
after = manifests(A, "tiny")
for _, r in ipairs(RUNS) do
  if r:find("rmsnorm") then
    t:ok(before[r] ~= after[r], r .. " retrained")
  else
    t:ok(before[r] == after[r], r .. " reused")
  end
end
t:ok(fs.read(A .. "/tiny/rmsnorm/seed-1/config.json"):find('"lr": 0.001', 1, true),
  "the new config is recorded")

-- 4. --only with --force retrains exactly the selected run.
before = manifests(A, "tiny")
code = run(tiny, A, "--only variant=none,seed=2 --force")
after = manifests(A, "tiny")
local changed = {}
for _, r in ipairs(RUNS) do if before[r] ~= after[r] then changed[#changed + 1] = r end end
t:ok(code == 0 and #changed == 1 and changed[1] == "none/seed-2",
  "--only --force retrains one run: " .. table.concat(changed, ","))

-- --only on a fresh tree: the selected runs, and no summary of an incomplete study.
local O = dir .. "/O"
code, out, err = run(tiny, O, "--only variant=none")
t:ok(code == 0 and fs.exists(O .. "/tiny/none/seed-2/metrics.json") and
  not fs.exists(O .. "/tiny/layernorm") and not fs.exists(O .. "/tiny/summary.json") and
  err:find("4 runs of the study are not done", 1, true), "--only: no summary yet: " .. err)

-- 5. --jobs 1 and --jobs 2: the same bytes.
local J1, J2 = dir .. "/J1", dir .. "/J2"
t:eq(select(1, run(tiny, J1, "--jobs 1")), 0, "--jobs 1")
t:eq(select(1, run(tiny, J2, "--jobs 2")), 0, "--jobs 2")
same_results(J1, J2, "tiny", "--jobs 1 vs 2")
same_results(A, J1, "tiny", "reused, rerun and forced vs fresh")

-- 5b. A study's last run, alone once the other worker is done, continues with that
-- worker's core too (lua/repro/run/pool.lua): the same bytes as --jobs 1.  Two long and two
-- short runs in the order short, long, short, long: the second long one ends alone.  The
-- time it runs alone is about min(2 short, 2 (long - short)) runs, largest when a short run
-- is about half a long one; at 900 and 2000 steps (about 0.7 and 1.5 s here) that is about
-- 1.3 s, several of the worker's 0.2 s looks at its thread file even on a loaded machine.
-- (At 200 and 1000 steps it was 0.3 s, and a CI run under load once saw the message
-- but no manifest with the change: the run had ended before its worker looked.)
if require("repro.sys").cores() >= 2 then
  local tail = dir .. "/tail.lua"
  check.write(tail, string.format([[
return { name = "tail", description = "four runs for two workers",
  base = { n_layer = 2, d_model = 32, n_head = 2, context = 32, batch = 8, iters = 900,
    warmup = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" },
    { name = "rmsnorm", embed_norm = "rmsnorm", iters = 2000 } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" },
    comparisons = { { "rmsnorm", "none" } }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 100,
    test = "t" } }
]], corpus))
  local T1, T2 = dir .. "/T1", dir .. "/T2"
  t:eq(select(1, run(tail, T1, "--jobs 1")), 0, "tail study, --jobs 1")
  code, out, err = run(tail, T2, "--jobs 2")
  t:ok(code == 0 and err:find("continues with 2 threads (no run left to start)", 1, true),
    "the last run continues with 2 threads: " .. err)
  local same, last2 = true, 0
  for _, r in ipairs({ "none/seed-1", "rmsnorm/seed-1", "none/seed-2", "rmsnorm/seed-2" }) do
    for _, f in ipairs(RESULT_FILES) do
      local rel = "/tail/" .. r .. "/" .. f
      same = same and fs.read(T1 .. rel) ~= nil and fs.read(T1 .. rel) == fs.read(T2 .. rel)
    end
    local man = json.decode(fs.read(T2 .. "/tail/" .. r .. "/manifest.json") or "{}")
    if man.threads == 1 and man.threads_last == 2 then last2 = last2 + 1 end
  end
  t:ok(same and fs.read(T1 .. "/tail/summary.json") == fs.read(T2 .. "/tail/summary.json"),
    "tail study: --jobs 1 and --jobs 2 (last run on 2 threads) byte-identical")
  t:ok(last2 >= 1, "a manifest says its run went from 1 to 2 threads")
end

-- 6. A done record of another study with the same config is copied, and said so.
local other = dir .. "/other.lua"
write_study(other, { name = "other", rms = ", lr = 1e-3" })
code, out, err = run(other, J1)
t:ok(code == 0 and err:find("6 copied", 1, true), "identical runs copied: " .. err)
t:ok(same_runs(J1 .. "/tiny", J1 .. "/other", "copied records"), "copied records are identical")
man = json.decode(fs.read(J1 .. "/other/none/seed-1/manifest.json"))
t:eq(man.copied_from, "tiny/none/seed-1", "manifest says where the record came from")
-- the summary is a function of the records alone: trained from scratch, the same bytes
local J3 = dir .. "/J3"
t:eq(select(1, run(other, J3)), 0, "other alone, nothing to copy")
t:ok(fs.read(J1 .. "/other/summary.json") == fs.read(J3 .. "/other/summary.json"),
  "summary with copied records = summary with trained ones")

-- --set changes every run and is recorded.
local Q = dir .. "/Q"
code, out, err = run(tiny, Q, "--set iters=6,warmup=1")
t:eq(code, 0, "--set: exit 0: " .. err)
t:ok(fs.read(Q .. "/tiny/layernorm/seed-2/config.json"):find('"iters": 6', 1, true), "--set applied")
sum = json.decode(fs.read(Q .. "/tiny/summary.json"))
t:ok(sum.command_line_overrides and sum.command_line_overrides.iters == 6 and
  require("repro.analysis.words").notes(sum)[1]:find("--set", 1, true), "--set recorded in the summary")

-- 7. A diverging config is recorded as diverged; the study goes on.
local div = dir .. "/div.lua"
write_study(div, { name = "div", rms = ", lr = 1000.0, grad_clip = 0.0, warmup = 0", every = 50 })
code, out, err = run(div, A)
t:eq(code, 0, "a study with a diverging variant completes: " .. err)
local m = json.decode(fs.read(A .. "/div/rmsnorm/seed-1/metrics.json"))
t:ok(m.diverged == true and m.val_loss == nil, "metrics.json says diverged")
sum = json.decode(fs.read(A .. "/div/summary.json"))
t:eq(sum.per_variant.rmsnorm.n_diverged, 2, "diverged runs counted")
t:eq(sum.per_variant.rmsnorm.metrics.val_loss.values[1], json.null, "diverged value null")
t:ok(sum.per_variant.rmsnorm.metrics.val_loss.n == 0 and
  sum.per_variant.rmsnorm.metrics.val_loss.mean == nil, "left out of the mean")
t:ok(sum.per_variant.rmsnorm.metrics.n_spikes.values[1] >= 1, "a divergence counts as a spike")
t:ok(table.concat(require("repro.analysis.words").notes(sum), "\n"):find(
  "rmsnorm: 2 of 2 runs diverged", 1, true),
  "a note says so")
t:ok(err:find("diverged at step", 1, true), "progress says diverged")

-- 8. Interruptions.  A slower study (about a second a run) in the background: stop it
-- once the first run has written a checkpoint, then rerun.
local slow = dir .. "/slow.lua"
write_study(slow, { name = "slow", every = 5, base = "n_layer = 2, d_model = 48, n_head = 4, " ..
  "context = 32, batch = 8, iters = 60, warmup = 5" })
local U = dir .. "/U"
t:eq(select(1, run(slow, U)), 0, "uninterrupted slow study")

local function start_and_stop(root, signal)
  local pid = proc.spawn({ repro, "run", slow, "--out-root", root },
    { stdout = root .. ".out", stderr = root .. ".err" })
  local run_dir = root .. "/slow/none/seed-1"
  local deadline = host.now() + 120
  local ckpt
  while host.now() < deadline do
    if not ckpt and fs.exists(run_dir .. "/config.json") then
      ckpt = record.checkpoint_path(run_dir, fs.sha256(run_dir .. "/config.json"))
    end
    if ckpt and fs.exists(ckpt) then break end
    proc.sleep(0.005)
  end
  t:ok(ckpt and fs.exists(ckpt), signal .. ": a checkpoint appeared before the deadline")
  proc.kill(pid, signal)
  local _, how, status = proc.wait(true)
  return how, status, fs.read(root .. ".err") or ""
end

local function no_false_done(root, what)
  local done, incomplete = 0, 0
  for _, r in ipairs(RUNS) do
    local d = root .. "/slow/" .. r
    if fs.exists(d .. "/metrics.json") then
      local cfg_text = fs.read(d .. "/config.json")
      local metrics = json.decode(fs.read(d .. "/metrics.json"))
      t:ok(cfg_text and metrics.config_sha256 == fs.sha256(d .. "/config.json") and
        fs.exists(d .. "/log.csv") and fs.exists(d .. "/manifest.json"),
        what .. ": " .. r .. " has metrics.json and is complete")
      done = done + 1
    else
      incomplete = incomplete + 1
    end
  end
  t:ok(incomplete > 0, what .. ": stopped mid-study (" .. done .. " runs done)")
end

local K = dir .. "/K"
local how, status = start_and_stop(K, "KILL")
t:ok(how == "signal" and status == 9, "kill -9 killed the runner")
no_false_done(K, "kill -9")
code, out, err = run(slow, K)
t:eq(code, 0, "rerun after kill -9 completes: " .. err)
t:ok(err:find("resuming from its checkpoint", 1, true), "the killed run resumed: " .. err)
same_results(U, K, "slow", "kill -9 then rerun vs uninterrupted")
local resumed = json.decode(fs.read(K .. "/slow/none/seed-1/manifest.json")).resumed_from_step
t:ok(resumed and resumed >= 5, "manifest records the resume step: " .. tostring(resumed))

local I = dir .. "/I"
local ierr
how, status, ierr = start_and_stop(I, "INT")
t:ok(how == "exit" and status == 130, "Ctrl-C: exit status 130 (" .. tostring(how) .. " " ..
  tostring(status) .. ")")
t:ok(ierr:find("interrupted", 1, true) and ierr:find("Finished: ", 1, true) and
  ierr:find("Rerun the same command", 1, true), "Ctrl-C says which runs finished: " .. ierr)
t:ok(ierr:find("Stopped with a checkpoint: none/seed-1 at step", 1, true),
  "Ctrl-C names the stopped run: " .. ierr)
no_false_done(I, "Ctrl-C")
t:eq(record.status(I .. "/slow/none/seed-1", json.decode(fs.read(I .. "/slow/none/seed-1/config.json"))),
  "partial", "the stopped run has its checkpoint")
t:eq(select(1, run(slow, I)), 0, "rerun after Ctrl-C completes")
same_results(U, I, "slow", "Ctrl-C then rerun vs uninterrupted")

check.rmtree(dir)
t:done()
