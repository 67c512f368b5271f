-- The claim, stage A of 2: which set-up gives the claim's own numbers?
-- Run with `bin/repro run lua/experiments/claim_search.lua`; stage B is claim.lua, which
-- reads this study's summary.  The first attempt is claim_search_v1.lua.
--
-- Why.  The first search ranked 24 set-ups at the GPT-2 initialization and matched none;
-- its closest was a model stuck at the unigram perplexity.  The claim's own text points
-- elsewhere: "0.8 million parameters" is a 4 x 128 model of this design (8 x 128 is
-- 1.6 M); its embedding norm 11.46 = sqrt(128) x 1.01 is a token embedding drawn N(0, 1),
-- nn.Embedding's default, so a model written from PyTorch's default modules (nn.Linear
-- weights and biases U(+-1/sqrt(fan_in)), no residual rescaling: the engine's
-- init = "torch"); its "mock macro accuracy" (8, 10, 9 of 150) is below what always
-- predicting the space reaches, so plausibly a balanced accuracy on 150 positions; its
-- seed spread (4 %) suggests dropout or a few evaluation batches.
--
-- Design (pre-registered before any run).  No embedding norm, 150 iterations, peak lr
-- 3e-4, seeds 1 and 2, balanced accuracy reported (balanced_acc).  Six factors:
--   init       gpt2 (the suite's) | torch (PyTorch's module defaults)
--   n_layer    4 (0.82 M parameters at width 128, the claim's count) | 8 (1.6 M)
--   position   p0: zero position embeddings (nn.Parameter(torch.zeros(...))) | ps: as the
--              scheme draws them (gpt2 N(0, 0.02), torch N(0, 1))
--   output     tied to the token embedding | untied
--   schedule   w30cos: warmup 30 then cosine to 0.1 x peak | w0const: constant lr
--   dropout    0 | 0.1 | 0.2
-- The five two-level factors in the half fraction I = init x layers x position x output
-- x schedule (16 of 32 combinations, resolution V: every main effect and every two-factor
-- interaction, init x size among them, is estimable), crossed with the three dropout
-- levels: 48 set-ups, 96 runs.  Names read <init>-L<layers>-<p0|ps>-<tied|untied>-
-- <schedule>-d<dropout>.
--
-- Distance (distance = 2, paper/lib/claim.lua), to the claim's baseline row:
--   D = sum over the terms j of w_j z_j^2
--     val_ppl              z = ln(x / 22.18) / (0.90 / 22.18)      w = 1   (the claim's spread)
--     embed_norm           z = ln(x / 11.46) / 0.10                w = 1   (10 %: no spread given)
--     bal_subset_acc_mean  z = (x - 0.0533) / sqrt(0.0533 x 0.9467 / 150)
--                                                                  w = 1   (its binomial sd at 150)
--     final_grad_norm      z = ln(x / 0.1762) / 0.25               w = 1/4 (its definition is
--                          unknown and it varies 4-28 % between seeds: a small weight)
-- x the set-up's mean over its seeds.  A set-up matches when D <= 4 x (sum of w) = 13 (a
-- weighted root-mean-square z of at most 2).  Set-ups whose validation PPL is at or above
-- the unigram perplexity of the validation split (engine.ngram_ppl: 28.43) learned nothing
-- beyond character frequencies and are excluded before ranking (listed with the reason).
-- The closest 2 admissible set-ups are selected for stage B.  The pilot for stage B's
-- seeds: over the 8 closest admissible set-ups, the root mean square of the seed-1 minus
-- seed-2 difference in val_loss, which estimates sqrt(2) x the seed sd (an upper bound on
-- a paired difference's sd when variants of one seed correlate positively) with 8 degrees
-- of freedom (summary's pilot_comparisons).  No hypothesis is tested here (descriptive).
--
-- Budget.  96 runs of 150 iterations at width 128 (half of them 4 layers), 2 workers x 1
-- thread on the reference 2-core machine: about 16 minutes.
local inits = {
  { tag = "gpt2", init = "gpt2", pos = 0.02 },
  { tag = "torch", init = "torch", pos = 1.0 },
}
local layers = { 4, 8 }
local positions = { "p0", "ps" }
local outputs = { { tag = "tied", tie = true }, { tag = "untied", tie = false } }
local schedules = {
  { tag = "w30cos", warmup = 30, lr_schedule = "cosine" },
  { tag = "w0const", warmup = 0, lr_schedule = "constant" },
}
local dropouts = { { tag = "0", p = 0.0 }, { tag = "0.1", p = 0.1 }, { tag = "0.2", p = 0.2 } }

local variants = {}
for a, ini in ipairs(inits) do
  for b, L in ipairs(layers) do
    for c, pos in ipairs(positions) do
      for d, out in ipairs(outputs) do
        for e, sch in ipairs(schedules) do
          -- the half fraction I = ABCDE: levels coded 0/1, an even number of second levels
          if (a + b + c + d + e) % 2 == 1 then
            for _, dr in ipairs(dropouts) do
              local v = {
                name = string.format("%s-L%d-%s-%s-%s-d%s", ini.tag, L, pos, out.tag, sch.tag,
                  dr.tag),
                init = ini.init, n_layer = L, tie_embeddings = out.tie, warmup = sch.warmup,
                lr_schedule = sch.lr_schedule, dropout = dr.p,
              }
              if pos == "p0" then v.pos_init_std = 0.0 end
              variants[#variants + 1] = v
            end
          end
        end
      end
    end
  end
end

return {
  name = "claim_search",
  description = "The claim, stage A: no embedding norm at the claim's protocol (150 "
    .. "iterations, lr 3e-4) over 48 set-ups, a half fraction of init (GPT-2 or PyTorch's "
    .. "module defaults) x 4 or 8 layers x zero or drawn position embeddings x tied or "
    .. "untied output x warmup+cosine or constant lr, crossed with dropout 0, 0.1, 0.2; seeds "
    .. "1-2; each set-up's distance to the claim's baseline row (PPL, embedding norm, "
    .. "balanced accuracy on 150 positions, gradient norm at weight 1/4; distance 2 of "
    .. "lua/repro/claim.lua), set-ups at or above the unigram perplexity excluded, the "
    .. "closest 2 to stage B (claim.lua). Descriptive: no test. 96 runs, about 16 minutes "
    .. "on the reference 2-core machine.",
  base = { iters = 150, balanced_acc = true },
  variants = variants,
  seeds = { 1, 2 },
  checkpoint_every = 50,
  -- the claim stages are this paper's analysis, not the suite's (analysis.claim below)
  extensions = { claim = "paper/lib/claim.lua" },
  analysis = {
    baseline = "gpt2-L8-ps-tied-w30cos-d0",
    metrics = { "val_loss", "val_ppl", "final_grad_norm", "embed_norm", "val_acc", "bal_acc",
      "bal_subset_acc_mean", "init_loss" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    claim = { stage = "search", select = 2, distance = 2, pilot = 8 },
  },
}
