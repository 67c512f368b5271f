-- The guardrail: how a study's models compare with the n-gram models of their corpus
-- (engine.ngram_ppl, engine/ngram.h: add-one smoothed unigram and bigram models fitted on
-- the training split, evaluated on the validation split).  A variant of a verdict whose
-- mean validation perplexity is
--   at or above the unigram PPL: learned nothing beyond character frequencies;
--   at or above the bigram PPL (below the unigram): learned less than character pairs;
-- either way a verdict involving it says little about the question (too few steps, too
-- small a learning rate, a broken set-up).
--
-- summary.json's `warnings` holds both levels (analysis.guardrail_warnings, each entry
-- with its `level`); M.of_summary gives the same from a summary alone, for the terminal
-- (report/terminal.lua) and the report (report/standalone.lua).
local engine = require "engine"
local words = require "repro.analysis.words"
local finite = require("repro.core.base").finite

local M = {}

local fmt = words.fmt

-- The n-gram perplexities of a corpus (engine.ngram_ppl), by path, or nil.
local cache = {}
function M.ngram(data)
  if cache[data] == nil then
    local ok, r = pcall(engine.ngram_ppl, data)
    cache[data] = ok and r or false
  end
  return cache[data] or nil
end

-- The warning of a variant at mean PPL ppl on corpus data, or nil.
function M.entry(variant, ppl, data)
  local ng = data and M.ngram(data)
  if not ng or not finite(ppl) then return nil end
  local level = ppl >= ng.unigram_ppl and "unigram" or ppl >= ng.bigram_ppl and "bigram"
  if not level then return nil end
  return { variant = variant, val_ppl = ppl, unigram_ppl = ng.unigram_ppl, data = data,
    level = level, bigram_ppl = ng.bigram_ppl,
    text = level == "unigram" and string.format("%s: validation PPL %s is at or above the " ..
      "unigram PPL %s of %s: the model learned nothing beyond character frequencies, so a " ..
      "verdict involving it says nothing about the question", variant, fmt(ppl),
      fmt(ng.unigram_ppl), data) or string.format("%s: validation PPL %s is at or above the " ..
      "bigram PPL %s of %s (below its unigram PPL %s): the model learned less than character " ..
      "pairs, so a verdict involving it says little about the question", variant, fmt(ppl),
      fmt(ng.bigram_ppl), data, fmt(ng.unigram_ppl)) }
end

-- The warnings of the variants of the verdicts (M.entry), in the order of `variants`, by
-- the mean validation PPL of per_variant and the corpus data_of(variant) gives.
function M.warnings(variants, per_variant, verdicts, data_of)
  local in_verdict = {}
  for _, v in ipairs(verdicts or {}) do
    in_verdict[v.treatment], in_verdict[v.baseline] = true, true
  end
  local out = {}
  for _, v in ipairs(variants or {}) do
    local pv = (per_variant or {})[v.name]
    local ppl = pv and pv.metrics and pv.metrics.val_ppl and pv.metrics.val_ppl.mean
    local w = in_verdict[v.name] and M.entry(v.name, ppl, data_of(v))
    if w then out[#out + 1] = w end
  end
  return out
end

-- Both levels for a summary (summary.json's fields): each variant of a verdict, its
-- corpus from command_line_overrides, its overrides, the study's base or the default.
function M.of_summary(summary)
  local set = type(summary.command_line_overrides) == "table" and
    summary.command_line_overrides or {}
  local base = summary.base or {}
  local default = engine.defaults().data
  return M.warnings(summary.variants, summary.per_variant, summary.verdicts, function(v)
    return set.data or (v.overrides or {}).data or base.data or default
  end)
end

return M
