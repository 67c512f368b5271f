-- The learning-rate sweep on The Devil's Dictionary (stage 1 of 2 on this
-- corpus): no embedding norm, LayerNorm and RMSNorm at the GPT-2 init default model, over
-- half-decade peak learning rates from 3e-4 to 3e-2.  Run with `bin/repro run
-- lua/experiments/lr_sweep_devil.lua` after final_devil.lua (its runs at 3e-4, seeds 1-2,
-- are copied from there; `make reproduce` orders them).
--
-- Why.  Every verdict of the paper rests on one corpus, Tiny Shakespeare.  The Devil's
-- Dictionary (data/devil.txt, scripts/corpora.lua: 383,157 bytes, 84 symbols, American
-- satirical definitions of 1881-1906, public domain) is another century and genre at a
-- third of the size (a run's 614,400 training characters are 1.8 passes over its training
-- split, against three fifths of one on Tiny Shakespeare).  A quick check (
-- lr 3e-4, 2 seeds) gave LayerNorm +13.9 % validation perplexity over no norm, the sign
-- of Tiny Shakespeare's +12.8 %, but at one untuned learning rate.  This study finds
-- each variant's best learning rate on this corpus; tuned_devil.lua then compares them
-- there on fresh seeds.
--
-- Design (pre-registered before any run).  The final protocol (the default model: 8
-- layers, width 128, GPT-2 init; 300 iterations, warmup 30, cosine decay to min_lr = lr /
-- 10), validation diagnostics every 25 steps, data = data/devil.txt; groups none,
-- layernorm and rmsnorm, each at the 5 peak learning rates 3e-4, 1e-3, 3e-3, 1e-2, 3e-2
-- (on Tiny Shakespeare every norm's best lies inside this range: lr_sweep); seeds 1-2,
-- shared by the groups.  A best learning rate on the grid's edge is flagged by the
-- analysis and reported, not extended after the fact.
--
-- Analysis (lua/repro/analysis/lrsens.lua, as lr_sweep: descriptive, no test).  Per group:
-- final val_loss against the learning rate, the best learning rate (flagged on the grid's
-- edge), where it diverges, the LR sensitivity; the pilot comparisons each norm vs none
-- and LayerNorm vs RMSNorm, each at its own best lr, paired by seed, whose sd sizes
-- tuned_devil's seeds.
--
-- Budget, in default runs (a default run: 300 steps of the 8x128 model on Tiny
-- Shakespeare, about 45 s at 2 threads on the reference 2-core machine, 90 core-seconds).
-- 30 runs, 6 copied from final_devil: 24 trained.  The training steps cost what a default
-- run's do (300 x 16 windows forward and backward, about 14,400 forward windows, with
-- the diagnostics' 384); the final evaluation reads the whole validation split in windows
-- of 128 (871 on Tiny Shakespeare, 299 on devil, 3,233 on kjv), a third of the cost of a
-- window trained: a run here is about 0.96 default runs.  About 23 default runs, 17
-- minutes at 2 threads, 0.6 core-hours; fewer where a run at 3e-2 diverges early.
local GRID = {
  { tag = "3e-4", lr = 3e-4, min_lr = 3e-5 },
  { tag = "1e-3", lr = 1e-3, min_lr = 1e-4 },
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
  { tag = "3e-2", lr = 3e-2, min_lr = 3e-3 },
}
local NORMS = { "none", "layernorm", "rmsnorm" }

local variants, groups = {}, {}
for _, norm in ipairs(NORMS) do
  local members = {}
  for _, g in ipairs(GRID) do
    local name = norm .. "-lr" .. g.tag
    variants[#variants + 1] = { name = name, embed_norm = norm, lr = g.lr, min_lr = g.min_lr }
    members[#members + 1] = name
  end
  groups[#groups + 1] = { name = norm, variants = members }
end

return {
  name = "lr_sweep_devil",
  description = "Learning-rate sweep on The Devil's Dictionary (data/devil.txt): the "
    .. "default Pre-LN GPT (GPT-2 init) at the final protocol (300 iterations, warmup 30, "
    .. "cosine to a tenth of the peak) with no embedding norm, LayerNorm or RMSNorm, at "
    .. "peak learning rates 3e-4 to 3e-2 in half-decade steps (5), seeds 1-2. Per group "
    .. "the best learning rate, where it diverges and the LR sensitivity; descriptive (no "
    .. "test); its pilot comparisons at each group's best learning rate set tuned_devil's "
    .. "seed count. 30 runs, 6 copied from final_devil: about 23 default runs.",
  depends = { "final_devil" },
  base = { diag_every = 25, data = "data/devil.txt" },
  variants = variants,
  seeds = { 1, 2 },
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
      pilot = { { "layernorm", "none" }, { "rmsnorm", "none" }, { "layernorm", "rmsnorm" } } },
  },
}
