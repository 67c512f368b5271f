-- The group-sequential boundaries through the `stats` binding (stats.seq_*): the published
-- z constants of tests/vectors/sequential.json (read, not typed in), spending, crossing
-- chances, a small calibration whose error is checked on other simulated studies, the
-- result fields by name, and bad arguments raising errors that name the argument.
local check = require "check"
local cjson = require "cjson"
local stats = require "stats"
local t = check.new("test_sequential_lua")

local f = assert(io.open("tests/vectors/sequential.json", "r"))
local ref = cjson.decode(f:read("a"))
f:close()

for i, K in ipairs(ref.K) do
  for _, shape in ipairs({ "obf", "pocock" }) do
    local r = stats.seq_constant(K, shape, { alpha = ref.alpha })
    t:ok(math.abs(r.c - ref[shape][i]) <= 0.0005,
      string.format("seq_constant(%d, %s): %.6f, published %.3f", K, shape, r.c, ref[shape][i]))
    t:eq(#r.bounds, K, "one bound per look")
    t:eq(#r.t, K, "one fraction per look")
  end
end

-- A list of fractions gives the same bounds as the count.
local by_count = stats.seq_constant(3, "obf")
local by_list = stats.seq_constant({ 1 / 3, 2 / 3, 1 }, "obf")
t:near(by_list.c, by_count.c, 1e-12, "fractions {1/3, 2/3, 1} are 3 equally spaced looks")

-- Spending: the cumulative alpha reaches alpha and the bounds spend it.
local sp = stats.seq_spending({ 0.3, 0.6, 1 }, { spending = "pocock" })
t:near(sp.spent[3], 0.05, 1e-15, "Pocock-type spending reaches alpha at t = 1")
local cr = stats.seq_crossing({ 0.3, 0.6, 1 }, sp.bounds)
t:near(cr.reject, 0.05, 1e-8, "the spending bounds reject alpha under the null")
t:near(cr.upper[1] + cr.lower[1], sp.spent[1], 1e-8, "look 1 spends spent[1]")

-- Under a drift, power rises, and a futility bound lowers power and the expected fraction.
local obf = stats.seq_constant(4, "obf")
local power = stats.seq_crossing(4, obf.bounds, { drift = 3 })
local fut = stats.seq_crossing(4, obf.bounds, { drift = 3, futility = { 0.5, 1, 1.5, 0 } })
t:ok(power.reject > 0.8 and power.reject < 0.9, "power at drift 3: " .. power.reject)
t:ok(fut.reject < power.reject and fut.expected_t < power.expected_t,
  "binding futility lowers power and the expected fraction")
local sum = 0
for _, p in ipairs(power.stop) do sum = sum + p end
t:near(sum, 1, 1e-8, "the stopping chances sum to 1")

-- Small samples: calibrate on 20,000 null studies, check on 20,000 others.
local looks = { 8, 16, 24, 32 }
local cal = stats.seq_calibrate(looks, { { test = "t", shape = "obf" },
  { test = "signed_rank", shape = "pocock" } }, { studies = 20000, seed = 1 })
t:eq(#cal, 2, "one calibration per target")
t:eq(cal[1].test, "t", "the target's test is named")
t:ok(cal[1].error <= 0.05 and cal[1].next_error > 0.05, "error <= alpha < next_error")
t:eq(#cal[1].bounds, 4, "a bound per look")
t:ok(cal[1].bounds[1] > cal[1].bounds[4], "the O'Brien-Fleming t bounds fall")
local again = stats.seq_calibrate(looks, { { test = "t", shape = "obf" } },
  { studies = 20000, seed = 1 })
t:eq(again[1].c, cal[1].c, "the same seed gives the same constant")
local rules = {}
for i, c in ipairs(cal) do rules[i] = { test = c.test, shape = c.shape, c = c.c } end
local sim = stats.seq_simulate(looks, rules, { studies = 20000, seed = 2 })
for i, s in ipairs(sim) do
  t:ok(math.abs(s.reject - 0.05) <= 3 * s.se, string.format(
    "%s %s: type I error %.4f (se %.4f)", s.test, s.shape, s.reject, s.se))
  t:eq(#s.stop, 4, "a stopping share per look")
  t:ok(s.expected_n > 8 and s.expected_n <= 32, "the expected differences lie in the looks")
  t:eq(s.rejections, math.floor(s.reject * 20000 + 0.5), "rejections counts the studies")
end
local bounds = stats.seq_bounds(looks, rules[1])
t:near(bounds[4], cal[1].bounds[4], 1e-15, "seq_bounds gives the calibration's bounds")
local fam = stats.seq_simulate(looks, rules, { studies = 2000, m = 4, dist = "t3", seed = 3 })
t:ok(fam[1].reject > sim[1].reject, "4 comparisons at alpha's constant: more family-wise error")

-- Bad arguments name the argument and the field.
t:raises(function() stats.seq_constant(0, "obf") end, "looks: must be 1 to 20",
  "no looks refused")
t:raises(function() stats.seq_constant(2, "square") end, "invalid option 'square'",
  "an unknown shape refused")
t:raises(function() stats.seq_constant({ 0.5, 0.4 }, "obf") end, "t[2]: fractions must increase",
  "decreasing fractions refused, named")
t:raises(function() stats.seq_spending(2, { spending = "linear" }) end,
  'spending: unknown value "linear"', "an unknown spending function refused")
t:raises(function() stats.seq_crossing(2, { 2 }) end, "bounds: 2 values expected",
  "one bound short refused")
t:raises(function() stats.seq_crossing(2, { 2, 2 }, { futility = { 1, "x" } }) end,
  "#3 to 'seq_crossing' (futility[2]: number expected", "a futility that is no number refused, named")
t:raises(function() stats.seq_calibrate({ 5, 10 }, { { test = "t" } }) end,
  "targets[1].shape: string expected", "a target without a shape refused")
t:raises(function() stats.seq_calibrate({ 5, 10 }, { { test = "t", shape = "obf", a = 1 } }) end,
  "targets[1]: unknown key 'a'", "an unknown target key refused")
t:raises(function() stats.seq_calibrate({ 5, 10 }, { { test = "t", shape = "obf" } },
  { studies = 100 }) end, "alpha N must be >= 10", "too few studies refused")
t:raises(function() stats.seq_simulate({ 5, 4 }, rules) end, "n[2]: look sizes must increase",
  "decreasing look sizes refused")
t:raises(function() stats.seq_simulate(looks, { { test = "t", shape = "obf" } }) end,
  "rules[1].c: number expected", "a rule without its constant refused")
t:raises(function() stats.seq_simulate(looks, rules, { dist = "cauchy" }) end,
  'dist: unknown value "cauchy"', "an unknown distribution refused")
t:ok(stats.SEQ_MAX_LOOKS == 20 and stats.SEQ_MAX_N == 1000, "the limits are exported")
-- the upper tail the analysis turns a z boundary into a repeated interval's level with
t:near(stats.normal_q(1.959963984540054), 0.025, 1e-9, "normal_q(1.96) is 0.025")
-- Spending on the signed-rank test's exact null.  Brute force over every order of |d| and
-- every sign (6! 2^6 ways for looks at 4 and 6) gives the chance of crossing the bounds by
-- each look, an atom crossing with its share gamma and its rest going on; the recursion's
-- spent must agree, and equal the spending.
local function brute_force_crossing(n, sp)
  local nK, cum, total = n[#n], {}, 0
  for k = 1, #n do cum[k] = 0 end
  local perm, used = {}, {}
  local function wplus_dev(mags, signs, m)  -- |2 W+ - m (m + 1) / 2| of the first m
    local w = 0
    for i = 1, m do
      if signs[i] > 0 then
        local r = 1
        for j = 1, m do if mags[j] < mags[i] then r = r + 1 end end
        w = w + r
      end
    end
    return math.abs(2 * w - m * (m + 1) / 2)
  end
  local function visit(depth)
    if depth > nK then
      for mask = 0, (1 << nK) - 1 do
        local signs = {}
        for i = 1, nK do signs[i] = (mask >> (i - 1)) & 1 == 1 and 1 or -1 end
        total = total + 1
        local left = 1  -- the share of this way not crossed yet
        for k, m in ipairs(n) do
          local sd = math.sqrt(m * (m + 1) * (2 * m + 1) / 24)
          local z = wplus_dev(perm, signs, m) / (2 * sd)
          local share = z >= sp.bounds[k] and left or z >= sp.atom[k] and left * sp.gamma[k] or 0
          for j = k, #n do cum[j] = cum[j] + share end
          left = left - share
        end
      end
      return
    end
    for v = 1, nK do
      if not used[v] then
        used[v], perm[depth] = true, v
        visit(depth + 1)
        used[v] = false
      end
    end
  end
  visit(1)
  for k = 1, #n do cum[k] = cum[k] / total end
  return cum
end
for _, shape in ipairs({ "obf", "pocock" }) do
  local sp = stats.seq_rank_spending({ 4, 6 }, { { shape = shape, alpha = 0.45 } })[1]
  t:ok(sp.exact, "n_K = 6: the exact law")
  t:ok(sp.spent[1] > 0, "the first look crosses too, so the joint law is tested")
  local bf = brute_force_crossing({ 4, 6 }, sp)
  for k = 1, 2 do
    t:near(sp.spent[k], bf[k], 1e-12, string.format("%s look %d: spent %.6f, brute force %.6f",
      shape, k, sp.spent[k], bf[k]))
    t:ok(math.abs(sp.spent[k] - sp.target[k]) < 1e-15 and sp.next[k] > sp.target[k] and
      sp.gamma[k] > 0 and sp.gamma[k] < 1, string.format(
      "%s look %d: spent %.5f = spend %.5f < next %.5f, the atom crossing with gamma %.4f",
      shape, k, sp.spent[k], sp.target[k], sp.next[k], sp.gamma[k]))
  end
end
-- 5 pairs of one sign (2 / 32 > the first look's spend) reject only by the draw
local ten = stats.seq_rank_spending({ 5, 10 }, { { shape = "obf" } })[1]
local top5 = 15 / (2 * math.sqrt(5 * 6 * 11 / 24))
t:ok(ten.bounds[1] > top5 and ten.atom[1] < top5, "5 pairs: the top value is the first atom")
t:near(ten.gamma[1], ten.target[1] / (2 / 32), 1e-12, "its share spends the first look exactly")
t:near(ten.spent[2], 0.05, 1e-15, "5, 10: the level is alpha, between 50 / 1024 and 66 / 1024")
-- a draw belongs to its key and look
t:eq(stats.seq_draw(11, 2), stats.seq_draw(11, 2), "the same key and look give the same draw")
t:ok(stats.seq_draw(11, 2) ~= stats.seq_draw(12, 2) and stats.seq_draw(11, 1) ~=
  stats.seq_draw(11, 2), "another key or look gives another draw")
t:raises(function() stats.seq_draw(1, 21) end, "look: must be 1 to 20", "a look past 20 refused")

-- Small versions of make calibrate-sequential's spending rows: the type I error of the
-- signed-rank spending bounds (exact law, and simulated beyond SEQ_EXACT_N) and of the
-- sign-flip t within 3 se of what they attain, with t3 differences.
local exact_looks, sim_looks = { 6, 12, 18 }, { 8, 16, 24, 32 }
local ex = stats.seq_rank_spending(exact_looks, { { shape = "pocock" } })[1]
local sm = stats.seq_rank_spending(sim_looks, { { shape = "obf" } }, { studies = 200000 })[1]
t:ok(not sm.exact, "n_K = 32: the simulated law")
local again_sm = stats.seq_rank_spending(sim_looks, { { shape = "obf" } }, { studies = 200000 })[1]
t:eq(again_sm.bounds[4], sm.bounds[4], "the same seed gives the same simulated bounds")
t:ok(sm.bounds[2] > sm.bounds[4], "the O'Brien-Fleming spending bounds fall")
for k = 1, 4 do
  t:near(sm.spent[k], sm.target[k], 1e-12, string.format("simulated look %d: spent %.5f = %.5f",
    k, sm.spent[k], sm.target[k]))
end
local checks = {
  { looks = exact_looks, rule = { test = "signed_rank", shape = "pocock", bounds = ex.bounds,
    atom = ex.atom, gamma = ex.gamma }, level = ex.spent[3] },
  { looks = sim_looks, rule = { test = "signed_rank", shape = "obf", bounds = sm.bounds,
    atom = sm.atom, gamma = sm.gamma }, level = sm.spent[4] },
  { looks = sim_looks, rule = { test = "t_flip", shape = "obf", alpha = 0.05 }, level = 0.05 },
}
for i, c in ipairs(checks) do
  local s = stats.seq_simulate(c.looks, { c.rule }, { studies = 20000, dist = "t3", seed = 10 + i })[1]
  t:ok(math.abs(s.reject - c.level) <= 3 * s.se, string.format(
    "%s spending, t3: type I error %.4f (se %.4f), attained %.4f", c.rule.test, s.reject, s.se,
    c.level))
end
-- under the sign-flip design a large shift rejects, at a look the bounds say
local shifted = {}
for i = 1, 32 do shifted[i] = 1 + math.sin(i) end
local fl = stats.seq_flip_t(shifted, sim_looks, { shape = "pocock", key = 3 })
t:eq(fl.looks, 4, "every look done")
t:eq(fl.reject_at, 1, "a shift of about 1.4 sd rejects at the first look")
t:ok(math.abs(fl.t[1]) > fl.bounds[1], "its t exceeds the look's bound")
local part = stats.seq_flip_t({ table.unpack(shifted, 1, 20) }, sim_looks,
  { shape = "pocock", key = 3 })
t:eq(part.looks, 2, "20 differences: the first two looks")
t:eq(part.bounds[2], fl.bounds[2], "a look's bound does not depend on the looks after it")
t:eq(fl.allowed[4], math.floor(0.05 * stats.SEQ_FLIPS), "the last look allows alpha's share")
-- the vectors are the key's: the same key the same bounds, another key others; ties
-- (3 pairs: 8 sign patterns for 1,600 vectors) are broken so that exactly `allowed` cross
local tied = { 0.4, -1.1, 0.7, 0.2, 1.5, -0.3 }
local k1 = stats.seq_flip_t(tied, { 3, 6 }, { key = 1 })
local k1again = stats.seq_flip_t(tied, { 3, 6 }, { key = 1 })
local k2 = stats.seq_flip_t(shifted, sim_looks, { shape = "pocock", key = 4 })
t:ok(k1.bounds[2] == k1again.bounds[2] and k1.reject_at == k1again.reject_at,
  "the same key gives the same bounds and decision")
t:ok(k2.bounds[4] ~= fl.bounds[4], "another key draws other vectors")
t:ok(k1.crossed[1] == k1.allowed[1] and k1.crossed[2] == k1.allowed[2] and k1.allowed[1] > 0,
  string.format("3, 6 pairs: %d and %d vectors cross, as allowed", k1.crossed[1], k1.crossed[2]))
t:raises(function() stats.seq_flip_t(shifted, sim_looks) end, "key: the comparison's key",
  "a sign-flip t without its key refused")
t:raises(function() stats.seq_flip_t({ 1, 2, 3 }, sim_looks, { key = 1 }) end,
  "d: at least n[1] = 8 differences expected", "too few differences refused, named")
-- The runner's key of a comparison, and a signed-rank spending design whose look lands on
-- the boundary atom: the comparison's draw decides, the same on every rerun.
local seq = require "repro.analysis.sequential"
local key = seq.key("study", "ln", "none")
t:ok(math.type(key) == "integer" and key >= 0 and key == seq.key("study", "ln", "none"),
  "a comparison's key is a fixed integer >= 0: " .. tostring(key))
t:ok(key ~= seq.key("study", "none", "ln") and key ~= seq.key("other", "ln", "none"),
  "the study and the order of the variants change it")
local spec = { looks = { 5, 10 }, shape = "obf", test = "signed_rank", stop = { "difference" },
  boundary = "spending" }
local design = seq.boundaries(spec, 1, 0.05)
local sd10 = math.sqrt(10 * 11 * 21 / 24)
local atom = math.floor(design.atom[2] * 2 * sd10 + 1.5)  -- the deviation |2 W+ - 55|
-- ranks 1..10 as |d|, the largest positive until W+ = (55 + atom) / 2, mixed in the first 5
local need, signs = (55 + atom) // 2, {}
for r = 10, 1, -1 do
  if need >= r then signs[r], need = 1, need - r else signs[r] = -1 end
end
local order, base, treat = { 2, 9, 4, 7, 5, 10, 1, 8, 3, 6 }, {}, {}
for i, r in ipairs(order) do base[i], treat[i] = 0, signs[r] * r end
local seen = {}
for i = 1, 40 do
  local ki = seq.key("study", "v" .. i, "base")
  local looks = seq.replay(spec, base, treat, 1, 0.05, "lower", ki)
  local lk = looks[2]
  if lk and lk.draw then
    t:ok(lk.draw == stats.seq_draw(ki, 2) and lk.gamma == design.gamma[2] and
      lk.crosses == (lk.draw < lk.gamma), "the atom's look records the key's draw and gamma")
    seen[lk.crosses] = seen[lk.crosses] or looks
    local again = seq.replay(spec, base, treat, 1, 0.05, "lower", ki)[2]
    t:eq(again.crosses, lk.crosses, "a rerun with the same key decides the same")
  end
end
t:ok(seen[true] and seen[false], string.format(
  "on the atom (gamma %.3f) some keys reject and some do not", design.gamma[2]))
local why = require("repro.analysis.words").sequential_reason({ decision = "difference",
  looks = seen[true] }, spec)
t:ok(why:find("lay on its boundary's atom", 1, true) and why:find("draw", 1, true),
  "a verdict by the draw says so: " .. why)
t:raises(function() stats.seq_calibrate({ 5, 10 }, { { test = "t_flip", shape = "obf" } }) end,
  "test: must be z, t or signed rank", "the sign-flip t has no constant to calibrate")
t:raises(function() stats.seq_rank_spending({ 5, 10 }, { { shape = "obf", alpha = 2 } }) end,
  "alpha", "a bad alpha refused")
t:raises(function() stats.seq_simulate({ 5, 10 }, { { test = "signed_rank", shape = "obf",
  bounds = { 2 } } }) end, "rules[1].bounds: 2 values expected", "bounds of the wrong length refused")
t:done()
