-- H1b, redesigned: does an embedding norm make training more stable when the
-- learning rate is pushed to where the baseline diverges?  Run with
-- `bin/repro run lua/experiments/instability.lua` after lr_sweep.lua (whose warmup-30 runs
-- it copies) and instability_v1.lua (its pilot); `make reproduce` orders them.
--
-- Why.  The first design (instability_v1.lua) could not test H1b: no run diverged, every
-- spike fell in steps 2-15, and its outcome, a spike count with minimum effect 5 against
-- baselines of 0.4-1, was too coarse.  Here the outcomes are continuous, exist for every
-- run (a diverged one too, over the steps it took) and the grid reaches rates where the
-- baseline diverges.
--
-- Design (pre-registered before any run).  The final protocol's model and length (300
-- iterations, cosine decay to min_lr = lr / 10), validation diagnostics every 25 steps; no
-- norm, LayerNorm and RMSNorm x warmup 0 and 30 steps x peak lr 3e-3, 1e-2, 3e-2, 0.1, 0.3
-- (the stress half of lr_sweep's grid; half-decade steps) x seeds 1-3.  Each (norm,
-- warmup) is a group of 5 runs per seed.  The warmup-30 runs are lr_sweep's, config for
-- config, so they are copied; the warmup-0 runs are new.  "Diverged": the training loss
-- or gradient norm is non-finite, or the loss stays above its value at initialization +
-- 1 nat for 10 consecutive steps (lua/experiments/README.md).
--
-- Outcomes (lua/repro/analysis/lrsens.lua, M.OUTCOMES): per seed, over the group's grid,
--   mean_max_loss_jump   mean of max_loss_jump, the largest rise of the training loss above
--                        the best loss reached before it (nats)          PRIMARY
--   gmean_max_grad_norm  geometric mean of the largest pre-clip gradient norm
--   gmean_logit_growth   geometric mean of the growth of the largest |logit| from step 0
--   n_diverged           grid values at which the run diverged
--   log10_diverge_lr     log10 of the first grid lr at which it diverged (censored one
--                        step above 0.3 when it never did)
-- Minimum effects, pre-registered as rules on a pilot, instability_v1 (the same model
-- without warmup at lr 3e-3 and 1e-2, 150 iterations, seeds 1-5; read with repro.result):
-- for each of the first three, a quarter of the pilot's no-norm level of its run measure
-- (over the 10 runs of the pilot's two no-norm settings, the arithmetic mean for the loss
-- jump, the geometric mean for the two ratios, as the outcomes aggregate them; with the
-- records of instability_v1 as committed: 0.405 nats, 5.36 and 1.15); for n_diverged
-- one grid value; for log10_diverge_lr one grid step (0.5).
--
-- Analysis (decision rule 2, applied to the groups' per-seed outcomes: summary.json's
-- sweep_outcomes).  Primary mean_max_loss_jump, lower is better, minimum effect as above;
-- alpha 0.05; the paired t-test; Holm over the 4 comparisons LayerNorm vs none and RMSNorm
-- vs none at warmup 0 and at warmup 30; equivalence by the paired TOST at the minimum
-- effect.  The other outcomes are exploratory, each reported against its own minimum
-- effect.  The summary's lr_sweep section also gives, per group, the loss curve over the
-- grid and where it diverges.  With 3 seeds the t-test needs a large, consistent effect at
-- alpha / 4 (t > 8.9 with 2 degrees of freedom); the design accepts that for the budget.
--
-- Budget.  90 runs, the 45 with warmup 30 copied from lr_sweep: 45 new runs of at most
-- about 46 s (45 s measured for a default run at 2 threads on the reference 2-core
-- machine, plus the diagnostics): 18 at lr <= 1e-2 (14 min), 9 at 3e-2 (up to 7 min),
-- 18 at lr >= 0.1, expected to diverge early (about 3 min; 14 min if none did).  About 20
-- min, at most 35 min.
local PILOT = "instability_v1"
local GRID = {
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
  { tag = "3e-2", lr = 3e-2, min_lr = 3e-3 },
  { tag = "1e-1", lr = 0.1, min_lr = 1e-2 },
  { tag = "3e-1", lr = 0.3, min_lr = 3e-2 },
}
local NORMS = { "none", "layernorm", "rmsnorm" }
local WARMUPS = { 0, 30 }

local variants, groups = {}, {}
for _, w in ipairs(WARMUPS) do
  for _, norm in ipairs(NORMS) do
    local group = norm .. "-w" .. w
    local members = {}
    for _, g in ipairs(GRID) do
      local name = group .. "-lr" .. g.tag
      variants[#variants + 1] = { name = name, embed_norm = norm, warmup = w, lr = g.lr,
        min_lr = g.min_lr }
      members[#members + 1] = name
    end
    groups[#groups + 1] = { name = group, variants = members }
  end
end

-- A quarter of the pilot's no-norm level of a run measure: over the runs of its two
-- no-norm settings, the arithmetic mean (geometric when `geometric`), as the outcome
-- aggregates it.
local function quarter_of_pilot(metric, geometric)
  local sum, n = 0, 0
  for _, v in ipairs({ "none-lr3e-3", "none-lr1e-2" }) do
    for _, x in ipairs(repro.result(PILOT, "per_variant", v, "metrics", metric, "values")) do
      if x then
        sum, n = sum + (geometric and math.log(x) or x), n + 1
      end
    end
  end
  local level = sum / n
  return 0.25 * (geometric and math.exp(level) or level)
end
local deltas = {
  mean_max_loss_jump = quarter_of_pilot("max_loss_jump", false),
  gmean_max_grad_norm = quarter_of_pilot("max_grad_norm", true),
  gmean_logit_growth = quarter_of_pilot("logit_growth", true),
  n_diverged = 1,
  log10_diverge_lr = 0.5,
}
local comparisons = {}
for _, w in ipairs(WARMUPS) do
  comparisons[#comparisons + 1] = { "layernorm-w" .. w, "none-w" .. w }
  comparisons[#comparisons + 1] = { "rmsnorm-w" .. w, "none-w" .. w }
end

return {
  name = "instability",
  description = "H1b, training stability under learning-rate stress: the default Pre-LN "
    .. "GPT for 300 iterations (cosine to a tenth of the peak) with no embedding norm, "
    .. "LayerNorm or RMSNorm, warmup 0 or 30, at peak lr 3e-3 to 0.3 in half-decade steps, "
    .. "seeds 1-3; per seed and group, continuous outcomes over the grid (primary: the "
    .. "mean largest loss jump; also gradient norm, logit growth, divergences), minimum "
    .. "effects from the pilot instability_v1, paired t-test, Holm over the 4 norm-vs-none "
    .. "comparisons. 90 runs, the 45 with warmup 30 copied from lr_sweep: about 20 "
    .. "minutes on the reference 2-core machine.",
  depends = { "lr_sweep" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { 1, 2, 3 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none-w0-lr1e-2",
    metrics = { "max_loss_jump", "max_grad_norm", "logit_growth", "diverged", "val_loss",
      "init_loss" },
    primary = "max_loss_jump",
    better = "lower",
    min_effect = deltas.mean_max_loss_jump,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    sweep = {
      over = "lr", groups = groups, reference = "none-w0", loss = "val_loss", pilot = {},
      outcomes = {
        metrics = { "mean_max_loss_jump", "gmean_max_grad_norm", "gmean_logit_growth",
          "n_diverged", "log10_diverge_lr" },
        primary = "mean_max_loss_jump",
        better = "lower",
        min_effect = deltas.mean_max_loss_jump,
        deltas = deltas,
        comparisons = comparisons,
        test = "t",
      },
    },
  },
}
