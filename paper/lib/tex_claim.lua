-- The claim's Table 1 beside the suite's numbers, from summaries: this paper's tables and
-- macros, added to the report by the manifest (paper/paper.lua: extensions).  claim: one
-- row per variant of each source (the claim's Table 1, each set-up of the study that
-- reproduces it, every other study run at the claim's protocol) with the corpus's unigram
-- and bigram perplexities; claim_effects: the norms' effects on perplexity, the claim's
-- beside each set-up's with its interval and verdict; claim_search: the search's ranking.
-- A study whose summary has no such `claim` gets a sentence.
local engine = require "engine"
local F = require "repro.report.texfmt"
local tbl = require "repro.report.table"
local claim = require("repro.core.extension").load("claim", "paper/lib/tex_claim.lua")

local M = {}

local DASH = F.DASH
local ROWS = claim.ROWS
local NORMS = { "layernorm", "rmsnorm" }
local LABEL = { none = "none", layernorm = "LayerNorm", rmsnorm = "RMSNorm" }

local function unavailable(s, what)
  return F.of_study(s, F.unavailable("the " .. F.escape(s.name) .. " study's summary has " ..
    what))
end

-- The summary's `claim` of stage table1, or nil.
local function table1(s)
  local c = s.summary.claim
  return c and c.stage == "table1" and c.setups and c or nil
end

-- The summary's `claim` of a distance-2 search, or nil.
local function search2(s)
  local c = s.summary.claim
  return c and c.stage == "search" and c.distance_version == 2 and c or nil
end

local function int(x)
  return F.finite(x) and string.format("%d", math.floor(x + 0.5)) or DASH
end

local function pm(m, dec)
  if not (m and F.finite(m.mean)) then return DASH end
  if F.finite(m.sd) and (m.n or 2) > 1 then
    return F.num(m.mean, dec) .. " $\\pm$ " .. F.num(m.sd, dec)
  end
  return F.num(m.mean, dec)
end

-- A config key's value in words, for the set-ups' notes ("4 blocks", "dropout 0.1").
local WORDS = {
  init = { torch = "PyTorch's default initialization", gpt2 = "the GPT-2 initialization" },
  tie_embeddings = { [true] = "output layer tied to the token embedding",
    [false] = "untied output layer" },
  lr_schedule = { cosine = "warmup and cosine decay", constant = "a constant learning rate" },
}
local FORMATS = { n_layer = "%s blocks", d_model = "width %s", dropout = "dropout %s",
  warmup = "warmup %s", pos_init_std = "position embeddings drawn at $\\sigma = %s$",
  tok_init_std = "token embeddings drawn at $\\sigma = %s$", lr = "peak learning rate %s" }
local function setting_words(k, v)
  local w = WORDS[k] and WORDS[k][v]
  if w then return w end
  local f = FORMATS[k] or (F.escape(k:gsub("_", " ")) .. " %s")
  return (f:gsub("%%s", function() return F.config_text(v) end))
end

-- A set-up is labelled by its name and listed in a note with its no-norm variant's config
-- as it differs from the default model (engine.defaults(), under the study's base): an
-- override equal to the default is not a difference.
local function setup_note(s, su)
  local v = s.variant_by_name[su.rows.none and su.rows.none.variant or ""]
  local keys, parts, defaults = {}, {}, engine.defaults()
  for k, x in pairs(v and v.overrides or {}) do
    local default = s.base[k]
    if default == nil then default = defaults[k] end
    if k ~= "embed_norm" and x ~= default then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = setting_words(k, v.overrides[k]) end
  return #parts > 0 and table.concat(parts, ", ") or "the study's base config"
end

-- The note under a table that lists the set-ups; `marked`: the closest set-up and the
-- reference arm (the set-up named `ref`) said so.
local function setups_note(s, c, marked)
  local notes = {}
  for k, su in ipairs(c.setups) do
    local note = string.format("set-up %d, %s", k, setup_note(s, su))
    if marked and c.closest and su.name == c.closest.setup then
      note = note .. " (the closest to the claim's)"
    elseif marked and su.name == "ref" then
      note = note .. " (GPT-2's initialization, as in the default model)"
    end
    notes[k] = note
  end
  return "\\par\\smallskip\\footnotesize The set-ups, as they differ from the default " ..
    "model: " .. table.concat(notes, "; ") .. ".\n"
end

-- The search's ranking (a summary's `claim` of stage search, distance 2): the `top`
-- closest admissible set-ups with each term's z and value, the count excluded at or above
-- the unigram perplexity, and the pilot sd offered to the next stage.
function M.search_table(s, _, entry)
  local c = search2(s)
  if not c then return unavailable(s, "no distance-2 search of the claim's set-up") end
  local top = entry and entry.top or 5
  local cl = c.claim or {}
  local rows = { { "", "claim (Table~1, no norm)", "", F.num(cl.val_ppl, 2), "",
    F.num(cl.embed_norm, 2), "", F.num(cl.mock_acc, 4), "", "" }, { rule = true } }
  for i, e in ipairs(c.ranking or {}) do
    if i > top then break end
    local z = {}
    for _, t in ipairs(e.distance and e.distance.terms or {}) do z[t.metric] = t.z end
    local v = e.values or {}
    rows[#rows + 1] = { string.format("%d", e.rank), "\\texttt{" .. F.escape(e.variant) .. "}",
      F.num(e.distance and e.distance.d, 1), F.num(v.val_ppl, 2), F.num(z.val_ppl, 2),
      F.num(v.embed_norm, 2), F.num(z.embed_norm, 2), F.num(v.bal_subset_acc_mean, 4),
      F.num(z.bal_subset_acc_mean, 2), F.num(z.final_grad_norm, 2) }
  end
  local n_rank, n_ex = #(c.ranking or {}), #(c.excluded or {})
  return F.of_study(s, tbl.tabular({ align = "rlrrrrrrrr", rows = rows, head = { "Rank",
    "Set-up", "$D$", "Val.\\ PPL", "$z$", "Embed.\\ norm", "$z$", "Bal.\\ acc.\\ (150)",
    "$z$", "$z$ grad" } }, { fit = true }) .. string.format("\\par\\smallskip\\footnotesize " ..
    "The %d closest of %d admissible set-ups; %d of %d excluded before ranking (validation " ..
    "PPL at or above the unigram perplexity %s). Threshold of a match: $D \\le %s$.\n",
    math.min(top, n_rank), n_rank, n_ex, n_rank + n_ex,
    F.num(c.ngram and c.ngram.unigram_ppl, 2), F.num(c.threshold, 0)))
end

-- Each variant's embed_norm when study o ran at the claim's protocol (every run of its
-- records `iters` iterations, the claim study's, at the default peak lr); nil for any
-- other study.
local function norms_at_protocol(o, iters)
  local lr = engine.defaults().lr
  local norm_of
  for _, v in ipairs(o.summary.variants or {}) do
    for _, seed in ipairs(o.seeds) do
      local cfg = o:record(v.name, seed).config
      if not cfg or cfg.iters ~= iters or cfg.lr ~= lr then return nil end
      norm_of = norm_of or {}
      norm_of[v.name] = cfg.embed_norm
    end
  end
  return norm_of
end

-- The claim table's rows of the claim's Table 1 (as the first set-up's rows carry it).
local function claim_rows(c, rows)
  local n = c.claim and c.claim.mock_acc_samples
  for i, row in ipairs(ROWS) do
    local r = c.setups[1] and c.setups[1].rows[row]
    local cl = r and r.claim
    if cl then
      local acc = F.num(cl.mock_acc, 4)
      if n and r.mock_acc_count then
        acc = acc .. string.format(" (%s/%d)", F.fixed(r.mock_acc_count, 0), n)
      end
      rows[#rows + 1] = { i == 1 and "claim (Table~1)" or "", LABEL[row],
        string.format("%d", c.claim.seeds), F.num(cl.val_ppl, 2) .. " $\\pm$ " ..
        F.num(cl.val_ppl_sd, 2), acc, F.num(cl.final_grad_norm, 4), F.num(cl.embed_norm, 2),
        DASH }
    end
  end
end

-- The claim table's rows of every other study at the claim's protocol: its variants whose
-- embed_norm has a row in the claim's Table 1, in its order.
local function protocol_rows(s, ctx, c, rows, balanced)
  for _, name in ipairs(ctx.names) do
    local o = ctx.by_name[name]
    local norm_of = o and o ~= s and not o.summary.claim and c.claim and
      norms_at_protocol(o, c.claim.iters)
    local first = true
    for _, v in ipairs(norm_of and o.summary.variants or {}) do
      if LABEL[norm_of[v.name]] then
        if first then rows[#rows + 1] = { rule = true } end
        local pv = o.summary.per_variant[v.name]
        local m = pv and pv.metrics or {}
        -- a study without the balanced accuracy has none to show in that column
        local am = m[balanced and "bal_subset_acc_mean" or "subset_acc_mean"]
        rows[#rows + 1] = { first and F.escape(name) or "", LABEL[norm_of[v.name]],
          int(m.val_ppl and m.val_ppl.n), pm(m.val_ppl, 3),
          am and F.finite(am.mean) and F.num(am.mean, 4) or DASH, pm(m.final_grad_norm, 4),
          pm(m.embed_norm, 2), DASH }
        first = false
      end
    end
  end
end

function M.claim_table(s, ctx)
  local c = table1(s)
  if not c then return unavailable(s, "no comparison with the claim's Table~1") end
  local balanced = c.distance_version == 2
  local rows = { { rule = true } }
  claim_rows(c, rows)
  for k, su in ipairs(c.setups) do
    rows[#rows + 1] = { rule = true }
    for i, row in ipairs(ROWS) do
      local r = su.rows[row]
      if r then
        local sub = balanced and r.bal_subset_acc or r.subset_acc
        local acc = sub and F.finite(sub.mean) and
          (F.num(sub.mean, 4) .. " $\\pm$ " .. F.num(sub.sd, 4)) or DASH
        rows[#rows + 1] = { i == 1 and string.format("%s, set-up %d", F.escape(s.name), k) or "",
          LABEL[row], r.val_ppl and int(r.val_ppl.n) or DASH, pm(r.val_ppl, 3), acc,
          pm(r.final_grad_norm, 4), pm(r.embed_norm, 2),
          r.distance and F.finite(r.distance.d) and F.num(r.distance.d, 1) or DASH }
      end
    end
  end
  protocol_rows(s, ctx, c, rows, balanced)
  local g = c.ngram
  if g and F.finite(g.unigram_ppl) then
    rows[#rows + 1] = { rule = true }
    rows[#rows + 1] = { "corpus", "unigram", "", F.num(g.unigram_ppl, 3), "", "", "", "" }
    rows[#rows + 1] = { "", "bigram", "", F.num(g.bigram_ppl, 3), "", "", "", "" }
  end
  return string.format(F.GENERATED, s.dir .. "/summary.json and the studies at the claim's " ..
    "protocol") .. tbl.tabular({ align = "llrrrrrr", rows = rows, head = { "Source", "Variant",
    "Seeds", "Val.\\ PPL", balanced and "Bal.\\ acc.\\ (150)" or "Acc.\\ (150 samples)",
    "Final grad norm", "Embed.\\ norm", "$D$" } }, { fit = true }) .. setups_note(s, c)
end

-- A change of log perplexity d as a signed percentage of perplexity, exp(d) - 1, with 2
-- decimals or more, so that `scale` (a half-width, in log perplexity) shows 2 significant
-- digits.
local function ppl_percent(d, scale)
  if not F.finite(d) then return DASH end
  local dec = math.min(6, math.max(2, F.sig_decimals(100 * (scale or 0), 2)))
  return F.signed(100 * (math.exp(d) - 1), dec) .. "\\,\\%"
end

function M.claim_effects_table(s)
  local c = table1(s)
  if not c then return unavailable(s, "no comparison with the claim's Table~1") end
  local pairs_seen = {}
  for k, su in ipairs(c.setups) do
    for _, ef in ipairs(su.effects or {}) do
      local key = ef.treatment .. "\0" .. ef.baseline
      if not pairs_seen[key] then
        pairs_seen[key] = { label = (LABEL[ef.treatment] or F.escape(ef.treatment)) ..
          " vs " .. (LABEL[ef.baseline] or F.escape(ef.baseline)), claim = ef.claim, rows = {} }
        pairs_seen[#pairs_seen + 1] = key
      end
      local p = pairs_seen[key]
      p.rows[#p.rows + 1] = { source = "set-up " .. k, mean = ef.mean, ci = ef.ci,
        verdict = ef.verdict, n = ef.n }
    end
  end
  local rows = {}
  for i, key in ipairs(pairs_seen) do
    local p = pairs_seen[key]
    if i > 1 then rows[#rows + 1] = { space = true } end
    rows[#rows + 1] = { p.label, string.format("student study (%s seeds)", c.claim and
      c.claim.seeds and int(c.claim.seeds) or DASH), ppl_percent(p.claim), DASH, DASH }
    for _, r in ipairs(p.rows) do
      local ok = r.ci and F.finite(r.ci[1]) and F.finite(r.ci[2])
      local half = ok and (r.ci[2] - r.ci[1]) / 2 or math.abs(r.mean or 0)
      local ci = ok and ("[" .. ppl_percent(r.ci[1], half) .. ", " .. ppl_percent(r.ci[2], half) ..
        "]") or DASH
      rows[#rows + 1] = { "", string.format("%s (%s seeds)", r.source, int(r.n)),
        ppl_percent(r.mean, half), ci, F.escape(r.verdict or DASH) }
    end
  end
  return F.of_study(s, tbl.tabular({ align = "llrrl", rows = rows, head = { "Comparison",
    "Source", "PPL change", "Interval", "Verdict" } }, { fit = true }) .. setups_note(s, c, true))
end

-- A set-up's name for running text: escaped, with a break allowed after each hyphen (a
-- name such as torch-L4-ps-tied-w30cos-d0 would overflow a line in \texttt).
local function breakable(name)
  return (F.escape(name):gsub("%-", "-\\allowbreak{}"))
end

-- A distance term in words: "the embedding norm (0.16 against the claim's quoted 11.46,
-- $z = -42.8$)".
local function term_text(t)
  local m = F.METRIC[t.metric]
  local function sig(x) return F.num(x, F.finite(x) and F.sig_decimals(x, 4) or 0) end
  return string.format("the %s (%s against the claim's quoted %s, $z = %s$)", m and m.noun or
    F.escape(t.metric), sig(t.value), sig(t.claim), F.num(t.z, 1))
end

-- A distance's term farthest from the claim, and every term whose |z| exceeds 2 (the
-- per-term size of a match) joined with "and": S.."...Worst" and S.."...Off".
local function def_worst_terms(def, K, d)
  if not (d and d.terms) then
    def(K .. "Worst", DASH)
    def(K .. "Off", DASH)
    return
  end
  local worst, over = nil, {}
  for _, t in ipairs(d.terms) do
    if not worst or math.abs(t.z) > math.abs(worst.z) then worst = t end
    if math.abs(t.z) > 2 then over[#over + 1] = term_text(t) end
  end
  def(K .. "Worst", term_text(worst))
  def(K .. "Off", #over > 0 and F.list(over) or "none")
end

-- A distance-2 search's macros (S its prefix): S.."SearchAdmissible" and "SearchExcluded"
-- (counts), "SearchClosest" and "SearchSecond" (names), "SearchClosestD", its farthest
-- terms ("SearchClosestWorst", "SearchClosestOff"), parameter count and initial loss,
-- the PPL range of each init scheme and output layer ("SearchPpl<Init><Tied|Untied>Min"
-- and "...Max"), "SearchMatch" ("matches" or "does not match"), "SearchThreshold",
-- "SearchPilotSd" and "SearchPilotDf" (the pilot offered to the next stage),
-- "SearchUnigramPpl".
local function search_numbers(def, s, S)
  local c = search2(s)
  if not c then return end
  local r = c.ranking or {}
  def(S .. "SearchAdmissible", string.format("%d", #r))
  def(S .. "SearchExcluded", string.format("%d", #(c.excluded or {})))
  def(S .. "SearchClosest", r[1] and breakable(r[1].variant) or DASH)
  def(S .. "SearchSecond", r[2] and breakable(r[2].variant) or DASH)
  def(S .. "SearchClosestD", r[1] and r[1].distance and F.num(r[1].distance.d, 1) or DASH)
  def_worst_terms(def, S .. "SearchClosest", r[1] and r[1].distance)
  -- means over the closest set-up's seeds
  local pv = r[1] and s.summary.per_variant[r[1].variant]
  local m = pv and pv.metrics or {}
  def(S .. "SearchClosestParams", m.params and F.finite(m.params.mean) and
    ("\\num{" .. F.fixed(m.params.mean / 1e6, 2) .. "}\\,M") or DASH)
  def(S .. "SearchClosestInitLoss", m.init_loss and F.num(m.init_loss.mean, 1) or DASH)
  local range = {}
  for _, e in ipairs(r) do
    local o = e.overrides or {}
    local key = F.macro(tostring(o.init or "gpt2")) .. (o.tie_embeddings == false and
      "Untied" or "Tied")
    local x = e.values and e.values.val_ppl
    if F.finite(x) then
      local g = range[key] or { min = x, max = x }
      g.min, g.max = math.min(g.min, x), math.max(g.max, x)
      range[key] = g
    end
  end
  for _, init in ipairs({ "gpt2", "torch" }) do
    for _, tie in ipairs({ "Tied", "Untied" }) do
      local key = F.macro(init) .. tie
      local g = range[key]
      def(S .. "SearchPpl" .. key .. "Min", g and F.num(g.min, 1) or DASH)
      def(S .. "SearchPpl" .. key .. "Max", g and F.num(g.max, 1) or DASH)
    end
  end
  def(S .. "SearchMatch", c.matches_any and "matches" or "does not match")
  def(S .. "SearchThreshold", F.num(c.threshold, 0))
  def(S .. "SearchPilotSd", c.pilot and F.num(c.pilot.sd, 3) or DASH)
  def(S .. "SearchPilotDf", c.pilot and string.format("%d", c.pilot.df) or DASH)
  def(S .. "SearchUnigramPpl", F.num(c.ngram and c.ngram.unigram_ppl, 2))
end

-- Set-up su's pre-registered verdict and perplexity change of each norm against its
-- no-norm row, as K..<Norm>.."Verdict" and "...PplChange" (dashes when either is missing).
local function def_norm_effects(def, s, K, su)
  local b = su and su.rows.none and su.rows.none.variant
  for _, row in ipairs(NORMS) do
    local verdict, change = DASH, DASH
    local t = su and su.rows[row] and su.rows[row].variant
    for _, v in ipairs(s.summary.verdicts or {}) do
      if v.treatment == t and v.baseline == b then verdict = F.escape(v.verdict) end
    end
    for _, cmp in ipairs(s.summary.comparisons or {}) do
      if cmp.treatment == t and cmp.baseline == b and cmp.metric == s.primary then
        change = F.percent(cmp.val_ppl_change)
      end
    end
    def(K .. F.macro(row) .. "Verdict", verdict)
    def(K .. F.macro(row) .. "PplChange", change)
  end
end

-- The interactions on the primary metric (the prose names two, a dash where there is
-- none): S.."ClaimInteraction<k>Delta", "...CI" and "...Verdict" ("\emph{verdict}
-- (Holm-adjusted $p$ = ...)").
local function interaction_numbers(def, s, S)
  local list = {}
  for _, e in ipairs(s.summary.interactions or {}) do
    if e.metric == s.primary then list[#list + 1] = e end
  end
  for k = 1, math.max(2, #list) do
    local e, K = list[k], S .. "ClaimInteraction" .. F.macro(tostring(k))
    local ci = e and (e.ci_decision or e.ci)
    def(K .. "Delta", F.num(e and e.mean, 3))
    def(K .. "CI", ci and F.interval(ci, 3) or DASH)
    local p = F.p(e and e.p_holm)
    def(K .. "Verdict", not (e and e.p_holm) and DASH or string.format("\\emph{%s} (Holm-" ..
      "adjusted $p$ %s%s)", F.escape(e.verdict or DASH), p:find("<", 1, true) and "" or "= ", p))
  end
end

-- The rows of any set-up within the threshold of the claim's row of the same norm, in
-- words ("the no-norm row of set-up 2 ($D = 3.1 \le 13$)").
local function matching_rows(c, best)
  local matching = {}
  for k, su in ipairs(c.setups) do
    for _, row in ipairs(ROWS) do
      local d = su.rows and su.rows[row] and su.rows[row].distance
      if d and d.matches then
        local who = su.name == "ref" and "the GPT-2 set-up" or
          (best and su == best) and "the closest set-up" or string.format("set-up %d", k)
        matching[#matching + 1] = string.format("the %s row of %s ($D = %s \\le %s$)",
          row == "none" and "no-norm" or LABEL[row], who, F.num(d.d, 2), F.num(c.threshold, 0))
      end
    end
  end
  return matching
end

-- How set-up su draws its position embeddings (its no-norm variant's config, an unset std
-- resolved as the engine does): "$N(0, 1)$", "as zeros" or "$N(0, sigma^2)$".
local function pos_init(s, su)
  local v = su and su.rows and su.rows.none and su.rows.none.variant
  if not (v and s.variant_by_name[v]) then return DASH end
  local cfg = {}
  for _, k in ipairs({ "init", "pos_init_std", "embed_init_std" }) do
    cfg[k] = s:config_value(v, k)
  end
  local std = engine.effective(cfg).pos_init_std
  return not F.finite(std) and DASH or std == 0 and "as zeros" or std == 1 and "$N(0, 1)$" or
    string.format("$N(0, %s^2)$", F.config_text(std))
end

-- A distance-2 Table-1 study's further macros: per set-up k (1, 2, ... in the summary's
-- order; the prose names 1-3) S.."ClaimSetup<k>Name"; the reference arm's (the set-up named
-- `ref`) norm effects S.."ClaimRef<Norm>Verdict" and "...PplChange"; the interactions;
-- whether the claim's effect of each norm (the log of its ratio of mean perplexities) lies
-- inside the closest set-up's decision interval, S.."ClaimClosest<Norm>ClaimInside"; each
-- row's distance at the reference arm, S.."ClaimRef<Row>D"; the closest set-up's position
-- embeddings, S.."ClaimClosestPosInit"; the matching rows, S.."ClaimMatchingRows", "...N"
-- and "...Clause" (with its verb); the closest set-up's balanced accuracy over the split
-- per row, S.."ClaimClosest<Row>BalAccSplit"; its no-norm row's farthest terms,
-- S.."ClaimClosestWorst" and "ClaimClosestOff" (as the search's), and its balanced
-- accuracy on 150 positions, S.."ClaimClosestBalAcc" (mean +- sd over seeds x subsets).
local function table1_v2_numbers(def, s, S, c, best)
  for k = 1, math.max(3, #c.setups) do
    local su = c.setups[k]
    def(S .. "ClaimSetup" .. F.macro(tostring(k)) .. "Name", su and breakable(su.name) or DASH)
  end
  local ref
  for _, su in ipairs(c.setups) do if su.name == "ref" then ref = su end end
  def_norm_effects(def, s, S .. "ClaimRef", ref)
  interaction_numbers(def, s, S)
  for _, row in ipairs(NORMS) do
    local where = DASH
    for _, e in ipairs(best and best.effects or {}) do
      local ci = e.ci_decision or e.ci
      if e.treatment == row and e.metric == "val_loss" and F.finite(e.claim) and ci and
          F.finite(ci[1]) and F.finite(ci[2]) then
        where = (e.claim >= ci[1] and e.claim <= ci[2]) and "inside" or "outside"
      end
    end
    def(S .. "ClaimClosest" .. F.macro(row) .. "ClaimInside", where)
  end
  for _, row in ipairs(ROWS) do
    local d = ref and ref.rows and ref.rows[row] and ref.rows[row].distance
    def(S .. "ClaimRef" .. F.macro(row) .. "D", d and F.num(d.d, 1) or DASH)
  end
  def(S .. "ClaimClosestPosInit", best and pos_init(s, best) or DASH)
  local matching = matching_rows(c, best)
  def(S .. "ClaimMatchingRows", #matching == 0 and "none" or table.concat(matching, "; "))
  def(S .. "ClaimMatchingRowsN", string.format("%d", #matching))
  def(S .. "ClaimMatchingRowsClause", #matching == 0 and "no row is within the threshold" or
    #matching == 1 and ("the only row within the threshold is " .. matching[1]) or
    ("the rows within the threshold are " .. table.concat(matching, "; ")))
  for _, row in ipairs(ROWS) do
    local ba = best and best.rows[row] and best.rows[row].bal_acc
    def(S .. "ClaimClosest" .. F.macro(row) .. "BalAccSplit", ba and F.num(ba.mean, 4) or DASH)
  end
  def_worst_terms(def, S .. "ClaimClosest", best and best.rows.none and best.rows.none.distance)
  local b = best and best.rows.none and best.rows.none.bal_subset_acc
  def(S .. "ClaimClosestBalAcc", b and F.finite(b.mean) and (F.num(b.mean, 3) ..
    " $\\pm$ " .. F.num(b.sd, 3)) or DASH)
end

-- A percentage with no sign and no decimals: "\num{7}\,\%".
local function whole_percent(x)
  return "\\num{" .. F.fixed(x, 0) .. "}\\,\\%"
end

-- numbers.tex's macros of a study with a `claim` of stage table1 (S its macro prefix):
-- the search's and the distance-2 ones above, then S.."ClaimUnigramPpl",
-- "ClaimBigramPpl", "ClaimThreshold", "ClaimClosest" (the set-up's name),
-- "ClaimClosest<Norm>Verdict" and "...PplChange" (its pre-registered verdicts against no
-- norm, by the groups its rows name, so the prose need not name a set-up that depends on
-- the search's data), "ClaimClosestD", "ClaimMatch" ("matches" or "does not match"),
-- "ClaimAccSamples", "ClaimSubsetAccSd" (the sd of accuracy over 150-sample subsets of one
-- run's validation predictions, the closest set-up's no-norm runs), "ClaimTolerance",
-- "ClaimNSetups", "ClaimSeeds", "ClaimIters", per row the claim's "ClaimTable<Row>Ppl",
-- "...MockAcc" and "...EmbedNorm" and the closest set-up's "...EmbedNormOurs", the claim's
-- own changes "ClaimTable<Norm>PplChange" and their rounded sizes "...PplSize" ("7 %"),
-- the corpus's "ClaimVocab" and "ClaimTrainShare" (the training split's share), and
-- "ClaimMockAccCounts" (the claim's mock accuracies as counts: "8, 10 and 9").
function M.numbers(def, s, S)
  search_numbers(def, s, S)
  local c = table1(s)
  if not c then return end
  local best = claim.closest_setup(c)
  if c.distance_version == 2 then table1_v2_numbers(def, s, S, c, best) end
  local g = c.ngram or {}
  def(S .. "ClaimUnigramPpl", F.num(g.unigram_ppl, 2))
  def(S .. "ClaimBigramPpl", F.num(g.bigram_ppl, 2))
  def(S .. "ClaimThreshold", F.num(c.threshold, 0))
  def(S .. "ClaimClosest", best and breakable(best.name) or DASH)
  def_norm_effects(def, s, S .. "ClaimClosest", best)
  def(S .. "ClaimClosestD", c.closest and F.num(c.closest.d, 1) or DASH)
  def(S .. "ClaimMatch", c.matches_any and "matches" or "does not match")
  def(S .. "ClaimAccSamples", c.claim and string.format("%d", c.claim.mock_acc_samples) or DASH)
  local sub = best and best.rows.none and best.rows.none.subset_acc
  def(S .. "ClaimSubsetAccSd", sub and F.num(sub.sd, 3) or DASH)
  def(S .. "ClaimTolerance", F.finite(c.tolerance) and F.percent(c.tolerance):gsub("%+", "") or
    DASH)
  def(S .. "ClaimNSetups", string.format("%d", #c.setups))
  def(S .. "ClaimSeeds", c.claim and string.format("%d", c.claim.seeds) or DASH)
  def(S .. "ClaimIters", c.claim and string.format("%d", c.claim.iters) or DASH)
  -- the claim's rows as the first set-up carries them, and its mock accuracies as counts
  local claim_row, counts = {}, {}
  for _, row in ipairs(ROWS) do
    local r = c.setups[1] and c.setups[1].rows[row]
    claim_row[row] = r and r.claim
    if r and r.mock_acc_count then counts[#counts + 1] = F.fixed(r.mock_acc_count, 0) end
  end
  for _, row in ipairs(ROWS) do
    local T, cl = S .. "ClaimTable" .. F.macro(row), claim_row[row]
    def(T .. "Ppl", cl and F.num(cl.val_ppl, 2) or DASH)
    def(T .. "MockAcc", cl and F.num(cl.mock_acc, 4) or DASH)
    def(T .. "EmbedNorm", cl and F.num(cl.embed_norm, 2) or DASH)
    local ours = best and best.rows[row]
    def(T .. "EmbedNormOurs", ours and ours.embed_norm and F.num(ours.embed_norm.mean, 2) or
      DASH)
  end
  local none = claim_row.none
  for _, row in ipairs(NORMS) do
    local cl = claim_row[row]
    local rel = cl and none and F.finite(cl.val_ppl) and F.finite(none.val_ppl) and
      none.val_ppl > 0 and (cl.val_ppl / none.val_ppl - 1) or nil
    def(S .. "ClaimTable" .. F.macro(row) .. "PplChange", rel and F.percent(rel) or DASH)
    def(S .. "ClaimTable" .. F.macro(row) .. "PplSize", rel and whole_percent(math.abs(100 *
      rel)) or DASH)
  end
  def(S .. "ClaimVocab", F.finite(g.vocab) and string.format("%d", g.vocab) or DASH)
  def(S .. "ClaimTrainShare", (F.finite(g.n_train) and F.finite(g.n_eval) and
    g.n_train + g.n_eval > 0) and whole_percent(100 * g.n_train / (g.n_train + g.n_eval)) or
    DASH)
  def(S .. "ClaimMockAccCounts", #counts == 3 and F.list(counts) or DASH)
end

-- The kinds of table this file adds to the report (the manifest's `extensions`).
M.tables = {
  claim = { build = M.claim_table },
  claim_effects = { build = M.claim_effects_table },
  claim_search = { build = M.search_table, fields = { top = "number?" } },
}

return M
