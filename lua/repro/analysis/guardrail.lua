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
  if not ng or type(ppl) ~= "number" or ppl ~= ppl then return nil end
  if ppl >= ng.unigram_ppl then
    return { variant = variant, val_ppl = ppl, unigram_ppl = ng.unigram_ppl, data = data,
      level = "unigram", bigram_ppl = ng.bigram_ppl,
      text = string.format("%s: validation PPL %s is at or above the unigram PPL %s of %s: " ..
        "the model learned nothing beyond character frequencies, so a verdict involving it " ..
        "says nothing about the question", variant, fmt(ppl), fmt(ng.unigram_ppl), data) }
  elseif ppl >= ng.bigram_ppl then
    return { variant = variant, val_ppl = ppl, unigram_ppl = ng.unigram_ppl, data = data,
      level = "bigram", bigram_ppl = ng.bigram_ppl,
      text = string.format("%s: validation PPL %s is at or above the bigram PPL %s of %s " ..
        "(below its unigram PPL %s): the model learned less than character pairs, so a " ..
        "verdict involving it says little about the question", variant, fmt(ppl),
        fmt(ng.bigram_ppl), data, fmt(ng.unigram_ppl)) }
  end
  return nil
end

-- The variants in the verdicts, as a set.
local function in_verdicts(verdicts)
  local set = {}
  for _, v in ipairs(verdicts or {}) do set[v.treatment], set[v.baseline] = true, true end
  return set
end

-- Both levels for a summary (summary.json's fields): each variant of a verdict, its
-- corpus from command_line_overrides, its overrides, the study's base or the default.
function M.of_summary(summary)
  local set = type(summary.command_line_overrides) == "table" and
    summary.command_line_overrides or {}
  local base = summary.base or {}
  local default = engine.defaults().data
  local in_verdict = in_verdicts(summary.verdicts)
  local out = {}
  for _, v in ipairs(summary.variants or {}) do
    local data = set.data or (v.overrides or {}).data or base.data or default
    local pv = (summary.per_variant or {})[v.name]
    local ppl = pv and pv.metrics and pv.metrics.val_ppl and pv.metrics.val_ppl.mean
    local w = in_verdict[v.name] and M.entry(v.name, ppl, data)
    if w then out[#out + 1] = w end
  end
  return out
end

return M
