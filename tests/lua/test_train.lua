-- The engine binding and `bin/repro train`: defaults, records, byte-identical results
-- for any thread count, errors that name the key and write nothing.
local check = require "repro.check"
local engine = require "engine"
local fs = require "repro.fs"
local t = check.new("test_train")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()

local d = engine.defaults()
t:eq(d.n_layer, 8, "default n_layer")
t:eq(d.embed_norm, "none", "default embed_norm")
t:eq(d.embed_init_std, 0.02, "default embed_init_std")
t:eq(engine.param_count({}), 1611136, "default parameter count")
t:eq(engine.param_count({ embed_norm = "layernorm" }), 1611136 + 256, "layernorm adds 256")
t:eq(engine.param_count({ embed_norm = "rmsnorm" }), 1611136 + 128, "rmsnorm adds 128")

local tiny = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 iters=12 warmup=2 dropout=0.1 diag_every=4 diag_windows=3"
local function train(args, out)
  return check.run(repro .. " train " .. args .. (out and (" --out " .. out) or ""))
end

local code, out, err = train(tiny .. " threads=1", dir .. "/a")
t:eq(code, 0, "train --out exits 0: " .. err)
local ok, summary = pcall(require("cjson").decode, out)
t:ok(ok and summary.val_ppl and summary.params and summary.tokens_per_s, "stdout is one JSON line")
for _, f in ipairs({ "config.json", "manifest.json", "log.csv", "metrics.json" }) do
  t:ok(fs.exists(dir .. "/a/" .. f), "record has " .. f)
end
local log = fs.read(dir .. "/a/log.csv") or ""
local n = 0
for _ in log:gmatch("\n") do n = n + 1 end
t:eq(n, 13, "log.csv: header + one row per step")
t:ok(not fs.read(dir .. "/a/metrics.json"):find("tokens_per_s"), "no timings in metrics.json")
local mj = require("cjson").decode(fs.read(dir .. "/a/metrics.json"))
for _, k in ipairs({ "ece", "brier", "acc_macro", "acc_letter", "temp_opt", "nll_temp_1",
  "nll_temp_0_5", "logit_norm", "max_logit", "cos_first", "cos_final", "embed_norm_letter" }) do
  t:ok(type(mj[k]) == "number", "metrics.json has " .. k)
end
t:ok(#mj.resid_norm == 2 and #mj.loss_by_position == 16 and #mj.reliability.count == 15,
  "metrics.json has resid_norm (L+1), loss_by_position (T), reliability (15 bins)")
t:ok(mj.nll_temp_opt <= mj.nll_temp_1 + 1e-12, "optimal temperature is no worse than 1")
local header = log:match("^[^\n]*")
t:eq(header, table.concat(engine.log_columns({ n_layer = 1, d_model = 16, n_head = 2 }), ","),
  "log.csv header is engine.log_columns")
t:ok(header:find("gn_b1", 1, true) and header:find("vmax_emb", 1, true)
  and header:find("d_ece", 1, true), "per-group and diagnostic columns")

code = train(tiny .. " threads=2", dir .. "/b")
for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
  t:ok(fs.read(dir .. "/a/" .. f) == fs.read(dir .. "/b/" .. f), f .. " identical for threads 1 and 2")
end
t:ok(fs.read(dir .. "/a/manifest.json"):find('"threads": 1', 1, true)
  and fs.read(dir .. "/b/manifest.json"):find('"threads": 2', 1, true), "manifest records threads")

-- a run interrupted by on_step and resumed from its checkpoint gives the same bytes
local record = require "repro.record"
local cfg = record.resolve(require("repro.cli").parse_overrides(
  { "n_layer=1", "d_model=16", "n_head=2", "context=16", "batch=4", "iters=12", "warmup=2",
    "dropout=0.1", "diag_every=4", "diag_windows=3" }, "test"))
local m = record.run(cfg, dir .. "/c", { checkpoint_every = 4,
  on_step = function(step) return step == 6 end })
t:ok(m.stopped and not fs.exists(dir .. "/c/metrics.json"), "stopped run is not done")
t:eq(record.status(dir .. "/c", cfg), "partial", "stopped run has a checkpoint")
m = record.run(cfg, dir .. "/c", { checkpoint_every = 4 })
t:eq(m.resumed_from, 7, "resumed where it stopped (after step 6)")
t:eq(record.status(dir .. "/c", cfg), "done", "resumed run is done")
for _, f in ipairs({ "log.csv", "metrics.json" }) do
  t:ok(fs.read(dir .. "/a/" .. f) == fs.read(dir .. "/c/" .. f), f .. " identical after resume")
end
cfg.lr = 1e-3
t:eq(record.status(dir .. "/c", cfg), "changed", "a changed config is not done")

-- bad configs: message names the key, exit 1, nothing written
local bad = {
  { "n_head=3", "n_head=3" }, { "embed_nrom=layernorm", "embed_nrom" },
  { "embed_norm=batchnorm", "embed_norm=batchnorm" }, { "lr=0", "lr=0" },
  { "min_lr=1", "min_lr=1" }, { "warmup=400", "warmup=400" }, { "dropout=1", "dropout=1" },
  { "beta2=1", "beta2=1" }, { "d_model=-4", "d_model=-4" }, { "iters=0", "iters=0" },
  { "context=200000", "context=200000" }, { "embed_init_std=0", "embed_init_std=0" },
  { "n_layer=2.5", "n_layer=2.5" }, { "lr=abc", "lr=abc" },
  { "data=/nonexistent/x.txt", "/nonexistent/x.txt" }, { "context=120000", "context=120000" },
}
for i, b in ipairs(bad) do
  local o = dir .. "/bad" .. i
  code, out, err = train(b[1], o)
  t:ok(code == 1 and err:find(b[2], 1, true) and not err:find("traceback"),
    b[1] .. " refused naming the key -- got: " .. err)
  t:ok(not fs.exists(o), b[1] .. " wrote nothing")
end
t:raises(function() engine.train({ n_layer = "x" }) end, "n_layer: expected an integer", "type check")
t:raises(function() engine.train({ iters = 2, warmup = 0, n_layer = 1, d_model = 8, n_head = 1,
  context = 8, batch = 2 }, { on_step = function() error("from on_step") end }) end,
  "from on_step", "on_step error propagates")

check.rmtree(dir)
t:done()
