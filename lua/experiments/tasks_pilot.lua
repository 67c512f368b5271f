-- The pilot of the task study (lua/experiments/tasks.lua), pre-registered
-- before any run.  It decides how long the task study trains and gives its seeds from
-- power; it tests nothing.
--
-- Both set-ups of the task study (the final protocol, GPT-2 init; the claim's, PyTorch
-- init, 4 blocks, tied, as claim_search selected it first) with no embedding norm and
-- LayerNorm, each trained for 300, 600 and 1,200 iterations (the horizon study shows
-- the loss still falling at 1,200), seeds 1-3, every run scoring the core task suite
-- (config key tasks; lua/repro/tasks) zero- and 3-shot.
--
-- Length rule (applied by lua/experiments/tasks.lua to this study's summary): for each
-- set-up, the shortest of the three lengths at which the no-norm baseline's mean
-- zero-shot accuracy over the 3 seeds lies above the upper end of the task's 99 %
-- chance interval (summary.tasks.chance[task].hi) on at least 4 of the 6 tasks (most
-- of them); if no length does, 1,200.
-- Power: the task study's seeds come from the largest paired-difference sd of this
-- pilot's comparisons on its primary metric (LayerNorm vs none at every set-up and
-- length), at its 80 % upper confidence limit.
local SEARCH = "claim_search"
local selected = repro.result(SEARCH, "claim", "selected")
local ranking = repro.result(SEARCH, "claim", "ranking")
local claim_setup
for _, e in ipairs(ranking or {}) do
  if selected and e.variant == selected[1] then claim_setup = e.overrides end
end

local LENGTHS = { 300, 600, 1200 }
-- When claim_search selected no set-up (every candidate excluded, as at a tiny budget),
-- the claim's set-up is left out and only the final protocol runs.
local SETUPS = { { name = "gpt2", overrides = {} } }
if claim_setup then SETUPS[2] = { name = "torch", overrides = claim_setup } end
local variants, comparisons = {}, {}
for _, setup in ipairs(SETUPS) do
  for _, iters in ipairs(LENGTHS) do
    local stem = string.format("%s-%d", setup.name, iters)
    for _, norm in ipairs({ "none", "layernorm" }) do
      local v = { name = stem .. "-" .. norm, embed_norm = norm, iters = iters }
      for k, x in pairs(setup.overrides) do v[k] = x end
      variants[#variants + 1] = v
    end
    comparisons[#comparisons + 1] = { stem .. "-layernorm", stem .. "-none" }
  end
end

local metrics = { "task_macro_acc_0shot", "task_macro_acc_3shot", "val_loss" }
for _, t in ipairs({ "completion", "spelling", "order", "agreement", "speaker", "capital" }) do
  metrics[#metrics + 1] = "task_" .. t .. "_0shot_acc"
end

return {
  name = "tasks_pilot",
  description = "Pilot of the task study: the final protocol (GPT-2 init) and the claim's "
    .. "set-up (PyTorch init, 4 blocks, tied) with no embedding norm and LayerNorm, trained "
    .. "300, 600 and 1,200 iterations, seeds 1-3, scoring the core task suite zero- and "
    .. "3-shot. It decides the task study's training length (per set-up, the shortest "
    .. "length whose baseline beats the 99 % chance interval on at least 4 of the 6 tasks) "
    .. "and feeds its power; its comparisons are descriptive (primary zero-shot macro "
    .. "accuracy, minimum effect 0.02, alpha 0.05, paired t-test, Holm over 6).",
  base = { tasks = "core" },
  variants = variants,
  seeds = { 1, 2, 3 },
  checkpoint_every = 100,
  analysis = {
    baseline = "gpt2-300-none",
    metrics = metrics,
    primary = "task_macro_acc_0shot",
    better = "higher",
    min_effect = 0.02,
    alpha = 0.05,
    correction = "holm",
    resamples = 10000,
    test = "t",
    comparisons = comparisons,
    tasks = { suite = "core", shots = { 0, 3 } },
  },
}
