-- Reading another study's results from a study file (lua/repro/study/depends.lua) and the
-- order of studies by what they need (lua/repro/cli/studies.lua, `bin/repro studies`), on
-- synthetic summaries (no training): values that reach the configs, every error message,
-- dependencies from reads, pilots and `depends`, listing before anything has run, the
-- order's tie-break, a missing study and a cycle.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local json = require "repro.core.json"
local study = require "repro.study"
local order = require "repro.cli.studies"
local fs = require "repro.core.fs"
local t = check.new("test_depends")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local root = dir .. "/experiments"
local sdir = dir .. "/studies"
fs.mkdir_p(root)
fs.mkdir_p(sdir)
local corpus = dir .. "/corpus.txt"
check.write(corpus, string.rep("the cat sat on a mat and ran far away. ", 400))

local BASE = string.format("n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, " ..
  "iters = 4, warmup = 1, data = %q", corpus)

-- A study file named `name` in `where` whose variants come from `variants_src` (Lua
-- expressions), with extra top-level fields `extra`.
local function write_study(where, name, variants_src, extra)
  local path = where .. "/" .. name .. ".lua"
  check.write(path, string.format([[
local v = {
%s
}
return {
  name = %q,
  description = "test",
  base = { %s },
  variants = v,
  seeds = { 1, 2 },%s
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm",
    resamples = 1000, test = "t", comparisons = {} },
}
]], variants_src, name, BASE, extra or ""))
  return path
end

local function write_summary(name, doc)
  fs.mkdir_p(root .. "/" .. name)
  check.write(root .. "/" .. name .. "/summary.json", json.encode(doc))
end

local SWEEP = { study = "dsweep", seeds = json.array({ 1, 2, 3 }), lr_sweep = { groups = {
  none = { best_lr = 0.001 }, layernorm = { best_lr = 0.003 },
  rmsnorm = { no_best = "every run of group rmsnorm diverged" } } },
  claim = { selected = json.array({ { name = "a", tok = 1.0 }, { name = "b", tok = 0.02 } }) } }

local reader = write_study(sdir, "dtuned", [[
  { name = "none", embed_norm = "none", lr = repro.best_lr("dsweep", "none") },
  { name = "layernorm", embed_norm = "layernorm", lr = repro.best_lr("dsweep", "layernorm") },
]])

-- before the sweep has run: a clear error naming the study and the command
t:raises(function() study.load(reader, nil, { out_root = root }) end,
  "the study 'dsweep' has no results: " .. root .. "/dsweep/summary.json does not exist " ..
  "(run it first: bin/repro run lua/experiments/dsweep.lua", "missing dependency")
t:raises(function() study.load(reader, nil, { out_root = root }) end,
  "dtuned.lua:2: repro.best_lr:", "the message names the study file's line")
-- a folder without a summary: not finished
fs.mkdir_p(root .. "/dsweep")
t:raises(function() study.load(reader, nil, { out_root = root }) end,
  "the study 'dsweep' has not finished: " .. root .. "/dsweep exists but has no summary.json",
  "unfinished dependency")

-- listing before anything has run: the dependency is known anyway
local deps = study.dependencies(reader, { out_root = root })
t:eq(table.concat(deps, ","), "dsweep", "listing: the study read")

write_summary("dsweep", SWEEP)
local s = study.load(reader, nil, { out_root = root })
t:eq(s.runs[1].cfg.lr, 0.001, "best_lr reaches the config of none")
t:eq(s.runs[2].cfg.lr, 0.003, "best_lr reaches the config of layernorm")
t:eq(s.runs[1].cfg.embed_norm, "none", "the rest of the config is the study's")
-- the value is in the config, so in its hash: another sweep result, another config
SWEEP.lr_sweep.groups.none.best_lr = 0.01
write_summary("dsweep", SWEEP)
local s2 = study.load(reader, nil, { out_root = root })
t:eq(s2.runs[1].cfg.lr, 0.01, "a changed sweep changes the config")
local record = require "repro.record"
t:ok(record.config_text(s.runs[1].cfg) ~= record.config_text(s2.runs[1].cfg),
  "and its config.json (whose SHA-256 is the config hash)")

-- errors of best_lr
local function load_variants(name, src)
  local p = write_study(sdir, name, src)
  return function() study.load(p, nil, { out_root = root }) end
end
t:raises(load_variants("e1", [[{ name = "none", lr = repro.best_lr("dsweep", "layernrom") }]]),
  "the sweep 'dsweep' has no group 'layernrom' (its groups: layernorm, none, rmsnorm)",
  "unknown group")
t:raises(load_variants("e2", [[{ name = "none", lr = repro.best_lr("dsweep", "rmsnorm") }]]),
  "the sweep 'dsweep' gives no best learning rate for group 'rmsnorm': every run of group " ..
  "rmsnorm diverged", "no best lr")
t:raises(load_variants("e3", [[{ name = "none", lr = repro.best_lr("../x", "none") }]]),
  "repro.best_lr: expected the name of a study as argument 1, got '../x'", "bad study name")
t:raises(load_variants("e4", [[{ name = "none", lr = repro.best_lr("dsweep") }]]),
  "expected the name of a group of the sweep as argument 2, got a nil", "missing group")
t:raises(load_variants("e2b", [[{ name = "none", lr = repro.best_config("dsweep", "none").lr }]]),
  "repro.best_config: the sweep 'dsweep' has no best_overrides for group 'none'",
  "best_config of a summary without best_overrides")
SWEEP.lr_sweep.groups.none.best_overrides = { lr = 0.01, min_lr = 0.001 }
write_summary("dsweep", SWEEP)
s = study.load(write_study(sdir, "dconfig", [[
  { name = "none", lr = repro.best_config("dsweep", "none").lr,
    min_lr = repro.best_config("dsweep", "none").min_lr },
]]), nil, { out_root = root })
t:eq(s.runs[1].cfg.min_lr, 0.001, "best_config: min_lr as the sweep gave it")
write_summary("plain", { study = "plain", comparisons = json.array({}) })
t:raises(load_variants("e5", [[{ name = "none", lr = repro.best_lr("plain", "none") }]]),
  "the study 'plain' is not a learning-rate sweep: " .. root .. "/plain/summary.json has no " ..
  "lr_sweep section", "not a sweep")
fs.mkdir_p(root .. "/broken")
check.write(root .. "/broken/summary.json", "{ not json")
t:raises(load_variants("e6", [[{ name = "none", lr = repro.best_lr("broken", "none") }]]),
  root .. "/broken/summary.json: not a study summary (invalid JSON)", "invalid summary")

-- result: any field of a summary, as plain data
local loops = write_study(sdir, "dclaim", [[
]] .. "" , [[

  depends = { "dprelim" },]])
check.write(loops, (fs.read(loops):gsub("local v = {\n\n}", [[
local v = {}
for _, setup in ipairs(repro.result("dsweep", "claim", "selected")) do
  v[#v + 1] = { name = setup.name, tok_init_std = setup.tok }
end
v[#v + 1] = { name = "none" }]])))
s = study.load(loops, nil, { out_root = root })
t:eq(#s.variants, 3, "result: a list that builds variants")
t:eq(s.runs[1].cfg.tok_init_std, 1.0, "result: its values reach the configs")
write_summary("dnull", { study = "dnull", values = json.array({ 0.5, json.null, 0.25 }) })
s = study.load(write_study(sdir, "dnulls", [[
  { name = "none", lr = (repro.result("dnull", "values")[2] == false) and
    repro.result("dnull", "values")[3] or 1 },
]]), nil, { out_root = root })
t:eq(s.runs[1].cfg.lr, 0.25, "result: a JSON null reads as false")
t:raises(load_variants("e7", [[{ name = "none", lr = repro.result("dsweep", "claim", "nope") }]]),
  root .. "/dsweep/summary.json has no field claim.nope", "result: a missing field")
t:raises(load_variants("e8", [[{ name = "none", lr = repro.result("dsweep") }]]),
  "repro.result: expected at least one key after the study name", "result: no key")
t:raises(load_variants("e9", [[{ name = "none", lr = repro.result("dsweep", "claim", "selected",
  1.5) }]]), "argument 4: expected a key (a string or an integer), got a number",
  "result: a bad key")

-- depends: validated, and part of the dependencies
t:raises(function()
  study.load(write_study(sdir, "e10", [[{ name = "none" }]], [[

  depends = { "e10", 3 },]]), nil, { out_root = root })
end, "depends[1]: a study cannot depend on itself", "depends on itself")
t:raises(function()
  study.load(write_study(sdir, "e11", [[{ name = "none" }]], [[

  depends = "x",]]), nil, { out_root = root })
end, "depends: expected a list of study names", "depends: not a list")

-- dependencies: reads, depends and the pilot, sorted and distinct
local pilot = write_study(sdir, "dpower", [[
  { name = "none", lr = repro.best_lr("dsweep", "none") },
  { name = "layernorm", embed_norm = "layernorm", lr = repro.best_lr("dsweep", "layernorm") },
]], [[

  depends = { "dsweep", "dprelim" },]])
check.write(pilot, (fs.read(pilot):gsub("seeds = { 1, 2 },",
  [[seeds = { count = { power = 0.8, pilot = "dpilot" }, first = 101 },]])))
deps = study.dependencies(pilot, { out_root = dir .. "/nothing" })
t:eq(table.concat(deps, ","), "dpilot,dprelim,dsweep", "dependencies: reads, depends, pilot")

-- a study that computes with a result it cannot have yet still lists
local compute = write_study(sdir, "dcompute", [[
  { name = "none", lr = 2 * repro.best_lr("dsweep", "none") + repro.best_lr("dother", "x") },
]])
deps = study.dependencies(compute, { out_root = dir .. "/nothing" })
t:eq(table.concat(deps, ","), "dother,dsweep", "listing: a computation on a missing result " ..
  "reads 0 as a placeholder, so every read is reached")
-- ... and its declared depends is known
local declared = write_study(sdir, "ddeclared", [[
  { name = "none", lr = repro.best_lr("dsweep", "none") / 10 },
]], [[

  depends = { "dcopied" },]])
deps = study.dependencies(declared, { out_root = dir .. "/nothing" })
t:eq(table.concat(deps, ","), "dcopied,dsweep", "listing: depends of a study that computes")
-- a study that fails with every placeholder keeps what it read
local strict = write_study(sdir, "dstrict", [[
  { name = "none" .. repro.result("dsweep", "claim", "selected")[1] },
]])
deps = study.dependencies(strict, { out_root = dir .. "/nothing" })
t:eq(table.concat(deps, ","), "dsweep", "listing: every placeholder fails: the reads")
-- but a study that fails for another reason says so
local bad = write_study(sdir, "dbad", [[ { name = "none", lr = nil + 1 }, ]])
t:raises(function() study.dependencies(bad, {}) end, "dbad.lua:2: attempt to perform arithmetic",
  "listing: a real error is reported")
local syntax = sdir .. "/dsyntax.lua"
check.write(syntax, "return {\n  name = 'dsyntax',\n  x = = 1,\n}\n")
t:raises(function() study.dependencies(syntax, {}) end, "dsyntax.lua:3:",
  "listing: a syntax error names the study's own line")

-- the order of a folder of studies
local odir = dir .. "/order"
fs.mkdir_p(odir)
write_study(odir, "b_sweep", [[ { name = "none" }, ]])
write_study(odir, "a_tuned", [[ { name = "none", lr = repro.best_lr("b_sweep", "none") }, ]])
write_study(odir, "c_plain", [[ { name = "none" }, ]])
write_study(odir, "a_after", [[ { name = "none" }, ]], [[

  depends = { "a_tuned" },]])
local list = order.order(odir, { out_root = dir .. "/nothing" })
local names = {}
for i, x in ipairs(list) do names[i] = x.name end
t:eq(table.concat(names, " "), "b_sweep a_tuned a_after c_plain",
  "order: dependencies first, else by name")
local code, out = check.run(string.format("%s studies --deps --dir %s --out-root %s", repro,
  odir, dir .. "/nothing"))
t:eq(code, 0, "bin/repro studies exits 0")
t:eq(out, "b_sweep:\na_tuned: b_sweep\na_after: a_tuned\nc_plain:\n", "bin/repro studies --deps")
code, out = check.run(string.format("%s studies --order --dir %s", repro, odir))
t:eq(out, "b_sweep\na_tuned\na_after\nc_plain\n", "bin/repro studies --order")
-- a file whose name is no study name is skipped, named through the printable filter
check.write(odir .. "/\u{202e}evil.lua", "return {}")
code, out, err = check.run(string.format("%s studies --dir %s", repro, odir))
t:ok(code == 0 and out == "b_sweep\na_tuned\na_after\nc_plain\n" and
  err:find("skipped " .. odir .. "/\\u202eevil.lua: not a study name", 1, true) and
  not (out .. err):find("\u{202e}", 1, true), "studies: a hostile file name skipped, escaped: " .. out .. err)
os.remove(odir .. "/\u{202e}evil.lua")
-- a dependency that is not a study of the folder
write_study(odir, "d_lost", [[ { name = "none", lr = repro.best_lr("nowhere", "none") }, ]])
t:raises(function() order.order(odir, { out_root = dir .. "/nothing" }) end,
  "d_lost.lua needs the study 'nowhere', which has no file " .. odir .. "/nowhere.lua",
  "order: a missing study")
os.remove(odir .. "/d_lost.lua")
-- a cycle
write_study(odir, "b_sweep", [[ { name = "none" }, ]], [[

  depends = { "a_after" },]])
t:raises(function() order.order(odir, {}) end,
  "form a cycle: a_after -> a_tuned -> b_sweep -> a_after", "order: a cycle")
code, out, err = check.run(string.format("%s studies --dir %s", repro, odir))
t:ok(code ~= 0 and err:find("cycle", 1, true), "bin/repro studies fails on a cycle: " .. err)
code, out, err = check.run(string.format("%s studies --bogus", repro))
t:ok(code ~= 0 and err:find("unknown option --bogus", 1, true), "studies: a bad argument")

-- the project's own studies list and order without error
code, out, err = check.run(string.format("%s studies --out-root %s", repro, dir .. "/nothing"))
t:ok(code == 0 and out:find("\n", 1, true), "the project's studies order: " .. tostring(err))

check.rmtree(dir)
t:done()
