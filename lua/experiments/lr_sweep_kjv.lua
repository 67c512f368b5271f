-- The learning-rate sweep on the King James Bible (stage 1 of 2 on this
-- corpus): no embedding norm, LayerNorm and RMSNorm at the GPT-2 init default model, over
-- half-decade peak learning rates from 3e-4 to 3e-2.  Run with `bin/repro run
-- lua/experiments/lr_sweep_kjv.lua` after final_kjv.lua (its runs at 3e-4, seeds 1-2,
-- are copied from there; `make reproduce` orders them).
--
-- Why.  Every verdict of the paper rests on one corpus, Tiny Shakespeare.  The King James
-- Bible (data/kjv.txt, scripts/corpora.lua: 4,137,850 bytes, 63 symbols, scriptural prose
-- of 1611, one verse a line, public domain) is Shakespeare's era in another genre at 3.7
-- times the size: the 614,400 training characters of a run (300 steps of 16 x 128) are a
-- sixth of its training split, against three fifths of Tiny Shakespeare's, so the model
-- almost never sees a passage twice.  This study finds each variant's best learning
-- rate on this corpus; tuned_kjv.lua then compares them there on fresh seeds.
--
-- Design (pre-registered before any run).  The final protocol (the default model: 8
-- layers, width 128, GPT-2 init; 300 iterations, warmup 30, cosine decay to min_lr = lr /
-- 10), validation diagnostics every 25 steps, data = data/kjv.txt; groups none,
-- layernorm and rmsnorm, each at the 5 peak learning rates 3e-4, 1e-3, 3e-3, 1e-2, 3e-2
-- (on Tiny Shakespeare every norm's best lies inside this range: lr_sweep); seeds 1-2,
-- shared by the groups.  A best learning rate on the grid's edge is flagged by the
-- analysis and reported, not extended after the fact.
--
-- Analysis (lua/repro/analysis/lrsens.lua, as lr_sweep: descriptive, no test).  Per group:
-- final val_loss against the learning rate, the best learning rate (flagged on the grid's
-- edge), where it diverges, the LR sensitivity; the pilot comparisons each norm vs none
-- and LayerNorm vs RMSNorm, each at its own best lr, paired by seed, whose sd sizes
-- tuned_kjv's seeds.
--
-- Budget, in default runs (a default run: 300 steps of the 8x128 model on Tiny
-- Shakespeare, about 45 s at 2 threads on the reference 2-core machine, 90 core-seconds).
-- 30 runs, 6 copied from final_kjv: 24 trained.  The training steps cost what a default
-- run's do (300 x 16 windows forward and backward, about 14,400 forward windows, with
-- the diagnostics' 384); the final evaluation reads the whole validation split in windows
-- of 128 (871 on Tiny Shakespeare, 299 on devil, 3,233 on kjv), a third of the cost of a
-- window trained: a run here is about 1.15 default runs.  About 28 default runs, 21
-- minutes at 2 threads, 0.7 core-hours; fewer where a run at 3e-2 diverges early.
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
  name = "lr_sweep_kjv",
  description = "Learning-rate sweep on the King James Bible (data/kjv.txt): the "
    .. "default Pre-LN GPT (GPT-2 init) at the final protocol (300 iterations, warmup 30, "
    .. "cosine to a tenth of the peak) with no embedding norm, LayerNorm or RMSNorm, at "
    .. "peak learning rates 3e-4 to 3e-2 in half-decade steps (5), seeds 1-2. Per group "
    .. "the best learning rate, where it diverges and the LR sensitivity; descriptive (no "
    .. "test); its pilot comparisons at each group's best learning rate set tuned_kjv's "
    .. "seed count. 30 runs, 6 copied from final_kjv: about 28 default runs.",
  depends = { "final_kjv" },
  base = { diag_every = 25, data = "data/kjv.txt" },
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
