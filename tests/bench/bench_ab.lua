-- make bench AB=<commit> [ROUNDS=5] [STEPS=20]: this tree's build against another commit's,
-- on the same machine in one run, so a change is judged against the machine's noise.
--   bin/repro script tests/bench/bench_ab.lua <commit> [rounds] [steps]
-- The other commit is exported (git archive, no worktree registered) into
-- build/ab/<sha>/ and built there once (kept for later runs; make clean removes it), with
-- a copy of data/.  Then `rounds` rounds: each runs tests/bench/ab_one.lua (this tree's
-- copy) under both builds, alternating which goes first, each at 1 and 2 threads with a
-- fresh FMA peak beside its training (a peak is only compared with the training right
-- after it, so a core lost to another tenant shows in both).  Printed per build and thread
-- count: median [min, max] over the rounds of tokens/s, the step's time (batch · context
-- tokens at that rate), % of that peak, and one layer's attention forward + backward (ms,
-- and its share of a step: n_layer of them); then the median per-round ratios: this/other
-- tokens/s and each build's 1 -> 2 thread speed-up.
-- A benchmark, never a test: timings never enter a result file.
local engine = require "engine"
local host = require "repro.host"
local json = require "repro.core.json"
local fs = require "repro.core.fs"

local commit, rounds, steps = arg[1], math.tointeger(tonumber(arg[2] or "5")),
  math.tointeger(tonumber(arg[3] or "20"))
if not commit or commit == "" or not rounds or rounds < 1 or not steps or steps < 3 then
  error({ message = "bench_ab: usage: bench_ab.lua <commit> [rounds >= 1] [steps >= 3]" })
end
local root = host.root
local function sh(cmd, what)
  if not os.execute(cmd) then error({ message = "bench_ab: " .. what .. " failed: " .. cmd }) end
end
local sha = fs.capture(string.format("git -C %s rev-parse --verify -q %s",
  fs.quote(root), fs.quote(commit .. "^{commit}")))
if not sha or not sha:match("^%x+$") then
  error({ message = "bench_ab: AB=" .. commit .. " is not a commit of " .. root })
end
local dir = string.format("%s/build/ab/%s", root, sha:sub(1, 12))
local other = dir .. "/bin/repro"
if not fs.exists(other) then
  io.stderr:write(string.format("bench_ab: building %s in %s\n", sha:sub(1, 12), dir))
  local tmp = dir .. ".tmp"
  sh(string.format("rm -rf %s && mkdir -p %s/data && git -C %s archive %s | tar -x -C %s",
    fs.quote(tmp), fs.quote(tmp), fs.quote(root), sha, fs.quote(tmp)), "export")
  sh(string.format("cp %s/data/tinyshakespeare.txt %s/data/", fs.quote(root), fs.quote(tmp)),
    "copying the corpus (make data first)")
  sh(string.format("make -C %s -j2 bin/repro >%s/build.log 2>&1", fs.quote(tmp), fs.quote(tmp)),
    "building " .. sha:sub(1, 12) .. " (log: " .. tmp .. "/build.log)")
  sh(string.format("rm -rf %s && mv %s %s", fs.quote(dir), fs.quote(tmp), fs.quote(dir)), "rename")
end

-- `bin/repro script` runs a failing-in-the-sandbox file only from its own tree's tests/
-- (cli guard_script), so the other build runs this tree's ab_one.lua copied into its tree
-- (same script for both), from its own folder (where its data/ copy is)
sh(string.format("mkdir -p %s/tests/bench && cp %s/tests/bench/ab_one.lua %s/tests/bench/",
  fs.quote(dir), fs.quote(root), fs.quote(dir)), "copying ab_one.lua")
local this = os.getenv("REPRO") or (root .. "/bin/repro")
local builds = { { name = "this", bin = this, root = root },
  { name = sha:sub(1, 12), bin = other, root = dir } }
local d = engine.defaults()
local L, C, T, V = d.n_layer, d.d_model, d.context, 65
local flop_per_token = 6 * (12 * L * C * C + V * C) + 12 * L * T * C

-- samples[build][threads] = list of {tps, pct, att_ms, share}
local samples = { {}, {} }
local thread_counts = { 1, 2 }
for r = 1, rounds do
  local order = r % 2 == 1 and { 1, 2 } or { 2, 1 }
  for _, bi in ipairs(order) do
    local b = builds[bi]
    local out = fs.capture(string.format(
      "cd %s && %s script tests/bench/ab_one.lua steps=%d threads=1,2 2>&1",
      fs.quote(b.root), fs.quote(b.bin), steps))
    local got = 0
    for line in (out or ""):gmatch("[^\n]+") do
      local ok, m = pcall(json.decode, line)
      if ok and type(m) == "table" and m.threads then
        local step_s = d.batch * T / m.tokens_per_s
        local list = samples[bi][m.threads] or {}
        samples[bi][m.threads] = list
        list[#list + 1] = { tps = m.tokens_per_s, step_ms = 1e3 * step_s,
          pct = 100 * m.tokens_per_s * flop_per_token / 1e9 / m.peak_gflops,
          att_ms = m.attention_s and m.attention_s * 1e3,
          share = m.attention_s and 100 * L * m.attention_s / step_s }
        got = got + 1
      end
    end
    if got == 0 then
      error({ message = string.format("bench_ab: round %d, build %s gave no measurement:\n%s",
        r, b.name, out or "") })
    end
  end
  io.stderr:write(string.format("bench_ab: round %d of %d done\n", r, rounds))
end

local function stats(list, field)
  local v = {}
  for _, s in ipairs(list) do if s[field] then v[#v + 1] = s[field] end end
  if #v == 0 then return nil end
  table.sort(v)
  local med = #v % 2 == 1 and v[(#v + 1) // 2] or (v[#v // 2] + v[#v // 2 + 1]) / 2
  return med, v[1], v[#v]
end
local function fmt(list, field, f)
  local med, lo, hi = stats(list, field)
  if not med then return "-" end
  return string.format("%s [" .. f .. ", " .. f .. "]", string.format(f, med), lo, hi)
end

print(string.format("bench_ab: this tree vs %s, %d rounds, %d steps each, default config "
  .. "(%d x %d, context %d, batch %d), path %s", sha:sub(1, 12), rounds, steps, L, C, T,
  d.batch, engine.isa().available:match("^%w+")))
print(string.format("%-12s %3s %-24s %-24s %-22s %-22s %-22s", "build", "thr",
  "tok/s med [min, max]", "ms/step", "% of peak", "attention ms/layer", "attention % of step"))
for bi, b in ipairs(builds) do
  for _, th in ipairs(thread_counts) do
    local list = samples[bi][th] or {}
    print(string.format("%-12s %3d %-24s %-24s %-22s %-22s %-22s", b.name, th,
      fmt(list, "tps", "%.0f"), fmt(list, "step_ms", "%.2f"), fmt(list, "pct", "%.1f"),
      fmt(list, "att_ms", "%.2f"), fmt(list, "share", "%.1f")))
  end
end
-- per-round ratios: the pairs measured closest in time
local function ratio_line(label, a, b, field)
  local list = {}
  for i = 1, math.min(#a, #b) do
    if a[i][field] and b[i][field] then list[#list + 1] = { r = a[i][field] / b[i][field] } end
  end
  print(string.format("%-40s %s", label, fmt(list, "r", "%.3f")))
end
for _, th in ipairs(thread_counts) do
  ratio_line(string.format("this / %s tok/s, %d thr", sha:sub(1, 12), th), samples[1][th] or {},
    samples[2][th] or {}, "tps")
end
for _, th in ipairs(thread_counts) do
  ratio_line(string.format("this / %s attention ms, %d thr", sha:sub(1, 12), th),
    samples[1][th] or {}, samples[2][th] or {}, "att_ms")
end
for bi, b in ipairs(builds) do
  ratio_line(string.format("%s 1 -> 2 thread speed-up", b.name), samples[bi][2] or {},
    samples[bi][1] or {}, "tps")
end
