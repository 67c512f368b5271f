-- A run stopped at its last step saves its checkpoint there, so the
-- step it reports is the step a rerun resumes from, and the resumed run (which only
-- evaluates) writes the record of an uninterrupted run byte for byte; the study ETA
-- (run/pool.lua P:eta) of a last run training alone is that run's own ETA.
local check = require "check"
local fs = require "repro.core.fs"
local engine = require "engine"
local record = require "repro.record"
local t = check.new("test_stop_last")
local dir = check.tmpdir()

-- a small corpus (check.small_corpus): the final evaluation is the resumed run's only work
local cfg = record.resolve({ iters = 8, n_layer = 1, d_model = 16, n_head = 2, context = 16,
  batch = 4, warmup = 1, diag_every = 4, data = check.small_corpus(dir .. "/corpus.txt") })
local straight, stopped = dir .. "/straight", dir .. "/stopped"
record.run(cfg, straight, {})
-- stopped after its last step (the signal comes while the last step trains)
local m = record.run(cfg, stopped, { checkpoint_every = 3,
  on_step = function(step) return step == cfg.iters - 1 end })
t:ok(m.stopped, "the run stopped")
t:eq(m.steps, cfg.iters, "at its last step")
local ckpt = record.checkpoint_path(stopped, fs.sha256(stopped .. "/config.json"))
t:ok(fs.exists(ckpt), "with a checkpoint at the step it stopped")
local m2 = record.run(cfg, stopped, {})
t:eq(m2.resumed_from, cfg.iters, "the rerun resumes from the step the stop reported (" ..
  tostring(m.steps) .. "), not from the last periodic checkpoint (6)")
for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
  t:eq(fs.read(stopped .. "/" .. f), fs.read(straight .. "/" .. f), f .. ": byte-identical to the uninterrupted run")
end
t:ok(not fs.exists(ckpt), "the checkpoint is removed once the record is done")

-- stopped in the middle: the same promise
local mid = dir .. "/mid"
m = record.run(cfg, mid, { checkpoint_every = 3, on_step = function(step) return step == 4 end })
t:eq(m.steps, 5, "stopped after step 5")
m2 = record.run(cfg, mid, {})
t:eq(m2.resumed_from, 5, "resumed from step 5")
t:eq(fs.read(mid .. "/metrics.json"), fs.read(straight .. "/metrics.json"), "metrics.json identical")

-- the study ETA: a last run alone gives its own ETA; two runs queued on one worker add up
local pool = require "repro.run.pool"
local P = pool._P
local function fake(jobs, running, queue)
  return setmetatable({ jobs = jobs, running = running, queue = queue, next_i = 1,
    work_done = 0, t0 = 0 }, P)
end
local run = { cfg = { iters = 100 }, cost = 10 }
local w = { run = run, step = 20, rate = 2 } -- 80 steps left at 2 steps/s: 40 s
t:eq(fake(2, { [1] = w }, {}):eta(50), 40, "the last run alone: the study ETA is its own (40 s)")
t:eq(fake(1, { [1] = w }, { { cfg = { iters = 100 }, cost = 10 } }):eta(50), 90,
  "one worker, a run queued behind: 40 s + 100 steps at 2 steps/s = 90 s")
t:eq(fake(2, { [1] = w }, { { cfg = { iters = 100 }, cost = 10 } }):eta(50), 50,
  "two workers: the queued run starts on the idle one (50 s), the study ends with it")
t:done()
