-- The report's sentences (lua/repro/report/init.lua), written from the study summaries:
-- M.verdict_sentence(s, v) and M.verdicts(s) (a study's verdicts, one paragraph),
-- M.degenerate_note(c) (why a comparison's statistics are undefined), M.rule_history(ctx)
-- and the statistics section's facts (M.tests, M.seed_counts, M.signflip_floors,
-- M.bca_coverage).  A sentence names the variants as the paper's manifest names them and
-- a metric by its noun: never a variant's or metric's code name, never a percentage of a
-- loss in nats or of a count.
local stats = require "stats"
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local words = require "repro.analysis.words"

local M = {}
local finite = F.finite

-- Words -----------------------------------------------------------------------------

local function capitalize(s)
  return (s:gsub("^(%$?)(%l)", function(d, c) return d .. c:upper() end))
end

local function mean_of(list)
  if type(list) ~= "table" or #list == 0 then return nil end
  local sum = 0
  for _, x in ipairs(list) do sum = sum + x end
  return sum / #list
end

-- |r| as a percentage with 2 decimals ("\num{12.77}\,\%").
local function pct(r)
  return "\\num{" .. F.fixed(100 * math.abs(r), 2) .. "}\\,\\%"
end

-- A difference with its sign ("\num{+0.1201}"), `dec` decimals.
local function signed(x, dec)
  if not finite(x) then return F.DASH end
  local s = F.fixed(x, dec)
  if s:sub(1, 1) ~= "-" and s:match("[1-9]") then s = "+" .. s end
  return "\\num{" .. s .. "}"
end

local function seeds_text(n)
  return string.format("%d seed pair%s", n or 0, n == 1 and "" or "s")
end

local function spec_of(metric)
  return F.METRIC[metric] or {}
end

local function noun_of(metric)
  return spec_of(metric).noun or F.escape(metric)
end

local function unit_of(metric)
  local u = spec_of(metric).unit
  return u and ("\\ " .. u) or ""
end

-- The level of a study's intervals ("95\,\%").
local function level_text(alpha)
  local l = 100 * (1 - (alpha or stats.DEFAULT_ALPHA))
  return F.fixed(l, math.max(0, F.sig_decimals(l, 2))) .. "\\,\\%"
end

local INTERVAL = { t = "$t$ interval", signflip = "exact sign-flip interval" }
local TEST = { t = "paired $t$-test", signflip = "exact sign-flip test" }

-- The two variants of a comparison as a sentence names them: the setting once in front
-- when both share it ("At peak lr 0.003, " and the norms), else the full names.
local function names_of(s, c)
  local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
  if not t or not b then return "", F.escape(c.treatment), F.escape(c.baseline) end
  if t.setting == b.setting and t.prose_setting ~= "" then
    return capitalize(t.prose_setting) .. ", ", t.prose_level, b.prose_level
  end
  return "", t.prose, b.prose
end

-- Part 1: what the treatment did, with the difference, its interval, n and p ---------------

local function stats_clause(s, c, unit)
  local ci = data.interval(c)
  local dec = F.diff_decimals(c.metric, c.mean, ci)
  local parts = {}
  if ci then
    parts[#parts + 1] = string.format("%s %s %s", level_text(s.analysis.alpha),
      INTERVAL[c.ci_decision_kind] or "interval", F.interval(ci, dec))
  elseif c.ci_decision_unbounded then
    parts[#parts + 1] = "no interval: the exact sign-flip test cannot reject any shift " ..
      "with so few pairs"
  end
  if finite(c.p_holm) then parts[#parts + 1] = "Holm-adjusted $p$ " .. F.p(c.p_holm) end
  return signed(c.mean, dec) .. unit, table.concat(parts, ", ")
end

-- A loss in nats: the change of perplexity in percent, the difference in nats.
local function effect_nats(s, c, front, tn, bn)
  local spec = spec_of(c.metric)
  local r = c.metric == "val_loss" and c.val_ppl_change or nil
  if not finite(r) and finite(c.mean) then r = math.exp(c.mean) - 1 end
  local diff, rest = stats_clause(s, c, "\\ nats")
  local ppl = spec.ppl or "perplexity"
  local head
  if not finite(r) then
    head = string.format("%s%s and %s were not compared on %s", front, tn, bn, noun_of(c.metric))
  elseif F.fixed(100 * r, 2):match("^%-?[0.]+$") then
    -- below the printed precision, but not "unchanged": its test may still detect it
    head = string.format("%s%s %s %s by less than \\num{0.01}\\,\\%% relative to %s", front, tn,
      r > 0 and "raised" or "lowered", ppl, bn)
  else
    -- "raised" or "lowered" only where the rule decided the direction; an undecided
    -- verdict's point value is a change, not an effect
    local v = s.verdict and s:verdict(c)
    local decided = v and (v.verdict == "better" or v.verdict == "worse")
    if v and not decided then
      head = string.format("%s%s changed %s by %s relative to %s", front, tn, ppl,
        F.percent(r), bn)
    else
      head = string.format("%s%s %s %s by %s relative to %s", front, tn,
        r > 0 and "raised" or "lowered", ppl, pct(r), bn)
    end
  end
  return capitalize(string.format("%s (%s %s, %s).", head, noun_of(c.metric), diff, rest))
end

local function count_num(x, spec)
  return "\\num{" .. F.fixed(x, spec.dec or 1) .. "}"
end

-- A count per run: the two means and their difference, never a percentage.
local function effect_count(s, c, front, tn, bn)
  local spec = spec_of(c.metric)
  local noun, one = spec.noun or F.escape(c.metric), spec.one or spec.noun or F.escape(c.metric)
  local bm, tm = mean_of(c.a), mean_of(c.b)
  local diff, rest = stats_clause(s, c, unit_of(c.metric))
  local head
  if bm == nil or tm == nil then
    return capitalize(string.format("%s%s and %s have no seed pair to compare on %s.", front,
      tn, bn, noun))
  elseif bm == 0 and tm == 0 then
    head = string.format("%sneither %s nor %s had a single %s on any of the %d seeds", front, tn,
      bn, one, c.n)
  elseif tm == 0 then
    head = string.format("%sruns with %s had no %s on any seed, against %s per run with %s",
      front, tn, one, count_num(bm, spec), bn)
  elseif bm == 0 then
    head = string.format("%sruns with %s had %s %s per run on average, where runs with %s " ..
      "had no %s on any seed", front, tn, count_num(tm, spec), noun, bn, one)
  else
    head = string.format("%sruns with %s had %s %s per run on average, against %s with %s",
      front, tn, count_num(tm, spec), noun, count_num(bm, spec), bn)
  end
  local ppl = ""
  if finite(c.val_ppl_change) and not F.fixed(100 * c.val_ppl_change, 2):match("^%-?[0.]+$") then
    -- inside the parenthesis, so the verdict that follows reads as the count's
    ppl = string.format("; validation perplexity, which this verdict does not judge, was %s %s",
      pct(c.val_ppl_change), c.val_ppl_change > 0 and "higher" or "lower")
  end
  return capitalize(string.format("%s (a difference of %s per run, %s%s).", head, diff, rest, ppl))
end

-- Any other metric: its difference in its own unit.
local function effect_plain(s, c, front, tn, bn)
  local diff, rest = stats_clause(s, c, unit_of(c.metric))
  return capitalize(string.format("%sthe %s with %s minus that with %s was %s (%s).", front,
    noun_of(c.metric), tn, bn, diff, rest))
end

-- Part 2: the rule's verdict and why -----------------------------------------------------

local function margin(s, c)
  return "$\\pm$" .. F.value(c.metric, s.analysis.min_effect) .. unit_of(c.metric)
end

-- Why an inconclusive comparison is inconclusive, in words: the analysis's reason code
-- (analysis/reasons.lua, decide) and the numbers behind it.
local function why_inconclusive(s, c)
  local an = s.analysis
  local why = require("repro.analysis.reasons").decide(c, an)
  local alpha, delta = why.alpha or stats.DEFAULT_ALPHA, why.min_effect
  local tost = c.tost or {}
  local tost_text = finite(tost.p_holm) and
    string.format("the equivalence test at %s does not pass either (Holm-adjusted $p$ %s)",
      margin(s, c), F.p(tost.p_holm)) or "no equivalence test is defined"
  if why.code == "no_pairs" then
    return "no seed pair has a finite value for both runs"
  end
  if why.code == "cannot_reach" then
    return string.format("with %s the %s cannot reach the Holm level $\\alpha/m$ = %s",
      seeds_text(c.n), TEST[c.test] or "test", F.p((c.mde_adjusted or {}).level))
  end
  if c.flags and c.flags.constant and tost.fallback then
    return string.format("every seed pair gave the same difference (%s), so the $t$-test " ..
      "and its equivalence test are undefined; the exact sign-flip equivalence test that " ..
      "replaces it gives $p$ %s with %s, %s after Holm, above $\\alpha$ = %s",
      signed(c.mean, F.diff_decimals(c.metric, c.mean, nil)) .. unit_of(c.metric),
      F.p(tost.p), seeds_text(c.n), F.p(tost.p_holm), F.p(alpha))
  end
  if why.code == "underpowered" then
    return string.format("the Holm-adjusted $p$ %s is above $\\alpha$ = %s, the smallest " ..
      "difference this design detects with %s power at the Holm level is about %s, more " ..
      "than the minimum effect of %s, and %s", F.p(c.p_holm), F.p(alpha),
      F.fixed(100 * (why.power or stats.DEFAULT_POWER), 0) .. "\\,\\%",
      F.value(c.metric, why.mde) .. unit_of(c.metric),
      F.value(c.metric, delta) .. unit_of(c.metric), tost_text)
  end
  if why.code == "not_significant" then
    return string.format("the Holm-adjusted $p$ %s is above $\\alpha$ = %s and %s",
      F.p(c.p_holm), F.p(alpha), tost_text)
  end
  if why.code == "below_min_effect" then
    return string.format("a difference is detected, but its mean is smaller than the " ..
      "minimum effect of %s while its interval reaches beyond it, and %s",
      F.value(c.metric, delta) .. unit_of(c.metric), tost_text)
  end
  return "the Holm-adjusted $p$ is below $\\alpha$ but the interval includes zero"
end

-- The rule's verdict as the end of the comparison's sentence (after a colon): the verdict
-- alone when the interval decides it (the rule is stated once, in the method), the
-- equivalence test's p for equivalent, and why for inconclusive.
local function verdict_clause(s, c, v, bn)
  local an = s.analysis
  if v.verdict == "better" or v.verdict == "worse" then
    return string.format("\\emph{%s}", v.verdict)
  elseif v.verdict == "equivalent" then
    local tost = c.tost or {}
    local extra = ""
    local bm = mean_of(c.a)
    if spec_of(c.metric).kind == "count" and bm and bm > 0 and finite(an.min_effect)
        and an.min_effect >= bm and finite(c.mean) and c.mean < 0 then
      extra = string.format("; the margin is wider than the mean count with %s (%s), so " ..
        "this test cannot tell removing every %s apart from no change", bn,
        count_num(bm, spec_of(c.metric)), spec_of(c.metric).one or "event")
    end
    return string.format("\\emph{equivalent} (equivalence test at %s: Holm-adjusted $p$ %s)%s",
      margin(s, c), F.p(tost.p_holm), extra)
  elseif v.verdict == "no meaningful difference" then
    return string.format("\\emph{no meaningful difference} by the rule this study was " ..
      "registered under (the whole interval lies within %s)", margin(s, c))
  end
  return string.format("\\emph{%s}, because %s", F.escape(v.verdict), why_inconclusive(s, c))
end

-- The comparison entry of verdict v.
local function comparison_of(s, v)
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.treatment == v.treatment and c.baseline == v.baseline and c.metric == v.metric then
      return c
    end
  end
  return nil
end

-- A sequential study's verdict v (summary.sequential, lua/repro/analysis/sequential.lua):
-- the estimate and repeated interval where its comparison stopped, the verdict, and why
-- (the analysis's words, lua/repro/analysis/words.lua).
local function sequential_sentence(s, v)
  local d = s.summary.sequential.design
  local ORDINAL = { "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
    "eighth", "ninth", "tenth" }
  local SHAPE = { obf = "O'Brien--Fleming", pocock = "Pocock" }
  local TESTNAME = { signed_rank = "signed-rank statistic", t = "$t$ statistic" }
  for _, e in ipairs(s.summary.sequential.comparisons) do
    if e.treatment == v.treatment and e.baseline == v.baseline then
      local front, tn, bn = names_of(s, e)
      local lk = e.looks[#e.looks] or {}
      local dec = F.diff_decimals(e.metric, lk.estimate, lk.ci)
      local ppl = ""
      if spec_of(e.metric).kind == "nats" and F.finite(lk.estimate) then
        ppl = string.format(", %s %s\\,\\%%", spec_of(e.metric).ppl or "perplexity",
          signed(100 * (math.exp(lk.estimate) - 1), 2))
      end
      local at = string.format("at the %s of %d looks (%d seeds each)", ORDINAL[lk.look] or
        tostring(lk.look), #d.looks, lk.n or 0)
      local why = ({
        difference = string.format("its %s crossed the %s boundary %s",
          TESTNAME[d.test] or "statistic", SHAPE[d.shape] or d.shape, at),
        equivalence = string.format("its repeated interval lay inside $\\pm$%s %s",
          F.num(d.margin, dec), at),
        futility = string.format("its repeated interval excluded %s %s", F.num(d.target, dec),
          at),
        cap = string.format("no boundary was crossed by the last look (%d seeds each)",
          lk.n or 0),
      })[e.decision] or "the comparison is still open"
      return capitalize(string.format("%s%s against %s, looked at seed by seed (%s %s%s%s%s): " ..
        "\\emph{%s}, because %s.", front, tn, bn, F.escape(words.SEQ_ESTIMATE[d.test] or
        "estimate"), signed(lk.estimate, dec), unit_of(e.metric), ppl, lk.ci and
        (", repeated interval " .. F.interval(lk.ci, dec)) or "", F.escape(v.verdict), why))
    end
  end
end

-- One verdict in words (LaTeX), one sentence.
function M.verdict_sentence(s, v)
  if type(s.summary.sequential) == "table" then return sequential_sentence(s, v) end
  local c = comparison_of(s, v) or { treatment = v.treatment, baseline = v.baseline,
    metric = v.metric, n = 0 }
  local front, tn, bn = names_of(s, c)
  local kind = spec_of(c.metric).kind
  local effect
  if c.mean == nil then
    effect = string.format("%s%s and %s have no seed pair with a finite %s.", front, tn, bn,
      noun_of(c.metric))
    effect = capitalize(effect)
  elseif kind == "nats" then
    effect = effect_nats(s, c, front, tn, bn)
  elseif kind == "count" then
    effect = effect_count(s, c, front, tn, bn)
  else
    effect = effect_plain(s, c, front, tn, bn)
  end
  local out = effect:gsub("%.$", "") .. ": " .. verdict_clause(s, c, v, bn) .. "."
  local an = s.analysis
  if v.changed and v.verdict_rule1 and (an.registered_rule or 1) < (an.rule or 2) then
    out = out .. string.format(" Under the first decision rule, which this study was " ..
      "registered with, the verdict was \\emph{%s}.", F.escape(v.verdict_rule1))
  end
  return out
end

-- Every verdict of study s, one paragraph (LaTeX).
function M.verdicts(s)
  local out = {}
  for _, v in ipairs(s.summary.verdicts or {}) do
    out[#out + 1] = M.verdict_sentence(s, v)
  end
  if #out == 0 then return "\\emph{This study has no comparisons.}" end
  return table.concat(out, " ")
end

-- Every interaction verdict of study s on its primary metric, one paragraph (LaTeX): "The
-- effect of treatment against no norm on The Devil's Dictionary minus the effect of
-- treatment against no norm was -0.0016 nats (95 % t interval [...], Holm-adjusted p
-- 1.00): equivalent (...)."; "" when it registered none.
function M.interaction_verdicts(s)
  local out = {}
  for _, v in ipairs(s.summary.interaction_verdicts or {}) do
    local e
    for _, x in ipairs(s.summary.interactions or {}) do
      if x.name == v.name and x.metric == v.metric then e = x end
    end
    if e and v.metric == s.primary and type(e.a) == "table" and type(e.b) == "table" then
      local fa, ta, ba = names_of(s, { treatment = e.a[1], baseline = e.a[2] })
      local fb, tb, bb = names_of(s, { treatment = e.b[1], baseline = e.b[2] })
      local unit = spec_of(e.metric).kind == "nats" and "\\ nats" or ""
      -- (an interaction's a and b name its pairs: the clause about a count's baseline mean,
      -- which reads a comparison's values from a, has no place here)
      local diff, rest = stats_clause(s, e, unit)
      local function part(front, tn, bn)
        front = front:gsub(", $", "")
        return string.format("the effect of %s against %s%s", tn, bn,
          front ~= "" and (" " .. front:sub(1, 1):lower() .. front:sub(2)) or "")
      end
      local verdict = verdict_clause(s, setmetatable({ a = false }, { __index = e }), v, bb)
      -- two settings of one comparison: named by the config in which they differ only
      local pa, pb, t1, b1 = s:interaction_settings(e, "key_prose")
      if pa then
        out[#out + 1] = capitalize(string.format("%s's effect against %s %s minus its " ..
          "effect %s, in %s, was %s (%s): %s.", t1.prose_level, b1.prose_level,
          table.concat(pa, " "), table.concat(pb, " "), noun_of(e.metric), diff, rest, verdict))
      else
        out[#out + 1] = capitalize(string.format("%s minus %s in %s was %s (%s): %s.",
          part(fa, ta, ba), part(fb, tb, bb), noun_of(e.metric), diff, rest, verdict))
      end
    end
  end
  return table.concat(out, " ")
end

-- Notes under the tables ------------------------------------------------------------------

-- Why some statistics of comparison (or interaction) c are undefined, in words (LaTeX),
-- from the flags and numbers the statistics module returned; "" when nothing is.
function M.degenerate_note(c)
  if not c.degenerate then return "" end
  local flags, parts = c.flags or {}, {}
  local n = c.n or 0
  if n == 0 then
    parts[#parts + 1] = "no seed has a finite value for both runs, so nothing is defined"
  elseif flags.small_n then
    parts[#parts + 1] = string.format("only %s: with no spread the $t$-test, every interval, " ..
      "$d_z$ and the minimum detectable effect are undefined", seeds_text(n))
  end
  if flags.constant then
    parts[#parts + 1] = string.format("all %d seed pairs give the same difference (%s): " ..
      "with no spread the $t$-test, its interval, $d_z$ and the minimum detectable effect " ..
      "are undefined, and $p$ is the exact sign-flip test's", n,
      signed(c.mean, F.diff_decimals(c.metric, c.mean, nil)))
  end
  if flags.nct_range then
    parts[#parts + 1] = string.format("the interval of $d_z$ is undefined: $t$ = %s puts " ..
      "a bound beyond the noncentrality %s, the largest at which the noncentral $t$ is inverted",
      finite(c.t) and ("\\num{" .. F.fixed(c.t, 1) .. "}") or F.DASH,
      "\\num{" .. F.config_text(stats.NCT_MAX_NCP) .. "}")
  end
  if flags.bca_undefined then
    parts[#parts + 1] = "the BCa bootstrap interval (descriptive, not shown) is undefined " ..
      "for these differences"
  end
  if #parts == 0 then
    parts[1] = "some statistics are undefined for these differences (its summary.json " ..
      "entry says which)"
  end
  return capitalize(table.concat(parts, "; ")) .. "."
end

-- The statistics section --------------------------------------------------------------------

-- The fixed-design studies with a Holm family, in the context's order: a study that
-- decides only in a nested summary (report_data.SECTIONS, e.g. a sweep's outcomes) as that
-- summary's Study.
local function decided(ctx)
  local out = {}
  for _, s in ipairs(ctx.studies) do
    if s.summary.sequential then
      -- a sequential study's test and seeds are its design's (its own section)
    elseif #(s.summary.verdicts or {}) > 0 then
      out[#out + 1] = s
    else
      for _, sec in ipairs(s:sections()) do
        if #(sec.study.summary.verdicts or {}) > 0 then
          out[#out + 1] = sec.study
          break
        end
      end
    end
  end
  return out
end

-- The seed counts of the studies with verdicts: a sorted list of {n =, names = {...}}.
local function by_seed_count(ctx)
  local groups, list = {}, {}
  for _, s in ipairs(decided(ctx)) do
    local n = #s.seeds
    if not groups[n] then
      groups[n] = { n = n, names = {}, studies = {} }
      list[#list + 1] = groups[n]
    end
    table.insert(groups[n].names, s.name)
    table.insert(groups[n].studies, s)
  end
  table.sort(list, function(a, b) return a.n < b.n end)
  return list
end

local function name_list(names)
  local t = {}
  for i, n in ipairs(names) do t[i] = "\\texttt{" .. F.escape(n) .. "}" end
  if #t <= 1 then return t[1] or "" end
  return table.concat(t, ", ", 1, #t - 1) .. " and " .. t[#t]
end

local NUMBER_WORD = { "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine",
  "Ten" }

local function join_and(t)
  if #t <= 1 then return t[1] or "" end
  return table.concat(t, "; ", 1, #t - 1) .. "; and " .. t[#t]
end

-- The sign-flip floor 2^(1-n) at each seed count of the studies, and whether any of them
-- can reach the study's alpha.
function M.signflip_floors(ctx)
  local parts, reach = {}, {}
  for _, g in ipairs(by_seed_count(ctx)) do
    local floor = 2.0 ^ (1 - g.n)
    parts[#parts + 1] = string.format("%s with %d seeds (%s)", F.p(floor), g.n,
      name_list(g.names))
    for i, name in ipairs(g.names) do
      local s = g.studies[i]
      local level = s.analysis.holm_first_level or
        (s.analysis.alpha or stats.DEFAULT_ALPHA) / math.max(1, s.analysis.m or 1)
      if floor <= level then reach[#reach + 1] = name end
    end
  end
  if #parts == 0 then return "No study with a decision has run yet." end
  local tail
  if #reach == 0 then
    tail = "every one of these floors is above the study's first Holm level $\\alpha/m$, so " ..
      "the sign-flip test could not reject in any of these studies whatever the data"
  else
    tail = "only " .. name_list(reach) .. " can reach the first Holm level $\\alpha/m$ " ..
      "with the sign-flip test"
  end
  return "Its floor is " .. join_and(parts) .. "; " .. tail .. "."
end

-- Which test each study with a decision pre-registered: "the paired $t$-test (every
-- study that has run)", or the studies of each test named.
function M.tests(ctx)
  local groups, order = {}, {}
  local list = decided(ctx)
  for _, s in ipairs(list) do
    local t = s.analysis.test or "t"
    if not groups[t] then
      groups[t] = {}
      order[#order + 1] = t
    end
    table.insert(groups[t], s.name)
  end
  if #order == 0 then return "the test its file names (no study with a decision has run yet)" end
  if #order == 1 then
    return string.format("the %s (every one of the %d studies with a decision that have run)",
      TEST[order[1]] or F.escape(order[1]), #list)
  end
  local parts = {}
  for _, t in ipairs(order) do
    parts[#parts + 1] = string.format("the %s (%s)", TEST[t] or F.escape(t), name_list(groups[t]))
  end
  return table.concat(parts, ", ")
end

-- The seed counts of the studies with a decision ("3 or 5"), and the degrees of freedom
-- of their t-tests ("2 or 4"); "---" when none has run.
function M.seed_counts(ctx)
  local n, df = {}, {}
  for _, g in ipairs(by_seed_count(ctx)) do
    n[#n + 1] = string.format("%d", g.n)
    df[#df + 1] = string.format("%d", g.n - 1)
  end
  local function either(t)
    if #t == 0 then return F.DASH end
    if #t == 1 then return t[1] end
    return table.concat(t, ", ", 1, #t - 1) .. " or " .. t[#t]
  end
  return either(n), either(df)
end

-- The bound 1 - 2^(1-n) on the coverage of the bootstrap intervals at each seed count
-- below stats.BCA_CAVEAT_N.
function M.bca_coverage(ctx)
  local parts = {}
  for _, g in ipairs(by_seed_count(ctx)) do
    if g.n < stats.BCA_CAVEAT_N then
      parts[#parts + 1] = string.format("%s with %d seeds", "\\num{" ..
        F.fixed(100 * (1 - 2.0 ^ (1 - g.n)), 2) .. "}\\,\\%", g.n)
    end
  end
  if #parts == 0 then return "" end
  return "at most " .. table.concat(parts, " and ")
end

-- The history of the decision rule ----------------------------------------------------------

-- The verdicts of the studies analysed under a later rule than they were registered
-- with: how many kept their verdict, how many were renamed (no meaningful difference,
-- which rule 2 calls equivalent only after a TOST), and which moved, each named.
function M.rule_history(ctx)
  local kept, renamed, moved, studies, total = {}, 0, {}, {}, 0
  for _, s in ipairs(ctx.studies) do
    local an = s.analysis
    if an.registered_rule and an.rule and an.registered_rule < an.rule then
      studies[#studies + 1] = s.name
      for _, v in ipairs(s.summary.verdicts or {}) do
        total = total + 1
        if v.changed then
          local c = comparison_of(s, v) or { treatment = v.treatment, baseline = v.baseline }
          local front, tn, bn = names_of(s, c)
          front = front:gsub("^(%u)", string.lower):gsub(", $", ": ")
          moved[#moved + 1] = string.format("\\texttt{%s}, %s%s vs %s: \\emph{%s} under " ..
            "rule %d, \\emph{%s} under rule %d", F.escape(s.name), front, tn, bn,
            F.escape(v.verdict_rule1 or "?"), an.registered_rule, F.escape(v.verdict), an.rule)
        elseif v.verdict_rule1 == v.verdict then
          kept[v.verdict] = (kept[v.verdict] or 0) + 1
        else
          renamed = renamed + 1
        end
      end
    end
  end
  if #studies == 0 then
    return "Every study that has run was registered under the current rule."
  end
  local first = ctx.by_name[studies[1]].analysis
  local n_kept, kinds = 0, {}
  for _, k in ipairs({ "better", "worse", "equivalent", "inconclusive" }) do
    if kept[k] then
      n_kept = n_kept + kept[k]
      kinds[#kinds + 1] = string.format("%d %s", kept[k], k)
    end
  end
  local out = { string.format("The %s %s %s registered under rule %d and ran before rule %d " ..
    "existed; %s re-analysed under rule %d, and %s summaries keep the rule-%d verdicts " ..
    "beside the new ones. Of their %d verdicts, %d kept the same verdict%s and %d " ..
    "\\emph{no meaningful difference} became \\emph{equivalent}, now backed by a " ..
    "Holm-adjusted TOST.", #studies == 1 and "study" or "studies", name_list(studies),
    #studies == 1 and "was" or "were", first.registered_rule, first.rule,
    #studies == 1 and "it is" or "they are", first.rule, #studies == 1 and "its" or "their",
    first.registered_rule, total, n_kept,
    #kinds > 0 and (" (" .. table.concat(kinds, ", ") .. ")") or "", renamed) }
  if #moved == 0 then
    out[#out + 1] = "No verdict moved."
  else
    out[#out + 1] = string.format("%s moved: %s.", #moved == 1 and "One verdict" or
      ((NUMBER_WORD[#moved] or tostring(#moved)) .. " verdicts"), table.concat(moved, "; "))
  end
  -- whether an effect changes between the two families: by each interaction's Holm p (rule 1
  -- gave interactions no verdict; rule 2's interaction_verdicts are in the summaries)
  local flips = {}
  for _, name in ipairs(studies) do
    local s = ctx.by_name[name]
    local all = {}
    for _, e in ipairs(s.summary.interactions or {}) do
      if not e.exploratory then all[#all + 1] = e end
    end
    for _, now in ipairs({ true, false }) do
      local list = {}
      for _, e in ipairs(all) do
        if not e.exploratory and e.reject_holm == now and e.reject_holm_rule1 == not now then
          list[#list + 1] = e
        end
      end
      if #list > 0 then
        local function span(key)
          local lo, hi = math.huge, -math.huge
          for _, e in ipairs(list) do lo, hi = math.min(lo, e[key]), math.max(hi, e[key]) end
          return lo == hi and F.p(lo) or (F.p(lo) .. "--" .. F.p(hi))
        end
        local word = { [true] = "significant", [false] = "not significant" }
        local count = #list == #all and string.format("all %d", #all) or
          string.format("%d of the %d", #list, #all)
        flips[#flips + 1] = string.format("%s primary-metric interactions of \\texttt{%s} " ..
          "%s %s under rule %d (Holm $p$ %s) and %s under rule %d's family (Holm $p$ %s)",
          count, F.escape(name), #list == 1 and "is" or "are", word[now], s.analysis.rule,
          span("p_holm"), word[not now], s.analysis.registered_rule, span("p_holm_rule1"))
      end
    end
  end
  if #flips > 0 then
    out[#out + 1] = "The two families also disagree on interactions: " ..
      table.concat(flips, "; ") .. "; the tables print both."
  end
  return table.concat(out, " ")
end

return M
