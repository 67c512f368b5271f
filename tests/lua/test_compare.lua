-- `bin/repro compare` and `bin/repro export` on the committed records of final and
-- scale (read only) and on a copied record in a temporary root: the columns are the
-- config keys that differ and the chosen metrics; every value of the export equals the
-- record's (config.json, metrics.json, log.csv); compare's means and sds equal the
-- summary's per-variant statistics; a record failing its checksums is skipped with a
-- warning; bad flags and targets are refused naming them.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local engine = require "engine"
local analysis = require "repro.analysis"
local t = check.new("test_compare")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local root = os.getenv("PWD") .. "/experiments"
local dir = check.tmpdir()

local function run(args)
  return check.run("REPRO_EXPERIMENTS=" .. fs.quote(root) .. " " .. repro .. " " .. args)
end

-- CSV text (no quoted fields in these records) -> header, rows as {column -> text}.
local function parse_csv(text)
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  local header = {}
  for f in ((lines[1] or "") .. ","):gmatch("([^,]*),") do header[#header + 1] = f end
  local rows = {}
  for i = 2, #lines do
    local r, j = {}, 0
    for f in (lines[i] .. ","):gmatch("([^,]*),") do
      j = j + 1
      r[header[j]] = f
    end
    t:eq(j, #header, "row " .. (i - 1) .. " has as many fields as the header")
    rows[#rows + 1] = r
  end
  return header, rows
end

local function index_of(list, x)
  for i, v in ipairs(list) do if v == x then return i end end
  return nil
end

-- export: one row per run, every config key and every scalar metric, values equal.
local code, out, err = run("export final")
t:eq(code, 0, "export final exits 0: " .. err)
local header, rows = parse_csv(out)
t:eq(#rows, 15, "export final: one row per run (3 variants x 5 seeds)")
t:eq(table.concat(header, ",", 1, 4), "study,variant,seed,run", "the first columns")
for _, k in ipairs(engine.keys()) do
  if k.name ~= "threads" then t:ok(index_of(header, k.name), "config key column " .. k.name) end
end
t:ok(index_of(header, "metrics.embed_norm"), "the embed_norm metric is metrics.embed_norm")
t:ok(index_of(header, "n_spikes") and index_of(header, "max_loss_ratio"),
  "the analysis's derived metrics are columns")
local checked, mismatches = 0, {}
for _, r in ipairs(rows) do
  local rdir = root .. "/" .. r.run
  t:eq(r.run, string.format("final/%s/seed-%s", r.variant, r.seed), "run path of " .. r.run)
  local cfg = json.decode(assert(fs.read(rdir .. "/config.json")))
  local m = json.decode(assert(fs.read(rdir .. "/metrics.json")))
  for k, v in pairs(cfg) do
    local got = r[k]
    local same = type(v) == "number" and tonumber(got) == v or tostring(v) == got
    if not same then mismatches[#mismatches + 1] = r.run .. " config " .. k end
    checked = checked + 1
  end
  for k, v in pairs(m) do
    if type(v) == "number" or type(v) == "boolean" then
      local col = k == "embed_norm" and "metrics.embed_norm" or k
      local got = r[col]
      local same = type(v) == "number" and tonumber(got) == v or tostring(v) == got
      if not same then mismatches[#mismatches + 1] = r.run .. " metric " .. k end
      checked = checked + 1
    end
  end
  local log = analysis.parse_log(fs.read(rdir .. "/log.csv"))
  local n_spikes = analysis.spikes(log.data.loss, log.n)
  t:eq(tonumber(r.n_spikes), n_spikes, r.run .. ": n_spikes as the analysis counts them")
  -- keys left out of config.json take their resolved values
  t:eq(r.tok_init_std, "0.02", r.run .. ": tok_init_std follows embed_init_std")
  t:eq(r.init_seed, r.seed, r.run .. ": init_seed follows the seed")
end
t:eq(#mismatches, 0, "every exported value equals the record's (" .. checked .. " values): " ..
  table.concat(mismatches, ", "))
t:ok(checked > 15 * 60, "many values compared: " .. checked)

-- export --curves: long format, equal to log.csv
code, out, err = run("export final/none/seed-1 --curves --columns loss,lr")
t:eq(code, 0, "export --curves of a run directory exits 0: " .. err)
header, rows = parse_csv(out)
t:eq(table.concat(header, ","), "study,variant,seed,step,column,value", "curves header")
local log = analysis.parse_log(fs.read(root .. "/final/none/seed-1/log.csv"))
t:eq(#rows, 2 * log.n, "one row per step and column")
local bad = 0
for _, r in ipairs(rows) do
  local i = tonumber(r.step) + 1
  if r.study ~= "final" or r.variant ~= "none" or r.seed ~= "1" or
      tonumber(r.value) ~= log.data[r.column][i] then
    bad = bad + 1
  end
end
t:eq(bad, 0, "every curve value equals log.csv's")
code, _, err = run("export final --columns loss")
t:ok(code ~= 0 and err:find("--columns", 1, true) and err:find("--curves", 1, true),
  "--columns without --curves is refused: " .. err)
code, _, err = run("export final/none/seed-1 --curves --columns losss")
t:ok(code ~= 0 and err:find("losss", 1, true), "an unknown log column is named: " .. err)

-- export --out: the file, written whole
code, _, err = run("export final --out " .. dir .. "/final.csv")
t:eq(code, 0, "export --out exits 0: " .. err)
t:eq(fs.read(dir .. "/final.csv"), (select(2, run("export final"))), "--out holds the same CSV")
-- an --out that cannot be written is refused before any record is read
code, _, err = run("export final --out " .. dir)
t:ok(code == 1 and err:find("--out " .. dir .. ": a directory (nothing was read)", 1, true) and
  not err:find("records of the study", 1, true), "export --out DIR refused before reading: " .. err)
code, _, err = run("export final --out " .. dir .. "/no/such/folder.csv")
t:ok(code == 1 and err:find("its folder does not exist (nothing was read)", 1, true),
  "export --out in a missing folder refused before reading: " .. err)

-- compare: variants, mean ± sd equal to the summary's
local summary = json.decode(fs.read(root .. "/scale/summary.json"))
code, out, err = run("compare scale --json --metrics val_loss,val_acc")
t:eq(code, 0, "compare --json exits 0: " .. err)
local doc = json.decode(out)
t:eq(#doc, #summary.variants, "one row per variant of scale")
for _, row in ipairs(doc) do
  local pv = summary.per_variant[row.variant]
  t:eq(row.n, 3, row.variant .. ": n = 3 seeds")
  t:near(row.metrics.val_loss.mean, pv.metrics.val_loss.mean, 1e-12, row.variant .. " mean")
  t:near(row.metrics.val_loss.sd, pv.metrics.val_loss.sd, 1e-9, row.variant .. " sd")
  t:near(row.metrics.val_acc.mean, pv.metrics.val_acc.mean, 1e-12, row.variant .. " acc mean")
  local keys = {}
  for k in pairs(row.config) do keys[#keys + 1] = k end
  table.sort(keys)
  t:eq(table.concat(keys, ","), "d_model,embed_norm,n_head,n_layer",
    row.variant .. ": the config keys that differ between scale's variants")
end
code, out, err = run("compare scale --csv")
t:eq(code, 0, "compare --csv exits 0: " .. err)
header = parse_csv(out)
t:eq(table.concat(header, ","), "study,variant,n,n_layer,d_model,n_head,embed_norm," ..
  "val_loss_mean,val_loss_sd,val_loss_n,val_ppl_mean,val_ppl_sd,val_ppl_n,val_acc_mean," ..
  "val_acc_sd,val_acc_n,diverged,not_measurable", "compare --csv columns (the table model's " ..
  "CSV: not_measurable names the cells a row leaves empty)")
code, out, err = run("compare final --runs --csv --metrics val_loss")
header, rows = parse_csv(out)
t:eq(table.concat(header, ","), "study,variant,seed,embed_norm,val_loss,diverged," ..
  "not_measurable", "compare --runs: the seed column, no seed keys that follow it")
t:eq(#rows, 15, "compare --runs: a row per run")
for _, r in ipairs(rows) do
  local m = json.decode(fs.read(string.format("%s/final/%s/seed-%s/metrics.json", root,
    r.variant, r.seed)))
  t:eq(tonumber(r.val_loss), m.val_loss, "compare --runs value of " .. r.variant .. "/" .. r.seed)
end
-- rows in the study's variant order (its summary's), seeds ascending
code, out = run("compare final --csv")
header, rows = parse_csv(out)
t:eq((rows[1] or {}).variant .. "," .. (rows[2] or {}).variant .. "," .. (rows[3] or {}).variant,
  "none,layernorm,rmsnorm", "variants in final's own order")
-- the terminal table: mean ± sd, cut to COLUMNS
code, out = run("compare final scale")
t:ok(code == 0 and out:find("final  +layernorm  +5", 1) and out:find("±", 1, true),
  "the text table has study, variant, n and mean ± sd:\n" .. out)
code, out = check.run("COLUMNS=64 REPRO_EXPERIMENTS=" .. root .. " " .. repro .. " compare final scale")
local widest = 0
for l in out:gmatch("[^\n]+") do widest = math.max(widest, utf8.len(l)) end
t:ok(code == 0 and widest <= 64 and out:find("…", 1, true), "COLUMNS=64: no line is wider " ..
  "than 64 characters (widest " .. widest .. ")")

-- a record that fails its checksums is skipped with a warning
local copy = dir .. "/root/mystudy/none/seed-1"
os.execute("mkdir -p " .. copy .. " && cp " .. root .. "/final/none/seed-1/* " .. copy)
code, out, err = check.run(repro .. " compare mystudy --out-root " .. dir .. "/root")
t:ok(code == 0 and out:find("mystudy", 1, true), "a copied record reads: " .. err)
local m = fs.read(copy .. "/metrics.json"):gsub('"val_loss": [%d.]+', '"val_loss": 1.5')
check.write(copy .. "/metrics.json", m)
code, out, err = check.run(repro .. " compare mystudy --out-root " .. dir .. "/root")
t:ok(code ~= 0 and err:find("skipped", 1, true) and err:find("checksum", 1, true) and
  err:find("no finished run records", 1, true), "a tampered record is skipped, saying so: " .. err)

-- bad input
code, _, err = run("compare --bogus")
t:ok(code ~= 0 and err:find("unknown option --bogus", 1, true), "unknown option: " .. err)
code, _, err = run("compare final --metrics val_los")
t:ok(code ~= 0 and err:find("val_los", 1, true) and err:find("--metrics", 1, true),
  "unknown metric named with its flag: " .. err)
code, _, err = run("compare no_such_study")
t:ok(code ~= 0 and err:find("no_such_study", 1, true), "unknown target named: " .. err)
code, _, err = run("compare final --csv --json")
t:ok(code ~= 0 and err:find("--csv", 1, true), "--csv with --json refused: " .. err)
t:ok(not err:find("traceback", 1, true), "no traceback")

-- compare reads what it shows: no log.csv unless a metric from it is asked for, and no
-- committed file hashed again (git's index says which are unchanged since HEAD)
do
  local sys = require "repro.sys"
  local results = require "repro.report.results"
  local logs, hashed = 0, 0
  local sha_file, capture = sys.sha256_file, fs.capture
  sys.sha256_file = function(p, ...)
    if p:match("/log%.csv$") then logs = logs + 1 end
    return sha_file(p, ...)
  end
  fs.capture = function(cmd)
    if cmd:find("hash-object", 1, true) then hashed = hashed + 1 end
    return capture(cmd)
  end
  local quiet = function() end
  local runs = results.collect({ "prelim" }, { out_root = root, with_derived = false },
    "test", quiet)
  local n, logs1, hashed1 = #runs, logs, hashed
  local committed = 0
  for _, r in ipairs(runs) do
    if r.provenance.level == "committed" then committed = committed + 1 end
  end
  runs = results.collect({ "prelim" }, { out_root = root, with_derived = true }, "test", quiet)
  sys.sha256_file, fs.capture = sha_file, capture
  t:ok(n == 9 and committed == 9 and logs1 == 0 and hashed1 == 0,
    string.format("compare's reading of prelim: %d records, %d committed, %d log.csv hashed, " ..
    "%d git hash-object runs", n, committed, logs1, hashed1))
  t:ok(#runs == 9 and logs == 9, "with a metric from log.csv, each log.csv is verified: " .. logs)
end

check.rmtree(dir)
t:done()
