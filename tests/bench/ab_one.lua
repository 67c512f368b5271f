-- One measurement of the A/B harness (tests/bench/bench_ab.lua), run by either build's
-- bin/repro from the harness's tree, so both builds are measured by the same script:
--   bin/repro script tests/bench/ab_one.lua steps=N threads=1,2
-- (the same script for builds back to the start of the engine's round 3, a86a697: builds
-- without proc.monotonic read the clock through date(1))
-- For every thread count: a fresh FMA peak (the best of three 0.3 s measurements, taken
-- just before the training it is compared with), the default config trained for `steps`
-- steps and timed over the steps after the first, and one layer's attention forward +
-- backward (best of 5; absent when the build has no engine.attention_time).  Prints one JSON
-- line per thread count: {threads, peak_gflops, tokens_per_s, attention_s}.
local engine = require "engine"
local json = require "repro.core.json"

local opts = { steps = "20", threads = "1,2" }
for _, a in ipairs(arg) do
  local k, v = a:match("^([%w_]+)=(.+)$")
  if not k or not opts[k] then error({ message = "ab_one: unknown argument " .. a }) end
  opts[k] = v
end
local steps = math.tointeger(tonumber(opts.steps))
local now = dofile("tests/bench/clock.lua")
local d = engine.defaults()
for th in opts.threads:gmatch("%d+") do
  th = math.tointeger(tonumber(th))
  local peak = 0
  for _ = 1, 3 do peak = math.max(peak, engine.fma_peak(th, 0.3)) end
  local first, last, n
  engine.train({ iters = steps, warmup = 1, threads = th }, { on_step = function(step)
    local stop = step + 1 >= steps
    -- the clock is read at the first and the last step only (the fallback forks a process)
    if step == 0 then first = now() end
    if stop then last, n = now(), step end
    return stop
  end })
  local att = engine.attention_time and engine.attention_time({}, th, 5)
  print(json.encode({ threads = th, peak_gflops = peak,
    tokens_per_s = n * d.batch * d.context / (last - first), attention_s = att }))
end
