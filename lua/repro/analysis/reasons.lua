-- Reasons as codes with the numbers behind them, and in words.
--   M.decide(c, an)   the current rule's verdict of a comparison and why, as a code: the
--                     one place the reason is decided; the analysis words it for the
--                     summary and the terminal (M.verdict_words), the paper its own way
--                     (lua/repro/report/tex_prose.lua) from the same code
--   M.paired(r), M.tost(t)
--                     why a statistic is undefined: the C statistics give codes and
--                     numbers only (stats.paired's `flags` and `bca_reason` with its n, sd
--                     and t; stats.tost's `reason_code` with its n and test), worded here
--                     for the summary's `reason` fields, its notes and the terminal (the
--                     paper words the flags in tex_prose's degenerate_note)
local stats = require "stats"

local M = {}

local function plural(n) return n == 1 and "" or "s" end

-- Why the BCa interval is undefined, by stats.paired's bca_reason.
M.BCA = {
  small_n = "n < 2",
  equal_resamples = "every resample mean is equal",
  z0_infinite = "the observed mean lies outside the resample means, so z0 is infinite",
  jackknife_equal = "the jackknife means are all equal, so the acceleration is undefined",
  acceleration = "1 - a (z0 + z) <= 0: the acceleration is too large for the level",
}

-- The reason of a degenerate stats.paired result r (nil when it is not degenerate): each
-- flag's words with its numbers, in the order the statistics meet them.
function M.paired(r)
  if not r.degenerate then return nil end
  local flags, parts = r.flags or {}, {}
  if flags.small_n then
    parts[#parts + 1] = string.format("n = %d pair%s: sd, t, bootstrap intervals, effect " ..
      "sizes and power are undefined", r.n, plural(r.n))
  end
  if flags.constant then
    parts[#parts + 1] = string.format("all %d differences are equal (sd = %g): t, p_t, " ..
      "ci_t, ci_bca, d_z, g_z, ci_d_z, ci_g_z and mde are undefined", r.n, r.sd)
  end
  if flags.nct_range then
    parts[#parts + 1] = string.format("ci_d_z and ci_g_z undefined: t = %g puts a " ..
      "noncentral-t bound beyond |ncp| = %g", r.t, stats.NCT_MAX_NCP)
  end
  if flags.bca_undefined then
    parts[#parts + 1] = "ci_bca undefined: " .. (M.BCA[r.bca_reason] or r.bca_reason)
  end
  return table.concat(parts, "; ")
end

-- The reason of an undefined stats.tost result t (nil when it is defined).
function M.tost(t)
  if not t.degenerate then return nil end
  if t.reason_code == "constant" then
    return string.format("all %d difference%s are equal: the t-test TOST is undefined", t.n,
      plural(t.n))
  end
  if t.test == "t" then
    return string.format("n = %d pair%s: the t-test TOST needs n >= 2", t.n, plural(t.n))
  end
  return string.format("n = %d pair%s: the sign-flip TOST needs n >= 1", t.n, plural(t.n))
end

-- The current rule's decision (lua/repro/analysis/init.lua's header) for a family
-- comparison c (its summary entry: mean, p_holm, ci_decision, tost, mde_adjusted,
-- test_cannot_reach, n) under the summary's analysis an (better, min_effect, alpha):
-- {verdict =, code =, and the numbers behind the code}.  Codes:
--   better, worse   holm_better, holm_worse: Holm-adjusted p <= alpha, the decision
--                   interval on that side of 0, |mean| >= min_effect
--   equivalent      tost_equivalent: Holm-adjusted TOST p <= alpha
--   inconclusive    no_pairs (no seed pair), cannot_reach (the test cannot reach alpha / m
--                   with n pairs), underpowered (p above alpha and the MDE at alpha / m
--                   above min_effect), not_significant, below_min_effect (p <= alpha,
--                   |mean| < min_effect), includes_zero (p <= alpha, the interval
--                   reaches 0)
function M.decide(c, an)
  local m = an.min_effect
  local why = { n = c.n, alpha = an.alpha, min_effect = m, p_holm = c.p_holm,
    mean = c.mean, tost_p_holm = (c.tost or {}).p_holm }
  if c.mean == nil then
    why.verdict, why.code = "inconclusive", "no_pairs"
    return why
  end
  local ci, sign = c.ci_decision, an.better == "lower" and -1 or 1
  local better_side = ci and ((sign < 0 and ci[2] < 0) or (sign > 0 and ci[1] > 0))
  local worse_side = ci and ((sign < 0 and ci[1] > 0) or (sign > 0 and ci[2] < 0))
  local sig, big = c.p_holm <= an.alpha, math.abs(c.mean) >= m
  local mde = c.mde_adjusted
  if sig and better_side and big then
    why.verdict, why.code = "better", "holm_better"
  elseif sig and worse_side and big then
    why.verdict, why.code = "worse", "holm_worse"
  elseif why.tost_p_holm ~= nil and why.tost_p_holm <= an.alpha then
    why.verdict, why.code = "equivalent", "tost_equivalent"
  else
    why.verdict = "inconclusive"
    if c.test_cannot_reach then
      why.code = "cannot_reach"
    elseif not sig and mde and mde.value and mde.value > m then
      why.code, why.mde, why.level, why.power = "underpowered", mde.value, mde.level, mde.power
    elseif not sig then
      why.code = "not_significant"
    elseif not big then
      why.code = "below_min_effect"
    else
      why.code = "includes_zero"
    end
  end
  return why
end

-- A number for the terminal and the summary's texts: 4 significant digits, "?" for none.
function M.fmt(x)
  if x == nil then return "?" end
  local s = string.format("%.4g", x)
  return s == "-0" and "0" or s
end

local fmt = M.fmt

-- How the treatment's mean difference d compares with the baseline's, in words, for the
-- verdict sentences of both rules: "higher than with none by 0.12 on average (+4.83 % of
-- none's mean)".
function M.change_words(c, d)
  if d == 0 then return string.format("the same as with %s on average", c.baseline) end
  return string.format("%s than with %s by %s on average%s", d < 0 and "lower" or "higher",
    c.baseline, fmt(math.abs(d)), c.relative_change and string.format(" (%+.2f %% of %s's mean)",
      100 * c.relative_change, c.baseline) or "")
end

-- The reason of decision `why` (M.decide) of comparison c in words, for the summary's
-- `reason` and the terminal; nil for no_pairs, which the verdict's sentence says.
function M.verdict_words(why, c)
  local code, m, alpha = why.code, why.min_effect, why.alpha
  local tost = c.tost or {}
  local tost_text = tost.p_holm and string.format("the TOST at +-%s has Holm-adjusted p %s",
    fmt(m), fmt(tost.p_holm)) or ("no TOST: " .. (tost.reason or "undefined"))
  if code == "holm_better" or code == "holm_worse" then
    return string.format("Holm-adjusted p %s <= alpha %s, the interval lies on the %s side " ..
      "of 0 and |mean difference| %s >= the minimum effect %s", fmt(why.p_holm), fmt(alpha),
      why.verdict, fmt(math.abs(why.mean)), fmt(m))
  elseif code == "tost_equivalent" then
    return string.format("the TOST at +-%s has Holm-adjusted p %s <= alpha %s", fmt(m),
      fmt(why.tost_p_holm), fmt(alpha))
  elseif code == "cannot_reach" then
    return c.test_cannot_reach
  elseif code == "underpowered" then
    return string.format("underpowered: with %d seeds the smallest difference this design " ..
      "detects with %g %% power at the Holm first-step level %s is about %s, larger than " ..
      "the minimum effect %s; %s", why.n, 100 * why.power, fmt(why.level), fmt(why.mde),
      fmt(m), tost_text)
  elseif code == "not_significant" then
    return string.format("the Holm-adjusted p %s is above alpha %s and %s", fmt(why.p_holm),
      fmt(alpha), tost_text)
  elseif code == "below_min_effect" then
    return string.format("a difference is detected but its mean %s is smaller than the " ..
      "minimum effect %s, and %s", fmt(why.mean), fmt(m), tost_text)
  elseif code == "includes_zero" then
    return "the p is below alpha but the decision interval includes zero"
  end
  return nil
end

return M
