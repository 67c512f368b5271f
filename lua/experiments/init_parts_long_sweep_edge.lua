-- The init bundle taken apart, a check of stage 3, exploratory: does the
-- 1,200-step sweep's grid bracket its bests?  Run with `bin/repro run
-- lua/experiments/init_parts_long_sweep_edge.lua` after init_parts_long_sweep.lua, whose
-- summary it reads (`make reproduce` orders them).
--
-- Why.  init_parts_long_sweep pre-registered the grid 1e-3, 3e-3, 1e-2 (init_parts_sweep's)
-- and, like it, flags a best on the edge without extending the grid.  Its summary put the
-- best of all four of its variants (the bundle and the GPT-2 reference, none and
-- LayerNorm) at the top, 1e-2, so init_parts_long (stage 4, confirmatory, running at those
-- rates when this file was written, before its summary existed) tunes them only up to that
-- edge.  This study says by how much the next grid point, 3e-2, would have changed each
-- best.  It changes no confirmatory design; its result is reported as a description.
--
-- Design.  init_parts_sweep_edge.lua's (its header says why), for init_parts_long_sweep:
-- each of its groups whose best is the grid's top at 1e-3, 3e-3, 1e-2 (copied from it) and
-- 3e-2 (min_lr = lr / 10), 1,200 steps, seed 1 (the sweep's only seed).  Were no group at
-- that edge, the bundle's two would be checked.
--
-- Analysis (lrsens, descriptive): per group the best lr over the four points.
--
-- Budget: 4 groups x 1 new lr x 1 seed = 4 runs of about 112 reference core-seconds
-- (init_parts_sweep.lua's arithmetic): 448 s (0.12 core-hours), the rest copied.
local SWEEP = "init_parts_long_sweep"
local GRID = { { "1e-3", 1e-3, 1e-4 }, { "3e-3", 3e-3, 3e-4 }, { "1e-2", 1e-2, 1e-3 },
  { "3e-2", 3e-2, 3e-3 } }

local names = {}
local sweep_groups = repro.result(SWEEP, "lr_sweep", "groups")
for name, g in pairs(type(sweep_groups) == "table" and sweep_groups or {}) do
  if type(g) == "table" and g.best_at_edge == true and g.best_lr == 1e-2 then
    names[#names + 1] = name
  end
end
table.sort(names)
if #names == 0 then names = { "TPLR-layernorm", "TPLR-none" } end

local variants, groups = {}, {}
for _, group in ipairs(names) do
  local best, members = repro.best_config(SWEEP, group), {}
  for _, g in ipairs(GRID) do
    local v = { name = group .. "-lr" .. g[1] }
    for k, x in pairs(type(best) == "table" and best or {}) do v[k] = x end
    v.lr, v.min_lr = g[2], g[3]
    variants[#variants + 1], members[#members + 1] = v, v.name
  end
  groups[#groups + 1] = { name = group, variants = members }
end

return {
  name = "init_parts_long_sweep_edge",
  description = "A check of the init bundle's 1,200-step learning-rate sweep, "
    .. "exploratory: the variants of init_parts_long_sweep whose best peak lr lies on its "
    .. "grid's upper edge (1e-2), each at 1e-3, 3e-3, 1e-2 (copied) and 3e-2, seed 1. "
    .. "Descriptive; it tells whether that sweep's bests are bracketed, and changes no "
    .. "confirmatory design.",
  depends = { SWEEP },
  base = { n_layer = 4, iters = 1200, diag_every = 15 },
  variants = variants,
  seeds = { 1 },
  checkpoint_every = 300,
  analysis = {
    baseline = variants[1] and variants[1].name or "none",
    metrics = { "val_loss", "init_loss", "diverged", "clip_fraction" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    sweep = { over = "lr", groups = groups, loss = "val_loss", pilot = {} },
  },
}
