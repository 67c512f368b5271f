-- The suite's words: each code a summary holds (verdict, reason, interval kind, note)
-- and the sentences made from a summary's numbers.  summary.json holds codes, names and
-- numbers only; the terminal, the report and the paper say them through this module.
local stats = require "stats"
local engine = require "engine"
local reasons = require "repro.analysis.reasons"
local provenance = require "repro.record.provenance"
local base = require "repro.core.base"

local set_of = base.set_of

local M = {}

local function plural(n) return n == 1 and "" or "s" end

-- A number for the terminal and the summary's texts: 4 significant digits, "?" for none.
function M.fmt(x)
  if x == nil then return "?" end
  local s = string.format("%.4g", x)
  return s == "-0" and "0" or s
end

local fmt = M.fmt

-- An integral number as digits (3.0 as "3"), and a list of them as "1, 3, 7".
function M.int(x) return string.format("%d", x) end
function M.int_list(t)
  local out = {}
  for i, x in ipairs(t) do out[i] = M.int(x) end
  return table.concat(out, ", ")
end

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
    fmt(m), fmt(tost.p_holm)) or ("no TOST: " .. (M.tost_entry(tost, c.n) or "undefined"))
  if code == "holm_better" or code == "holm_worse" then
    return string.format("Holm-adjusted p %s <= alpha %s, the interval lies on the %s side " ..
      "of 0 and |mean difference| %s >= the minimum effect %s", fmt(why.p_holm), fmt(alpha),
      why.verdict, fmt(math.abs(why.mean)), fmt(m))
  elseif code == "tost_equivalent" then
    return string.format("the TOST at +-%s has Holm-adjusted p %s <= alpha %s", fmt(m),
      fmt(why.tost_p_holm), fmt(alpha))
  elseif code == "cannot_reach" then
    return M.mde_reason(c.mde_adjusted, c.n)
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


-- The training-loss multiple that makes a spike (analysis/records.lua counts them).
M.SPIKE_FACTOR = 1.5
local DIVERGED = string.format("1 if the run stopped on a non-finite loss or gradient norm, " ..
  "or on %d consecutive training losses above the loss at initialization + %g nat, else 0",
  engine.DIVERGE_STEPS, engine.DIVERGE_MARGIN)
local SPIKES = string.format("number of steps whose training loss is non-finite or exceeds " ..
  "%g times the smallest training loss of all earlier steps (a divergence counts as one " ..
  "spike)", M.SPIKE_FACTOR)

-- The metrics, each one's words once: label and short (LaTeX: tables, axes), dec
-- (decimals), noun (what it is, in a sentence), one (a count's singular), unit, better
-- (the way it improves, where it is not down), macro (its part of a numbers.tex name),
-- def (how the suite computes it), diverged (defined for a diverged run too), and kind:
--   nats    a loss in nats, the log of a perplexity (`ppl` names it): a change is quoted
--           as the change of that perplexity in percent and the difference in nats; never
--           as a percentage of the loss
--   count   a count per run: quoted as counts (means and their difference), never as a
--           percentage of the baseline's count, which may be 0
-- A metric without a kind is quoted as its difference in its own unit.
M.METRIC = {
  val_loss = { macro = "ValLoss", label = "val.\\ loss (nats)", short = "val.\\ loss", dec = 4,
    noun = "validation loss", unit = "nats", kind = "nats", ppl = "validation perplexity" },
  val_ppl = { macro = "ValPpl", label = "val.\\ perplexity", short = "val.\\ PPL", dec = 3,
    noun = "validation perplexity" },
  val_acc = { better = "higher", macro = "ValAcc", label = "val.\\ accuracy", short = "accuracy", dec = 4,
    noun = "validation accuracy" },
  -- the task suite's macro accuracy (lua/repro/tasks): the mean over its tasks
  task_macro_acc_0shot = { better = "higher", label = "0-shot macro acc.", short = "0-shot macro accuracy",
    dec = 4, noun = "zero-shot macro accuracy over the tasks" },
  task_macro_acc_3shot = { better = "higher", label = "3-shot macro acc.", short = "3-shot macro accuracy",
    dec = 4, noun = "3-shot macro accuracy over the tasks" },
  -- the mean over the character classes present (letter, digit, punctuation, space) of
  -- their accuracy: not the claim's "mock macro accuracy" (read as bal_acc)
  acc_macro = { better = "higher", macro = "AccMacro", label = "class-macro accuracy", short = "class-macro acc.", dec = 4,
    noun = "accuracy averaged over the character classes" },
  bal_acc = { better = "higher", label = "balanced accuracy", short = "bal.\\ acc.", dec = 4,
    noun = "balanced accuracy (mean per-symbol recall)" },
  bal_subset_acc_mean = { better = "higher", label = "balanced acc.\\ (150 pos.)", short = "bal.\\ acc.\\ 150",
    dec = 4, noun = "balanced accuracy on 150-position subsets" },
  ece = { label = "ECE", short = "ECE", dec = 4, noun = "expected calibration error" },
  brier = { label = "Brier score", short = "Brier", dec = 4, noun = "Brier score" },
  temp_opt = { macro = "TempOpt", label = "optimal temperature $T^*$", short = "$T^*$", dec = 3,
    noun = "optimal temperature" },
  nll_temp_1 = { macro = "NllTOne", label = "NLL at $T = 1$", short = "NLL($T{=}1$)", dec = 4,
    noun = "NLL at $T = 1$", unit = "nats" },
  nll_temp_opt = { macro = "NllTOpt", label = "NLL at $T^*$", short = "NLL($T^*$)", dec = 4,
    noun = "NLL at the optimal temperature", unit = "nats" },
  final_grad_norm = { macro = "GradNorm", label = "final grad norm", short = "grad norm", dec = 3,
    noun = "final gradient norm" },
  embed_norm = { macro = "EmbedNorm", label = "embedding norm", short = "embed norm", dec = 3,
    noun = "embedding norm" },
  n_spikes = { macro = "Spikes", diverged = true, def = SPIKES, label = "loss spikes per run", short = "spikes", dec = 1,
    noun = "loss spikes", one = "loss spike", unit = "spikes", kind = "count" },
  diverged = { macro = "Diverged", diverged = true, def = DIVERGED, label = "divergence rate", short = "diverged", dec = 2,
    noun = "diverged runs", one = "diverged run", unit = "runs", kind = "count" },
  max_loss_ratio = { def = "largest ratio of a step's training loss to the smallest loss of all earlier steps (undefined for a diverged run)", label = "max loss ratio", short = "max ratio", dec = 3,
    noun = "largest loss ratio" },
  train_loss = { label = "train loss (nats)", short = "train loss", dec = 4,
    noun = "training loss", unit = "nats", kind = "nats", ppl = "training perplexity" },
  logit_norm = { label = "logit norm", short = "logit norm", dec = 3, noun = "logit norm" },
  max_logit = { label = "max logit", short = "max logit", dec = 3, noun = "largest logit" },
  -- the outcomes of a learning-rate sweep, per seed over a group's grid (lua/repro/analysis/lrsens.lua)
  mean_max_loss_jump = { label = "mean largest loss jump (nats)", short = "loss jump",
    dec = 3, noun = "mean largest jump of the training loss over the grid", unit = "nats" },
  gmean_max_grad_norm = { label = "largest grad norm (geom.\\ mean over the grid)",
    short = "largest grad norm", dec = 3,
    noun = "geometric mean over the grid of the largest gradient norm" },
  gmean_logit_growth = { label = "logit growth, ratio to step 0 (geom.\\ mean)",
    short = "logit growth", dec = 3,
    noun = "geometric mean over the grid of the growth of the largest logit" },
  mean_grad_norm_cv_after_warmup = { label = "grad norm variation after warmup (mean)",
    short = "grad norm variation after warmup", dec = 3,
    noun = "mean over the grid of the gradient norm's coefficient of variation after warmup" },
  n_diverged = { label = "divergences over the grid (count)", short = "divergences", dec = 2,
    noun = "divergences over the grid", one = "divergence", unit = "grid values",
    kind = "count" },
  log10_diverge_lr = { label = "$\\log_{10}$ of the first diverging lr", short = "divergence lr",
    dec = 2, noun = "$\\log_{10}$ of the first learning rate at which the run diverged",
    unit = "decades" },
  -- the engine's instability measures, defined for a diverged run too
  init_loss = { label = "initial loss (nats)", short = "initial loss", dec = 4,
    noun = "loss at initialization", unit = "nats", diverged = true },
  max_loss_jump = { label = "largest loss jump (nats)", short = "largest loss jump", dec = 3,
    noun = "largest rise of the training loss above the best loss before it", unit = "nats",
    diverged = true },
  max_grad_norm = { label = "largest grad norm", short = "largest gradient norm", dec = 3,
    noun = "largest pre-clip gradient norm", diverged = true },
  grad_norm_cv = { label = "grad norm variation", short = "gradient norm variation", dec = 3,
    noun = "coefficient of variation (sd over mean) of the pre-clip gradient norm" },
  max_grad_norm_step = { label = "step of the largest grad norm", short = "its step", dec = 0,
    noun = "step of the largest gradient norm", diverged = true },
  max_loss_jump_step = { label = "step of the largest loss jump", short = "its step", dec = 0,
    noun = "step of the largest loss jump", diverged = true },
  max_abs_logit = { label = "largest |logit|", short = "largest logit", dec = 3,
    noun = "largest absolute logit of a training batch", diverged = true },
  logit_growth = { label = "logit growth", short = "logit growth", dec = 3,
    noun = "largest |logit| of a training batch over its value at step 0", diverged = true },
  diverge_step = { label = "divergence step", short = "diverge step", dec = 0,
    noun = "step at which the run diverged", diverged = true },
  diverge_lr = { label = "divergence lr", short = "diverge lr", dec = 4,
    noun = "learning rate at which the run diverged", diverged = true },
  clip_fraction = { label = "clipped share of steps", short = "clipped", dec = 3,
    noun = "share of the logged steps the gradient clip scaled down",
    def = "the fraction of the logged steps whose pre-clip gradient norm exceeds grad_clip, "
      .. "i.e. the steps the clip scaled down (0 when grad_clip is 0; computed only for a "
      .. "study that names it)" },
  ["val_loss_after_<k>"] = { label = "val.\\ loss after $k$ steps", short = "val.\\ loss at $k$",
    dec = 4, noun = "validation loss after k steps", unit = "nats",
    def = "the validation loss of the periodic diagnostics (log.csv's d_val_loss) after k "
      .. "optimizer steps, the row of step k - 1; undefined unless diag_every divides k and "
      .. "the run took k steps (computed only for a study that names it)" },
}

-- Two sweep outcomes measured from the end of warmup on (analysis/lrsens.lua
-- AFTER_WARMUP), worded as the whole-run ones with "after warmup".
for _, name in ipairs({ "mean_max_loss_jump", "gmean_max_grad_norm" }) do
  local m = M.METRIC[name]
  M.METRIC[name .. "_after_warmup"] = { label = m.label .. " after warmup",
    short = m.short .. " after warmup", dec = m.dec, unit = m.unit,
    noun = m.noun .. ", after warmup" }
end

-- A metric's entry of M.METRIC (val_loss_after_30 is val_loss_after_<k>'s), or nil.
function M.metric(m)
  return M.METRIC[m] or (type(m) == "string" and m:match("^val_loss_after_%d+$") and
    M.METRIC["val_loss_after_<k>"]) or nil
end

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

-- Why a summary's TOST entry (compare.lua) has no p, or nil: its `reason` code with the
-- comparison's n pairs.
function M.tost_entry(t, n)
  if t.reason == "no_pairs" then return "no pairs" end
  if not t.reason then return nil end
  return M.tost({ degenerate = true, reason_code = t.reason, n = n, test = t.test })
end

-- Why a summary's TOST fell back to the exact sign flip, or nil.
function M.tost_fallback(t, n)
  if not t.fallback then return nil end
  return M.tost({ degenerate = true, reason_code = t.fallback, n = n, test = "t" }) ..
    "; the exact sign-flip TOST instead"
end

-- Why the minimum detectable effect of entry mde (compare.lua's mde_adjusted) is
-- undefined, or nil.
function M.mde_reason(mde, n)
  if not mde or not mde.reason then return nil end
  if mde.reason == "cannot_reach" then
    return string.format("the %s test cannot reach alpha / m = %s with %d pair%s (it needs %d)",
      mde.test == "t" and "t" or "exact sign-flip", fmt(mde.level), n, plural(n), mde.needs)
  end
  return "the differences have no spread: sd = 0 or n < 2"
end

M.DECISION_RULE = "The Holm family is the pre-registered primary metric's comparisons and "
  .. "interactions (m tests), with the p values of the pre-registered test (analysis.test: "
  .. "the paired t-test, or the exact sign-flip test). For each comparison on the primary "
  .. "metric: better if the Holm-adjusted p <= alpha, the decision interval of the mean "
  .. "difference (treatment - baseline; the 1 - alpha t interval for the t-test, the exact "
  .. "sign-flip inversion interval for the sign flip) lies entirely on the better side of "
  .. "zero and |mean difference| >= min_effect; worse, symmetrically; equivalent if the "
  .. "paired TOST at delta = min_effect by the same test, Holm-adjusted over the family, "
  .. "has p <= alpha; otherwise inconclusive. Every other metric is exploratory: "
  .. "unadjusted p, no verdict. Each interaction on the primary metric (the per-seed "
  .. "difference of two paired effects, effect a - effect b) gets a verdict by the same "
  .. "rule: better if effect a is the more favourable by at least min_effect (Holm-adjusted "
  .. "p <= alpha, the interval on that side of zero), worse if effect b is, equivalent if "
  .. "the two effects agree within +-min_effect by the TOST, otherwise inconclusive. The "
  .. "minimum detectable effect is at the Holm first-step "
  .. string.format("level alpha / m and %g %% power; BCa intervals are descriptive.",
    100 * stats.DEFAULT_POWER)

local INTERVAL_NAME = { t = "t", signflip = "exact sign-flip" }

-- A family's size in words, agreeing in number: "1 test", "the 3 tests".
function M.tests_words(n)
  return n == 1 and "1 test" or string.format("the %d tests", n)
end

-- The rule a verdict sentence is "by".
local function rule_words(an)
  return string.format("the pre-registered rule (%s is better, minimum effect %s, " ..
    "alpha %s, %s test, Holm over %s of the primary metric)", an.better,
    fmt(an.min_effect), fmt(an.alpha), an.test == "t" and "paired t" or "exact sign-flip",
    M.tests_words(an.m))
end

-- Why entry e (a comparison, or an interaction: no treatment) has no pairs.
local function no_pairs_words(e)
  return e.treatment and "no seed with a finite result for both runs" or
    "no seed with finite results for all four runs"
end

-- The pieces both verdict sentences share: entry e's decision interval (`of` names what
-- it is an interval of, `units` what its n counts), its tests, and the closing reason.
local function interval_words(e, an, of, units)
  local level = string.format("%g %%", 100 * (1 - an.alpha))
  local ci = e.ci_decision
  if not ci then
    return string.format("no %s interval (the sign-flip test cannot reject at alpha with " ..
      "%d %s)", level, e.n, units)
  end
  return string.format("%s %s interval %s%s to %s", level,
    INTERVAL_NAME[e.ci_decision_kind] or e.ci_decision_kind, of, fmt(ci[1]), fmt(ci[2]))
end

local function p_words(e)
  local tost = e.tost or {}
  return string.format("Holm-adjusted p %s; TOST p %s; %d seeds", fmt(e.p_holm),
    tost.p_holm and fmt(tost.p_holm) or "undefined", e.n)
end

local function because(verdict, reason)
  return verdict == "inconclusive" and (", because " .. reason) or ""
end

-- The current rule's decision (reasons.decide, the one place it is made) for entry e on
-- the primary metric, headed `head`: verdict, sentence (`body(verdict)` gives it up to the
-- verdict), and the reason in a few words (the terminal's verdict table prints it).
local function decided(e, an, head, body)
  local why = reasons.decide(e, an)
  if why.code == "no_pairs" then
    local reason = no_pairs_words(e)
    return "inconclusive", string.format("%s: %s: inconclusive by %s.", head, reason,
      rule_words(an)), reason
  end
  local reason = M.verdict_words(why, e)
  return why.verdict, string.format("%s by %s%s.", body(why.verdict), rule_words(an),
    because(why.verdict, reason)), reason
end

-- A family comparison c's verdict, sentence and reason.
function M.verdict(c, an)
  return decided(c, an, string.format("%s vs %s on %s", c.treatment, c.baseline, c.metric),
    function(verdict)
      return string.format("With %s, %s was %s; %s; %s: %s", c.treatment, c.metric,
        M.change_words(c, c.mean), interval_words(c, an, "of the difference ", "pairs"),
        p_words(c), verdict)
    end)
end

-- Interaction e's verdict, sentence and reason.  better: effect a (e.a[1] vs e.a[2]) is
-- the more favourable of the two.
local INTERACTION_MEANING = {
  better = "the effect in the first pair is the more favourable",
  worse = "the effect in the second pair is the more favourable",
  equivalent = "the two effects agree within the minimum effect",
  inconclusive = "no decision" }
function M.interaction_verdict(e, an)
  local function side_text(side)
    if type(side[1]) == "table" then
      return string.format("the mean of %d paired differences", #side)
    end
    return string.format("%s vs %s", side[1], side[2])
  end
  local head = string.format("Interaction %s on %s (%s, minus %s)", e.name, e.metric,
    side_text(e.a), side_text(e.b))
  return decided(e, an, head, function(verdict)
    return string.format("%s: the first effect minus the second is %s on average; %s; %s: " ..
      "%s (%s)", head, fmt(e.mean), interval_words(e, an, "", "seeds"), p_words(e), verdict,
      INTERACTION_MEANING[verdict])
  end)
end

-- Why a sequential comparison e (summary.sequential.comparisons) stopped, in words.
function M.sequential_reason(e, design)
  local lk = e.looks and e.looks[#e.looks]
  local where = lk and string.format("at look %d (%d seeds per variant)", lk.look, lk.n) or ""
  local ci = lk and lk.ci and string.format("[%s, %s]", fmt(lk.ci[1]), fmt(lk.ci[2])) or
    "no interval"
  if e.decision == "difference" and lk.draw then
    return string.format("%s the statistic %s lay on its boundary's atom, below %s, and the " ..
      "comparison's draw %s fell below the atom's share %s (%s interval %s)", where,
      fmt(lk.statistic), fmt(lk.bound), fmt(lk.draw), fmt(lk.gamma),
      M.INTERVAL_KIND[design.test] or design.test, ci)
  elseif e.decision == "difference" then
    return string.format("%s the statistic %s reached its boundary %s (%s interval %s)", where,
      fmt(lk.statistic), fmt(lk.bound), M.INTERVAL_KIND[design.test] or design.test, ci)
  elseif e.decision == "equivalence" then
    return string.format("%s the repeated interval %s lies inside +-%s", where, ci,
      fmt(design.margin))
  elseif e.decision == "futility" then
    return string.format("%s the repeated interval %s excludes the target effect %s", where,
      ci, fmt(design.target))
  elseif e.decision == "cap" then
    return string.format("%s, the cap, without a decision: %s", where, lk and lk.ci and
      ("the repeated interval " .. ci) or "no repeated interval")
  end
  return "open: the next look needs " .. tostring(e.next) .. " seeds per variant"
end

-- A sequential design's codes in words (summary.sequential.design, its looks' decisions).
M.SEQ_SHAPE = { obf = "O'Brien-Fleming", pocock = "Pocock" }
M.SEQ_TEST = { t = "paired t", signed_rank = "Wilcoxon signed-rank" }
M.SEQ_ESTIMATE = { t = "mean difference", signed_rank = "Hodges-Lehmann estimate" }
M.SEQ_DECISION = { continue = "go on", difference = "stop: difference",
  equivalence = "stop: equivalence", futility = "stop: futility", cap = "stop: the cap" }

-- How design d's bounds were made, in a few words.
function M.sequential_boundary(d)
  if d.boundary ~= "spending" then return "constant " .. fmt(d.c) end
  return d.test == "t" and "alpha spent on sign flips given |d|, ties by a keyed draw" or
    "alpha spent on the exact null law, its atom by a keyed draw"
end

-- A sequential design d (summary.sequential.design) in one sentence.
function M.sequential_design(d)
  return string.format("looks at %s seeds per variant, the last the cap; %s boundaries " ..
    "for the %s test (%s), two-sided alpha %s over %d comparison%s (Bonferroni); " ..
    "stops: %s%s%s", M.int_list(d.looks), M.SEQ_SHAPE[d.shape] or tostring(d.shape),
    M.SEQ_TEST[d.test] or tostring(d.test), M.sequential_boundary(d), fmt(d.alpha), d.m,
    plural(d.m), table.concat(d.stop, ", "),
    d.margin and ("; equivalence margin +-" .. fmt(d.margin)) or "",
    d.target and ("; target effect " .. fmt(d.target)) or "")
end

-- The reason of a verdict entry v (the summary's verdicts or interaction_verdicts: its
-- `reason` code) in words, from its comparison or interaction c under analysis an.
function M.reason(v, c, an)
  if v.reason == "no_pairs" then return no_pairs_words(c) end
  return M.verdict_words(reasons.decide(c, an), c)
end

-- The first entry of list (comparisons, verdicts) with c's treatment, baseline and metric.
function M.find_comparison(list, c)
  for _, e in ipairs(list or {}) do
    if e.treatment == c.treatment and e.baseline == c.baseline and e.metric == c.metric then
      return e
    end
  end
  return nil
end

-- The entry (comparison or interaction) a verdict v of summary sum decides.
function M.entry_of(v, sum)
  if not v.name then return M.find_comparison(sum.comparisons, v) end
  for _, e in ipairs(sum.interactions or {}) do
    if e.name == v.name and e.metric == v.metric then return e end
  end
end

-- A verdict v of summary sum in one sentence (a comparison's or an interaction's).
function M.sentence(v, sum)
  local e = assert(M.entry_of(v, sum), "words.sentence: the verdict's entry is missing")
  local fn = v.name and M.interaction_verdict or M.verdict
  return select(2, fn(e, sum.analysis))
end

-- Which way metric m improves where a study declares no direction for it: its entry's,
-- else up for an accuracy (a task's), down for anything else.
function M.better_of(m)
  local e = M.metric(m)
  return e and e.better or (m:find("acc", 1, true) and "higher" or "lower")
end

-- A probability of improvement (a comparison's `improvement`) in words: "0.9 [0.55, 1]".
function M.improvement(imp)
  if not imp or not imp.share then return "-" end
  return fmt(imp.share) .. (imp.ci and string.format(" [%s, %s]", fmt(imp.ci[1]),
    fmt(imp.ci[2])) or "")
end

-- The interval kinds a summary names, in words.
M.INTERVAL_KIND = { t = "t", signflip = "exact sign-flip",
  signed_rank = "exact Wilcoxon signed-rank", BCa = "BCa", point = "point" }

-- A test of the family (analysis.family_tests) as a label: "a vs b", "interaction x".
function M.family_label(f)
  if f.interaction then return "interaction " .. f.interaction end
  return f.treatment .. " vs " .. f.baseline
end

-- The Holm family of analysis an in words.
function M.family(an)
  local nc, ni = #(an.comparisons or {}), #(an.interactions or {})
  local labels = {}
  for i = 1, nc + ni do
    local f = (an.family_tests or {})[i]
    labels[i] = f and M.family_label(f) or "?"
  end
  if nc + ni == 0 then
    return "No confirmatory test: the study pre-registered none (analysis.comparisons = {}, " ..
      "a descriptive study): no family, no verdicts"
  end
  local expl = an.exploratory_metrics or {}
  return string.format("Holm over %s of the primary metric %s: %d comparison%s (%s)%s; p " ..
    "from the %s; first-step level alpha / m = %s. Exploratory (unadjusted p, no verdict): %s",
    M.tests_words(nc + ni), an.primary, nc, plural(nc), table.concat(labels, ", ", 1, nc),
    ni > 0 and string.format(" and %d interaction%s (%s)", ni, plural(ni),
      table.concat(labels, ", ", nc + 1, nc + ni)) or "",
    (an.test or "t") == "t" and "paired t-test (the exact sign-flip p where t is undefined)"
      or "exact sign-flip test", fmt(an.holm_first_level),
    #expl > 0 and table.concat(expl, ", ") or "none")
end

-- Rule 1's family in words, for a study registered under rule 1 (nil otherwise).
function M.family_rule1(an)
  if an.registered_rule ~= 1 then return nil end
  local nc, ni, nm = #an.comparisons, #(an.interactions or {}), #an.metrics
  return string.format("Holm over %s of this study: %d comparison%s and %d interaction%s, " ..
    "each on %d metric%s (%s); p from the paired t-test, the exact sign-flip p where t is " ..
    "undefined, 1 where neither is defined", M.tests_words((nc + ni) * nm), nc, plural(nc),
    ni, plural(ni), nm, plural(nm), table.concat(an.metrics, ", "))
end

-- Why a study is analysed under a rule it did not register (nil when it registered it).
function M.rule_note(an)
  if (an.registered_rule or an.rule) >= an.rule then return nil end
  return string.format("This study was pre-registered under decision rule %d and ran before " ..
    "rule %d existed; it is re-analysed under rule %d, and its registered verdicts are kept " ..
    "as verdict_rule1.", an.registered_rule, an.rule, an.rule)
end

-- Where a comparison's decision p came from, as a note's tail.
local function holm_note(e)
  if e.p_source == "p_t" or (e.p_source == "p_signflip" and e.test == "signflip") then
    return ""
  end
  return e.p_source == "p_signflip" and "; the decision uses its exact sign-flip p" or
    "; the decision uses p = 1"
end

-- The design's notes of a summary, derived from its analysis: seeds from power capped by
-- the maximum, a test that cannot reach the Holm level (a study registered before that
-- check).
local function design_notes(summary)
  local power = require "repro.study.power"
  local an, out = summary.analysis or {}, {}
  local p = an.seeds_from_power
  if p and p.capped then out[#out + 1] = "design: " .. power.cap_note(p) end
  local reach = an.m and an.m > 0 and power.reach_note(an.test or "t", #(summary.seeds or {}),
    an.alpha, an.m, an.holm_first_level)
  if reach and (an.registered_rule or an.rule) < an.rule then
    out[#out + 1] = string.format("design: %s (accepted: the study was pre-registered under " ..
      "decision rule %d, before this check existed)", reach, an.registered_rule)
  end
  return out
end

-- A note of the summary (its `notes`: a code and the names and numbers behind it) in words.
function M.note(n, summary)
  local code = n.code
  if code == "set" then
    return "every run was changed from the study file by --set " ..
      require("repro.core.json").encode(summary.command_line_overrides)
  elseif code == "no_value" then
    return string.format("%s/seed-%d: no value for %s in its record", n.variant, n.seed,
      table.concat(n.metrics, ", "))
  elseif code == "diverged" then
    return string.format("%s: %d of %d runs diverged (seed%s %s); they are left out of every " ..
      "mean and comparison except on diverged and n_spikes", n.variant, #n.seeds, n.runs,
      plural(#n.seeds), M.int_list(n.seeds))
  elseif code == "bca_caveat" then
    return string.format("%s vs %s on %s: the BCa interval is descriptive only (n = %d < %d: " ..
      "its coverage is below nominal, at most 1 - 2^(1-n) for symmetric differences)",
      n.treatment, n.baseline, n.metric, n.n, stats.BCA_CAVEAT_N)
  elseif code == "left_out" or code == "degenerate" then
    local e = M.entry_of({ metric = n.metric, treatment = n.treatment, baseline = n.baseline,
      name = n.interaction }, summary) or {}
    local parts = {}
    if n.interaction then
      if n.n then
        parts[1] = string.format("%d of %d seeds have finite values for all four runs", n.n,
          n.of)
      end
    elseif n.seeds then
      parts[1] = string.format("seed%s %s left out (a run without a finite value), n = %d",
        plural(#n.seeds), M.int_list(n.seeds), n.n)
    end
    if code == "degenerate" or n.degenerate then
      parts[#parts + 1] = (M.paired(e) or "degenerate") .. holm_note(e)
    end
    local head = n.interaction and string.format("interaction %s on %s", n.interaction,
      n.metric) or string.format("%s vs %s on %s", n.treatment, n.baseline, n.metric)
    return head .. ": " .. table.concat(parts, "; ")
  elseif code == "no_sweep" then
    return string.format("learning-rate sweep: %s/seed-%d has no init_loss (a record from " ..
      "before the engine measured it): no sweep analysis", n.variant, n.seed)
  end
  error("words.note: unknown note code " .. tostring(code))
end

-- Every note of a summary, in words: the command line's, the design's, then the
-- analysis's in the order its steps ran.
function M.notes(summary)
  local out, stored = {}, summary.notes or {}
  for _, n in ipairs(stored) do
    if n.code == "set" then out[#out + 1] = M.note(n, summary) end
  end
  for _, n in ipairs(design_notes(summary)) do out[#out + 1] = n end
  for _, n in ipairs(stored) do
    if n.code ~= "set" then out[#out + 1] = M.note(n, summary) end
  end
  return out
end

-- The codes a summary may hold, by key (tests/lua/test_summary_strings.lua checks them).
local VERDICTS = set_of({ "better", "worse", "equivalent", "inconclusive",
  "no meaningful difference", "reproduced", "not reproduced", "not testable here" })
local STOPS = { "difference", "equivalence", "futility", "cap" }
M.CODES = {
  verdict = VERDICTS, verdict_rule1 = VERDICTS,
  reason = set_of({ "holm_better", "holm_worse", "tost_equivalent", "no_pairs",
    "cannot_reach", "underpowered", "not_significant", "below_min_effect", "includes_zero",
    "constant", "small_n", "no_spread", "open", "continue", table.unpack(STOPS) }),
  decision = set_of({ "continue", table.unpack(STOPS) }),
  interval = set_of({ "t", "signflip", "BCa", "point", "signed_rank" }),
  note = set_of({ "set", "no_value", "diverged", "bca_caveat", "left_out", "degenerate",
    "no_sweep" }),
  why_adopted = set_of(base.sorted_keys(provenance.ADOPTED_WHY)),
}

-- An adopted record of a summary's provenance section ({variant, seed, why_adopted}):
-- "none/seed-1: adopted (<why>)", the words of record/provenance.lua.
function M.adopted(e)
  return string.format("%s/seed-%d: %s", e.variant, math.tointeger(e.seed) or 0,
    provenance.adopted_text(e.why_adopted))
end

return M
