-- Kept models: `train --keep-model` and a study's `run --keep-model`
-- write the final weights beside the record without changing its config.json, log.csv
-- or metrics.json; `sample` is deterministic; `eval` gives the record's val_loss to 1e-6;
-- a changed, missing or foreign model is refused with a message saying why.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local engine = require "engine"
local t = check.new("test_model")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

-- a small corpus (check.small_corpus: ASCII, with the prompts' bytes): a kept model's
-- checks do not depend on it
local corpus = check.small_corpus(dir .. "/corpus.txt")
local TINY = "iters=12 n_layer=1 d_model=16 n_head=2 context=16 batch=4 warmup=2 diag_every=6 " ..
  "data=" .. q(corpus)
local kept, plain = dir .. "/kept", dir .. "/plain"
local code, _, err = check.run(repro .. " train " .. TINY .. " --out " .. q(kept) .. " --keep-model")
t:eq(code, 0, "train --keep-model: " .. err)
code, _, err = check.run(repro .. " train " .. TINY .. " --out " .. q(plain))
t:eq(code, 0, "train: " .. err)
t:ok(fs.exists(kept .. "/model.rptf"), "the model is beside the record")
t:ok(not fs.exists(plain .. "/model.rptf"), "no model without --keep-model")
for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
  t:eq(fs.read(kept .. "/" .. f), fs.read(plain .. "/" .. f), f .. ": the same bytes with a kept model")
end
local man = json.decode(fs.read(kept .. "/manifest.json"))
t:eq(man.model_sha256, fs.sha256(kept .. "/model.rptf"), "manifest.json has the model's SHA-256")
t:eq(json.decode(fs.read(plain .. "/manifest.json")).model_sha256, nil,
  "no model_sha256 without a model")
code = check.run(repro .. " verify " .. q(kept))
t:eq(code, 0, "a record with a kept model verifies")

-- sample: the same text twice, another with another seed, the prompt first
local function sample(args)
  local c, out, e = check.run(repro .. " sample " .. q(kept) .. " " .. args)
  t:eq(c, 0, "sample " .. args .. ": " .. e)
  return out
end
local a = sample("--prompt 'To be' --n 60 --seed 7")
local b = sample("--prompt 'To be' --n 60 --seed 7")
local c = sample("--prompt 'To be' --n 60 --seed 8")
t:eq(a, b, "the same seed samples the same text")
t:ok(a ~= c, "another seed samples another text")
t:eq(#a, #"To be" + 60 + 1, "the prompt, 60 bytes and a newline")
t:eq(a:sub(1, 5), "To be", "the prompt comes first")
t:eq(sample("--prompt 'To be' --n 30 --temperature 0 --seed 1"),
  sample("--prompt 'To be' --n 30 --temperature 0 --seed 2"), "temperature 0 is the argmax")
t:eq(#sample("--prompt x --n 40 --seed 5"), 42, "a prompt of one byte")
-- the thread count changes nothing
local cfg = json.decode(fs.read(kept .. "/config.json"))
local id = json.decode(fs.read(kept .. "/metrics.json")).config_sha256
cfg.threads = 1
local one = engine.sample(cfg, kept .. "/model.rptf", id, "To be", 60, 7, 1.0)
cfg.threads = 2
t:eq(engine.sample(cfg, kept .. "/model.rptf", id, "To be", 60, 7, 1.0), one,
  "1 and 2 threads sample the same text")
t:eq("To be" .. one .. "\n", a, "the engine's text is what the command prints")
t:raises(function() engine.sample(cfg, kept .. "/model.rptf", string.rep("0", 64), "To", 5, 1, 1.0) end,
  "is the kept model of another config",
  "a model of another config id is refused by the engine, as a kept model")

-- eval: the record's val_loss to 1e-6
local _, out, e2 = check.run(repro .. " eval " .. q(kept) .. " --json")
local ok, ev = pcall(json.decode, out)
t:ok(ok and ev.agrees == true, "eval agrees with the record: " .. out .. e2)
-- a run path that would drive the terminal is printed through the printable filter
local hostile = dir .. "/\u{202e}evil\u{9b}2J"
assert(os.execute("cp -R " .. q(kept) .. " " .. q(hostile)))
local hc, hout, herr = check.run(repro .. " eval " .. q(hostile))
t:ok(hc == 0 and hout:find("/\\u202eevil\\u009b2J (val split, kept model)", 1, true) and
  not (hout .. herr):find("\u{202e}", 1, true) and not (hout .. herr):find("\u{9b}", 1, true),
  "eval prints a hostile run path escaped: " .. hout .. herr)
local rec = json.decode(fs.read(kept .. "/metrics.json"))
t:ok(ok and math.abs(ev.metrics.val_loss - rec.val_loss) <= 1e-6,
  string.format("evaluated val_loss %s, record %s", ok and tostring(ev.metrics.val_loss), rec.val_loss))
t:ok(ok and math.abs(ev.metrics.val_acc - rec.val_acc) <= 1e-9, "val_acc too")
code, _, err = check.run(repro .. " eval " .. q(kept) .. " --split test")
t:ok(code == 1 and err:find("the splits are: val", 1, true), "an unknown split is named: " .. err)
code, _, err = check.run(repro .. " eval " .. q(kept) .. " --tasks basic")
t:ok(code == 1 and err:find("--tasks", 1, true), "--tasks says it is not there yet: " .. err)
-- a suite's task files are checked before any model is read: a record without one is
-- refused for the files first
code, _, err = check.run(repro .. " eval " .. q(plain) .. " --tasks core")
t:ok(code == 1 and err:find("suite core: ", 1, true) and err:find("is missing: run `bin/repro " ..
  "tasks build core", 1, true), "eval --tasks checks the task files before the model: " .. err)

-- refusals: no model, a changed model, a model of another run, a bad prompt
code, _, err = check.run(repro .. " sample " .. q(plain))
t:ok(code == 1 and err:find("has no kept model", 1, true) and err:find("--keep-model", 1, true),
  "a record without a model says how to get one: " .. err)
code, _, err = check.run(repro .. " sample " .. q(kept) .. " --prompt 'é'")
t:ok(code == 1 and err:find("--prompt: its character \"é\" (byte 1 of the prompt, 0xc3) is not " ..
  "in the vocabulary of corpus corpus", 1, true), "a prompt byte outside the vocabulary, named: " .. err)
-- checked before the model is read: a record without one is refused for its prompt first
code, _, err = check.run(repro .. " sample " .. q(plain) .. " --prompt 'To ~'")
t:ok(code == 1 and err:find("--prompt: its character \"~\" (byte 4", 1, true),
  "the prompt is checked before any model is read: " .. err)
code, _, err = check.run(repro .. " sample " .. q(kept) .. " --n -1")
t:ok(code == 1 and err:find("--n needs an integer >= 0", 1, true), "--n -1: " .. err)
local other = dir .. "/other"
code, _, err = check.run(repro .. " train " .. TINY .. " seed=2 --out " .. q(other) .. " --keep-model")
t:eq(code, 0, "a second kept model: " .. err)
local bytes = fs.read(kept .. "/model.rptf")
local f = assert(io.open(kept .. "/model.rptf", "wb"))
f:write(fs.read(other .. "/model.rptf"))
f:close()
code, _, err = check.run(repro .. " eval " .. q(kept))
t:ok(code == 1 and err:find("manifest.json recorded", 1, true), "another run's model is refused: " .. err)
f = assert(io.open(kept .. "/model.rptf", "wb"))
f:write(bytes:sub(1, -2) .. string.char((bytes:byte(-1) + 1) % 256))
f:close()
code, _, err = check.run(repro .. " sample " .. q(kept))
t:ok(code == 1 and err:find("manifest.json recorded", 1, true), "a changed model is refused: " .. err)
f = assert(io.open(kept .. "/model.rptf", "wb"))
f:write(bytes)
f:close()
t:eq(sample("--prompt 'To be' --n 60 --seed 7"), a, "restored, it samples the same text")

-- a study's runs keep theirs with run --keep-model (and not without)
local S = dir .. "/keep.lua"
check.write(S, [[
return { name = "keep", description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 6, warmup = 1,
    data = "]] .. corpus .. [[" },
  variants = { { name = "a" }, { name = "b", dropout = 0.1 } },
  seeds = { 1, 2 },
  analysis = { baseline = "a", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]])
code, _, err = check.run(repro .. " run " .. q(S) .. " --keep-model --only variant=a,seed=1 --out-root " .. q(dir .. "/o"))
t:eq(code, 0, "run --keep-model: " .. err)
t:ok(fs.exists(dir .. "/o/keep/a/seed-1/model.rptf"), "run --keep-model keeps the run's model")
code, _, err = check.run(repro .. " run-one " .. q(S) .. " --only variant=b,seed=1 --out-root " .. q(dir .. "/o"))
t:eq(code, 0, "run-one: " .. err)
t:ok(not fs.exists(dir .. "/o/keep/b/seed-1/model.rptf"), "no model without --keep-model")
code, _, err = check.run(repro .. " run-one " .. q(S) .. " --keep-model --only variant=b,seed=2 --out-root " .. q(dir .. "/o"))
t:ok(code == 0 and fs.exists(dir .. "/o/keep/b/seed-2/model.rptf"), "run-one --keep-model: " .. err)
-- a finished run without a model is reused, not retrained, and said so
code, _, err = check.run(repro .. " run " .. q(S) .. " --keep-model --only variant=b,seed=1 --out-root " .. q(dir .. "/o"))
t:ok(code == 0 and err:find("1 finished run has no kept model (b/seed-1)", 1, true) and
  not fs.exists(dir .. "/o/keep/b/seed-1/model.rptf"), "a reused run without a model is named: " .. err)
t:done()
