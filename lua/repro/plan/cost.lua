-- The cost of a study told before it is spent: the predicted wall time of its runs on this
-- machine (`bin/repro run --dry-run`, `bin/repro plan`, `bin/repro cost`, make reproduce,
-- and a study's start and end).  Timings only: nothing here enters a record or a summary.
-- Each model shape and thread count (M.shape) is calibrated by a short training of
-- M.CAL_STEPS steps, kept in <root>/build/cost/<machine>-<build>.json (once per machine and
-- engine build), and calibrated again when the machine now gives more than M.RECALIBRATE
-- times the FMA peak it had.  M.run_seconds predicts a run, M.makespan a study on `jobs`
-- workers (its tail overstated, never understated).
local engine = require "engine"
local stats = require "stats"
local proc = require "repro.proc"
local fs = require "repro.core.fs"
local progress = require "repro.core.progress"
local json = require "repro.core.json"
local host = require "repro.host"
local sys = require "repro.sys"

local M = {}

M.CAL_STEPS = 6 -- steps of a calibration: the first is not timed
M.PEAK_S = 0.1 -- seconds of the FMA peak measured with a calibration and before its reuse
M.CAL_WINDOWS = 256 -- validation windows a calibration's final evaluation times (then scaled)
M.RECALIBRATE = 1.25 -- the peak's ratio (now / at calibration) above which it is redone
M.LOCK_WAIT_S = 10 -- longest wait for the cache directory's lock before writing without it

-- The keys of a config that set the cost of a step, and the thread count, as one string.
-- (The embedding normalization and balanced accuracy are left out: one row-wise pass per
-- step or evaluation, within the calibration's noise, and each would cost a calibration.)
function M.shape(cfg, threads)
  return string.format("L%d-C%d-H%d-T%d-B%d-%s-%s-th%d", cfg.n_layer, cfg.d_model,
    cfg.n_head, cfg.context, cfg.batch, (cfg.dropout or 0) > 0 and "drop" or "nodrop",
    cfg.tie_embeddings == false and "untied" or "tied", threads)
end

-- The forward passes (batches of cfg.batch sequences of cfg.context) that scoring cfg's
-- task suite takes (engine/tasks.c: one sequence per choice, a set's last batch partly
-- filled), over every set of repro.tasks.load (each task at each shot count); 0 without
-- `tasks` or when its files are missing.  By corpus and suite, counted once.
local batches_cache = {}
function M.task_batches(cfg)
  if not cfg.tasks or cfg.tasks == "" then return 0 end
  local key = tostring(cfg.data) .. "\0" .. cfg.tasks .. "\0" .. tostring(cfg.batch)
  if batches_cache[key] == nil then
    local tasks = require "repro.tasks"
    local ok, suite = pcall(tasks.load, cfg.data, cfg.tasks, { missing_ok = true })
    local n = 0
    if ok then
      for _, set in ipairs(suite.sets) do
        local seqs = 0
        for _, it in ipairs(set.items) do seqs = seqs + #it.choices end
        n = n + (seqs + cfg.batch - 1) // cfg.batch
      end
    end
    batches_cache[key] = n
  end
  return batches_cache[key]
end

-- The characters of cfg's validation split (engine/data.c: the last n - 9n/10 bytes of
-- its corpus, cfg.data from the project root), or nil when the file cannot be read.
local val_cache = {}
function M.val_chars(cfg)
  local path = cfg.data
  if type(path) ~= "string" or path == "" then return nil end
  if val_cache[path] == nil then
    local full = path:sub(1, 1) == "/" and path or (host.root .. "/" .. path)
    local st = sys.stat(full)
    val_cache[path] = st and st.type == "file" and st.size and (st.size - st.size * 9 // 10)
      or false
  end
  return val_cache[path] or nil
end

-- Seconds of one run of config cfg from calibration c ({step_s, final_s, eval_tok_s,
-- val_chars}): the final evaluation covers the whole validation split, so final_s scales
-- with cfg's split against the calibration's (a corpus 3.7 times Tiny Shakespeare's has a
-- final evaluation 3.7 times as long).
function M.run_seconds(c, cfg)
  local steps = cfg.iters
  local final = c.final_s
  local v = c.val_chars and c.val_chars > 0 and M.val_chars(cfg)
  if v then final = final * v / c.val_chars end
  local diag = 0
  if (cfg.diag_every or 0) > 0 then
    diag = (steps // cfg.diag_every) * (cfg.diag_windows or 0) * cfg.context / c.eval_tok_s
  end
  local tasks = M.task_batches(cfg) * cfg.batch * cfg.context / c.eval_tok_s
  return steps * c.step_s + final + diag + tasks
end

-- Wall seconds of running the jobs of `seconds` (a list, in order) on `jobs` workers, each
-- run going to the first worker free.
function M.makespan(seconds, jobs)
  local free = {}
  for w = 1, math.max(1, jobs) do free[w] = 0 end
  for _, s in ipairs(seconds) do
    local best = 1
    for w = 2, #free do if free[w] < free[best] then best = w end end
    free[best] = free[best] + s
  end
  local m = 0
  for _, f in ipairs(free) do m = math.max(m, f) end
  return m
end

-- This machine's CPU as /proc/cpuinfo names it: {["model name"], ["cpu family"], model,
-- flags, ...} (the first processor's fields; empty where there is no /proc/cpuinfo).
function M.cpuinfo()
  local info = {}
  local f = io.open("/proc/cpuinfo", "r")
  if f then
    for line in f:lines() do
      local k, v = line:match("^([^\t:]+)%s*:%s*(.*)$")
      if k and info[k] == nil then info[k] = v end
      if line == "" and next(info) then break end
    end
    f:close()
  end
  return info
end

-- The cache of this machine and build.
local function cache_path()
  local info = M.cpuinfo()
  local cpu = string.format("%s-f%s-m%s-%s", info["model name"] or "cpu", info["cpu family"] or "?",
    info["model"] or "?", (" " .. (info.flags or "") .. " "):find(" avx512f ") and "avx512" or "noavx512")
  local build = fs.sha256("/proc/self/exe") or fs.sha256(fs.absolute(host.exe)) or "unknown"
  return string.format("%s/build/cost/%s-%s.json", host.root, (cpu:gsub("[^%w._-]", "_")),
    build:sub(1, 12))
end

-- One calibration of cfg at `threads` threads: {step_s, final_s, eval_tok_s}.
local function calibrate(cfg, threads)
  local c = {}
  for k, v in pairs(cfg) do c[k] = v end
  c.iters, c.warmup, c.diag_every, c.threads = M.CAL_STEPS, 1, 0, threads
  local peak = engine.fma_peak(threads, M.PEAK_S)
  -- the final evaluation on its first CAL_WINDOWS windows, its time scaled to the whole
  -- split (it is one pass over the windows: the forward passes, the diagnostics and the
  -- temperature scan grow with their number); all of it when the split's size is unknown
  local val = M.val_chars(cfg)
  local total = val and (val - 1) // cfg.context or 0
  local used = (total > M.CAL_WINDOWS) and M.CAL_WINDOWS or 0
  local t = {}
  local m = engine.train(c, { on_step = function(step) t[step] = proc.monotonic() end,
    final_windows = used })
  local t_end = proc.monotonic()
  if m.interrupted then -- Ctrl-C or SIGTERM meant the command, not just the calibration
    error({ message = "interrupted during the calibration of the predicted time",
      interrupted = true })
  end
  local last = M.CAL_STEPS - 1
  if not t[0] or not t[last] or not m.eval_tokens_per_s or m.eval_tokens_per_s <= 0 then
    error("calibration: the run stopped early (diverged or no evaluation)")
  end
  local steps = {}
  for i = 1, last do steps[i] = t[i] - t[i - 1] end
  local final_s = (t_end - t[last]) * (used > 0 and total / used or 1)
  return { step_s = stats.summary(steps).median, final_s = final_s,
    eval_tok_s = m.eval_tokens_per_s, val_chars = val, fma_gflops = peak }
end

-- Why a cached calibration c of shape `key` is measured again (nil: it is kept): from
-- before the final evaluation was scaled by the corpus (no val_chars) or before the peak
-- was kept (no fma_gflops), or made on a machine slower than now (peak_now(): the FMA
-- peak measured now at its thread count, measured once per call of M.calibrations).
local function stale(c, peak_now)
  if not (c and c.val_chars and c.fma_gflops) then return "" end
  local now = peak_now()
  if now > M.RECALIBRATE * c.fma_gflops then
    return string.format("the cached calibration had an FMA peak of %.1f GFLOP/s, the " ..
      "cores give %.1f now (it was made under load)", c.fma_gflops, now)
  end
  return nil
end

-- The calibration of every shape in cfgs (a list of configs) at `threads` threads, from the
-- cache or measured now (and cached).  Returns shape -> calibration, the number measured
-- now, and an error message for the shapes that could not be calibrated (nil if none).
-- path: the cache file (default this machine's and build's; tests give their own).
function M.calibrations(cfgs, threads, path)
  path = path or cache_path()
  local cache = json.table_of(fs.read(path)) or {}
  local measured, err = 0, nil
  local now
  local function peak_now()
    now = now or engine.fma_peak(threads, M.PEAK_S)
    return now
  end
  local done = {} -- shapes calibrated by this call: never again in it (the peak its own
  -- calibration measured can be below the one measured first, on a busy machine)
  local fresh = {} -- shapes measured by this call
  for _, cfg in ipairs(cfgs) do
    local key = M.shape(cfg, threads)
    local why = not done[key] and stale(cache[key], peak_now)
    if why then
      done[key] = true
      io.stderr:write(why == "" and string.format("cost: calibrating %s (%d steps and an " ..
        "evaluation, once per machine and build)\n", key, M.CAL_STEPS) or string.format(
        "cost: calibrating %s again (%d steps and an evaluation): %s\n", key, M.CAL_STEPS, why))
      local cok, c = pcall(calibrate, cfg, threads)
      if not cok and type(c) == "table" and c.interrupted then error(c, 0) end
      if cok then
        cache[key] = c
        fresh[key] = true
        measured = measured + 1
      else
        err = type(c) == "table" and c.message or tostring(c)
      end
    end
  end
  if measured > 0 then
    local dir = path:match("^(.*)/[^/]*$") or "."
    fs.mkdir_p(dir)
    -- Other commands (a dry run in another terminal, test files side by side) write the same
    -- cache: under the directory's lock, the file is read again and only the shapes measured
    -- here replace its entries, so no one's calibration is lost to a stale copy.  Without
    -- the lock (no flock here, or still held after LOCK_WAIT_S) the merge is still made.
    local lock
    for _ = 1, math.ceil(M.LOCK_WAIT_S / 0.05) do
      local l, why = sys.lock(dir)
      if l or why ~= "held" then lock = l break end
      proc.sleep(0.05)
    end
    local latest = json.table_of(fs.read(path)) or {}
    for key in pairs(fresh) do latest[key] = cache[key] end
    pcall(fs.write_atomic, path, json.encode(latest))
    if lock then lock:release() end
    for key, c in pairs(latest) do
      if cache[key] == nil then cache[key] = c end
    end
  end
  return cache, measured, err
end

-- Predicted wall seconds of training `runs` (each with .cfg) on `jobs` workers of `threads`
-- threads, and the number of shapes calibrated now; nil and a message when a shape cannot
-- be calibrated.  cal (shape -> calibration) is given by tests; else M.calibrations.
function M.predict(runs, jobs, threads, cal)
  if #runs == 0 then return 0, 0 end
  local measured, err = 0, nil
  if not cal then
    local cfgs = {}
    for _, r in ipairs(runs) do cfgs[#cfgs + 1] = r.cfg end
    cal, measured, err = M.calibrations(cfgs, threads)
  end
  local seconds = {}
  for _, r in ipairs(runs) do
    local c = cal[M.shape(r.cfg, threads)]
    if not c then return nil, err or ("no calibration of " .. M.shape(r.cfg, threads)) end
    seconds[#seconds + 1] = M.run_seconds(c, r.cfg)
  end
  return M.makespan(seconds, jobs), measured
end

-- The runs of a plan (planner.plan's actions) that would train: not reused, copied or
-- refused.
function M.to_train(runs)
  local out = {}
  for _, r in ipairs(runs) do
    if r.action ~= "reuse" and r.action ~= "copy" and r.action ~= "refuse" then
      out[#out + 1] = r
    end
  end
  return out
end

-- Seconds as text: "45s", "12m05s", "3h07m" (the progress lines' form).
M.fmt = progress.fmt_time

-- One line: the predicted wall time of `runs` on jobs x threads, with how it was made.
function M.line(runs, jobs, threads)
  local pred, measured = M.predict(runs, jobs, threads)
  if not pred then
    return nil, string.format("predicted time: unknown (%s)", measured or "no calibration")
  end
  return pred, string.format("predicted time: %s for %d run%s to train on %d job%s x %d " ..
    "thread%s (this machine; %s)", M.fmt(pred), #runs, #runs == 1 and "" or "s", jobs,
    jobs == 1 and "" or "s", threads, threads == 1 and "" or "s",
    measured > 0 and string.format("%d shape%s calibrated now", measured,
      measured == 1 and "" or "s") or "calibration cached")
end

return M
