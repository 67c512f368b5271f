-- Study files that are wrong in each way the runner must catch: one message naming the
-- file and line (or the field path), exit status 1, nothing run, nothing written.  And
-- the four real studies validate (--dry-run writes nothing).
local check = require "repro.check"
local fs = require "repro.fs"
local t = check.new("test_study_validate")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local corpus = dir .. "/corpus.txt"
check.write(corpus, string.rep("the cat sat on the mat. a dog ran far away home.\n", 400))

-- A valid study's lines; each case edits them (1-based line numbers stay meaningful).
local function lines()
  return {
    'return {',                                                               -- 1
    '  name = "v",',                                                          -- 2
    '  description = "validation",',                                         -- 3
    '  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4,', -- 4
    '           iters = 8, warmup = 2, data = "' .. corpus .. '" },',         -- 5
    '  variants = {',                                                         -- 6
    '    { name = "none", embed_norm = "none" },',                            -- 7
    '    { name = "layernorm", embed_norm = "layernorm" },',                  -- 8
    '  },',                                                                   -- 9
    '  seeds = { 1, 2 },',                                                    -- 10
    '  analysis = { baseline = "none", metrics = { "val_loss", "n_spikes" },', -- 11
    '    primary = "val_loss", better = "lower", min_effect = 0.01,',         -- 12
    '    alpha = 0.05, correction = "holm", resamples = 1000 },',             -- 13
    '}',                                                                      -- 14
  }
end

local function run_case(name, edit, expect)
  local l = lines()
  l[2] = '  name = "' .. name .. '",' -- a study's name is its file name
  edit(l)
  local file = dir .. "/" .. name .. ".lua"
  check.write(file, table.concat(l, "\n") .. "\n")
  local out = dir .. "/out-" .. name
  local code, _, err = check.run(repro .. " run " .. file .. " --out-root " .. out)
  t:eq(code, 1, name .. ": exit status")
  for _, e in ipairs(expect) do
    t:ok(err:find(e, 1, true), name .. ": message has '" .. e .. "' -- got: " .. err)
  end
  t:ok(not err:find("traceback", 1, true), name .. ": no traceback")
  t:ok(not fs.exists(out), name .. ": nothing written")
end

-- the unedited study is valid
local ok_file = dir .. "/v.lua"
check.write(ok_file, table.concat(lines(), "\n") .. "\n")
local code, out = check.run(repro .. " run " .. ok_file .. " --dry-run --out-root " .. dir .. "/dry")
t:eq(code, 0, "valid study: dry run exits 0")
t:ok(out:find("train   none/seed-1", 1, true) and out:find("4 to train", 1, true),
  "dry run lists the runs: " .. out)
t:ok(not fs.exists(dir .. "/dry"), "dry run writes nothing")

run_case("parse", function(l) l[7] = '    { name = "none" embed_norm = "none" },' end,
  { "parse.lua:7:" })
run_case("runtime", function(l) l[1] = 'local x = nil .. "a"; return {' end,
  { "runtime.lua:1:", "concatenate" })
run_case("notable", function(l)
  for i = #l, 2, -1 do l[i] = nil end
  l[1] = "return 42"
end, { "must return a table" })
run_case("missing", function(l) l[11], l[12], l[13] = "", "", "" end, { "analysis: missing" })
run_case("misspelled", function(l) l[10] = '  seed = { 1, 2 },' end,
  { "misspelled.lua:10: seed: unknown field (did you mean 'seeds'?)", "seeds: missing" })
run_case("unknown_key", function(l) l[8] = '    { name = "layernorm", embed_nrom = "layernorm" },' end,
  { "unknown_key.lua:8: variants[2].embed_nrom: unknown config key 'embed_nrom' " ..
    "(did you mean 'embed_norm'?)" })
run_case("base_key", function(l) l[5] = '           iters = 8, warmpu = 2, data = "' .. corpus .. '" },' end,
  { "base_key.lua:5: base.warmpu: unknown config key", "did you mean 'warmup'?" })
run_case("dup_variant", function(l) l[8] = '    { name = "none", embed_norm = "layernorm" },' end,
  { "variants[2].name: variant 'none' is listed twice" })
run_case("dup_seed", function(l) l[10] = '  seeds = { 1, 2, 1 },' end,
  { "dup_seed.lua:10: seeds[3]: seed 1 is listed twice" })
run_case("bad_baseline", function(l) l[11] = l[11]:gsub('baseline = "none"', 'baseline = "nnoe"') end,
  { "bad_baseline.lua:11: analysis.baseline: unknown variant 'nnoe' (did you mean 'none'?)" })
run_case("bad_metric", function(l) l[11] = l[11]:gsub('"n_spikes"', '"n_spkies"') end,
  { "bad_metric.lua:11: analysis.metrics[2]: unknown metric 'n_spkies' (did you mean 'n_spikes'?)" })
run_case("bad_secondary", function(l)
  l[12] = l[12]:gsub('primary = "val_loss",', 'primary = "val_loss", secondary = { "breir", "val_loss" },')
end, { "analysis.secondary[1]: unknown metric 'breir' (did you mean 'brier'?)",
  "analysis.secondary[2]: metric 'val_loss' is already listed" })
run_case("bad_primary", function(l) l[12] = l[12]:gsub('"val_loss"', '"val_acc"') end,
  { "analysis.primary: 'val_acc' is not one of analysis.metrics" })
run_case("bad_comparison", function(l)
  l[13] = '    alpha = 0.05, correction = "holm", resamples = 1000, comparisons = { { "layernorm", "rms" } } },'
end, { "analysis.comparisons[1][2]: unknown variant 'rms'" })
run_case("bad_value", function(l) l[4] = l[4]:gsub("n_head = 2", "n_head = 3") end,
  { "base.n_head", "n_head=3" })
run_case("bad_type", function(l) l[7] = '    { name = "none", embed_norm = "none", lr = "fast" },' end,
  { "bad_type.lua:7: variants[1].lr: expected a number, got a string" })
run_case("reserved", function(l) l[7] = '    { name = "none", embed_norm = "none", seed = 3 },' end,
  { "variants[1].seed: seed cannot be set in a study" })
run_case("no_rule", function(l) l[12] = '    primary = "val_loss", better = "lower",' end,
  { "analysis.min_effect: missing" })
run_case("several", function(l)
  l[8] = '    { name = "layernorm", embed_nrom = "layernorm" },'
  l[10] = '  seeds = { 1, 1 },'
end, { "2 problems", "variants[2].embed_nrom", "seeds[2]: seed 1 is listed twice" })

-- bad command lines
code, _, err = check.run(repro .. " run " .. ok_file .. " --only variant=rms --out-root " .. dir .. "/o1")
t:ok(code == 1 and err:find("variant=rms", 1, true) and not fs.exists(dir .. "/o1"),
  "--only with an unknown variant is refused: " .. err)
code, _, err = check.run(repro .. " run " .. ok_file .. " --jobs 0")
t:ok(code == 1 and err:find("--jobs", 1, true), "--jobs 0 is refused: " .. err)
code, _, err = check.run(repro .. " run " .. dir .. "/nonexistent.lua")
t:ok(code == 1 and err:find("cannot read", 1, true), "a missing study file is refused: " .. err)

-- the real studies validate, with the run counts their descriptions state
for name, runs in pairs({ prelim = 9, final = 15, instability = 30, scale = 27 }) do
  local o = dir .. "/real-" .. name
  local rcode, rout, rerr = check.run(repro .. " run lua/experiments/" .. name ..
    ".lua --dry-run --out-root " .. o)
  t:eq(rcode, 0, name .. ".lua validates: " .. rerr)
  t:ok(rout:find(runs .. " of its " .. runs .. " runs selected", 1, true),
    name .. ".lua has " .. runs .. " runs: " .. rout:sub(1, 200))
  t:ok(not fs.exists(o), name .. ".lua --dry-run writes nothing")
end

check.rmtree(dir)
t:done()
