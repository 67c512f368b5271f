-- The engine binding and `bin/repro train`: defaults, records, byte-identical results
-- for any thread count, errors that name the key and write nothing.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local engine = require "engine"
local fs = require "repro.core.fs"
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

-- the runs' checks do not depend on the corpus: a small one (check.small_corpus)
local corpus = check.small_corpus(dir .. "/corpus.txt")
local tiny = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 iters=12 warmup=2 dropout=0.1 diag_every=4 diag_windows=3 data=" .. corpus
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
local cfg = record.resolve(require("repro.core.config").parse_overrides(
  { "n_layer=1", "d_model=16", "n_head=2", "context=16", "batch=4", "iters=12", "warmup=2",
    "dropout=0.1", "diag_every=4", "diag_windows=3", "data=" .. corpus }, "test"))
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

-- a run whose thread count changes between steps (bin/repro run gives a study's last
-- runs the cores of finished workers) gives the same bytes, either way; its manifest
-- gives the first and the last count and the core-seconds
for _, c in ipairs({ { "e", 1, 2 }, { "f", 2, 1 } }) do
  local calls = 0
  m = record.run(cfg, dir .. "/" .. c[1], { threads = c[2], threads_now = function()
    calls = calls + 1
    return calls > 5 and c[3] or nil
  end })
  for _, f in ipairs({ "log.csv", "metrics.json" }) do
    t:ok(fs.read(dir .. "/a/" .. f) == fs.read(dir .. "/" .. c[1] .. "/" .. f),
      string.format("%s identical with threads %d, then %d from step 5", f, c[2], c[3]))
  end
  local man = require("cjson").decode(fs.read(dir .. "/" .. c[1] .. "/manifest.json"))
  t:ok(man.threads == c[2] and man.threads_last == c[3] and type(man.core_s) == "number" and
    man.core_s > 0, "manifest: threads, threads_last and core_s of a changed thread count")
end
t:ok(not fs.read(dir .. "/a/manifest.json"):find("threads_last", 1, true),
  "no threads_last when the count never changed")
t:raises(function() engine.set_threads(0) end, "threads must be 1..", "set_threads(0) refused")

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

-- balanced_acc = true: the balanced accuracy of the final evaluation and of its
-- DIAG_BAL_SUBSETS position subsets, the same at 1 and 2 threads; without the key a run
-- has none of them (the records made before it keep their bytes).
do
  -- (width 64 with LayerNorm after the embedding: the norms' backward then runs its blocks
  -- of 64 columns, which the other tiny runs under make test-asan never reach)
  local bcfg = { n_layer = 1, d_model = 64, n_head = 2, context = 16, batch = 4, iters = 6,
    warmup = 1, diag_every = 0, data = corpus, balanced_acc = true, embed_norm = "layernorm",
    threads = 1 }
  local b1 = engine.train(bcfg)
  bcfg.threads = 2
  local b2 = engine.train(bcfg)
  local subsets = b1.bal_subset_acc or {}
  local inside = #subsets == 20
  for _, v in ipairs(subsets) do inside = inside and v >= 0 and v <= 1 end
  t:ok(b1.bal_acc and b1.bal_acc >= 0 and b1.bal_acc <= 1 and inside and
    b1.bal_subset_acc_mean >= 0 and b1.bal_subset_acc_mean <= 1,
    "balanced_acc: the balanced accuracy and its 20 subsets, each in [0, 1]: " ..
    tostring(b1.bal_acc))
  t:ok(b1.bal_acc == b2.bal_acc and b1.bal_subset_acc_sd == b2.bal_subset_acc_sd,
    "the balanced accuracy at 1 and 2 threads: the same")
  bcfg.balanced_acc, bcfg.threads = nil, nil
  local plain = engine.train(bcfg)
  t:ok(plain.bal_acc == nil and plain.bal_subset_acc == nil and plain.val_loss == b1.val_loss,
    "without balanced_acc: no balanced accuracy, the same loss")
end

-- opts.final_windows (the cost calibration's, never a record's): the final evaluation on
-- the first k validation windows; k at or above the split's count is the whole split.
do
  local fcfg = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, diag_every = 0, data = corpus, threads = 1 }
  local whole = engine.train(fcfg)
  local all = engine.train(fcfg, { final_windows = 1000000 })
  local part = engine.train(fcfg, { final_windows = 3 })
  t:ok(all.val_loss == whole.val_loss and all.ece == whole.ece,
    "final_windows above the split's windows: the whole split, the same metrics")
  t:ok(part.val_loss ~= whole.val_loss and part.val_loss > 0,
    "final_windows = 3: the loss of those windows alone")
  t:raises(function() engine.train(fcfg, { final_windows = -1 }) end,
    "final_windows", "a negative final_windows is refused")
end

-- The on_step error keeps the traceback of where it was raised; a user error (a table)
-- comes back as it was raised.
local micro = { iters = 2, warmup = 0, n_layer = 1, d_model = 8, n_head = 1, context = 8,
  batch = 2 }
local function failing_step() local row = nil; return row.loss end
local sok, serr = pcall(engine.train, micro, { on_step = failing_step })
t:ok(not sok and serr:find("attempt to index a nil value", 1, true) ~= nil
  and serr:match("stack traceback:\n%s*[^\n]*%.lua:%d+: in function <") ~= nil,
  "on_step error keeps the traceback from where it was raised: " .. tostring(serr))
local uerr = { message = "stop here" }
sok, serr = pcall(engine.train, micro, { on_step = function() error(uerr) end })
t:ok(not sok and serr == uerr, "on_step user error (a table) is re-raised as it is")
t:eq(record.engine_error(uerr), uerr, "engine_error: a user error passes through")
t:eq(record.engine_error("x.lua:3: oops"), "x.lua:3: oops", "engine_error: a bug passes through")

-- Engine errors carry their kind (engine.error_kinds), the one of what failed.
t:eq(table.concat(engine.error_kinds, " "), "config corpus checkpoint filesystem memory",
  "engine.error_kinds")
local function engine_err(fn, ...)
  local eok, e = pcall(fn, ...)
  return not eok and e or "(no error)"
end
t:ok(engine_err(engine.check, { lr = 0 }):find("^config: lr=0"), "a bad value: config")
-- The engine's limits and divergence rule are exported by the binding, and Lua states
-- them from there (never retyped): the thread limit is the one the config applies.
t:ok(math.type(engine.MAX_THREADS) == "integer" and engine.MAX_THREADS >= 1 and
  engine_err(engine.check, { threads = engine.MAX_THREADS + 1 }):find(
    "^config: threads=" .. (engine.MAX_THREADS + 1) .. ": must be in %[0, " ..
    engine.MAX_THREADS .. "%]"), "engine.MAX_THREADS is the config's limit")
t:ok(engine_err(engine.fma_peak, engine.MAX_THREADS + 1):find("threads must be 1.." ..
  engine.MAX_THREADS, 1, true), "engine.fma_peak: the same limit")
t:ok(math.type(engine.DIVERGE_STEPS) == "integer" and engine.DIVERGE_STEPS >= 1 and
  math.type(engine.DIVERGE_MARGIN) == "float" and engine.DIVERGE_MARGIN > 0,
  "engine.DIVERGE_STEPS and engine.DIVERGE_MARGIN")
t:ok(require("repro.analysis.words").METRIC.diverged.def:find(string.format("on %d consecutive " ..
  "training losses above the loss at initialization + %g nat", engine.DIVERGE_STEPS,
  engine.DIVERGE_MARGIN), 1, true), "the analysis states the engine's divergence rule")
t:ok(engine_err(engine.param_count, { data = dir .. "/none.txt" }):find("^corpus: data="),
  "param_count, a missing corpus: corpus")
local ckdir = dir .. "/ck"
fs.mkdir_p(ckdir)
check.write(ckdir .. "/bad.rptf", "not a tensor file")
local e = engine_err(engine.train, micro, { checkpoint = ckdir .. "/bad.rptf", resume = true })
t:ok(e:find("^checkpoint: " .. ckdir:gsub("%p", "%%%0") .. "/bad%.rptf: "),
  "an unreadable checkpoint to resume from: checkpoint -- got: " .. e)
-- a checkpoint of this config with a byte appended, or grown to a sparse 1 GiB: refused by
-- the engine's one strict reader (engine/tensorfile.h), naming it, the big one from its size
local ck = ckdir .. "/good.rptf"
engine.train(micro, { checkpoint = ck, checkpoint_every = 1,
  on_step = function(step) return step >= 1 end })
local ck_bytes = fs.read(ck) or ""
check.write(ck, ck_bytes .. "x")
e = engine_err(engine.train, micro, { checkpoint = ck, resume = true })
t:ok(#ck_bytes > 0 and e:find("^checkpoint: " .. ck:gsub("%p", "%%%0") ..
  ": 1 trailing byte after the last tensor"), "a checkpoint with trailing bytes -- got: " .. e)
check.write(ck, ck_bytes)
os.execute("truncate -s 1G " .. fs.quote(ck))
e = engine_err(engine.train, micro, { checkpoint = ck, resume = true })
t:ok(e:find("^checkpoint: " .. ck:gsub("%p", "%%%0") .. ": 1073741824 bytes, more than the %d+ " ..
  "this file may have"), "a sparse checkpoint of 1 GiB, refused unread -- got: " .. e)
os.remove(ck)
e = engine_err(engine.train, micro, { checkpoint = ckdir .. "/none/c.rptf", checkpoint_every = 1 })
t:ok(e:find("^filesystem: cannot write checkpoint " .. ckdir:gsub("%p", "%%%0") .. "/none/c%.rptf: "),
  "a checkpoint that cannot be written: filesystem -- got: " .. e)
t:eq(record.engine_error(e).message, e, "engine_error: an engine error becomes a user error")

-- The keys added for the redesigned studies: absent from records at their defaults, so
-- every committed config.json round-trips to its bytes and its hash.
local json = require "repro.core.json"
local d2 = engine.defaults()
t:ok(d2.tie_embeddings == true and d2.lr_schedule == "cosine" and d2.tok_init_std == nil
  and d2.init_seed == nil, "defaults: tied, cosine; derived keys unset")
local keyinfo = {}
for _, k in ipairs(engine.keys()) do keyinfo[k.name] = k end
t:ok(keyinfo.tie_embeddings.type == "boolean" and keyinfo.pos_init_std.derived_from == "embed_init_std"
  and keyinfo.data_seed.derived_from == "seed" and keyinfo.lr_schedule.omittable
  and not keyinfo.lr.omittable, "engine.keys: boolean type, derived_from, omittable")
-- the init-parts keys: unset by default, derived from init, left out of a record at the
-- scheme's own value and kept at the other's
local c41 = engine.canonical({ init = "torch", linear_init = "torch", resid_rescale = false })
local g41 = engine.canonical({ linear_init = "torch", resid_rescale = false })
t:ok(d2.linear_init == nil and d2.resid_rescale == nil and keyinfo.linear_init.derived_from ==
  "init" and keyinfo.resid_rescale.derived_from == "init" and c41.linear_init == nil and
  c41.resid_rescale == nil and c41.init == "torch" and g41.linear_init == "torch" and
  g41.resid_rescale == false, "linear_init and resid_rescale: omitted at the scheme's value")
local records, same_bytes, same_hash = 0, 0, 0
local list = io.popen("ls experiments/*/*/seed-*/config.json 2>/dev/null")
for path in list:lines() do
  records = records + 1
  local text = fs.read(path)
  local cfg = record.resolve(json.decode(text))
  if record.config_text(cfg) == text then same_bytes = same_bytes + 1 end
  local mtext = fs.read((path:gsub("config%.json$", "metrics.json")))
  local m = mtext and json.decode(mtext)
  if m and m.config_sha256 == fs.sha256(path) then same_hash = same_hash + 1 end
end
list:close()
t:ok(records >= 1 and same_bytes == records and same_hash == records,
  string.format("%d committed config.json re-written byte-identical from defaults + their keys "
    .. "(%d), hash = metrics.config_sha256 (%d)", records, same_bytes, same_hash))
local final1 = fs.read("experiments/final/none/seed-1/config.json")
if final1 then
  local cfg = record.resolve(json.decode(final1))
  t:eq(record.config_text(cfg), final1, "final/none/seed-1 round-trips")
  -- explicitly set at their defaults, the new keys still leave the bytes alone
  cfg.tie_embeddings, cfg.lr_schedule, cfg.tok_init_std, cfg.pos_init_std = true, "cosine", 0.02, 0.02
  cfg.init_seed, cfg.data_seed = cfg.seed, cfg.seed
  t:eq(record.config_text(cfg), final1, "new keys at their default values are left out")
  cfg.tie_embeddings, cfg.pos_init_std, cfg.data_seed = false, 0.0, 7
  local text = record.config_text(cfg)
  t:ok(text:find('"tie_embeddings": false', 1, true) and text:find('"pos_init_std": 0', 1, true)
    and text:find('"data_seed": 7', 1, true) and not text:find("tok_init_std", 1, true)
    and not text:find("init_seed", 1, true) and not text:find("lr_schedule", 1, true),
    "keys off their default are written, the others left out")
end
local canon = engine.canonical({ seed = 3, init_seed = 3, tie_embeddings = "maybe", embed_nrom = 1 })
t:ok(canon.init_seed == nil and canon.tie_embeddings == "maybe" and canon.embed_nrom == 1,
  "canonical drops defaults only, and keeps values it cannot parse for check to report")

-- a record with the new keys, through the command line
local newkeys = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 iters=6 warmup=0 "
  .. "lr_schedule=constant tie_embeddings=false embed_norm=scale pos_init_std=0 threads=1 data="
  .. corpus
code, out, err = train(newkeys, dir .. "/new")
t:eq(code, 0, "train with the new keys: " .. err)
local ncfg = json.decode(fs.read(dir .. "/new/config.json") or "{}")
local nm = json.decode(fs.read(dir .. "/new/metrics.json") or "{}")
t:ok(ncfg.tie_embeddings == false and ncfg.lr_schedule == "constant" and ncfg.pos_init_std == 0
  and ncfg.embed_norm == "scale", "config.json records the new keys")
t:ok(type(nm.embed_scale) == "number" and math.abs(nm.embed_scale * nm.embed_init_rms - 1) < 1e-6,
  "metrics.json: embed_scale = 1/embed_init_rms")
t:ok(#nm.subset_acc == 20 and type(nm.subset_acc_mean) == "number"
  and type(nm.subset_acc_sd) == "number", "metrics.json: 20 subset accuracies, mean, sd")
for _, k in ipairs({ "init_loss", "max_grad_norm", "max_grad_norm_step", "max_loss_jump",
  "max_abs_logit", "logit_growth", "embed_init_rms" }) do
  t:ok(type(nm[k]) == "number", "metrics.json has " .. k)
end
t:ok(nm.diverged == false and nm.diverge_step == nil, "not diverged: no diverge_step")
local nlog = fs.read(dir .. "/new/log.csv") or ""
t:ok(nlog:match("^[^\n]*"):find(",max_abs_logit,", 1, true)
  and nlog:match("^[^\n]*"):find("gn_head", 1, true), "log.csv: max_abs_logit and the head group")
t:eq(engine.param_count({ tie_embeddings = false, n_layer = 1, d_model = 16, n_head = 2 }),
  engine.param_count({ n_layer = 1, d_model = 16, n_head = 2 }) + 65 * 16, "untied adds V x C")
code, out, err = train("tie_embeddings=maybe", dir .. "/bad-tie")
t:ok(code == 1 and err:find("tie_embeddings=maybe", 1, true), "tie_embeddings=maybe refused: " .. err)
code, out, err = train("init_seed=-1", dir .. "/bad-seed")
t:ok(code == 1 and err:find("init_seed=-1", 1, true), "init_seed=-1 refused: " .. err)
local names = {}
for _, n in ipairs(engine.metric_names()) do names[n] = true end
t:ok(names.max_grad_norm and names.max_loss_jump and names.logit_growth and names.diverge_step
  and names.diverge_lr and names.subset_acc_mean and names.embed_scale,
  "metric_names lists the new scalar metrics")
code, out = check.run(repro .. " help")
t:ok(code == 0 and out:find("tok_init_std%s+= embed_init_std") and out:find("data_seed%s+= seed")
  and out:find("definitions:", 1, true) and out:find("diverged", 1, true)
  and out:find("layernorm_matched", 1, true), "help lists the new keys and the definitions")

-- the n-gram references, on a corpus small enough to count by hand: train "aab" x 9,
-- validation "aba" (engine/ngram.h): unigram ppl 29/sqrt(190), bigram 1/sqrt(0.45)
check.write(dir .. "/ngram.txt", string.rep("aab", 9) .. "aba")
local ng = engine.ngram_ppl(dir .. "/ngram.txt")
t:near(ng.unigram_ppl, 29 / math.sqrt(190), 1e-13, "engine.ngram_ppl unigram")
t:near(ng.bigram_ppl, 1 / math.sqrt(0.45), 1e-13, "engine.ngram_ppl bigram")
t:ok(ng.n_train == 27 and ng.n_eval == 2 and ng.vocab == 2, "engine.ngram_ppl counts")
t:raises(function() engine.ngram_ppl(dir .. "/missing.txt") end, "missing.txt", "unreadable corpus")

-- the step profile (engine/prof.h, make bench-profile) only reads the clock: a run with it
-- on has the same metrics, bit for bit, as one with it off; it times every kind of work
do
  local cfg = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 6,
    warmup = 1, embed_norm = "layernorm", threads = 2, data = corpus }
  engine.profile(false)
  local off = engine.train(cfg)
  engine.profile(true)
  local on = engine.train(cfg, {})
  local prof = engine.profile(false)
  t:ok(off.val_loss == on.val_loss and off.final_grad_norm == on.final_grad_norm and
    off.train_loss == on.train_loss, "profile on: the same metrics bit for bit")
  local timed = true
  for _, k in ipairs({ "embed", "qkv_fwd", "proj_fwd", "fc_fwd", "fc2_fwd", "logits_fwd",
    "qkv_bwd", "proj_bwd", "fc_bwd", "fc2_bwd", "logits_bwd", "attn_fwd", "attn_bwd", "norm",
    "xent", "optim" }) do
    timed = timed and type(prof[k]) == "number" and prof[k] > 0
  end
  t:ok(timed, "profile on: every kind of work timed")
  local again = engine.profile(false)
  t:ok(again.qkv_fwd == prof.qkv_fwd, "profile off: nothing more accumulates")
end

check.rmtree(dir)
t:done()
