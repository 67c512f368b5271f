-- The learning-rate sweep, part 1 of 2: no embedding norm, LayerNorm and RMSNorm over the
-- sweep's grid of peak learning rates.  Run with `bin/repro run lua/experiments/lr_sweep_a.lua`
-- (after final.lua, whose lr 3e-4 runs it copies).  The sweep's analysis is lr_sweep.lua's,
-- which copies these 81 runs and adds the two mechanism controls: the split only keeps each
-- study under an hour of training.
--
-- Why.  The verdict "an embedding norm is worse" holds at one untuned point (peak lr 3e-4);
-- a norm changes the effective learning rate (LayerNorm multiplies the first block's input
-- by about 25x), so variants are compared over a sweep (Wortsman et al. 2023).
--
-- Design (pre-registered before any run).  The final protocol (the default model, 300
-- iterations, warmup 30, cosine decay to a tenth of the peak: min_lr = lr / 10) at 9 peak
-- learning rates spaced by half a decade, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3 and
-- 1.0 (from clearly too small to 1.0, the issue's ceiling), x 3 norms x seeds 1-3, with
-- validation diagnostics every 25 steps (the curves).  The lr 3e-4 runs are final.lua's
-- seeds 1-3 config for config, so they are copied.  No test here: lr_sweep.lua analyses
-- all five groups together (analysis.comparisons = {}: a descriptive summary).
--
-- Budget.  81 runs, 9 copied from final: 45 runs at lr <= 3e-2 of about 46 s each (45 s
-- measured for a default run at 2 threads on the reference 2-core machine, plus the
-- diagnostics) = 35 min, and 27 runs at lr >= 0.1, which are expected to diverge early
-- and stop (a diverged run is not evaluated): about 5 min if they stop within the first
-- 60 steps, 21 min if none did.  About 40 min, at most 56 min.
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
local NORMS = { "none", "layernorm", "rmsnorm" }

local variants = {}
for _, norm in ipairs(NORMS) do
  for _, g in ipairs(GRID) do
    variants[#variants + 1] = { name = norm .. "-lr" .. g.tag, embed_norm = norm, lr = g.lr,
      min_lr = g.min_lr }
  end
end

return {
  name = "lr_sweep_a",
  description = "Learning-rate sweep, part 1 of 2 (the analysis is lr_sweep's): the "
    .. "default Pre-LN GPT at the final protocol (300 iterations, warmup 30, cosine to a "
    .. "tenth of the peak) with no embedding norm, LayerNorm or RMSNorm, at peak learning "
    .. "rates 1e-4 to 1.0 in half-decade steps (9), seeds 1-3: 81 runs, the 9 at lr 3e-4 "
    .. "copied from final. Descriptive (no test). About 40 minutes on the reference 2-core "
    .. "machine.",
  depends = { "final" },
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
  },
}
