-- `bin/repro sample RUN`, `bin/repro eval RUN` and `bin/repro export-model RUN`: what a
-- kept model (a run trained with --keep-model, or by a study with keep_model = true) does
-- after its run: text sampled from it (PCG32: the same on any machine and thread count),
-- its metrics again beside the record's (exit status 1 on a difference beyond
-- M.TOLERANCE; kinds: M.EVALUATIONS), and a safetensors copy (M.export says what it
-- holds).  RUN is a record directory, or that path relative to the records root; the
-- record must verify and its model.rptf must have the SHA-256 its manifest recorded.
-- Flags: docs/COMMANDS.md, "Kept models".
local engine = require "engine"
local json = require "repro.core.json"
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local sys = require "repro.sys"
local host = require "repro.host"
local record = require "repro.record"
local set = require "repro.record.set"
local study_records = require "repro.study.records"
local tasks = require "repro.tasks"

local M = {}

local user_error, need = base.user_error, base.need

-- The largest difference of val_loss `eval` accepts against the record's.
M.TOLERANCE = 1e-6

-- The record directory RUN names: as given, else (a relative RUN) under the records root.
local function record_dir(run, who)
  local st = sys.stat(run)
  if st and st.type == "dir" then return run end
  need(run:sub(1, 1) ~= "/", "%s: %s is not a run record directory%s", who, base.printable(run),
    st and "" or " (no such directory)")
  local root = fs.records_root()
  local under = root .. "/" .. run
  st = sys.stat(under)
  need(st and st.type == "dir", "%s: %s is not a run record directory (nor %s)", who,
    base.printable(run), base.printable(under))
  return fs.check_path(under, who, root) -- from the records root, not $PWD
end

-- The JSON object of a record's file (its verified text), or a user error naming it.
local function object_of(text, path, who)
  local t = json.table_of(text)
  need(t and text:match("^%s*{"), "%s: %s: not a JSON object: refused", who, path)
  return t
end

-- An engine error as the message of a user error; in it, a kept model's private copy is
-- named by the record's file it was copied from (k: M.load's).
local function engine_call(who, f, k, ...)
  local ok, res = pcall(f, ...)
  if ok then return res end
  local e = record.engine_error(res)
  if type(e) == "table" and e.message then
    local msg = e.message
    if k then msg = msg:gsub(k.model:gsub("%p", "%%%0"), (k.model_file:gsub("%%", "%%%%"))) end
    user_error("%s: %s", who, msg)
  end
  error(res, 0)
end

-- Says on stderr, in the words every command uses (record/set.lua), when the verified record
-- in dir is not part of the study whose folder holds it, or is adopted (neither committed
-- nor made by this checkout).  Nothing is refused for it: the model is the record's.
local function say_provenance(dir, kept, who)
  local sdir, d = study_records.study_of_record(dir)
  if sdir and not set.is_member(d, sdir, dir) then
    for _, x in ipairs(set.outsiders(d, sdir)) do
      if x.path == dir:gsub("/+$", "") then
        io.stderr:write(who, ": ", set.outside_text(d.name, x), "\n")
      end
    end
  end
  local root = sdir and (sdir:match("^(.*)/[^/]+$") or ".") or
    (dir:match("^(.*)/[^/]+/[^/]+/[^/]+$") or ".")
  local p = set.assess({ { dir = dir, kept = kept } }, root)[dir]
  if p.level == "adopted" then
    io.stderr:write(who, ": ", base.printable(fs.shown(dir)), ": ", set.level_text(p), "\n")
  end
end

-- The kept model of record RUN: {dir, cfg, model, model_file, config_id, metrics,
-- manifest}, or a user error naming the file and what is wrong, before anything is
-- computed.  Read once: config.json, metrics.json and manifest.json are the texts
-- record.verify verified; config.json must hold a config the engine accepts and
-- metrics.json its SHA-256; model (a private copy, fs.private_subdir) holds the bytes of
-- model_file (DIR/model.rptf) whose SHA-256 was checked, read only when its size is at
-- most what a kept model of the config takes (engine.model_max_bytes).  The engine's one
-- reader of tensor files (engine/tensorfile.h) then parses it, strictly.
-- check_cfg(cfg, manifest, dir) (optional) is called before the model is read, for a
-- command's own checks of its inputs against the record.
function M.load(run, who, check_cfg)
  local dir = record_dir(run, who)
  local state, problems, kept = record.verify(dir)
  need(state ~= "unfinished", "%s: %s holds no finished run (no metrics.json)", who, dir)
  need(state == "verified", "%s: %s: its record does not verify (%s)%s", who, dir, state,
    #problems > 0 and (": " .. table.concat(problems, "; ")) or "")
  say_provenance(dir, kept, who)
  local man = kept.manifest
  local cfg_file, metrics_file = dir .. "/config.json", dir .. "/metrics.json"
  local cfg = object_of(kept.texts["config.json"], cfg_file, who)
  local metrics = object_of(kept.texts["metrics.json"], metrics_file, who)
  need(metrics.config_sha256 == kept.sha256["config.json"],
    "%s: %s: config_sha256 is not the SHA-256 of config.json: refused", who, metrics_file)
  engine_call(who .. ": " .. cfg_file, engine.check, nil, cfg)
  if check_cfg then check_cfg(cfg, man, dir) end
  local model = dir .. "/" .. record.MODEL
  local st = sys.lstat(model)
  need(st, "%s: %s has no kept model (%s): train it with --keep-model (`bin/repro train ... " ..
    "--out DIR --keep-model`, or `bin/repro run STUDY.lua --keep-model`; a finished run is " ..
    "retrained for it with --force --only variant=V,seed=S)", who, dir, record.MODEL)
  need(type(man.model_sha256) == "string", "%s: %s: manifest.json records no model_sha256, so " ..
    "%s is not this record's model: refused", who, dir, record.MODEL)
  local max = engine_call(who, engine.model_max_bytes, nil, cfg)
  need(st.type ~= "file" or st.size <= max, "%s: %s: %d bytes, more than a kept model of this " ..
    "config takes (%d): refused", who, model, st.size, max)
  -- read once: the bytes hashed here are the bytes the engine loads (a private copy), so
  -- a model.rptf swapped after the check is never what is sampled or evaluated
  local bytes, rerr = fs.read(model, max)
  if not bytes then user_error("%s: %s", who, base.printable(tostring(rerr))) end
  local got = sys.sha256(bytes)
  need(got == man.model_sha256, "%s: %s: SHA-256 %s, but manifest.json recorded %s (changed " ..
    "after it was written): refused", who, model, tostring(got):sub(1, 12),
    base.printable(man.model_sha256:sub(1, 12)))
  local copy = fs.private_subdir("model") .. "/" .. record.MODEL
  fs.write_atomic(copy, bytes)
  return { dir = dir, cfg = cfg, model = copy, model_file = model,
    config_id = metrics.config_sha256, metrics = metrics, manifest = man }
end

M.SAMPLE_USAGE = "usage: bin/repro sample RUN [--prompt TEXT] [--n N] [--seed S] " ..
  "[--temperature T]"

-- A user error naming --prompt and its first character outside the vocabulary of cfg's
-- corpus (the engine's: tasks.outside_vocab), before the model is read.
local function check_prompt(prompt, cfg, who)
  local data = record.data_path({ data = cfg.data or engine.defaults().data })
  local pat = tasks.outside_vocab(data)
  local at = pat and pat ~= "" and prompt:find(pat)
  if not at then return end
  local from = at -- the start of the UTF-8 character holding the byte, when it is one
  while from > 1 and at - from < 3 and (prompt:byte(from) & 0xC0) == 0x80 do from = from - 1 end
  local ch = prompt:match("^" .. utf8.charpattern, from)
  if not ch or from + #ch <= at then ch = prompt:sub(at, at) end
  user_error("%s: --prompt: its character %s (byte %d of the prompt, 0x%02x) is not in the " ..
    "vocabulary of corpus %s, which the model reads: nothing was sampled", who,
    base.printable(string.format("%q", ch)), at, prompt:byte(at), tasks.corpus_name(data))
end

function M.sample_main(args)
  local who = "repro sample"
  local o = base.parse_options(args, who, M.SAMPLE_USAGE, {
    ["--prompt"] = { key = "prompt", kind = "value" },
    ["--n"] = { key = "n", kind = "int", min = 0 },
    ["--seed"] = { key = "seed", kind = "int", min = 0 },
    ["--temperature"] = { key = "temperature", kind = "number", min = 0 } })
  if o.help then return 0 end
  if #o.targets ~= 1 then user_error("%s: one RUN\n%s", who, M.SAMPLE_USAGE) end
  local n, seed, temperature = o.n or 200, o.seed or 0, o.temperature or 1.0
  if n > 1 << 24 then user_error("%s: --n at most %d, got %d", who, 1 << 24, n) end
  local prompt = o.prompt or "\n"
  if prompt == "" then user_error("%s: --prompt is empty (give at least one character)", who) end
  local k = M.load(o.targets[1], who, function(cfg) check_prompt(prompt, cfg, who) end)
  local text = engine_call(who, engine.sample, k, k.cfg, k.model, k.config_id, prompt, n, seed,
    temperature)
  io.write(prompt, text, "\n")
  return 0
end

-- Whether an evaluated value is not the record's rec (a record without the number differs).
local function differs(value, rec)
  return type(rec) ~= "number" or math.abs(value - rec) > M.TOLERANCE
end

-- The kinds of evaluation `eval` offers: each takes the kept model (M.load) and returns
-- rows {metric, value, recorded} and whether they agree with the record.
M.EVALUATIONS = {
  tasks = function(k, who, suite)
    local loaded = tasks.load(k.cfg.data or "data/tinyshakespeare.txt", suite)
    local results = engine_call(who, engine.score_tasks, k, k.cfg, loaded.sets,
      { checkpoint = k.model, config_id = k.config_id })
    local metrics = tasks.metrics(loaded.sets, results)
    local scored = k.cfg.tasks == suite
    local rows, agree = {}, true
    for _, name in ipairs(base.sorted_keys(metrics)) do
      local rec = scored and k.metrics[name] or nil
      rows[#rows + 1] = { metric = name, value = metrics[name], recorded = rec }
      if scored and differs(metrics[name], rec) then agree = false end
    end
    if scored then
      -- the run's own per-item file, byte for byte
      local csv = fs.read(k.dir .. "/tasks.csv")
      local same = csv == tasks.items_csv(loaded.sets, results)
      rows[#rows + 1] = { metric = "tasks.csv", value = same and 1 or 0, recorded = 1,
        text = same and "every item as in the run's tasks.csv" or
          "items differ from the run's tasks.csv" }
      agree = agree and same
    end
    return rows, agree, scored and "" or string.format(" (the run scored %s: no record " ..
      "to compare)", k.cfg.tasks and ("suite " .. tostring(k.cfg.tasks)) or "no task suite")
  end,
  val = function(k, who)
    local m = engine_call(who, engine.evaluate, k, k.cfg, k.model, k.config_id)
    local rows = {}
    for _, name in ipairs({ "val_loss", "val_ppl", "val_acc", "ece", "brier" }) do
      if m[name] ~= nil then
        rows[#rows + 1] = { metric = name, value = m[name], recorded = k.metrics[name] }
      end
    end
    return rows, not differs(m.val_loss, k.metrics.val_loss)
  end,
}

M.EVAL_USAGE = "usage: bin/repro eval RUN [--split val | --tasks SUITE] [--json]"

function M.eval_main(args)
  local who = "repro eval"
  local o = base.parse_options(args, who, M.EVAL_USAGE, {
    ["--split"] = { key = "split", kind = "value" },
    ["--tasks"] = { key = "tasks", kind = "value" },
    ["--json"] = { key = "json", kind = "flag" } })
  if o.help then return 0 end
  if #o.targets ~= 1 then user_error("%s: one RUN\n%s", who, M.EVAL_USAGE) end
  if o.tasks then
    if o.split then user_error("%s: give one of --split and --tasks", who) end
    -- the library's suites and a user's own (<tasks root>/_suites/<name>.lua)
    need(tasks.find_suite(o.tasks), "%s: --tasks %s: no such task suite (the library's: %s; a " ..
      "suite of your own is %s/%s/<name>.lua)", who, base.printable(o.tasks),
      table.concat(base.sorted_keys(tasks.SUITES), ", "), fs.shown(tasks.root()), tasks.USER_SUITES)
  end
  local kind = o.tasks and "tasks" or (o.split or "val")
  need(M.EVALUATIONS[kind], "%s: --split %s: the splits are: val", who, base.printable(kind))
  local k = M.load(o.targets[1], who, kind == "tasks" and function(cfg, man, dir)
    -- the record's task scores are compared only while they are its task files'
    local stale = cfg.tasks == o.tasks and record.stale_task_files(man) or {}
    need(#stale == 0, "%s: %s: its record was %s: its task scores are not these files' (retrain " ..
      "it to score it on them)", who, dir, record.stale_text(stale))
    -- the suite's files built for the corpus, each item one the model can score
    local c = { data = cfg.data or engine.defaults().data, tasks = o.tasks, context = cfg.context }
    tasks.load(record.data_path(c), o.tasks, { shots = { 0 } })
    local why = tasks.fit_problem(c)
    if why then user_error("%s: --tasks %s: %s", who, base.printable(o.tasks), why) end
  end)
  local rows, agree, note = M.EVALUATIONS[kind](k, who, o.tasks)
  if o.json then
    local out = json.object({ run = k.dir, evaluation = kind, agrees = agree,
      metrics = json.object({}), recorded = json.object({}) })
    for _, r in ipairs(rows) do
      out.metrics[r.metric] = r.value
      out.recorded[r.metric] = r.recorded
    end
    print(json.encode(out))
  else
    print(string.format("%s (%s, kept model)%s", base.printable(k.dir),
      o.tasks and ("task suite " .. o.tasks) or (kind .. " split"), note or ""))
    local w = 10
    for _, r in ipairs(rows) do w = math.max(w, #r.metric) end
    print(string.format("  %-" .. w .. "s %14s %14s %10s", "metric", "evaluated", "record",
      "|diff|"))
    for _, r in ipairs(rows) do
      if r.text then
        print(string.format("  %-" .. w .. "s %s", r.metric, r.text))
      else
        local d = type(r.recorded) == "number" and math.abs(r.value - r.recorded) or nil
        print(string.format("  %-" .. w .. "s %14.8f %14s %10s", r.metric, r.value,
          r.recorded and string.format("%.8f", r.recorded) or "-",
          d and string.format("%.1e", d) or "-"))
      end
    end
  end
  if not agree then
    io.stderr:write(string.format("%s: %s: the model is not the one this record's run " ..
      "ended with\n", who, kind == "tasks" and ("its task scores differ from the record's " ..
      "(metrics by more than " .. M.TOLERANCE .. ", or tasks.csv)") or
      ("val_loss differs from the record's by more than " .. M.TOLERANCE)))
    return 1
  end
  return 0
end

-- ---- export-model ------------------------------------------------------------------

-- The PyTorch name (nanoGPT's GPT module, whose Linear weights are (out, in) as the
-- engine's) of each engine tensor of gpt.h's layout.
local function torch_name(name)
  local l, part = name:match("^h(%d+)%.(.+)$")
  if l then
    local BLOCK = { ln1_w = "ln_1.weight", ln1_b = "ln_1.bias", qkv_w = "attn.c_attn.weight",
      qkv_b = "attn.c_attn.bias", proj_w = "attn.c_proj.weight", proj_b = "attn.c_proj.bias",
      ln2_w = "ln_2.weight", ln2_b = "ln_2.bias", fc_w = "mlp.c_fc.weight",
      fc_b = "mlp.c_fc.bias", fc2_w = "mlp.c_proj.weight", fc2_b = "mlp.c_proj.bias" }
    return BLOCK[part] and ("transformer.h." .. l .. "." .. BLOCK[part])
  end
  local TOP = { wte = "transformer.wte.weight", wpe = "transformer.wpe.weight",
    lnf_w = "transformer.ln_f.weight", lnf_b = "transformer.ln_f.bias",
    en_w = "transformer.embed_norm.weight", en_b = "transformer.embed_norm.bias",
    lm_head = "lm_head.weight" }
  return TOP[name]
end

-- The export of kept model k (M.load) as {safetensors = bytes, config = table}: the one
-- flat params tensor split by gpt.h's layout (engine.param_layout) into named F32 tensors
-- in layout order, data = the params bytes unchanged (their offsets are the layout's), the
-- header padded with spaces to a multiple of 8 bytes; config.json names the architecture
-- in PyTorch terms, every constant the forward pass needs (docs/DESIGN.md "The model":
-- the forward pass exactly) and the evaluation windows.
function M.export(k, who)
  -- the engine's reader and every check evaluate applies (engine/train.h train_read_model)
  local t = engine_call(who, engine.read_model, k, k.cfg, k.model, k.config_id)
  local vocab_bytes = t.vocab
  local layout = engine_call(who, engine.param_layout, k, k.cfg, #vocab_bytes)
  local header = json.object({ __metadata__ = json.object({ format = "pt",
    source = "repro kept model (engine/gpt.h layout)", run = fs.relative_to_root(k.dir),
    config_sha256 = tostring(k.config_id) }) })
  local names = {}
  for _, e in ipairs(layout) do
    local name = torch_name(e.name) or e.name
    names[#names + 1] = name
    header[name] = json.object({ dtype = "F32", shape = json.array(e.shape),
      data_offsets = json.array({ 4 * e.offset, 4 * (e.offset + e.size) }) })
  end
  local htext = json.encode(header)
  htext = htext .. string.rep(" ", (8 - #htext % 8) % 8)
  local st = string.pack("<I8", #htext) .. htext .. t.params
  local cfg = k.cfg
  local en = cfg.embed_norm or "none"
  local vocab_text = string.char(table.unpack(vocab_bytes))
  local n_val_note = "the validation split (the last 10 % of the corpus) in non-overlapping " ..
    "windows of block_size: window w's inputs are val[w*T .. w*T+T-1] and its targets " ..
    "val[w*T+1 .. w*T+T]; floor((len(val) - 1) / T) windows, the positions after the last " ..
    "whole window never scored; val_loss is the mean next-character NLL over the scored positions"
  local EN = { none = "none", layernorm = "LayerNorm", rmsnorm = "RMSNorm",
    scale = "scale: x * embed_scale (a constant, no parameters)",
    layernorm_matched = "LayerNorm (gain initialized at rho)" }
  local config = json.object({
    architecture = "GPT, Pre-LN, character level (nanoGPT's GPT module: tensor names and " ..
      "(out, in) Linear weights as there)",
    model_type = "repro-gpt",
    n_layer = cfg.n_layer or 8, n_embd = cfg.d_model or 128, n_head = cfg.n_head or 8,
    block_size = cfg.context or 128, vocab_size = #vocab_bytes,
    -- the characters as one string when ASCII (always valid JSON), else the bytes only
    vocab = not vocab_text:find("[\128-\255]") and vocab_text or nil,
    vocab_bytes = json.array(vocab_bytes),
    tie_word_embeddings = cfg.tie_embeddings ~= false,
    bias = true, mlp_ratio = 4,
    activation_function = "gelu_tanh (torch.nn.GELU(approximate='tanh'))",
    layer_norm_epsilon = engine.LN_EPS,
    embed_norm = json.object({ kind = en, torch = EN[en] or en,
      epsilon = (en == "layernorm" or en == "layernorm_matched") and engine.LN_EPS or
        en == "rmsnorm" and engine.RMS_EPS or nil,
      rho = t.embed_rms, embed_scale = t.embed_scale,
      where = "after wte[t] + wpe[p], before block 0" }),
    rms_norm_epsilon = engine.RMS_EPS,
    attention = "causal softmax((q k^T) / sqrt(n_embd / n_head)); c_attn's output rows " ..
      "are [q; k; v], head h takes columns h*hd .. h*hd+hd-1 of each",
    forward = "x = wte[t] + wpe[p]; x = embed_norm(x); per block: x = x + c_proj(attn(" ..
      "ln_1(x))); x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x)))); logits = ln_f(x) " ..
      "@ (lm_head.weight if untied, else wte.weight)^T (no bias); dropout only in training",
    tensors = json.array(names),
    evaluation = json.object({ windows = n_val_note, val_loss = k.metrics.val_loss }),
    source = json.object({ run = fs.relative_to_root(k.dir), config_sha256 = k.config_id,
      config = cfg }),
  })
  return { safetensors = st, config = config }
end

M.EXPORT_USAGE = "usage: bin/repro export-model RUN --format safetensors [--out DIR]"

-- Refuses (a user error naming --out) an output folder that cannot be one: an empty path,
-- or one that exists, or has an ancestor that exists, as something other than a folder.
local function out_check(out, who)
  if out == "" then user_error("%s: --out is empty: give a directory", who) end
  local why, path = fs.out_dir_problem(out)
  need(not why, "%s: --out %s: %s is %s, not a directory", who, base.printable(out),
    base.printable(path), why)
end

function M.export_main(args)
  local who = "repro export-model"
  local o = base.parse_options(args, who, M.EXPORT_USAGE, {
    ["--format"] = { key = "format", kind = "value" },
    ["--out"] = { key = "out", kind = "value" } })
  if o.help then return 0 end
  if #o.targets ~= 1 then user_error("%s: one RUN\n%s", who, M.EXPORT_USAGE) end
  need(o.format == "safetensors", "%s: --format %s: the formats are: safetensors\n%s", who,
    base.printable(o.format or "(none)"), M.EXPORT_USAGE)
  if o.out then out_check(o.out, who) end
  local k = M.load(o.targets[1], who)
  local out = o.out
  if not out then
    local rel = fs.relative_to_root(fs.absolute(k.dir)):gsub("^experiments/", "")
    out = host.root .. "/build/export/" .. rel
    out_check(out, who)
  end
  local e = M.export(k, who)
  local ok, err = pcall(fs.mkdir_p, out)
  need(ok, "%s: --out %s: %s", who, base.printable(out),
    base.printable(type(err) == "table" and tostring(err.message) or tostring(err)))
  fs.write_atomic(out .. "/model.safetensors", e.safetensors)
  fs.write_atomic(out .. "/config.json", json.pretty(e.config))
  print(string.format("%s: %s/model.safetensors (%d tensors, %d parameters) and " ..
    "%s/config.json", who, fs.shown(out), #e.config.tensors,
    (#e.safetensors - 8 - string.unpack("<I8", e.safetensors)) // 4, fs.shown(out)))
  return 0
end

return M
