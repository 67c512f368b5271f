-- The numbers the hand-written main text (paper/main.tex) cites that no other file of the
-- report defines (a manifest extension of paper/paper.lua), as macros S..<name> of each
-- study S: a validation-loss comparison's decision interval as a change of perplexity, the
-- replication's verdicts and numbers (S.."Rep"..), the task study's facts, H1a's parts per
-- norm (S.."HOneA"..) with its two readings, whether the instability result is reproduced
-- and, seed by seed, each norm's final loss against none's there, a sequential study's stop
-- and runs gone bad, and how many seeds favour the treatment of each comparison.
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local stats = require "stats"
local h1a_ext = require("repro.core.extension").load("h1a", "paper")

local M = {}

local finite = F.finite

local function int(x) return finite(x) and string.format("%d", x) or F.DASH end

local function pct(x)
  if not finite(x) then return F.DASH end
  return F.percent(math.exp(x) - 1)
end

-- A loss interval as an interval of the change of perplexity, [e^lo - 1, e^hi - 1].
function M.ppl_interval(ci)
  if type(ci) ~= "table" or not finite(ci[1]) or not finite(ci[2]) then return F.DASH end
  return "[" .. pct(ci[1]) .. ", " .. pct(ci[2]) .. "]"
end

-- F.num (a dash when x is not finite) with 3 significant digits unless dec is given.
local function num(x, dec) return F.num(x, dec or F.sig_decimals(x, 3)) end

-- K.."Coef" and K.."CI": a fit's coefficient and interval to 3 significant digits.
local function def_fit(def, K, coef, ci)
  def(K .. "Coef", num(coef, 3))
  def(K .. "CI", F.interval(ci, 3))
end

-- The macro prefix of the comparison treatment vs baseline.
local function pair(S, t, b) return S .. F.macro(t) .. "Vs" .. F.macro(b) end

local NORMS = { "layernorm", "rmsnorm", "none", "scale", "layernorm_matched" }

-- A variant's set-up and norm: "torch-L4-...-d0-layernorm" -> "torch-L4-...-d0", "layernorm".
local function split(name)
  for _, n in ipairs(NORMS) do
    local setup = name:match("^(.*)%-" .. n:gsub("%p", "%%%0") .. "$")
    if setup then return setup, n end
    if name == n then return "", n end
  end
  return name, ""
end

-- A criterion of the replication verdict in words (nil: the entry has no such test).
local function pass(ok)
  if ok == nil then return F.DASH end
  return ok and "passed" or "failed"
end

-- The three criteria of "reproduced" at one set-up (a replication entry), each "passed" or
-- "failed", a dash where the entry has no such test (an original without a spread has only
-- its direction): direction, pi (a failed one says on which side of the two-sided
-- interval: "(larger)", beyond the original in its direction, or "(smaller)") and size.
function M.criteria(e)
  local st = e.stats or {}
  local not_small
  if st.too_small ~= nil then not_small = not st.too_small end
  local code = e.reason_code or ""
  local side = code:find("outside_prediction_interval_larger", 1, true) and " (larger)" or
    code:find("outside_prediction_interval_smaller", 1, true) and " (smaller)" or ""
  return { direction = pass(e.same_direction),
    pi = pass(st.in_pi) .. (st.in_pi == false and side or ""), pi_t = pass(st.in_pi_t),
    size = pass(not_small),
    agreed = e.same_direction and "agreed" or "disagreed" }
end

-- The macros E.."Verdict", ... of one replication entry e (one claim at one set-up).
local function entry_numbers(def, E, e)
  local log = e.scale == "log_ratio"
  local o, rep, st = e.original or {}, e.replication or {}, e.stats or {}
  def(E .. "Verdict", F.escape(e.verdict or F.DASH))
  def(E .. "Original", log and pct(o.estimate) or num(o.estimate))
  def(E .. "OriginalLog", num(o.estimate, 4))
  if log then def(E .. "Estimate", pct(rep.mean)) end
  def(E .. "EstimateLog", num(rep.mean, 4))
  if log then
    def(E .. "CI", M.ppl_interval(st.ci))
    def(E .. "PI", M.ppl_interval(st.pi))
    def(E .. "PIT", M.ppl_interval(st.pi_t))
    -- the original's degrees of freedom, the t quantile's of pi_t (stats.h)
    def(E .. "PIDf", string.format("%d", (o.n2 or 0) > 0 and (o.n1 + o.n2 - 2) or
      ((o.n1 or 1) - 1)))
    def(E .. "CILog", F.interval(st.ci, 4))
    def(E .. "PILog", F.interval(st.pi, 4))
    def(E .. "DThreeThree", num(st.d33_raw, 4))
    def(E .. "TelescopeP", F.p(st.telescope_p))
  else
    -- no prediction interval on this scale: the Hodges-Lehmann estimate and interval
    local ci = rep.hodges_lehmann_ci or {}
    def(E .. "Estimate", num(rep.hodges_lehmann))
    def(E .. "CI", F.interval(rep.hodges_lehmann_ci,
      F.sig_decimals(math.max(math.abs(ci[1] or 0), math.abs(ci[2] or 0)), 3)))
  end
  def(E .. "Direction", e.same_direction and "same" or "opposite")
  local cr = M.criteria(e)
  for _, k in ipairs({ { "Agreed", "agreed" }, { "DirectionPass", "direction" },
      { "PIPass", "pi" }, { "PITPass", "pi_t" }, { "SizePass", "size" } }) do
    def(E .. k[1], cr[k[2]])
  end
end

local function replication(def, s, S)
  local r = s.summary.replication
  if type(r) ~= "table" then return end
  for _, c in ipairs(r.claims or {}) do
    local C = S .. "Rep" .. F.macro(c.claim)
    def(C .. "Verdict", F.escape(c.verdict or F.DASH))
    def(C .. "Reason", F.escape(require("repro.analysis.replication").claim_reason(c)))
  end
  -- \<S>CloseLN and \<S>CloseRMS: the closest set-up's comparisons' macro prefixes
  -- (main.tex: \M{\CloseLN PplChange})
  local closest = type(s.summary.claim) == "table" and type(s.summary.claim.closest) == "table"
    and s.summary.claim.closest.setup or "torch-L4-ps-tied-w30cos-d0"
  def(S .. "CloseLN", pair(S, closest .. "-layernorm", closest .. "-none"))
  def(S .. "CloseRMS", pair(S, closest .. "-rmsnorm", closest .. "-none"))
  -- each entry's set-up by short name: the closest "Closest" whatever the set-up search
  -- chose (on make reproduce QUICK=1's records it can be the reference itself), the GPT-2
  -- reference "Ref"
  for _, e in ipairs(r.entries or {}) do
    local setup, norm = split(e.treatment or "")
    local names = {}
    if setup == closest then names[#names + 1] = "Closest" end
    if setup == "ref" then names[#names + 1] = "Ref" end
    if #names == 0 then names[1] = F.macro(setup) end
    for _, name in ipairs(names) do
      entry_numbers(def, S .. "Rep" .. F.macro(e.claim) .. name ..
        (e.claim == "gradient_norm_ordering" and F.macro(norm) or ""), e)
    end
  end
end

-- Of a task summary's few-shot demonstrations, how many are measurable, of how many.
function M.few_shot(t)
  local measurable, scored = 0, 0
  for _, d in ipairs(t.demos or {}) do
    scored = scored + 1
    if d.measurable then measurable = measurable + 1 end
  end
  return measurable, scored
end

-- The tasks some variant (some normed variant) beats the n-gram controls on, few-shot
-- measurability, and whether H0 and H1a are testable.
local function tasks(def, s, S)
  local t = s.summary.tasks
  if type(t) ~= "table" then return end
  local beyond, beyond_norm = 0, 0
  for _, b in pairs(t.beyond_ngram or {}) do
    local variants, normed = b.variants or {}, false
    for _, v in ipairs(variants) do normed = normed or select(2, split(v)) ~= "none" end
    if variants[1] ~= nil then beyond = beyond + 1 end
    if normed then beyond_norm = beyond_norm + 1 end
  end
  local measurable, scored = M.few_shot(t)
  def(S .. "BeyondNgramTasks", int(beyond))
  def(S .. "BeyondNgramNormTasks", int(beyond_norm))
  def(S .. "FewShotMeasurable", int(measurable))
  def(S .. "FewShotTasks", int(scored))
  def(S .. "HypothesesVerdict",
    (measurable == 0 or beyond == 0) and "not testable here" or "testable")
end

-- H1a read two ways, over every norm the study fits: as worded (lower accuracy and smoother
-- training) and as registered (also a cost beyond what the loss predicts).
function M.h1a_readings(h)
  local worded, registered, n = 0, 0, 0
  for _, e in pairs(h.norms) do
    n = n + 1
    if e.lower and e.stabilized then worded = worded + 1 end
    if e.supports then registered = registered + 1 end
  end
  local function words(k)
    return k == n and "supported" or k == 0 and "not supported" or "supported for some norms"
  end
  return words(worded), words(registered)
end

local function h1a(def, s, S)
  local h = s.summary.h1a
  if type(h) ~= "table" or type(h.norms) ~= "table" then return end
  local worded, registered = M.h1a_readings(h)
  def(S .. "HOneAWorded", worded)
  def(S .. "HOneARegistered", registered)
  for _, nm in ipairs(require("repro.core.base").sorted_keys(h.norms)) do
    local e = h.norms[nm]
    local N = S .. "HOneA" .. F.macro(nm)
    def(N .. "Verdict", F.escape(h1a_ext.verdict_words(e)))
    for _, k in ipairs({ "supports", "lower", "beyond", "stabilized" }) do
      def(N .. F.macro(k), e[k] and "yes" or "no")
    end
    local a, b = e.accuracy or {}, e.accuracy_given_loss or {}
    def_fit(def, N .. "Acc", a.coef, a.ci)
    def_fit(def, N .. "AccGivenLoss", b.coef, b.ci)
    for _, su in ipairs(h.setups_apart or {}) do
      local x = su.norms[nm]
      if x then def_fit(def, N .. "Setup" .. F.macro(su.name), x.coef, x.ci) end
    end
    for _, st in ipairs(e.stability or {}) do
      local K = N .. "Stab" .. F.macro(st.metric)
      def_fit(def, K, st.coef, st.ci)
      if st.log then
        local ci = type(st.ci) == "table" and finite(st.ci[1]) and finite(st.ci[2])
          and { math.exp(st.ci[1]), math.exp(st.ci[2]) } or nil
        def(K .. "Factor", finite(st.coef) and num(math.exp(st.coef), 3) or F.DASH)
        def(K .. "FactorCI", F.interval(ci, 3))
      end
    end
  end
end

-- A sequential study's stop (summary.sequential), per comparison <T>Vs<B>Seq...: the
-- Hodges-Lehmann estimate and repeated interval at the stop (nats, and as changes of
-- perplexity), the look and seeds per variant it stopped at and whether the target lies in
-- the interval; for the study, the runs it used against the fixed design's and its cap.
local function sequential(def, s, S)
  local q = s.summary.sequential
  if type(q) ~= "table" then return end
  local d = q.design or {}
  def(S .. "SeqRunsUsed", int(q.runs_used))
  def(S .. "SeqRunsFixed", int(q.runs_fixed))
  def(S .. "SeqCapSeeds", int(d.looks and d.looks[#d.looks]))
  def(S .. "SeqNLooks", int(d.looks and #d.looks))
  def(S .. "SeqTarget", num(d.target, 3))
  def(S .. "SeqTargetPplChange", pct(d.target))
  for _, c in ipairs(q.comparisons or {}) do
    local P = pair(S, c.treatment, c.baseline) .. "Seq"
    def(P .. "Estimate", num(c.estimate, 4))
    def(P .. "AbsEstimate", finite(c.estimate) and num(math.abs(c.estimate), 4) or F.DASH)
    def(P .. "CI", F.interval(c.ci, 4))
    def(P .. "PplChange", pct(c.estimate))
    def(P .. "PplChangeCI", M.ppl_interval(c.ci))
    def(P .. "Look", int(c.stopped_at))
    def(P .. "Seeds", int(c.n))
    def(P .. "TargetIn", c.target_in_ci and "inside" or "outside")
    -- the repeated interval's level at the stop (the boundary's, not 95 %)
    local stop = (c.looks or {})[c.stopped_at or 0] or {}
    def(P .. "Level", finite(stop.level) and F.num(100 * stop.level, 2) .. "\\,\\%" or F.DASH)
  end
end

-- Runs gone bad, the sequential study's pre-registered secondary outcome (the header of
-- lua/experiments/sequential_claim.lua): diverged, or a final validation loss more than
-- M.BAD_MARGIN nats above the arm's median over the seeds used.  Per variant name
-- {bad =, runs =}; nil for a study that is not sequential.
M.BAD_MARGIN = 0.1
function M.bad_runs(s)
  if type(s.summary.sequential) ~= "table" then return nil end
  local used = {}
  for _, seed in ipairs(s.summary.seeds or {}) do used[seed] = true end
  local out = {}
  for _, v in ipairs(s.summary.variants or {}) do
    local pv = s.summary.per_variant[v.name] or {}
    local m = (pv.metrics or {}).val_loss or {}
    local diverged = {}
    for _, seed in ipairs(pv.diverged_seeds or {}) do diverged[seed] = true end
    local xs, bad, runs = {}, 0, 0
    for i, seed in ipairs(m.seeds or {}) do
      if used[seed] then
        runs = runs + 1
        local x = m.values[i]
        if diverged[seed] or not finite(x) then bad = bad + 1 else xs[#xs + 1] = x end
      end
    end
    local median = stats.summary(xs).median
    for _, x in ipairs(xs) do
      if x > median + M.BAD_MARGIN then bad = bad + 1 end
    end
    out[v.name] = { bad = bad, runs = runs }
  end
  return out
end

-- <Variant>BadRuns of <Variant>UsedRuns, at <Study>BadMargin.
local function bad_runs(def, s, S)
  local by = M.bad_runs(s)
  if not by then return end
  def(S .. "BadMargin", num(M.BAD_MARGIN, 1))
  for _, v in ipairs(s.summary.variants or {}) do
    def(S .. F.macro(v.name) .. "BadRuns", int(by[v.name].bad))
    def(S .. F.macro(v.name) .. "UsedRuns", int(by[v.name].runs))
  end
end

-- How many seeds favour the treatment, per comparison and metric with an improvement count
-- (<T>Vs<B><Metric>FavourSeeds of <T>Vs<B><Metric>PairedSeeds).
local function favour(def, s, S)
  for _, list in ipairs({ s.summary.comparisons or {}, s.summary.secondary_comparisons or {} }) do
    for _, c in ipairs(list) do
      local imp = c.improvement
      if type(imp) == "table" and finite(imp.better) and finite(imp.n) then
        local P = pair(S, c.treatment, c.baseline) ..
          ((F.METRIC[c.metric] or {}).macro or F.macro(c.metric))
        def(P .. "FavourSeeds", int(imp.better))
        def(P .. "PairedSeeds", int(imp.n))
      end
    end
  end
end

-- Seed by seed, a norm's final validation loss against no norm's at the same warmup and
-- learning rate, in a study that crosses the norm with both and compares only over its grid
-- (the stability study): <T>Vs<B>LowerSeeds and <T>Vs<B>HigherSeeds.
local function per_seed_order(def, s, S)
  if type(s.summary.sweep_outcomes) ~= "table" then return end
  local cfg = {}
  for _, v in ipairs(s.summary.variants or {}) do cfg[v.name] = v.overrides or {} end
  local function loss_by_seed(name)
    local m = (((s.summary.per_variant[name] or {}).metrics or {}).val_loss) or {}
    local out = {}
    for i, seed in ipairs(m.seeds or {}) do out[seed] = m.values[i] end
    return out
  end
  for _, t in ipairs(s.summary.variants or {}) do
    local ct = cfg[t.name]
    for _, b in ipairs(s.summary.variants or {}) do
      local cb = cfg[b.name]
      if ct.embed_norm ~= "none" and cb.embed_norm == "none" and ct.lr == cb.lr and
          ct.warmup == cb.warmup then
        local z = loss_by_seed(b.name)
        local lower, higher = 0, 0
        for seed, x in pairs(loss_by_seed(t.name)) do
          local y = z[seed]
          if finite(x) and finite(y) then
            if x < y then lower = lower + 1 elseif x > y then higher = higher + 1 end
          end
        end
        def(pair(S, t.name, b.name) .. "LowerSeeds", int(lower))
        def(pair(S, t.name, b.name) .. "HigherSeeds", int(higher))
      end
    end
  end
end

local function stability(def, s, S)
  local sub = s.summary.sweep_outcomes
  if type(sub) ~= "table" or type(sub.verdicts) ~= "table" then return end
  local better = false
  for _, v in ipairs(sub.verdicts) do
    if v.verdict == "better" then better = true end
  end
  def(S .. "StabilityVerdict", better and "reproduced" or "not reproduced")
end

-- LayerNorm against the rescaling control, directly (exploratory): the two studies tuned
-- each against the same no-norm runs on the same seeds, so their per-seed validation
-- losses pair by seed; stats.paired gives the difference and its 1 - alpha t interval
-- (S..<T>"Vs"<B>"Direct": "Delta", "CI", "N"), defined under the second study's prefix.
M.CONTRAST = { treatment = { study = "tuned", variant = "layernorm" },
  baseline = { study = "tuned_controls", variant = "scale" }, metric = "val_loss" }

local function contrast(def, s, S, ctx)
  local c = M.CONTRAST
  if s.name ~= c.baseline.study then return end
  local function values(side)
    local x = ctx.by_name[side.study]
    local pv = x and (x.summary.per_variant or {})[side.variant]
    local m = pv and pv.metrics and pv.metrics[c.metric]
    if not m then return nil end
    local by = {}
    for i, seed in ipairs(m.seeds) do by[seed] = m.values[i] end
    return by, x.summary.analysis.alpha
  end
  local t, alpha = values(c.treatment)
  local b = values(c.baseline)
  if not (t and b) then return end
  local xs, ys = {}, {}
  for _, seed in ipairs(s.summary.seeds) do
    if t[seed] and b[seed] then xs[#xs + 1], ys[#ys + 1] = b[seed], t[seed] end
  end
  if #xs < 2 then return end
  local r = stats.paired(xs, ys, { alpha = alpha })
  local K = pair(S, c.treatment.variant, c.baseline.variant) .. "Direct"
  def(K .. "Delta", num(r.mean, 4))
  def(K .. "CI", F.interval(r.ci_t, 4))
  def(K .. "N", int(#xs))
end

function M.numbers(def, s, S, ctx)
  contrast(def, s, S, ctx)
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.metric == "val_loss" then
      def(pair(S, c.treatment, c.baseline) .. "PplChangeCI", M.ppl_interval(data.interval(c)))
    end
  end
  replication(def, s, S)
  tasks(def, s, S)
  h1a(def, s, S)
  stability(def, s, S)
  sequential(def, s, S)
  bad_runs(def, s, S)
  favour(def, s, S)
  per_seed_order(def, s, S)
end

return M
