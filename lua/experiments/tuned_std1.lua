-- The norm at embedding init N(0, 1), confirmatory: LayerNorm vs
-- no embedding norm with token and position embeddings drawn N(0, 1), each at its own best
-- peak learning rate from lr_sweep_std1.  Run with `bin/repro run
-- lua/experiments/tuned_std1.lua` after lr_sweep_std1.lua, whose summary it reads
-- (`make reproduce` orders them).
--
-- Why.  init_scale found LayerNorm better than no norm at embedding init N(0, 1), at the
-- untuned peak lr 3e-4, where no norm is far from its best.  Here each trains at the
-- learning rate the sweep found best for it, on fresh seeds.
--
-- Design (pre-registered before any run).  The final protocol (the default model, 300
-- iterations, warmup 30, cosine decay to min_lr = lr / 10), embed_init_std = 1; variant v
-- at the lr and min_lr of repro.best_config("lr_sweep_std1", v).  Seeds from power: the
-- least n whose paired t-test at alpha 0.05 has 80 % power for the minimum effect, with
-- the one-sided 80 % upper confidence limit of the sd of the sweep's pilot comparison
-- (LayerNorm vs none at their best lrs, seeds 1-3, 2 degrees of freedom); at least 10, at
-- most 20; seeds 201, 202, ..., none of them the sweep's or init_scale's.
--
-- Analysis (lua/repro/analysis.lua, decision rule 2).  Primary metric val_loss, lower is
-- better; minimum effect 0.02 nats; alpha 0.05; the paired t-test; one comparison
-- (layernorm vs none), so Holm changes nothing; equivalence by the paired TOST at +-0.02.
-- val_ppl, val_acc, ece, the instability measures and the embedding norm are exploratory.
--
-- Budget.  2 n runs of about 46 s each on the reference 2-core machine (lr_sweep's
-- measurement, diagnostics included): n = 10, 8 minutes at 2 workers; at the cap n = 20,
-- 15 minutes.
local SWEEP = "lr_sweep_std1"
local variants = {}
for _, norm in ipairs({ "none", "layernorm" }) do
  local best = repro.best_config(SWEEP, norm)
  variants[#variants + 1] = { name = norm, embed_norm = norm, embed_init_std = 1.0,
    lr = best.lr, min_lr = best.min_lr }
end

return {
  name = "tuned_std1",
  description = "Confirmatory, at embedding init N(0, 1) and tuned learning rates: the "
    .. "default Pre-LN GPT at the final protocol (300 iterations, warmup 30, cosine to a "
    .. "tenth of the peak) with token and position embeddings drawn N(0, 1), no embedding "
    .. "norm or LayerNorm, each at its own best peak learning rate from lr_sweep_std1, on "
    .. "fresh seeds 201, ... whose count comes from power (80 % at alpha 0.05 for 0.02 "
    .. "nats, with the 80 % upper confidence limit of the sweep's pilot sd; 10 to 20). "
    .. "Primary val_loss, minimum effect 0.02 nats, paired t-test.",
  depends = { "lr_sweep_std1" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { count = { power = 0.8, pilot = SWEEP, upper = 0.8, min = 10, max = 20 },
    first = 201 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none",
    comparisons = { { "layernorm", "none" } },
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
  },
}
