-- Issue 50 (security round 4), classes 2 to 5: results adopted from a records tree the
-- suite did not write carry their provenance, the audit cannot be dodged, the task
-- harness checks its input at the edge, and the smaller breaks.  Each check below failed
-- on the code before the issue.
--   2. provenance: no copy from a folder of no known study; one folder per seed
--      (seed-01 is not seed-1: not a copy source, not in a records digest); a copy is
--      complete (tasks.csv) and names its source's checksums; a resumed record says so
--      in its manifest and `verify` names it.
--   3. audit: a seed from the system's random source, printed and repeatable; copied
--      records drawn first; Ctrl-C says "interrupted"; the predicted time from the
--      config's shape (a forged 10^7-step config refused above the bound); a config.json
--      that is not JSON reported, the audit going on.
--   5. smaller: the script guard evaluates a study as `run` does from any working
--      directory.
local check = require "repro.core.check"
check.data_anywhere()
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local sys = require "repro.sys"
local t = check.new("test_security4")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote
local code, out, err

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

-- 2b. One folder per seed ---------------------------------------------------------------
local digest, n = record.records_digest(root .. "/alpha")
copy_tree(root .. "/alpha/none/seed-1", root .. "/alpha/none/seed-01")
copy_tree(root .. "/alpha/none/seed-1", root .. "/alpha/none/seed-001")
local digest2, n2 = record.records_digest(root .. "/alpha")
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
t:ok(code == 0, "the source with its tasks.csv verifies: " .. out)
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root))
t:eq(code, 0, "beta copies alpha's records: " .. out .. err)
local copy = root .. "/beta/layernorm/seed-2"
t:eq(fs.read(copy .. "/tasks.csv"), fs.read(src .. "/tasks.csv"), "tasks.csv is copied")
code, out = check.run(repro .. " verify " .. q(root .. "/beta"))
t:ok(code == 0 and out:find("4 verified", 1, true), "every copy verifies: " .. out)
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
  ckpt_sha:sub(1, 12), 1, true) and out:find("1 resumed from a checkpoint", 1, true),
  "verify names the resumed record: " .. out)

-- 3a. The audit's draw: unpredictable seed, repeatable, adopted records first ----------
local G = write_study("gamma", "1, 2, 3, 4")
code, out, err = check.run(repro .. " run " .. q(G) .. " --out-root " .. q(root))
t:ok(code == 0 and err:find("4 copied", 1, true), "gamma copies seeds 1 and 2: " .. out .. err)
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
t:ok(all_copied, "the copied records (seeds 1 and 2) are drawn first")
local _, o1, _, s1, c1 = audit_draw("--seed 12345")
local _, o2, _, s2, c2 = audit_draw("--seed 12345")
t:ok(s1 == 12345 and s2 == 12345 and c1 and c1 == c2 and o1:find("--seed 12345 repeats", 1, true),
  "--seed S repeats a draw: " .. o1 .. o2)

-- 3b. The predicted time comes from the config, not the manifest ------------------------
local unp = root .. "/unp/none"
fs.mkdir_p(unp)
copy_tree(root .. "/alpha/none/seed-1", unp .. "/seed-1")
copy_tree(root .. "/alpha/none/seed-2", unp .. "/seed-2")
local long = json.decode(assert(fs.read(unp .. "/seed-2/config.json")))
long.iters = 10000000
forge(unp .. "/seed-2", "config.json", json.pretty(long))
code, out, err = check.run("timeout 120 " .. repro .. " audit unp --sample 2 --seed 1 --out-root " ..
  q(root))
t:ok(code == 1 and err:find("above the bound", 1, true) and err:find("10000000 steps", 1, true) and
  not out:find("same", 1, true), "a forged 10^7-step config is predicted long and refused: " .. out .. err)
local pred = out:match("predicted time: (%S+)")
t:ok(pred and pred:match("h"), "its predicted time is hours: " .. tostring(pred))

-- 3c. A config.json that is not JSON is reported and the audit goes on ------------------
forge(unp .. "/seed-2", "config.json", "{ not json")
code, out, err = check.run(repro .. " audit unp --sample 2 --seed 1 --out-root " .. q(root))
t:ok(code == 1 and out:find("UNREADABLE " .. unp .. "/seed-2: config.json is not a JSON object", 1, true)
  and out:find("same     " .. unp .. "/seed-1", 1, true) and not err:find("traceback", 1, true),
  "an unparseable config.json is reported and the other record is audited: " .. out .. err)

-- 3d. Ctrl-C during an audit says "interrupted", never "differs" ------------------------
local slow = root .. "/slow/none"
fs.mkdir_p(slow)
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
  not aout:find("forged", 1, true), "an interrupted audit says so: " .. aout)
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

check.rmtree(dir)
t:done()
