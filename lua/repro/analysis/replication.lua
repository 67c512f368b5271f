-- Replication verdicts: each original a study declares on a comparison
-- (lua/repro/study/original.lua) against the comparison's paired result, by the rules of
-- docs/DESIGN.md ("Replication verdicts", written before any replication number was
-- computed; M.RULES words them), with the statistics of stats.replication.  M.summarize
-- gives summary.replication = { entries, claims }; M.text(rep) the terminal's lines.
local stats = require "stats"
local json = require "repro.core.json"
local words = require "repro.analysis.words"

local M = {}
local fmt = words.fmt

M.RULES = "Per set-up: not testable here when the original gives no spread or the " ..
  "replication has fewer than 2 pairs or no spread (the direction alone is reported); " ..
  "reproduced when the replication's estimate has the original's direction, lies inside " ..
  "the original's 95 % prediction interval (Patil, Peng & Leek 2016: original +- z " ..
  "sqrt(se_o^2 + se_r^2)) and is not too small by small telescopes (Simonsohn 2015: " ..
  "one-sided p <= alpha that it is below d33, the effect the original design had 33 % " ..
  "power to detect); otherwise not reproduced. Per claim: the verdict at the set-ups " ..
  "declared matching the original's (reproduced only when every one is); not testable " ..
  "here when none matches. The equivalence test (TOST of replication minus original at " ..
  "the declared margin) is descriptive. Written in docs/DESIGN.md before any replication " ..
  "number was computed."

-- The original of entry o as stats.replication takes it ({estimate, se, sd, n1, n2}),
-- or nil and its estimate alone when it gives no spread; how it was derived in words.
local function original_of(o)
  if o.arms then
    local b, t = o.arms.baseline, o.arms.treatment
    local lr = o.scale == "log_ratio"
    local est = lr and math.log(t.mean / b.mean) or t.mean - b.mean
    if not b.sd then
      return nil, est, string.format("%s of the arms' means %s and %s (no spread given)",
        lr and "the log ratio" or "the difference", fmt(t.mean), fmt(b.mean))
    end
    local orig = stats.original_from_arms({ b.mean, t.mean }, { b.sd, t.sd }, { b.n, t.n },
      { log_ratio = lr })
    return orig, orig.estimate, string.format("%s of the arms' means %s and %s (sd %s and " ..
      "%s, n %d and %d), unpaired; se %s%s", lr and "the log ratio" or "the difference",
      fmt(t.mean), fmt(b.mean), fmt(t.sd), fmt(b.sd), t.n, b.n, fmt(orig.se),
      lr and " by the delta method (each arm's sd over its mean on the log scale)" or "")
  end
  if not o.se then
    return nil, o.estimate, "the estimate " .. fmt(o.estimate) .. " (no standard error given)"
  end
  local paired = o.design == "paired"
  local sd = paired and o.se * math.sqrt(o.n) or o.se / math.sqrt(2 / o.n)
  return { estimate = o.estimate, se = o.se, sd = sd, n1 = o.n, n2 = paired and 0 or o.n },
    o.estimate, string.format("the estimate %s with se %s, %s, n %d", fmt(o.estimate),
      fmt(o.se), o.design, o.n)
end

-- The verdict at one set-up and its reason code (with the statistics r, or nil).
function M.decide(r, n_rep, has_spread)
  if not has_spread then return "not testable here", "no_original_spread" end
  if r.same_direction == nil then return "not testable here", "no_original_direction" end
  if not r.pi then return "not testable here", n_rep < 2 and "replication_small_n" or
    "replication_constant" end
  local why = {}
  if not r.same_direction then why[#why + 1] = "opposite_direction" end
  if not r.in_pi then
    -- which side: beyond the original in its direction (larger) or short of it (smaller)
    local beyond = (r.estimate - r.original) * r.original > 0
    why[#why + 1] = beyond and "outside_prediction_interval_larger" or
      "outside_prediction_interval_smaller"
  end
  if r.too_small then why[#why + 1] = "too_small" end
  if #why == 0 then return "reproduced", "consistent" end
  return "not reproduced", table.concat(why, "+")
end

local WORDS = {
  no_original_spread = "the original gives no spread, so only the direction can be compared",
  no_original_direction = "the original estimate is 0: no direction to reproduce",
  replication_small_n = "the replication has fewer than 2 pairs",
  replication_constant = "the replication's differences have no spread",
  consistent = "same direction, inside the prediction interval, not too small by small " ..
    "telescopes",
  opposite_direction = "the opposite direction",
  outside_prediction_interval_larger = "outside the original's prediction interval, " ..
    "beyond it in the original's direction (a larger effect)",
  outside_prediction_interval_smaller = "outside the original's prediction interval, " ..
    "short of it (a smaller effect, or one of the other sign)",
  too_small = "too small by small telescopes",
}
function M.reason_words(code)
  local parts = {}
  for c in code:gmatch("[^+]+") do parts[#parts + 1] = WORDS[c] or c end
  return table.concat(parts, "; ")
end

-- One entry of summary.replication.entries.
local function entry_of(o, c, alpha)
  local orig, estimate = original_of(o)
  local e = { claim = o.claim, source = o.source, treatment = o.treatment,
    baseline = o.baseline, metric = o.metric, scale = o.scale, matches = o.matches,
    declared = o.declared, note = o.note, margin = o.margin,
    original = { estimate = estimate, se = orig and orig.se, sd = orig and orig.sd,
      n1 = orig and orig.n1, n2 = orig and orig.n2 } }
  if not c or not c.n or c.n < 1 then
    e.verdict, e.reason_code = "not testable here", "no_replication"
    return e
  end
  e.replication = { n = c.n, mean = c.mean, sd = c.sd,
    hodges_lehmann = c.robust and c.robust.hodges_lehmann,
    hodges_lehmann_ci = c.robust and c.robust.ci }
  if estimate ~= 0 then e.same_direction = c.mean * estimate > 0 end
  local r
  if orig then
    r = stats.replication(orig, { mean = c.mean, sd = c.sd or 0, n = c.n },
      { alpha = alpha, margin = o.margin or 0 })
    e.stats = { ci = r.ci and json.array(r.ci), original_in_ci = r.original_in_ci,
      pi = r.pi and json.array(r.pi), in_pi = r.in_pi, pi_t = r.pi_t and json.array(r.pi_t),
      in_pi_t = r.in_pi_t, d33 = r.d33, d33_raw = r.d33_raw,
      telescope_t = r.telescope_t, telescope_p = r.telescope_p, too_small = r.too_small,
      se = r.se, df = r.df, alpha = alpha,
      tost = r.tost_p and { margin = r.margin, diff = r.diff, diff_se = r.diff_se,
        df = r.diff_df, p = r.tost_p, p_lower = r.tost_p_lower, p_upper = r.tost_p_upper,
        ci = json.array(r.tost_ci), equivalent = r.equivalent, descriptive = true } or nil }
  end
  e.verdict, e.reason_code = M.decide(r or { same_direction = e.same_direction }, c.n,
    orig ~= nil)
  return e
end

-- The verdict of one claim from its entries (in the study's order).
local function claim_of(id, entries)
  local n_matching, verdict, at = 0, "reproduced", {}
  for _, e in ipairs(entries) do
    if e.matches then
      n_matching = n_matching + 1
      if e.verdict == "not reproduced" then
        verdict = "not reproduced"
      elseif e.verdict == "not testable here" and verdict == "reproduced" then
        verdict = "not testable here"
      end
    end
    at[#at + 1] = { treatment = e.treatment, baseline = e.baseline, metric = e.metric,
      matches = e.matches, verdict = e.verdict }
  end
  if n_matching == 0 then verdict = "not testable here" end
  return { claim = id, verdict = verdict, n_matching = n_matching, setups = json.array(at) }
end

-- A claim's reason in words.
function M.claim_reason(c)
  if c.n_matching == 0 then
    return "no set-up of this study matches the original's; the verdicts at the other " ..
      "set-ups say what the replication shows there"
  end
  return string.format("the verdict at the %d matching set-up%s", c.n_matching,
    c.n_matching == 1 and "" or "s")
end

-- An entry's reason in words.
function M.entry_reason(e)
  if e.reason_code == "no_replication" then
    return "the comparison has no pair with values on " .. e.metric
  end
  return M.reason_words(e.reason_code)
end

-- An entry's direction in words where its verdict gives none, or nil.
function M.direction(e)
  if e.verdict ~= "not testable here" or e.same_direction == nil then return nil end
  return e.same_direction and "same direction (descriptive)" or
    "opposite direction (descriptive)"
end

-- A line of an entry for the terminal.
local function entry_line(e)
  local s = string.format("  %s: %s vs %s on %s: %s", e.claim, e.treatment, e.baseline,
    e.metric, e.verdict)
  if e.replication then
    s = s .. string.format(" (replication %s, original %s", fmt(e.replication.mean),
      fmt(e.original.estimate))
    if e.stats and e.stats.pi then
      s = s .. string.format(", 95 %% prediction interval [%s, %s], d33 %s, small-telescope p %s",
        fmt(e.stats.pi[1]), fmt(e.stats.pi[2]), fmt(e.stats.d33_raw), fmt(e.stats.telescope_p))
    end
    s = s .. ")"
  end
  if M.direction(e) then s = s .. "; " .. M.direction(e) end
  return s .. (e.matches and "" or "; set-up not matching the original's") .. ": " ..
    M.entry_reason(e)
end

-- summary.replication for the study's originals (an.originals), or nil when it declares
-- none.  comparisons, secondary: the summary's lists of comparison entries.
function M.summarize(an, comparisons, secondary)
  local originals = an.originals or {}
  if #originals == 0 then return nil end
  local entries, order, by_claim = {}, {}, {}
  for _, o in ipairs(originals) do
    local c = words.find_comparison(comparisons, o) or words.find_comparison(secondary, o)
    local e = entry_of(o, c, an.alpha)
    entries[#entries + 1] = e
    if not by_claim[o.claim] then
      by_claim[o.claim] = {}
      order[#order + 1] = o.claim
    end
    table.insert(by_claim[o.claim], e)
  end
  local claims = {}
  for _, id in ipairs(order) do claims[#claims + 1] = claim_of(id, by_claim[id]) end
  return { entries = json.array(entries), claims = json.array(claims) }
end

-- The terminal's lines for summary.replication rep.
function M.text(rep)
  if not rep then return {} end
  local text = { "replication of the originals (docs/DESIGN.md's rules):" }
  for _, c in ipairs(rep.claims) do
    text[#text + 1] = string.format("  claim %s: %s (%s)", c.claim, c.verdict, M.claim_reason(c))
  end
  for _, e in ipairs(rep.entries) do text[#text + 1] = entry_line(e) end
  local after = false
  for _, e in ipairs(rep.entries) do after = after or e.declared == "after runs" end
  if after then
    text[#text + 1] = "  (originals declared after the study's runs: the runs were not " ..
      "designed against them)"
  end
  return text
end

return M
