-- The mechanism controls at tuned learning rates: does rescaling alone
-- (`scale`) or normalizing alone (`layernorm_matched`) change the loss against no norm,
-- each variant at its own best peak learning rate from the sweep?
-- Run with `bin/repro run lua/experiments/tuned_controls.lua` after tuned.lua (whose no-norm
-- runs it copies) and lr_sweep.lua (whose summary it reads); `make reproduce` orders them.
--
-- Why.  LayerNorm after the embedding does two things at once: it rescales the first
-- block's input (about 25x at the GPT-2 initialization) and it normalizes each token.
-- `scale` multiplies tok + pos by the fixed 1/rho (unit RMS at initialization, no
-- per-token statistics, no parameters); `layernorm_matched` is LayerNorm whose gain
-- starts at rho, so it normalizes without rescaling at initialization (rho: the initial
-- embedding RMS; lua/experiments/README.md).
--
-- Design (pre-registered before any run).  As tuned.lua: the final protocol (300
-- iterations, warmup 30, cosine decay to min_lr = lr / 10); variant v at the lr and min_lr
-- of repro.best_config("lr_sweep", v); seeds from power with lr_sweep as pilot (the
-- largest paired-difference sd of its pilot comparisons), here at alpha / m = 0.05 / 2, at
-- most 26 as in tuned.lua; seeds 101, 102, ..., so the no-norm runs are tuned.lua's,
-- copied.
--
-- Analysis (lua/repro/analysis/init.lua, decision rule 2).  Primary metric val_loss, lower is
-- better; minimum effect 0.02 nats; alpha 0.05; the paired t-test; Holm over the 2
-- comparisons scale vs none and layernorm_matched vs none (a family of its own: the
-- question "which part of LayerNorm does it" is separate from tuned's "does a norm help");
-- equivalence by the paired TOST at +-0.02.  val_ppl, val_acc, ece, the instability
-- measures and the embedding norm are exploratory.
--
-- Budget.  3 n runs, the n no-norm ones copied from tuned (when its n is at least this
-- one's): 2 n runs of about 46 s (45 s measured for a default run at 2 threads on the
-- reference 2-core machine, plus the diagnostics).  With a pilot sd of 0.005 nats n = 4,
-- 6 min; 0.01: n = 6, 9 min; 0.02: n = 13, 20 min; at the cap n = 26, 40 min.
local SWEEP = "lr_sweep"
local variants = {}
for _, norm in ipairs({ "none", "scale", "layernorm_matched" }) do
  local best = repro.best_config(SWEEP, norm)
  variants[#variants + 1] = { name = norm, embed_norm = norm, lr = best.lr,
    min_lr = best.min_lr }
end

return {
  name = "tuned_controls",
  description = "The mechanism controls at tuned learning rates: the default Pre-LN GPT at "
    .. "the final protocol (300 iterations, warmup 30, cosine to a tenth of the peak) with "
    .. "no embedding norm, scale (a fixed rescale to unit RMS) or layernorm_matched "
    .. "(LayerNorm whose gain starts at the input's RMS), each at its own best peak "
    .. "learning rate from lr_sweep, on fresh seeds 101, ... whose count comes from power "
    .. "(80 % at alpha / 2 for 0.02 nats, lr_sweep as pilot); the no-norm runs are "
    .. "tuned's. Primary val_loss, minimum effect 0.02 nats, alpha 0.05, paired t-test, "
    .. "Holm over the 2 comparisons with no norm.",
  depends = { "tuned" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { count = { power = 0.8, pilot = SWEEP, max = 26 }, first = 101 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none",
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
