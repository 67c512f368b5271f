-- The init bundle taken apart, stage 1 of 4: a coarse learning-rate sweep over
-- the 16 set-ups of a half fraction of PyTorch's default init, each with no embedding
-- norm and LayerNorm.  Run with `bin/repro run lua/experiments/init_parts_sweep.lua`; its
-- summary sizes and tunes init_parts.lua (stage 2), which init_parts_long_sweep.lua and
-- init_parts_long.lua (stages 3 and 4, 1,200 steps) follow.
--
-- Why.  claim (stage B of the claim's replication) found LayerNorm 17.7 % better than no norm at init
-- torch and 31.2 % worse at init gpt2 of the same 4-block tied model, at the one shared
-- peak lr 3e-4.  init = torch changes five things at once; this design varies each.
--
-- Design (pre-registered before any run).  The claim's model and protocol: 4 blocks,
-- width 128, 8 heads, context 128, batch 16, 150 iterations, warmup 30, cosine to
-- min_lr = lr / 10, no dropout, grad clip 1.0, validation diagnostics every 15 steps
-- (32 windows: the loss after 15, 30, ..., 150 steps).  Five two-level components, each
-- at the GPT-2 reference's value or PyTorch's default (the letter names the second):
--   T  token embeddings N(0, 0.02) | N(0, 1)            tok_init_std
--   P  position embeddings N(0, 0.02) | N(0, 1)         pos_init_std
--   L  Linear init N(0, 0.02), biases 0 | U(+-1/sqrt(fan_in)) weights and biases
--                                                        linear_init
--   R  residual projections at 0.02/sqrt(2 n_layer) | no rescaling   resid_rescale
--   U  output tied to the token embeddings | untied (a separate output layer)
--                                                        tie_embeddings
-- PyTorch's bundle (init = torch at the claim's set-up) is TPLR, tied: the positions are
-- taken at N(0, 0.02) vs N(0, 1), the two ends of the bundle, so that both ends are design
-- points (zero position embeddings, the other question of claim_search found them at 12.2-16.8 PPL, not the claim's row).
-- The half fraction 2^(5-1) with defining relation I = -TPLRU (in +-1 coding, + =
-- PyTorch's value): the 16 cells with an odd number of components at the reference's
-- value, among them the reference (no letter, "ref") and the bundle TPLR.  Crossed with
-- the norm (none, LayerNorm): 32 variants.  Resolution V: every main effect is aliased
-- only with a four-component interaction (T = -PLRU, P = -TLRU, L = -TPRU, R = -TPLU,
-- U = -TPLR), every two-component interaction with a three-component one (TP = -LRU,
-- TL = -PRU, TR = -PLU, TU = -PLR, PL = -TRU, PR = -TLU, PU = -TLR, LR = -TPU,
-- LU = -TPR, RU = -TPL); each component's interaction with the norm is aliased only with
-- a four-component x norm interaction, and the norm's main effect with the five-way
-- TPLRU x norm.  So each component's main effect and its interaction with the norm are
-- unaliased with each other and with every other main effect and two-factor
-- interaction.  RMSNorm is left out (the budget).
-- Here each of the 32 variants runs at the peak lrs 1e-3, 3e-3 and 1e-2 (half-decade
-- steps; min_lr = lr / 10), seeds 1-2.  The claim's 3e-4 is below the grid: at 150
-- iterations every earlier sweep of this model family found its best at 3e-3 or above
-- (lr_sweep, lr_sweep_std1, lr_fine); a best on the grid's edge is flagged
-- (best_at_edge) and init_parts then says so.
--
-- Analysis (lua/repro/analysis/lrsens.lua, as lr_sweep: descriptive, no test).  Per
-- variant (a group): final val_loss against the lr, the best lr, divergence, LR
-- sensitivity; pilot comparisons LayerNorm vs none at each cell, each at its own best lr,
-- paired by seed: the largest sd sizes init_parts' seeds.  clip_fraction (the share of
-- steps the clip scaled down) and the validation loss after 30 and 75 steps are described.
--
-- Budget (reference-machine core-seconds, normalized as REPRODUCE.md does: the default
-- model trains at 14,286 tokens/s on one core there).  A claim-model run of 150 steps
-- (307,200 tokens) is 0.61 default-model tokens per token (claim's manifests: 8,434
-- tokens/s on the Zen 3 where the default model trains at 5,134), so about 13.1 s of
-- training, plus about 2 s of final evaluation and 0.6 s of diagnostics: 16 s.
--   this sweep          32 variants x 3 lrs x 2 seeds = 192 runs x 16 s  =  3,072 s
--   init_parts          32 variants x n (10-11)       <= 352 runs x 16 s <=  5,632 s
--   init_parts_long_sweep  <= 6 variants x 3 lrs x 1 seed = 18 runs x 112 s = 2,016 s
--   init_parts_long     <= 6 variants x 5 seeds = 30 runs x 112 s        =  3,360 s
-- (a 1,200-step run: 8 x 13.1 s of training, 2 s of evaluation, 4.6 s of diagnostics
-- every 15 steps, about 112 s), at most 14,080 s = 3.91 core-hours in all, within issue
-- 41's 4; this sweep 0.85 core-hours (about 26 minutes at 2 workers there).
-- The 16 set-ups (cells) of the half fraction, identical in the four init_parts files.
-- A component at PyTorch's value is a letter; the reference has none.
local COMPONENTS = {
  { letter = "T", key = "tok_init_std", value = 1.0, what = "token embeddings N(0, 1)" },
  { letter = "P", key = "pos_init_std", value = 1.0, what = "position embeddings N(0, 1)" },
  { letter = "L", key = "linear_init", value = "torch", what = "PyTorch's Linear init" },
  { letter = "R", key = "resid_rescale", value = false, what = "no residual rescaling" },
  { letter = "U", key = "tie_embeddings", value = false, what = "an untied output layer" },
}
-- every cell with an odd number of components at the reference value (T P L R U = -1 in
-- +-1 coding, + = PyTorch's value): the reference (none) and the bundle TPLR are two
local function cells()
  local out = {}
  for mask = 0, 31 do
    local letters, overrides, plus = "", {}, 0
    for i, c in ipairs(COMPONENTS) do
      if mask & (1 << (i - 1)) ~= 0 then
        letters, overrides[c.key], plus = letters .. c.letter, c.value, plus + 1
      end
    end
    if (5 - plus) % 2 == 1 then
      out[#out + 1] = { name = letters == "" and "ref" or letters, overrides = overrides,
        has = function(letter) return letters:find(letter, 1, true) ~= nil end }
    end
  end
  return out
end

local GRID = {
  { tag = "1e-3", lr = 1e-3, min_lr = 1e-4 },
  { tag = "3e-3", lr = 3e-3, min_lr = 3e-4 },
  { tag = "1e-2", lr = 1e-2, min_lr = 1e-3 },
}
local NORMS = { "none", "layernorm" }

local variants, groups, pilot = {}, {}, {}
for _, cell in ipairs(cells()) do
  for _, norm in ipairs(NORMS) do
    local group, members = cell.name .. "-" .. norm, {}
    for _, g in ipairs(GRID) do
      local v = { name = group .. "-lr" .. g.tag, embed_norm = norm, lr = g.lr,
        min_lr = g.min_lr }
      for k, x in pairs(cell.overrides) do v[k] = x end
      variants[#variants + 1] = v
      members[#members + 1] = v.name
    end
    groups[#groups + 1] = { name = group, variants = members }
  end
  pilot[#pilot + 1] = { cell.name .. "-layernorm", cell.name .. "-none" }
end

return {
  name = "init_parts_sweep",
  description = "The init bundle taken apart, stage 1: a coarse learning-rate "
    .. "sweep of the claim's 4-block model (150 iterations, warmup 30, cosine) over a half "
    .. "fraction (16 set-ups) of the five components of PyTorch's default init (token and "
    .. "position embedding scale, Linear init, residual rescaling, tied output), each "
    .. "with no embedding norm and LayerNorm, at peak lrs 1e-3, 3e-3, 1e-2, seeds 1-2. "
    .. "Descriptive; each variant's best lr tunes init_parts and its pilot sizes it. 192 "
    .. "runs, about 0.85 core-hours on the reference machine.",
  base = { n_layer = 4, iters = 150, diag_every = 15 },
  variants = variants,
  seeds = { 1, 2 },
  analysis = {
    baseline = "ref-none-lr3e-3",
    metrics = { "val_loss", "init_loss", "diverged", "clip_fraction", "val_loss_after_30",
      "val_loss_after_75" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    sweep = { over = "lr", groups = groups, reference = "ref-none", loss = "val_loss",
      pilot = pilot },
  },
}
