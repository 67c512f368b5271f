-- `bin/repro audit`: checksums detect corruption, not forgery, so the audit trains N
-- records per study again and compares their files byte for byte (flags, draw and exit
-- status: docs/COMMANDS.md; docs/DESIGN.md "The audit").  It draws from each study's record
-- set (study/records.lua) by provenance level, the adopted first: the only place a forgery
-- can hide from git and the journal.  Its time is predicted from each config's shape
-- (plan/cost.lua), never from a manifest.
local sys = require "repro.sys"
local pcg = require "pcg"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local base = require "repro.core.base"
local record = require "repro.record"
local set = require "repro.record.set"
local study_records = require "repro.study.records"
local cost = require "repro.plan.cost"
local proc = require "repro.proc"
local engine = require "engine"
local provenance = require "repro.record.provenance"

local M = {}
local user_error = base.user_error
M.USAGE = "usage: bin/repro audit [STUDY ...] --sample N [--seed S] [--max-time S] " ..
  "[--out-root DIR]"

-- The predicted time above which an audit is refused unless --max-time raises it.
M.MAX_TIME_S = 3600

local function parse(args)
  local o = base.parse_options(args, "repro audit", M.USAGE, {
    ["--sample"] = { key = "sample", kind = "int", min = 1 },
    ["--seed"] = { key = "seed", kind = "int", min = 0 },
    ["--max-time"] = { key = "max_time", kind = "number", min = 0 },
    ["--out-root"] = { key = "out_root", kind = "value", needs = "a directory" } })
  if o.help then return o end
  if o.max_time == 0 then user_error("repro audit: --max-time needs a number > 0, got 0") end
  o.max_time = o.max_time or M.MAX_TIME_S
  o.studies = {}
  for _, a in ipairs(o.targets) do
    local name = a:match("([^/]+)%.lua$") or a
    if not base.valid_name(name) then
      user_error("repro audit: %s is not a study name (%s)", base.printable(a), base.NAME_RULE)
    end
    o.studies[#o.studies + 1] = name
  end
  if not o.sample then user_error("repro audit: --sample N is required (%s)", M.USAGE) end
  o.out_root = fs.records_root(o.out_root):gsub("/+$", "")
  return o
end

-- n of the list's items, drawn without replacement by the generator, in draw order.
local function draw(list, n, gen)
  local pool = table.move(list, 1, #list, 1, {})
  local out = {}
  for k = 1, math.min(n, #pool) do
    local j = k + gen:bounded(#pool - k + 1)
    pool[k], pool[j] = pool[j], pool[k]
    out[#out + 1] = pool[k]
  end
  return out
end

-- The FLOPs training cfg takes at the least: per step and token, the forward (2) and
-- backward (4) multiply-adds of each block's weights (attention's q, k, v and output,
-- 4 x d_model^2; the MLP's two layers, 8 x d_model^2), leaving out the head, the
-- attention scores and everything else.
function M.floor_flops(cfg)
  return 6.0 * 12 * cfg.n_layer * cfg.d_model * cfg.d_model * cfg.batch * cfg.context *
    cfg.iters
end

-- The record's config (resolved), or nil and why it cannot be read.
local function config_of(dir)
  local text, err = fs.read(dir .. "/config.json")
  if not text then return nil, "config.json cannot be read: " .. tostring(err) end
  local c = json.table_of(text)
  if not c then return nil, "config.json is not a JSON object" end
  local rok, cfg = pcall(record.resolve, c)
  if not rok then
    return nil, "config.json is not a config: " .. (type(cfg) == "table" and
      tostring(cfg.message) or tostring(cfg))
  end
  local cok, cerr = pcall(engine.check, cfg)
  if not cok then return nil, "config.json is not a config: " .. tostring(cerr) end
  return cfg
end

-- The members of a study's record set to retrain: n drawn by provenance level (the
-- adopted first, then the made here, then the committed; uniformly within a level).
local function choose(members, n, gen)
  local by = {}
  for _, level in ipairs(provenance.LEVELS) do by[level] = {} end
  for _, m in ipairs(members) do
    local l = by[m.provenance.level]
    l[#l + 1] = { dir = m.dir, level = m.provenance.level,
      how = m.provenance.level == "adopted" and set.level_text(m.provenance) or nil,
      model = type(m.kept.manifest.model_sha256) == "string" and
        sys.lstat(m.dir .. "/" .. record.MODEL) ~= nil,
      -- scored on task files that changed since: a retraining cannot give its scores
      stale = record.stale_task_files(m.kept.manifest) }
  end
  local out = {}
  for i = #provenance.LEVELS, 1, -1 do -- the least trusted first
    local level = provenance.LEVELS[i]
    for _, c in ipairs(draw(by[level], n - #out, gen)) do out[#out + 1] = c end
  end
  return out
end

-- The chance that s records drawn uniformly from n catch at least one of k forged ones:
-- 1 - C(n-k, s) / C(n, s).
function M.catch_probability(n, k, s)
  if k <= 0 or s <= 0 then return 0 end
  if s > n - k then return 1 end
  local miss = 1
  for i = 0, s - 1 do miss = miss * (n - k - i) / (n - i) end
  return 1 - miss
end

-- The fewest forged records among n that s draws catch with probability >= 0.95 (nil:
-- none, when s is 0).
function M.k_for_95(n, s)
  for k = 1, n do
    if M.catch_probability(n, k, s) >= 0.95 then return k end
  end
  return nil
end

-- Trains c's config again into a private folder (with its model when the record keeps
-- one); the first differing file's words, or nil when the same, or "interrupted".
local function retrain(c)
  local cfg = c.cfg
  cfg.threads = math.min(sys.cores(), 4)
  local tmp = fs.private_subdir("audit")
  -- a SIGINT counted before the engine's own handler was set stops it at its next step
  local ok, m = pcall(record.run, cfg, tmp, { ledger = false, keep_model = c.model,
    on_step = function() return proc.sigints() > 0 end })
  local first
  if ok and type(m) == "table" and (m.interrupted or m.stopped) or proc.sigints() > 0 then
    first = "interrupted"
  elseif not ok then
    first = "retraining failed: " .. (type(m) == "table" and tostring(m.message) or tostring(m))
  else
    local files = { table.unpack(record.HASHED) }
    local tf = record.TASKS_FILE
    if sys.lstat(c.dir .. "/" .. tf) or sys.lstat(tmp .. "/" .. tf) then
      files[#files + 1] = record.TASKS_FILE
    end
    if c.model then files[#files + 1] = record.MODEL end
    for _, f in ipairs(files) do
      if fs.read(tmp .. "/" .. f) ~= fs.read(c.dir .. "/" .. f) then first = f break end
    end
  end
  fs.remove_tree(tmp)
  return first
end

-- What the audit finds for chosen run c (shown: its path as printed): "bad", "stale",
-- "same" or "interrupted", and the line that says it.
local function outcome(c, shown)
  if c.refused then
    return "bad", string.format("DIFFERS  %s: the record is not read (%s)", shown,
      base.printable(c.refused))
  elseif c.stale and #c.stale > 0 then
    return "stale", string.format("STALE    %s: %s: its retraining could not give its task " ..
      "scores; not retrained (`bin/repro run` trains it again)", shown, record.stale_text(c.stale))
  elseif c.unreadable then
    return "bad", string.format("UNREADABLE %s: %s", shown, base.printable(c.unreadable))
  end
  local state = record.verify(c.dir)
  if state ~= "verified" then
    return "bad", string.format("DIFFERS  %s: the record is not verified (%s): bin/repro " ..
      "verify says why", shown, state)
  end
  local first = retrain(c)
  if first == "interrupted" then
    return first, string.format("interrupted %s: not compared (the audit was stopped)", shown)
  elseif first then
    return "bad", string.format("DIFFERS  %s: %s", shown, first:find(" ", 1, true) and first or
      (first .. " differs from the retrained run's"))
  end
  return "same", string.format("same     %s", shown)
end

-- The three longest runs of `runs` by their time `key`, for a refusal: "<dir> (<prefix><time>,
-- <steps> steps); ...".
local function longest(runs, key, prefix)
  table.sort(runs, function(a, b) return a[key] > b[key] end)
  local t = {}
  for k = 1, math.min(3, #runs) do
    t[k] = string.format("%s (%s%s, %d steps)", fs.shown(runs[k].dir), prefix,
      cost.fmt(runs[k][key]), runs[k].cfg.iters)
  end
  return base.printable(table.concat(t, "; "))
end

function M.main(args)
  local o = parse(args)
  if o.help then return 0 end
  local st = sys.lstat(o.out_root)
  if not st or st.type ~= "dir" then
    user_error("repro audit: filesystem: %s is not a directory", o.out_root)
  end
  local seed_words, err = "given", nil
  if not o.seed then
    o.seed, err = sys.random_seed()
    seed_words = "from the system's random source"
  end
  if not o.seed then
    user_error("repro audit: no random seed from the system (%s): give one with --seed S", err)
  end
  if #o.studies == 0 then
    study_records.each_study(o.out_root, function(_, _, n) o.studies[#o.studies + 1] = n end)
  end
  local chosen, odds = {}, {}
  for si, name in ipairs(o.studies) do
    local sdir = o.out_root .. "/" .. name
    fs.check_path(sdir, "repro audit", o.out_root) -- from the records root, not $PWD
    local s = sys.lstat(sdir)
    if not s or s.type ~= "dir" then
      user_error("repro audit: %s: no such study folder", base.printable(fs.shown(sdir)))
    end
    local d = study_records.design_of(sdir)
    if not d then
      user_error("repro audit: %s: %s", base.printable(fs.shown(sdir)), set.OUTSIDE_WHY.no_study)
    end
    local sr = study_records.read(sdir, d)
    for _, x in ipairs(sr.outside) do io.write("audit: ", set.outside_text(name, x), "\n") end
    for _, b in ipairs(sr.refused) do
      chosen[#chosen + 1] = { dir = b.dir, refused = b.state .. ": " .. tostring(b.why) }
    end
    io.write(string.format("audit: %s: %s\n", base.printable(name), set.count_text(sr.counts)))
    local gen = pcg.stream(o.seed, "stats", si - 1)
    local picked = choose(sr.records, o.sample, gen)
    for _, c in ipairs(picked) do
      if #c.stale == 0 then c.cfg, c.unreadable = config_of(c.dir) end
      chosen[#chosen + 1] = c
    end
    local n, k95 = #sr.records, M.k_for_95(#sr.records, #picked)
    odds[#odds + 1] = string.format("audit: %s: %d of %d records drawn: a uniform draw of this " ..
      "size catches 1 forged record among them with probability %.3f%s\n", base.printable(name),
      #picked, n, M.catch_probability(n, 1, #picked), k95 and
      string.format(", and one of %d forged with probability 95 %%", k95) or "")
  end
  io.write(table.concat(odds))
  -- the chosen runs, each with its time of `kind` ("at least": the floor, or "predicted")
  local function list(kind)
    io.write(string.format("audit: %d run%s chosen (seed %d, %s: --seed %d repeats this " ..
      "draw; %d per study, adopted records first, then those made here):\n", #chosen,
      #chosen == 1 and "" or "s", o.seed, seed_words, o.seed, o.sample))
    for _, c in ipairs(chosen) do
      local t = kind == "predicted" and c.predicted or c.floor
      io.write(string.format("  %s  (%s%s)\n", base.printable(fs.shown(c.dir)),
        t and (kind .. " " .. cost.fmt(t)) or (c.refused and "not read" or
          (c.stale and #c.stale > 0) and "stale: not retrained" or "config.json unreadable"),
        c.how and (", " .. c.how) or ""))
    end
    io.flush()
  end
  -- a floor first, before any calibration trains a forged shape: each run's FLOPs at this
  -- machine's FMA peak, which no run beats; the FLOPs counted are only those of the
  -- blocks' weight products (M.floor_flops), so the floor is below any real time
  local threads = math.min(sys.cores(), 4)
  local readable, peak, floor = {}, nil, 0
  for _, c in ipairs(chosen) do
    if c.cfg then
      peak = peak or engine.fma_peak(threads, cost.PEAK_S)
      c.floor = M.floor_flops(c.cfg) / (peak * 1e9)
      floor = floor + c.floor
      readable[#readable + 1] = c
    end
  end
  if floor > o.max_time then
    list("at least")
    user_error("repro audit: the chosen runs need at least %s (their FLOPs at this machine's " ..
      "FMA peak), above the bound of %s (longest: %s); nothing was trained: --max-time S " ..
      "raises the bound", cost.fmt(floor), cost.fmt(o.max_time),
      longest(readable, "floor", "at least "))
  end
  -- the predicted time: each readable config's shape through the cost model
  local total = 0
  for _, c in ipairs(readable) do
    local pred, err = cost.predict({ { cfg = c.cfg } }, 1, threads)
    if not pred then
      user_error("repro audit: no predicted time for %s (%s): nothing was trained",
        base.printable(fs.shown(c.dir)), base.printable(tostring(err)))
    end
    c.predicted = pred
    total = total + pred
  end
  list("predicted")
  io.write(string.format("audit: predicted time: %s on %d thread%s (from each config's shape " ..
    "through this machine's cost model)\n", cost.fmt(total), threads, threads == 1 and "" or "s"))
  io.flush()
  if total > o.max_time then
    user_error("repro audit: the predicted time %s is above the bound of %s (longest: %s); " ..
      "nothing was trained: --max-time S raises the bound", cost.fmt(total),
      cost.fmt(o.max_time), longest(readable, "predicted", ""))
  end
  proc.trap_signals()
  local count, done, interrupted = { bad = 0, stale = 0, same = 0 }, 0, false
  for _, c in ipairs(chosen) do
    if proc.sigints() > 0 then interrupted = true break end
    local kind, line = outcome(c, base.printable(fs.shown(c.dir)))
    print(line)
    if kind == "interrupted" then interrupted = true break end
    count[kind] = count[kind] + 1
    done = done + 1
  end
  local bad, stale = count.bad, count.stale
  if interrupted then
    print(string.format("audit: interrupted after %d of %d run%s: %d the same, %d differ or " ..
      "cannot be read; the others were not checked", done, #chosen, #chosen == 1 and "" or "s",
      done - bad - stale, bad + stale))
    return 130
  end
  print(string.format("audit: %d run%s retrained: %d the same, %d differ%s%s",
    #chosen - stale, #chosen - stale == 1 and "" or "s", #chosen - stale - bad, bad, bad > 0 and
    " (a record that differs from its retraining, or cannot be read, is corrupt or forged)" or
    "", stale > 0 and string.format("; %d stale, not retrained", stale) or ""))
  return (bad > 0 or stale > 0) and 1 or 0
end

return M
