-- Bounded host work: a study with 200,000 unknown keys validates in
-- under 2 s with the first 20 problems shown and the rest counted; a 1 MB key is shown by
-- its start; a study that reads another study's summary through repro.result gets a
-- FIFO or a link to /dev/zero refused at once; host functions obey the study's limits
-- (instructions and memory).
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local study = require "repro.study"
local t = check.new("test_bounds")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

-- Runs a command; its exit status, stderr and the CPU seconds it used (user + system, its
-- children included: the study's sandbox is a child).  CPU time, not wall time: the
-- machine running the tests may be shared, and a wait is not work.
local function timed(cmd)
  local tf, ef = dir .. "/time.txt", dir .. "/err.txt"
  os.execute("bash -c " .. q("TIMEFORMAT='%U %S'; time (" .. cmd .. " >/dev/null 2>" .. q(ef) ..
    ")") .. " 2>" .. q(tf))
  local u, s = (fs.read(tf) or ""):match("([%d.]+) ([%d.]+)")
  return fs.read(ef) or "", (tonumber(u) or 99) + (tonumber(s) or 99)
end

local TAIL = [[variants = {{ name = "none" }}, seeds = { 1, 2 },
  analysis = { baseline = "none", primary = "val_loss", comparisons = {} } }]]

local big = dir .. "/big.lua"
check.write(big, [[
local b = {}
for i = 1, 200000 do b["k" .. i] = 1 end
local t = { name = "big", description = "x", base = b, ]] .. TAIL .. [[

for i = 1, 1000 do t["top" .. i] = i end
return t
]])
local t0 = host.now()
local err, cpu = timed(repro .. " run " .. q(big) .. " --dry-run")
local took = host.now() - t0
-- the bound is the optimized build's; under AddressSanitizer (make test-asan, its flags in
-- `bin/repro --version`) the same work takes several times as long
local vh = io.popen(q(repro) .. " --version")
local sanitized = vh and (vh:read("a") or ""):find("fsanitize", 1, true) ~= nil
if vh then vh:close() end
local LIMIT = sanitized and 20 or 2
t:ok(cpu < LIMIT, string.format("200,000 unknown keys: refused in %.2f s of CPU (< %g s%s; " ..
  "%.2f s of wall time)", cpu, LIMIT, sanitized and ", sanitized build" or "", took))
t:ok(err:find("study: ", 1, true) == 1, "refused")
t:ok(err:find("201008 problems in the study (nothing was run); the first 20:", 1, true),
  "the problems are counted: " .. err:sub(1, 200))
t:ok(err:find("... and 200988 more", 1, true), "the rest counted, not listed")
local shown = 0
for _ in err:gmatch("\n  [^\n]*unknown") do shown = shown + 1 end
t:eq(shown, study.MAX_PROBLEMS, "20 problems shown")
t:ok(#err < 4000, "the message is short: " .. #err .. " bytes")
t:ok(err:find("big.lua: top1: unknown field", 1, true) and err:find("top1000: unknown", 1, true),
  "the first problems in key order")

local one = dir .. "/one.lua"
check.write(one, [[
local t = { name = "one", description = "x", base = { [string.rep("x", 1000000)] = 1 }, ]] ..
  TAIL .. [[

t[string.rep("y", 1000000)] = 1
return t
]])
err, cpu = timed(repro .. " run " .. q(one) .. " --dry-run")
t:ok(cpu < 2 and err:find("study: ", 1, true) == 1,
  string.format("1 MB keys: refused in %.2f s of CPU", cpu))
t:ok(#err < 4000 and err:find("%.%.%. %(10%d%d%d%d%d bytes%)") ~= nil, "a 1 MB key is shown by its start")

-- repro.result reads a summary: a FIFO or /dev/zero in its place is refused at once
local code, took
for _, kind in ipairs({ "fifo", "zero" }) do
  local root = dir .. "/root-" .. kind
  fs.mkdir_p(root .. "/src")
  if kind == "fifo" then
    os.execute("mkfifo " .. q(root .. "/src/summary.json"))
  else
    os.execute("ln -s /dev/zero " .. q(root .. "/src/summary.json"))
  end
  local reader = dir .. "/reader.lua"
  check.write(reader, [[
local r = repro.result("src", "none", "val_loss")
return { name = "reader", description = "x", ]] .. TAIL .. "\n")
  t0 = host.now()
  code, _, err = check.run("timeout 30 " .. repro .. " run " .. q(reader) .. " --dry-run " ..
    "--out-root " .. q(root))
  took = host.now() - t0
  t:ok(code == 1 and err:find("summary.json", 1, true),
    string.format("repro.result on a %s summary: refused (no hang: %.2f s): %s", kind, took, err))
end

-- Host functions run under the study's own limits (lua/lsandbox.c): a loop of 10^6 calls
-- ends at the instruction limit (each call counts as 1000 instructions at least), never at
-- the 20 s wall clock; a summary that decodes to more than the 256 MiB memory limit ends
-- at the memory limit, not by growing the host.
local hroot = dir .. "/root-host"
fs.mkdir_p(hroot .. "/src")
check.write(hroot .. "/src/summary.json", '{"none": {"val_loss": 1.5}}')
local loop = dir .. "/loop.lua"
check.write(loop, [[
local s = 0
for i = 1, 1000000 do s = s + repro.result("src", "none", "val_loss") end
return { name = "loop", description = "x", ]] .. TAIL .. "\n")
t0 = host.now()
code, _, err = check.run("timeout 60 " .. repro .. " run " .. q(loop) .. " --dry-run " ..
  "--out-root " .. q(hroot))
took = host.now() - t0
t:ok(code == 1 and err:find("loop.lua: exceeded the limit of 100000000 Lua instructions", 1, true)
  and took < 15, string.format("10^6 host calls end at the study's instruction limit in " ..
  "%.2f s: %s", took, err))
local hbig = dir .. "/root-hbig"
fs.mkdir_p(hbig .. "/src")
local f = assert(io.open(hbig .. "/src/summary.json", "wb"))
f:write('{"none": {"val_loss": 1.5}, "pad": [')
local chunk = string.rep("{},", 100000)
for _ = 1, 60 do f:write(chunk) end
f:write('{}]}')
f:close()
local huge = dir .. "/huge.lua"
check.write(huge, [[
local v = repro.result("src", "none", "val_loss")
return { name = "huge", description = "x", ]] .. TAIL .. "\n")
t0 = host.now()
code, _, err = check.run("timeout 60 " .. repro .. " run " .. q(huge) .. " --dry-run " ..
  "--out-root " .. q(hbig))
took = host.now() - t0
t:ok(code == 1 and err:find("huge.lua: exceeded the 256 MiB memory limit", 1, true),
  string.format("a summary of 6 million objects (18 MB) read by a host function ends at " ..
  "the study's memory limit (%.2f s): %s", took, err))

check.rmtree(dir)
t:done()
