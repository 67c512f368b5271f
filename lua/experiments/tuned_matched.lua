-- The mechanism comparison, confirmatory: matched LayerNorm vs no
-- embedding norm, each at its own best peak learning rate from the finer grid lr_fine.
-- Run with `bin/repro run lua/experiments/tuned_matched.lua` after lr_fine.lua, whose
-- summary it reads (`make reproduce` orders them).
--
-- Why.  tuned_controls found layernorm_matched vs none inconclusive (interval [-0.017,
-- 0.021] nats, power 0.42 at the minimum effect: its pilot sd, 0.012 from 2 degrees of
-- freedom, was half the sd it met, 0.021), and its learning rates came from a half-decade
-- grid.  Here both come from lr_fine's quarter-decade grid, and the seed count from power
-- with the upper confidence limit of the pilot's sd.
--
-- Design (pre-registered before any run).  The final protocol (the default model, 300
-- iterations, warmup 30, cosine decay to min_lr = lr / 10); variant v at the lr and min_lr
-- of repro.best_config("lr_fine", v).  Seeds from power: the least n whose paired t-test
-- at alpha 0.05 has 80 % power for the minimum effect, with the one-sided 80 % upper
-- confidence limit of the sd of lr_fine's pilot comparison (matched LayerNorm vs none at
-- their best lrs, seeds 1-3, 2 degrees of freedom); at least 10, at most 20 (the budget
-- below: if power asks for more, 20 run and the summary gives the power they have);
-- seeds 201, 202, ..., none of them lr_fine's, lr_sweep's or tuned's.
--
-- Analysis (lua/repro/analysis.lua, decision rule 2).  Primary metric val_loss, lower is
-- better; minimum effect 0.02 nats; alpha 0.05; the paired t-test; one comparison
-- (layernorm_matched vs none), so Holm changes nothing; equivalence by the paired TOST at
-- +-0.02.  val_ppl, val_acc, ece, the instability measures and the embedding norm are
-- exploratory.
--
-- Budget.  2 n runs of about 46 s each on the reference 2-core machine (lr_sweep's
-- measurement, diagnostics included): n = 10, 8 minutes at 2 workers; at the cap n = 20,
-- 15 minutes.
local SWEEP = "lr_fine"
local variants = {}
for _, norm in ipairs({ "none", "layernorm_matched" }) do
  local best = repro.best_config(SWEEP, norm)
  variants[#variants + 1] = { name = norm, embed_norm = norm, lr = best.lr,
    min_lr = best.min_lr }
end

return {
  name = "tuned_matched",
  description = "Confirmatory, the mechanism at finely tuned learning rates: the default "
    .. "Pre-LN GPT at the final protocol (300 iterations, warmup 30, cosine to a tenth of "
    .. "the peak) with no embedding norm or layernorm_matched (LayerNorm whose gain starts "
    .. "at the input's RMS), each at its own best peak learning rate from lr_fine's "
    .. "quarter-decade grid, on fresh seeds 201, ... whose count comes from power (80 % at "
    .. "alpha 0.05 for 0.02 nats, with the 80 % upper confidence limit of lr_fine's pilot "
    .. "sd; 10 to 20). Primary val_loss, minimum effect 0.02 nats, paired t-test.",
  depends = { "lr_fine" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { count = { power = 0.8, pilot = SWEEP, upper = 0.8, min = 10, max = 20 },
    first = 201 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none",
    comparisons = { { "layernorm_matched", "none" } },
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
