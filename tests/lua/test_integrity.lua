-- The records tree is not a path into the machine, and integrity cannot be downgraded
--.  A study, variant or run directory that is a symbolic
-- link is refused with its path and nothing outside the tree is written or deleted;
-- stale-temp cleanup removes only regular files; verify reports links without following
-- them.  A record whose manifest lost its checksums (and whose metric was then edited)
-- is not trusted: verify fails it, run refuses to reuse it, no other study copies it and
-- the report does not read it; --rehash adds checksums to a reviewed legacy record.  A
-- summary.json that is a FIFO or a link to /dev/zero is refused at once.
local check = require "check"
local record_set = require "repro.record.set"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local host = require "repro.host"
local json = require "repro.core.json"
local record = require "repro.record"
local sys = require "repro.sys"
local t = check.new("test_integrity")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 50000))
local function write_study(name, seeds)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = "integrity",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { %s },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], name, corpus, seeds))
  return path
end
local A = write_study("alpha", "1, 2")
local B = write_study("beta", "1, 2")
local root = dir .. "/exp"
local code, out, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(root))
t:eq(code, 0, "the study runs: " .. err)

-- 1. Downgrade: checksums removed, a metric edited --------------------------------------
local victim = root .. "/alpha/layernorm/seed-2"
local summary_before = fs.read(root .. "/alpha/summary.json")
local man = json.decode(assert(fs.read(victim .. "/manifest.json")))
man.sha256 = nil
check.write(victim .. "/manifest.json", json.pretty(man))
local m = json.decode(assert(fs.read(victim .. "/metrics.json")))
m.val_loss = 0.001
check.write(victim .. "/metrics.json", json.pretty(m))
code, out = check.run(repro .. " verify " .. q(root))
t:ok(code == 1 and out:find("no checksum  " .. victim, 1, true),
  "verify fails a record without checksums, naming it: " .. out)
code, out, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(root))
t:ok(code == 1 and err:find("not trusted", 1, true) and
  err:find(victim, 1, true), "run refuses to reuse it, naming it: " .. err)
t:eq(fs.read(root .. "/alpha/summary.json"), summary_before,
  "the summary is not rewritten from an untrusted record")
-- a second study with the same configs copies only records that verify
code, out, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root) .. " --dry-run")
local copies = 0
for l in out:gmatch("[^\n]+") do
  if l:find("copy", 1, true) and l:find("layernorm/seed-2", 1, true) then copies = copies + 1 end
end
t:eq(copies, 0, "the untrusted record is not copied into another study: " .. out)
t:ok(out:find("alpha/none/seed-1", 1, true) ~= nil, "a verified record is copied: " .. out)
-- the report does not read it
code, _, err = check.run(repro .. " run " .. q(B) .. " --out-root " .. q(root))
t:eq(code, 0, "the second study runs (trains what it cannot copy): " .. err)
local bm = json.decode(assert(fs.read(root .. "/beta/layernorm/seed-2/metrics.json")))
t:ok(bm.val_loss ~= 0.001, "the forged metric was not copied")
-- after a review, --rehash trusts a legacy record (here: the original metric restored)
local orig = assert(fs.read(root .. "/beta/layernorm/seed-2/metrics.json"))
check.write(victim .. "/metrics.json", orig)
code, out = check.run(repro .. " verify --rehash " .. q(root .. "/alpha"))
t:ok(code == 0 and out:find("rehashed     " .. victim, 1, true), "--rehash adds the checksums: " .. out)
t:eq(record.verify(victim), "verified", "the rehashed record verifies")
code, _, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(root))
t:eq(code, 0, "the study is analysed now: " .. err)

-- A summary carries the digest of the records it came from; the report refuses one that
-- does not match the records beside it, or carries none.
-- (a manifest that shows both studies: the report reads no study the manifest leaves out)
check.write(dir .. "/manifest.lua", 'return { studies = {}, appendix = { "alpha", "beta" }, ' ..
  'tables = {}, figures = {} }')
local rep = repro .. " report --experiments " .. q(root) .. " --paper " .. q(dir .. "/paper") ..
  " --plots-data " .. q(dir .. "/pdata") .. " --no-figures --manifest " .. q(dir .. "/manifest.lua") .. " --studies " .. q(dir)
code, _, err = check.run(rep)
t:eq(code, 0, "the report reads the analysed studies: " .. err)
local sum_path = root .. "/alpha/summary.json"
local sum_text = assert(fs.read(sum_path))
local alpha_digest = record_set.digest(root .. "/alpha", record_set.design(json.decode(sum_text)))
t:ok(sum_text:find('"records_sha256": "' .. alpha_digest .. '"', 1, true),
  "the summary carries the digest of its records")
os.rename(root .. "/alpha/none/seed-2", dir .. "/aside")
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("alpha/summary.json was computed from other records", 1, true),
  "a record gone since the analysis: the summary is refused: " .. err)
os.rename(dir .. "/aside", root .. "/alpha/none/seed-2")
check.write(sum_path, (sum_text:gsub('\n  "records_sha256": "%x+",', "")))
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("carries no digest", 1, true), "a summary without its digest is refused: " .. err)
check.write(sum_path, sum_text)
code = check.run(rep)
t:eq(code, 0, "the restored summary is read again")
-- The inputs digest: a summary without it, or written before its study file changed, is
-- refused by every build.
check.write(sum_path, (sum_text:gsub('\n  "inputs_sha256": "%x+",', "")))
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("carries no digest of the inputs", 1, true),
  "a summary without its inputs digest is refused: " .. err)
check.write(sum_path, sum_text)
local study_text = fs.read(A)
check.write(A, study_text .. "\n-- edited after the analysis\n")
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("inputs_sha256 differs", 1, true) and err:find(sum_path, 1, true),
  "a summary whose study file changed since is refused, naming it: " .. err)
check.write(A, study_text)
code, _, err = check.run(rep)
t:eq(code, 0, "the restored study file: the summary is read again: " .. err)
local corpus_text = fs.read(corpus)
check.write(corpus, corpus_text .. "x")
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("inputs_sha256 differs", 1, true),
  "a summary whose corpus changed since is refused: " .. err)
check.write(corpus, corpus_text)
-- Its digests anyone can recompute: a build trusts a summary whose inputs are unchanged;
-- --recompute-summaries (make verify) recomputes it from the verified records and refuses
-- an edited one, naming the key.
local recompute = rep .. " --recompute-summaries"
local sum = json.decode(sum_text)
local cmp = sum.comparisons[1]
cmp.mean = cmp.mean + 0.5
check.write(sum_path, json.pretty(sum))
code, _, err = check.run(recompute)
t:ok(code == 1 and err:find(sum_path .. " differs from the summary its records give " ..
  "(first differing key: comparisons[1].mean)", 1, true),
  "an edited number under kept digests is refused, naming the file and key: " .. err)
code, _, err = check.run(repro .. " script " .. q(host.root .. "/scripts/check_summaries.lua") ..
  " " .. q(root) .. " " .. q(dir))
t:ok(code ~= 0 and err:find("first differing key: comparisons[1].mean", 1, true),
  "make verify's summary check refuses it too: " .. err)
sum = json.decode(sum_text)
for k, v in pairs(sum.verdicts) do if type(v) == "table" then v.verdict = "better" end end
sum.description = "integrity (edited)"
check.write(sum_path, json.pretty(sum))
code, _, err = check.run(recompute)
t:ok(code == 1 and err:find("(first differing key: description)", 1, true),
  "an edited text under kept digests is refused: " .. err)
code, _, err = check.run(rep .. " --trust-summaries")
t:ok(code == 0 and err:find("--trust-summaries", 1, true),
  "--trust-summaries (hand-made test summaries) reads it, with a warning: " .. err)
check.write(sum_path, (sum_text:gsub('"file": "[^"]*"', '"file": "lua/experiments/none.lua"')))
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("names the study file lua/experiments/none.lua, not alpha.lua", 1, true),
  "a summary naming another study's file is refused before any file is evaluated: " .. err)
check.write(sum_path, sum_text)
-- a --set root's summary is recomputed with its command_line_overrides
local sroot = dir .. "/sroot"
code, _, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(sroot) ..
  " --set iters=3,lr=0.002")
t:eq(code, 0, "the study runs with --set: " .. err)
code, _, err = check.run(repro .. " report --experiments " .. q(sroot) .. " --paper " ..
  q(dir .. "/spaper") .. " --plots-data " .. q(dir .. "/spdata") .. " --no-figures --studies " ..
  q(dir) .. " --manifest " .. q(dir .. "/manifest.lua") .. " --recompute-summaries")
t:ok(code == 0 and err:find("alpha", 1, true), "the report recomputes a --set root's summary " ..
  "with its overrides: " .. err)

-- 1b. The manifest's own fields (cpu, copied_from, times: printed in the paper) are
-- covered by manifest_sha256, the digest of every other field.
local rec = root .. "/alpha/none/seed-1"
local man_text = assert(fs.read(rec .. "/manifest.json"))
local files_before = {}
for _, f in ipairs(record.HASHED) do files_before[f] = fs.read(rec .. "/" .. f) end
local mj = json.decode(man_text)
t:ok(type(mj.manifest_sha256) == "string" and #mj.manifest_sha256 == 64,
  "a new record's manifest carries manifest_sha256")
for _, edit in ipairs({ { "cpu", "A forged CPU" }, { "copied_from", "prelim/none/seed-1" },
    { "wall_s", 1 } }) do
  mj = json.decode(man_text)
  mj[edit[1]] = edit[2]
  check.write(rec .. "/manifest.json", json.pretty(mj))
  code, out = check.run(repro .. " verify " .. q(root .. "/alpha"))
  t:ok(code == 1 and out:find("MISMATCH     " .. rec .. ": manifest.json: its fields changed " ..
    "after it was written (manifest_sha256", 1, true),
    "an edited manifest field (" .. edit[1] .. ") fails verify, naming the record: " .. out)
  code, _, err = check.run(rep)
  t:ok(code == 1 and err:find("alpha/summary.json was computed from other records", 1, true),
    "the report does not read a record whose manifest was edited (" .. edit[1] .. "): " .. err)
end
-- a manifest without the digest is not trusted, like one without checksums
mj = json.decode(man_text)
mj.manifest_sha256 = nil
check.write(rec .. "/manifest.json", json.pretty(mj))
t:eq(record.verify(rec), "no checksum", "a manifest without manifest_sha256: not trusted")
code, out = check.run(repro .. " verify " .. q(root .. "/alpha"))
t:ok(code == 1 and out:find("no checksum  " .. rec, 1, true),
  "verify fails a manifest without its digest, naming the record: " .. out)
code, _, err = check.run(repro .. " run " .. q(A) .. " --out-root " .. q(root))
t:ok(code == 1 and err:find(rec, 1, true) and err:find("manifest_sha256", 1, true),
  "run refuses to reuse it, naming the record and the field: " .. err)
code, out = check.run(repro .. " verify --rehash " .. q(root .. "/alpha"))
t:ok(code == 0 and out:find("rehashed     " .. rec, 1, true), "--rehash adds the digest: " .. out)
t:eq(json.decode(assert(fs.read(rec .. "/manifest.json"))).manifest_sha256,
  json.decode(man_text).manifest_sha256, "the digest --rehash adds is the writer's")
for _, f in ipairs(record.HASHED) do
  t:eq(fs.read(rec .. "/" .. f), files_before[f], "--rehash leaves " .. f .. " byte-identical")
end
check.write(rec .. "/manifest.json", man_text)
-- a copied record's manifest (copied_from added) carries its own digest
code, out = check.run(repro .. " verify " .. q(root .. "/beta"))
t:ok(code == 0, "the copied records of beta verify (their copied_from covered): " .. out)

-- 2. verify counts a directory once -------------------------------------------------------
local _, o1 = check.run(repro .. " verify " .. q(root))
local _, o2 = check.run(repro .. " verify " .. q(root) .. " " .. q(root) .. " " .. q(root .. "/alpha"))
t:eq(o2:match("verify: (%d+) records"), o1:match("verify: (%d+) records"),
  "verify DIR DIR counts each record once")

-- 3. Symbolic links inside the tree --------------------------------------------------------
local outside = dir .. "/outside"
fs.mkdir_p(outside .. "/none/seed-1")
check.write(outside .. "/keep.txt", "keep")
check.write(outside .. "/none/seed-1/config.json.tmp.99999999", "not ours")
local C = write_study("gamma", "1, 2")
local lroot = dir .. "/lroot"
fs.mkdir_p(lroot)
os.execute("ln -s " .. q(outside) .. " " .. q(lroot .. "/gamma"))
code, _, err = check.run(repro .. " run " .. q(C) .. " --out-root " .. q(lroot))
t:ok(code == 1 and err:find("the study directory " .. lroot .. "/gamma is a symbolic link", 1, true),
  "a symlinked study directory is refused with its path: " .. err)
t:ok(fs.exists(outside .. "/none/seed-1/config.json.tmp.99999999") and
  not fs.exists(outside .. "/none/seed-1/metrics.json"), "nothing outside the tree was written or removed")
local rroot = dir .. "/rroot"
fs.mkdir_p(rroot .. "/gamma/none")
os.execute("ln -s " .. q(outside .. "/none/seed-1") .. " " .. q(rroot .. "/gamma/none/seed-1"))
for _, cmd in ipairs({ "run", "plan", "status", "run-one" }) do
  code, _, err = check.run(repro .. " " .. cmd .. " " .. q(C) .. " --out-root " .. q(rroot) ..
    (cmd == "run-one" and " --only variant=none,seed=1" or ""))
  t:ok(code == 1 and err:find("the run directory " .. rroot .. "/gamma/none/seed-1 is a " ..
    "symbolic link", 1, true), cmd .. ": a symlinked run directory is refused: " .. err)
end
local vroot = dir .. "/vroot"
fs.mkdir_p(vroot .. "/gamma")
os.execute("ln -s " .. q(outside) .. " " .. q(vroot .. "/gamma/none"))
code, _, err = check.run(repro .. " run " .. q(C) .. " --out-root " .. q(vroot))
t:ok(code == 1 and err:find("the variant directory " .. vroot .. "/gamma/none is a symbolic link",
  1, true), "a symlinked variant directory is refused: " .. err)
t:ok(fs.exists(outside .. "/none/seed-1/config.json.tmp.99999999") and
  fs.read(outside .. "/keep.txt") == "keep", "the files outside the tree are untouched")
-- verify reports links, never follows them
os.execute("ln -s " .. q(root .. "/alpha/none/seed-1") .. " " .. q(root .. "/alpha/none/seed-9"))
code, out = check.run(repro .. " verify " .. q(root))
t:ok(code == 1 and out:find("seed-9: a symbolic link", 1, true), "verify reports a linked run: " .. out)
os.remove(root .. "/alpha/none/seed-9")
-- stale-temp cleanup removes temporary files and links of a temporary name, the link
-- itself (never followed: its target is untouched)
local tdir = dir .. "/tmpclean"
fs.mkdir_p(tdir)
check.write(tdir .. "/x.tmp.123", "stale")
os.execute("ln -s " .. q(outside .. "/keep.txt") .. " " .. q(tdir .. "/y.tmp.124"))
local removed = fs.remove_stale_tmp(tdir)
t:eq(#removed, 2, "the stale file and the planted link removed")
t:ok(not sys.lstat(tdir .. "/y.tmp.124") and fs.read(outside .. "/keep.txt") == "keep",
  "a link named like a temp file is removed itself, its target untouched")
t:eq(#fs.remove_stale_tmp(rroot .. "/gamma/none/seed-1"), 0, "no cleanup through a linked directory")

-- 3b. A checkpoint carries its config's hash inside: another config's checkpoint renamed
-- to this config's name is refused, naming the file; the run fails (nothing written),
-- the file is kept for a look, and once it is removed the run trains from the start.
local keys = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 6,
  warmup = 1, diag_every = 2, diag_windows = 2, data = corpus }
local function words(kv)
  local w = {}
  for k, v in pairs(kv) do w[#w + 1] = k .. "=" .. tostring(v) end
  table.sort(w)
  return table.concat(w, " ")
end
local cx = record.resolve(keys)
local ky = {}
for k, v in pairs(keys) do ky[k] = v end
ky.lr = 0.002 -- the same shapes: only the hash inside tells the checkpoints apart
local cy = record.resolve(ky)
local dx, dy = dir .. "/ck-x", dir .. "/ck-y"
local mx = record.run(cx, dx, { checkpoint_every = 2, on_step = function(step) return step >= 2 end })
t:ok(mx.stopped, "the run of config X stopped with a checkpoint")
local shax, shay = fs.sha256(dx .. "/config.json"), sys.sha256(record.config_text(cy))
local ckx = record.checkpoint_path(dx, shax)
t:ok(fs.exists(ckx), "X's checkpoint is there: " .. ckx)
fs.mkdir_p(dy)
check.write(dy .. "/config.json", record.config_text(cy))
local cky = record.checkpoint_path(dy, shay)
check.write(cky, assert(fs.read(ckx)))
t:eq(record.status(dy, cy), "partial", "by its name the renamed checkpoint looks like Y's")
code, _, err = check.run(repro .. " train " .. words(ky) .. " --out " .. q(dy))
t:ok(code == 1 and err:find("checkpoint: " .. cky .. " is a checkpoint of another config (" ..
  shax:sub(1, 12) .. "), not of this one (" .. shay:sub(1, 12) .. "): refused", 1, true),
  "another config's checkpoint under Y's name is refused, naming the file: " .. err)
t:ok(not fs.exists(dy .. "/metrics.json") and fs.exists(cky),
  "the run failed cleanly: no record, the checkpoint kept for a look")
os.remove(cky)
code, _, err = check.run(repro .. " train " .. words(ky) .. " --out " .. q(dy))
t:ok(code == 0 and record.verify(dy) == "verified", "without it, Y trains from the start: " .. err)
-- X's own checkpoint resumes, byte-identical to an uninterrupted run
code, _, err = check.run(repro .. " train " .. words(keys) .. " --out " .. q(dx))
local dz = dir .. "/ck-z"
local code2 = check.run(repro .. " train " .. words(keys) .. " --out " .. q(dz))
t:ok(code == 0 and code2 == 0 and fs.read(dx .. "/log.csv") == fs.read(dz .. "/log.csv") and
  fs.read(dx .. "/metrics.json") == fs.read(dz .. "/metrics.json"),
  "X resumes from its own checkpoint byte-identically: " .. err)
t:ok((json.decode(assert(fs.read(dx .. "/manifest.json"))).resumed_from_step or 0) > 0,
  "X resumed from its checkpoint")

-- 4. Files the host reads: FIFO and /dev/zero ------------------------------------------
local fifo = dir .. "/fifo"
os.execute("mkfifo " .. q(fifo))
local t0 = os.time()
local text, why = fs.read(fifo)
t:ok(text == nil and why:find("not a regular file", 1, true), "a FIFO is refused: " .. tostring(why))
text, why = fs.read("/dev/zero")
t:ok(text == nil and why:find("not a regular file", 1, true), "/dev/zero is refused")
os.execute("ln -s /dev/zero " .. q(dir .. "/zero"))
text, why = fs.read(dir .. "/zero")
t:ok(text == nil and why:find("symbolic link", 1, true), "a link to /dev/zero is refused")
check.write(dir .. "/big", string.rep("x", 1000))
text, why = fs.read(dir .. "/big", 999)
t:ok(text == nil and why:find("more than the 999", 1, true), "the size cap holds")
for _, kind in ipairs({ "fifo", "zero" }) do
  local exp = dir .. "/exp-" .. kind
  fs.mkdir_p(exp .. "/s")
  if kind == "fifo" then
    os.execute("mkfifo " .. q(exp .. "/s/summary.json"))
  else
    os.execute("ln -s /dev/zero " .. q(exp .. "/s/summary.json"))
  end
  code, _, err = check.run("timeout 60 " .. repro .. " report --experiments " .. q(exp) ..
    " --paper " .. q(dir .. "/p-" .. kind) .. " --plots-data " .. q(dir .. "/d-" .. kind) ..
    " --no-figures")
  t:ok(code ~= 124, "report on a " .. kind .. " summary does not hang")
  t:ok(code == 0 or err:find("summary.json", 1, true), "report on a " .. kind ..
    " summary: refused or skipped, naming it: " .. err)
end
t:ok(os.time() - t0 < 60, "no read waited")

-- The checksums' SHA-256: the x86 SHA extensions (lua/sha256_x86.c, where the CPU has
-- them) and the portable code give the same digests, at every length around the block
-- and padding boundaries, and the FIPS 180-4 examples
local g = require("pcg").new(5, 0)
local differ = {}
for len = 0, 300 do
  local bytes = {}
  for i = 1, len do bytes[i] = string.char(g:bounded(256)) end
  local text = table.concat(bytes)
  if sys.sha256(text) ~= sys.sha256(text, "portable") then differ[#differ + 1] = len end
end
t:eq(table.concat(differ, ","), "", "sys.sha256: the CPU's path and the portable code agree")
local long = string.rep("abcdefgh", 300000) .. "x"
t:eq(sys.sha256(long), sys.sha256(long, "portable"), "sys.sha256: and on 2.4 MB")
for _, impl in ipairs({ "best", "portable" }) do
  t:eq(sys.sha256("abc", impl), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "sys.sha256 (" .. impl .. "): FIPS 180-4 'abc'")
  t:eq(sys.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", impl),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    "sys.sha256 (" .. impl .. "): FIPS 180-4 two blocks")
end

check.rmtree(dir)
t:done()
