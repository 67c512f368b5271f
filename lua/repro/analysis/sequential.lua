-- Sequential comparisons (analysis.sequential; the design: lua/repro/study/sequential.lua).
-- M.boundaries gives each look's boundary for the design's test and shape; M.state walks
-- each comparison's looks over the runs done and stops it at the first look where a
-- declared stop holds; M.summarize gives the summary's `sequential`; M.replay plays a
-- fixed-seed comparison through a sequential design.  The boundaries and the randomized
-- spending (a draw from PCG keyed by M.key): stats/README.md; the looks, the stops and the
-- repeated intervals: lua/experiments/README.md.
local stats = require "stats"
local fs = require "repro.core.fs"
local json = require "repro.core.json"

local M = {}

-- The calibrated constant and the boundary at each look of design spec for m comparisons
-- at level alpha (cached: the calibration simulates 100,000 studies).
local cache = {}
function M.boundaries(spec, m, alpha)
  local key = table.concat(spec.looks, ",") .. "|" .. spec.test .. "|" .. spec.shape .. "|" ..
    m .. "|" .. alpha .. "|" .. (spec.boundary or "constant")
  if cache[key] then return cache[key] end
  if spec.boundary == "spending" and spec.test == "signed_rank" then
    local r = stats.seq_rank_spending(spec.looks, { { shape = spec.shape, alpha = alpha / m } })[1]
    cache[key] = { bounds = r.bounds, z = r.bounds, atom = r.atom, gamma = r.gamma }
  elseif spec.boundary == "spending" then
    cache[key] = { flip = { shape = spec.shape, alpha = alpha / m } }
  else
    local r = stats.seq_calibrate(spec.looks, { { test = spec.test, shape = spec.shape,
      alpha = alpha / m } }, { studies = 100000, seed = 1 })[1]
    local z = stats.seq_bounds(spec.looks, { test = "z", shape = spec.shape, c = r.c })
    cache[key] = { c = r.c, bounds = r.bounds, z = z }
  end
  return cache[key]
end

-- The key of the comparison of treatment against baseline in study `study`: its random
-- draws (stats.seq_draw, stats.seq_flip_t) come from PCG streams of this key.  60 bits of
-- the SHA-256 of the three names.
function M.key(study, treatment, baseline)
  return math.tointeger(tonumber(fs.sha256_text(study .. "\0" .. treatment .. "\0" ..
    baseline):sub(1, 15), 16))
end

-- The sign-flip t at look k of pairs d whose looks so far had counts[1..k] pairs: the bound,
-- its z-equivalent and whether the data cross, or nil when the counts do not increase
-- from 2.  Later looks keep the design's steps (t_j = n_j / n_K for the spending).
local function flip_look(d, k, spec, counts, flip, key)
  local n = {}
  for j, nj in ipairs(spec.looks) do
    n[j] = j <= k and counts[j] or counts[k] + nj - spec.looks[k]
    if n[j] < 2 or (j > 1 and n[j] <= n[j - 1]) then return nil end
  end
  local r = stats.seq_flip_t(d, n, { shape = flip.shape, alpha = flip.alpha, key = key })
  return r.bounds[k], r.z[k], r.reject_at == k
end

-- The standardized W+ of differences d (average ranks of |d|; zeros dropped).
local function signed_rank_z(d)
  local nz = {}
  for _, x in ipairs(d) do if x ~= 0 then nz[#nz + 1] = x end end
  local n = #nz
  if n == 0 then return 0 end
  local order = {}
  for i = 1, n do order[i] = i end
  table.sort(order, function(a, b) return math.abs(nz[a]) < math.abs(nz[b]) end)
  local rank, i = {}, 1
  while i <= n do
    local j = i
    while j < n and math.abs(nz[order[j + 1]]) == math.abs(nz[order[i]]) do j = j + 1 end
    for k = i, j do rank[order[k]] = (i + j) / 2 end
    i = j + 1
  end
  local w = 0
  for k = 1, n do if nz[k] > 0 then w = w + rank[k] end end
  local mu = n * (n + 1) / 4
  local sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
  return (w - mu) / sd
end

-- One look: the estimate, the repeated interval and the statistic of pairs (a, b) (the
-- baseline's and the treatment's values), with bound c (the test's scale) and cz (z), or
-- for the sign-flip t (bd.flip) the bound of look k given counts (flip_look); key: the
-- comparison's (M.key).
local function look_of(spec, a, b, c, cz, bd, k, counts, key)
  local n = #a
  local d = {}
  for i = 1, n do d[i] = b[i] - a[i] end
  local crosses
  if bd.flip then c, cz, crosses = flip_look(d, k, spec, counts, bd.flip, key) end
  local out = { pairs = n, bound = c, crosses = crosses }
  if n < 2 or not c then return out end
  local level_alpha = 2 * stats.normal_q(cz) -- normal_q: the upper tail
  if spec.test == "signed_rank" then
    local r = stats.robust(a, b, { alpha = level_alpha })
    out.estimate, out.statistic = r.hl, signed_rank_z(d)
    out.ci = r.ci and json.array({ r.ci[1], r.ci[2] }) or nil
    -- on the boundary atom the comparison's draw decides, with the atom's share gamma
    local z = math.abs(out.statistic)
    if bd.gamma and z < c and z >= bd.atom[k] and bd.gamma[k] > 0 then
      out.draw, out.gamma = stats.seq_draw(key, k), bd.gamma[k]
      out.crosses = out.draw < out.gamma
    end
  else
    local sm = stats.summary(d)
    out.estimate = sm.mean
    if sm.sd and sm.sd > 0 then
      local se = sm.sd / math.sqrt(n)
      out.statistic = sm.mean / se
      out.ci = json.array({ sm.mean - c * se, sm.mean + c * se })
    end
  end
  out.level = 1 - level_alpha
  return out
end

-- The decision at a look (a stop code, or nil to go on), with the design's stops.
local function decide(spec, lk, better)
  local ci = lk.ci
  local crossed = lk.crosses
  if crossed == nil then crossed = lk.statistic and lk.bound and math.abs(lk.statistic) >= lk.bound end
  if spec.stops.difference and crossed then
    local lower = lk.statistic < 0
    return "difference", (lower == (better == "lower")) and "better" or "worse"
  end
  if not ci then return nil end
  if spec.stops.equivalence and ci[1] > -spec.margin and ci[2] < spec.margin then
    return "equivalence", "equivalent"
  end
  if spec.stops.futility and (ci[1] > spec.target or ci[2] < spec.target) then
    return "futility", "inconclusive"
  end
  return nil
end

-- The values of variant v's first n seeds of `seeds` on metric m: a list, nil for a seed
-- without a finite value, and whether every one of the n runs is done.
local function values_of(runs, v, seeds, n, m)
  local out, done = {}, true
  for i = 1, n do
    local r = runs[v] and runs[v][seeds[i]]
    if not r then done = false else out[i] = not r.diverged and r.values[m] or false end
  end
  return out, done
end

-- Design spec (an analysis.sequential) with the set of its stops, as M.look reads it.
function M.design(spec)
  local d = setmetatable({ stops = {} }, { __index = spec })
  for _, x in ipairs(spec.stop) do d.stops[x] = true end
  return d
end

-- Look k of a comparison under design d (M.design) with boundaries bd (M.boundaries): its
-- pairs a (the baseline's values) and b (the treatment's); counts[j] the pairs at look j;
-- key the comparison's (M.key; a spending design draws from it).  Returns the look's entry
-- (pairs, estimate, repeated interval, statistic, bound, level, decision: a stop code or
-- "continue") and, when it stops, the verdict; at the last look it stops anyway (the cap).
function M.look(d, k, a, b, bd, better, counts, key)
  local lk = look_of(d, a, b, bd.bounds and bd.bounds[k], bd.z and bd.z[k], bd, k, counts, key)
  lk.look, lk.n = k, d.looks[k]
  local code, verdict = decide(d, lk, better)
  if not code and k == #d.looks then code, verdict = "cap", "inconclusive" end
  lk.decision = code or "continue"
  return lk, verdict
end

-- The state of every comparison of study s with the runs done (runs[variant][seed], absent
-- when not done): per comparison its looks so far, its decision (nil while open) and the
-- seeds it needs next.  A look counts once all its runs are done.
function M.state(s, runs)
  local an = s.analysis
  local spec = M.design(an.sequential)
  local b = M.boundaries(an.sequential, #an.comparisons, an.alpha)
  local out = {}
  for _, pair in ipairs(an.comparisons) do
    local tv, bv = pair[1], pair[2]
    local e = { treatment = tv, baseline = bv, metric = an.primary, looks = json.array({}) }
    local counts, key = {}, M.key(s.name, tv, bv)
    for k, n in ipairs(an.sequential.looks) do
      local ta, tdone = values_of(runs, tv, s.seeds, n, an.primary)
      local ba, bdone = values_of(runs, bv, s.seeds, n, an.primary)
      if not (tdone and bdone) then e.next = n break end
      local a, bb = {}, {}
      for i = 1, n do
        if ta[i] and ba[i] then a[#a + 1], bb[#bb + 1] = ba[i], ta[i] end
      end
      counts[k] = #a
      local lk, verdict = M.look(spec, k, a, bb, b, an.better, counts, key)
      e.looks[#e.looks + 1] = lk
      if lk.decision ~= "continue" then
        e.stopped_at, e.n, e.decision, e.verdict = k, n, lk.decision, verdict
        e.estimate, e.ci = lk.estimate, lk.ci
        if spec.target and lk.ci then
          e.target_in_ci = lk.ci[1] <= spec.target and spec.target <= lk.ci[2]
        end
        break
      end
    end
    out[#out + 1] = e
  end
  return out, b
end

-- A comparison that ran with a fixed number of seeds, replayed as if design spec (an
-- analysis.sequential) had been declared for it: its pairs a (the baseline's values) and
-- b (the treatment's) in seed order, the first looks[k] of them at look k, one of m
-- comparisons at level alpha; key: the comparison's (M.key), which a spending design needs.
-- Returns its looks up to the stop, and the verdict there.
function M.replay(spec, a, b, m, alpha, better, key)
  local d, bd = M.design(spec), M.boundaries(spec, m, alpha)
  local looks, counts = {}, {}
  for k, n in ipairs(spec.looks) do
    counts[k] = math.min(n, #a)
    local lk, verdict = M.look(d, k, { table.unpack(a, 1, n) }, { table.unpack(b, 1, n) }, bd,
      better, counts, key)
    looks[k] = lk
    if verdict then return looks, verdict end
  end
end

-- The seeds each variant needs for the comparisons still open, by variant (nil when every
-- comparison is decided).
function M.needed(state)
  local need, open = {}, false
  for _, e in ipairs(state) do
    if not e.decision and e.next then
      open = true
      for _, v in ipairs({ e.treatment, e.baseline }) do
        need[v] = math.max(need[v] or 0, e.next)
      end
    end
  end
  return open and need or nil
end

-- What the design of study s costs, expected, under no effect and under the minimum
-- effect (the planning sd; the normal approximation of the boundaries;
-- difference stops only, so equivalence can only stop it sooner): a list of {effect,
-- expected seeds per variant, runs, the chance of a difference}, and the fixed design's
-- runs (the cap).
function M.expected(s)
  local an, spec = s.analysis, s.analysis.sequential
  local b = M.boundaries(spec, #an.comparisons, an.alpha)
  local nK = spec.looks[#spec.looks]
  local t, variants, nv = {}, {}, 0
  for i, n in ipairs(spec.looks) do t[i] = n / nK end
  for _, c in ipairs(an.comparisons) do
    for _, v in ipairs(c) do
      if not variants[v] then variants[v], nv = true, nv + 1 end
    end
  end
  -- the sign-flip t's bounds depend on the data: the z bounds of the same spending instead
  local z = b.z or stats.seq_spending(t, { alpha = b.flip.alpha, spending = b.flip.shape }).bounds
  local out = {}
  for _, effect in ipairs({ 0, an.min_effect }) do
    local r = stats.seq_crossing(t, z, { drift = effect * math.sqrt(nK) / spec.sd })
    local n = r.expected_t * nK
    out[#out + 1] = { effect = effect, seeds = n, runs = n * nv, reject = r.reject }
  end
  return out, nK * #s.variants
end

-- summary.sequential for study s with its runs: the design, each comparison's path and
-- decision, and the runs used against the fixed design's.  runs_done: the count of runs
-- with a record.
function M.summarize(s, runs, runs_done)
  local an = s.analysis
  local state, b = M.state(s, runs)
  local used = {}
  for _, e in ipairs(state) do
    local n = e.n or 0
    for _, v in ipairs({ e.treatment, e.baseline }) do used[v] = math.max(used[v] or 0, n) end
  end
  local n_used = 0
  for _, n in pairs(used) do n_used = n_used + n end
  local spec = an.sequential
  return {
    design = { looks = json.array(spec.looks), shape = spec.shape, test = spec.test,
      stop = json.array(spec.stop), margin = spec.margin, target = spec.target, sd = spec.sd,
      sd_source = spec.sd_source, alpha = an.alpha, m = #an.comparisons, c = b.c,
      bounds = json.array(b.bounds), z_bounds = json.array(b.z),
      -- only when not the default, so a summary from before the key keeps its bytes
      boundary = spec.boundary ~= "constant" and spec.boundary or nil },
    comparisons = json.array(state),
    runs_used = n_used, runs_done = runs_done,
    runs_fixed = spec.looks[#spec.looks] * #s.variants,
  }
end

return M
