-- A full disk: on a small tmpfs (mounted here, so only when running as root), a run
-- whose checkpoint does not fit, a record that cannot be written, and a study on a
-- full filesystem each stop with a "filesystem:" message naming the file and "No space
-- left on device", exit status 1, no traceback, no record that looks done and no
-- temporary file; once space is freed, the same commands finish with records
-- byte-identical to ones written on a roomy disk.  Without root (or where a tmpfs
-- cannot be mounted) the test says "skipped" and tests/run.sh counts it so.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local record = require "repro.record"
local t = check.new("test_diskfull")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end

local function skip(why)
  print("test_diskfull: skipped (" .. why .. ")")
  os.exit(0)
end
if fs.capture("id -u") ~= "0" then skip("needs root to mount a tmpfs") end
local dir = check.tmpdir()
local mnt = dir .. "/mnt"
fs.mkdir_p(mnt)
if not os.execute("mount -t tmpfs -o size=192k tmpfs " .. fs.quote(mnt) .. " 2>/dev/null") then
  check.rmtree(dir)
  skip("cannot mount a tmpfs here")
end

local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local g = require("pcg").new(5, 0)
local text = {}
for i = 1, 3000 do text[i] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ") end
local corpus = dir .. "/corpus.txt"
check.write(corpus, table.concat(text))
-- a checkpoint of about 1 MB (weights and both Adam moments) does not fit in 192 KiB
local BIG = "n_layer=2 d_model=64 n_head=2 context=16 batch=4 iters=6 warmup=1 data=" .. corpus
local TINY = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 iters=6 warmup=1 data=" .. corpus

local function leftovers(root)
  local found = {}
  local function walk(d)
    for _, name in ipairs(sys.listdir(d) or {}) do
      local p = d .. "/" .. name
      local st = sys.stat(p)
      if st and st.type == "dir" then
        walk(p)
      elseif name:find("%.tmp%.%d+") then
        found[#found + 1] = p
      end
    end
  end
  walk(root)
  return table.concat(found, ", ")
end

local function refused(what, code, err, file)
  t:eq(code, 1, what .. ": exit status")
  t:ok(err:find("filesystem: ", 1, true) and err:find(file, 1, true) and
    err:find("No space left on device", 1, true), what .. ": a filesystem error naming " .. file ..
    " -- got: " .. err)
  t:ok(not err:find("traceback", 1, true), what .. ": no traceback")
  t:eq(leftovers(mnt), "", what .. ": no temporary file left")
end

local function fill()
  os.execute("dd if=/dev/zero of=" .. fs.quote(mnt .. "/filler") .. " bs=4k 2>/dev/null")
end

-- 1. A checkpoint that does not fit.
local code, _, err = check.run(string.format("%s train %s --out %s/big --checkpoint-every 2",
  repro, BIG, mnt))
refused("checkpoint", code, err, mnt .. "/big/checkpoint-")
t:ok(not fs.exists(mnt .. "/big/metrics.json"), "checkpoint: the record is not done")

-- 2. A record on a full disk, then the same command once there is room.
os.execute("rm -rf " .. fs.quote(mnt .. "/big"))
fill()
code, _, err = check.run(string.format("%s train %s --out %s/rec", repro, TINY, mnt))
refused("record", code, err, mnt .. "/rec/")
t:ok(not fs.exists(mnt .. "/rec/metrics.json"), "record: not done")
os.remove(mnt .. "/filler")
code, _, err = check.run(string.format("%s train %s --out %s/rec", repro, TINY, mnt))
t:eq(code, 0, "record: the same command finishes once there is room: " .. err)
code = check.run(string.format("%s train %s --out %s/ref", repro, TINY, dir))
for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
  t:ok(fs.read(mnt .. "/rec/" .. f) == fs.read(dir .. "/ref/" .. f), "record: " .. f ..
    " byte-identical to one written on a roomy disk")
end
t:eq(record.verify(mnt .. "/rec"), "verified", "record: verifies")
os.execute("rm -rf " .. fs.quote(mnt .. "/rec"))

-- 3. A study on a full disk.
local study_file = dir .. "/full.lua"
local function write_study(test_field)
  check.write(study_file, string.format([[
return { name = "full", description = "a full disk",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 6,
    warmup = 1, data = %q },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000%s } }
]], corpus, test_field))
end
write_study(', test = "t"')
if not pcall(require("repro.study").load, study_file) then write_study("") end
fs.mkdir_p(mnt .. "/exp/full/none/seed-1")
fill()
code, _, err = check.run(string.format("%s run %s --out-root %s/exp", repro, study_file, mnt))
t:eq(code, 1, "study: exit status")
t:ok(err:find("No space left on device", 1, true) and not err:find("traceback", 1, true),
  "study: says the disk is full, no traceback -- got: " .. err)
t:eq(leftovers(mnt), "", "study: no temporary file left")
os.remove(mnt .. "/filler")
code, _, err = check.run(string.format("%s run %s --out-root %s/exp", repro, study_file, mnt))
t:eq(code, 0, "study: the same command finishes once there is room: " .. err)
code, _, err = check.run(string.format("%s verify %s/exp", repro, mnt))
t:ok(code == 0 and err == "", "study: every record verifies")

-- 4. A run that fails on a full disk after its attempt began: attempt.json says so
-- (its temporary copy no longer fits; it is overwritten in place), never "running".
os.execute("rm -rf " .. fs.quote(mnt .. "/exp"))
local function attempt_after(reserve_k)
  os.execute("rm -rf " .. fs.quote(mnt .. "/exp2"))
  fs.mkdir_p(mnt .. "/exp2/full/none/seed-1")
  os.execute(string.format("dd if=/dev/zero of=%s bs=1k count=%d 2>/dev/null",
    fs.quote(mnt .. "/reserve"), reserve_k))
  fill()
  os.remove(mnt .. "/reserve")
  local c, _, e = check.run(string.format("%s run %s --out-root %s/exp2 --only variant=none,seed=1",
    repro, study_file, mnt))
  os.remove(mnt .. "/filler")
  local a = fs.read(mnt .. "/exp2/full/none/seed-1/attempt.json")
  return c, e, a
end
local seen_attempt = false
for _, k in ipairs({ 4, 8, 12, 16 }) do
  local c, e, a = attempt_after(k)
  if a then
    seen_attempt = true
    t:ok(c ~= 0 and not a:find('"running"', 1, true) and a:find('"error"', 1, true),
      "attempt.json after a disk-full failure (" .. k .. " KiB free) says error, not running: " ..
      a .. " / " .. e)
  end
end
t:ok(seen_attempt, "one of the runs began its attempt before the disk filled")
os.execute("rm -rf " .. fs.quote(mnt .. "/exp2"))

os.execute("umount " .. fs.quote(mnt))
check.rmtree(dir)
t:done()
