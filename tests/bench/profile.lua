-- make bench's step profile (what limits the engine, measured): the default
-- config (or one given size) trained `steps` steps per thread count, the time of each kind
-- of work (engine/prof.h: engine.profile) over the steps after the first, beside the
-- machine's FMA peak measured in the same run.
--   bin/repro script tests/bench/profile.lua [steps=30] [threads=1,2] [size=8x128]
--                                          [gemm=build/bench/bench_gemm]
-- Per kind: ms per step, share of the step, and for the matrix products their FLOPs per
-- step, GFLOP/s and % of the peak at that thread count:
--   linear_fwd  2·B·T·(12·L·C² + V·C)    (qkv, proj, fc, fc2 and the logits: the sum of
--                                         the engine's per-site kinds, *_fwd)
--   linear_bwd  twice that               (input and weight gradients, *_bwd)
--   attn_fwd    per head 2 products (scores, weighted values) of 2·hs FLOPs per computed
--               entry; the engine computes, per block of AB query rows, the keys up to
--               the block's end (AB = 16 on avx512 and generic, 18 on avx2): Σ rows·end
--   attn_bwd    4 products (dP, dQ over the same entries; dV, dK over keys from the
--               block's start to T: Σ rows·(T - start))
-- "rest" is the step's time outside the profiled calls (gradient norms, dropout masks,
-- the diagnostics of the loop).  Then what the profile bounds: the % of peak the step
-- would reach with every kind but the linear layers free, and with attention at the
-- linear layers' rate.  With gemm= (make bench-profile gives it), the same linear shapes
-- alone (tests/bench/bench_gemm.c, at each thread count, just before the training) beside
-- the linear layers inside the step, both as % of their own peak, and per site (qkv,
-- proj, fc, fc2; forward and backward) where the difference is: the site's time in the
-- step against its products alone plus the elementwise work it fuses alone (GELU, the
-- bias sums), the rest being what the step adds (operands from memory, not cache), and
-- the step these and attention would give at their alone times.  At
-- the end the step and the norms at each thread count, and the norms' speed-up, beside
-- the same speed-up of the norms alone, in cache and from memory (bench_gemm's norm lines:
-- a pass bound by memory scales with threads only as far as the machine's bandwidth does).
-- A benchmark: it prints, it asserts nothing.
local engine = require "engine"
local fs = require "repro.core.fs"

local opts = { steps = "30", threads = "1,2", size = "8x128", gemm = "" }
for _, a in ipairs(arg) do
  local k, v = a:match("^([%w_]+)=(.+)$")
  if not k or not opts[k] then error({ message = "profile: unknown argument " .. a }) end
  opts[k] = v
end
local steps = math.tointeger(tonumber(opts.steps))
local L, C = opts.size:match("^(%d+)x(%d+)$")
L, C = math.tointeger(tonumber(L)), math.tointeger(tonumber(C))
assert(steps and steps >= 3 and L and C, "profile: steps >= 3 and size=LxC")
local now = dofile("tests/bench/clock.lua")
local d = engine.defaults()
local B, T, H, V = d.batch, d.context, d.n_head, 65
local hs = C // H
local path = engine.isa().name

local function block_sums(ab)
  local fwd, back = 0, 0
  for r0 = 0, T - 1, ab do
    local r1 = math.min(r0 + ab, T)
    fwd = fwd + (r1 - r0) * r1
    back = back + (r1 - r0) * (T - r0)
  end
  return fwd, back
end
local ab = path == "avx2" and 18 or 16
local sf, sb = block_sums(ab)
local heads = B * H * L
local flops = {
  linear_fwd = 2 * B * T * (12 * L * C * C + V * C),
  attn_fwd = heads * 2 * (2 * hs * sf),
  attn_bwd = heads * (2 * (2 * hs * sf) + 2 * (2 * hs * sb)),
}
flops.linear_bwd = 2 * flops.linear_fwd
local KINDS = { "linear_fwd", "linear_bwd", "attn_fwd", "attn_bwd", "norm", "xent", "embed",
  "optim" }
local SITES = { "qkv", "proj", "fc", "fc2", "logits" }

local function fma_peak(th)
  local best = 0
  for _ = 1, 3 do best = math.max(best, engine.fma_peak(th, 0.5)) end
  return best
end

-- bench_gemm at th threads: { pct = its "all linear" % of its own peak, ms = { [line] =
-- milliseconds per call } for each shape, GELU and bias-sum line }, or nil
local function alone(th)
  if opts.gemm == "" or C % 128 ~= 0 then return nil end
  local out = fs.capture(string.format("%s threads=%d C=%d", fs.quote(opts.gemm), th, C))
  local pct = out and out:match("all linear%s+[%d.]+ GFLOP/s%s+([%d.]+) %%")
  if not pct then error({ message = "profile: no 'all linear' line from " .. opts.gemm }) end
  local ms = {}
  for name, m, n, k, gf in out:gmatch("\n  (%a+%d? %a+)%s+M%s+(%d+) N%s+(%d+) K%s+(%d+)%s+([%d.]+) GFLOP/s") do
    ms[name] = 2 * m * n * k / (tonumber(gf) * 1e9) * 1e3
  end
  for name, us in out:gmatch("\n  (%a+ [%a ]-)%s+M%s+%d+ [NC]%s+%d+%s+([%d.]+) us per call") do
    ms[name] = tonumber(us) / 1e3
  end
  for name, layer in out:gmatch("\n  (attn %a+)%s[^\n]*%(([%d.]+) ms per layer%)") do
    ms[name] = tonumber(layer)
  end
  return { pct = tonumber(pct), ms = ms }
end

-- bench_gemm's time for line k, ms
local function line_ms(ms, k)
  return ms[k] or error({ message = "profile: no '" .. k .. "' line from bench_gemm" })
end

-- A site's products and fused elementwise work alone, ms per step (bench_gemm's lines; L
-- layers; the logits' backward shapes are not among them)
local function site_alone(ms, site, dir)
  local function get(k) return line_ms(ms, k) end
  if site == "logits" then return dir == "fwd" and get("logits fwd") or nil end
  if dir == "fwd" then
    return L * (get(site .. " fwd") + (site == "fc" and get("gelu fwd") or 0))
  end
  local cols = ({ qkv = 3, proj = 1, fc = 4, fc2 = 1 })[site]
  return L * (get(site .. " dX") + get(site .. " dW") + cols * get("bias sums") +
    (site == "fc2" and get("gelu bwd") or 0))
end

local summary = {}
print(string.format("profile: %d x %d (L x C), %d heads of %d, context %d, batch %d, path %s, " ..
  "%d steps (the first not timed)", L, C, H, hs, T, B, path, steps))
for th in opts.threads:gmatch("%d+") do
  th = math.tointeger(tonumber(th))
  local gemm = alone(th)
  local peak = fma_peak(th)
  local t0, t1, prof
  engine.train({ n_layer = L, d_model = C, n_head = H, iters = steps + 1000, warmup = 1,
    threads = th }, { on_step = function(step)
      if step == 0 then
        engine.profile(true)
        t0 = now()
      elseif step == steps - 1 then
        t1 = now()
        prof = engine.profile(false)
      end
      return step + 1 >= steps
    end })
  for _, dir in ipairs({ "fwd", "bwd" }) do
    local sum = 0
    for _, site in ipairs(SITES) do sum = sum + prof[site .. "_" .. dir] end
    prof["linear_" .. dir] = sum
  end
  local n = steps - 1
  local step_s = (t1 - t0) / n
  print(string.format("\n%d thread%s: %.2f ms per step, peak %.1f GFLOP/s", th,
    th == 1 and "" or "s", 1e3 * step_s, peak))
  print(string.format("  %-11s %9s %7s %9s %9s %9s", "kind", "ms/step", "share", "GFLOP", "GFLOP/s",
    "% peak"))
  local sum = 0
  for _, k in ipairs(KINDS) do
    local s = prof[k] / n
    sum = sum + s
    local f = flops[k]
    print(string.format("  %-11s %9.3f %6.1f%% %9s %9s %9s", k, 1e3 * s, 100 * s / step_s,
      f and string.format("%.3f", f / 1e9) or "", f and string.format("%.1f", f / s / 1e9) or "",
      f and string.format("%.1f", 100 * f / s / 1e9 / peak) or ""))
  end
  print(string.format("  %-11s %9.3f %6.1f%%", "rest", 1e3 * (step_s - sum),
    100 * (step_s - sum) / step_s))
  local lin_s = (prof.linear_fwd + prof.linear_bwd) / n
  local lin_f = flops.linear_fwd + flops.linear_bwd
  local all_f = lin_f + flops.attn_fwd + flops.attn_bwd
  local att_s = (prof.attn_fwd + prof.attn_bwd) / n
  local lin_pct = 100 * lin_f / lin_s / 1e9 / peak
  print(string.format("  linear (fwd + bwd): %.1f GFLOP/s, %.1f %% of peak", lin_f / lin_s / 1e9,
    lin_pct))
  if gemm then
    print(string.format("  the same shapes alone (bench_gemm, all linear): %.1f %% of its peak; " ..
      "inside the step %.1f %% below that", gemm.pct, 100 * (1 - lin_pct / gemm.pct)))
    print(string.format("  %-11s %9s %9s %9s   (alone: the products, GELU and bias sums " ..
      "by themselves)", "site", "ms/step", "alone", "step adds"))
    local in_step, by_itself = 0, 0
    for _, dir in ipairs({ "fwd", "bwd" }) do
      for _, site in ipairs(SITES) do
        local s, a = 1e3 * prof[site .. "_" .. dir] / n, site_alone(gemm.ms, site, dir)
        print(string.format("  %-11s %9.3f %9s %9s", site .. "_" .. dir, s,
          a and string.format("%.3f", a) or "-",
          a and string.format("%+.1f %%", 100 * (s - a) / a) or "-"))
        if a then in_step, by_itself = in_step + s, by_itself + a end
      end
    end
    print(string.format("  %-11s %9.3f %9.3f %+8.1f %%   (the sites timed alone; the step " ..
      "at their alone times: %.2f ms)", "sum", in_step, by_itself,
      100 * (in_step - by_itself) / by_itself, 1e3 * step_s - in_step + by_itself))
    local att_in, att_alone = 1e3 * att_s, L * (line_ms(gemm.ms, "attn fwd") +
      line_ms(gemm.ms, "attn bwd"))
    print(string.format("  %-11s %9.3f %9.3f %+8.1f %%   (and attention at its alone time " ..
      "too: %.2f ms)", "attention", att_in, att_alone, 100 * (att_in - att_alone) / att_alone,
      1e3 * step_s - in_step + by_itself - att_in + att_alone))
  end
  summary[#summary + 1] = { th = th, step_ms = 1e3 * step_s, norm_ms = 1e3 * prof.norm / n,
    alone = gemm and { line_ms(gemm.ms, "norm fwd") + line_ms(gemm.ms, "norm bwd"),
      line_ms(gemm.ms, "norm fwd m") + line_ms(gemm.ms, "norm bwd m") } }
  print(string.format("  the step: %.1f GFLOP/s, %.1f %% of peak (products only)",
    all_f / step_s / 1e9, 100 * all_f / step_s / 1e9 / peak))
  print(string.format("  bound, linear layers alone at their rate: %.1f %% of peak; with " ..
    "attention at the linear layers' rate (%.2f instead of %.2f ms) and the rest as measured: " ..
    "%.1f %%", lin_pct, 1e3 * (flops.attn_fwd + flops.attn_bwd) /
    (lin_f / lin_s), 1e3 * att_s, 100 * all_f / (step_s - att_s + (flops.attn_fwd +
    flops.attn_bwd) / (lin_f / lin_s)) / 1e9 / peak))
end

print("")
for _, r in ipairs(summary) do
  print(string.format("%d thread%s: step %.2f ms, norms %.3f ms", r.th, r.th == 1 and "" or "s",
    r.step_ms, r.norm_ms))
end
if #summary >= 2 then
  print(string.format("norms, speed-up from %d to %d threads: %.2fx", summary[1].th, summary[2].th,
    summary[1].norm_ms / summary[2].norm_ms))
  local a1, a2 = summary[1].alone, summary[2].alone
  if a1 and a2 then
    print(string.format("norms alone (bench_gemm: a residual add + LayerNorm and a LayerNorm " ..
      "backward), the same speed-up: %.2fx with their operands in cache, %.2fx from memory",
      a1[1] / a2[1], a1[2] / a2[2]))
  end
end
