-- The group-sequential bounds for few paired differences (one calibrated constant, and alpha
-- spending on each test's exact null), and their type I error on studies simulated apart
-- from the calibration, normal and t3 (make calibrate-sequential).  Writes
-- stats/sequential_calibration.txt, the same bytes on every run (fixed seeds, one thread).
--   bin/repro script scripts/calibrate_sequential.lua [OUT [STUDIES]]  (STUDIES: a quick look)
local fs = require "repro.core.fs"
local host = require "repro.host"
local stats = require "stats"

local out_path = arg[1] or (host.root .. "/stats/sequential_calibration.txt")
local ALPHA, STUDIES, CAL_SEED = 0.05, math.tointeger(tonumber(arg[2] or "")) or 100000, 1
local SPEND_STUDIES = 1000000    -- the signed-rank null law by simulation beyond SEQ_EXACT_N
local GRIDS = { 5, 20 }          -- look k after step * k differences (20 * 5 = 100, the cap)
local LOOKS = { 2, 3, 4, 5 }
local SHAPES = { "obf", "pocock" }
local TESTS = { "z", "t", "signed_rank" }
local DISTS = { "normal", "t3" }
local FAMILIES = { 1, 4 }        -- m comparisons, each at alpha / m (Bonferroni)

local function fmt_list(xs, f)
  local parts = {}
  for i, x in ipairs(xs) do parts[i] = string.format(f, x) end
  return table.concat(parts, ",")
end

-- z: the integrated constant; t and signed rank: calibrated on STUDIES null studies.
local function constants(n)
  local t = {}
  for k, nk in ipairs(n) do t[k] = nk / n[#n] end
  local targets, found = {}, {}
  for _, m in ipairs(FAMILIES) do
    for _, shape in ipairs(SHAPES) do
      local key = "z " .. shape .. " " .. m
      local z = stats.seq_constant(t, shape, { alpha = ALPHA / m })
      found[key] = { c = z.c, bounds = z.bounds }
      for _, test in ipairs({ "t", "signed_rank" }) do
        targets[#targets + 1] = { test = test, shape = shape, alpha = ALPHA / m, m = m }
      end
    end
  end
  local plain = {}
  for i, tg in ipairs(targets) do plain[i] = { test = tg.test, shape = tg.shape, alpha = tg.alpha } end
  local cal = stats.seq_calibrate(n, plain, { studies = STUDIES, seed = CAL_SEED })
  for i, tg in ipairs(targets) do found[tg.test .. " " .. tg.shape .. " " .. tg.m] = cal[i] end
  -- alpha spending: the signed-rank bounds from the exact null law (or its simulation)
  local spend = {}
  for _, m in ipairs(FAMILIES) do
    for _, shape in ipairs(SHAPES) do spend[#spend + 1] = { shape = shape, alpha = ALPHA / m, m = m } end
  end
  local plain_spend = {}
  for i, sp in ipairs(spend) do plain_spend[i] = { shape = sp.shape, alpha = sp.alpha } end
  local designs = stats.seq_rank_spending(n, plain_spend, { studies = SPEND_STUDIES, seed = CAL_SEED })
  for i, sp in ipairs(spend) do found["spending signed_rank " .. sp.shape .. " " .. sp.m] = designs[i] end
  return found
end

-- The error a design should have: alpha for one comparison; for m independent ones, each
-- at alpha / m, 1 - (1 - alpha / m)^m (Bonferroni keeps it below alpha).
local function family_error(m)
  return 1 - (1 - ALPHA / m) ^ m
end

-- A calibrated constant's own noise, as a variance of the family's error: the calibration
-- sample sets the error at C to alpha / m, but the true error at C varies binomially around
-- it (`studies` draws), and the family's error moves m (1 - alpha / m)^(m - 1) times as much.
local function calibration_var(m, studies)
  local p = ALPHA / m
  local slope = m * (1 - p) ^ (m - 1)
  return slope ^ 2 * p * (1 - p) / studies
end

-- The rows a design's rules give: constant (one C times the shape) for z, t, signed_rank;
-- spending for signed_rank (its null law) and t (sign flips given |d|).
local function rules_of(found, m)
  local rules, meta = {}, {}
  for _, shape in ipairs(SHAPES) do
    for _, test in ipairs(TESTS) do
      local f = found[test .. " " .. shape .. " " .. m]
      rules[#rules + 1] = { test = test, shape = shape, c = f.c }
      local var = test ~= "z" and calibration_var(m, STUDIES) or 0
      meta[#meta + 1] = { method = "constant", c = f.c, bounds = f.bounds, cal = test ~= "z" and f.error,
        next = test ~= "z" and f.next_error, var = var }
    end
  end
  for _, shape in ipairs(SHAPES) do
    local sp = found["spending signed_rank " .. shape .. " " .. m]
    rules[#rules + 1] = { test = "signed_rank", shape = shape, bounds = sp.bounds, atom = sp.atom,
      gamma = sp.gamma }
    meta[#meta + 1] = { method = "spending", bounds = sp.bounds, cal = sp.spent[#sp.spent],
      next = sp.next[#sp.next], var = sp.exact and 0 or calibration_var(m, SPEND_STUDIES) }
    rules[#rules + 1] = { test = "t_flip", shape = shape, alpha = ALPHA / m }
    meta[#meta + 1] = { method = "spending", cal = math.floor(ALPHA / m * stats.SEQ_FLIPS + 1e-9) /
      stats.SEQ_FLIPS, var = 0 }
  end
  return rules, meta
end

local rows, lines = {}, {}
-- the equally spaced grids, then the looks of the committed sequential studies
local DESIGNS = {}
for _, step in ipairs(GRIDS) do
  for _, K in ipairs(LOOKS) do
    local n = {}
    for k = 1, K do n[k] = step * k end
    DESIGNS[#DESIGNS + 1] = n
  end
end
DESIGNS[#DESIGNS + 1] = { 10, 20, 40, 70, 100 } -- lua/experiments/sequential_claim.lua

for _, n in ipairs(DESIGNS) do
  do
    local found = constants(n)
    for di, dist in ipairs(DISTS) do
      for mi, m in ipairs(FAMILIES) do
        local rules, meta = rules_of(found, m)
        local seed = 2 + 2 * (di - 1) + (mi - 1)
        local sim = stats.seq_simulate(n, rules, { dist = dist, m = m, studies = STUDIES, seed = seed })
        for i, s in ipairs(sim) do
          local f = meta[i]
          local target = family_error(m)
          local se_all = math.sqrt(s.se ^ 2 + f.var)
          local z = (s.reject - target) / se_all
          rows[#rows + 1] = { n = n, shape = s.shape, test = s.test == "t_flip" and "t" or s.test,
            method = f.method, dist = dist, m = m, c = f.c, bounds = f.bounds, cal = f.cal,
            next = f.next, target = target, reject = s.reject, se = s.se, se_all = se_all, z = z,
            within = math.abs(z) <= 3 }
        end
      end
    end
  end
end

local head = {
  "# Group-sequential boundaries for few paired differences (make calibrate-sequential,",
  "# scripts/calibrate_sequential.lua; stats/sequential*.c).  Two-sided alpha " .. ALPHA .. ".  Looks every",
  "# 5 and every 20 differences, then the looks of sequential_claim (10, 20, 40, 70, 100).",
  "# method constant: c_k = C sqrt(n_K / n_k) (obf) or C (pocock); a comparison rejects at its first",
  "# look whose z-equivalent reaches c_k (t: the normal quantile of the t p-value on n_k - 1 df;",
  "# signed_rank: the standardized W+).  C: z by numerical integration (exact for normal data);",
  string.format("# t and signed_rank calibrated on %d null studies of N(0, 1) differences (seed %d), at", STUDIES, CAL_SEED),
  "# alpha / m; cal, next: that sample's error at C and at the next smaller attainable C.",
  "# method spending: alpha spent by the shape's Lan-DeMets function on the test's own null law,",
  "# exactly at every look: a randomized test, each simulated comparison drawing from PCG keyed",
  "# by the simulation's seed and its index (stats.h: stats_seq_rank_spending, stats_seq_flip_t).",
  string.format("# signed_rank: the exact law of random signs when n_K <= %d, else %d null studies", stats.SEQ_EXACT_N, SPEND_STUDIES),
  "# (seed 1); a look rejects above its boundary atom, and on it when the comparison's draw is",
  "# below the atom's share gamma; bounds: the sure bound on the standardized W+.  cal: the",
  "# per-comparison error the bounds attain, next: the error without the draw had the whole",
  "# last atom crossed.  t: the paired t by sign flips given the observed |d|",
  string.format("# (%d vectors, one the data, the others drawn per comparison; ties in |S| broken by a", stats.SEQ_FLIPS),
  "# drawn key); cal: the largest multiple of 1 / vectors within alpha / m, attained exactly; its",
  "# bounds depend on the data ('given |d|').",
  string.format("# error: the share of %d other simulated studies (differences N(0, 1), or t3 scaled", STUDIES),
  "# to variance 1) in which some of the m comparisons rejects: the type I error (m = 1) or the",
  "# family-wise error of m independent comparisons, each at alpha / m (Bonferroni).  target: the",
  "# error the design should have, alpha for m = 1 and 1 - (1 - alpha / m)^m for m > 1.  se: the",
  "# error's standard error; se_all adds a simulated boundary's own noise (binomial, on its",
  "# studies; none for z, the exact law and sign flips); z = (error - target) / se_all;",
  "# within: |z| <= 3.  All t3 rows use boundaries made for normal or symmetric nulls.",
  "#",
  "# looks            shape   test         method    dist    m  C        cal     next    target  error   se      se_all    z      within  bounds",
}
for _, line in ipairs(head) do lines[#lines + 1] = line end
local function opt(x) return x and string.format("%.5f", x) or "-" end
for _, r in ipairs(rows) do
  lines[#lines + 1] = string.format(
    "%-16s %-7s %-12s %-9s %-7s %d  %-8s %-7s %-7s %.5f %.5f %.5f %.5f %7.2f  %-6s  %s",
    fmt_list(r.n, "%d"), r.shape, r.test, r.method, r.dist, r.m, opt(r.c), opt(r.cal),
    opt(r.next), r.target, r.reject, r.se, r.se_all, r.z, r.within and "yes" or "no",
    r.bounds and fmt_list(r.bounds, "%.3f") or "given |d|")
end

-- The summary: by method and distribution, the range of the error and how many lie within
-- 3 se_all; each design outside, with why: the signed-rank test's discreteness (its
-- attainable per-comparison errors below and above alpha / m, and the error agrees with the
-- one below), or t3 data.
lines[#lines + 1] = "#"
local function why(r)
  if r.test == "signed_rank" and math.abs(r.reject - (1 - (1 - r.cal) ^ r.m)) <= 3 * r.se_all then
    return string.format("discrete: attainable per comparison %.5f or %.5f, alpha / m %.5f",
      r.cal, r.next, ALPHA / r.m)
  end
  return r.dist == "t3" and "t3 differences" or "unexplained"
end
local function summarize(label, keep, list)
  local count, within, lo, hi = 0, 0, math.huge, -math.huge
  local outside = {}
  for _, r in ipairs(rows) do
    if keep(r) then
      count = count + 1
      lo, hi = math.min(lo, r.reject), math.max(hi, r.reject)
      if r.within then within = within + 1 else
        outside[#outside + 1] = string.format("%s %s %s %s m=%d: %.5f (z %.1f; %s)",
          fmt_list(r.n, "%d"), r.shape, r.test, r.dist, r.m, r.reject, r.z, why(r))
      end
    end
  end
  lines[#lines + 1] = string.format("# %s: %d designs, error %.5f to %.5f, %d within 3 se_all of target",
    label, count, lo, hi, within)
  if list then
    for _, o in ipairs(outside) do lines[#lines + 1] = "#   outside: " .. o end
  end
end
summarize("all", function() return true end, false)
for _, method in ipairs({ "constant", "spending" }) do
  for _, test in ipairs({ "t", "signed_rank" }) do
    for _, dist in ipairs(DISTS) do
      summarize(string.format("%s %s, %s differences", method, test, dist), function(r)
        return r.method == method and r.test == test and r.dist == dist
      end, true)
    end
  end
end
summarize("constant z", function(r) return r.test == "z" end, true)
fs.write_atomic(out_path, table.concat(lines, "\n") .. "\n")
print(string.format("calibrate_sequential: %d designs written to %s", #rows, out_path))
