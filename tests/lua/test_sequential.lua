-- The group-sequential boundaries through the `stats` binding (stats.seq_*): the published
-- z constants of tests/vectors/sequential.json (read, not typed in), spending, crossing
-- chances, a small calibration whose error is checked on other simulated studies, the
-- result fields by name, and bad arguments raising errors that name the argument.
local check = require "repro.core.check"
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
t:done()
