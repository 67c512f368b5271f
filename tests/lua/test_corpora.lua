-- The registry of corpora (scripts/corpora.lua): every corpus extracts to its
-- pinned SHA-256; a wrong SHA-256, a missing package, an empty and a binary text are
-- refused with a message naming the corpus and nothing is installed; the vocabulary and
-- the 90/10 split are the engine's one rule for every corpus; `bin/repro corpora` lists
-- them with their baselines and names a changed installed text.
local check = require "check"
local corpora = require "repro.core.corpora"
local engine = require "engine"
local fs = require "repro.core.fs"
local host = require "repro.host"
local t = check.new("test_corpora")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote
check.data_anywhere()

local list = corpora.load()
local function copy(c, over)
  local n = {}
  for k, v in pairs(c) do n[k] = v end
  for k, v in pairs(over) do n[k] = v end
  return n
end
local function listing(d)
  local names = {}
  for _, n in ipairs(require("repro.sys").listdir(d) or {}) do names[#names + 1] = n end
  return table.concat(names, " ")
end

-- Tiny Shakespeare's pin is fetch_data.sh's, so the two cannot drift apart.
local ts = corpora.find(list, "tinyshakespeare")
local fetch = fs.read(host.root .. "/scripts/fetch_data.sh")
t:eq(fetch:match("\nSHA=(%x+)\n"), ts.sha256, "registry and fetch_data.sh pin one SHA-256")
t:ok(#list >= 3, "Tiny Shakespeare and at least two more corpora")

-- Every package corpus extracts to its pinned SHA-256 and size (a missing package is a
-- skip only here, with the reason; scripts/deps.sh installs them for make test).
local skipped = {}
for _, c in ipairs(list) do
  if c.package then
    local ok, err = pcall(corpora.check_installed, c)
    if not ok then
      skipped[#skipped + 1] = c.name
      io.stderr:write("test_corpora: not testing the extraction of ", c.name, ": ",
        err.message, "\n")
    else
      local text = corpora.extract(c)
      t:eq(fs.sha256_text(text), c.sha256, c.name .. " extracts to its pinned SHA-256")
      t:eq(#text, c.bytes, c.name .. " has its registered size")
      t:eq(select(2, pcall(corpora.check_text, c, text)), nil, c.name .. " passes the text checks")
      t:eq(fs.sha256_text(corpora.extract(c)), c.sha256, c.name .. " extracts the same twice")
      t:eq(corpora.build(c, dir), "built", c.name .. " builds into an empty directory")
      t:eq(corpora.build(c, dir), "kept", c.name .. " is kept once built")
      t:eq(fs.sha256(dir .. "/" .. c.file), c.sha256, c.name .. " installed with its SHA-256")
    end
  end
end

-- A wrong pin: refused naming the corpus and both hashes, nothing installed.
local devil = corpora.find(list, "devil")
local wrong = string.rep("0", 64)
local empty = dir .. "/empty"
fs.mkdir_p(empty)
if fs.exists(devil.installs[1]) then
  t:raises(function() corpora.build(copy(devil, { sha256 = wrong }), empty) end,
    "corpus devil: the text extracted from package dict-devil has SHA-256 " .. devil.sha256 ..
    ", but the registry (scripts/corpora.lua) pins " .. wrong, "a wrong pin is refused")
  t:eq(listing(empty), "", "nothing installed after a wrong pin")
end

-- A missing package: the exact install command, naming the corpus.
t:raises(function()
  corpora.build(copy(devil, { name = "gone", package = "no-such-corpus-pkg",
    installs = { "/nonexistent/corpus.dict.dz" } }), empty)
end, "corpus gone: /nonexistent/corpus.dict.dz is missing: its Debian package " ..
  "no-such-corpus-pkg is not installed; as root run: apt-get install -y no-such-corpus-pkg",
  "a missing package gives the install command")

-- An empty, a binary (NUL) and a non-UTF-8 text, and a failing extraction: refused.
local function fake(extract)
  return copy(devil, { name = "fake", installs = { "/bin/sh" }, extract = extract })
end
t:raises(function() corpora.build(fake("true"), empty) end,
  "corpus fake: the extracted text is empty: refused", "an empty text is refused")
t:raises(function() corpora.build(fake("printf 'abc\\000def'"), empty) end,
  "corpus fake: the extracted text holds a NUL byte at byte 4: a binary file", "NUL refused")
t:raises(function() corpora.build(fake("printf 'abc\\377\\376def'"), empty) end,
  "corpus fake: the extracted text is not UTF-8 (byte 4): refused", "invalid UTF-8 refused")
t:raises(function() corpora.build(fake("echo oops >&2; exit 3"), empty) end,
  "corpus fake: the extraction `echo oops >&2; exit 3` failed (exit 3): oops",
  "a failing extraction is refused with its stderr")
t:eq(listing(empty), "", "nothing installed after the refusals")
-- UTF-8 beyond ASCII is text: accepted by the checks
t:eq(select(2, pcall(corpora.check_text, devil, "caf\195\169 na\195\175ve")), nil,
  "UTF-8 text passes")

-- A bad registry entry is named.
local reg = dir .. "/reg.lua"
check.write(reg, 'return { { name = "x", file = "x.txt", sha256 = "abc" } }')
t:raises(function() corpora.load(reg) end, reg .. ": corpus x: licence must be a string",
  "a registry entry missing a field is named")

-- The vocabulary and split rule for every installed corpus: sorted distinct bytes, first
-- 90 % train (engine/data.h), the same rule that gives Tiny Shakespeare 65 symbols.
for _, c in ipairs(list) do
  local path = host.root .. "/data/" .. c.file
  local text = fs.read(path)
  if text and fs.sha256_text(text) == c.sha256 then
    local seen, vocab = {}, 0
    for i = 1, #text do
      local b = text:byte(i)
      if not seen[b] then seen[b], vocab = true, vocab + 1 end
    end
    local b = corpora.baselines(c, host.root .. "/data")
    t:eq(b.vocab, vocab, c.name .. ": vocabulary = distinct bytes")
    t:eq(b.n_train, #text * 9 // 10, c.name .. ": first 90 % train")
    t:eq(b.n_val, #text - #text * 9 // 10, c.name .. ": last 10 % validation")
    t:ok(b.bigram_ppl < b.unigram_ppl and b.unigram_ppl < vocab,
      c.name .. ": bigram below unigram below the vocabulary size")
    local r = engine.ngram_ppl(path)
    t:eq(r.n_eval, b.n_val - 1, c.name .. ": the baselines score the validation split")
  else
    skipped[#skipped + 1] = c.name .. " (data)"
    io.stderr:write("test_corpora: data/", c.file, " not built (make data): its vocabulary " ..
      "is not checked\n")
  end
end
t:eq(corpora.baselines(ts, host.root .. "/data").vocab, 65, "Tiny Shakespeare keeps 65 symbols")

-- bin/repro corpora: the listing, and a changed installed text refused by name.
local code, out = check.run(q(repro) .. " corpora")
t:eq(code, 0, "bin/repro corpora lists")
for _, c in ipairs(list) do
  t:ok(out:find("data/" .. c.file, 1, true), "listing names data/" .. c.file)
end
local copydir = dir .. "/data"
fs.mkdir_p(copydir)
for _, c in ipairs(list) do
  os.execute("cp " .. q(host.root .. "/data/" .. c.file) .. " " .. q(copydir))
end
local f = io.open(copydir .. "/devil.txt", "ab")
f:write("x")
f:close()
local changed = fs.sha256(copydir .. "/devil.txt")
local err
code, _, err = check.run(q(repro) .. " corpora --data-dir " .. q(copydir))
t:ok(code ~= 0 and err:find("corpus devil: " .. copydir .. "/devil.txt has SHA-256 " ..
  changed .. ", but the registry (scripts/corpora.lua) pins " .. devil.sha256, 1, true),
  "a changed installed text is refused naming the corpus and both hashes: " .. err)
-- --build replaces it from the package
if fs.exists(devil.installs[1]) then
  code, _, err = check.run(q(repro) .. " corpora --build --data-dir " .. q(copydir))
  t:eq(code, 0, "--build rebuilds a changed text: " .. err)
  t:eq(fs.sha256(copydir .. "/devil.txt"), devil.sha256, "rebuilt text has the pinned SHA")
  local js = require("repro.core.json").decode(fs.read(copydir .. "/corpora.json"))
  t:eq(#js.corpora, #list, "corpora.json lists every corpus")
end

-- A study names a corpus by `data`: the corpus studies validate with the run counts
-- their descriptions state (final_<corpus> copies final's Tiny Shakespeare runs), every
-- run of theirs on its corpus; `--set data=` retargets a study; a run's manifest records
-- the corpus's SHA-256.
local study = require "repro.study"
for _, c in ipairs(list) do
  if c.package and fs.exists(host.root .. "/lua/experiments/final_" .. c.name .. ".lua") then
    for name, want in pairs({ ["final_" .. c.name] = "30 of its 30 runs selected",
        ["lr_sweep_" .. c.name] = "30 of its 30 runs selected" }) do
      local o = dir .. "/dry-" .. name
      local rcode, rout, rerr = check.run(q(repro) .. " run lua/experiments/" .. name ..
        ".lua --dry-run --out-root " .. q(o))
      t:ok(rcode == 0 and rout:find(want, 1, true), name .. " validates: " .. rerr .. rout:sub(1, 200))
      t:ok(not fs.exists(o), name .. " --dry-run writes nothing")
    end
    local on, other = 0, 0
    for _, run in ipairs(study.load("lua/experiments/lr_sweep_" .. c.name .. ".lua").runs) do
      if run.cfg.data == "data/" .. c.file then on = on + 1 else other = other + 1 end
    end
    t:ok(on == 30 and other == 0, "lr_sweep_" .. c.name .. " trains on data/" .. c.file)
    local _, fout = check.run(q(repro) .. " run lua/experiments/final_" .. c.name ..
      ".lua --dry-run")
    local _, copies = fout:gsub("identical done record experiments/final/", "")
    -- (before the study has run its records are copied from final; after, all are reused)
    t:ok(copies == 15 or fout:find("30 reused", 1, true) ~= nil, "final_" .. c.name ..
      " copies final's 15 Tiny Shakespeare runs, or reuses its 30 records once run: " ..
      fout:sub(-200))
  end
end
local set = study.load("lua/experiments/final.lua", { data = "data/kjv.txt" })
t:eq(set.runs[1].cfg.data, "data/kjv.txt", "--set data= retargets a study's runs")
local run_dir = dir .. "/trained"
code, _, err = check.run(q(repro) .. " train data=data/devil.txt n_layer=1 d_model=16 " ..
  "n_head=2 context=16 batch=2 iters=2 warmup=1 --out " .. q(run_dir))
local man = require("repro.core.json").decode(fs.read(run_dir .. "/manifest.json") or "{}")
t:ok(code == 0 and man.corpus == "data/devil.txt" and man.corpus_sha256 == devil.sha256,
  "a run's manifest records its corpus and SHA-256: " .. err)

if #skipped > 0 then
  io.stderr:write("test_corpora: not checked (see above): ", table.concat(skipped, ", "), "\n")
end
check.rmtree(dir)
t:done()
