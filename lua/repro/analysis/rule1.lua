-- Rule 1, the decision rule the studies that ran before rule 2 registered (kept exactly
-- as it decided, for those studies only: docs/DESIGN.md).
local stats = require "stats"
local words = require "repro.analysis.words"
local reasons = require "repro.analysis.reasons"

local M = {}
local fmt = words.fmt

-- The interval rule 1's verdict used: BCa, else t, else the point interval of constant data.
local function verdict_ci_rule1(c)
  if c.ci_bca then return c.ci_bca, "BCa" end
  if c.ci_t then return c.ci_t, "t" end
  if c.flags and c.flags.constant and c.ci_percentile then return c.ci_percentile, "point" end
  return nil
end

M.DECISION_RULE_1 = "For the primary metric: better if the Holm-adjusted p <= alpha, the "
  .. "(1 - alpha) BCa CI of the mean difference (treatment - baseline) lies entirely on the "
  .. "better side of zero and |mean difference| >= min_effect; worse, symmetrically; no "
  .. "meaningful difference if the CI lies entirely within (-min_effect, +min_effect); "
  .. "otherwise inconclusive. The t interval replaces BCa when BCa is undefined. Holm over "
  .. "every comparison and interaction on every metric of analysis.metrics, p from the "
  .. "paired t-test."

-- Rule 1's decision (kept exactly): c carries p_holm_rule1.  Returns verdict, sentence,
-- interval kind.
function M.verdict_rule1(c, an)
  local level = string.format("%g %%", 100 * (1 - an.alpha))
  local rule = string.format("the pre-registered rule (%s is better, minimum effect %s, " ..
    "alpha %s, Holm over the study's family)", an.better, fmt(an.min_effect), fmt(an.alpha))
  local ci, kind = verdict_ci_rule1(c)
  local head = string.format("%s vs %s on %s", c.treatment, c.baseline, c.metric)
  local p_holm = c.p_holm_rule1
  if c.mean == nil or ci == nil then
    return "inconclusive", string.format("%s: only %d seed%s with a finite result for both " ..
      "runs, too few for an interval: inconclusive by %s.", head, c.n, c.n == 1 and "" or "s",
      rule)
  end
  local lo, hi, d, m = ci[1], ci[2], c.mean, an.min_effect
  local better_side, worse_side = reasons.sides(ci, an.better)
  local sig = p_holm <= an.alpha
  local big = math.abs(d) >= m
  local verdict, why
  if sig and better_side and big then
    verdict = "better"
  elseif sig and worse_side and big then
    verdict = "worse"
  elseif lo > -m and hi < m then
    verdict = "no meaningful difference"
  else
    verdict = "inconclusive"
    if not sig and c.mde and c.mde > m then
      why = string.format("underpowered: with %d seeds the smallest difference this design " ..
        "detects with %g %% power is about %s, larger than the minimum effect %s", c.n,
        100 * stats.DEFAULT_POWER, fmt(c.mde), fmt(m))
    elseif not sig then
      why = string.format("the Holm-adjusted p %s is above alpha %s and the interval reaches " ..
        "beyond the minimum effect", fmt(p_holm), fmt(an.alpha))
    elseif not big then
      why = string.format("a difference is detected but its mean %s is smaller than the " ..
        "minimum effect %s while the interval reaches beyond it", fmt(d), fmt(m))
    else
      why = "the p is below alpha but the " .. kind .. " interval includes zero"
    end
  end
  local change = words.change_words(c, d)
  local ci_name = kind == "BCa" and "BCa" or (kind == "t" and "t (BCa undefined)" or
    "point (all differences equal)")
  local s = string.format("With %s, %s was %s; %s %s interval of the difference %s to %s; " ..
    "Holm-adjusted p %s; %d seeds: %s by %s%s.", c.treatment, c.metric, change, level, ci_name,
    fmt(lo), fmt(hi), fmt(p_holm), c.n, verdict, rule, why and (", because " .. why) or "")
  return verdict, s, kind
end

return M
