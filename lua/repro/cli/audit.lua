-- `bin/repro audit [STUDY ...] --sample N [--seed S] [--max-time S] [--out-root DIR]`:
-- checksums detect corruption, not forgery, so the audit trains N records per study again
-- and compares config.json, log.csv and metrics.json (and tasks.csv) byte for byte.  The
-- draw's seed comes by default from /dev/urandom (printed; --seed repeats it); copied and
-- resumed records are drawn first.  Its time is predicted from each config's shape
-- (lua/repro/plan/cost.lua), never from a manifest, and a total above --max-time (default
-- M.MAX_TIME_S) is refused before anything trains.  Exit status 0 when every chosen run is
-- the same, 1 on a difference or an unverified or unreadable record, 130 when interrupted.
local host = require "repro.host"
local sys = require "repro.sys"
local pcg = require "pcg"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local base = require "repro.core.base"
local record = require "repro.record"
local verify = require "repro.record.verify"
local cost = require "repro.plan.cost"
local proc = require "repro.proc"
local engine = require "engine"

local M = {}
local user_error = base.user_error
local USAGE = "usage: bin/repro audit [STUDY ...] --sample N [--seed S] [--max-time S] " ..
  "[--out-root DIR]"

-- The predicted time above which an audit is refused unless --max-time raises it.
M.MAX_TIME_S = 3600

local function parse(args)
  local o = { studies = {}, max_time = M.MAX_TIME_S }
  local i = 1
  local function int(flag)
    i = i + 1
    local v = math.tointeger(tonumber(args[i] or ""))
    if not v or v < (flag == "--sample" and 1 or 0) then
      user_error("repro audit: %s needs a %s integer, got %s (%s)", flag,
        flag == "--sample" and "positive" or "non-negative", base.printable(args[i] or "nothing"),
        USAGE)
    end
    return v
  end
  while i <= #args do
    local a = args[i]
    if a == "--sample" then o.sample = int(a)
    elseif a == "--seed" then o.seed = int(a)
    elseif a == "--max-time" then
      i = i + 1
      local v = tonumber(args[i] or "")
      if not v or v ~= v or v <= 0 or v == math.huge then
        user_error("repro audit: --max-time needs a positive number of seconds, got %s (%s)",
          base.printable(args[i] or "nothing"), USAGE)
      end
      o.max_time = v
    elseif a == "--out-root" then
      i = i + 1
      o.out_root = args[i] or user_error("repro audit: --out-root needs a directory")
    elseif a:match("^%-") then user_error("repro audit: unknown option %s (%s)", a, USAGE)
    else
      local name = a:match("([^/]+)%.lua$") or a
      if not base.valid_name(name) then
        user_error("repro audit: %s is not a study name (%s)", base.printable(a), base.NAME_RULE)
      end
      o.studies[#o.studies + 1] = name
    end
    i = i + 1
  end
  if not o.sample then user_error("repro audit: --sample N is required (%s)", USAGE) end
  local env = os.getenv("REPRO_EXPERIMENTS")
  o.out_root = (o.out_root or ((env and env ~= "") and env or (host.root .. "/experiments")))
    :gsub("/+$", "")
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

-- A record's manifest (decoded) or nil.
local function manifest_of(dir)
  local ok, man = pcall(json.decode, fs.read(dir .. "/manifest.json") or "")
  return ok and type(man) == "table" and man or nil
end

-- The record's config (resolved), or nil and why it cannot be read.
local function config_of(dir)
  local text, err = fs.read(dir .. "/config.json")
  if not text then return nil, "config.json cannot be read: " .. tostring(err) end
  local ok, c = pcall(json.decode, text)
  if not ok or type(c) ~= "table" then return nil, "config.json is not a JSON object" end
  local rok, cfg = pcall(record.resolve, c)
  if not rok then
    return nil, "config.json is not a config: " .. (type(cfg) == "table" and
      tostring(cfg.message) or tostring(cfg))
  end
  local cok, cerr = pcall(engine.check, cfg)
  if not cok then return nil, "config.json is not a config: " .. tostring(cerr) end
  return cfg
end

-- The study's records to draw from, adopted ones (record.adopted) first: n of them are
-- drawn from the adopted, the rest from the others.
local function choose(records, n, gen)
  local adopted, own = {}, {}
  for _, r in ipairs(records) do
    local how = record.adopted(manifest_of(r))
    if how then adopted[#adopted + 1] = { dir = r, how = how } else own[#own + 1] = { dir = r } end
  end
  local out = draw(adopted, n, gen)
  for _, c in ipairs(draw(own, n - #out, gen)) do out[#out + 1] = c end
  return out
end

-- Trains c's config again into a private folder; the first differing file's words, or
-- nil when the same, or "interrupted".
local function retrain(c)
  local cfg = c.cfg
  cfg.threads = math.min(sys.cores(), 4)
  local tmp = fs.private_subdir("audit")
  -- a SIGINT counted before the engine's own handler was set stops it at its next step
  local ok, m = pcall(record.run, cfg, tmp, { ledger = false,
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
    for _, f in ipairs(files) do
      if fs.read(tmp .. "/" .. f) ~= fs.read(c.dir .. "/" .. f) then first = f break end
    end
  end
  fs.remove_tree(tmp)
  return first
end

function M.main(args)
  local o = parse(args)
  local st = sys.lstat(o.out_root)
  if not st or st.type ~= "dir" then
    user_error("repro audit: filesystem: %s is not a directory", o.out_root)
  end
  local seed_words = "given"
  if not o.seed then
    local err
    o.seed, err = sys.random_seed()
    if not o.seed then
      user_error("repro audit: no random seed from the system (%s): give one with --seed S", err)
    end
    seed_words = "from the system's random source"
  end
  if #o.studies == 0 then
    for _, n in ipairs(sys.listdir(o.out_root) or {}) do
      local s = sys.lstat(o.out_root .. "/" .. n)
      if base.valid_name(n) and s and s.type == "dir" then o.studies[#o.studies + 1] = n end
    end
  end
  local chosen = {}
  for si, name in ipairs(o.studies) do
    local sdir = o.out_root .. "/" .. name
    fs.check_path(sdir, "repro audit")
    local s = sys.lstat(sdir)
    if not s or s.type ~= "dir" then user_error("repro audit: %s: no such study folder", sdir) end
    local gen = pcg.stream(o.seed, "stats", si - 1)
    for _, c in ipairs(choose(verify.records(sdir), o.sample, gen)) do
      c.cfg, c.unreadable = config_of(c.dir)
      chosen[#chosen + 1] = c
    end
  end
  -- the chosen runs, each with its time of `kind` ("at least": the floor, or "predicted")
  local function list(kind)
    io.write(string.format("audit: %d run%s chosen (seed %d, %s: --seed %d repeats this " ..
      "draw; %d per study, copied and resumed records first):\n", #chosen,
      #chosen == 1 and "" or "s", o.seed, seed_words, o.seed, o.sample))
    for _, c in ipairs(chosen) do
      local t = kind == "predicted" and c.predicted or c.floor
      io.write(string.format("  %s  (%s%s)\n", base.printable(fs.shown(c.dir)),
        t and (kind .. " " .. cost.fmt(t)) or "config.json unreadable",
        c.how and (", " .. c.how) or ""))
    end
    io.flush()
  end
  -- a floor first, before any calibration trains a forged shape: each run's FLOPs at this
  -- machine's FMA peak, which no run beats; the FLOPs counted are only those of the
  -- blocks' weight products (M.floor_flops), so the floor is below any real time
  local threads = math.min(sys.cores(), 4)
  local peak, floor, floors = nil, 0, {}
  for _, c in ipairs(chosen) do
    if c.cfg then
      peak = peak or engine.fma_peak(threads, cost.PEAK_S)
      c.floor = M.floor_flops(c.cfg) / (peak * 1e9)
      floor = floor + c.floor
      floors[#floors + 1] = c
    end
  end
  if floor > o.max_time then
    list("at least")
    table.sort(floors, function(a, b) return a.floor > b.floor end)
    local t = {}
    for k = 1, math.min(3, #floors) do
      t[k] = string.format("%s (at least %s, %d steps)", fs.shown(floors[k].dir),
        cost.fmt(floors[k].floor), floors[k].cfg.iters)
    end
    user_error("repro audit: the chosen runs need at least %s (their FLOPs at this machine's " ..
      "FMA peak), above the bound of %s (longest: %s); nothing was trained: --max-time S " ..
      "raises the bound", cost.fmt(floor), cost.fmt(o.max_time),
      base.printable(table.concat(t, "; ")))
  end
  -- the predicted time: each readable config's shape through the cost model
  local total, longest = 0, {}
  for _, c in ipairs(chosen) do
    if c.cfg then
      local pred, err = cost.predict({ { cfg = c.cfg } }, 1, threads)
      if not pred then
        user_error("repro audit: no predicted time for %s (%s): nothing was trained",
          base.printable(fs.shown(c.dir)), base.printable(tostring(err)))
      end
      c.predicted = pred
      total = total + pred
      longest[#longest + 1] = c
    end
  end
  list("predicted")
  io.write(string.format("audit: predicted time: %s on %d thread%s (from each config's shape " ..
    "through this machine's cost model)\n", cost.fmt(total), threads, threads == 1 and "" or "s"))
  io.flush()
  if total > o.max_time then
    table.sort(longest, function(a, b) return a.predicted > b.predicted end)
    local t = {}
    for k = 1, math.min(3, #longest) do
      t[k] = string.format("%s (%s, %d steps)", fs.shown(longest[k].dir),
        cost.fmt(longest[k].predicted), longest[k].cfg.iters)
    end
    user_error("repro audit: the predicted time %s is above the bound of %s (longest: %s); " ..
      "nothing was trained: --max-time S raises the bound", cost.fmt(total),
      cost.fmt(o.max_time), base.printable(table.concat(t, "; ")))
  end
  proc.trap_signals()
  local bad, done, interrupted = 0, 0, false
  for _, c in ipairs(chosen) do
    local state = record.verify(c.dir)
    local shown = base.printable(fs.shown(c.dir))
    if proc.sigints() > 0 then interrupted = true break end
    if c.unreadable then
      bad = bad + 1
      print(string.format("UNREADABLE %s: %s", shown, base.printable(c.unreadable)))
    elseif state ~= "verified" then
      bad = bad + 1
      print(string.format("DIFFERS  %s: the record is not verified (%s): bin/repro verify says why",
        shown, state))
    else
      local first = retrain(c)
      if first == "interrupted" then
        print(string.format("interrupted %s: not compared (the audit was stopped)", shown))
        interrupted = true
        break
      elseif first then
        bad = bad + 1
        print(string.format("DIFFERS  %s: %s", shown, first:find(" ", 1, true) and first or
          (first .. " differs from the retrained run's")))
      else
        print(string.format("same     %s", shown))
      end
    end
    done = done + 1
  end
  if interrupted then
    print(string.format("audit: interrupted after %d of %d run%s: %d the same, %d differ or " ..
      "cannot be read; the others were not checked", done, #chosen, #chosen == 1 and "" or "s",
      done - bad, bad))
    return 130
  end
  print(string.format("audit: %d run%s retrained: %d the same, %d differ%s", #chosen,
    #chosen == 1 and "" or "s", #chosen - bad, bad, bad > 0 and
    " (a record that differs from its retraining, or cannot be read, is corrupt or forged)" or ""))
  return bad > 0 and 1 or 0
end

return M
