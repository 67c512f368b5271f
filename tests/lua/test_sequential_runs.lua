-- `bin/repro run` on tiny sequential studies (analysis.sequential): a large effect stops at
-- the first look, a null effect stops for equivalence, a target far away stops for
-- futility, a study with no stop that holds reaches its cap; the runs after a stop are not
-- trained; a rerun trains nothing, and the study retrained from scratch gives the same
-- summary bytes; `plan` hands out one look at a time; the dry run prints the expected
-- runs.  Bad designs are refused before anything runs, naming the key.
local check = require "check"
check.data_anywhere()
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local t = check.new("test_sequential_runs")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()

local corpus = check.word_corpus(dir .. "/corpus.txt", 7, 4000)

-- A sequential study: `slow` trains with a learning rate 100 times smaller (a large
-- effect), `same` is the baseline's config under another name (no effect at all).
local function write_study(name, seq, treatment)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return {
  name = %q,
  description = "a tiny sequential study",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 10,
    warmup = 2, lr = 1e-2, data = %q },
  variants = { { name = "base" }, { name = "slow", lr = 1e-4 }, { name = "same" } },
  seeds = { 11, 12, 13, 14, 15, 16 },
  analysis = { baseline = "base", metrics = { "val_loss" }, comparisons = { { %q, "base" } },
    primary = "val_loss", better = "lower", min_effect = 0.01, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t",
    sequential = %s },
}
]], name, corpus, treatment, seq))
  return path
end

local function run(path, root, extra)
  return check.run(string.format("%s run %s --out-root %s --jobs 1 %s", repro,
    path, root, extra or ""))
end

local function summary(root, name)
  return json.decode(assert(fs.read(root .. "/" .. name .. "/summary.json")))
end

local function trained(root, name, variant)
  local n = 0
  for i = 11, 16 do
    if fs.exists(string.format("%s/%s/%s/seed-%d/metrics.json", root, name, variant, i)) then
      n = n + 1
    end
  end
  return n
end

local SD = 'sd = 0.05, sd_source = "a guess for the test"'

-- a large effect: the t statistic reaches the boundary at the first look
local big = write_study("big", '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = { ' ..
  '"difference", "equivalence" }, ' .. SD .. ' }', "slow")
local root = dir .. "/a"
local code, out = run(big, root)
t:eq(code, 0, "the large-effect study runs: " .. out)
local s = summary(root, "big")
local e = s.sequential.comparisons[1]
t:ok(e.stopped_at == 1 and e.decision == "difference" and e.verdict == "worse",
  "a large effect stops at the first look: " .. tostring(e.decision) .. " at " ..
  tostring(e.stopped_at))
t:eq(trained(root, "big", "slow"), 3, "only the first look's seeds were trained")
t:eq(s.sequential.runs_used, 6, "6 runs used against the fixed design's")
t:eq(s.sequential.runs_fixed, 18, "18 for the fixed design (3 variants x 6 seeds)")
t:ok(s.verdicts[1].verdict == "worse" and s.verdicts[1].reason == "difference" and
  s.verdicts[1].look == 1, "the verdict says where and why")
t:ok(out:find("sequential verdicts on val_loss", 1, true) and out:find("reached its boundary",
  1, true), "the terminal says the look and the reason: " .. out)
local first = fs.read(root .. "/big/summary.json")
code, out = run(big, root)
t:ok(code == 0 and not out:find("to train", 1, true), "a rerun trains nothing: " .. out)
t:eq(fs.read(root .. "/big/summary.json"), first, "and keeps the summary's bytes")
local okc, errc = pcall(require("repro.report.data").check_summary, root, "big", first,
  json.decode(first), dir)
t:ok(okc, "make verify recomputes it from its records, the runs after the stop absent: " ..
  tostring(type(errc) == "table" and errc.message or errc))
code = run(big, dir .. "/b")
t:eq(fs.read(dir .. "/b/big/summary.json"), first,
  "retrained from scratch elsewhere: the same summary bytes")

-- GNU parallel and Slurm get one look at a time
local _, cmds, err = check.run(string.format("%s plan %s --out-root %s", repro, big,
  dir .. "/c"))
local n_cmds = select(2, cmds:gsub("run%-one", ""))
t:ok(n_cmds == 6 and err:find("the runs of its next look only", 1, true),
  "plan hands out the first look's 6 runs: " .. n_cmds .. " " .. err)
_, cmds, err = check.run(string.format("%s plan %s --out-root %s", repro, big, root))
t:ok(not cmds:find("run-one", 1, true) and err:find("every comparison is decided", 1, true),
  "and nothing once every comparison is decided: " .. err)
local dry = select(2, check.run(string.format("%s run %s --out-root %s --dry-run", repro, big,
  dir .. "/d")))
t:ok(dry:find("sequential: under an effect of 0: about", 1, true) and
  dry:find("the fixed design (the cap): 18 runs", 1, true),
  "the dry run prints the expected runs beside the fixed design's: " .. dry)

-- no effect at all: equivalence as soon as the exact Wilcoxon interval exists at the look's
-- level (3 pairs cannot reach it: the second look)
local null = write_study("null", '{ looks = { 3, 6 }, shape = "obf", test = ' ..
  '"signed_rank", stop = { "difference", "equivalence" }, ' .. SD .. ' }', "same")
code, out = run(null, root)
e = summary(root, "null").sequential.comparisons[1]
t:ok(code == 0 and e.decision == "equivalence" and e.verdict == "equivalent" and
  e.stopped_at == 2 and e.looks[1].ci == nil, "a null effect stops for equivalence: " ..
  tostring(e.decision) .. " " .. out)

-- futility: the interval excludes a target effect far from the data
local fut = write_study("fut", '{ looks = { 3, 6 }, shape = "pocock", test = "t", stop = ' ..
  '{ "futility" }, target = -5, ' .. SD .. ' }', "slow")
code, out = run(fut, root)
e = summary(root, "fut").sequential.comparisons[1]
t:ok(code == 0 and e.decision == "futility" and e.verdict == "inconclusive" and
  e.target_in_ci == false, "a target far away stops for futility: " .. tostring(e.decision))

-- no stop holds: the cap
local cap = write_study("cap", '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = ' ..
  '{ "equivalence" }, margin = 1e-9, ' .. SD .. ' }', "slow")
code, out = run(cap, root)
e = summary(root, "cap").sequential.comparisons[1]
t:ok(code == 0 and e.decision == "cap" and e.stopped_at == 2 and #e.looks == 2,
  "without a stop that holds the study reaches its cap: " .. tostring(e.decision))
t:eq(trained(root, "cap", "slow"), 6, "every seed of the cap trained")

-- the paired t by sign flips (boundary "spending"): 3 pairs have 8 sign patterns, too few
-- to reject at 0.05; the 6 of the second look all of one sign reject
local flips = write_study("flips", '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = ' ..
  '{ "difference" }, boundary = "spending", ' .. SD .. ' }', "slow")
code, out = run(flips, root)
s = summary(root, "flips")
e = s.sequential.comparisons[1]
t:ok(code == 0 and e.decision == "difference" and e.stopped_at == 2 and e.looks[1].crosses ==
  false and e.looks[2].crosses, "the sign-flip t stops at the second look: " ..
  tostring(e.decision) .. " at " .. tostring(e.stopped_at) .. " " .. out)
t:eq(s.sequential.design.boundary, "spending", "the summary names the boundary")
t:ok(out:find("alpha spent on sign flips given |d|", 1, true), "the report says how: " .. out)

-- bad designs: refused before any run, naming the key
local cases = {
  { '{ looks = { 3 }, shape = "obf", test = "t", stop = { "difference" }, ' .. SD .. ' }',
    "analysis.sequential.looks" },
  { '{ looks = { 3, 5 }, shape = "obf", test = "t", stop = { "difference" }, ' .. SD .. ' }',
    "the last look (5 seeds) must be the study's seeds (6)" },
  { '{ looks = { 3, 6 }, shape = "square", test = "t", stop = { "difference" }, ' .. SD ..
    ' }', "analysis.sequential.shape" },
  { '{ looks = { 3, 6 }, shape = "obf", test = "z", stop = { "difference" }, ' .. SD .. ' }',
    "analysis.sequential.test" },
  { '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = { "futility" }, ' .. SD .. ' }',
    "analysis.sequential.target" },
  { '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = { "difference" } }',
    "analysis.sequential.sd" },
  { '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = { "difference" }, ' .. SD ..
    ', when = 1 }', "analysis.sequential.when" },
  { '{ looks = { 3, 6 }, shape = "obf", test = "t", stop = { "difference" }, ' .. SD ..
    ', boundary = "exact" }', "analysis.sequential.boundary" },
}
for i, c in ipairs(cases) do
  local p = write_study("bad" .. i, c[1], "slow")
  local _, _, err = run(p, dir .. "/bad")
  t:ok(err:find(c[2], 1, true) and not fs.exists(dir .. "/bad/bad" .. i),
    "refused before any run: " .. c[2] .. ": " .. err)
end
t:done()
