-- The learning-rate sweep: five embedding treatments over a grid of peak
-- learning rates, summarized per treatment by its best learning rate, where it diverges
-- and its LR sensitivity.  Run with `bin/repro run lua/experiments/lr_sweep.lua` after
-- lr_sweep_a.lua (its 81 runs are copied from there; `make reproduce` orders the two).
--
-- Why.  At the one untuned point of the earlier studies (peak lr 3e-4) an embedding norm
-- is worse, but a norm changes the effective learning rate: LayerNorm multiplies the
-- first block's input by about 25x and, with tied embeddings, the gradient into the shared
-- embedding matrix too.  Comparing variants over a sweep separates "normalizing helps or
-- hurts" from "this variant wants another learning rate" (Wortsman et al. 2023, "Small-scale
-- proxies for large-scale Transformer training instabilities").  The two mechanism
-- controls split LayerNorm in two: `scale` rescales tok + pos by the fixed 1/rho (unit RMS
-- at initialization, no normalization), `layernorm_matched` normalizes each token but
-- starts with gain rho (no rescaling at initialization); rho is the initial embedding RMS
-- (lua/experiments/README.md).
--
-- Design (pre-registered before any run).  The final protocol (the default model, 300
-- iterations, warmup 30, cosine decay to min_lr = lr / 10), validation diagnostics every 25
-- steps; groups none, layernorm, rmsnorm, scale, layernorm_matched, each at the 9 peak
-- learning rates 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0 (half-decade steps, from
-- clearly too small to the issue's ceiling 1.0); seeds 1-3, shared by the groups (a seed
-- gives every group the same initial weights but the norm's own).
--
-- Analysis (lua/repro/analysis/lrsens.lua; summary.json's lr_sweep).  Per group: final val_loss
-- against the learning rate (mean, min and max over seeds, the number that diverged: a run
-- diverges when its loss is non-finite or stays above its loss at initialization + 1 nat
-- for 10 steps, and is then not evaluated); the best learning rate, the grid value with
-- the lowest mean over seeds of min(val_loss, init_loss) (a diverged run counting as its
-- init_loss), flagged when it lies on the grid's edge; the divergence learning rate (the
-- smallest grid value at which a seed diverged, and the smallest from which all did); the
-- LR sensitivity S = E_eta[min(l(eta), l0) - l*], the mean over the grid of that clipped
-- mean loss minus l*, the best such mean over all groups and learning rates, with its 95 %
-- percentile bootstrap interval over seeds (exact: all 3^3 resamples of the seeds, the
-- same for every group) and its difference from no norm with that difference's interval.
-- With 3 seeds these intervals cover less than their nominal 95 % (they span what the seeds
-- span); they describe, the decisions are tuned.lua's.  No hypothesis test here
-- (analysis.comparisons = {}).  The summary also offers pilot_comparisons (the pairs of
-- analysis.sweep.pilot below): each group vs no norm and LayerNorm vs RMSNorm, each at its
-- own best learning rate, paired by seed; the largest of their paired-difference sd sets
-- the seed counts of tuned.lua and tuned_controls.lua (seeds from power with this study as
-- pilot).
--
-- Budget.  135 runs: the 81 of none, layernorm and rmsnorm copied from lr_sweep_a; the 54 of
-- scale and layernorm_matched trained: 36 at lr <= 3e-2 of about 46 s (45 s measured for a
-- default run at 2 threads on the reference 2-core machine, plus the diagnostics) = 28
-- min, and 18 at lr >= 0.1, expected to diverge early (about 3 min; 14 min if none did).
-- About 31 min, at most 42 min.
local GRID = {
  { tag = "1e-4", lr = 1e-4, min_lr = 1e-5 },
  { tag = "3e-4", lr = 3e-4, min_lr = 3e-5 },
  { tag = "1e-3", lr = 1e-3, min_lr = 1e-4 },
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
  { tag = "3e-2", lr = 3e-2, min_lr = 3e-3 },
  { tag = "1e-1", lr = 0.1, min_lr = 1e-2 },
  { tag = "3e-1", lr = 0.3, min_lr = 3e-2 },
  { tag = "1", lr = 1.0, min_lr = 0.1 },
}
local NORMS = { "none", "layernorm", "rmsnorm", "scale", "layernorm_matched" }

local variants, groups, pilot = {}, {}, {}
for _, norm in ipairs(NORMS) do
  local members = {}
  for _, g in ipairs(GRID) do
    local name = norm .. "-lr" .. g.tag
    variants[#variants + 1] = { name = name, embed_norm = norm, lr = g.lr, min_lr = g.min_lr }
    members[#members + 1] = name
  end
  groups[#groups + 1] = { name = norm, variants = members }
  if norm ~= "none" then pilot[#pilot + 1] = { norm, "none" } end
end
-- The pilot comparisons offered to tuned.lua and tuned_controls.lua: each group vs no
-- norm, and LayerNorm vs RMSNorm (tuned.lua's third comparison).
pilot[#pilot + 1] = { "layernorm", "rmsnorm" }

return {
  name = "lr_sweep",
  description = "Learning-rate sweep: the default Pre-LN GPT at the final protocol (300 "
    .. "iterations, warmup 30, cosine to a tenth of the peak) with no embedding norm, "
    .. "LayerNorm, RMSNorm and the two mechanism controls (scale: a fixed rescale to unit "
    .. "RMS; layernorm_matched: LayerNorm with its gain starting at the input's RMS), at "
    .. "peak learning rates 1e-4 to 1.0 in half-decade steps (9), seeds 1-3. Per group: "
    .. "final val_loss against the learning rate, the best learning rate, where it "
    .. "diverges, and the LR sensitivity (Wortsman et al. 2023) with a bootstrap interval "
    .. "over seeds. Descriptive (no test); its pilot comparisons at each group's best "
    .. "learning rate set tuned's seed counts. 135 runs, 81 copied from lr_sweep_a: about "
    .. "31 minutes on the reference 2-core machine.",
  depends = { "lr_sweep_a" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { 1, 2, 3 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none-lr3e-4",
    metrics = { "val_loss", "init_loss", "diverged", "max_loss_jump", "max_grad_norm",
      "logit_growth" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    sweep = { over = "lr", groups = groups, reference = "none", loss = "val_loss",
      pilot = pilot },
  },
}
