-- Run records (DESIGN.md): DIR/config.json, manifest.json, log.csv, metrics.json.
--
-- A run is done when metrics.json exists, config.json holds exactly the requested
-- config, and metrics.config_sha256 is the SHA-256 of that config.json.  metrics.json
-- is written last, each file atomically, so a killed run never looks done.  While a
-- run trains, its checkpoint is DIR/checkpoint-<first 12 hex of the config hash>.rptf,
-- so a changed config never resumes from another config's state.  config.json leaves
-- out `threads` (results do not depend on it; the manifest records it).  Timings go to
-- manifest.json only, so config.json, log.csv and metrics.json are byte-identical for
-- the same build, config and seed.
local engine = require "engine"
local json = require "repro.json"
local fs = require "repro.fs"
local host = require "repro.host"

local M = {}

-- Fields of engine.train's result that are not results: timings go to the manifest,
-- run state is implied by the record being done.
local NOT_RESULTS = { tokens_per_s = true, eval_tokens_per_s = true, wall_s = true,
  interrupted = true, stopped = true, resumed_from = true }

-- Defaults overlaid with overrides (unknown keys are refused by engine.check).
function M.resolve(overrides)
  local cfg = engine.defaults()
  for k, v in pairs(overrides or {}) do cfg[k] = v end
  return cfg
end

-- Omittable keys at their default (engine.canonical) are left out, so configs written
-- before those keys existed keep their bytes and hashes.
function M.config_text(cfg)
  local c = {}
  for k, v in pairs(engine.canonical(cfg)) do
    if k ~= "threads" then c[k] = v end
  end
  return json.pretty(c)
end

-- "done", "changed" (a record of another config), "partial" (a checkpoint of this
-- config) or "missing".
function M.status(dir, cfg)
  local text = M.config_text(cfg)
  local have = fs.read(dir .. "/config.json")
  local metrics = fs.read(dir .. "/metrics.json")
  if have and have ~= text then return "changed" end
  if have and metrics then
    local ok, m = pcall(json.decode, metrics)
    if ok and type(m) == "table" and m.config_sha256 == fs.sha256(dir .. "/config.json") then
      return "done"
    end
  end
  if have and fs.exists(M.checkpoint_path(dir, fs.sha256(dir .. "/config.json"))) then
    return "partial"
  end
  return "missing"
end

function M.checkpoint_path(dir, sha)
  return string.format("%s/checkpoint-%s.rptf", dir, (sha or ""):sub(1, 12))
end

local function num(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  return string.format("%.9g", x)
end

-- rows: tables keyed by column name; an absent value is an empty field.
function M.log_csv(rows, columns)
  local out = { table.concat(columns, ",") }
  for _, r in ipairs(rows) do
    local f = {}
    for i, k in ipairs(columns) do
      local v = r[k]
      f[i] = v == nil and "" or (k == "step" and string.format("%d", v) or num(v))
    end
    out[#out + 1] = table.concat(f, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

local function cpu_model()
  for line in io.lines("/proc/cpuinfo") do
    local m = line:match("^model name%s*:%s*(.-)%s*$")
    if m then return m end
  end
  return "unknown"
end

function M.git_info()
  local root = fs.quote(host.root)
  local commit = fs.capture("git -C " .. root .. " rev-parse HEAD") or "unknown"
  local status = fs.capture("git -C " .. root .. " status --porcelain --untracked-files=no -- . "
    .. "':(exclude)experiments' ':(exclude)paper' ':(exclude)plots/data'")
  return commit, status == nil and "unknown" or status ~= ""
end

function M.data_path(cfg)
  return cfg.data:sub(1, 1) == "/" and cfg.data or (host.root .. "/" .. cfg.data)
end

-- The result fields of engine.train's metrics, NaN inside arrays written as null.
function M.results(metrics)
  local function clean(v)
    if type(v) == "number" and v ~= v then return json.null end
    if type(v) ~= "table" then return v end
    local t = {}
    for k, x in pairs(v) do t[k] = clean(x) end
    return t
  end
  local out = {}
  for k, v in pairs(metrics) do
    if not NOT_RESULTS[k] then out[k] = clean(v) end
  end
  return out
end

local function utc() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- Trains cfg and writes its record into dir.  opts: threads, checkpoint_every,
-- on_step(step, row) for progress.  Returns the engine's metrics table; the record is
-- complete only when the run finished (not interrupted or stopped).
function M.run(cfg, dir, opts)
  opts = opts or {}
  engine.check(cfg)
  fs.mkdir_p(dir)
  os.remove(dir .. "/metrics.json") -- from here on the record is not done
  local text = M.config_text(cfg)
  if fs.read(dir .. "/config.json") ~= text then
    fs.write_atomic(dir .. "/config.json", text)
  end
  local sha = fs.sha256(dir .. "/config.json")
  local ckpt = M.checkpoint_path(dir, sha)
  local rows = {}
  local start, t0 = utc(), host.now()
  local run_cfg = {}
  for k, v in pairs(cfg) do run_cfg[k] = v end
  run_cfg.threads = opts.threads or cfg.threads
  local metrics = engine.train(run_cfg, {
    checkpoint = ckpt, checkpoint_every = opts.checkpoint_every or 0, resume = true,
    on_step = function(step, row)
      rows[#rows + 1] = row
      if opts.on_step then return opts.on_step(step, row) end
    end,
  })
  if metrics.interrupted or metrics.stopped then return metrics end

  fs.write_atomic(dir .. "/log.csv", M.log_csv(rows, engine.log_columns(cfg)))
  local commit, dirty = M.git_info()
  fs.write_atomic(dir .. "/manifest.json", json.pretty({
    repro_version = host.version, git_commit = commit, git_dirty = dirty,
    compiler = host.compiler, cflags = host.cflags, lua = host.lua, gsl = host.gsl,
    corpus = cfg.data, corpus_sha256 = fs.sha256(M.data_path(cfg)) or "unreadable",
    host = host.hostname(), cpu = cpu_model(), threads = run_cfg.threads ~= 0
      and run_cfg.threads or tonumber(fs.capture("nproc")),
    start_utc = start, end_utc = utc(), wall_s = host.now() - t0,
    train_wall_s = metrics.wall_s, tokens_per_s = metrics.tokens_per_s,
    eval_tokens_per_s = metrics.eval_tokens_per_s,
    resumed_from_step = metrics.resumed_from, peak_rss_bytes = host.peak_rss_bytes(),
  }))
  local out = M.results(metrics)
  out.config_sha256 = sha
  fs.write_atomic(dir .. "/metrics.json", json.pretty(out))
  os.remove(ckpt)
  return metrics
end

return M
