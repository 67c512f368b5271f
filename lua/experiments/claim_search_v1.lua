-- The claim, first attempt, stage 1 of 2 (superseded by claim_search.lua and
-- claim.lua, kept with its records as the paper's history): which baseline
-- set-up reproduces the claim's own Table 1?  Run with
-- `bin/repro run lua/experiments/claim_search_v1.lua`; stage 2 is claim_v1.lua, which
-- reads this study's summary.  Superseded because none of its 24 set-ups matched and
-- the closest was a model stuck at the unigram perplexity; the new search adds PyTorch's
-- default initialization, the 0.8 M model, dropout and the balanced accuracy.
--
-- Why.  At the claim's protocol (150 iterations, lr 3e-4, 3 seeds) the suite's pinned
-- baseline reaches validation PPL 14.09 where the claim reports 22.18, and an embedding
-- norm of 0.40 where the claim reports 11.46 (prelim.lua).  The claim's numbers fit
-- another initialization and training loop: 11.46 is about sqrt(128), the norm of token
-- embeddings drawn N(0, 1) (PyTorch's nn.Embedding default) with small position
-- embeddings; a separate output layer avoids the 90-nat initial loss that tied N(0, 1)
-- embeddings give; a tutorial training loop has no warmup and a constant learning rate.
--
-- Design (pre-registered before any run).  The default model at the claim's protocol
-- (150 iterations, peak lr 3e-4, no embedding norm) over the full grid of the plausible
-- baselines, 2 x 3 x 2 x 2 = 24 set-ups, one seed (seed 1):
--   token embedding init    N(0, 0.02) (GPT-2, the suite's default) | N(0, 1) (PyTorch)
--   position embedding init 0 | N(0, 0.02) | N(0, 1)
--   output layer            tied to the token embedding | untied (N(0, 0.02))
--   schedule                warmup 30 then cosine to 0.1 x peak (the suite's) |
--                           no warmup, constant lr (a plain training loop)
-- Names read t<tok std>-p<pos std>-<tied|untied>-<w30cos|w0const>.  The set-up
-- t0.02-p0.02-tied-w30cos is prelim.lua's none/seed-1 config exactly: whichever of the
-- two studies runs first trains it and the other copies the record, so 23 runs train here
-- when prelim's records exist.
--
-- Score.  Each set-up's distance D to the claim's baseline row (no norm: PPL 22.18 +-
-- 0.90, final gradient norm 0.1762, embedding norm 11.46), defined in lua/repro/analysis/claim.lua:
-- the sum of the squared log ratios of validation PPL, final gradient norm and embedding
-- norm, each divided by a tolerance (the claim's own relative spread for PPL, 4.1 %;
-- 10 % for the two norms, for which the claim gives none).  The summary ranks every
-- set-up, states whether the closest matches (D <= 12: a root-mean-square z of at most 2)
-- or that no set-up tried matches, and selects the closest 2 for stage 2.  No hypothesis
-- is tested here (analysis.comparisons = {}): one seed per set-up ranks them, the
-- decision is stage 2's.  One seed suffices for the ranking where set-ups differ by far
-- more than seeds do: between seeds, prelim's 150-iteration records vary by 0.2-1.4 % in
-- PPL and under 1 % in embedding norm, but the final gradient norm varies by 4-14 % (up
-- to 28 % in init_scale's N(0, 1) runs), so one seed's gradient-norm z is uncertain by
-- about 1-3 units: close distances are ties.  Stage 2 measures the selected set-ups'
-- distances again on fresh seeds.
--
-- Budget.  23 runs of about 25 s each (150 iterations of the default model at 2 threads
-- on the reference 2-core machine): about 10 minutes.  Stage 2 adds about 12 minutes.
local toks = { { tag = "0.02", std = 0.02 }, { tag = "1", std = 1.0 } }
local poss = { { tag = "0", std = 0.0 }, { tag = "0.02", std = 0.02 }, { tag = "1", std = 1.0 } }
local outputs = { { tag = "tied", tie = true }, { tag = "untied", tie = false } }
local schedules = {
  { tag = "w30cos", warmup = 30, lr_schedule = "cosine" },
  { tag = "w0const", warmup = 0, lr_schedule = "constant" },
}

local variants = {}
for _, tok in ipairs(toks) do
  for _, pos in ipairs(poss) do
    for _, out in ipairs(outputs) do
      for _, sch in ipairs(schedules) do
        variants[#variants + 1] = {
          name = string.format("t%s-p%s-%s-%s", tok.tag, pos.tag, out.tag, sch.tag),
          tok_init_std = tok.std, pos_init_std = pos.std, tie_embeddings = out.tie,
          warmup = sch.warmup, lr_schedule = sch.lr_schedule,
        }
      end
    end
  end
end

return {
  name = "claim_search_v1",
  description = "The claim, first attempt (superseded by claim_search), stage 1: the default model at the claim's protocol (150 "
    .. "iterations, lr 3e-4, no embedding norm) over 24 plausible baseline set-ups (token "
    .. "embedding init N(0, 0.02) or N(0, 1); position embedding init 0, N(0, 0.02) or "
    .. "N(0, 1); tied or untied output layer; warmup 30 + cosine or no warmup + constant "
    .. "lr), seed 1, each scored by its distance to the claim's baseline row (validation "
    .. "PPL, final gradient norm, embedding norm; lua/repro/claim.lua) and ranked; the "
    .. "closest 2 go to stage 2 (claim_v1.lua). Descriptive: no test. 24 runs (one has "
    .. "prelim's none/seed-1 config and is copied when prelim ran first), about 10 minutes "
    .. "on the reference 2-core machine.",
  base = { iters = 150 },
  variants = variants,
  seeds = { 1 },
  checkpoint_every = 50,
  -- the claim stages are this paper's analysis, not the suite's (analysis.claim below)
  extensions = { claim = "paper/lib/claim.lua" },
  analysis = {
    baseline = "t0.02-p0.02-tied-w30cos",
    metrics = { "val_loss", "val_ppl", "final_grad_norm", "embed_norm", "val_acc",
      "subset_acc_mean", "init_loss" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = {},
    claim = { stage = "search", select = 2 },
  },
}
