-- The guardrails a newcomer needs: a study of models no better than the unigram model
-- warns in its verdict table and summary (and a committed study's summary keeps its
-- bytes); min_lr follows lr unless given (min_lr_ratio), also under --set lr, while every
-- committed config keeps its bytes; plan commands always carry --threads; a problem that
-- breaks every variant is reported once; analyze labels its messages as analyze; seeds
-- from power are printed with the inputs behind them.  (A refused dry run exits 1:
-- tests/lua/test_study.lua.)
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local engine = require "engine"
local record = require "repro.record"
local study = require "repro.study"
local t = check.new("test_guardrails")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 100000))

local function write_study(name, base, extra)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return {
  name = %q,
  description = "a tiny study",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, data = %q, %s },
  variants = { { name = "none", embed_norm = "none" },
    { name = "layernorm", embed_norm = "layernorm" }, { name = "rmsnorm", embed_norm = "rmsnorm" } },
  seeds = %s,
  analysis = { baseline = "none", metrics = { "val_loss", "val_ppl" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" },
}
]], name, corpus, base, extra or "{ 1, 2, 3 }"))
  return path
end

-- 1. Broken models: 3 steps leave every variant above the unigram perplexity.
local broken = write_study("broken", "iters = 3, warmup = 1")
local code, out, err = check.run(repro .. " run " .. broken .. " --jobs 2 --out-root " .. dir .. "/out")
t:eq(code, 0, "the broken study runs: " .. err)
local sum = json.decode(fs.read(dir .. "/out/broken/summary.json") or "{}")
local uni = engine.ngram_ppl(corpus).unigram_ppl
t:eq(#(sum.warnings or {}), 3, "summary.warnings: one per variant of the verdicts")
for _, w in ipairs(sum.warnings or {}) do
  t:ok(w.level == "unigram" and w.val_ppl >= uni and math.abs(w.unigram_ppl - uni) < 1e-9 and
    w.data == corpus,
    w.variant .. ": its PPL " .. w.val_ppl .. " beside the corpus's unigram PPL " .. uni)
end
local _, nwarn = out:gsub("WARNING: [%w]+: validation PPL [%d.]+ is at or above the unigram PPL", "")
t:eq(nwarn, 3, "the verdict table warns for each variant:\n" .. out)
t:ok(out:find("learned nothing beyond character frequencies", 1, true), "and says what it means")

-- a committed study's summary keeps its bytes (no warning applies to it)
os.execute("mkdir -p " .. dir .. "/committed && cp -r experiments/prelim " .. dir .. "/committed/")
code, _, err = check.run(repro .. " analyze lua/experiments/prelim.lua --out-root " .. dir ..
  "/committed")
t:eq(code, 0, "analyze prelim in a copy: " .. err)
t:ok(fs.read(dir .. "/committed/prelim/summary.json") == fs.read("experiments/prelim/summary.json"),
  "prelim's summary is byte-identical to the committed one")
t:ok(fs.read(dir .. "/committed/prelim/manifest.json") == fs.read("experiments/prelim/manifest.json"),
  "and its study manifest too")
-- a re-analysis that changes the summary (here: a stale one) keeps the training facts
-- (written only with --update: a summary that would change is never rewritten silently)
fs.write_atomic(dir .. "/committed/prelim/summary.json", "{}\n")
code = check.run(repro .. " analyze lua/experiments/prelim.lua --out-root " .. dir ..
  "/committed")
t:eq(code, 3, "analyze prelim over a stale summary without --update: refused, exit 3")
code, _, err = check.run(repro .. " analyze lua/experiments/prelim.lua --out-root " .. dir ..
  "/committed --update")
t:eq(code, 0, "analyze prelim over a stale summary with --update: " .. err)
local old_m = json.decode(fs.read("experiments/prelim/manifest.json"))
local new_m = json.decode(fs.read(dir .. "/committed/prelim/manifest.json") or "{}")
t:ok(new_m.wall_s == old_m.wall_s and new_m.jobs == old_m.jobs and
  new_m.runs_trained == old_m.runs_trained and new_m.start_utc == old_m.start_utc and
  new_m.git_commit == old_m.git_commit,
  "re-analysed: the study manifest keeps the wall time, jobs, counts and commit of the training")
t:ok(type(new_m.analysed_utc) == "string" and type(new_m.analysed_git_commit) == "string",
  "and says when, and at which commit, it was analysed again")

-- 2. min_lr follows lr unless given.
t:eq(record.resolve({}).min_lr, 3e-5, "default min_lr is 3e-5 exactly (0.1 x 3e-4)")
t:eq(record.resolve({ lr = 3e-3 }).min_lr, 3e-4, "lr 3e-3 moves min_lr to 3e-4")
t:eq(record.resolve({ lr = 3e-3, min_lr = 1e-4 }).min_lr, 1e-4, "a given min_lr stays")
local r = record.resolve({ lr = 3e-3, min_lr_ratio = 0.5 })
t:eq(r.min_lr, 1.5e-3, "min_lr_ratio 0.5")
t:ok(record.config_text(r):find('"min_lr_ratio": 0.5', 1, true), "a non-default ratio is recorded")
t:ok(not record.config_text(record.resolve({ lr = 3e-3 })):find("min_lr_ratio", 1, true),
  "the default ratio is left out of config.json")
local ok, e = pcall(record.resolve, { lr = 3e-3, min_lr = 1e-4, min_lr_ratio = 0.5 })
t:ok(not ok and e.message:find("min_lr=0.0001 and min_lr_ratio=0.5", 1, true),
  "min_lr and a disagreeing min_lr_ratio are refused, naming both")
code, _, err = check.run(repro .. " train min_lr_ratio=1.5 iters=1 warmup=0")
t:ok(code ~= 0 and err:find("min_lr_ratio=1.5: must be in [0, 1]", 1, true),
  "min_lr_ratio out of range: " .. err)
-- --set lr drops a study's own min_lr; --set min_lr keeps the one given
local hand = write_study("hand", "iters = 6, warmup = 1, lr = 3e-4, min_lr = 3e-5")
local s = study.load(hand, { lr = 1e-2 })
t:eq(s.runs[1].cfg.min_lr, 1e-3, "--set lr=1e-2 moves the study's min_lr 3e-5 to 1e-3")
s = study.load(hand, { lr = 1e-2, min_lr = 5e-4 })
t:eq(s.runs[1].cfg.min_lr, 5e-4, "--set lr with --set min_lr keeps the given min_lr")
s = study.load(hand)
t:eq(s.runs[1].cfg.min_lr, 3e-5, "without --set the study's min_lr")
code, _, err = check.run(repro .. " run " .. hand .. " --set lr=1e-2 --dry-run --out-root " ..
  dir .. "/hand")
t:ok(code == 0 and err:find("--set lr=0.01: min_lr follows it: lr x min_lr_ratio = 0.001", 1,
  true), "the run says min_lr follows: " .. err)
-- every committed config keeps its bytes (hashes unchanged)
local same, n = true, 0
for _, name in ipairs({ "prelim", "final", "scale", "init_scale", "lr_sweep_a", "claim_search" }) do
  for _, run in ipairs(study.load("lua/experiments/" .. name .. ".lua").runs) do
    local text = fs.read("experiments/" .. name .. "/" .. run.rel .. "/config.json")
    if text ~= record.config_text(run.cfg) then
      same = false
      io.stderr:write("config changed: ", name, "/", run.rel, "\n")
    end
    n = n + 1
  end
end
t:ok(same and n > 150, "every committed config.json of 6 studies is what the studies give (" ..
  n .. " runs)")

-- 3. plan always writes --threads.
local tiny = write_study("tiny", "iters = 6, warmup = 1")
code, out, err = check.run(repro .. " plan " .. tiny .. " --out-root " .. dir .. "/plan")
local lines, with = 0, 0
for l in out:gmatch("[^\n]+") do
  lines = lines + 1
  if l:find(" --threads 1$") then with = with + 1 end
end
t:ok(code == 0 and lines == 9 and with == 9, "every plan command carries --threads 1:\n" .. out)
t:ok(err:find("jobs x threads <= cores", 1, true), "and says how many to run at once: " .. err)
code, out = check.run(repro .. " plan " .. tiny .. " --threads 2 --out-root " .. dir .. "/plan")
t:ok(code == 0 and select(2, out:gsub(" %-%-threads 2\n", "")) == 9, "--threads 2 is passed on")

-- 4. A problem of every variant is reported once.
local bad = write_study("bad", "iters = 6, warmup = 1, n_head = 5")
code, _, err = check.run(repro .. " run " .. bad .. " --dry-run")
t:ok(code ~= 0 and select(2, err:gsub("n_head=5", "")) == 1 and err:find("base.n_head", 1, true),
  "n_head = 5 in base: one message, at base.n_head: " .. err)
code, _, err = check.run(repro .. " run " .. tiny .. " --set iters=1,warmup=3 --dry-run")
t:ok(code ~= 0 and select(2, err:gsub("warmup=3: must not exceed iters=1", "")) == 1 and
  err:find("--set warmup", 1, true), "a --set problem: one message, at --set: " .. err)

-- 5. analyze --set labels its messages as analyze.
code, _, err = check.run(repro .. " analyze " .. tiny .. " --set iters=5")
t:ok(code ~= 0 and err:find("repro analyze:", 1, true) and not err:find("repro run:", 1, true),
  "analyze --set says repro analyze: " .. err)

-- 6. Seeds from power, with their inputs.
local power = write_study("power", "iters = 6, warmup = 1",
  "{ count = { power = 0.8, sd = 0.01 }, first = 101 }")
code, out, err = check.run(repro .. " run " .. power .. " --dry-run --out-root " .. dir .. "/p")
s = study.load(power)
local p = s.seeds_from_power
t:ok(code == 0 and out:find(string.format("seeds from power: n = %d seeds (101 .. %d) for 80 %% " ..
  "power at the minimum effect delta = 0.01 with paired-difference sd 0.01 (stated in the study " ..
  "file)", p.n, 100 + p.n), 1, true) and out:find("alpha / m = 0.05 / 2", 1, true),
  "the dry run shows n with power, delta, sd and alpha / m: " .. out .. err)

-- 7. --set roots are readable (a slug of the overrides and a short hash); the summary
-- records the overrides; a root of the earlier form (12 hex) keeps being used.
local env = "REPRO_EXPERIMENTS=" .. dir .. "/exp "
code, out, err = check.run(env .. repro .. " run " .. tiny .. " --set iters=4,lr=1e-3 --jobs 2")
local set_root = err:match("go to (%S+) %(their own records root")
t:ok(code == 0 and set_root and set_root:find("/exp%-set/iters=4%+lr=0%.001%-%x%x%x%x%x%x%x%x$"),
  "--set root: <root>-set/iters=4+lr=0.001-<8 hex>: " .. tostring(set_root) .. err)
sum = json.decode(fs.read((set_root or "") .. "/tiny/summary.json") or "{}")
t:ok(sum.command_line_overrides and sum.command_line_overrides.iters == 4 and
  sum.command_line_overrides.lr == 1e-3, "the summary records the overrides")
local sys = require "repro.sys"
local legacy = dir .. "/exp-set/" .. sys.sha256("iters=5"):sub(1, 12)
os.execute("mkdir -p " .. legacy)
code, _, err = check.run(env .. repro .. " run " .. tiny .. " --set iters=5 --dry-run")
t:ok(code == 0 and err:find("go to " .. legacy .. " ", 1, true),
  "an existing root of the earlier form is used: " .. err)

-- 8. The study file's git status in the manifests.
local m = json.decode(fs.read((set_root or "") .. "/tiny/none/seed-1/manifest.json") or "{}")
t:eq(m.study_file_git, "outside the repository", "a run's manifest: the study file's git status")
t:eq(m.study_file, tiny, "and the study file")
m = json.decode(fs.read((set_root or "") .. "/tiny/manifest.json") or "{}")
t:eq(m.file_git, "outside the repository", "the study's manifest too")
t:eq(record.file_git_status("lua/experiments/final.lua"), "tracked", "a committed study: tracked")
local probe = "tests/lua/.untracked_probe_" .. require("repro.host").pid() .. ".lua"
check.write(probe, "return {}\n")
t:eq(record.file_git_status(probe), "untracked", "a new file: untracked")
os.remove(probe)

-- 9. A worker's key=value arguments give back each run's config exactly (min_lr given,
-- min_lr_ratio at its default).
local config = require "repro.core.config"
local exact = 0
for _, name in ipairs({ "instability_v1", "lr_sweep_a", "horizon" }) do
  for _, run in ipairs(study.load("lua/experiments/" .. name .. ".lua").runs) do
    local back = record.resolve(config.parse_overrides(config.args(run.cfg), "test"))
    if record.config_text(back) == record.config_text(run.cfg) and back.min_lr == run.cfg.min_lr then
      exact = exact + 1
    end
  end
end
t:eq(exact, 30 + 81 + 12, "every run's config survives the worker's arguments")

-- 10. The terminal: train's short summary (the full JSON with --json or into a pipe); the
-- study's progress lines carry step, loss, lr, tokens/s and ETA; the verdict table fits
-- COLUMNS.
local cli = require "repro.cli"
local text = cli.train_summary({ val_loss = 2.5, val_ppl = 12.18, val_acc = 0.29, ece = 0.01,
  train_loss = 2.4, final_grad_norm = 0.9, params = 1000, steps = 300, wall_s = 52,
  tokens_per_s = 21000 })
t:ok(text:find("val_loss 2.5000  val_ppl 12.180", 1, true) and text:find("--json", 1, true) and
  select(2, text:gsub("\n", "")) == 4, "train's terminal summary: 4 lines:\n" .. text)
local TRAIN = " train n_layer=1 d_model=32 n_head=2 context=32 batch=4 iters=3 warmup=1 data=" ..
  corpus
code, out = check.run(repro .. TRAIN)
t:ok(code == 0 and out:match("^{.*}\n$") and json.decode(out).val_loss, "piped: one JSON line")
code, out = check.run(repro .. TRAIN .. " --json")
t:ok(code == 0 and out:match("^{.*}\n$"), "--json: one JSON line")
if os.execute("command -v script >/dev/null 2>&1") then
  code, out = check.run("script -qec " .. fs.quote(repro .. TRAIN) .. " /dev/null")
  t:ok(code == 0 and out:find("val_loss %d%.%d%d%d%d  val_ppl") and not out:find('{"', 1, true),
    "on a terminal (script): the short summary, no JSON:\n" .. out)
end
-- a run piped: every PLAIN_EVERY_S a study line and one line per running run
local slow = write_study("slow", "iters = 150, warmup = 1, context = 64, batch = 16, d_model = 64",
  "{ 1, 2 }")
code, out, err = check.run("REPRO_PROGRESS_S=0.5 " .. repro .. " run " .. slow .. " --jobs 2 " ..
  "--only seed=1 --out-root " .. dir .. "/slow")
local run_lines = {}
for l in err:gmatch("[^\n]+") do
  if l:match("^  %S+/seed%-1  step %d+/150  loss %d+%.%d+  lr %d%.%d%de%-%d+  %d+ tok/s  ETA ") then
    run_lines[#run_lines + 1] = l
  end
end
t:ok(code == 0, "the slow study runs: " .. err)
t:ok(err:find("running  study ETA", 1, true) and #run_lines >= 2, "piped progress: a line " ..
  "per running run with step, loss, lr, tokens/s, ETA:\n" .. err)
code, out = check.run("COLUMNS=72 " .. repro .. " analyze " .. broken .. " --out-root " .. dir ..
  "/out")
local widest = 0
for l in out:gmatch("[^\n]+") do widest = math.max(widest, utf8.len(l) or #l) end
t:ok(code == 0 and widest <= 72 and out:find("WARNING:", 1, true), "COLUMNS=72: the verdict " ..
  "table and its sentences fit (widest " .. widest .. "):\n" .. out)

check.rmtree(dir)
t:done()
