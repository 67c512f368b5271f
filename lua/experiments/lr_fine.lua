-- The mechanism comparison's learning rates, on a finer grid:
-- no embedding norm and `layernorm_matched` at quarter-decade peak learning rates from
-- 3e-3 to 3e-2.  Run with `bin/repro run lua/experiments/lr_fine.lua` after lr_sweep.lua
-- (its runs at 3e-3, 1e-2 and 3e-2 are copied from there; `make reproduce` orders them).
--
-- Why.  "Rescaling, not normalizing" rests on layernorm_matched vs none at their best
-- learning rates (tuned_controls): inconclusive, its interval [-0.017, 0.021] nats, power
-- 0.42 at the minimum effect.  On lr_sweep's half-decade grid matched LayerNorm's best lr
-- (1e-2, loss 2.292) sits next to a cliff (2.617 at 3e-2) and no norm's (3e-3, 2.317) next
-- to 1e-2 (2.343): either optimum may lie between grid points, by up to a few hundredths
-- of a nat, the size of the minimum effect.  This study brackets both optima; the
-- confirmatory comparison (tuned_matched.lua) then runs each at the best lr found here.
--
-- Design (pre-registered before any run).  The final protocol (the default model, 300
-- iterations, warmup 30, cosine decay to min_lr = lr / 10), validation diagnostics every
-- 25 steps, as lr_sweep; groups none and layernorm_matched, each at the 5 peak learning
-- rates 3e-3, 5.62e-3, 1e-2, 1.78e-2, 3e-2 (10^-2.5 ... 10^-1.5 in quarter decades, the
-- two new values rounded to 3 digits); seeds 1-3, shared by the groups (lr_sweep's, so
-- the 18 runs at its grid points are copied and 12 train).
--
-- Analysis (lua/repro/lrsens.lua, as lr_sweep: descriptive, no test).  Per group: final
-- val_loss against the learning rate, the best learning rate (lowest mean over seeds of
-- min(val_loss, init_loss)), flagged when it lies on the grid's edge, and the LR
-- sensitivity over this grid; the pilot comparison matched LayerNorm vs none, each at its
-- own best lr, paired by seed, whose sd sizes tuned_matched's seeds.
--
-- Budget.  12 runs trained of about 46 s each on the reference 2-core machine (lr_sweep's
-- measurement, diagnostics included): about 5 minutes at 2 workers.
local GRID = {
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "5.62e-3", lr = 5.62e-3, min_lr = 5.62e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
  { tag = "1.78e-2", lr = 1.78e-2, min_lr = 1.78e-3 },
  { tag = "3e-2", lr = 3e-2, min_lr = 3e-3 },
}
local NORMS = { "none", "layernorm_matched" }

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
  name = "lr_fine",
  description = "The mechanism comparison's learning rates on a finer grid: the default "
    .. "Pre-LN GPT at the final protocol (300 iterations, warmup 30, cosine to a tenth of "
    .. "the peak) with no embedding norm or layernorm_matched (LayerNorm whose gain starts "
    .. "at the input's RMS), at peak learning rates 3e-3 to 3e-2 in quarter-decade steps "
    .. "(5), seeds 1-3. Per group the best learning rate and the LR sensitivity over this "
    .. "grid; descriptive (no test); its pilot comparison at each group's best learning "
    .. "rate sets tuned_matched's seed count. 30 runs, 18 copied from lr_sweep: about 5 "
    .. "minutes on the reference 2-core machine.",
  depends = { "lr_sweep" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { 1, 2, 3 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none-lr3e-3",
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
      pilot = { { "layernorm_matched", "none" } } },
  },
}
