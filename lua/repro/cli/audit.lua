-- `bin/repro audit [STUDY ...] --sample N [--seed S] [--out-root DIR]`: the check a
-- deterministic suite can make of its records.  Checksums (manifest.json, record.verify)
-- detect corruption, not forgery: anyone can edit a metric and recompute them with the
-- suite's own functions.  A forged record is caught by training it again: for each study
-- (default: every study folder under the records root, $REPRO_EXPERIMENTS or
-- <root>/experiments), N of its verified records are chosen by PCG32 from the seed
-- (default 1; pcg stream "stats" of the seed, a draw without replacement over the
-- records sorted by path), the chosen runs and the predicted time (the sum of the
-- records' own manifests' wall_s, else "unknown") are printed first, each run is trained
-- again from its config.json into a private temporary folder (fs.private_subdir), and its
-- config.json, log.csv and metrics.json are compared byte for byte with the record's.
-- Exit status 1 naming the run and the first differing file on any difference (or on a
-- record that is not verified among those chosen); 0 when every chosen run is the same.
local host = require "repro.host"
local sys = require "repro.sys"
local pcg = require "pcg"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local base = require "repro.core.base"
local record = require "repro.record"
local verify = require "repro.record.verify"

local M = {}
local user_error = base.user_error
local USAGE = "usage: bin/repro audit [STUDY ...] --sample N [--seed S] [--out-root DIR]"

local function parse(args)
  local o = { studies = {}, seed = 1 }
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

function M.main(args)
  local o = parse(args)
  local st = sys.lstat(o.out_root)
  if not st or st.type ~= "dir" then
    user_error("repro audit: filesystem: %s is not a directory", o.out_root)
  end
  if #o.studies == 0 then
    for _, n in ipairs(sys.listdir(o.out_root) or {}) do
      local s = sys.lstat(o.out_root .. "/" .. n)
      if base.valid_name(n) and s and s.type == "dir" then o.studies[#o.studies + 1] = n end
    end
  end
  local chosen, known_s, unknown = {}, 0, 0
  for si, name in ipairs(o.studies) do
    local sdir = o.out_root .. "/" .. name
    fs.check_path(sdir, "repro audit")
    local s = sys.lstat(sdir)
    if not s or s.type ~= "dir" then user_error("repro audit: %s: no such study folder", sdir) end
    local records = verify.records(sdir)
    local gen = pcg.stream(o.seed, "stats", si - 1)
    for _, r in ipairs(draw(records, o.sample, gen)) do
      local man = json.decode(fs.read(r .. "/manifest.json") or "null")
      local wall = type(man) == "table" and tonumber(man.wall_s)
      if wall then known_s = known_s + wall else unknown = unknown + 1 end
      chosen[#chosen + 1] = { dir = r, wall = wall }
    end
  end
  io.write(string.format("audit: %d run%s chosen (seed %d, %d per study):\n", #chosen,
    #chosen == 1 and "" or "s", o.seed, o.sample))
  for _, c in ipairs(chosen) do
    io.write(string.format("  %s  (%s)\n", base.printable(fs.shown(c.dir)),
      c.wall and string.format("%.0f s when recorded", c.wall) or "time unknown"))
  end
  io.write(string.format("audit: predicted time: %s\n", unknown == #chosen and #chosen > 0 and
    "unknown (no manifest records wall_s)" or string.format("%.0f s%s", known_s,
    unknown > 0 and string.format(" plus %d run%s of unknown time", unknown,
    unknown == 1 and "" or "s") or "")))
  io.flush()
  local bad = 0
  for _, c in ipairs(chosen) do
    local state = record.verify(c.dir)
    local shown = base.printable(fs.shown(c.dir))
    if state ~= "verified" then
      bad = bad + 1
      print(string.format("DIFFERS  %s: the record is not verified (%s): bin/repro verify says why",
        shown, state))
    else
      local cfg = record.resolve(json.decode(assert(fs.read(c.dir .. "/config.json"))))
      cfg.threads = math.min(sys.cores(), 4)
      local tmp = fs.private_subdir("audit")
      local ok, err = pcall(record.run, cfg, tmp, {})
      local first
      if not ok then
        first = "retraining failed: " .. (type(err) == "table" and tostring(err.message) or tostring(err))
      else
        for _, f in ipairs(record.HASHED) do
          if fs.read(tmp .. "/" .. f) ~= fs.read(c.dir .. "/" .. f) then first = f break end
        end
      end
      fs.remove_tree(tmp)
      if first then
        bad = bad + 1
        print(string.format("DIFFERS  %s: %s", shown, first:find(" ", 1, true) and first or
          (first .. " differs from the retrained run's")))
      else
        print(string.format("same     %s", shown))
      end
    end
  end
  print(string.format("audit: %d run%s retrained: %d the same, %d differ%s", #chosen,
    #chosen == 1 and "" or "s", #chosen - bad, bad, bad > 0 and
    " (a record that differs from its retraining is corrupt or forged)" or ""))
  return bad > 0 and 1 or 0
end

return M
