-- Bad inputs for tests/lua/test_bad_inputs.lua: each is refused with the exit status and
-- a message containing `says`, no traceback, and nothing written (every file under the
-- case's directory and the shared fixtures is unchanged).
--
--   { name, args, exit, says, study = source, study_name = "s", files = {name = text},
--     setup = "record-edit" }
-- args follow `bin/repro`, run in the case's directory with REPRO_EXPERIMENTS=<case>/exp.
-- Placeholders in args and study: {F} shared fixtures dir, {C} the corpus, {T} a tiny
-- config on it (key=value words: {M}, the model and budget, then data={C}), {S} the
-- case's study file, {N} its name, {A} the
-- analysis table of a valid study.  The case directory holds a copy of: good.lua (a
-- valid study named good), rec/ (a finished record of {T} with checksums), badrec/
-- (rec with one digit of metrics.json changed), nolog/ (rec without log.csv), exp/good/
-- (good.lua's records and summary), afile (a plain file).
local STUDY = [[
return {
  name = "{N}",
  description = "a bad input",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, data = "{C}" },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm",
    embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = {A},
}
]]

-- A valid study with one change: `old` replaced by `new` in STUDY.
local function study(old, new)
  local s, n = STUDY:gsub(old:gsub("%p", "%%%0"), (new:gsub("%%", "%%%%")))
  assert(n == 1, "bad_inputs.lua: no '" .. old .. "' in the study template")
  return s
end

-- A study whose file is only `code` (before any table is returned).
local function code(c) return c .. "\n" .. STUDY end

local cases = {
  -- the command line
  { "unknown command", "bogus", 1, "unknown command 'bogus'" },
  { "no arguments", "", 2, "usage:" },
  { "train: unknown option", "train --bogus", 1, "unknown option --bogus" },
  { "train: not key=value", "train lr", 1, "config: expected key=value, got 'lr'" },
  { "train: unknown key", "train nosuch=1", 1, "unknown config key 'nosuch'" },
  { "train: key given twice", "train lr=1e-3 lr=2e-3", 1,
    "lr is given twice (lr=1e-3 and lr=2e-3)" },
  { "train: --out twice", "train {T} --out a --out b", 1, "--out is given twice" },
  { "train: --out without a value", "train {T} --out", 1, "--out needs a directory" },
  { "train: negative --checkpoint-every", "train {T} --out r --checkpoint-every -5", 1,
    "--checkpoint-every needs an integer >= 1, got -5" },
  { "train: zero --checkpoint-every", "train {T} --out r --checkpoint-every 0", 1,
    "--checkpoint-every needs an integer >= 1, got 0" },
  { "train: --checkpoint-every not a number", "train {T} --out r --checkpoint-every x", 1,
    "--checkpoint-every needs an integer >= 1, got x" },
  { "train: --checkpoint-every twice",
    "train {T} --out r --checkpoint-every 2 --checkpoint-every 3",
    1, "--checkpoint-every is given twice" },
  { "train: --checkpoint-every without --out", "train {T} --checkpoint-every 2", 1,
    "--checkpoint-every needs --out" },
  { "train: --force without --out", "train {T} --force", 1, "--force needs --out" },

  -- config values
  { "config: fractional integer", "train n_layer=2.5", 1, "n_layer=2.5: expected an integer" },
  { "config: not a number", "train lr=abc", 1, "config: lr=abc: expected a number" },
  { "config: nan", "train lr=nan", 1, "lr=nan: expected a number" },
  { "config: infinite", "train lr=1e999", 1, "config: lr=inf: must be finite" },
  { "config: negative lr", "train lr=-1", 1, "config: lr=-1" },
  { "config: zero lr", "train lr=0", 1, "config: lr=0" },
  { "config: heads do not divide", "train n_head=3", 1, "config: n_head=3" },
  { "config: negative width", "train d_model=-4", 1, "config: d_model=-4" },
  { "config: zero iterations", "train iters=0", 1, "config: iters=0" },
  { "config: negative seed", "train seed=-3", 1, "config: seed=-3: must be >= 0" },
  { "config: negative threads", "train threads=-1", 1, "config: threads=-1" },
  { "config: dropout 1", "train dropout=1", 1, "config: dropout=1" },
  { "config: unknown embed_norm", "train embed_norm=batchnorm", 1, "embed_norm=batchnorm" },
  { "config: warmup above iters", "train warmup=400", 1, "config: warmup=400" },
  { "config: negative init std", "train embed_init_std=-1", 1, "embed_init_std=-1" },
  { "config: empty data path", "train data=", 1, "config: data" },
  { "config: context longer than the corpus", "train data={F}/small.txt", 1,
    "context=128: must be shorter than both splits" },

  -- the corpus
  { "corpus: /dev/zero", "train {M} data=/dev/zero", 1,
    "corpus: data=/dev/zero: not a regular file" },
  { "corpus: a directory", "train {M} data={F}", 1, "not a regular file (a directory)" },
  { "corpus: a FIFO", "train {M} data={F}/fifo", 1,
    "not a regular file (a device, pipe or socket)" },
  { "corpus: missing", "train {M} data={F}/nonexistent.txt", 1,
    "corpus: data={F}/nonexistent.txt: cannot open corpus" },
  { "corpus: empty", "train {M} data={F}/empty.txt", 1, "corpus too small (0 bytes)" },
  { "corpus: one distinct byte", "train {M} data={F}/one.txt", 1,
    "1 distinct byte: a character-level model needs a vocabulary of at least 2" },
  { "corpus: oversized", "train {M} data={F}/big.txt", 1,
    "more than the 256 MiB a corpus may have" },
  { "corpus: in a study", "run {S}", 1, "not a regular file", study = study("{C}", "/dev/zero") },

  -- records and the filesystem
  { "record: finished with another config", "train {T} lr=1e-3 --out rec", 1,
    "rec holds a finished run of another config (lr 0.0003 -> 0.001, min_lr 3e-05 -> 0.0001)" },
  { "record: finished with several keys changed", "train {M} iters=5 data={C} lr=1e-3 --out rec", 1,
    "iters 4 -> 5, lr 0.0003 -> 0.001" },
  { "filesystem: --out is a file", "train {T} --out afile", 1,
    "filesystem: --out afile exists and is not a directory" },
  { "filesystem: --out under a file", "train {T} --out afile/sub", 1,
    "filesystem: cannot create directory afile: Not a directory" },
  { "verify: a changed metrics.json", "verify badrec", 1,
    "MISMATCH     badrec: metrics.json: SHA-256" },
  { "verify: a deleted log.csv", "verify nolog", 1, "MISMATCH     nolog: log.csv: missing" },
  { "verify: no such directory", "verify {F}/none", 1, "filesystem: {F}/none: no such directory" },
  { "verify: a file", "verify afile", 1, "verify: filesystem: afile: not a directory" },
  { "verify: unknown option", "verify --bogus", 1, "repro verify: unknown option --bogus" },

  -- run's command line
  { "run: no study", "run", 1, "usage: bin/repro run" },
  { "run: two studies", "run good.lua good.lua", 1, "one study file at a time" },
  { "run: --jobs 0", "run good.lua --jobs 0", 1, "--jobs needs an integer >= 1, got 0" },
  { "run: negative --jobs", "run good.lua --jobs -2", 1, "--jobs needs an integer >= 1, got -2" },
  { "run: --jobs twice", "run good.lua --jobs 1 --jobs 2", 1, "--jobs is given twice" },
  { "run: --out-root twice", "run good.lua --out-root a --out-root b", 1,
    "--out-root is given twice" },
  { "run: --only unknown variant", "run good.lua --only variant=nope", 1,
    "--only variant=nope: the study has no such variant" },
  { "run: --only unknown seed", "run good.lua --only seed=99", 1,
    "--only seed=99: not one of the study's seeds" },
  { "run: --only negative seed", "run good.lua --only seed=-1", 1, "--only seed=-1" },
  { "run: --only unknown key", "run good.lua --only color=red", 1,
    "--only expects variant=V,seed=S, got 'color=red'" },
  { "run: --only variant twice", "run good.lua --only variant=none,variant=layernorm", 1,
    "--only variant=none,variant=layernorm: variant is given twice" },
  { "run: --set key twice", "run good.lua --set lr=1e-3,lr=2e-3", 1, "lr is given twice" },
  { "run: --set key twice across flags", "run good.lua --set lr=1e-3 --set lr=2e-3", 1,
    "lr is given twice" },
  { "run: --set seed", "run good.lua --set seed=3", 1,
    "--set.seed: seed cannot be set in a study" },
  { "run: --set unknown key", "run good.lua --set nosuch=1", 1, "unknown config key 'nosuch'" },
  { "run: --set bad value", "run good.lua --set n_head=3", 1, "--set n_head" },
  { "run: unknown option", "run good.lua --bogus", 1, "unknown option --bogus" },
  { "run: a finished record of another config", "run {S}", 1,
    "none/seed-1 (lr 0.0003 -> 0.001, min_lr 3e-05 -> 0.0001)", study_name = "good", study = study("warmup = 1,",
      "warmup = 1, lr = 1e-3,") },
  { "run: a records folder of another study file", "run {S} --out-root {F}/owned", 1,
    "belongs to the study", study_name = "good" , study = STUDY },

  -- study files: the file
  { "study: missing", "run nonexistent.lua", 1,
    "study: nonexistent.lua: cannot read the study file" },
  { "study: a directory", "run {F}", 1, "not a regular file (a directory)" },
  { "study: a device", "run /dev/null", 1, "study: /dev/null: not a regular file" },
  { "study: too large", "run {F}/huge.lua", 1, "more than the 1 MiB a study file may have" },
  { "study: a binary chunk", "run {F}/binary.lua", 1, "attempt to load a binary chunk" },
  { "study: syntax error", "run {S}", 1, "study: s.lua:1:", study = "return { name = = 1 }\n" },
  { "study: runtime error", "run {S}", 1, "attempt to concatenate a nil value",
    study = code("local x = nil .. 'a'") },
  { "study: error with a table", "run {S}", 1,
    "raised an error value that is not a message (a table)", study = code("error({ 1, 2 })") },
  { "study: error with a __tostring loop", "run {S}", 1, "not a message (a table)",
    study = code("error(setmetatable({}, { __tostring = function() while true do end end }))") },
  { "study: returns a number", "run {S}", 1, "must return a table, got number",
    study = "return 42\n" },
  { "study: returns nothing", "run {S}", 1, "must return a table, got nil",
    study = "local x = 1\n" },
  { "study: name is not the file name", "run {S}", 1,
    "name: \"other\" differs from the file name \"s\"", study = study('"{N}"', '"other"') },
  { "study: name of another study", "run {S}", 1, "is already the name of the study",
    study_name = "prelim", study = STUDY },
  { "study: unknown field", "run {S}", 1, "colour: unknown field",
    study = study('description', 'colour = "red", description') },
  { "study: negative seed", "run {S}", 1, "expected an integer >= 0, got -1",
    study = study("seeds = { 1, 2 }", "seeds = { -1 }") },
  { "study: unknown config key", "run {S}", 1, "variants[1].embed_nrom: unknown config key",
    study = study('{ name = "none", embed_norm', '{ name = "none", embed_nrom') },
  { "study: too many seeds", "run {S}", 1, "100000 seeds, more than the 100 a study may have",
    study = study("seeds = { 1, 2 }", "seeds = (function() local t = {} for i = 1, 100000 do " ..
      "t[i] = i end return t end)()") },
  { "study: too many runs", "run {S}", 1, "= 1200 runs, more than the 1000",
    study = study("seeds = { 1, 2 }",
      "seeds = (function() local t = {} for i = 1, 100 do t[i] = i " ..
      "end return t end)(), variants = (function() local t = {} for i = 1, 12 do t[i] = " ..
      "{ name = 'v' .. i } end return t end)()") },

  -- study files: the sandbox
  { "sandbox: endless loop", "run {S}", 1, "exceeded the limit of 100000000 Lua instructions",
    study = code("while true do end") },
  { "sandbox: endless loop under pcall", "run {S}", 1,
    "exceeded the limit of 100000000 Lua instructions",
    study = code("while true do pcall(function() while true do end end) end") },
  { "sandbox: a 1 GiB string", "run {S}", 1, "exceeded the 256 MiB memory limit",
    study = code("local s = string.rep('x', 1 << 30)") },
  { "sandbox: memory error caught by pcall", "run {S}", 1, "exceeded the 256 MiB memory limit",
    study = code("pcall(string.rep, 'x', 1 << 30)") },
  { "sandbox: os", "run {S}", 1, "attempt to index a nil value (global 'os')",
    study = code("os.execute('touch {F}/pwned')") },
  { "sandbox: io", "run {S}", 1, "attempt to index a nil value (global 'io')",
    study = code("io.open('{F}/pwned', 'w')") },
  { "sandbox: require", "run {S}", 1, "attempt to call a nil value (global 'require')",
    study = code("local e = require('engine')") },
  { "sandbox: load", "run {S}", 1, "attempt to call a nil value (global 'load')",
    study = code("load('return 1')()") },
  { "sandbox: dofile", "run {S}", 1, "attempt to call a nil value (global 'dofile')",
    study = code("dofile('{F}/huge.lua')") },
  { "sandbox: string.dump", "run {S}", 1, "attempt to call a nil value (field 'dump')",
    study = code("string.dump(function() end)") },
  { "sandbox: debug", "run {S}", 1, "attempt to index a nil value (global 'debug')",
    study = code("debug.getregistry()") },
  { "sandbox: collectgarbage", "run {S}", 1,
    "attempt to call a nil value (global 'collectgarbage')",
    study = code("collectgarbage('stop')") },
  { "sandbox: coroutine", "run {S}", 1, "attempt to index a nil value (global 'coroutine')",
    study = code("coroutine.wrap(function() end)()") },
  { "sandbox: package", "run {S}", 1, "attempt to index a nil value (global 'package')",
    study = code("package.loaded.os.execute('true')") },
  { "sandbox: math.random", "run {S}", 1, "attempt to call a nil value (field 'random')",
    study = code("local x = math.random()") },
  { "sandbox: unknown api", "run {S}", 1, "repro.nosuch: no such function",
    study = code("repro.nosuch()") },
  { "sandbox: a function in the result", "run {S}", 1,
    "base.f: a function cannot cross to the host", study = study("warmup = 1,",
      "warmup = 1, f = function() end,") },
  { "sandbox: a cycle in the result", "run {S}", 1, "a cycle cannot cross to the host",
    study = study("seeds = { 1, 2 }",
      "seeds = { 1, 2 }, loop = (function() local t = {} t.t = t " ..
      "return t end)()") },
  { "sandbox: nested too deep", "run {S}", 1, "tables nested deeper than 64 levels",
    study = study("seeds = { 1, 2 }", "seeds = { 1, 2 }, deep = (function() local t = {} " ..
      "for i = 1, 100 do t = { t } end return t end)()") },
}
cases.TEMPLATE = STUDY
return cases
