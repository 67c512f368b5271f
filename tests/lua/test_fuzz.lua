-- Mutation fuzz (PCG32, fixed seed and case counts): study files, and the config.json,
-- metrics.json, log.csv and manifest.json of a finished record.
--
--   study files   every mutant either loads as a valid study or is refused with a user
--                 error ({message = "study: ..."}); anything else (an internal error, a
--                 crash of the process) is a crash.
--   records       record.status and record.verify never raise; a record whose
--                 config.json, log.csv or metrics.json changed is never "done" nor
--                 "verified" (a silently trusted corruption); a changed manifest.json
--                 may leave the record done only while its fields are unchanged (a
--                 layout change: manifest_sha256 covers every field, the checksums too).
-- Then, end to end: a study whose record was damaged retrains it, keeps the damaged
-- files aside and ends byte-identical to an undamaged study.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local study = require "repro.study"
local t = check.new("test_fuzz")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local g = require("pcg").new(20261126, 3)
local N = { study = 240, ["config.json"] = 100, ["metrics.json"] = 200, ["log.csv"] = 60,
  ["manifest.json"] = 60 }
-- Mutants that loop forever hit the instruction limit: a smaller one keeps this fast
-- (the limit itself is tested in test_sandbox).
study.LIMITS.instructions = 5000000

local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local text = {}
for i = 1, 3000 do text[i] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ") end
local corpus = dir .. "/corpus.txt"
check.write(corpus, table.concat(text))

local TOKENS = { "{", "}", "(", ")", "[", "]", "=", ",", ";", "..", "-", "#", "nil", "true",
  "false", "0", "-1", "1e309", "0/0", "2^63", "'x'", '"', "\\", "\n", "--", "[[", "]]", "name",
  "seeds", "variants", "analysis", "base", "function() end", "setmetatable({}, {})",
  "string.rep('x', 1 << 30)", "while true do end", "error({})", "return", "local", "repro.x()",
  "{ name = 'v' }", "1.5", "\0", "\255", "null", "NaN", "[]", "{}", "\"val_loss\": ", "e+",
  "999999999999999999999" }

-- One mutation of s (never the identity).
local function mutate(s)
  for _ = 1, 100 do
    local n = #s
    local pos = g:bounded(n + 1) + 1
    local op = g:bounded(7)
    local out
    if op == 0 then -- replace a byte
      out = s:sub(1, pos - 1) .. string.char(g:bounded(256)) .. s:sub(pos + 1)
    elseif op == 1 then -- delete a few bytes
      out = s:sub(1, pos - 1) .. s:sub(pos + 1 + g:bounded(8))
    elseif op == 2 then -- insert a token
      out = s:sub(1, pos - 1) .. TOKENS[g:bounded(#TOKENS) + 1] .. s:sub(pos)
    elseif op == 3 then -- duplicate a slice
      local a = g:bounded(n + 1) + 1
      out = s:sub(1, pos - 1) .. s:sub(a, a + g:bounded(40)) .. s:sub(pos)
    elseif op == 4 then -- truncate
      out = s:sub(1, pos - 1)
    elseif op == 5 then -- change a digit
      local digits = {}
      for i in s:gmatch("()%d") do digits[#digits + 1] = i end
      if #digits > 0 then
        local i = digits[g:bounded(#digits) + 1]
        out = s:sub(1, i - 1) .. tostring(g:bounded(10)) .. s:sub(i + 1)
      end
    else -- swap two lines
      local lines = {}
      for l in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
      if #lines > 2 then
        local a, b = g:bounded(#lines) + 1, g:bounded(#lines) + 1
        lines[a], lines[b] = lines[b], lines[a]
        out = table.concat(lines, "\n", 1, #lines - 1) .. (s:sub(-1) == "\n" and "\n" or "")
      end
    end
    if out and out ~= s then return out end
  end
  error("no mutation found")
end

-- 1. Study files.
local function write_study(path, name, test_field)
  check.write(path, string.format([[
-- a study to mutate
return {
  name = %q,
  description = "fuzz",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 6,
    warmup = 1, data = %q },
  variants = {
    { name = "none", embed_norm = "none" },
    { name = "layernorm", embed_norm = "layernorm" },
  },
  seeds = { 1, 2, 3 },
  checkpoint_every = 2,
  analysis = { baseline = "none", metrics = { "val_loss", "n_spikes" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm",
    resamples = 1000%s },
}
]], name, corpus, test_field))
end
local source_path = dir .. "/fz.lua"
local TEST = ', test = "t"'
write_study(source_path, "fz", TEST)
if not pcall(study.load, source_path) then
  TEST = ""
  write_study(source_path, "fz", TEST)
end
t:ok(pcall(study.load, source_path), "the study to mutate is valid")
local source = fs.read(source_path)
local counts = { valid = 0, refused = 0, crash = 0 }
for i = 1, N.study do
  local m = mutate(source)
  if g:bounded(3) == 0 then m = mutate(m) end
  check.write(source_path, m)
  local ok, err = pcall(study.load, source_path)
  if ok then
    counts.valid = counts.valid + 1
  elseif type(err) == "table" and type(err.message) == "string" and err.message:match("^study: ")
    and not err.message:find("traceback", 1, true) then
    counts.refused = counts.refused + 1
  else
    counts.crash = counts.crash + 1
    t:ok(false, string.format("study mutant %d: not a user error: %s\n--- mutant:\n%s", i,
      tostring(type(err) == "table" and err.message or err), m))
  end
end
t:eq(counts.crash, 0, "study mutants: no crash")
t:ok(counts.refused > counts.valid, "study mutants: most are refused")

-- 2. Records.
local REC = dir .. "/rec"
local tiny = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 iters=6 warmup=1 diag_every=3 " ..
  "diag_windows=2 data=" .. corpus
local code, _, err = check.run(string.format("%s train %s --out %s", repro, tiny, REC))
t:eq(code, 0, "the record to mutate: " .. err)
local cfg = record.resolve(json.decode(fs.read(REC .. "/config.json")))
local original = {}
for _, f in ipairs({ "config.json", "log.csv", "metrics.json", "manifest.json" }) do
  original[f] = fs.read(REC .. "/" .. f)
end
t:eq(record.status(REC, cfg), "done", "the unmutated record is done")
t:eq(record.verify(REC), "verified", "the unmutated record verifies")

local CASE = dir .. "/case"
local trusted, crashes, cases, manifest_kept = 0, 0, 0, 0
for _, f in ipairs({ "config.json", "metrics.json", "log.csv", "manifest.json" }) do
  for i = 1, N[f] do
    cases = cases + 1
    os.execute("rm -rf " .. fs.quote(CASE))
    fs.mkdir_p(CASE)
    for name, text_ in pairs(original) do check.write(CASE .. "/" .. name, text_) end
    local m = mutate(original[f])
    check.write(CASE .. "/" .. f, m)
    local ok1, status = pcall(record.status, CASE, cfg)
    local ok2, state = pcall(record.verify, CASE)
    if not (ok1 and ok2) then
      crashes = crashes + 1
      t:ok(false, string.format("%s mutant %d: status/verify raised: %s %s", f, i,
        tostring(status), tostring(state)))
    elseif f ~= "manifest.json" and (status == "done" or state == "verified" or
        state == "no checksum") then
      trusted = trusted + 1
      t:ok(false, string.format("%s mutant %d trusted (%s, %s):\n%s", f, i, status, state, m))
    elseif f == "manifest.json" and status == "done" then
      -- its checksums and its own digest (manifest_sha256) still hold: only a mutant
      -- that decodes to the same fields (a layout change) may leave the record done
      local dok, mt = pcall(json.decode, m)
      if dok and type(mt) == "table" and
          record.manifest_digest(mt) == record.manifest_digest(json.decode(original[f])) then
        manifest_kept = manifest_kept + 1
      else
        trusted = trusted + 1
        t:ok(false, string.format("manifest.json mutant %d trusted with changed fields:\n%s", i, m))
      end
    end
  end
end
t:eq(crashes, 0, "record mutants: no crash")
t:eq(trusted, 0, "record mutants: no corruption trusted")

-- 3. End to end: a damaged record of a study is retrained, its files kept aside.
local S = dir .. "/e2e.lua"
write_study(S, "e2e", TEST)
local A, B = dir .. "/A", dir .. "/B"
for _, root in ipairs({ A, B }) do
  code, _, err = check.run(string.format("%s run %s --out-root %s", repro, S, root))
  t:eq(code, 0, "end to end: the study runs: " .. err)
end
local victim = B .. "/e2e/layernorm/seed-2"
local damaged = mutate(fs.read(victim .. "/metrics.json"))
check.write(victim .. "/metrics.json", damaged)
code, _, err = check.run(string.format("%s verify %s", repro, B))
t:eq(code, 1, "end to end: verify finds the damage")
code, _, err = check.run(string.format("%s run %s --out-root %s", repro, S, B))
t:ok(code == 0 and err:find("layernorm/seed-2 failed its checks", 1, true) and
  err:find("1 to train", 1, true), "end to end: the damaged run is retrained: " .. err)
local aside = fs.capture("ls -d " .. fs.quote(victim) .. "/corrupt-*")
t:ok(aside and fs.read(aside .. "/metrics.json") == damaged, "end to end: the damaged file is kept")
for _, r in ipairs({ "none/seed-1", "layernorm/seed-2" }) do
  for _, f in ipairs({ "config.json", "log.csv", "metrics.json" }) do
    t:ok(fs.read(A .. "/e2e/" .. r .. "/" .. f) == fs.read(B .. "/e2e/" .. r .. "/" .. f),
      "end to end: " .. r .. "/" .. f .. " as in the undamaged study")
  end
end
t:ok(fs.read(A .. "/e2e/summary.json") == fs.read(B .. "/e2e/summary.json"),
  "end to end: the same summary")
code = check.run(string.format("%s verify %s", repro, B))
t:eq(code, 0, "end to end: every record verifies again")

print(string.format("test_fuzz: %d study mutants (%d valid, %d refused, %d crashes); %d record " ..
  "mutants (%d crashes, %d corruptions trusted; %d manifest mutants left the intact files " ..
  "trusted)", N.study, counts.valid, counts.refused, counts.crash, cases, crashes, trusted,
  manifest_kept))
check.rmtree(dir)
t:done()
