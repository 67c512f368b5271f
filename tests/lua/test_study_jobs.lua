-- make reproduce's study loop with STUDY_JOBS > 1 (scripts/reproduce_studies.sh): studies
-- run at once only when what they need has ended, never more than STUDY_JOBS, the longest
-- chain of work first, each study's output whole; a failure starts nothing more and is the
-- exit status; a summary that would change (exit 3) is listed and fails the loop at the
-- end.  `bin/repro run` is replaced by a stub that logs when each study starts and ends,
-- sleeps, prints two lines and exits with the status its study file names, so the test
-- takes seconds.  The sequential loop (STUDY_JOBS=1) is test_update's.
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local t = check.new("test_study_jobs")

local tmp = check.tmpdir()
local stub, events = tmp .. "/repro", tmp .. "/events"
-- a study file holds "SECONDS STATUS"; the stub is `repro run FILE.lua FLAGS...`
check.write(stub, string.format([[#!/bin/sh
[ "$1" = run ] || exit 9
name=$(basename "$2" .lua)
read -r secs rc < "$2"
echo "start $name $(date +%%s%%N)" >> %s
echo "$name: first line"
sleep "$secs"
echo "$name: flags $3 $4"
echo "end $name $(date +%%s%%N)" >> %s
exit "$rc"
]], events, events))
os.execute("chmod +x " .. fs.quote(stub))

local function studies(spec)
  for name, v in pairs(spec) do check.write(tmp .. "/" .. name .. ".lua", v .. "\n") end
end

-- runs the loop; returns exit status, output, and the events in order as a list of
-- { what, name, ns }
local function loop(names, deps, jobs, times, extra_env)
  os.remove(events)
  local cmd = string.format("cd %s && REPRO=%s STUDY_DIR=%s STUDY_JOBS=%s STUDY_DEPS=%s " ..
    "STUDY_TIMES=%s %s scripts/reproduce_studies.sh %s -- --flag x", fs.quote(host.root),
    fs.quote(stub), fs.quote(tmp), jobs, fs.quote(deps), fs.quote(times or ""),
    extra_env or "", names)
  local code, out, err = check.run(cmd)
  local ev = {}
  for line in (fs.read(events) or ""):gmatch("[^\n]+") do
    local what, name, ns = line:match("^(%a+) (%S+) (%d+)$")
    ev[#ev + 1] = { what = what, name = name, ns = tonumber(ns) }
  end
  return code, out, err, ev
end

local function at(ev, what, name)
  for _, e in ipairs(ev) do if e.what == what and e.name == name then return e.ns end end
end

local function most_at_once(ev)
  local n, most = 0, 0
  for _, e in ipairs(ev) do
    n = n + (e.what == "start" and 1 or -1)
    if n > most then most = n end
  end
  return most
end

-- a chain a -> b -> c beside two independent studies d and e
studies({ a = "0.3 0", b = "0.3 0", c = "0.3 0", d = "0.2 0", e = "0.2 0" })
local deps = "a:\nb: a\nc: b\nd:\ne:"
local code, out, err, ev = loop("a b c d e", deps, 2)
t:eq(code, 0, "five studies pass: " .. err)
t:eq(#ev, 10, "each started and ended once")
t:ok(at(ev, "start", "b") >= at(ev, "end", "a") and at(ev, "start", "c") >= at(ev, "end", "b"),
  "a study starts only after what it needs has ended")
t:eq(most_at_once(ev), 2, "two at once, never more")
t:ok(out:find("a: first line\na: flags --flag x\n", 1, true) ~= nil,
  "a study's output is printed whole, with the run flags passed on: " .. out)
t:ok(err:find("reproduce: study c ended (exit status 0,", 1, true) ~= nil,
  "each end is named with its status: " .. err)
code, out, err, ev = loop("a b c d e", deps, 1)
t:eq(most_at_once(ev), 1, "STUDY_JOBS=1: one at a time")
local order = {}
for _, e in ipairs(ev) do if e.what == "start" then order[#order + 1] = e.name end end
t:eq(table.concat(order, " "), "a b c d e", "STUDY_JOBS=1: in the order given")

-- the longest chain of work first, by the last run's times
local times = tmp .. "/times"
check.write(times, "a 1\nb 1\nc 1\nd 0.1\ne 5\n")
code, out, err, ev = loop("a b c d e", deps, 2, times)
t:eq(code, 0, "with times: passes: " .. err)
local first_two = {}
for _, e in ipairs(ev) do
  if e.what == "start" and #first_two < 2 then first_two[#first_two + 1] = e.name end
end
table.sort(first_two)
t:eq(table.concat(first_two, " "), "a e", "e (5 s) and the chain a-b-c (3 s) start first, d (listed before e) waits")
t:ok(fs.read(times):find("^a %d"), "a complete run writes every study's wall time")
local n = 0
for _ in fs.read(times):gmatch("[^\n]+") do n = n + 1 end
t:eq(n, 5, "one line per study")

-- until the build has times of its own, STUDY_TIMES_DEFAULT's ('#' lines are comments)
local defaults = tmp .. "/defaults"
check.write(defaults, "# a comment line\na 1\nb 1\nc 1\nd 0.1\ne 5\n")
local own = tmp .. "/own-times"
os.remove(own)
code, out, err, ev = loop("a b c d e", deps, 2, own, "STUDY_TIMES_DEFAULT=" .. fs.quote(defaults))
first_two = {}
for _, e in ipairs(ev) do
  if e.what == "start" and #first_two < 2 then first_two[#first_two + 1] = e.name end
end
table.sort(first_two)
t:eq(table.concat(first_two, " "), "a e", "the default times order the starts: " .. err)
t:ok(fs.exists(own) and not fs.read(own):find("#", 1, true), "then the build's own are written")

-- a dependency outside the studies given counts as ended
code, out, err, ev = loop("b c", deps, 2)
t:eq(code, 0, "b needs a, which is not among the studies: it runs: " .. err)
t:eq(#ev, 4, "b and c ran")

-- a failure: nothing more starts, the running study ends, its status is the loop's
studies({ f = "0.1 4", slow = "0.6 0", after = "0.1 0" })
code, out, err, ev = loop("f slow after", "f:\nslow:\nafter: f", 2)
t:eq(code, 4, "the first failure's exit status: " .. err)
t:ok(at(ev, "end", "slow") ~= nil, "the study running beside it ends")
t:eq(at(ev, "start", "after"), nil, "no study starts after a failure")
t:ok(err:find("reproduce: study f failed (exit status 4): no further study starts", 1, true) ~= nil,
  "the failure is named: " .. err)

-- exit 3 (a summary that would change): listed, the rest run, the loop fails at the end
studies({ ch = "0.1 3", dep = "0.1 0" })
code, out, err, ev = loop("ch dep", "ch:\ndep: ch", 2)
t:eq(code, 1, "a summary that would change fails the loop: " .. err)
t:ok(at(ev, "start", "dep") ~= nil, "the studies after it still run")
t:ok(err:find("would change, and were not written: ch", 1, true) ~= nil, "and it is listed: " .. err)

-- bad settings are refused before anything runs
code, out, err, ev = loop("a b", "a:", 2)
t:eq(code, 2, "a study without a line in STUDY_DEPS is refused: " .. err)
t:ok(err:find("STUDY_DEPS has no line for the study b", 1, true) ~= nil, "naming it")
t:eq(#ev, 0, "nothing ran")
code, out, err, ev = loop("a", "", 2)
t:eq(code, 2, "STUDY_JOBS > 1 without STUDY_DEPS is refused: " .. err)
code, out, err, ev = loop("a", deps, "x")
t:eq(code, 2, "a STUDY_JOBS that is not a number is refused: " .. err)
t:ok(err:find("STUDY_JOBS=x is not a positive number", 1, true) ~= nil, "naming it: " .. err)
-- a cycle, or a need that never ends, is said, not waited on forever
code, out, err, ev = loop("a b", "a: b\nb: a", 2)
t:eq(code, 2, "studies that can never start: exit 2: " .. err)
t:ok(err:find("never became ready", 1, true) ~= nil, "and said: " .. err)

t:done()
