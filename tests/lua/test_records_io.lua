-- One writer, one reader.  A records tree from someone else can make
-- the suite neither write outside it nor show bytes that were not verified.
--   1. the one writer (fs.write_atomic, fs.atomic, results.stream; the engine's is
--      tests/c/test_tensorfile.c): a link planted at the old temporary name PATH.tmp.<pid>
--      is never written through; temporary names are unguessable and exclusive; a folder
--      that is a link is refused; stale temporaries, planted links included, are removed
--      (the link itself); `run` and `analyze` beside summary.json.tmp.<N> links for the
--      next few hundred pids write nothing outside; sys.overwrite refuses a link
--   2. the owner check of a records folder: a FIFO as manifest.json and a link to
--      /dev/zero as summary.json are refused by `run --dry-run`, naming the file, at once
--   3. log.csv streamed with a line bound: one long line stops export --curves with an
--      error naming the file and the line, and nothing is written
--   4. read once: a metrics.json (or log.csv) swapped after its record was verified is
--      never what the reader, compare's collect or export --curves gives; a model.rptf
--      swapped after its check is never what `sample`/`eval` load
--   5. the paper manifest runs under the sandbox's limits: `while true do end` in it
--      makes `ledger` and `report` fail with a clear error instead of hanging
local check = require "check"
check.data_anywhere()
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local reader = require "repro.record.reader"
local results = require "repro.report.results"
local host = require "repro.host"
local sys = require "repro.sys"
local t = check.new("test_records_io")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote
-- a command that hangs is stopped here and fails its check (exit status 124)
local function timed(s, cmd) return check.run("timeout " .. s .. " " .. cmd) end

-- 1. The one writer ------------------------------------------------------------------
local out = dir .. "/out"
fs.mkdir_p(out)
local victim = dir .. "/victim.txt"
local function reset_victim() check.write(victim, "keep") end
reset_victim()
local old_tmp = string.format("%s/summary.json.tmp.%d", out, host.pid())
os.execute("ln -s " .. q(victim) .. " " .. q(old_tmp))
fs.write_atomic(out .. "/summary.json", "new text")
t:eq(fs.read(victim), "keep", "write_atomic beside a planted PATH.tmp.<pid> link: its target untouched")
t:eq(fs.read(out .. "/summary.json"), "new text", "write_atomic wrote the file itself")
local st = results.stream(out .. "/curves.csv")
os.execute("ln -sf " .. q(victim) .. " " .. q(out .. "/curves.csv.tmp." .. host.pid()))
st.write("a,b\n")
st.close()
t:eq(fs.read(victim), "keep", "results.stream beside a planted link: its target untouched")
t:eq(fs.read(out .. "/curves.csv"), "a,b\n", "results.stream wrote the file itself")

-- the temporary name: PATH.tmp.<pid>.<16 hex>, one per writer, removed by abort
local ok_atomic, w1 = pcall(fs.atomic, out .. "/x.json")
local w2 = ok_atomic and fs.atomic(out .. "/x.json")
local names = {}
for _, n in ipairs(sys.listdir(out) or {}) do
  if n:find("^x%.json%.tmp%.") then names[#names + 1] = n end
end
local pat = "^x%.json%.tmp%." .. host.pid() .. "%.%x+$"
t:ok(#names == 2 and names[1]:match(pat) and names[2]:match(pat) and #names[1] == #names[2] and
  #names[1] == #("x.json.tmp." .. host.pid() .. ".") + 16,
  "two writers, two unguessable temporary names: " .. table.concat(names, " "))
if w1 then w1:abort() end
if w2 then w2:abort() end
local left = 0
for _, n in ipairs(sys.listdir(out) or {}) do if n:find("%.tmp%.") then left = left + 1 end end
t:eq(left, 2, "abort removes the temporary files (the two planted links stay until a cleanup)")

-- a folder that is a link is refused, nothing written in the folder it points to
fs.mkdir_p(dir .. "/realdir")
os.execute("ln -s " .. q(dir .. "/realdir") .. " " .. q(dir .. "/linkdir"))
t:raises(function() fs.write_atomic(dir .. "/linkdir/summary.json", "x") end,
  "symbolic link", "write_atomic into a linked folder is refused")
t:ok(not fs.exists(dir .. "/realdir/summary.json"), "nothing written through the linked folder")

-- stale temporaries: old and new names, regular files and planted links (the link
-- itself removed, its target untouched); other files stay
check.write(out .. "/manifest.json.tmp.77.0123456789abcdef", "stale")
check.write(out .. "/keep.tmp.txt", "not a temporary")
local removed = fs.remove_stale_tmp(out)
table.sort(removed)
t:eq(table.concat(removed, " "), "curves.csv.tmp." .. host.pid() ..
  " manifest.json.tmp.77.0123456789abcdef summary.json.tmp." .. host.pid(),
  "remove_stale_tmp: the stale file and the planted links")
t:ok(fs.read(victim) == "keep" and fs.exists(out .. "/keep.tmp.txt"),
  "the link's target and other files untouched")

-- sys.overwrite (attempt.json on a full disk): never through a link, never a FIFO
os.execute("ln -s " .. q(victim) .. " " .. q(out .. "/attempt.json"))
t:ok(not sys.overwrite(out .. "/attempt.json", "x") and fs.read(victim) == "keep",
  "sys.overwrite refuses a link")
os.execute("mkfifo " .. q(out .. "/fifo.json"))
t:ok(not sys.overwrite(out .. "/fifo.json", "x"), "sys.overwrite refuses a FIFO")

-- a tiny study, then `analyze` and `run` with summary.json.tmp.<N> links planted for
-- the next few hundred pids (the child's among them on a machine that is not spawning
-- hundreds of processes at once)
local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 50000))
local study_f = dir .. "/sec4.lua"
check.write(study_f, string.format([[
return { name = "sec4", description = "security round 4",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], corpus))
local exp = dir .. "/exp"
local code, stdout, err = check.run(repro .. " run " .. q(study_f) .. " --out-root " .. q(exp))
t:eq(code, 0, "the tiny study runs: " .. err)
local sdir = exp .. "/sec4"
-- one perl process (perl-base is always there on Debian) plants the links for the pids
-- after its own, so the pids of the command started next are among them
local function plant_links(n)
  os.execute("perl -e " .. q(string.format([[
for my $p ($$ + 1 .. $$ + %d) {
  for my $f ("summary.json", "manifest.json") { symlink(%q, %q . "/$f.tmp.$p") }
}]], n, victim, sdir)))
end
for _, cmd in ipairs({ "analyze", "run" }) do
  reset_victim()
  plant_links(400)
  code, _, err = check.run(repro .. " " .. cmd .. " " .. q(study_f) .. " --out-root " .. q(exp))
  t:ok(code == 0 and fs.read(victim) == "keep",
    cmd .. " beside planted summary.json.tmp.<N> links writes nothing outside: " .. err)
  local links = 0
  for _, n in ipairs(sys.listdir(sdir) or {}) do
    local lst = sys.lstat(sdir .. "/" .. n)
    if lst and lst.type == "link" then links = links + 1 end
  end
  t:eq(links, 0, cmd .. " removed the planted links (under the study's lock)")
end
t:eq(record.verify(sdir .. "/none/seed-1"), "verified", "the records still verify")

-- 2. The owner check reads through the safe reader ------------------------------------
local man_path, sum_path = sdir .. "/manifest.json", sdir .. "/summary.json"
local man_text, sum_text = assert(fs.read(man_path)), assert(fs.read(sum_path))
os.remove(man_path)
os.execute("mkfifo " .. q(man_path))
code, _, err = timed(60, repro .. " run " .. q(study_f) .. " --out-root " .. q(exp) .. " --dry-run")
t:ok(code == 1 and err:find("manifest.json", 1, true) and err:find("not a regular file", 1, true),
  "run --dry-run with a FIFO as manifest.json: refused at once, naming it (exit " ..
  tostring(code) .. "): " .. err)
os.remove(man_path)
check.write(man_path, man_text)
os.remove(sum_path)
os.execute("ln -s /dev/zero " .. q(sum_path))
-- a memory cap, so that a reader that reads the link to its end stops here; not under
-- AddressSanitizer (make test-asan, its flags in `bin/repro --version`), whose shadow
-- memory cannot be mapped under ulimit -v: there the 60 s timeout bounds such a reader
local vh = io.popen(q(repro) .. " --version")
local sanitized = vh and (vh:read("a") or ""):find("fsanitize", 1, true) ~= nil
if vh then vh:close() end
code, _, err = timed(60, "sh -c " .. q((sanitized and "" or "ulimit -v 4000000; ") ..
  "exec " .. repro .. " run " .. q(study_f) .. " --out-root " .. q(exp) .. " --dry-run"))
t:ok(code == 1 and err:find("summary.json", 1, true) and err:find("symbolic link", 1, true),
  "run --dry-run with summary.json a link to /dev/zero: refused, naming it (exit " ..
  tostring(code) .. "): " .. err)
os.remove(sum_path)
check.write(sum_path, sum_text)
code, _, err = timed(120, repro .. " run " .. q(study_f) .. " --out-root " .. q(exp) .. " --dry-run")
t:eq(code, 0, "with its own files back the dry run passes: " .. err)

-- 3. One long log line ----------------------------------------------------------------
-- a forger recomputes the unkeyed checksums: the record verifies, its log has one line of
-- 1 MiB (the bound is 64 KiB)
local lroot = dir .. "/long"
local ldir = lroot .. "/sec4/none/seed-1"
fs.mkdir_p(lroot .. "/sec4/none")
os.execute("cp -r " .. q(sdir .. "/none/seed-1") .. " " .. q(ldir))
local function forge(rdir, files)
  for f, text in pairs(files) do check.write(rdir .. "/" .. f, text) end
  local man = json.decode(fs.read(rdir .. "/manifest.json"))
  for _, f in ipairs(record.HASHED) do man.sha256[f] = sys.sha256_file(rdir .. "/" .. f, true) end
  check.write(rdir .. "/manifest.json", record.manifest_text(man))
end
local log = assert(fs.read(ldir .. "/log.csv"))
local nlines = select(2, log:gsub("\n", ""))
forge(ldir, { ["log.csv"] = log .. "5," .. ("9"):rep(1024 * 1024) .. "\n" })
t:eq(record.verify(ldir), "verified", "the forged long-line record verifies")
local curves = dir .. "/curves_long.csv"
code, _, err = timed(120, repro .. " export --curves sec4 --out-root " .. q(lroot) .. " --out " ..
  q(curves))
t:ok(code == 1 and err:find("log.csv: line " .. (nlines + 1) .. " is longer than the 65536 bytes", 1, true),
  "export --curves stops at the long line, naming the file and the line: " .. err)
t:ok(not fs.exists(curves), "and writes nothing")
t:ok(#reader.log_columns(ldir) > 0, "the header line is read")
check.write(ldir .. "/log.csv", ("x"):rep(70000) .. "\n")
t:raises(function() reader.log_columns(ldir) end, "log.csv: line 1 is longer",
  "a 70000-byte header line is refused, naming the line")

-- 4. Read once: the bytes shown are the bytes verified ---------------------------------
local vroot = dir .. "/swap"
local vdir = vroot .. "/sec4/none/seed-2"
fs.mkdir_p(vroot .. "/sec4/none")
os.execute("cp -r " .. q(sdir .. "/none/seed-2") .. " " .. q(vdir))
local good = json.decode(assert(fs.read(vdir .. "/metrics.json")))
local forged = json.decode(assert(fs.read(vdir .. "/metrics.json")))
forged.val_loss = 0.125
local forged_text = json.pretty(forged)
-- the race made deterministic: the metrics.json is swapped right after verification
local real_verify = record.verify
local swap = {}
record.verify = function(d)
  local state, problems, kept = real_verify(d)
  for f, text in pairs(swap) do check.write(d .. "/" .. f, text) end
  return state, problems, kept
end
local good_text = assert(fs.read(vdir .. "/metrics.json"))
swap = { ["metrics.json"] = forged_text }
local rec = reader.read(vdir, vroot)
t:ok(rec and rec.metrics.val_loss == good.val_loss,
  "reader.read gives the verified metrics.json, not the one swapped after verification (" ..
  tostring(rec and rec.metrics.val_loss) .. ")")
check.write(vdir .. "/metrics.json", good_text)
local runs = results.collect({ vroot }, { with_derived = true }, "test", function() end)
t:ok(#runs == 1 and runs[1].metrics.val_loss == good.val_loss,
  "compare's collect shows the verified value (" .. tostring(runs[1] and runs[1].metrics.val_loss) .. ")")
check.write(vdir .. "/metrics.json", good_text)
-- log.csv: streamed after verification, it must hash to the verified sum
local good_log = assert(fs.read(vdir .. "/log.csv"))
swap = { ["log.csv"] = good_log .. "9,9\n" }
t:raises(function() results.collect({ vroot }, { with_derived = true }, "test", function() end) end,
  "changed after its record was verified", "a log.csv swapped after verification is refused")
swap = {}
record.verify = real_verify
check.write(vdir .. "/log.csv", good_log)
t:eq(record.verify(vdir), "verified", "the record restored verifies")
-- a kept model: the engine loads the bytes whose SHA-256 was checked, not a model.rptf
-- swapped in after the check (here another run's, of another config)
local TINY = "iters=4 n_layer=1 d_model=16 n_head=2 context=16 batch=4 warmup=1 diag_every=2 " ..
  "data=" .. corpus
local kdir, odir = dir .. "/kept", dir .. "/other"
code, _, err = check.run(repro .. " train " .. TINY .. " --out " .. q(kdir) .. " --keep-model")
t:eq(code, 0, "train --keep-model: " .. err)
code, _, err = check.run(repro .. " train " .. TINY .. " seed=2 --out " .. q(odir) .. " --keep-model")
t:eq(code, 0, "a second kept model: " .. err)
local model = require "repro.cli.model"
local engine = require "engine"
local k = model.load(kdir, "test")
local before = engine.sample(k.cfg, k.model, k.config_id, "To be", 20, 7, 1.0)
local kbytes = assert(fs.read(kdir .. "/model.rptf"))
check.write(kdir .. "/model.rptf", assert(fs.read(odir .. "/model.rptf")))
local sok, after = pcall(engine.sample, k.cfg, k.model, k.config_id, "To be", 20, 7, 1.0)
t:ok(sok and after == before, "a model swapped after the check is not what is sampled: " ..
  tostring(after))
check.write(kdir .. "/model.rptf", kbytes)

-- 5. The paper manifest runs under the sandbox's limits --------------------------------
local loop_manifest = dir .. "/loop_manifest.lua"
check.write(loop_manifest, "while true do end\nreturn { studies = {}, tables = {}, figures = {} }\n")
code, _, err = timed(120, repro .. " ledger --experiments " .. q(exp) .. " --manifest " .. q(loop_manifest))
t:ok(code == 1 and err:find("loop_manifest.lua", 1, true) and err:find("instructions", 1, true),
  "ledger with an endless loop in the manifest fails with a clear error (exit " .. tostring(code) ..
  "): " .. err)
code, _, err = timed(120, repro .. " report --experiments " .. q(exp) .. " --paper " ..
  q(dir .. "/paper") .. " --plots-data " .. q(dir .. "/pdata") .. " --no-figures --manifest " ..
  q(loop_manifest))
t:ok(code == 1 and err:find("loop_manifest.lua", 1, true) and err:find("instructions", 1, true),
  "report with an endless loop in the manifest fails with a clear error (exit " .. tostring(code) ..
  "): " .. err)
local big_manifest = dir .. "/big_manifest.lua"
check.write(big_manifest, "local s, t = ('x'):rep(1 << 20), {} for i = 1, 1e6 do t[i] = s .. i end\n" ..
  "return { studies = {}, tables = {}, figures = {} }\n")
code, _, err = timed(120, repro .. " ledger --experiments " .. q(exp) .. " --manifest " .. q(big_manifest))
t:ok(code == 1 and err:find("memory limit", 1, true),
  "a manifest that allocates without end stops at the memory limit: " .. err)
check.write(dir .. "/ok_manifest.lua", 'return { studies = {}, tables = {}, figures = {} }')
code, _, err = timed(120, repro .. " ledger --experiments " .. q(exp) .. " --manifest " ..
  q(dir .. "/ok_manifest.lua"))
t:eq(code, 0, "a plain manifest still loads: " .. err)

check.rmtree(dir)
t:done()
