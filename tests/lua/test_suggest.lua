-- "Did you mean": one function, base.suggest, wherever a name is
-- typed: key=value and --set, --only, options and commands, compare --metrics, export
-- --columns, study files.  Checked on the command line.
local check = require "check"
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local t = check.new("test_suggest")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

t:eq(base.suggest("dropuot", { "dropout", "lr" }), " (did you mean 'dropout'?)", "a list")
t:eq(base.suggest("dropuot", { dropout = true, lr = true }), " (did you mean 'dropout'?)", "a set")
t:eq(base.suggest("zzzzzzzz", { "dropout", "lr" }), "", "nothing close: no suggestion")
local list = { "b", "a" }
base.suggest("c", list)
t:eq(list[1], "b", "the caller's list is left in its order")

local S = dir .. "/sug.lua"
-- the records compare and export read: a small corpus (check.small_corpus)
local corpus = check.small_corpus(dir .. "/corpus.txt")
check.write(S, [[
return { name = "sug", description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4, warmup = 1,
    diag_every = 2, data = "]] .. corpus .. [[" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]])
local out_root = " --out-root " .. q(dir .. "/o")
local cases = {
  { "train dropuot=0.1", "unknown config key 'dropuot' (did you mean 'dropout'?)" },
  { "train --keep-modle", "unknown option --keep-modle (did you mean '--keep-model'?)" },
  { "run " .. q(S) .. " --set dropuot=0.1 --dry-run", "(did you mean 'dropout'?)" },
  { "plan " .. q(S) .. " --set itres=3", "(did you mean 'iters'?)" },
  { "run " .. q(S) .. " --only varaint=none --dry-run", "(did you mean 'variant'?)" },
  { "run " .. q(S) .. " --only variant=layernrom --dry-run" .. out_root, "(did you mean 'layernorm'?)" },
  { "run " .. q(S) .. " --jbos 2", "unknown option --jbos (did you mean '--jobs'?)" },
  { "run-one " .. q(S) .. " --only variant=none,seed=1 --thread 1", "(did you mean '--threads'?)" },
  { "status " .. q(S) .. " --ony variant=none", "(did you mean '--only'?)" },
  { "samlpe x", "unknown command 'samlpe' (did you mean 'sample'?)" },
  { "eval x --jsno", "(did you mean '--json'?)" },
  { "compare --metrics val_los " .. q(dir .. "/o/sug"), "unknown metric 'val_los' (did you mean 'val_loss'?)" },
  { "export --curves --columns val_los " .. q(dir .. "/o/sug"), "(did you mean 'val_loss'?)" },
}
-- compare and export need a finished study: two runs of it
local code, _, err = check.run(repro .. " run " .. q(S) .. " --only variant=none,seed=1" .. out_root)
t:eq(code, 0, "a run for compare and export: " .. err)
for _, c in ipairs(cases) do
  local rc, _, e = check.run(repro .. " " .. c[1])
  t:ok(rc == 1 and e:find(c[2], 1, true), c[1] .. ": " .. e)
end
-- export --columns val_loss is the alias of d_val_loss (log.csv keeps its names)
local _, a = check.run(repro .. " export --curves --columns val_loss " .. q(dir .. "/o/sug"))
local _, b = check.run(repro .. " export --curves --columns d_val_loss " .. q(dir .. "/o/sug"))
t:ok(a == b and select(2, a:gsub("\n", "")) > 1, "--columns val_loss selects d_val_loss: " .. a)
t:done()
