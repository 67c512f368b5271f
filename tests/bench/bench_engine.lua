-- make bench: the engine's speed on this machine against this machine's own FMA peak and
-- against PyTorch, all measured in the same run (compare ratios, not times across runs:
-- the machine is shared).
--   bin/repro script tests/bench/bench_engine.lua [steps=30] [threads=1,2] [paths=avx512,avx2,generic]
--
-- For every CPU path this CPU has (engine/isa.h):
--   peak     GFLOP/s of 12 independent FMA chains on the path's widest registers, per
--            thread count (engine.fma_peak);
--   train    the default config trained for `steps` steps: tokens/s, GFLOP/s and % of that
--            path's peak at that thread count, over the steps after the first (the first
--            step touches every buffer for the first time: page faults, which a run of
--            hundreds of steps pays once; PyTorch's bench likewise skips 3 warm-up steps);
--            "w/ 1st" is the rate with the first step included (the engine's own
--            tokens_per_s);
--   eval     the forward-only evaluation of the whole validation split at the end of the
--            same run: tokens/s and its ratio to training.
--   rss      peak resident memory of this process (all the runs above, with every path's
--            buffers) and of one default training run in its own process (bin/repro train,
--            from its manifest), which is what a study's worker holds.
--   sweep    the same training at other sizes (LxC: n_layer x d_model, 8 heads, context 128,
--            batch 16; `sweep=` lists them, `sweep=none` skips): tokens/s, GFLOP/s and %
--            of peak per size and thread count on the best path, PyTorch at the same size
--            and thread count beside it. Each size trains the steps that make about
--            `sweep_gflop` GFLOP (at least 5), stopped before the final evaluation, and is
--            timed over the steps after the first, like the default config.
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

local opts = { steps = "30", threads = "1,2", paths = engine.isa().available:gsub(" ", ","),
  sweep = "4x64,8x64,4x128,8x128,4x256,8x256,8x384", sweep_gflop = "300" }
for _, a in ipairs(arg) do
  local k, v = a:match("^([%w_]+)=(.+)$")
  if not k or not opts[k] then error({ message = "bench: unknown argument " .. a }) end
  opts[k] = v
end
local steps = math.tointeger(tonumber(opts.steps))
local threads = {}
for th in opts.threads:gmatch("%d+") do threads[#threads + 1] = math.tointeger(tonumber(th)) end

local d = engine.defaults()
local V = 65
local L, C, T = d.n_layer, d.d_model, d.context
-- the model FLOPs per trained token of an L x C model at context T (see the header)
local function flops(l, c, t) return 6 * (12 * l * c * c + V * c) + 12 * l * t * c end
local flop_per_token = flops(L, C, T)

-- The CPU: vendor family and model from /proc/cpuinfo, and for AMD EPYC the core generation
-- they name (family 25 covers two: Zen 3 without AVX-512, Zen 4 with it).
local function cpu_line()
  local f = io.open("/proc/cpuinfo", "r")
  if not f then return "cpu: unknown (no /proc/cpuinfo)" end
  local info = {}
  for line in f:lines() do
    local k, v = line:match("^([^\t:]+)%s*:%s*(.*)$")
    if k and info[k] == nil then info[k] = v end
    if line == "" and next(info) then break end
  end
  f:close()
  local fam, model = tonumber(info["cpu family"] or ""), tonumber(info["model"] or "")
  local avx512 = (" " .. (info.flags or "") .. " "):find(" avx512f ") ~= nil
  local gen = "?"
  if (info.vendor_id or "") == "AuthenticAMD" and fam then
    if fam == 26 then gen = "Zen 5"
    elseif fam == 25 then gen = avx512 and "Zen 4" or "Zen 3"
    elseif fam == 23 then gen = "Zen 1/2" end
  end
  return string.format("cpu: %s, family %s model %s (%s), AVX-512 %s", info["model name"] or "?",
    tostring(fam), tostring(model), gen, avx512 and "yes" or "no")
end
print(cpu_line())
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

-- The FMA peak at th threads: the best of three half-second measurements (a peak is a
-- maximum, and on a shared machine one measurement can lose a core for its duration).
local function fma_peak(th)
  local best = 0
  for _ = 1, 3 do best = math.max(best, engine.fma_peak(th, 0.5)) end
  return best
end

local now = dofile("tests/bench/clock.lua")

-- on_step hooks that time the steps after the first and stop after n steps (nil: run to
-- the end, `total` steps); steady(tokens) is then tokens/s over them
local function timer(n, total)
  local t = {}
  local last_step = (n or total) - 1
  t.hook = function(step)
    if step == 0 then t.first = now() end
    if step >= last_step then t.last, t.steps = now(), step end
    return n ~= nil and step + 1 >= n
  end
  t.steady = function(tokens_per_step)
    if not t.first or t.steps < 1 or t.last <= t.first then return nil end
    return t.steps * tokens_per_step / (t.last - t.first)
  end
  return t
end

print(string.format("%-8s %3s %9s %9s %8s %9s %7s %9s %10s %7s %9s", "path", "thr", "peak GF/s",
  "tok/s", "GFLOP/s", "% of peak", "step ms", "w/ 1st", "eval tok/s", "eval/tr", "vs torch"))
local best, peaks = {}, {}
for path in opts.paths:gmatch("[%w]+") do
  engine.set_isa(path)
  for _, th in ipairs(threads) do
    local peak = fma_peak(th)
    peaks[path .. th] = peak
    local generic = path == "generic"
    local tm = timer(generic and 2 or nil, steps)
    local m = engine.train({ iters = generic and 2 or steps, warmup = 1, threads = th },
      { on_step = tm.hook })
    local tps = tm.steady(d.batch * T) or m.tokens_per_s
    local gf = tps * flop_per_token / 1e9
    local eval = m.eval_tokens_per_s and m.eval_tokens_per_s > 0 and m.eval_tokens_per_s
    -- the generic path's "peak" is 12 chains of library fmaf calls, not the hardware's: no %
    local pct = generic and "-" or string.format("%.1f%%", 100 * gf / peak)
    print(string.format("%-8s %3d %9.1f %9.0f %8.1f %9s %7.1f %9.0f %10s %7s %9s", path, th, peak,
      tps, gf, pct, d.batch * T / tps * 1e3, m.tokens_per_s,
      eval and string.format("%.0f", eval) or "-",
      eval and string.format("%.2fx", eval / tps) or "-",
      torch[th] and string.format("%.2fx", tps / torch[th]) or "-"))
    if not best[path] or tps > best[path] then best[path] = tps end
  end
end
engine.set_isa(engine.isa().available:match("^%w+"))

-- the size sweep, on the best path
if opts.sweep ~= "none" then
  local path = engine.isa().available:match("^%w+")
  local budget = tonumber(opts.sweep_gflop) * 1e9
  print(string.format("size sweep (%s path; 8 heads, context %d, batch %d; PyTorch at the same "
    .. "size and thread count):", path, T, d.batch))
  print(string.format("%-7s %7s %8s %3s %6s %9s %8s %9s %10s %9s", "L x C", "params",
    "MFLOP/tk", "thr", "steps", "tok/s", "GFLOP/s", "% of peak", "torch tok/s", "vs torch"))
  for spec in opts.sweep:gmatch("[^,]+") do
    local l, c = spec:match("^(%d+)x(%d+)$")
    l, c = math.tointeger(tonumber(l)), math.tointeger(tonumber(c))
    if not l or not c or c % 8 ~= 0 then
      error({ message = "bench: sweep entry " .. spec .. ": expected LxC with C a multiple of 8" })
    end
    local f = flops(l, c, T)
    local n = math.max(5, math.ceil(budget / (f * d.batch * T)))
    local params = engine.param_count({ n_layer = l, d_model = c, n_head = 8 })
    for _, th in ipairs(threads) do
      local tm = timer(n)
      local m = engine.train({ n_layer = l, d_model = c, n_head = 8, iters = n + 1000,
        warmup = 1, threads = th }, { on_step = tm.hook })
      local tps = tm.steady(d.batch * T) or m.tokens_per_s
      local gf = tps * f / 1e9
      local t_tok
      if torch_ok then
        local out = fs.capture(string.format("OPENBLAS_NUM_THREADS=%d /usr/bin/python3 %s/tests/"
          .. "reference/gpt_ref.py bench steps=%d threads=%d n_layer=%d d_model=%d n_head=8",
          th, host.root, math.max(3, n // 3), th, l, c))
        local r = out and json.decode(out:match("[^\n]*$"))
        t_tok = r and r.tokens_per_s
      end
      print(string.format("%-7s %6.2fM %8.2f %3d %6d %9.0f %8.1f %8.1f%% %10s %9s", spec,
        params / 1e6, f / 1e6, th, n, tps, gf, 100 * gf / (peaks[path .. th] or fma_peak(th)),
        t_tok and string.format("%.0f", t_tok) or "-",
        t_tok and string.format("%.2fx", tps / t_tok) or "-"))
    end
  end
end

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
