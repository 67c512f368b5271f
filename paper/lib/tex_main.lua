-- The numbers the hand-written main text (paper/main.tex) cites that no other file of the
-- report defines (a manifest extension of paper/paper.lua), as macros S..<name> of each
-- study S: a validation-loss comparison's decision interval as a change of perplexity
-- (S..<T>Vs<B>.."PplChangeCI") and, where the summary has them, the replication's verdicts
-- and numbers (S.."Rep"..), the task study's facts (tasks beyond the n-gram controls,
-- few-shot measurability, whether H0 and H1a are testable), H1a's parts per norm
-- (S.."HOneA"..) and whether the instability result is reproduced (S.."StabilityVerdict").
local F = require "repro.report.texfmt"
local data = require "repro.report.data"

local M = {}

local finite = F.finite

local function pct(x)
  if not finite(x) then return F.DASH end
  return F.percent(math.exp(x) - 1)
end

local function pct_interval(ci)
  if type(ci) ~= "table" or not finite(ci[1]) or not finite(ci[2]) then return F.DASH end
  return "[" .. pct(ci[1]) .. ", " .. pct(ci[2]) .. "]"
end

local function num(x, dec)
  if not finite(x) then return F.DASH end
  return F.num(x, dec or F.sig_decimals(x, 3))
end

local SHORT = { ["torch-L4-ps-tied-w30cos-d0"] = "Closest", ref = "Ref" }
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

local function ppl_cis(def, s, S)
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.metric == "val_loss" then
      local P = S .. F.macro(c.treatment) .. "Vs" .. F.macro(c.baseline)
      def(P .. "PplChangeCI", pct_interval(data.interval(c)))
    end
  end
end

local function replication(def, s, S)
  local r = s.summary.replication
  if type(r) ~= "table" then return end
  local per_claim = {}
  for _, e in ipairs(r.entries or {}) do
    per_claim[e.claim] = (per_claim[e.claim] or 0) + 1
  end
  for _, c in ipairs(r.claims or {}) do
    local C = S .. "Rep" .. F.macro(c.claim)
    def(C .. "Verdict", F.escape(c.verdict or F.DASH))
    def(C .. "Reason", F.escape(require("repro.analysis.replication").claim_reason(c)))
  end
  -- the claim study's closest set-up is named "Closest" whatever the set-up search chose
  -- (on make reproduce QUICK=1's records it can be the reference itself), the GPT-2
  -- reference "Ref"; \<S>CloseLN and \<S>CloseRMS are the closest set-up's comparisons'
  -- macro prefixes (main.tex: \M{\CloseLN PplChange})
  local closest = type(s.summary.claim) == "table" and type(s.summary.claim.closest) == "table"
    and s.summary.claim.closest.setup or "torch-L4-ps-tied-w30cos-d0"
  def(S .. "CloseLN", S .. F.macro(closest .. "-layernorm") .. "Vs" .. F.macro(closest .. "-none"))
  def(S .. "CloseRMS", S .. F.macro(closest .. "-rmsnorm") .. "Vs" .. F.macro(closest .. "-none"))
  local function short_names(setup)
    local out = {}
    if setup == closest then out[#out + 1] = "Closest" end
    if setup == "ref" then out[#out + 1] = "Ref" end
    if #out == 0 then out[1] = SHORT[setup] or F.macro(setup) end
    return out
  end
  local entries = {}
  for _, e in ipairs(r.entries or {}) do
    local setup = split(e.treatment or "")
    for _, name in ipairs(short_names(setup)) do entries[#entries + 1] = { e = e, name = name } end
  end
  for _, en in ipairs(entries) do
    local e = en.e
    local _, norm = split(e.treatment or "")
    local E = S .. "Rep" .. F.macro(e.claim) .. en.name
    if e.claim == "gradient_norm_ordering" then E = E .. F.macro(norm) end
    local log = e.scale == "log_ratio"
    local o = e.original or {}
    local rep = e.replication or {}
    local st = e.stats or {}
    def(E .. "Verdict", F.escape(e.verdict or F.DASH))
    def(E .. "Original", log and pct(o.estimate) or num(o.estimate))
    def(E .. "OriginalLog", num(o.estimate, 4))
    if log then def(E .. "Estimate", pct(rep.mean)) end
    def(E .. "EstimateLog", num(rep.mean, 4))
    if log then
      def(E .. "CI", pct_interval(st.ci))
      def(E .. "PI", pct_interval(st.pi))
      def(E .. "CILog", F.interval(st.ci, 4))
      def(E .. "PILog", F.interval(st.pi, 4))
      def(E .. "DThreeThree", num(st.d33_raw, 4))
      def(E .. "TelescopeP", F.p(st.telescope_p))
    else
      -- no prediction interval on this scale: the Hodges-Lehmann estimate and interval
      def(E .. "Estimate", num(rep.hodges_lehmann))
      def(E .. "CI", F.interval(rep.hodges_lehmann_ci, F.sig_decimals(
        math.max(math.abs((rep.hodges_lehmann_ci or {})[1] or 0),
          math.abs((rep.hodges_lehmann_ci or {})[2] or 0)), 3)))
    end
    def(E .. "Direction", e.same_direction and "same" or "opposite")
  end
end

local function tasks(def, s, S)
  local t = s.summary.tasks
  if type(t) ~= "table" then return end
  local beyond, beyond_norm = 0, 0
  for _, b in pairs(t.beyond_ngram or {}) do
    local any, any_norm = false, false
    for _, v in ipairs(b.variants or {}) do
      any = true
      local _, norm = split(v)
      if norm ~= "none" then any_norm = true end
    end
    if any then beyond = beyond + 1 end
    if any_norm then beyond_norm = beyond_norm + 1 end
  end
  def(S .. "BeyondNgramTasks", string.format("%d", beyond))
  def(S .. "BeyondNgramNormTasks", string.format("%d", beyond_norm))
  local measurable, scored = 0, 0
  for _, d in ipairs(t.demos or {}) do
    scored = scored + 1
    if d.measurable then measurable = measurable + 1 end
  end
  def(S .. "FewShotMeasurable", string.format("%d", measurable))
  def(S .. "FewShotTasks", string.format("%d", scored))
  def(S .. "HypothesesVerdict",
    (measurable == 0 or beyond == 0) and "not testable here" or "testable")
end

local function h1a(def, s, S)
  local h = s.summary.h1a
  if type(h) ~= "table" or type(h.norms) ~= "table" then return end
  local names = {}
  for nm in pairs(h.norms) do names[#names + 1] = nm end
  table.sort(names)
  for _, nm in ipairs(names) do
    local e = h.norms[nm]
    local N = S .. "HOneA" .. F.macro(nm)
    def(N .. "Verdict", F.escape(require("repro.core.extension").load("h1a", "paper").verdict_words(e)))
    def(N .. "Supports", e.supports and "yes" or "no")
    def(N .. "Lower", e.lower and "yes" or "no")
    def(N .. "Beyond", e.beyond and "yes" or "no")
    def(N .. "Stabilized", e.stabilized and "yes" or "no")
    local a = e.accuracy or {}
    def(N .. "AccCoef", num(a.coef, 3))
    def(N .. "AccCI", F.interval(a.ci, 3))
    local b = e.accuracy_given_loss or {}
    def(N .. "AccGivenLossCoef", num(b.coef, 3))
    def(N .. "AccGivenLossCI", F.interval(b.ci, 3))
    for _, st in ipairs(e.stability or {}) do
      local K = N .. "Stab" .. F.macro(st.metric)
      def(K .. "Coef", num(st.coef, 3))
      def(K .. "CI", F.interval(st.ci, 3))
      if st.log then
        local ci = type(st.ci) == "table" and finite(st.ci[1]) and finite(st.ci[2])
          and { math.exp(st.ci[1]), math.exp(st.ci[2]) } or nil
        def(K .. "Factor", finite(st.coef) and num(math.exp(st.coef), 3) or F.DASH)
        def(K .. "FactorCI", F.interval(ci, 3))
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

function M.numbers(def, s, S)
  ppl_cis(def, s, S)
  replication(def, s, S)
  tasks(def, s, S)
  h1a(def, s, S)
  stability(def, s, S)
end

return M
