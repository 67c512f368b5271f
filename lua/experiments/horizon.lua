-- Training length: does the gap between no embedding norm and LayerNorm close
-- when training runs four times longer, at the default learning rate and at each one's
-- tuned learning rate?  Run with `bin/repro run lua/experiments/horizon.lua` after
-- lr_sweep.lua, whose summary it reads (`make reproduce` orders them).
--
-- Why.  At lr 3e-4 LayerNorm's deficit in validation loss shrank from 0.201 nats at 150
-- iterations (prelim) to 0.120 at 300 (final); if it keeps shrinking, the headline is a
-- statement about short training.
--
-- Design (pre-registered before any run).  The default model for 1,200 iterations (warmup
-- 30, cosine decay to a tenth of the peak at step 1,200), validation diagnostics every 25
-- steps (the curves: log.csv's d_* columns over 32 validation windows); no norm and
-- LayerNorm, each at the default peak lr 3e-4 (min_lr 3e-5) and at its own best lr from
-- the sweep (repro.best_config("lr_sweep", v): the best grid point's lr and min_lr, a tenth
-- of it; the resolved values are in every run's config); seeds 1-3.  RMSNorm is left out for the budget (it was within 0.001 nats
-- of LayerNorm at 300 iterations: final's layernorm vs rmsnorm).
--
-- Analysis (lua/repro/analysis/init.lua, decision rule 2).  Primary metric val_loss at step
-- 1,200, lower is better; minimum effect 0.02 nats; alpha 0.05; the paired t-test; Holm over
-- the 2 comparisons LayerNorm vs none at lr 3e-4 and LayerNorm vs none at the tuned rates;
-- equivalence by the paired TOST at +-0.02.  val_ppl, val_acc, ece and the instability
-- measures are exploratory; the gap along training is read from the curves (descriptive).
--
-- Budget.  12 runs of 1,200 iterations, about 3.1 min each (4 x 45 s measured for a default
-- 300-iteration run at 2 threads on the reference 2-core machine, plus the diagnostics and
-- the final evaluation): about 37 min.
local SWEEP = "lr_sweep"
local variants = {}
for _, norm in ipairs({ "none", "layernorm" }) do
  variants[#variants + 1] = { name = norm .. "-lr3e-4", embed_norm = norm, lr = 3e-4,
    min_lr = 3e-5 }
end
for _, norm in ipairs({ "none", "layernorm" }) do
  local best = repro.best_config(SWEEP, norm)
  variants[#variants + 1] = { name = norm .. "-tuned", embed_norm = norm, lr = best.lr,
    min_lr = best.min_lr }
end

return {
  name = "horizon",
  description = "Training length: the default Pre-LN GPT for 1,200 iterations (warmup 30, "
    .. "cosine to a tenth of the peak) with no embedding norm and LayerNorm, each at peak "
    .. "lr 3e-4 and at its own best lr from lr_sweep, seeds 1-3, with validation curves "
    .. "every 25 steps. Primary val_loss at the end, minimum effect 0.02 nats, alpha 0.05, "
    .. "paired t-test, Holm over the 2 comparisons (LayerNorm vs none at each lr "
    .. "setting). 12 runs, about 37 minutes on the reference 2-core machine.",
  base = { iters = 1200, diag_every = 25 },
  variants = variants,
  seeds = { 1, 2, 3 },
  checkpoint_every = 100,
  analysis = {
    baseline = "none-lr3e-4",
    metrics = { "val_loss", "val_ppl", "val_acc", "ece" },
    secondary = { "max_loss_jump", "max_grad_norm", "logit_growth", "embed_norm",
      "final_grad_norm" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = { { "layernorm-lr3e-4", "none-lr3e-4" }, { "layernorm-tuned", "none-tuned" } },
  },
}
