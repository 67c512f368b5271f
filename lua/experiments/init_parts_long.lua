-- The init bundle taken apart, stage 4 of 4, confirmatory at 1,200 steps: no
-- embedding norm vs LayerNorm at the bundle, the GPT-2 reference and, when init_parts
-- found one, the reference with the component that changes the norm's effect most, each
-- variant at its best lr from init_parts_long_sweep.  Run with `bin/repro run
-- lua/experiments/init_parts_long.lua` after init_parts_long_sweep.lua (and init_parts.lua,
-- whose summary both read; `make reproduce` orders them).
--
-- Why.  To tell a transient (the recovery from huge initial logits, which the claim's 150
-- steps may measure) from a lasting difference: the same comparisons 8 times longer, the
-- loss along the way (after 30, 75, 150, 600 steps) beside the final one.
--
-- Design (pre-registered before any run).  The model of init_parts_sweep.lua trained
-- 1,200 steps (warmup 30, cosine to lr / 10, diagnostics every 15 steps); the set-ups of
-- init_parts_long_sweep.lua (TPLR, ref, and X for the component X of init_parts'
-- rule: of its 5 component x norm interactions on val_loss, those with verdict better or
-- worse, the one with the largest |mean|), each with none and LayerNorm; variant v at
-- repro.best_config("init_parts_long_sweep", v).  Seeds 301-305 (5, fresh: the sweep's
-- is 1, init_parts' 101-111); a fixed count, the budget's: the design is for effects of
-- the claim's size (0.07 nats and up), and the summary's MDE says what 5 seeds detect.
--
-- Question and analysis (decision rule 2).  Primary val_loss, lower is better, minimum
-- effect 0.02 nats, alpha 0.05, paired t-test, Holm over LayerNorm vs none at each set-up
-- (2 or 3) and the interactions "LayerNorm's effect at TPLR minus at ref" and, with X,
-- "at X minus at ref" (1 or 2): m = 3 or 5, each with a verdict.  The pre-registered
-- answer: does the norm's effect at the bundle (and its dependence on X) found at 150
-- steps keep its verdict at 1,200?  Exploratory: the validation loss after 30, 75, 150
-- and 600 steps and clip_fraction, with the same tests (unadjusted p, no verdict).
--
-- Budget (init_parts_sweep.lua's arithmetic): at most 6 variants x 5 seeds = 30 runs of
-- about 112 reference core-seconds: 3,360 s (0.93 core-hours).
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

-- The rule init_parts.lua pre-registered: of the 5 component x norm interactions on
-- val_loss in its summary, those with verdict better or worse; of these the one with the
-- largest |mean| (the first listed on a tie); nil when there is none.
local function chosen_component()
  local best, best_abs
  for _, e in ipairs(repro.result("init_parts", "interactions") or {}) do
    if type(e) == "table" and e.metric == "val_loss" and
        (e.verdict == "better" or e.verdict == "worse") and type(e.mean) == "number" then
      for _, c in ipairs(COMPONENTS) do
        if e.name:find("layernorm effect, " .. c.letter .. " ", 1, true) == 1 and
            (not best or math.abs(e.mean) > best_abs) then
          best, best_abs = c, math.abs(e.mean)
        end
      end
    end
  end
  return best
end

-- The set-ups followed to 1,200 steps: the bundle, the reference and, when init_parts
-- found a component that matters, the reference with that component at PyTorch's value
-- (named by its letter, as a cell of the half fraction would be).
local function setups()
  local list = { { name = "TPLR", overrides = { tok_init_std = 1.0, pos_init_std = 1.0,
    linear_init = "torch", resid_rescale = false } }, { name = "ref", overrides = {} } }
  local c = chosen_component()
  if c then
    list[#list + 1] = { name = c.letter, overrides = { [c.key] = c.value },
      component = c }
  end
  return list
end

local SWEEP = "init_parts_long_sweep"
local variants, comparisons, interactions = {}, {}, {}
local list = setups()
for _, su in ipairs(list) do
  for _, norm in ipairs({ "none", "layernorm" }) do
    local name = su.name .. "-" .. norm
    local best = repro.best_config(SWEEP, name)
    local v = { name = name, embed_norm = norm, lr = best.lr, min_lr = best.min_lr }
    for k, x in pairs(su.overrides) do v[k] = x end
    variants[#variants + 1] = v
  end
  comparisons[#comparisons + 1] = { su.name .. "-layernorm", su.name .. "-none" }
  if su.name ~= "ref" then
    interactions[#interactions + 1] = { name = "layernorm effect, " .. su.name ..
      " minus ref", a = { su.name .. "-layernorm", su.name .. "-none" },
      b = { "ref-layernorm", "ref-none" } }
  end
end

return {
  name = "init_parts_long",
  description = "The init bundle taken apart, stage 4, confirmatory at 1,200 "
    .. "steps: the claim's 4-block model at PyTorch's init bundle, the GPT-2 reference "
    .. "and the reference with the component init_parts found to change the norm's effect "
    .. "most, no embedding norm vs LayerNorm, each at its best lr from "
    .. "init_parts_long_sweep, seeds 301-305. Primary val_loss, minimum effect 0.02 nats, "
    .. "paired t-test, Holm over the norm's effect per set-up and its interactions.",
  depends = { SWEEP, "init_parts" },
  base = { n_layer = 4, iters = 1200, diag_every = 15 },
  variants = variants,
  seeds = { 301, 302, 303, 304, 305 },
  checkpoint_every = 300,
  analysis = {
    baseline = "ref-none",
    comparisons = comparisons,
    interactions = interactions,
    metrics = { "val_loss", "val_loss_after_30", "val_loss_after_75", "val_loss_after_150",
      "val_loss_after_600", "clip_fraction" },
    secondary = { "init_loss", "max_grad_norm", "embed_norm", "val_ppl", "val_acc" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
  },
}
