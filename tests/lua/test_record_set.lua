-- One record set per study and the provenance of its records, shown alike everywhere.  A
-- tiny study's folder gets a decoy seed-01, a folder that is no variant, a step-5 and a
-- step-0 checkpoint of another model planted where two runs resume, and a copy whose
-- source is gone; run, analyze, verify, audit, compare, export, report, eval, sample and
-- export-model must agree on the record count and show the same marks.
local check = require "check"
check.data_anywhere() -- its corpus is a temporary file outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local sys = require "repro.sys"
local record = require "repro.record"
local study = require "repro.study"
local provenance = require "repro.record.provenance"
local audit = require "repro.cli.audit"
local t = check.new("test_record_set")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote
local code, out, err

-- a corpus of random words: the model learns something, quickly
local g = require("pcg").new(11, 0)
local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local text = {}
for i = 1, 5000 do text[#text + 1] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ") end
local corpus = dir .. "/corpus.txt"
check.write(corpus, table.concat(text))
local function write_study(name, variants, extra)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = "record sets",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 12,
    warmup = 1, diag_every = 4, diag_windows = 2, data = %q },
  variants = { %s },
  seeds = { 1, 2 }, keep_model = true, %s
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], name, corpus, variants, extra or ""))
  return path
end
local BOTH = '{ name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" }'
local TINY = write_study("tiny", BOTH)
local SRC = write_study("src", '{ name = "none", embed_norm = "none" }')
local OTHER = write_study("other", BOTH, "checkpoint_every = 5,")
local root = dir .. "/exp"
local T = root .. "/tiny"

-- the copy's source: src trains none/seed-1 and seed-2, tiny copies them
code, out, err = check.run(repro .. " run " .. q(SRC) .. " --out-root " .. q(root))
t:eq(code, 0, "the source study runs: " .. err)
code, out, err = check.run(repro .. " run " .. q(TINY) .. " --out-root " .. q(root))
t:ok(code == 0 and err:find("2 copied", 1, true), "tiny runs, copying src's two runs: " .. out .. err)
t:ok(err:find("repro run: 4 records of the study (0 adopted)", 1, true),
  "every record of a study run here is vouched for: " .. err)
local cman = json.decode(assert(fs.read(T .. "/none/seed-1/manifest.json")))
t:eq(cman.copied_from, "src/none/seed-1", "copied_from names the immediate source")
code, out = check.run(repro .. " verify " .. q(T))
t:ok(code == 0 and out:find("verify: tiny: 4 records of the study (0 adopted)", 1, true) and
  not out:find("ADOPTED", 1, true), "verify: the copies are vouched for while the source is there: " .. out)

-- real checkpoints of another model: `other` (the same configs, its own folder) stopped
-- after step 5 with checkpoint_every = 5
local so = study.load(OTHER, nil, { out_root = root })
local ckpts = {}
for _, r in ipairs(so.runs) do
  if r.seed == 2 then
    local rdir = root .. "/other/" .. r.rel
    local m = record.run(r.cfg, rdir, { checkpoint_every = so.checkpoint_every,
      on_step = function(step) return step >= 5 end })
    local ck = record.checkpoint_path(rdir, sys.sha256_file(rdir .. "/config.json"))
    t:ok(m.stopped and sys.lstat(ck), r.rel .. ": another model's checkpoint at step " ..
      tostring(m.steps))
    ckpts[r.variant] = ck
  end
end
-- the same weights claiming step 0: step set to 0, the log cut to no rows
local function at_step_0(path)
  local b = assert(fs.read(path))
  local outp = { b:sub(1, 12) }
  local count, pos = string.unpack("<I4", b, 9), 13
  for _ = 1, count do
    local nlen = string.unpack("<I4", b, pos)
    local name = b:sub(pos + 4, pos + 3 + nlen)
    local dtype, ndim = string.unpack("<I4I4", b, pos + 4 + nlen)
    local hdr_end = pos + 12 + nlen
    local dims, n = {}, 1
    for i = 1, ndim do
      dims[i] = string.unpack("<I4", b, hdr_end + 4 * (i - 1))
      n = n * dims[i]
    end
    local data_at = hdr_end + 4 * ndim
    local size = n * (dtype == 2 and 8 or 4)
    if name == "step" then
      outp[#outp + 1] = b:sub(pos, data_at - 1) .. string.pack("<i4", 0)
    elseif name == "log" then
      outp[#outp + 1] = b:sub(pos, hdr_end - 1) .. string.pack("<I4I4", 0, dims[2])
    else
      outp[#outp + 1] = b:sub(pos, data_at + size - 1)
    end
    pos = data_at + size
  end
  return table.concat(outp)
end
-- plant each where tiny's seed 2 resumes: its record cleared, its config kept
local function plant(variant, bytes)
  local rdir = T .. "/" .. variant .. "/seed-2"
  for _, f in ipairs({ "metrics.json", "manifest.json", "log.csv", "model.rptf" }) do
    os.remove(rdir .. "/" .. f)
  end
  check.write(record.checkpoint_path(rdir, sys.sha256_file(rdir .. "/config.json")), bytes)
end
plant("none", assert(fs.read(ckpts.none)))
plant("layernorm", at_step_0(ckpts.layernorm))
-- a decoy spelling, a folder that is no variant, and the copy's source gone
assert(os.execute("cp -R " .. q(T .. "/layernorm/seed-1") .. " " .. q(T .. "/layernorm/seed-01")))
fs.mkdir_p(T .. "/extra")
assert(os.execute("cp -R " .. q(T .. "/layernorm/seed-1") .. " " .. q(T .. "/extra/seed-1")))
fs.remove_tree(root .. "/src")

local COUNT = "4 records of the study (3 adopted); 2 paths not part of the study"
local DECOY = T .. "/layernorm/seed-01: not part of the study tiny (not a seed folder's one spelling"
local EXTRA = T .. "/extra: not part of the study tiny (not one of its variants)"
local FOREIGN = "adopted (resumed from a checkpoint this checkout's suite did not record writing for it"
local GONE = "adopted (a copy whose source is not in the records tree: src/none/seed-1)"
local function marks(text, what, count)
  t:ok(text:find(count or COUNT, 1, true), what .. ": the record count: " .. text)
  t:ok(text:find(DECOY, 1, true) and text:find(EXTRA, 1, true),
    what .. ": the decoy and the folder that is no variant, in one wording: " .. text)
end

code, out, err = check.run(repro .. " run " .. q(TINY) .. " --out-root " .. q(root) .. " --update")
t:eq(code, 0, "tiny runs again, resuming its two seed-2 runs from the planted checkpoints: " .. err)
marks(err, "run")
t:ok(out:find("ADOPTED: 3 records are", 1, true) and out:find("none/seed-2: " .. FOREIGN, 1, true) and
  out:find("layernorm/seed-2: " .. FOREIGN, 1, true) and out:find("none/seed-1: adopted (a copy " ..
  "whose source is not in the records tree)", 1, true), "run: the verdict table marks them: " .. out)
local man0 = json.decode(assert(fs.read(T .. "/layernorm/seed-2/manifest.json")))
t:ok(man0.resumed_from_step == 0 and man0.resumed_checkpoint_known == false and
  type(man0.resumed_checkpoint_sha256) == "string",
  "a checkpoint met at step 0 is named in the manifest, not one this suite wrote: " ..
  json.encode(man0))
local sum = json.decode(assert(fs.read(T .. "/summary.json")))
local codes = {}
for _, e in ipairs(sum.provenance and sum.provenance.adopted or {}) do
  codes[#codes + 1] = string.format("%s/%d:%s", e.variant, e.seed, e.why_adopted)
end
t:eq(table.concat(codes, " "), "none/1:copy_source_missing none/2:foreign_checkpoint " ..
  "layernorm/2:foreign_checkpoint", "the summary marks the adopted records by code")

code, out, err = check.run(repro .. " analyze " .. q(TINY) .. " --out-root " .. q(root))
t:eq(code, 0, "analyze: the same summary: " .. err)
marks(err, "analyze")

code, out = check.run(repro .. " verify " .. q(T))
t:eq(code, 1, "verify fails on adopted records")
marks(out, "verify")
t:ok(out:find("ADOPTED      " .. T .. "/none/seed-2: " .. FOREIGN, 1, true) and
  out:find("ADOPTED      " .. T .. "/none/seed-1: " .. GONE, 1, true), "verify names them: " .. out)
t:ok(out:find("outside      " .. DECOY, 1, true), "verify: the decoy is not part of the study")
code, out = check.run(repro .. " verify " .. q(T) .. " --accept-adopted")
t:eq(code, 0, "verify --accept-adopted accepts them: " .. out)
code, out = check.run(repro .. " verify " .. q(root))
t:ok(code == 1 and out:find("verify: tiny: " .. COUNT, 1, true),
  "verify of the records root reads the study as its record set: " .. out)

code, out, err = check.run(repro .. " audit tiny --sample 3 --seed 7 --out-root " .. q(root))
marks(out, "audit")
local drawn = {}
for d in out:gmatch("\n  (%S+)  %(predicted") do drawn[#drawn + 1] = d end
t:ok(#drawn == 3 and not out:find("\n  " .. T .. "/layernorm/seed-1  (", 1, true),
  "audit: the three adopted records are drawn first, never by what they say: " .. out)
t:ok(out:find("DIFFERS  " .. T .. "/layernorm/seed-2", 1, true) and code == 1,
  "audit: the run grown from another model's step-0 weights differs from its retraining: " .. out .. err)
t:ok(out:find("same     " .. T .. "/none/seed-2", 1, true),
  "and the one resumed from an honest step-5 checkpoint of the same config is the same: " .. out)
t:ok(out:find("audit: tiny: 3 of 4 records drawn: a uniform draw of this size catches 1 forged " ..
  "record among them with probability 0.750, and one of 2 forged with probability 95 %", 1, true),
  "audit: the chance to catch forged records: " .. out)
t:ok(math.abs(audit.catch_probability(100, 1, 10) - 0.1) < 1e-12 and
  math.abs(audit.catch_probability(100, 2, 10) - (1 - 90 * 89 / (100 * 99))) < 1e-12 and
  audit.k_for_95(100, 10) == 25, "the hypergeometric chance: 1 - C(n-k, s)/C(n, s)")

code, out, err = check.run(repro .. " compare tiny --runs --out-root " .. q(root))
t:eq(code, 0, "compare: " .. err)
marks(err, "compare")
t:ok(err:find(T .. "/none/seed-2: " .. FOREIGN, 1, true) and out:find("adopted", 1, true),
  "compare marks the adopted runs: " .. out .. err)
t:ok(not out:find("seed-01", 1, true) and select(2, out:gsub("\n", "")) == 5,
  "compare: the four records of the set, nothing else: " .. out)

code, out, err = check.run(repro .. " export tiny --out-root " .. q(root))
t:eq(code, 0, "export: " .. err)
marks(err, "export")
t:eq(select(2, out:gsub(",adopted,", "")), 3, "export: a provenance column, 3 adopted: " .. out)
t:eq(select(2, out:gsub(",made_here,", "")), 1, "and 1 made here")

code, out, err = check.run(repro .. " report tiny --experiments " .. q(root) .. " --studies " .. q(dir))
t:eq(code, 0, "report: " .. err)
marks(err, "report")
local html = fs.read(T .. "/report/report.html") or ""
t:ok(html:find("3 records none/seed-1: " .. GONE:gsub(": src/none/seed%-1%)$", ")"), 1, true),
  "the report names the adopted records: " .. (html:match("provenance.-</tr>") or html))

for _, cmd in ipairs({ "eval", "sample", "export-model" }) do
  local extra = cmd == "export-model" and (" --format safetensors --out " .. q(dir .. "/st-" .. cmd)) or ""
  code, out, err = check.run(repro .. " " .. cmd .. " " .. q(T .. "/none/seed-2") .. extra)
  t:ok(code == 0 and err:find(T .. "/none/seed-2: " .. FOREIGN, 1, true),
    cmd .. ": marks the adopted record: " .. err)
  code, out, err = check.run(repro .. " " .. cmd .. " " .. q(T .. "/layernorm/seed-01") ..
    extra:gsub("st%-", "st2-"))
  t:ok(err:find(DECOY, 1, true), cmd .. ": the decoy is not part of the study: " .. err)
end

-- the journal is outside the tree: a copy of the tree elsewhere is adopted throughout
local moved = dir .. "/moved"
assert(os.execute("cp -R " .. q(root) .. " " .. q(moved)))
code, out = check.run(repro .. " verify " .. q(moved .. "/tiny"))
t:ok(code == 1 and out:find("verify: tiny: 4 records of the study (4 adopted)", 1, true) and
  out:find("adopted (neither committed nor made by this checkout", 1, true),
  "the same tree copied elsewhere is adopted: the journal vouches for folders it wrote: " .. out)
t:ok(provenance.JOURNAL:sub(1, 6) == "build/", "the journal lies under build/, outside records trees")
-- committed records copied elsewhere keep the project's bytes: still committed
fs.mkdir_p(dir .. "/elsewhere")
assert(os.execute("cp -R experiments/prelim " .. q(dir .. "/elsewhere/prelim")))
code, out = check.run(repro .. " verify " .. q(dir .. "/elsewhere/prelim"))
t:ok(code == 0 and out:find("verify: prelim: 9 records of the study (0 adopted)", 1, true),
  "a copy of committed records is committed wherever it lies: " .. out)

-- committed is what git holds at HEAD, whatever its index remembers of the files: in a
-- repository of its own (REPRO_ROOT) holding prelim, a record changed in place, its
-- checksums recomputed, its files' sizes and modification times kept, is not committed
local proj = dir .. "/proj"
fs.mkdir_p(proj .. "/experiments")
assert(os.execute("cp -R lua " .. q(proj .. "/lua") .. " && cp -R experiments/prelim " ..
  q(proj .. "/experiments/prelim") .. " && cd " .. q(proj) .. " && git init -q && git add " ..
  "experiments && git -c user.name=t -c user.email=t@t commit -qm prelim"))
local in_proj = "REPRO_ROOT=" .. q(proj) .. " " .. repro .. " verify " .. q(proj .. "/experiments/prelim")
code, out = check.run(in_proj)
t:ok(code == 0 and out:find("verify: prelim: 9 records of the study (0 adopted)", 1, true),
  "the records git holds at HEAD are committed: " .. out)
local rec = proj .. "/experiments/prelim/none/seed-1"
local mtext = assert(fs.read(rec .. "/metrics.json"))
local forged = mtext:gsub('("val_loss": %d%.%d)(%d)', function(a, d) return a .. (d == "1" and "2" or "1") end, 1)
local man = json.decode(assert(fs.read(rec .. "/manifest.json")))
man.sha256["metrics.json"] = sys.sha256(forged)
local before = dir .. "/mtime"
assert(os.execute("touch -r " .. q(rec .. "/metrics.json") .. " " .. q(before)))
check.write(rec .. "/metrics.json", forged)
check.write(rec .. "/manifest.json", record.manifest_text(man))
assert(os.execute("touch -r " .. q(before) .. " " .. q(rec .. "/metrics.json") .. " " ..
  q(rec .. "/manifest.json")))
code, out = check.run(in_proj)
t:ok(#forged == #mtext and forged ~= mtext and code == 1 and
  out:find("verify: prelim: 9 records of the study (1 adopted)", 1, true) and
  out:find("ADOPTED      " .. rec .. ": adopted (neither committed nor made", 1, true),
  "a committed record changed in place, its size and time kept, is not: " .. out)

check.rmtree(dir)
t:done()
