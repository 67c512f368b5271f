-- Generated output does not depend on the order `pairs` visits a table (a class of fault:
-- Lua 5.4 seeds its string hashes per process, so a loop over a table's keys that writes
-- what it visits wrote the H1a macros of numbers.tex in one order on one run and in
-- another on the next; CI's test_user_study caught it as "make paper changes
-- paper/numbers.tex").  The paper's report is generated twice from the committed
-- summaries, with `pairs` visiting keys in ascending and in descending order of their
-- text (any order Lua picks sits between); every file it writes must be byte-identical.
-- The same for the analyses: each committed study's summary.json, recomputed from its
-- records with `pairs` in descending order, is the committed one byte for byte (the
-- ascending order and Lua's own are test_ledger's and make paper's).  The first task
-- study and its pilot are left out for time (8 s each; tasks_v2 runs the same code).
-- Last, messages: an input with several faults of one kind (a study file's unknown
-- fields, a task item's keys, JSON keys, a record's metrics, a manifest's fields) gets
-- the same message under both orders.
local check = require "check"
local fs = require "repro.core.fs"
local report = require "repro.report"

local t = check.new("test_pairs_order")
local natural = pairs

-- `pairs` over `tbl` in the order `less` gives its keys (a metatable's __pairs is kept).
local function ordered(less)
  return function(tbl)
    local mt = getmetatable(tbl)
    if mt and mt.__pairs then return natural(tbl) end
    local keys = {}
    for k in next, tbl do keys[#keys + 1] = k end
    table.sort(keys, less)
    local i = 0
    return function()
      i = i + 1
      local k = keys[i]
      if k == nil then return nil end
      return k, tbl[k]
    end, tbl, nil
  end
end
local function key_text(k) return type(k) .. ":" .. tostring(k) end
local ORDERS = {
  { "ascending keys", ordered(function(a, b) return key_text(a) < key_text(b) end) },
  { "descending keys", ordered(function(a, b) return key_text(a) > key_text(b) end) },
}

-- Every file under `dir`: relative path -> bytes.
local function files_of(dir)
  local out = {}
  local p = io.popen("cd " .. fs.quote(dir) .. " && find . -type f | sort")
  for f in p:lines() do out[f] = fs.read(dir .. "/" .. f) end
  p:close()
  return out
end

local root = check.tmpdir()
local outputs = {}
for i, o in ipairs(ORDERS) do
  local dir = root .. "/order" .. i
  pairs = o[2]
  local ok, err = pcall(report.generate, { experiments = "experiments",
    paper = dir .. "/paper", plots_data = dir .. "/plots", manifest = "paper/paper.lua",
    figures = false, trust_summaries = true, gp_dir = "plots" })
  pairs = natural
  t:ok(ok, "the report under " .. o[1] .. ": " .. tostring(err))
  outputs[i] = files_of(dir)
end
local n = 0
for f, text in natural(outputs[1]) do
  n = n + 1
  for i = 2, #ORDERS do
    t:ok(outputs[i][f] == text, f .. ": the same bytes under " .. ORDERS[i][1] ..
      " as under " .. ORDERS[1][1])
  end
end
for i = 2, #ORDERS do
  for f in natural(outputs[i]) do
    t:ok(outputs[1][f] ~= nil, f .. " is written under " .. ORDERS[i][1] .. " only")
  end
end
t:ok(n >= 50, "the report wrote its tables, numbers and plot data: " .. n .. " files")

local data = require "repro.report.data"
local json = require "repro.core.json"
local SKIP = { tasks = true, tasks_pilot = true }
local studies = 0
for _, name in ipairs(data.list_studies("experiments")) do
  if not SKIP[name] then
    local text = fs.read("experiments/" .. name .. "/summary.json")
    pairs = ORDERS[2][2]
    local ok, err = pcall(data.check_summary, "experiments", name, text, json.decode(text))
    pairs = natural
    t:ok(ok, name .. ": its summary recomputed under " .. ORDERS[2][1] ..
      " is the committed one: " .. tostring(err))
    studies = studies + 1
  end
end
t:ok(studies >= 30, "the committed studies recomputed: " .. studies)

-- Messages: when an input has several faults of one kind, the message names the same ones
-- in the same order under every order of `pairs` (which fault a user is told of first
-- must not change from one run to the next).
local json_ = require "repro.core.json"
local record = require "repro.record"
local study = require "repro.study"
local items = require "repro.tasks.items"
local corpus = root .. "/corpus.txt"
check.write(corpus, string.rep("the cat sat on the mat. a dog ran far away home.\n", 400))
local study_file = root .. "/faults.lua"
check.write(study_file, table.concat({
  'return {',
  '  name = "faults",',
  '  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4,',
  '           iters = 8, warmup = 2, data = "' .. corpus .. '" },',
  '  variants = { { name = "none", embed_norm = "none" },',
  '    { name = "layernorm", embed_norm = "layernorm" } },',
  '  seeds = { count = 2, first = 1, zeta = 1, alpha_ = 2, mid = 3 },',
  '  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",',
  '    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm",',
  '    resamples = 1000, test = "t", zz_one = 1, aa_two = 2, mm_three = 3, qq_four = 4,',
  '    tasks = { suite = "core", shots = { 0 }, yy = 1, bb = 2 } },',
  '}' }, "\n") .. "\n")
-- a record whose metrics.json holds several strings where numbers belong
local rec = root .. "/record"
fs.mkdir_p(rec)
os.execute(string.format("cp %s/*.json %s/log.csv %s", fs.quote("experiments/final/none/seed-1"),
  fs.quote("experiments/final/none/seed-1"), fs.quote(rec)))
local m = json_.decode(fs.read(rec .. "/metrics.json"))
m.val_loss, m.steps_per_s, m.final_grad_norm, m.embed_norm = "a", "b", "c", "d"
check.write(rec .. "/metrics.json", json_.pretty(m))
-- (an old record without checksums: its fields are all verify can check)
local man = json_.decode(fs.read(rec .. "/manifest.json"))
man.sha256, man.manifest_sha256 = nil, nil
check.write(rec .. "/manifest.json", json_.pretty(man))
local CASES = {
  { "a study file with unknown fields in three tables", function() return study.load(study_file) end },
  { "a task item with unknown keys", function()
    return items.problem({ context = "a", choices = { "b", "c" }, answer = 0, zkey = 1,
      akey = 2, mkey = 3 }) end },
  { "a JSON object with keys that are not strings", function()
    return json_.encode({ a = 1, [true] = 2, [false] = 3, [2.5] = 4 }) end },
  { "a record whose metrics hold strings", function()
    local v, why = record.verify(rec)
    return v .. ": " .. table.concat(why or {}, "; ") end },
  { "a paper manifest's names with unknown fields", function()
    return report.check_names("m.lua", { keys = {}, zz = 1, aa = 2, mm = 3 }) end },
}
for _, c in ipairs(CASES) do
  local said = {}
  for i, o in ipairs(ORDERS) do
    pairs = o[2]
    local ok, r = pcall(c[2])
    pairs = natural
    said[i] = (ok and "returned " or "raised ") .. (type(r) == "table" and
      json_.encode(r) or tostring(r))
  end
  t:ok(said[1]:find("raised", 1, true) or said[1]:find("unknown", 1, true) or
    said[1]:find("string", 1, true), c[1] .. ": a fault is reported: " .. said[1])
  t:eq(said[2], said[1], c[1] .. ": the same message under " .. ORDERS[2][1] .. " and " ..
    ORDERS[1][1])
end
t:done()
