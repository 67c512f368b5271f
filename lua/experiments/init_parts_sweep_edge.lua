-- The init bundle taken apart, a check of stage 1, exploratory: does the
-- learning-rate grid of init_parts_sweep.lua bracket the best rates it chose?  Run with
-- `bin/repro run lua/experiments/init_parts_sweep_edge.lua` after init_parts_sweep.lua,
-- whose summary it reads (`make reproduce` orders them).
--
-- Why.  init_parts_sweep pre-registered a coarse grid, peak lrs 1e-3, 3e-3 and 1e-2, and
-- that a best on the grid's edge is flagged, not extended.  Its summary put 16 of its 32
-- variants' best at the top of the grid (1e-2), among them both variants of the bundle,
-- so init_parts (stage 2, confirmatory, already running at those rates when this file
-- was written) tunes them only up to that edge.  This study, written after the sweep's
-- summary and before init_parts' summary, says by how much the next grid point, 3e-2,
-- would have changed each of those variants' best: it changes no confirmatory design
-- and its result is reported as a description.
--
-- Design.  The groups of init_parts_sweep whose best lr is the grid's largest (1e-2;
-- best_at_edge), each at its four peak lrs 1e-3, 3e-3, 1e-2 and 3e-2 (min_lr = lr / 10,
-- as the sweep; the three old points are init_parts_sweep's own configs, so their runs
-- are copied from it and only 3e-2 trains), seeds 1-2 (the sweep's).  The groups whose
-- best lies on the grid's lower edge (1e-3) are left out: in init_parts_sweep they are
-- the set-ups whose loss stays at the unigram level at every grid point (within 0.0015
-- nats of each other), where a best is noise, not a rate.  (Were no group at the upper
-- edge, the bundle's two would be checked, so that the study is never empty.)  The configs
-- come from repro.best_config (the sweep's best variant of each group), with only lr and
-- min_lr replaced by the grid's literal values.
--
-- Analysis (lrsens, descriptive, as the sweep): per group, the best lr over the four
-- points, flagged at the new grid's edge; the paper counts the groups whose best moved to
-- 3e-2 and by how much their best loss fell.
--
-- Budget: 16 groups x 1 new lr x 2 seeds = 32 runs of about 16 reference core-seconds
-- (init_parts_sweep.lua's arithmetic): 512 s (0.14 core-hours; about 4 minutes at 2
-- workers), the rest copied.
local SWEEP = "init_parts_sweep"
local GRID = {
  { tag = "1e-3", lr = 1e-3, min_lr = 1e-4 },
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
  { tag = "3e-2", lr = 3e-2, min_lr = 3e-3 },
}
local TOP = 1e-2

-- The sweep's groups at its upper edge, in a fixed (sorted) order.
local function edge_groups()
  local groups = repro.result(SWEEP, "lr_sweep", "groups")
  local out = {}
  if type(groups) ~= "table" then return out end
  for name, g in pairs(groups) do
    if type(g) == "table" and g.best_at_edge == true and g.best_lr == TOP then
      out[#out + 1] = name
    end
  end
  table.sort(out)
  -- none at the edge (as a tiny budget could give): the bundle's two groups are checked
  -- anyway, so that the study always has its runs
  if #out == 0 then out = { "TPLR-layernorm", "TPLR-none" } end
  return out
end

local variants, groups = {}, {}
for _, group in ipairs(edge_groups()) do
  local best = repro.best_config(SWEEP, group)
  local members = {}
  for _, g in ipairs(GRID) do
    local v = { name = group .. "-lr" .. g.tag }
    for k, x in pairs(type(best) == "table" and best or {}) do v[k] = x end
    v.lr, v.min_lr = g.lr, g.min_lr
    variants[#variants + 1] = v
    members[#members + 1] = v.name
  end
  groups[#groups + 1] = { name = group, variants = members }
end

return {
  name = "init_parts_sweep_edge",
  description = "A check of the init bundle's learning-rate sweep, "
    .. "exploratory: the variants of init_parts_sweep whose best peak lr lies on its "
    .. "grid's upper edge (1e-2), each at 1e-3, 3e-3, 1e-2 (copied from init_parts_sweep) "
    .. "and 3e-2, seeds 1-2. Descriptive; it tells whether that sweep's bests are "
    .. "bracketed, and changes no confirmatory design.",
  depends = { SWEEP },
  base = { n_layer = 4, iters = 150, diag_every = 15 },
  variants = variants,
  seeds = { 1, 2 },
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
