-- The benchmarks' wall clock, for timing only (tests/bench/ab_one.lua, bench_engine.lua):
-- proc.monotonic, or for a build older than it (an earlier commit's bin/repro, back to the
-- engine round 3's start, a86a697) date(1)'s nanoseconds through a pipe.  Callers read it
-- at two steps per measurement only, since the fallback forks a process.
local proc = require "repro.proc"
return proc.monotonic or function()
  local f = assert(io.popen("date +%s.%N"))
  local t = tonumber(f:read("l"))
  f:close()
  return t
end
