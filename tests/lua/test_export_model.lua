-- Kept models leave the suite.  A tiny run with every kind of tensor an export
-- names (embed_norm = scale, so its constant; an untied output layer) is trained with
-- --keep-model and a task suite; then:
--   * model.rptf stores rho and the scale's constant (the model is rebuilt from the file);
--   * `bin/repro eval RUN --tasks core` scores the kept model with the run's own numbers
--     (every task metric of metrics.json, and tasks.csv byte for byte);
--   * tasks.score_file(cfg, file, {checkpoint = model.rptf, config_id}) scores it too, as
--     DESIGN.md says, and a wrong config id is a user error naming the file;
--   * `bin/repro export-model RUN --format safetensors` writes a safetensors file (8-byte
--     little-endian header length, JSON header padded to 8 bytes, F32 tensors whose
--     data_offsets tile the data) and config.json, which an independent NumPy forward pass
--     (tests/reference/safetensors_forward.py, no suite code) loads to the run's val_loss;
--   * hostile model files, their manifest resealed (its checksums are unkeyed), are refused
--     by export-model, eval and sample alike with a message naming the record's model.rptf
--     and what is wrong, nothing exported: a second params tensor (a reader taking the last
--     exported other weights than eval evaluated), a second tensor of another name, 32
--     bytes of dims whose product wraps, a sparse file of 1 GiB (refused from its size, the
--     peak RSS small), trailing bytes, a truncated header; the engine's own entry points
--     (evaluate, score_tasks) refuse them too;
-- tests/lua/test_export_committed.lua does the same for a committed record.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"
local tasks = require "repro.tasks"
local engine = require "engine"
local t = check.new("test_export_model")

local h = dofile(host.root .. "/tests/lua/export_helpers.lua")(t)
local repro, sh, export, numpy = h.repro, h.sh, h.export, h.numpy
local tmp = check.tmpdir()
local code, out, err

-- the tiny run
local run = tmp .. "/tiny"
code, out, err = sh(repro .. " train n_layer=2 d_model=16 n_head=2 context=32 batch=4 " ..
  "iters=6 warmup=1 diag_every=3 diag_windows=2 embed_norm=scale tie_embeddings=false " ..
  "tasks=core --out " .. run .. " --keep-model")
t:eq(code, 0, "the tiny run trains and keeps its model: " .. err)
local metrics = json.decode(fs.read(run .. "/metrics.json"))
local model_bytes = fs.read(run .. "/model.rptf") or ""
t:ok(model_bytes:find("embed_scale", 1, true) and model_bytes:find("embed_rms", 1, true),
  "model.rptf stores rho and the scale's constant")
local read = engine.read_model(json.decode(fs.read(run .. "/config.json")),
  run .. "/model.rptf", metrics.config_sha256)
t:near(read.embed_scale, metrics.embed_scale, 1e-12,
  "the constant the engine reads is the run's embed_scale (metrics.json: 14 digits)")

-- the train command's last line carries every metric its metrics.json holds
local last = out:match("([^\n]+)\n*$") or ""
local ok_line, line = pcall(json.decode, last)
local missing = {}
for name in pairs(metrics) do
  if not (ok_line and type(line) == "table" and line[name] ~= nil) then
    missing[#missing + 1] = name
  end
end
table.sort(missing)
t:eq(table.concat(missing, ", "), "", "train's final JSON line holds every metric of " ..
  "metrics.json (task metrics included)")

-- eval --tasks: the run's own numbers
code, out, err = sh(repro .. " eval " .. run .. " --tasks core")
t:eq(code, 0, "eval --tasks core agrees with the record: " .. err .. out)
t:ok(out:find("task_macro_acc_0shot", 1, true) and
  out:find("every item as in the run's tasks.csv", 1, true), "it prints the task metrics " ..
  "and compares tasks.csv: " .. out)
code, out, err = sh(repro .. " eval " .. run .. " --tasks core --json")
local ev = code == 0 and json.decode(out) or {}
local differ = {}
for name, v in pairs(metrics) do
  if name:match("^task_") and (type(ev.metrics) ~= "table" or ev.metrics[name] == nil or
      math.abs(ev.metrics[name] - v) > 1e-12) then
    differ[#differ + 1] = name
  end
end
t:eq(#differ, 0, "every task metric of metrics.json, evaluated again: " ..
  table.concat(differ, ", "))
t:eq(ev.agrees, true, "eval --json says it agrees")
code, out, err = sh(repro .. " eval " .. run .. " --tasks nosuch")
t:ok(code ~= 0 and err:find("no such task suite", 1, true), "an unknown suite is named: " .. err)

-- tasks.score_file on the kept model, as docs/COMMANDS.md documents it
local cfg = json.decode(fs.read(run .. "/config.json"))
local file = host.root .. "/tasks/tinyshakespeare/completion-v1.jsonl"
local r = tasks.score_file(cfg, file, { checkpoint = run .. "/model.rptf",
  config_id = metrics.config_sha256 })
t:eq(r[1].acc, metrics.task_completion_0shot_acc, "score_file on model.rptf: the run's 0-shot")
t:eq(r[2].acc, metrics.task_completion_3shot_acc, "and 3-shot accuracy")
t:raises(function()
  tasks.score_file(cfg, file, { checkpoint = run .. "/model.rptf", config_id = string.rep("a", 64) })
end, "model.rptf is the kept model of another config",
  "a kept model of another config: a user error naming the file")

-- export, read back as a safetensors reader does
code, out, err = export(run, tmp .. "/tiny-export")
t:eq(code, 0, "export-model: " .. err)
local st = fs.read(tmp .. "/tiny-export/model.safetensors") or ""
local n = #st >= 8 and string.unpack("<I8", st) or 0
t:eq(n % 8, 0, "the header is padded to a multiple of 8 bytes")
local ok_h, header = pcall(json.decode, st:sub(9, 8 + n))
t:ok(ok_h and type(header) == "table", "the header is JSON")
header = ok_h and header or {}
local spans, names = {}, {}
for name, info in pairs(header) do
  if name ~= "__metadata__" then
    names[name] = true
    t:ok(info.dtype == "F32", name .. " is F32")
    local size = 4
    for _, d in ipairs(info.shape) do size = size * d end
    t:eq(info.data_offsets[2] - info.data_offsets[1], size, name .. ": its offsets fit its shape")
    spans[#spans + 1] = info.data_offsets
  end
end
table.sort(spans, function(a, b) return a[1] < b[1] end)
local tiled = #spans > 0 and spans[1][1] == 0
for i = 2, #spans do tiled = tiled and spans[i][1] == spans[i - 1][2] end
t:ok(tiled and spans[#spans][2] == #st - 8 - n, "the tensors tile the data, no gap or overlap")
t:eq(type(header.__metadata__) == "table" and header.__metadata__.format, "pt",
  "__metadata__ is a string map")
for _, want in ipairs({ "transformer.wte.weight", "transformer.wpe.weight",
  "transformer.h.0.ln_1.weight", "transformer.h.1.attn.c_attn.weight",
  "transformer.h.1.attn.c_proj.bias", "transformer.h.0.ln_2.bias",
  "transformer.h.0.mlp.c_fc.weight", "transformer.h.1.mlp.c_proj.weight",
  "transformer.ln_f.weight", "lm_head.weight" }) do
  t:ok(names[want], "the export names " .. want)
end
local ecfg = json.decode(fs.read(tmp .. "/tiny-export/config.json") or "{}")
t:eq(ecfg.embed_norm and ecfg.embed_norm.embed_scale, metrics.embed_scale,
  "config.json gives the scale's constant")
t:eq(ecfg.tie_word_embeddings, false, "and says the output layer is untied")
t:eq(ecfg.vocab_size, 65, "the vocabulary")

-- the independent NumPy forward pass
local np = numpy(tmp .. "/tiny-export")
t:near(np.val_loss, metrics.val_loss, 1e-4 / metrics.val_loss,
  "NumPy's val_loss of the exported tiny model is the run's")

-- hostile model files
local record = require "repro.record"
local sys = require "repro.sys"
local good = fs.read(run .. "/model.rptf")
local ntensors = string.unpack("<I4", good, 9)
local function tensor(name, dtype, dims, data)
  local t = { string.pack("<I4", #name), name, string.pack("<I4I4", dtype, #dims) }
  for _, d in ipairs(dims) do t[#t + 1] = string.pack("<I4", d) end
  t[#t + 1] = data
  return table.concat(t)
end
local function plus(extra) -- good with one more tensor
  return good:sub(1, 8) .. string.pack("<I4", ntensors + 1) .. good:sub(13) .. extra
end
local params_at = good:find("params", 1, true)
local hostile = {
  { "a second params tensor (other weights)", plus(tensor("params", 0, { metrics.params },
    string.rep(string.pack("<f", 0.5), metrics.params))),
    "more than a kept model of this config takes" },
  { "a second embed_rms (another rho)", plus(tensor("embed_rms", 2, { 1 }, string.pack("<d", 1))),
    "tensor 'embed_rms' appears twice" },
  { "32 bytes: an empty name, 2 dims of 2^32 - 1", "RPTF" ..
    string.pack("<I4I4I4I4I4I4I4", 1, 1, 0, 0, 2, 0xffffffff, 0xffffffff), "name length 0" },
  { "33 bytes: 2 dims of 2^32 - 1, whose byte count wraps", "RPTF" ..
    string.pack("<I4I4I4", 1, 1, 1) .. "w" .. string.pack("<I4I4I4I4", 0, 2, 0xffffffff,
    0xffffffff), "tensor 'w' (at byte 12) claims more data than the 0 bytes left" },
  { "trailing bytes", good .. "junk", "4 trailing bytes after the last tensor" },
  { "a truncated file header", good:sub(1, 10), "truncated header: 10 bytes" },
  { "a truncated tensor header", good:sub(1, params_at + 2),
    "truncated: the name of tensor 2 (at byte " .. (params_at - 5) .. ") runs past the end" },
  { "a sparse file of 1 GiB", "sparse", "1073741824 bytes, more than a kept model of this " ..
    "config takes" },
}
local cfg_run = json.decode(fs.read(run .. "/config.json"))
local time_v = sys.stat("/usr/bin/time") and "/usr/bin/time -v " or ""
for i, h in ipairs(hostile) do
  local what, bytes, says = h[1], h[2], h[3]
  local dir = string.format("%s/hostile-%d", tmp, i)
  os.execute("cp -a " .. fs.quote(run) .. " " .. fs.quote(dir))
  local model = dir .. "/model.rptf"
  if bytes == "sparse" then
    os.execute("truncate -s 1G " .. fs.quote(model))
  else
    check.write(model, bytes)
  end
  local man = json.decode(fs.read(dir .. "/manifest.json"))
  man.model_sha256 = sys.sha256_file(model, true)
  check.write(dir .. "/manifest.json", record.manifest_text(man))
  for _, cmd in ipairs({ "export-model " .. dir .. " --format safetensors --out " .. dir .. "-x",
      "eval " .. dir, "sample " .. dir .. " --n 5" }) do
    local c, o, e = sh(time_v .. "env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}" ..
      "quarantine_size_mb=8 " .. repro .. " " .. cmd)
    local name = cmd:match("^%S+")
    t:ok(c == 1 and e:find(model .. ": ", 1, true) and e:find(says, 1, true) and
      not e:find("traceback", 1, true), string.format("%s: %s refuses it, naming the file " ..
      "and '%s': %s", what, name, says, e:match("[^\n]*repro [^\n]*") or e .. o))
    local rss_kb = tonumber(e:match("Maximum resident set size %(kbytes%): (%d+)") or "")
    if bytes == "sparse" and rss_kb then
      t:ok(rss_kb < 256 * 1024, string.format("%s: %s never reads it (peak RSS %.0f MiB)",
        what, name, rss_kb / 1024))
    end
  end
  t:ok(not fs.exists(dir .. "-x"), what .. ": nothing exported")
  -- the engine's entry points: the C reader alone, without the host's checks
  local ok, err = pcall(engine.evaluate, cfg_run, model, metrics.config_sha256)
  t:ok(not ok and tostring(err):find(model .. ": ", 1, true), what ..
    ": engine.evaluate refuses it, naming the file: " .. tostring(err))
  ok, err = pcall(engine.score_tasks, cfg_run, {}, { checkpoint = model,
    config_id = metrics.config_sha256 })
  t:ok(not ok and tostring(err):find(model .. ": ", 1, true), what ..
    ": engine.score_tasks refuses it, naming the file: " .. tostring(err))
  os.execute("rm -rf " .. fs.quote(dir))
end

-- a committed record retrained with its model and loaded by NumPy:
-- tests/lua/test_export_committed.lua (a file of its own, run beside this one)

check.rmtree(tmp)
t:done()
