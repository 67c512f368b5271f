-- The current rule's verdict of a comparison and why, as a code with the numbers behind
-- it: the one place the reason is decided.  analysis/words.lua says it for the terminal
-- and the report, report/tex_prose.lua for the paper, from the same code.

local M = {}

-- Whether interval ci lies wholly on the better side of 0 (better: "lower" or "higher"),
-- and whether wholly on the worse side; neither without an interval.
function M.sides(ci, better)
  if not ci then return false, false end
  local lo, hi = ci[1], ci[2]
  if better == "lower" then return hi < 0, lo > 0 end
  return lo > 0, hi < 0
end

-- The current rule's decision (docs/DESIGN.md, rule 2) for a family
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
  local better_side, worse_side = M.sides(c.ci_decision, an.better)
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

return M
