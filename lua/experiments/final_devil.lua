-- The seeds' final protocol on The Devil's Dictionary, beside Tiny Shakespeare: no embedding norm vs LayerNorm vs RMSNorm at peak lr 3e-4, seeds 1-5, on
-- data/devil.txt, with the corpus x norm interactions against the same runs on Tiny
-- Shakespeare.  Run with `bin/repro run lua/experiments/final_devil.lua` after final.lua
-- (its Tiny Shakespeare runs are final.lua's configs, so the runner copies those records;
-- `make reproduce` orders them).
--
-- Why.  Does the effect final.lua found on Tiny Shakespeare (LayerNorm and RMSNorm worse
-- than no norm at lr 3e-4) hold on another century and genre (data/devil.txt,
-- scripts/corpora.lua: 383,157 bytes, 84 symbols, 1881-1906 American satire, public
-- domain), and is it the same size there?  The analysis compares variants within one
-- study, so the Tiny Shakespeare runs are variants of this study too: copied, not
-- retrained.
--
-- Design (pre-registered before any run).  The final protocol (the default model: 8 layers,
-- width 128, GPT-2 init; 300 iterations, peak lr 3e-4, warmup 30, cosine decay to 3e-5),
-- validation diagnostics every 25 steps; none, layernorm and rmsnorm on data/devil.txt
-- and on Tiny Shakespeare (no `data` key: final.lua's configs exactly); seeds 1-5.  A
-- seed gives the variants of one corpus the same initial weights but the norm's own; the
-- two corpora's vocabularies differ (84 and 65 symbols), so across corpora a seed pairs
-- the runs' order only, and an interaction is the difference of two within-corpus paired
-- effects.
--
-- Pre-registered (lua/repro/analysis/init.lua states the decision rule, rule 2):
--   primary metric  val_loss, lower is better (its difference is the log perplexity ratio;
--                   the two corpora's perplexities differ in scale, their ratios do not).
--   minimum effect  0.02 nats, about 2 % perplexity, as in final.
--   alpha           0.05, Holm over the 3 comparisons on devil (LayerNorm vs none,
--                   RMSNorm vs none, LayerNorm vs RMSNorm) and the 2 interactions (each
--                   norm's effect on devil minus its effect on Tiny Shakespeare, per seed):
--                   5 tests; the paired t-test; equivalence by the paired TOST at +-0.02.
--   exploratory     val_ppl, val_acc, ece and the secondary instruments.
--
-- Budget, in default runs (300 steps of the 8x128 model on Tiny Shakespeare, about 45 s at
-- 2 threads on the reference 2-core machine, 90 core-seconds).  30 runs, the 15 on Tiny
-- Shakespeare copied from final: 15 trained of about 0.96 default runs each (the final
-- evaluation covers a validation split a third of Tiny Shakespeare's): about 14 default
-- runs, 11 minutes at 2 threads, 0.36 core-hours.
local CORPUS = { tag = "devil", data = "data/devil.txt" }
local BASE_TAG = "ts"
local NORMS = { "none", "layernorm", "rmsnorm" }

local variants, comparisons, interactions = {}, {}, {}
for _, c in ipairs({ CORPUS, { tag = BASE_TAG } }) do
  for _, norm in ipairs(NORMS) do
    variants[#variants + 1] = { name = norm .. "-" .. c.tag, embed_norm = norm, data = c.data }
  end
end
local t = CORPUS.tag
comparisons = { { "layernorm-" .. t, "none-" .. t }, { "rmsnorm-" .. t, "none-" .. t },
  { "layernorm-" .. t, "rmsnorm-" .. t } }
for _, norm in ipairs({ "layernorm", "rmsnorm" }) do
  interactions[#interactions + 1] = {
    name = norm .. " effect, " .. t .. " minus Tiny Shakespeare",
    a = { norm .. "-" .. t, "none-" .. t },
    b = { norm .. "-" .. BASE_TAG, "none-" .. BASE_TAG },
  }
end

return {
  name = "final_devil",
  description = "The final protocol on The Devil's Dictionary (data/devil.txt) beside Tiny "
    .. "Shakespeare: the default Pre-LN GPT (8 layers, width 128, GPT-2 init, 300 "
    .. "iterations, peak lr 3e-4) with no embedding norm, LayerNorm or RMSNorm, seeds 1-5, "
    .. "with interactions testing whether each norm's effect differs between the corpora. "
    .. "The Tiny Shakespeare runs are final.lua's (identical configs, copied), so 15 runs "
    .. "train. Primary val_loss (minimum effect 0.02 nats), alpha 0.05, paired t-test, "
    .. "Holm over 3 comparisons and 2 interactions.",
  depends = { "final" },
  base = { diag_every = 25 },
  variants = variants,
  seeds = { 1, 2, 3, 4, 5 },
  checkpoint_every = 50,
  analysis = {
    baseline = "none-" .. t,
    comparisons = comparisons,
    interactions = interactions,
    metrics = { "val_loss", "val_ppl", "val_acc", "ece" },
    secondary = { "max_loss_jump", "max_grad_norm", "logit_growth", "embed_norm",
      "final_grad_norm" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
  },
}
