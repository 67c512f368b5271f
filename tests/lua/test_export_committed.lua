-- A committed record (experiments/scale/layernorm-L2d64/seed-3: 2 blocks of width 64,
-- 300 steps, LayerNorm after the embedding, tied) is retrained with --keep-model,
-- byte-identical to the committed config.json, log.csv and metrics.json, exported with
-- `bin/repro export-model --format safetensors` and loaded by an independent NumPy forward
-- pass (tests/reference/safetensors_forward.py, no suite code) to its committed val_loss over
-- the whole validation split (871 windows).  test_export_model.lua checks the file format and
-- the kept model's scoring on a tiny run.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"
local t = check.new("test_export_committed")

local h = dofile(host.root .. "/tests/lua/export_helpers.lua")(t)
local repro, sh, export, numpy = h.repro, h.sh, h.export, h.numpy
local tmp = check.tmpdir()
local code, out, err

-- a committed record, retrained with its model
local rec = "experiments/scale/layernorm-L2d64/seed-3"
local rcfg = json.decode(fs.read(host.root .. "/" .. rec .. "/config.json"))
local keys = {}
for k, v in pairs(rcfg) do
  -- JSON's numbers come back as floats: an integral one is written as an integer
  if math.type(v) == "float" and v == math.floor(v) then v = string.format("%d", v) end
  keys[#keys + 1] = k .. "=" .. tostring(v)
end
table.sort(keys)
local again = tmp .. "/committed"
code, out, err = sh(repro .. " train " .. table.concat(keys, " ") .. " --out " .. again ..
  " --keep-model")
t:eq(code, 0, "the committed record retrains with --keep-model: " .. err)
for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
  t:eq(fs.sha256(again .. "/" .. f), fs.sha256(host.root .. "/" .. rec .. "/" .. f),
    f .. " is byte-identical to the committed one")
end
code, out, err = export(again, tmp .. "/committed-export")
t:eq(code, 0, "export of the committed run's kept model: " .. err)
local committed = json.decode(fs.read(host.root .. "/" .. rec .. "/metrics.json"))
local np = numpy(tmp .. "/committed-export")
t:eq(np.windows, 871, "the whole validation split: 871 windows of 128")
t:eq(np.positions, 871 * 128, "111,488 positions scored (the last 51 never)")
t:near(np.val_loss, committed.val_loss, 1e-4 / committed.val_loss,
  "NumPy's val_loss of the committed run's exported model is its committed val_loss")

check.rmtree(tmp)
t:done()
