-- Results adopted from a records tree the
-- suite did not write carry their provenance, the audit cannot be dodged, the task
-- harness checks its input at the edge, and the smaller breaks.  Each break below has
-- checks that fail on the code before the issue (73 of the 91 checks; the others are
-- setups and controls that pass either way).
--   2. provenance: no copy from a folder of no known study, nor from one outside that
--      study's record set (a folder that is no variant, a seed it lacks); one folder per seed
--      (seed-01 is not seed-1: not a copy source, not in a records digest); a copy is
--      complete (tasks.csv) and names its source's checksums; a resumed record says so
--      in its manifest and `verify` names it.
--   3. audit: a seed from the system's random source, printed and repeatable; adopted
--      records drawn first; Ctrl-C says "interrupted"; the predicted time from the
--      config's shape (a forged 10^8-step config refused above the bound, a forged giant
--      one from its FLOPs before any calibration); a config.json that is not JSON
--      reported, the audit going on.
--   4. tasks: answers Infinity, 1e300, NaN, 0.5 refused naming file and line (run
--      --dry-run, tasks show); a byte outside the vocabulary or a choice longer than the
--      window refused at planning; task text and skip reasons through repro_printable;
--      repro.train_counts bounded (a probe rebuilds 8 characters, 80 before); the
--      paper's agreement note checks the task file's SHA-256 against the records'.
--   5. smaller: the script guard evaluates a study as `run` does from any working
--      directory and with every placeholder; compare/export STUDY read the records
--      root; the listing's and the guard's evaluations share one time budget.
local check = require "check"
check.data_anywhere()
local proc = require "repro.proc"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local sys = require "repro.sys"
local t = check.new("test_adopted_records")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote
local code, out, err
proc.setenv("REPRO_TASKS", dir .. "/tasks") -- the task files of the temporary corpus

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 50000))
local function write_study(name, seeds, iters)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = "security round 4",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = %d,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { %s },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], name, iters or 4, corpus, seeds))
  return path
end
-- rewrites a record's file and its checksum as a forger with the suite's functions would
local function forge(rec, file, text)
  check.write(rec .. "/" .. file, text)
  local man = json.decode(assert(fs.read(rec .. "/manifest.json")))
  man.sha256[file] = sys.sha256(text)
  check.write(rec .. "/manifest.json", record.manifest_text(man))
end
local function copy_tree(from, to)
  assert(os.execute("cp -R " .. q(from) .. " " .. q(to)))
end

local A = write_study("alpha", "1, 2")
local B = write_study("beta", "1, 2")
local root = dir .. "/exp"
code, out, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(root))
t:eq(code, 0, "the study runs: " .. err)

-- 2a. A folder of no known study is never a copy source -------------------------------
-- its records verify (a forger recomputes the checksums), but no ghost.lua exists
assert(os.rename(root .. "/alpha", root .. "/ghost"))
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root) .. " --dry-run")
t:ok(code == 0 and not out:find("copy ", 1, true) and out:find("4 to train", 1, true),
  "records under a folder of no study file are not copied: " .. out .. err)
assert(os.rename(root .. "/ghost", root .. "/alpha"))
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root) .. " --dry-run")
t:ok(code == 0 and out:find("4 copied", 1, true),
  "the same records under the folder of a known study (alpha.lua) are: " .. out .. err)
-- only the members of that study's record set are: not a folder that is no variant of
-- it, nor a seed it does not have (here a genuine record of seed 3 in alpha/none/)
assert(os.rename(root .. "/alpha/none", root .. "/alpha/extra"))
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root) .. " --dry-run")
t:ok(code == 0 and out:find("2 copied", 1, true) and not out:find("alpha/extra", 1, true),
  "a folder that is no variant of the known study is not copied from: " .. out .. err)
assert(os.rename(root .. "/alpha/extra", root .. "/alpha/none"))
local D = write_study("delta", "1, 2, 3")
for _, r in ipairs(require("repro.study").load(D, nil, { out_root = root }).runs) do
  if r.seed == 3 and r.variant == "none" then record.run(r.cfg, root .. "/alpha/none/seed-3") end
end
code, out, err = check.run(repro .. " run " .. q(D) .. " --out-root " .. q(root) .. " --dry-run")
t:ok(code == 0 and out:find("4 copied", 1, true) and out:find("train   none/seed-3", 1, true),
  "a seed the known study does not have is not copied from: " .. out .. err)
fs.remove_tree(root .. "/alpha/none/seed-3")

-- 2b. One folder per seed ---------------------------------------------------------------
local set = require "repro.record.set"
local alpha_design = set.design(json.decode(assert(fs.read(root .. "/alpha/summary.json"))))
local digest, n = set.digest(root .. "/alpha", alpha_design)
copy_tree(root .. "/alpha/none/seed-1", root .. "/alpha/none/seed-01")
copy_tree(root .. "/alpha/none/seed-1", root .. "/alpha/none/seed-001")
local digest2, n2 = set.digest(root .. "/alpha", alpha_design)
t:ok(n2 == n and n == 4 and digest2 == digest,
  "seed-01 and seed-001 are not counted in the records digest: " .. tostring(n) .. " " .. tostring(n2))
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root) .. " --dry-run")
t:ok(code == 0 and out:find("alpha/none/seed-1)", 1, true) and not out:find("seed-0", 1, true),
  "the copy source is the canonical seed-1 folder: " .. out .. err)
local seed_of = record.seed_of_dir or function() return "no record.seed_of_dir" end
t:eq(seed_of("seed-1"), 1, "seed-1 is seed 1")
t:eq(seed_of("seed-0"), 0, "seed-0 is seed 0")
for _, bad in ipairs({ "seed-01", "seed-001", "seed-+1", "seed-1x", "seed-", "seed--1",
    "seed-99999999999999999999" }) do
  t:eq(seed_of(bad), nil, bad .. " is no seed folder")
end
fs.remove_tree(root .. "/alpha/none/seed-01")
fs.remove_tree(root .. "/alpha/none/seed-001")

-- 2c. A copy is complete (tasks.csv too) and names its source's checksums --------------
local src = root .. "/alpha/layernorm/seed-2"
forge(src, "tasks.csv", "task,shots,item,correct,correct_norm\nx,0,1,1,1\n")
code, out = check.run(repro .. " verify " .. q(src))
t:ok(code == 1 and
  out:find("ADOPTED      " .. src .. ": adopted (neither committed nor made", 1, true),
  "the source with its forged tasks.csv verifies, but this checkout did not make it: " .. out)
code, out = check.run(repro .. " verify --accept-adopted " .. q(src))
t:ok(code == 0, "the source with its tasks.csv verifies: " .. out)
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root))
t:eq(code, 0, "beta copies alpha's records: " .. out .. err)
local copy = root .. "/beta/layernorm/seed-2"
t:eq(fs.read(copy .. "/tasks.csv"), fs.read(src .. "/tasks.csv"), "tasks.csv is copied")
code, out = check.run(repro .. " verify --accept-adopted " .. q(root .. "/beta"))
t:ok(code == 0 and out:find("4 verified", 1, true), "every copy verifies: " .. out)
t:ok(out:find("ADOPTED      " .. copy .. ": adopted (a copy of an adopted record: " ..
  "alpha/layernorm/seed-2)", 1, true), "a copy of an adopted record is adopted: " .. out)
t:ok(out:find("copied       " .. copy .. ": copied from alpha/layernorm/seed-2", 1, true),
  "verify names a copied record and its source: " .. out)
local cman = json.decode(assert(fs.read(copy .. "/manifest.json")))
local sman = json.decode(assert(fs.read(src .. "/manifest.json")))
t:eq(cman.copied_manifest_sha256, sman.manifest_sha256,
  "the copy's manifest names the source's manifest digest (its checksums)")
t:eq(cman.sha256["tasks.csv"], sman.sha256["tasks.csv"], "and the checksum of tasks.csv")

-- 2d. A resumed run says so in its manifest; verify names it ------------------------------
local rdir = dir .. "/resumed/v/seed-1"
local cfg = record.resolve({ n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4,
  iters = 6, warmup = 1, diag_every = 2, diag_windows = 2, data = corpus, seed = 1 })
local m = record.run(cfg, rdir, { on_step = function(step) return step >= 2 end })
t:ok(m.stopped, "the first part stops after step 3 with a checkpoint")
local ckpt = record.checkpoint_path(rdir, sys.sha256_file(rdir .. "/config.json"))
local ckpt_sha = sys.sha256_file(ckpt)
t:ok(ckpt_sha ~= nil, "its checkpoint is there")
record.run(cfg, rdir, {})
local rman = json.decode(assert(fs.read(rdir .. "/manifest.json")))
t:eq(rman.resumed_from_step, 3, "the manifest gives the step it resumed from")
t:eq(rman.resumed_checkpoint_sha256, ckpt_sha, "and the SHA-256 of the checkpoint it resumed")
code, out = check.run(repro .. " verify " .. q(dir .. "/resumed"))
t:ok(code == 0 and out:find("resumed      " .. rdir .. ": resumed from a checkpoint at step 3 (SHA-256 " ..
  ckpt_sha:sub(1, 12), 1, true) and not out:find("ADOPTED", 1, true),
  "verify names the resumed record, made here from its own checkpoint: " .. out)

t:eq(rman.resumed_checkpoint_known, true, "the checkpoint is one this suite wrote (noted at the stop)")
t:ok(out:find("one this suite wrote for the run", 1, true), "verify says so: " .. out)
-- a checkpoint planted from another folder: resumed, but said not to be this run's own,
-- and what grows from it stays foreign
local other = dir .. "/other/v/seed-1"
record.run(cfg, other, { on_step = function(step) return step >= 2 end })
local pdir = dir .. "/planted/v/seed-1"
fs.mkdir_p(pdir)
check.write(pdir .. "/config.json", record.config_text(cfg))
local pck = record.checkpoint_path(pdir, sys.sha256_file(pdir .. "/config.json"))
assert(os.execute("cp " .. q(record.checkpoint_path(other, sys.sha256_file(other .. "/config.json"))) ..
  " " .. q(pck)))
m = record.run(cfg, pdir, { on_step = function(step) return step >= 4 end })
t:ok(m.stopped, "the planted checkpoint's run stops once more")
record.run(cfg, pdir, {})
local pman = json.decode(assert(fs.read(pdir .. "/manifest.json")))
t:eq(pman.resumed_checkpoint_known, false, "a run grown from a planted checkpoint is not the suite's own")
code, out = check.run(repro .. " verify " .. q(dir .. "/planted"))
t:ok(code == 1 and out:find("resumed      " .. pdir .. ": resumed from a checkpoint at step 5", 1, true) and
  out:find("NOT one this suite recorded writing", 1, true) and out:find("ADOPTED      " .. pdir ..
  ": adopted (resumed from a checkpoint", 1, true), "verify flags it, and fails: " .. out)
record.run(cfg, other, {}) -- completed: its checkpoint's entry in the journal goes

-- 3a. The audit's draw: unpredictable seed, repeatable, adopted records first ----------
-- an entry of a checkpoint that is gone (its run folder removed unfinished) is pruned
local host_root = require("repro.host").root
local ledger_dir = host_root .. "/" .. require("repro.record.provenance").JOURNAL .. "/checkpoints"
local stale = ledger_dir .. "/" .. sys.sha256(dir .. "/gone")
fs.mkdir_p(ledger_dir)
check.write(stale, ("0"):rep(64) .. " 5 own\nat " .. dir .. "/gone/checkpoint-0.rptf\n")
local G = write_study("gamma", "1, 2, 3, 4")
code, out, err = check.run(repro .. " run " .. q(G) .. " --out-root " .. q(root))
t:ok(code == 0 and err:find("4 copied", 1, true), "gamma copies seeds 1 and 2: " .. out .. err)
t:ok(not fs.exists(stale), "the next run removed the entry of a checkpoint that is gone")
local function audit_draw(extra)
  local c, o, e = check.run(repro .. " audit gamma --sample 1 --max-time 1e-9 --out-root " ..
    q(root) .. " " .. (extra or ""))
  return c, o, e, tonumber(o:match("chosen %(seed (%d+),")), o:match("\n  (%S+)  %(")
end
local seeds, all_copied = {}, true
for k = 1, 8 do
  local c, o, e, seed, chosen = audit_draw()
  t:ok(c == 1 and e:find("above the bound", 1, true) and e:find("nothing was trained", 1, true),
    "a predicted time above --max-time is refused before training: " .. o .. e)
  t:ok(o:find("from the system's random source", 1, true) and seed,
    "the seed comes from the system and is printed: " .. o)
  if seed then seeds[seed] = true end
  local sd = chosen and chosen:match("seed%-(%d+)$")
  if not (sd == "1" or sd == "2") then all_copied = false end
end
local distinct = 0
for _ in pairs(seeds) do distinct = distinct + 1 end
t:ok(distinct >= 7, "eight audits draw with different seeds: " .. distinct)
t:ok(all_copied, "the adopted record (the copy of the forged seed 2) is drawn first")
local _, o1, _, s1, c1 = audit_draw("--seed 12345")
local _, o2, _, s2, c2 = audit_draw("--seed 12345")
t:ok(s1 == 12345 and s2 == 12345 and c1 and c1 == c2 and o1:find("--seed 12345 repeats", 1, true),
  "--seed S repeats a draw: " .. o1 .. o2)

-- 3b. The predicted time comes from the config, not the manifest ------------------------
local unp = root .. "/unp/none"
fs.mkdir_p(unp)
-- a study's folder by its summary's design
check.write(root .. "/unp/summary.json", assert(fs.read(root .. "/alpha/summary.json")))
copy_tree(root .. "/alpha/none/seed-1", unp .. "/seed-1")
copy_tree(root .. "/alpha/none/seed-2", unp .. "/seed-2")
local long = json.decode(assert(fs.read(unp .. "/seed-2/config.json")))
long.iters = 100000000
forge(unp .. "/seed-2", "config.json", json.pretty(long))
code, out, err = check.run("timeout 120 " .. repro .. " audit unp --sample 2 --seed 1 --out-root " ..
  q(root))
t:ok(code == 1 and err:find("above the bound", 1, true) and err:find("100000000 steps", 1, true) and
  not out:find("same", 1, true), "a forged 10^8-step config is predicted long and refused: " .. out .. err)
-- predicted by the cost model, or refused from its FLOPs (a busy machine's lower peak)
local pred = err:match("predicted time (%S+) is above") or err:match("need at least (%S+)")
t:ok(pred and pred:match("^%d+h%d%dm$"), "its time is hours: " .. tostring(pred))

-- a forged giant config is refused from its FLOPs, before the cost model calibrates it
local giant = json.decode(assert(fs.read(unp .. "/seed-1/config.json")))
giant.d_model, giant.n_layer, giant.n_head, giant.iters = 256, 8, 4, 1000000
forge(unp .. "/seed-2", "config.json", json.pretty(giant))
code, out, err = check.run("timeout 120 " .. repro .. " audit unp --sample 2 --seed 1 --out-root " ..
  q(root))
t:ok(code == 1 and err:find("need at least", 1, true) and err:find("FMA peak", 1, true) and
  not err:find("calibrating", 1, true) and not out:find("same", 1, true),
  "a forged 8-layer, 10^6-step config is refused from its FLOPs, nothing calibrated: " .. out .. err)

-- 3c. A config.json that is not JSON is reported and the audit goes on ------------------
forge(unp .. "/seed-2", "config.json", "{ not json")
code, out, err = check.run(repro .. " audit unp --sample 2 --seed 1 --out-root " .. q(root))
t:ok(code == 1 and out:find("UNREADABLE " .. unp .. "/seed-2: config.json is not a JSON object", 1, true)
  and out:find("same     " .. unp .. "/seed-1", 1, true) and not err:find("traceback", 1, true),
  "an unparseable config.json is reported and the other record is audited: " .. out .. err)

-- 3d. Ctrl-C during an audit says "interrupted", never "differs" ------------------------
local slow = root .. "/slow/none"
fs.mkdir_p(slow)
check.write(root .. "/slow/summary.json", assert(fs.read(root .. "/alpha/summary.json")))
copy_tree(root .. "/alpha/none/seed-1", slow .. "/seed-1")
local sc = json.decode(assert(fs.read(slow .. "/seed-1/config.json")))
sc.iters = 100000
forge(slow .. "/seed-1", "config.json", json.pretty(sc))
local outf, rcf = dir .. "/audit.out", dir .. "/audit.rc"
os.execute(string.format("(%s audit slow --sample 1 --seed 1 --out-root %s >%s 2>&1 & " ..
  "pid=$!; n=0; while ! grep -q 'predicted time' %s && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; " ..
  "sleep 1; kill -INT $pid; wait $pid; echo $? >%s)", repro, q(root), q(outf), q(outf), q(rcf)))
local aout = fs.read(outf) or ""
t:ok(aout:find("interrupted", 1, true) and not aout:find("DIFFERS", 1, true) and
  not aout:find("corrupt or forged", 1, true), "an interrupted audit says so: " .. aout)
t:eq(tonumber(fs.read(rcf) or ""), 130, "and exits with status 130")

-- 5a. The script guard evaluates a study as `run` does, from any working directory ------
local mark = dir .. "/PWNED"
local evil = dir .. "/evil.lua"
check.write(evil, string.format([[
local ok = pcall(function() return repro.result("alpha", "study") end)
if not ok then
  if io then io.open(%q, "w"):close() end
  return { note = "no study" }
end
return { name = "evil", description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4 },
  variants = { { name = "none", embed_norm = "none" } }, seeds = { 1 } }
]], mark))
local env = "REPRO_EXPERIMENTS=" .. q(root) .. " "
code, out, err = check.run("cd " .. q(dir) .. " && " .. env .. repro .. " script evil.lua")
t:ok(code == 1 and err:find("returns a study table", 1, true) and not fs.exists(mark),
  "a study whose host functions read the records root is refused from another folder: " .. err)
code, out, err = check.run(env .. repro .. " script " .. q(evil))
t:ok(code == 1 and err:find("returns a study table", 1, true) and not fs.exists(mark),
  "and from the project root: " .. err)
-- one that is a study only once another study's results exist (`run --out-root DIR`
-- where they do accepts it)
check.write(evil, string.format([[
local ok = pcall(function() return repro.result("nosuch", "study") end)
if not ok then
  if io then io.open(%q, "w"):close() end
  return { note = "no study" }
end
return { name = "evil", description = "x", base = { iters = 4 },
  variants = { { name = "none" } }, seeds = { 1 } }
]], mark))
code, out, err = check.run("cd " .. q(dir) .. " && " .. env .. repro .. " script evil.lua")
t:ok(code == 1 and err:find("returns a study table", 1, true) and not fs.exists(mark),
  "a study table whatever another study's results are is refused: " .. err)


-- 4. The task harness at the edge -----------------------------------------------------
local tasks = require "repro.tasks"
local items = require "repro.tasks.items"
local tdir = tasks.dir_of(corpus)
fs.mkdir_p(tdir)
for _, task in ipairs(tasks.suite("core")) do
  if task ~= "completion" then check.write(tasks.skip_file(tdir, task), "not in this test\n") end
end
local good = {
  '{"answer":0,"choices":[" to"," be"],"context":"To be or not"}',
  '{"answer":1,"choices":[" king"," lord"],"context":"My good"}',
  '{"answer":0,"choices":[" day"," man"],"context":"Good"}',
}
local cfile, cpool = tasks.files(tdir, "completion")
local function task_file(lines)
  check.write(cfile, table.concat(lines, "\n") .. "\n")
  check.write(cpool, table.concat(good, "\n") .. "\n")
end
local T = dir .. "/tstudy.lua"
check.write(T, string.format([[
return { name = "tstudy", description = "tasks at the edge",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, data = %q, tasks = "core" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], corpus))
local function dry()
  return check.run(repro .. " run " .. q(T) .. " --out-root " .. q(dir .. "/texp") .. " --dry-run")
end
task_file(good)
code, out, err = dry()
t:ok(code == 0 and out:find("4 to train", 1, true), "a task study whose items fit plans: " .. out .. err)
-- answers that are no integer: a clear error naming the file and line, no traceback
for _, a in ipairs({ "Infinity", "1e300", "-Infinity", "NaN", "0.5" }) do
  local bad = { good[1], '{"answer":' .. a .. ',"choices":[" x"," y"],"context":"Then"}', good[3] }
  task_file(bad)
  code, out, err = dry()
  t:ok(code == 1 and err:find("completion-v1.jsonl: item 2 (line 2): answer: an integer from 0 " ..
    "to 1 expected", 1, true) and not err:find("traceback", 1, true),
    "answer " .. a .. ": run --dry-run refuses naming the file and line: " .. err)
  code, out, err = check.run(repro .. " tasks show completion --data " .. q(corpus))
  t:ok(code == 1 and err:find("item 2 (line 2): answer", 1, true) and
    not err:find("traceback", 1, true), "and tasks show: " .. err)
end
-- a byte outside the corpus's vocabulary, a choice longer than the window: refused at
-- planning, naming the file and the item
task_file({ good[1], good[2], '{"answer":0,"choices":[" caf\u{e9}"," cafe"],"context":"A"}' })
code, out, err = dry()
t:ok(code == 1 and err:find("completion-v1.jsonl: item 3 (line 3): choice 0 holds byte 0xc3, " ..
  "which is not in the vocabulary of corpus corpus", 1, true),
  "a byte outside the vocabulary is refused at planning: " .. err)
-- the same in a later suite version: the message names that version's file
local v2file, v2pool = tasks.files(tdir, "completion", 2)
check.write(v2file, good[1] .. "\n" .. '{"answer":0,"choices":[" caf\u{e9}"," cafe"],"context":"A"}' .. "\n")
check.write(v2pool, table.concat(good, "\n") .. "\n")
local T2 = dir .. "/tstudy2.lua"
check.write(T2, (fs.read(T):gsub('tasks = "core"', 'tasks = "core2"'):gsub('"tstudy"', '"tstudy2"')))
code, out, err = check.run(repro .. " run " .. q(T2) .. " --out-root " .. q(dir .. "/texp") ..
  " --dry-run")
t:ok(code == 1 and err:find("completion-v2.jsonl: item 2 (line 2): choice 0 holds byte 0xc3", 1,
  true), "a later suite version's file is the one named: " .. err)
os.remove(v2file)
os.remove(v2pool)
task_file({ good[1], '{"answer":1,"choices":[" and so it goes on and on"," no"],"context":"A"}' })
code, out, err = dry()
t:ok(code == 1 and err:find("completion-v1.jsonl: item 2 (line 2): choice 0 has 25 bytes, more " ..
  "than the model's window (context = 16)", 1, true),
  "a choice longer than the window is refused at planning: " .. err)
check.write(cpool, good[1] .. "\n" .. '{"answer":0,"choices":[" \u{e9}t\u{e9}"," no"],"context":"A"}' .. "\n")
check.write(cfile, table.concat(good, "\n") .. "\n")
code, out, err = dry()
t:ok(code == 1 and err:find("completion-v1.pool.jsonl: item 2 (line 2)", 1, true),
  "and a demonstration of the pool: " .. err)
-- task text reaches the terminal only through the printable function
local hostile = "\27]0;owned\7\27[2J\u{9b}31m\u{202e}evil"
task_file({ json.encode({ context = "Ctx " .. hostile, choices = json.array({ " a" .. hostile, " b" }),
  answer = 0 }), good[2] })
code, out, err = check.run(repro .. " tasks show completion --data " .. q(corpus))
t:ok(code == 0 and not out:find("\27", 1, true) and not out:find("\u{9b}", 1, true) and
  not out:find("\u{202e}", 1, true) and not out:find("\7", 1, true) and
  out:find("\\x1b]0;owned", 1, true), "tasks show prints task text through repro_printable: " .. out .. err)
local cli_tasks = require "repro.cli.tasks"
local said = {}
local real_write = io.write
io.write = function(...) for _, x in ipairs({ ... }) do said[#said + 1] = x end end
local pok = pcall(function()
  cli_tasks.put(cli_tasks.build_line("speaker", { skipped = "no speakers " .. hostile }))
end)
io.write = real_write
local line = table.concat(said)
t:ok(pok and line:find("skipped: no speakers", 1, true) and not line:find("\27", 1, true) and
  not line:find("\u{202e}", 1, true), "tasks build prints a skip reason through it too: " .. line)

-- repro.train_counts is bounded: a probe that extends a training-only string one byte
-- at a time learns a few dozen characters at the most, not 80
local text = assert(fs.read(corpus))
local train = text:sub(1, #text * 9 // 10)
local start_at = 20001
local seedtxt = train:sub(start_at, start_at + 22)
local alphabet = {}
for b = 0, 255 do
  if text:find(string.char(b), 1, true) then alphabet[#alphabet + 1] = string.char(b) end
end
local probe = dir .. "/probe.lua"
check.write(probe, string.format([[
local known, alphabet = %q, %s
while #known < 103 do
  local tail = known:sub(-23)
  local list = {}
  for i, c in ipairs(alphabet) do list[i] = tail .. c end
  local ok, counts = pcall(repro.train_counts, list)
  if not ok then break end
  local next_c
  for i, n in ipairs(counts) do if n > 0 then next_c = alphabet[i] break end end
  if not next_c then break end
  known = known .. next_c
end
return { skip = known }
]], seedtxt, (function()
  local parts = {}
  for _, c in ipairs(alphabet) do parts[#parts + 1] = string.format("%q", c) end
  return "{" .. table.concat(parts, ", ") .. "}"
end)()))
local r = tasks.build(corpus, "probe", { dir = dir .. "/probe", generator = probe })
local learned = (r.skipped or ""):sub(24)
local right = 0
while right < #learned and learned:sub(right + 1, right + 1) ==
  train:sub(start_at + 23 + right, start_at + 23 + right) do right = right + 1 end
t:ok(right < 40, "a counting probe rebuilds fewer than 40 characters of training text: " ..
  right .. " (" .. #learned .. " learned)")
local function counts_gen(list_src)
  return pcall(tasks.build, corpus, "cnt", { dir = dir .. "/cnt", generator = (function()
      local p = dir .. "/cnt.lua"
      check.write(p, "local l = " .. list_src .. "\nlocal c = repro.train_counts(l)\n" ..
        "return { skip = tostring(#c) }\n")
      return p
    end)() })
end
t:ok(tasks.TRAIN_COUNTS_MAX == 1024, "the bound is 1,024 strings: " .. tostring(tasks.TRAIN_COUNTS_MAX))
local ok1, e1 = counts_gen("{} for i = 1, 1025 do l[i] = 'the' end")
t:ok(not ok1 and tostring(type(e1) == "table" and e1.message or e1):find("more than the 1024", 1, true),
  "more than 1,024 strings counted is refused: " .. tostring(type(e1) == "table" and e1.message or e1))
local ok2, e2 = counts_gen("{ ('a'):rep(25) }")
t:ok(not ok2 and tostring(type(e2) == "table" and e2.message or e2):find("25 bytes, more than the 24", 1, true),
  "a counted string of 25 bytes is refused: " .. tostring(type(e2) == "table" and e2.message or e2))
local ok3, r3 = counts_gen("{} for i = 1, 1024 do l[i] = ('e'):rep(24) end")
t:ok(ok3 and r3.skipped == "1024", "1,024 strings of 24 bytes are counted: " .. tostring(ok3 and r3.skipped or r3))

-- the paper's agreement note counts only against the task file the records name
local notes = require("repro.core.extension").load("paper/lib/tex_task_notes.lua", "test")
local afile = tasks.files(tdir, "agreement")
os.remove(tasks.skip_file(tdir, "agreement"))
check.write(afile, '{"answer":0,"choices":[" art"," are"],"context":"thou"}\n' ..
  '{"answer":1,"choices":[" art"," are"],"context":"you"}\n')
local run = dir .. "/notes/v/seed-1"
-- a record as the record reader gives it (report/data.lua Study:record): its verified
-- tasks.csv and manifest
local function notes_with(sha)
  local rec = { tasks_csv = "task,shots,item,correct,correct_norm\nagreement,0,1,1,1\n" ..
    "agreement,0,2,0,0\n", manifest = { task_files = { [fs.relative_to_root(afile)] = sha } } }
  local defs = {}
  local S = { summary = { tasks = { chance = { agreement = 0.5 } } }, variants = { { name = "v" } },
    seeds = { 1 }, config_value = function() return corpus end,
    run_dir = function() return run end, record = function() return rec end }
  local ok, e = pcall(notes.numbers, function(k, v) defs[k] = v end, S, "Zz")
  return ok, ok and defs or (type(e) == "table" and e.message or tostring(e))
end
local okn, defs = notes_with(fs.sha256(afile))
t:ok(okn and defs.ZzAgreementRuns == "1" and defs.ZzAgreementHalfRuns == "1",
  "the note counts a run that names the file's SHA-256: " .. tostring(okn and defs.ZzAgreementRuns or defs))
okn, defs = notes_with(("0"):rep(64))
t:ok(not okn and tostring(defs):find("would be counted against another file", 1, true),
  "and refuses one that names another SHA-256: " .. tostring(defs))

-- 5b. compare/export STUDY read the records root, a folder of that name here only as ./X
local here = dir .. "/here"
fs.mkdir_p(here .. "/alpha/none")
copy_tree(root .. "/alpha/none/seed-1", here .. "/alpha/none/seed-1")
local fm = json.decode(assert(fs.read(here .. "/alpha/none/seed-1/metrics.json")))
fm.val_loss = 0.123456
forge(here .. "/alpha/none/seed-1", "metrics.json", json.pretty(fm))
local real_loss = json.decode(assert(fs.read(root .. "/alpha/none/seed-1/metrics.json"))).val_loss
for _, cmd in ipairs({ "compare alpha --runs --csv", "export alpha" }) do
  code, out, err = check.run("cd " .. q(here) .. " && " .. env .. repro .. " " .. cmd)
  t:ok(code == 0 and not out:find("0.123456", 1, true) and out:find("alpha,none", 1, true),
    cmd .. " from a folder holding alpha/ reads the records root's alpha: " .. out .. err)
  code, out, err = check.run("cd " .. q(here) .. " && " .. env .. repro .. " " ..
    cmd:gsub("alpha", "./alpha"))
  t:ok(code == 0 and out:find("0.123456", 1, true), "and ./alpha that folder: " .. out .. err)
end
code, out, err = check.run("cd " .. q(here) .. " && " .. env .. repro .. " compare nosuch")
t:ok(code == 1 and err:find("no study with records under", 1, true), "a study with no records: " .. err)
t:ok(real_loss ~= 0.123456, "the records root's value differs from the forged one")

-- 5c. The listing evaluations of a study file share one time budget -------------------
local study = require "repro.study"
local sandbox = require "repro.sandbox"
local host = require "repro.host"
local real_eval, real_now = sandbox.eval, host.now
local clock, walls = 1000, {}
sandbox.eval = function(_, _, limits)
  walls[#walls + 1] = limits.wall_s
  clock = clock + 8 -- each evaluation takes 8 s and fails with its placeholder
  return true, { reads = { "nosuch" }, ok = false, unread = 1, error = "attempt to index a nil value" }
end
host.now = function() return clock end
local lpath = dir .. "/listed.lua"
check.write(lpath, "return repro.result('nosuch', 'x').y\n")
local lok, lerr = pcall(study.dependencies, lpath, { out_root = root })
local cli = require "repro.cli"
walls.guard_from = #walls + 1
local gok, gerr = pcall(cli.guard_script, lpath)
sandbox.eval, host.now = real_eval, real_now
t:ok(#walls >= 3 and walls[1] == study.LIMITS.wall_s and walls[2] <= study.LIMITS.wall_s - 8 + 1e-9 and
  walls[3] <= study.LIMITS.wall_s - 16 + 1e-9, "studies: the three evaluations share one budget: " ..
  table.concat(walls, " ", 1, math.min(3, #walls)) .. " " .. tostring(lok) .. " " ..
  tostring(type(lerr) == "table" and lerr.message or lerr))
local gw = { table.unpack(walls, walls.guard_from) }
t:ok(#gw >= 2 and gw[1] == study.LIMITS.wall_s and gw[2] <= study.LIMITS.wall_s - 8 + 1e-9 and
  not gok and tostring(type(gerr) == "table" and gerr.message or gerr):find("one budget", 1, true),
  "the script guard's evaluations share one budget too: " .. table.concat(gw, " ") .. " " ..
  tostring(type(gerr) == "table" and gerr.message or gerr))

check.rmtree(dir)
t:done()
