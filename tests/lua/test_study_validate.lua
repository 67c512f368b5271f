-- Study files that are wrong in each way the runner must catch: one message naming the
-- file and line (or the field path), exit status 1, nothing run, nothing written; the
-- decision rule's design checks (a test that cannot reach alpha / m is refused with the
-- seed count it needs; seeds from power); and the real studies validate (--dry-run
-- writes nothing).
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local stats = require "stats"
local study = require "repro.study"
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
    '    alpha = 0.05, correction = "holm", resamples = 1000, test = "t" },', -- 13
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
  l[13] = '    alpha = 0.05, correction = "holm", resamples = 1000, test = "t", comparisons = { { "layernorm", "rms" } } },'
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

-- the decision test is pre-registered, and must be able to decide
run_case("no_test", function(l) l[13] = l[13]:gsub(', test = "t"', "") end,
  { "analysis.test: missing (it is part of the pre-registration)" })
run_case("bad_test", function(l) l[13] = l[13]:gsub('test = "t"', 'test = "wilcoxon"') end,
  { 'bad_test.lua:13: analysis.test: expected "t" (the paired t-test) or "signflip"' })
run_case("few_resamples", function(l) l[13] = l[13]:gsub("resamples = 1000", "resamples = 99") end,
  { "analysis.resamples: expected an integer >= " .. stats.MIN_RESAMPLES })
run_case("bad_rule", function(l) l[13] = l[13]:gsub('test = "t"', 'test = "t", registered_rule = 3') end,
  { "analysis.registered_rule: expected an integer from 1 to " .. study.RULE })

-- The issue's example: the exact sign flip with 5 seeds and 6 tests (4 variants, every
-- pair) cannot reach 0.05 / 6; it needs 2^(1 - n) <= 0.05 / 6, n = 8.
local function six_tests(name, seeds, extra)
  local file = dir .. "/" .. name .. ".lua"
  check.write(file, string.format([[
return {
  name = %q, description = "six tests",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 8,
           warmup = 2, data = %q },
  variants = { { name = "a", lr = 1e-3 }, { name = "b", lr = 2e-3 }, { name = "c", lr = 3e-3 },
               { name = "d", lr = 4e-3 } },
  seeds = %s,
  analysis = { baseline = "a", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "signflip", comparisons = { { "b", "a" }, { "c", "a" }, { "d", "a" }, { "c", "b" },
      { "d", "b" }, { "d", "c" } }%s },
}
]], name, corpus, seeds, extra or ""))
  return file
end
local f5 = six_tests("signflip5", "{ 1, 2, 3, 4, 5 }")
code, out, err = check.run(repro .. " run " .. f5 .. " --dry-run --out-root " .. dir .. "/sf")
t:ok(code == 1 and err:find("signflip5.lua:10: analysis.test: the exact sign-flip test with 5 " ..
  "seeds cannot reach the Holm first-step level alpha / m = 0.05 / 6", 1, true) and
  err:find("its smallest p is 2^(1 - 5) = 0.0625", 1, true) and
  err:find("the design needs at least 8 seeds", 1, true) and not fs.exists(dir .. "/sf"),
  "sign flip, 5 seeds, 6 tests: refused with the seed count it needs: " .. err)
code, out, err = check.run(repro .. " run " .. six_tests("signflip8", "{ 1, 2, 3, 4, 5, 6, 7, 8 }") ..
  " --dry-run --out-root " .. dir .. "/sf")
t:eq(code, 0, "sign flip, 8 seeds, 6 tests: valid: " .. err)
code, out, err = check.run(repro .. " run " .. six_tests("signflip5old", "{ 1, 2, 3, 4, 5 }",
  ", registered_rule = 1") .. " --dry-run --out-root " .. dir .. "/sf")
t:eq(code, 0, "the same design registered under rule 1 validates (its summary notes it): " .. err)

-- seeds from power: the stated sd, or the pilot's
local n_sd = stats.seeds_needed { sd = 0.02, delta = 0.01, alpha = 0.05, m = 6, power = 0.8,
  test = "signflip" }
code, out, err = check.run(repro .. " run " .. six_tests("power_sd",
  "{ count = { power = 0.8, sd = 0.02 }, first = 101 }") .. " --dry-run --out-root " .. dir .. "/sf")
t:ok(code == 0 and out:find("a/seed-" .. (100 + n_sd) .. " ", 1, true) and
  not out:find("a/seed-" .. (101 + n_sd) .. " ", 1, true) and out:find("a/seed-101 ", 1, true),
  string.format("seeds from power with sd: seeds 101..%d: %s", 100 + n_sd, err))
local pilot_dir = dir .. "/sf/pilotx"
fs.mkdir_p(pilot_dir)
check.write(pilot_dir .. "/summary.json", [[{"study": "pilotx", "seeds": [101, 102, 3],
  "comparisons": [{"treatment": "b", "baseline": "a", "metric": "val_loss", "sd": 0.01, "n": 3},
                  {"treatment": "c", "baseline": "a", "metric": "val_loss", "sd": 0.018, "n": 3},
                  {"treatment": "c", "baseline": "a", "metric": "val_acc", "sd": 0.5, "n": 3}]}]])
local n_pilot = stats.seeds_needed { sd = 0.018, delta = 0.01, alpha = 0.05, m = 6, power = 0.8,
  test = "signflip" }
code, out, err = check.run(repro .. " run " .. six_tests("power_pilot",
  '{ count = { power = 0.8, pilot = "pilotx" }, first = 200 }') .. " --dry-run --out-root " ..
  dir .. "/sf")
t:ok(code == 0 and out:find("a/seed-" .. (199 + n_pilot) .. " ", 1, true) and
  not out:find("a/seed-" .. (200 + n_pilot) .. " ", 1, true),
  string.format("seeds from the pilot's largest sd on the primary metric: %d seeds: %s", n_pilot,
    err))
code, out, err = check.run(repro .. " run " .. six_tests("power_reuse",
  '{ count = { power = 0.8, pilot = "pilotx" }, first = 100 }') .. " --dry-run --out-root " ..
  dir .. "/sf")
t:ok(code == 1 and err:find("seeds.first: seed 101 is one of the pilot's", 1, true),
  "seeds from power must be fresh: " .. err)
code, out, err = check.run(repro .. " run " .. six_tests("power_nopilot",
  '{ count = { power = 0.8, pilot = "nosuch" }, first = 1 }') .. " --dry-run --out-root " ..
  dir .. "/sf")
t:ok(code == 1 and err:find("seeds.count.pilot: the pilot study has no summary", 1, true),
  "a pilot that has not run: " .. err)
code, out, err = check.run(repro .. " run " .. six_tests("power_both",
  '{ count = { power = 0.8, pilot = "pilotx", sd = 1 }, first = 1 }') .. " --dry-run")
t:ok(code == 1 and err:find("expected exactly one of pilot", 1, true), "pilot and sd: " .. err)
code, out, err = check.run(repro .. " run " .. six_tests("power_nofirst",
  '{ count = { power = 1.5, sd = 1 } }') .. " --dry-run")
t:ok(code == 1 and err:find("seeds.count.power: expected the target power", 1, true) and
  err:find("seeds.first: expected the first seed", 1, true), "bad power, no first: " .. err)

-- bad command lines
code, _, err = check.run(repro .. " run " .. ok_file .. " --only variant=rms --out-root " .. dir .. "/o1")
t:ok(code == 1 and err:find("variant=rms", 1, true) and not fs.exists(dir .. "/o1"),
  "--only with an unknown variant is refused: " .. err)
code, _, err = check.run(repro .. " run " .. ok_file .. " --jobs 0")
t:ok(code == 1 and err:find("--jobs", 1, true), "--jobs 0 is refused: " .. err)
code, _, err = check.run(repro .. " run " .. dir .. "/nonexistent.lua")
t:ok(code == 1 and err:find("cannot read", 1, true), "a missing study file is refused: " .. err)

-- the real studies validate, with the run counts their descriptions state
for name, runs in pairs({ prelim = 9, final = 15, instability_v1 = 30, scale = 27,
    lr_sweep_a = 81, lr_sweep = 135 }) do
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
