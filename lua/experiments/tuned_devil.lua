-- The norms on The Devil's Dictionary at tuned learning rates, confirmatory (stage 2 of 2 on this corpus): no embedding norm vs LayerNorm vs RMSNorm, each at its
-- own best peak learning rate from lr_sweep_devil.  Run with `bin/repro run
-- lua/experiments/tuned_devil.lua` after lr_sweep_devil.lua, whose summary it reads
-- (`make reproduce` orders them).
--
-- Why.  tuned.lua answers the question at tuned learning rates on Tiny Shakespeare; this
-- asks it on another century and genre (data/devil.txt, scripts/corpora.lua), each variant
-- at the learning rate the sweep found best for it on this corpus, on fresh seeds.
--
-- Design (pre-registered before any run).  The final protocol (the default model, GPT-2
-- init, 300 iterations, warmup 30, cosine decay to min_lr = lr / 10), data =
-- data/devil.txt; variant v at the lr and min_lr of repro.best_config("lr_sweep_devil", v).
-- Seeds from power: the least n whose paired t-test at the Holm first-step level alpha / m
-- = 0.05 / 3 has 80 % power for the minimum effect, with the one-sided 80 % upper
-- confidence limit of the largest paired-difference sd of the sweep's pilot comparisons
-- (each norm vs none and LayerNorm vs RMSNorm at their best lrs, seeds 1-2: 1 degree of
-- freedom, so the limit, not the sd itself); at least 8, at most 16 (the budget below: if
-- power asks for more, 16 run and the summary says the design is underpowered, with the
-- power it has); seeds 201, 202, ..., none of them the sweep's or final_devil's.
--
-- Analysis (lua/repro/analysis/init.lua, decision rule 2).  Primary metric val_loss, lower
-- is better; minimum effect 0.02 nats (about 2 % perplexity); alpha 0.05; the paired
-- t-test; Holm over the 3 comparisons on val_loss (LayerNorm vs none, RMSNorm vs none,
-- LayerNorm vs RMSNorm); equivalence by the paired TOST at +-0.02.  val_ppl, val_acc, ece
-- and the instability measures are exploratory.
--
-- Budget, in default runs (300 steps of the 8x128 model on Tiny Shakespeare, about 45 s at
-- 2 threads on the reference 2-core machine, 90 core-seconds; a run here is about 0.96 of
-- one: its validation split is a third of Tiny Shakespeare's).  3 n runs: n = 8, 23
-- default runs (17 minutes, 0.6 core-hours); at the cap n = 16, 46 default runs (35
-- minutes, 1.2 core-hours).
local SWEEP = "lr_sweep_devil"
local variants = {}
for _, norm in ipairs({ "none", "layernorm", "rmsnorm" }) do
  local best = repro.best_config(SWEEP, norm)
  variants[#variants + 1] = { name = norm, embed_norm = norm, lr = best.lr,
    min_lr = best.min_lr }
end

return {
  name = "tuned_devil",
  description = "Confirmatory, on The Devil's Dictionary (data/devil.txt) at tuned learning "
    .. "rates: the default Pre-LN GPT (GPT-2 init) at the final protocol (300 iterations, "
    .. "warmup 30, cosine to a tenth of the peak) with no embedding norm, LayerNorm or "
    .. "RMSNorm, each at its own best peak learning rate from lr_sweep_devil, on fresh "
    .. "seeds 201, ... whose count comes from power (80 % at alpha / 3 for 0.02 nats, with "
    .. "the 80 % upper confidence limit of the sweep's pilot sd; 8 to 16). Primary "
    .. "val_loss, minimum effect 0.02 nats, alpha 0.05, paired t-test, Holm over the 3 "
    .. "comparisons.",
  depends = { SWEEP },
  base = { diag_every = 25, data = "data/devil.txt" },
  variants = variants,
  seeds = { count = { power = 0.8, pilot = SWEEP, upper = 0.8, min = 8, max = 16 },
    first = 201 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none",
    comparisons = { { "layernorm", "none" }, { "rmsnorm", "none" }, { "layernorm", "rmsnorm" } },
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
