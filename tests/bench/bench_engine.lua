-- make bench: the engine's speed on this machine against this machine's own FMA peak and
-- against PyTorch, all measured in the same run (compare ratios, not times across runs:
-- the machine is shared).
--   bin/repro tests/bench/bench_engine.lua [steps=30] [threads=1,2] [paths=avx512,avx2,generic]
--
-- For every CPU path this CPU has (engine/isa.h):
--   peak     GFLOP/s of 12 independent FMA chains on the path's widest registers, per
--            thread count (engine.fma_peak);
--   train    the default config trained for `steps` steps: tokens/s, GFLOP/s and % of that
--            path's peak at that thread count;
--   eval     the forward-only evaluation of the whole validation split at the end of the
--            same run: tokens/s and its ratio to training.
--   rss      peak resident memory of this process (all the runs above, with every path's
--            buffers) and of one default training run in its own process (bin/repro train,
--            from its manifest), which is what a study's worker holds.
-- The generic path (portable C with fmaf; on x86 each fmaf is a library call) trains 2
-- steps and skips the evaluation: it exists for correctness, not speed.
-- PyTorch 1.13 (Debian python3-torch with OpenBLAS pinned to the same thread count) trains
-- the same config once per thread count (tests/reference/gpt_ref.py bench).
--
-- FLOPs: the matrix products per trained token,
--   6·(12·L·C² + V·C)   linear layers and the tied logits (forward 2, backward 4)
--   + 12·L·T·C          attention scores and weighted values counted over the full T×T
-- = 11.06 MFLOP per token for the default config (the engine skips the masked half of
-- attention, so this slightly overstates its work); elementwise work is not counted.
-- Evaluation FLOPs are a third of that per token.
local engine = require "engine"
local host = require "repro.host"
local json = require "repro.core.json"
local fs = require "repro.core.fs"

local opts = { steps = "30", threads = "1,2", paths = engine.isa().available:gsub(" ", ",") }
for _, a in ipairs(arg) do
  local k, v = a:match("^(%w+)=(.+)$")
  if not k or not opts[k] then error({ message = "bench: unknown argument " .. a }) end
  opts[k] = v
end
local steps = math.tointeger(tonumber(opts.steps))
local threads = {}
for th in opts.threads:gmatch("%d+") do threads[#threads + 1] = math.tointeger(tonumber(th)) end

local d = engine.defaults()
local V = 65
local L, C, T = d.n_layer, d.d_model, d.context
local flop_per_token = 6 * (12 * L * C * C + V * C) + 12 * L * T * C

print(string.format("bench: default config (n_layer %d, d_model %d, context %d, batch %d), "
  .. "%d steps, %.2f MFLOP/token; paths %s", L, C, T, d.batch, steps, flop_per_token / 1e6,
  opts.paths))

-- PyTorch first, once per thread count
local torch_ok = fs.capture("/usr/bin/python3 -c 'import torch' && echo yes") == "yes"
local torch = {}
if torch_ok then
  for _, th in ipairs(threads) do
    local out = fs.capture(string.format(
      "OPENBLAS_NUM_THREADS=%d /usr/bin/python3 %s/tests/reference/gpt_ref.py bench steps=%d threads=%d",
      th, host.root, math.max(5, steps // 3), th))
    local r = out and json.decode(out:match("[^\n]*$"))
    torch[th] = r and r.tokens_per_s
  end
end

local function stop_after(n)
  return function(step) return step + 1 >= n end
end

print(string.format("%-8s %3s %9s %9s %8s %9s %7s %10s %7s %9s", "path", "thr", "peak GF/s",
  "tok/s", "GFLOP/s", "% of peak", "step ms", "eval tok/s", "eval/tr", "vs torch"))
local best = {}
for path in opts.paths:gmatch("[%w]+") do
  engine.set_isa(path)
  for _, th in ipairs(threads) do
    local peak = engine.fma_peak(th, 0.5)
    local generic = path == "generic"
    local m = engine.train({ iters = generic and 2 or steps, warmup = 1, threads = th },
      generic and { on_step = stop_after(2) } or nil)
    local gf = m.tokens_per_s * flop_per_token / 1e9
    local eval = m.eval_tokens_per_s and m.eval_tokens_per_s > 0 and m.eval_tokens_per_s
    -- the generic path's "peak" is 12 chains of library fmaf calls, not the hardware's: no %
    local pct = generic and "-" or string.format("%.1f%%", 100 * gf / peak)
    print(string.format("%-8s %3d %9.1f %9.0f %8.1f %9s %7.1f %10s %7s %9s", path, th, peak,
      m.tokens_per_s, gf, pct, d.batch * T / m.tokens_per_s * 1e3,
      eval and string.format("%.0f", eval) or "-",
      eval and string.format("%.2fx", eval / m.tokens_per_s) or "-",
      torch[th] and string.format("%.2fx", m.tokens_per_s / torch[th]) or "-"))
    if not best[path] or m.tokens_per_s > best[path] then best[path] = m.tokens_per_s end
  end
end
engine.set_isa(engine.isa().available:match("^%w+"))

local best_torch = 0
for _, th in ipairs(threads) do
  if torch[th] then
    print(string.format("%-8s %3d %9s %9.0f %8.1f", "pytorch", th, "", torch[th],
      torch[th] * flop_per_token / 1e9))
    if torch[th] > best_torch then best_torch = torch[th] end
  end
end
print(string.format("peak RSS of this process (every engine run above): %.1f MB",
  host.peak_rss_bytes() / 1e6))
-- one default training run in a fresh process (what a study's worker holds for one run),
-- read from its manifest's peak_rss_bytes
do
  local repro = os.getenv("REPRO") or (host.root .. "/bin/repro")
  local dir = fs.capture("mktemp -d")
  local ok = dir and os.execute(string.format("%s train iters=%d warmup=1 --out %s/run >/dev/null 2>&1",
    fs.quote(repro), steps, fs.quote(dir)))
  local man = ok and fs.read(dir .. "/run/manifest.json")
  local m = man and json.decode(man)
  if m and m.peak_rss_bytes then
    print(string.format("peak RSS of one default training run (%d steps, own process, %s path, "
      .. "%d threads): %.1f MB", steps, m.isa or "?", m.threads or 0, m.peak_rss_bytes / 1e6))
  else
    print("peak RSS of one default training run: not measured (the child run failed)")
  end
  if dir then os.execute("rm -rf " .. fs.quote(dir)) end
end
if not torch_ok then
  print("PyTorch comparison skipped: run scripts/deps.sh --torch to install python3-torch")
else
  for path in opts.paths:gmatch("[%w]+") do
    if best[path] and path ~= "generic" then
      print(string.format("best %s / best PyTorch over the thread counts: %.2fx", path,
        best[path] / best_torch))
    end
  end
end
