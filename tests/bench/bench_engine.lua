-- make bench: the default config trained for a fixed number of steps by the engine and,
-- when Debian's python3-torch is installed, by the PyTorch reference
-- (tests/reference/gpt_ref.py) in the same run, at the same thread counts (OpenBLAS is
-- pinned to that count too: left alone it uses every core whatever torch is told).
--   bin/repro tests/bench/bench_engine.lua [steps=30] [threads=1,2]
--
-- FLOPs: the matrix products the engine performs per trained token,
--   6·(12·L·C² + V·C)   linear layers and the tied logits (forward 2, backward 4)
--   + 12·L·T·C          attention scores and weighted values, full T×T (the engine
--                        computes the masked upper triangle too), forward and backward
-- = 11.06 MFLOP per token for the default config; elementwise work is not counted.
local engine = require "engine"
local host = require "repro.host"
local json = require "repro.json"
local fs = require "repro.fs"

local opts = { steps = 30, threads = "1,2" }
for _, a in ipairs(arg) do
  local k, v = a:match("^(%w+)=(.+)$")
  if not k or not opts[k] then error({ message = "bench: unknown argument " .. a }) end
  opts[k] = v
end
local steps = math.tointeger(tonumber(opts.steps))

local d = engine.defaults()
local V = 65
local L, C, T = d.n_layer, d.d_model, d.context
local flop_per_token = 6 * (12 * L * C * C + V * C) + 12 * L * T * C

local torch_ok = fs.capture("/usr/bin/python3 -c 'import torch' && echo yes") == "yes"
print(string.format("bench: default config (n_layer %d, d_model %d, context %d, batch %d), %d steps, %.2f MFLOP/token",
  L, C, T, d.batch, steps, flop_per_token / 1e6))
print(string.format("%-8s %-7s %12s %10s %10s %12s", "engine", "threads", "tokens/s", "GFLOP/s",
  "step ms", "vs torch"))
local results = {}
for th in opts.threads:gmatch("%d+") do
  th = math.tointeger(tonumber(th))
  local m = engine.train({ iters = steps, warmup = 3, threads = th })
  local torch
  if torch_ok then
    local out = fs.capture(string.format(
      "OPENBLAS_NUM_THREADS=%d /usr/bin/python3 %s/tests/reference/gpt_ref.py bench steps=%d threads=%d",
      th, host.root, math.max(5, steps // 3), th))
    torch = out and json.decode(out:match("[^\n]*$"))
  end
  local ratio = torch and m.tokens_per_s / torch.tokens_per_s
  print(string.format("%-8s %-7d %12.0f %10.1f %10.1f %12s", "repro", th, m.tokens_per_s,
    m.tokens_per_s * flop_per_token / 1e9, d.batch * T / m.tokens_per_s * 1e3,
    ratio and string.format("%.2fx", ratio) or "-"))
  if torch then
    print(string.format("%-8s %-7d %12.0f %10.1f %10.1f %12s", "pytorch", th, torch.tokens_per_s,
      torch.tokens_per_s * flop_per_token / 1e9, torch.step_s * 1e3, ""))
  end
  results[#results + 1] = { threads = th, tokens_per_s = m.tokens_per_s,
    torch = torch and torch.tokens_per_s }
end
print(string.format("peak RSS of this process (engine runs only): %.1f MB",
  host.peak_rss_bytes() / 1e6))
if not torch_ok then
  print("PyTorch comparison skipped: run scripts/deps.sh --torch to install python3-torch")
else
  local best_t, best_r = 0, 0
  for _, r in ipairs(results) do
    if r.torch and r.torch > best_t then best_t = r.torch end
    if r.tokens_per_s > best_r then best_r = r.tokens_per_s end
  end
  print(string.format("best engine / best PyTorch over the thread counts: %.2fx", best_r / best_t))
end
