-- The arithmetic of the predicted wall time (lua/repro/plan/cost.lua), never its timing:
-- a run's seconds from a given calibration, the makespan of runs on several workers, the
-- shape key, which planned runs count, and the text of a duration.
local check = require "check"
local cost = require "repro.plan.cost"
local t = check.new("test_cost")

local cfg = { n_layer = 2, d_model = 64, n_head = 4, context = 32, batch = 8, iters = 100,
  dropout = 0.0, diag_every = 25, diag_windows = 10 }
local cal = { step_s = 0.5, final_s = 7, eval_tok_s = 640 }
-- 100 steps x 0.5 s + 7 s + 4 diagnostics x 10 windows x 32 tokens / 640 tok/s (2 s)
t:near(cost.run_seconds(cal, cfg), 59, 1e-12, "run: steps + final evaluation + diagnostics")
local nodiag = {}
for k, v in pairs(cfg) do nodiag[k] = v end
nodiag.diag_every = 0
t:near(cost.run_seconds(cal, nodiag), 57, 1e-12, "run: diag_every = 0 has no diagnostics")
nodiag.diag_every, nodiag.iters = 30, 59 -- 59 // 30 = 1 diagnostic: 29.5 + 7 + 0.5
t:near(cost.run_seconds(cal, nodiag), 37, 1e-12, "run: the diagnostics count rounds down")

-- a task suite scored after training: every set's choices in batches of cfg.batch, each a
-- forward of batch x context tokens at the evaluation's rate; counted here from the
-- committed core suite's files (every task at 0 and 3 shots, each pool has 3 or more)
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local tcfg = {}
for k, v in pairs(cfg) do tcfg[k] = v end
tcfg.tasks, tcfg.data = "core", "data/tinyshakespeare.txt"
local want = 0
for _, task in ipairs({ "completion", "spelling", "order", "agreement", "speaker", "capital" }) do
  local seqs = 0
  for line in (fs.read("tasks/tinyshakespeare/" .. task .. "-v1.jsonl") or ""):gmatch("[^\n]+") do
    seqs = seqs + #json.decode(line).choices
  end
  t:ok(seqs > 0, "the committed task file of " .. task .. " has items")
  want = want + 2 * ((seqs + tcfg.batch - 1) // tcfg.batch)
end
t:eq(cost.task_batches(tcfg), want, "task batches: the core suite's choices at 0 and 3 shots")
t:near(cost.run_seconds(cal, tcfg), 59 + want * 8 * 32 / 640, 1e-9,
  "run: training, evaluation, diagnostics and the task suite's forward passes")
t:eq(cost.task_batches(cfg), 0, "no tasks: no scoring")

-- the final evaluation covers the corpus's whole validation split (the last n - 9n/10
-- bytes): a calibration on Tiny Shakespeare predicts a corpus of another size by the ratio
-- of the splits; a calibration without val_chars (cached before) or a corpus that cannot
-- be read keeps final_s as measured
local sys = require "repro.sys"
local function split(path)
  local n = sys.stat(path).size
  return n - n * 9 // 10
end
local ts, kjv = split("data/tinyshakespeare.txt"), split("data/kjv.txt")
t:eq(cost.val_chars({ data = "data/tinyshakespeare.txt" }), ts, "val_chars: Tiny Shakespeare")
t:eq(cost.val_chars({ data = "data/no-such-corpus.txt" }), nil, "val_chars: no file, nil")
local vcal = { step_s = 0.5, final_s = 7, eval_tok_s = 640, val_chars = ts }
local on = {}
for k, v in pairs(nodiag) do on[k] = v end
on.diag_every, on.iters = 0, 100
on.data = "data/tinyshakespeare.txt"
t:near(cost.run_seconds(vcal, on), 57, 1e-12, "final: the calibration's own corpus, as measured")
on.data = "data/kjv.txt"
t:near(cost.run_seconds(vcal, on), 50 + 7 * kjv / ts, 1e-9, "final: scaled by the splits' ratio")
t:ok(kjv > 3 * ts, "the King James Bible's split is over 3 times Tiny Shakespeare's")
t:near(cost.run_seconds(cal, on), 57, 1e-12, "final: a calibration without val_chars, as measured")
on.data = "data/no-such-corpus.txt"
t:near(cost.run_seconds(vcal, on), 57, 1e-12, "final: an unreadable corpus, as measured")

-- makespan: each run to the first free worker, in order
t:near(cost.makespan({ 3, 1, 1, 1 }, 1), 6, 1e-12, "one worker: the sum")
t:near(cost.makespan({ 3, 1, 1, 1 }, 2), 3, 1e-12, "two workers: 3 | 1+1+1")
t:near(cost.makespan({ 1, 1, 3, 3 }, 2), 4, 1e-12, "two workers: 1+3 | 1+3")
t:near(cost.makespan({ 5, 4, 3, 2, 1 }, 2), 8, 1e-12, "two workers: 5+2+1 | 4+3")
t:near(cost.makespan({ 2 }, 4), 2, 1e-12, "more workers than runs")
t:near(cost.makespan({}, 2), 0, 0, "no runs")

-- shapes: the keys that set a step's cost and the threads; the rest do not count
local other = {}
for k, v in pairs(cfg) do other[k] = v end
other.lr, other.seed, other.iters = 0.01, 7, 5
t:eq(cost.shape(other, 2), cost.shape(cfg, 2), "lr, seed and iters do not change the shape")
t:ok(cost.shape(cfg, 1) ~= cost.shape(cfg, 2), "the thread count changes the shape")
other.dropout = 0.1
t:ok(cost.shape(other, 2) ~= cost.shape(cfg, 2), "dropout changes the shape")
other.dropout, other.d_model = 0.0, 128
t:ok(cost.shape(other, 2) ~= cost.shape(cfg, 2), "d_model changes the shape")

-- a study: runs of two shapes on two workers, from given calibrations
local big = {}
for k, v in pairs(cfg) do big[k] = v end
big.d_model = 128
local cals = { [cost.shape(cfg, 1)] = cal,
  [cost.shape(big, 1)] = { step_s = 1, final_s = 10, eval_tok_s = 320 } }
-- big: 100 + 10 + 4 x 10 x 32 / 320 (4) = 114; small: 59
local runs = { { cfg = big }, { cfg = cfg }, { cfg = cfg } }
t:near(cost.predict(runs, 2, 1, cals), 118, 1e-12, "study: 114 | 59 + 59")
t:near(cost.predict(runs, 1, 1, cals), 232, 1e-12, "study on one worker: the sum")
local none, msg = cost.predict(runs, 1, 2, cals)
t:ok(none == nil and msg:find("no calibration", 1, true), "a shape without calibration: nil")

-- which planned runs train
local plan = { { action = "reuse" }, { action = "copy" }, { action = "train" },
  { action = "resume" }, { action = "rerun" }, { action = "repair" }, { action = "refuse" } }
t:eq(#cost.to_train(plan), 4, "train, resume, rerun and repair train; reuse, copy, refuse not")

t:eq(cost.fmt(44.6), "45s", "seconds")
t:eq(cost.fmt(725), "12m05s", "minutes")
t:eq(cost.fmt(3 * 3600 + 7 * 60 + 59), "3h07m", "hours")
t:eq(cost.fmt(nil), "?", "unknown")

-- A cached calibration made on a slower machine (or under load: a lower FMA peak than the
-- cores give now) is measured again; one made at a peak the machine still gives is kept.
local engine = require "engine"
local ccfg = engine.defaults()
for k, v in pairs({ n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4,
  data = "data/tinyshakespeare.txt" }) do ccfg[k] = v end
local cdir = check.tmpdir()
local cpath = cdir .. "/cost/cache.json"
local fresh, n_fresh = cost.calibrations({ ccfg, ccfg }, 1, cpath)
local key = cost.shape(ccfg, 1)
t:eq(n_fresh, 1, "an empty cache: one shape calibrated, once for two configs of it")
t:ok(fresh[key] and fresh[key].fma_gflops and fresh[key].fma_gflops > 0,
  "the calibration keeps the FMA peak it had: " .. tostring(fresh[key] and fresh[key].fma_gflops))
local function cache_with(peak)
  local e = {}
  for k, v in pairs(fresh[key]) do e[k] = v end
  e.step_s, e.fma_gflops = 1234.5, peak
  fs.write_atomic(cpath, json.encode({ [key] = e }))
end
cache_with(fresh[key].fma_gflops * 1e6) -- made when the cores gave far more than now
local kept, n_kept = cost.calibrations({ ccfg }, 1, cpath)
t:eq(n_kept, 0, "a calibration made at a higher peak than now is kept")
t:eq(kept[key].step_s, 1234.5, "the kept calibration is the cached one")
cache_with(fresh[key].fma_gflops * 1e-6) -- made under load: a millionth of the peak
local redone, n_redone = cost.calibrations({ ccfg }, 1, cpath)
t:eq(n_redone, 1, "a calibration made at a peak the machine now exceeds is measured again")
t:ok(redone[key].step_s < 1234.5 and redone[key].fma_gflops > fresh[key].fma_gflops * 1e-3,
  "the new calibration replaces it, with the peak of now")
local reread = json.decode(fs.read(cpath))
t:ok(reread[key].step_s < 1234.5, "and is written to the cache")
cache_with(nil) -- cached before the peak was kept
local _, n_old = cost.calibrations({ ccfg }, 1, cpath)
t:eq(n_old, 1, "a calibration without its peak (an older cache) is measured again")

-- Two commands calibrating at once (test files side by side, a dry run in another terminal):
-- one read the cache before the other wrote its shape; its own write must not drop that
-- shape.  Here the first read sees the cache as it was before the other's write.
local other = { step_s = 0.5, final_s = 1, eval_tok_s = 1000, val_chars = 1, fma_gflops = 1 }
local now_cache = json.decode(fs.read(cpath))
now_cache["another-shape"] = other
now_cache[key] = nil
fs.write_atomic(cpath, json.encode(now_cache))
local real_read, first = fs.read, true
fs.read = function(p, ...)
  if p == cpath and first then first = false return "{}" end
  return real_read(p, ...)
end
local merged, n_merged = cost.calibrations({ ccfg }, 1, cpath)
fs.read = real_read
local on_disk = json.decode(fs.read(cpath))
t:eq(n_merged, 1, "the stale read calibrates its shape")
t:ok(on_disk["another-shape"] and on_disk["another-shape"].step_s == 0.5 and on_disk[key],
  "the cache written keeps the shape another command wrote meanwhile, and adds this one")
t:ok(merged["another-shape"] ~= nil, "and the calibrations returned include it")

-- The commands: a dry run prints the prediction (calibrating a tiny shape once per machine
-- and build, in build/cost/) and writes no record; bin/repro cost gives the totals.
local fs = require "repro.core.fs"
local repro = os.getenv("REPRO") or "bin/repro"
local out = check.tmpdir()
local TINY = "n_layer=1,d_model=32,n_head=2,context=32,batch=4,iters=20,warmup=2," ..
  "diag_every=5,diag_windows=4"
local dry = string.format("%s run lua/experiments/final.lua --only seed=1 --dry-run " ..
  "--out-root %s --set %s 2>/dev/null", repro, fs.quote(out), TINY)
local first = fs.capture(dry) or ""
t:ok(first:find("predicted time: %d+m?%d*s? for 3 runs to train") ~= nil,
  "the dry run predicts the time of its 3 runs: " .. first:match("[^\n]*$"))
-- (unless the first was measured under load, which the rule above redoes: with test files
-- running side by side, or a sanitizer build beside other work, the first dry run's FMA
-- peak can be far below what the cores give a moment later; the redo then names why)
-- (its stderr inside the parentheses: fs.capture sends the command's own stderr to
-- /dev/null, so "cmd 2>&1" would lose the reason again)
local second = fs.capture("(" .. dry:gsub(" 2>/dev/null", " 2>&1") .. ")") or ""
t:ok(second:find("calibration cached", 1, true) ~= nil or
  second:find("(it was made under load)", 1, true) ~= nil,
  "the second dry run uses the cache, or says the first was made under load: " ..
  second:sub(1, 300) .. " ... " .. second:sub(-300))
t:ok(not fs.exists(out .. "/final"), "the dry run wrote no record")
local total = fs.capture(string.format("%s cost lua/experiments/final.lua --out-root %s " ..
  "--set %s 2>/dev/null", repro, fs.quote(out), TINY)) or ""
t:ok(total:find("\ntotal%s+15 ") ~= nil and total:find("for the 15 runs to train now", 1, true),
  "bin/repro cost: 15 runs from scratch, 15 to train now")

-- --markdown: REPRODUCE.md's table (make cost-table), the machine stated, a row per study
-- in default runs (one run of the default config: final's 15 runs, two thirds with an
-- embedding norm that costs a little more, are 15 or 16, as the machine's load was when each
-- config was timed) and the total; scripts/cost_table.lua splices it between REPRODUCE.md's
-- markers
local md = fs.capture(string.format("%s cost lua/experiments/final.lua lua/experiments/prelim.lua " ..
  "--markdown 2>/dev/null", repro)) or ""
t:ok(md:find("^Predicted by `bin/repro cost %-%-markdown` on .-%(family %d+, model %d+%)") ~= nil,
  "the table states the machine: " .. md:sub(1, 200))
t:ok(md:find("\n| final | 15 | 1[56] | ") ~= nil, "final: 15 runs, 15 or 16 default runs: " .. md)
t:ok(md:find("\n| prelim | 9 | %d+ | ") ~= nil and md:find("\n| total | 24 | %d+ | ") ~= nil,
  "prelim's row and the total")
t:ok(fs.read("REPRODUCE.md"):find("<!-- cost table: generated by make cost-table -->", 1, true),
  "REPRODUCE.md has the table's markers")
t:done()
