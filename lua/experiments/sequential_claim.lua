-- The paper's open question, decided by sequential seeds (pre-registered before any run).
-- At the set-up closest to the student's claim (PyTorch's default initialization: token
-- and position embeddings N(0, 1), PyTorch's Linear init, no residual rescaling, tied
-- output; 4 blocks, 150 iterations), does LayerNorm after the embeddings change the
-- validation loss?  init_parts (seeds 101-111) left it open: -0.0097 nats [-0.088, 0.069].
--
-- Design.  No norm against LayerNorm, each at the learning rate and floor init_parts_sweep
-- found best for it (repro.best_config: 1e-2 and 1e-3 for both; the edge sweep found 3e-2
-- worse).  Fresh seeds 1001, 1002, ... in that order, looked at after 10, 20, 40, 70 and
-- 100 seeds per variant; 100 is the cap (200 runs).  Boundaries of O'Brien-Fleming shape
-- for the signed-rank test, calibrated by simulation to two-sided alpha 0.05
-- (stats.seq_calibrate, lua/repro/analysis/sequential.lua).
--
-- Primary: the Hodges-Lehmann estimate of LayerNorm minus none on val_loss with its repeated
-- exact Wilcoxon interval.  The comparison stops at the first look where the standardized
-- signed-rank statistic reaches its boundary (a difference: better or worse) or the
-- repeated interval lies inside +-0.02 nats (equivalent); otherwise at the cap,
-- inconclusive.  At the stop the interval is also judged against the claim's effect,
-- -0.072 nats (the log of its perplexity ratio 20.64 / 22.18): inside or outside.
-- Companion: the paired t-test on the same seeds (the summary's comparison).  Secondary,
-- descriptive: the share of runs per arm that go bad (diverged, or a final validation loss
-- more than 0.1 nats above the arm's median over the seeds used).
-- Planning sd 0.1168: the paired-difference sd of the same comparison in init_parts.
local SWEEP = "init_parts_sweep"
local TPLR = { tok_init_std = 1.0, pos_init_std = 1.0, linear_init = "torch",
  resid_rescale = false }

local variants = {}
for _, norm in ipairs({ "none", "layernorm" }) do
  local name = "TPLR-" .. norm
  local best = repro.best_config(SWEEP, name)
  local v = { name = name, embed_norm = norm, lr = best.lr, min_lr = best.min_lr }
  for k, x in pairs(TPLR) do v[k] = x end
  variants[#variants + 1] = v
end

local seeds = {}
for i = 1, 100 do seeds[i] = 1000 + i end

return {
  name = "sequential_claim",
  description = "The open question by sequential seeds: at the claim's closest set-up "
    .. "(PyTorch's default init, 4 blocks, 150 iterations, each variant at its best lr), "
    .. "LayerNorm vs none on fresh seeds 1001, ..., looks at 10, 20, 40, 70, 100 per "
    .. "variant, O'Brien-Fleming boundaries for the signed-rank test; stop for a "
    .. "difference or for equivalence within 0.02 nats; the claim's -0.072 judged at the stop.",
  depends = { SWEEP },
  base = { n_layer = 4, iters = 150, diag_every = 15 },
  variants = variants,
  seeds = seeds,
  analysis = {
    baseline = "TPLR-none",
    comparisons = { { "TPLR-layernorm", "TPLR-none" } },
    metrics = { "val_loss", "val_ppl", "val_acc" },
    secondary = { "max_grad_norm", "embed_norm" },
    primary = "val_loss",
    better = "lower",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    sequential = { looks = { 10, 20, 40, 70, 100 }, shape = "obf", test = "signed_rank",
      stop = { "difference", "equivalence" }, margin = 0.02, target = -0.072,
      sd = 0.1168, sd_source = "experiments/init_parts/summary.json: the comparison "
        .. "TPLR-layernorm vs TPLR-none on val_loss, seeds 101-111" },
  },
}
