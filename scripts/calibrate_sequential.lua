-- The group-sequential constants for few paired differences, and their type I error on
-- studies simulated apart from the calibration (make calibrate-sequential).  Writes
-- stats/sequential_calibration.txt, the same bytes on every run (fixed seeds, one thread).
--   bin/repro script scripts/calibrate_sequential.lua [OUT]
local fs = require "repro.core.fs"
local host = require "repro.host"
local stats = require "stats"

local out_path = arg[1] or (host.root .. "/stats/sequential_calibration.txt")
local ALPHA, STUDIES, CAL_SEED = 0.05, 100000, 1
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
  return found
end

-- The error a design should have: alpha for one comparison; for m independent ones, each
-- at alpha / m, 1 - (1 - alpha / m)^m (Bonferroni keeps it below alpha).
local function family_error(m)
  return 1 - (1 - ALPHA / m) ^ m
end

-- A calibrated constant's own noise, as a variance of the family's error: the calibration
-- sample sets the error at C to alpha / m, but the true error at C varies binomially around
-- it (STUDIES draws), and the family's error moves m (1 - alpha / m)^(m - 1) times as much.
local function calibration_var(m)
  local p = ALPHA / m
  local slope = m * (1 - p) ^ (m - 1)
  return slope ^ 2 * p * (1 - p) / STUDIES
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
        local rules, keys = {}, {}
        for _, shape in ipairs(SHAPES) do
          for _, test in ipairs(TESTS) do
            local key = test .. " " .. shape .. " " .. m
            keys[#keys + 1] = key
            rules[#rules + 1] = { test = test, shape = shape, c = found[key].c }
          end
        end
        local seed = 2 + 2 * (di - 1) + (mi - 1)
        local sim = stats.seq_simulate(n, rules, { dist = dist, m = m, studies = STUDIES, seed = seed })
        for i, s in ipairs(sim) do
          local f = found[keys[i]]
          local target, se_all = family_error(m), s.se
          if s.test ~= "z" then se_all = math.sqrt(s.se ^ 2 + calibration_var(m)) end
          local z = (s.reject - target) / se_all
          rows[#rows + 1] = { n = n, shape = s.shape, test = s.test, dist = dist, m = m, c = f.c,
            bounds = f.bounds, cal = f.error, next = f.next_error, target = target,
            reject = s.reject, se = s.se, se_all = se_all, z = z, within = math.abs(z) <= 3 }
        end
      end
    end
  end
end

local head = {
  "# Group-sequential constants for few paired differences (make calibrate-sequential,",
  "# scripts/calibrate_sequential.lua; stats/sequential.c, stats/sequential_sim.c).",
  string.format("# Two-sided alpha %g.  Looks every 5 and every 20 differences, then the looks of the committed", ALPHA),
  "# sequential studies (sequential_claim: 10, 20, 40, 70, 100).  Shape obf: c_k = C sqrt(n_K / n_k),",
  "# pocock: c_k = C.  A comparison rejects at its first look whose z-equivalent reaches c_k",
  "# (t: the normal quantile of the t p-value on n_k - 1 df; signed_rank: the standardized W+).",
  "# C: z by numerical integration (exact for normal data); t and signed_rank calibrated on",
  string.format("# %d null studies of N(0, 1) differences (seed %d), at alpha / m.  bounds: c_k on the", STUDIES, CAL_SEED),
  "# test's own scale (t for t).  cal, next: the calibration sample's error at C and at the next",
  "# smaller attainable C (a wide gap is the signed-rank test's discreteness); '-' for z.",
  string.format("# error: the share of %d other simulated studies (differences N(0, 1), or t3 scaled", STUDIES),
  "# to variance 1) in which some of the m comparisons rejects: the type I error (m = 1) or the",
  "# family-wise error of m independent comparisons, each at alpha / m (Bonferroni).  target: the",
  "# error the design should have, alpha for m = 1 and 1 - (1 - alpha / m)^m for m > 1.  se: the",
  "# error's standard error; se_all adds the calibrated constant's own noise (the calibration's",
  "# binomial error, none for z); z = (error - target) / se_all; within: |z| <= 3.  The t3 rows",
  "# use the constants calibrated for normal data: they test robustness, not the calibration.",
  "#",
  "# looks            shape   test         dist    m  C        cal     next    target  error   se      se_all    z      within  bounds",
}
for _, line in ipairs(head) do lines[#lines + 1] = line end
for _, r in ipairs(rows) do
  local cal = r.test == "z" and "-" or string.format("%.5f", r.cal)
  local nxt = r.test == "z" and "-" or string.format("%.5f", r.next)
  lines[#lines + 1] = string.format(
    "%-16s %-7s %-12s %-7s %d  %.5f  %-7s %-7s %.5f %.5f %.5f %.5f %7.2f  %-6s  %s",
    fmt_list(r.n, "%d"), r.shape, r.test, r.dist, r.m, r.c, cal, nxt, r.target, r.reject, r.se,
    r.se_all, r.z, r.within and "yes" or "no", fmt_list(r.bounds, "%.3f"))
end

-- The summary: by distribution, the range of the error and how many lie within 3 se_all;
-- each design outside, with why: the signed-rank test's discreteness (the calibration could
-- not come nearer than `cal`, and the error agrees with it), or t3 data.
lines[#lines + 1] = "#"
local function why(r)
  if r.test == "signed_rank" and math.abs(r.reject - (1 - (1 - r.cal) ^ r.m)) <= 3 * r.se_all then
    return string.format("discrete: the nearest attainable level below alpha / m is %.5f", r.cal)
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
summarize("normal differences", function(r) return r.dist == "normal" end, true)
summarize("t3 differences", function(r) return r.dist == "t3" end, true)
fs.write_atomic(out_path, table.concat(lines, "\n") .. "\n")
print(string.format("calibrate_sequential: %d designs written to %s", #rows, out_path))
