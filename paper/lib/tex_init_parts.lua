-- This paper's tables and macros for PyTorch's initialization taken apart (the studies
-- init_parts, init_parts_long and their learning-rate sweeps; paper/paper.lua:
-- extensions).  Every number is read from the summaries (and, for the learning rates, the
-- runs' configs); nothing here tests anything the analysis did not.  Macros are S..<name>
-- of each study S.  Table kinds: init_parts_components (one row per component),
-- init_parts_cells (the 16 set-ups) and init_parts_long (per set-up LayerNorm's effect
-- along the run, then the interactions).  A set-up ("cell") is named by the letters of the
-- components it takes at PyTorch's value ("TPLR"; "ref": none), its variants <cell>-none
-- and <cell>-layernorm.  The build stops when init_parts' summary chooses another
-- component than the one followed (M.chosen).
local F = require "repro.report.texfmt"
local tbl = require "repro.report.table"
local data = require "repro.report.data"
local words = require "repro.analysis.words"
local guardrail = require "repro.analysis.guardrail"
local record = require "repro.record"
local base = require "repro.core.base"
local main = require("repro.core.extension").load("tex_main", "paper/lib/tex_init_parts.lua")

local M = {}
local DASH, finite = F.DASH, F.finite

local LETTERS = { "T", "P", "L", "R", "U" }
local WHAT = { T = "token embeddings drawn $N(0, 1)$", P = "position embeddings drawn $N(0, 1)$",
  L = "PyTorch's Linear initialization", R = "no residual rescaling",
  U = "an untied output layer" }
-- each component at the GPT-2 reference's value, in words
local NOT_WHAT = { T = "token embeddings drawn $N(0, 0.02)$",
  P = "position embeddings drawn $N(0, 0.02)$", L = "GPT-2's Linear initialization",
  R = "the residual rescaling", U = "the output tied to the token embedding" }

-- The components set-up `cell` takes at PyTorch's value, in words.
local function cell_words(cell)
  local out = {}
  for _, letter in ipairs(LETTERS) do
    if cell:find(letter, 1, true) then out[#out + 1] = WHAT[letter] end
  end
  return out
end

-- A set-up of one component in words ("TPLR", "ref" as they are).
local function setup_name(cell) return WHAT[cell] or F.escape(cell) end

-- LayerNorm against no norm at set-up `cell` on `metric` (default: the primary).
local function effect(s, cell, metric)
  return words.find_comparison(s.summary.comparisons, { treatment = cell .. "-layernorm",
    baseline = cell .. "-none", metric = metric or s.primary })
end

local function interaction(s, name, metric)
  return words.entry_of({ name = name, metric = metric }, s.summary)
end

-- The set-ups of study s, in the order of its variants.
local function cells(s)
  local out, seen = {}, {}
  for _, v in ipairs(s.summary.variants or {}) do
    local cell = v.name:match("^(.*)%-none$")
    if cell and not seen[cell] then seen[cell], out[#out + 1] = true, cell end
  end
  return out
end

-- The mean of interaction e's counterpart after `step` steps.
local function at_step(s, e, step)
  local x = interaction(s, e.name, "val_loss_after_" .. step)
  return x and x.mean
end

-- The components, in the order of the study's interactions: { letter, what, e } with e
-- the interaction entry on the primary metric.
local function components(s)
  local out = {}
  for _, e in ipairs(s.summary.interactions or {}) do
    local letter, what = (e.name or ""):match("^layernorm effect, (%u) %((.*)%) minus without$")
    if letter and e.metric == s.primary then
      out[#out + 1] = { letter = letter, what = what, e = e }
    end
  end
  return out
end

local function mean(xs)
  local sum, n = 0, 0
  for _, x in ipairs(xs or {}) do
    if finite(x) then sum, n = sum + x, n + 1 end
  end
  return n > 0 and sum / n or nil
end

local function decided(v) return v == "better" or v == "worse" end

-- A component's phrase for prose, the embeddings' "N(0, 1)" in math.
local function what_tex(what)
  return (F.escape(what):gsub("N%(0, 1%)", "$N(0, 1)$"))
end

local function lr_of(s, v)
  local x = s:config_value(v, "lr")
  return finite(x) and F.lr(x) or DASH
end

local function clip(s, v)
  local st = s:stat(v, "clip_fraction")
  return finite(st.mean) and F.num(100 * st.mean, 0) .. "\\,\\%" or DASH
end

local function loss(s, v, metric) return F.num(s:stat(v, metric).mean, 3) end

-- LayerNorm vs none at set-up `cell`: P..<key> for each key of SETUP_KEYS (dashes without
-- a cell, so the paper compiles); returns the comparison.
local SETUP_KEYS = { "LnDelta", "LnCI", "LnPplChange", "LnPplCI", "LnVerdict", "NoneLr",
  "LnLr", "NoneClip", "LnClip", "NoneLoss", "LnLoss", "NoneLossThirty", "LnLossThirty",
  "LnBelowN", "SeedsN", "SeedDiffMin", "SeedDiffMax", "SignflipP", "LnMde" }
local function setup_numbers(def, s, P, cell)
  local c, v = cell and effect(s, cell), {}
  if cell then
    local t, b = cell .. "-layernorm", cell .. "-none"
    local ci = c and data.interval(c)
    -- per seed (a description of the records, no test): on how many seeds LayerNorm's
    -- loss is below no norm's, of how many, and the largest |difference| of one seed
    local below, n, lo, hi = 0, 0, nil, nil
    for _, seed in ipairs(s.seeds) do
      local x, y = s:value(t, seed, s.primary), s:value(b, seed, s.primary)
      if finite(x) and finite(y) then
        n = n + 1
        if x < y then below = below + 1 end
        lo, hi = math.min(lo or x - y, x - y), math.max(hi or x - y, x - y)
      end
    end
    -- a signed number: "+0.277" beside "-0.242"
    local function signed(x) return (finite(x) and x > 0 and "+" or "") .. F.num(x, 3) end
    v = { LnDelta = c and F.num(c.mean, 4), LnCI = F.interval(ci, 4),
      LnPplChange = c and F.percent(c.val_ppl_change), LnPplCI = main.ppl_interval(ci),
      LnVerdict = c and F.escape((s:verdict(c) or {}).verdict or DASH),
      NoneLr = lr_of(s, b), LnLr = lr_of(s, t), NoneClip = clip(s, b), LnClip = clip(s, t),
      NoneLoss = loss(s, b, s.primary), LnLoss = loss(s, t, s.primary),
      NoneLossThirty = loss(s, b, "val_loss_after_30"),
      LnLossThirty = loss(s, t, "val_loss_after_30"),
      LnBelowN = below == 0 and "none" or string.format("%d", below),
      SeedsN = string.format("%d", n), SeedDiffMin = signed(lo), SeedDiffMax = signed(hi),
      SignflipP = F.p(c and c.p_signflip),
      LnMde = F.num(c and c.mde_adjusted and c.mde_adjusted.value, 3) }
  end
  for _, k in ipairs(SETUP_KEYS) do def(P .. k, v[k] or DASH) end
  return c
end

-- The claim's LayerNorm effect as the log of the ratio of its mean perplexities, quoted
-- in the claim study's summary (claim.setups[1].rows.layernorm.claim); nil when the claim
-- study has not run (the sentence then reads a dash).
local function claim_ln_log_ratio(ctx)
  local cs = ctx.by_name.claim
  local su = cs and cs.summary.claim and (cs.summary.claim.setups or {})[1]
  local rows = su and su.rows or {}
  local ln, none = rows.layernorm and rows.layernorm.claim, rows.none and rows.none.claim
  if ln and none and finite(ln.val_ppl) and finite(none.val_ppl) then
    return math.log(ln.val_ppl / none.val_ppl)
  end
end

-- The pre-registered rule init_parts_long.lua applies: of the decided interactions the
-- one with the largest |mean| (the first listed on a tie).
function M.chosen(s)
  local best
  for _, c in ipairs(components(s)) do
    if decided(c.e.verdict) and finite(c.e.mean) and
        (not best or math.abs(c.e.mean) > math.abs(best.e.mean)) then
      best = c
    end
  end
  return best
end

-- The interactions' verdicts in one sentence: the decided components with their verdicts
-- (better: LayerNorm's effect is more favourable with the component at PyTorch's value),
-- then how many of the others are inconclusive and how many equivalent.
local function matter_sentence(comps, matter)
  local count, has = {}, {}
  for _, c in ipairs(comps) do
    local v = c.e.verdict or "undecided"
    if not decided(v) then count[v] = (count[v] or 0) + 1 end
    has[c.e.verdict or ""] = true
  end
  local rest = {}
  for _, v in ipairs({ "inconclusive", "equivalent", "undecided" }) do
    local n = count[v]
    if n then
      rest[#rest + 1] = ((n == #comps and n > 1) and "all " or "") .. F.count_words(n) ..
        (n == 1 and " is " or " are ") ..
        (v == "undecided" and "without a verdict" or ("\\emph{" .. v .. "}"))
    end
  end
  local rest_text = table.concat(rest, " and ")
  if #matter == 0 then
    return "None of the " .. F.count_words(#comps) .. " interactions is " ..
      "better or worse (" .. rest_text .. "), so this design singles out no component " ..
      "that changes what the norm does."
  end
  local meaning = {}
  if has.better then
    meaning[#meaning + 1] = "\\emph{better}: LayerNorm's effect is the more favourable " ..
      "with the component at PyTorch's value"
  end
  if has.worse then meaning[#meaning + 1] = "\\emph{worse}: the less favourable" end
  local one = #matter == 1
  local text = "The component" .. (one and "" or "s") .. " whose interaction" ..
    (one and " has" or "s have") .. " a verdict of better or worse (" ..
    table.concat(meaning, "; ") .. ") " .. (one and "is " or "are ") .. F.list(matter)
  if rest_text ~= "" then text = text .. "; of the other interactions " .. rest_text end
  return text .. "."
end

-- The corpus's n-gram perplexities for study s (the guardrail's, cached per corpus), or nil.
local function ngram_of(s)
  local v = (s.summary.variants or {})[1]
  local corpus = v and s:config_value(v.name, "data")
  if type(corpus) ~= "string" then return nil end
  return guardrail.ngram(record.data_path({ data = corpus }))
end

-- The set-ups that learned nothing beyond character frequencies (both variants' mean
-- validation perplexity at or above the corpus's unigram perplexity), named in words,
-- with what they share; then how many of the other variants end at or above the bigram
-- perplexity.  Descriptive: the pre-registered analysis keeps every set-up.  Returns the
-- sentences and the number of such set-ups.
local function learned_sentence(s, S)
  local ng = ngram_of(s)
  if not ng then return "", 0 end
  local all, stuck, above_bigram = cells(s), {}, 0
  for _, cell in ipairs(all) do
    local pn = s:stat(cell .. "-none", "val_ppl").mean
    local pl = s:stat(cell .. "-layernorm", "val_ppl").mean
    local is_stuck = finite(pn) and finite(pl) and pn >= ng.unigram_ppl and pl >= ng.unigram_ppl
    for _, p in ipairs({ pn, pl }) do
      if not is_stuck and finite(p) and p >= ng.bigram_ppl then above_bigram = above_bigram + 1 end
    end
    if is_stuck then stuck[#stuck + 1] = cell end
  end
  local text = ""
  if #stuck > 0 then
    local named, common = {}, {}
    for i, cell in ipairs(stuck) do
      local parts = cell_words(cell)
      named[i] = #parts > 0 and table.concat(parts, " with ") or "the GPT-2 reference"
    end
    -- what every stuck set-up has at PyTorch's value, and what none has
    for _, letter in ipairs(LETTERS) do
      local n = 0
      for _, cell in ipairs(stuck) do
        if cell:find(letter, 1, true) then n = n + 1 end
      end
      if n == #stuck then common[#common + 1] = WHAT[letter] end
      if n == 0 then common[#common + 1] = NOT_WHAT[letter] end
    end
    text = string.format("In %s of the %s set-ups (%s) the validation perplexity stayed " ..
      "at or above the corpus's unigram perplexity (%s) with and without LayerNorm: " ..
      "those models learned nothing beyond character frequencies, and LayerNorm's effect " ..
      "in them says nothing about the question; the pre-registered analysis keeps them, " ..
      "so each interaction averages over them too.", F.count_words(#stuck),
      tostring(#all), F.list(named, "; and ", "; "), F.num(ng.unigram_ppl, 2))
    if #stuck > 1 and #common > 0 then
      text = text .. " Each of them has " .. F.list(common) .. "."
    end
    text = text .. " "
  end
  local named = {}
  for _, x in ipairs({ { "TPLR-none", "the bundle without a norm" },
      { "TPLR-layernorm", "the bundle with LayerNorm" }, { "ref-none", "the reference without a norm" },
      { "ref-layernorm", "the reference with LayerNorm" } }) do
    local p = s:stat(x[1], "val_ppl").mean
    if finite(p) and p >= ng.bigram_ppl and p < ng.unigram_ppl then named[#named + 1] = x[2] end
  end
  return text .. string.format("Of the other %d variants, %d end at or above the bigram " ..
    "perplexity (%s%s): they learned less than character pairs in %s steps.",
    2 * (#all - #stuck), above_bigram, F.num(ng.bigram_ppl, 2),
    #named > 0 and ("; among them " .. F.list(named)) or "", "\\" .. S .. "Iters{}"), #stuck
end

local function parts_numbers(def, s, S, ctx)
  local comps, matter = components(s), {}
  local lo, hi
  for _, c in ipairs(comps) do
    local X, e = S .. c.letter, c.e
    def(X .. "What", what_tex(c.what))
    def(X .. "With", F.num(mean(e.diff_a), 4))
    def(X .. "Without", F.num(mean(e.diff_b), 4))
    def(X .. "Delta", F.num(e.mean, 4))
    def(X .. "CI", F.interval(data.interval(e), 4))
    def(X .. "PHolm", F.p(e.p_holm))
    def(X .. "Verdict", F.escape(e.verdict or DASH))
    def(X .. "DeltaThirty", F.num(at_step(s, e, 30), 3))
    def(X .. "DeltaSeventyFive", F.num(at_step(s, e, 75), 3))
    if decided(e.verdict) then
      matter[#matter + 1] = what_tex(c.what) .. " (\\emph{" .. e.verdict .. "})"
    end
    -- what the seeds could detect: the smallest difference with 80 % power at the Holm
    -- first-step level, from the spread the seeds show (the summary's mde_adjusted)
    local m = e.mde_adjusted and e.mde_adjusted.value
    if finite(m) then lo, hi = math.min(lo or m, m), math.max(hi or m, m) end
  end
  def(S .. "MatterSentence", matter_sentence(comps, matter))
  def(S .. "InteractionMdeMin", F.num(lo, 3))
  def(S .. "InteractionMdeMax", F.num(hi, 3))
  local bc = effect(s, "TPLR")
  def(S .. "BundleMde", F.num(bc and bc.mde_adjusted and bc.mde_adjusted.value, 3))
  local learned, nstuck = learned_sentence(s, S)
  def(S .. "LearnedSentence", learned)
  def(S .. "StuckN", F.count_words(nstuck))
  local bundle = setup_numbers(def, s, S .. "Bundle", "TPLR")
  setup_numbers(def, s, S .. "Ref", "ref")
  local claim = claim_ln_log_ratio(ctx)
  def(S .. "ClaimLnPpl", claim and F.percent(math.exp(claim) - 1) or DASH)
  local ci = bundle and data.interval(bundle)
  def(S .. "ClaimLnInside", (claim and ci and finite(ci[1]) and finite(ci[2])) and
    ((claim >= ci[1] and claim <= ci[2]) and "inside" or "outside") or DASH)
end

-- init_parts_long's set-ups: the bundle, the reference and the chosen component (the
-- set-up named by its letter), as its summary has them.
local function long_setups(s)
  local out, have = {}, base.set_of(cells(s))
  for _, k in ipairs({ { "Bundle", "TPLR" }, { "Ref", "ref" } }) do
    if have[k[2]] then out[#out + 1] = { key = k[1], cell = k[2] } end
  end
  have.TPLR, have.ref = nil, nil
  for _, cell in ipairs(base.sorted_keys(have)) do
    out[#out + 1] = { key = "Chosen", cell = cell }
  end
  return out
end

local STEPS = { { "Thirty", 30 }, { "SeventyFive", 75 }, { "OneFifty", 150 },
  { "SixHundred", 600 } }

local function long_numbers(def, s, S, ctx)
  local setups = long_setups(s)
  local cs -- the chosen component's set-up, when the design followed one
  for _, su in ipairs(setups) do if su.key == "Chosen" then cs = su end end
  -- the macros of a set-up the design did not select: dashes, so the paper compiles
  if not cs then setups[#setups + 1] = { key = "Chosen" } end
  for _, su in ipairs(setups) do
    local P = S .. su.key
    setup_numbers(def, s, P, su.cell)
    for _, st in ipairs(STEPS) do
      local c = su.cell and effect(s, su.cell, "val_loss_after_" .. st[2])
      def(P .. "LnAt" .. st[1], F.num(c and c.mean, 3))
    end
    if su.cell ~= "ref" then
      local e = su.cell and
        interaction(s, "layernorm effect, " .. su.cell .. " minus ref", s.primary)
      def(P .. "IntDelta", F.num(e and e.mean, 4))
      def(P .. "IntCI", F.interval(e and data.interval(e), 4))
      def(P .. "IntVerdict", F.escape(e and e.verdict or DASH))
    end
  end
  local chosen = cs and setup_name(cs.cell) or "none"
  def(S .. "ChosenWhat", chosen)
  -- the set-up the long study followed is the one init_parts' summary chooses by the
  -- pre-registered rule (M.chosen): a re-analysed init_parts that chooses another (or
  -- none) would make the section's sentences contradict its table, so the build stops
  local parts = ctx.by_name.init_parts
  if parts and parts.primary then
    local want = M.chosen(parts)
    if (want and want.letter) ~= (cs and cs.cell) then
      error(string.format("init_parts_long followed the set-up %s, but init_parts' summary " ..
        "chooses %s by the pre-registered rule: rerun init_parts_long_sweep and " ..
        "init_parts_long", cs and cs.cell or "(none)", want and want.letter or "none"), 0)
    end
  end
  -- the set-ups run, in words, with the rule that chose the third
  def(S .. "SetupsRun", cs and ("the bundle, the GPT-2 reference and the reference with " ..
    chosen .. " (the component the pre-registered rule chose: of the interactions at 150 " ..
    "steps whose verdict is better or worse, the one largest in absolute value)") or
    ("the bundle and the GPT-2 reference (the pre-registered rule chose no third set-up: " ..
    "no interaction at 150 steps is better or worse)"))
  -- the followed component's own result in one sentence (empty when there is none)
  local text = ""
  if cs then
    local c = effect(s, cs.cell)
    local e = interaction(s, "layernorm effect, " .. cs.cell .. " minus ref", s.primary)
    text = string.format("With %s alone (the reference otherwise), LayerNorm changed " ..
      "perplexity by %s (\\emph{%s}); its effect there minus the reference's is %s nats " ..
      "%s (\\emph{%s}).", chosen, c and F.percent(c.val_ppl_change) or DASH,
      c and F.escape((s:verdict(c) or {}).verdict or DASH) or DASH, F.num(e and e.mean, 4),
      F.interval(e and data.interval(e), 4), F.escape(e and e.verdict or DASH))
  end
  def(S .. "ChosenSentence", text)
end

-- A sweep's groups (variants) whose best learning rate lies on the grid's edge:
-- S.."EdgeN" of S.."GroupsN".  Of those, S.."LowEdgeN" on the grid's lower edge and
-- S.."LowEdgeStuckN" of these whose mean loss stays at or above the corpus's unigram loss
-- at every grid point (a best there is noise, not a rate).
local function sweep_numbers(def, s, S)
  local groups = s.summary.lr_sweep and s.summary.lr_sweep.groups or {}
  local ng = ngram_of(s)
  local n, edge, low, stuck = 0, 0, 0, 0
  for _, g in pairs(groups) do
    n = n + 1
    if g.best_at_edge then edge = edge + 1 end
    local values = g.values or {}
    if g.best_at_edge and finite(values[1]) and g.best_lr == values[1] then
      low = low + 1
      local all = ng ~= nil and #(g.points or {}) > 0
      for _, p in ipairs(g.points or {}) do
        if not (finite(p.mean) and p.mean >= math.log(ng.unigram_ppl)) then all = false end
      end
      if all then stuck = stuck + 1 end
    end
  end
  local function int(x) return string.format("%d", x) end
  def(S .. "EdgeN", int(edge))
  def(S .. "GroupsN", int(n))
  def(S .. "LowEdgeN", int(low))
  def(S .. "LowEdgeStuckN", (stuck == low and low > 1) and "all" or int(stuck))
  def(S .. "EdgeWords", (edge == n and n > 1) and ("all " .. int(n)) or
    (int(edge) .. " of its " .. int(n)))
end

-- init_parts_sweep_edge: per group (a variant of init_parts_sweep whose best lr was the
-- grid's top, 1e-2), the best over the grid extended by one point (3e-2) against the best
-- at 1e-2: S.."MovedN" groups whose best moved to the new point, S.."GroupsN" in all,
-- S.."MaxFall" the largest fall of a group's best mean loss (nats), S.."MovedSentence" the
-- two in words, and S.."Bundle" the bundle's two variants in a sentence (their bests, and
-- LayerNorm minus no norm at the old and at the extended bests: a description of seeds
-- 1-2, no test).
local function edge_numbers(def, s, S)
  local groups = s.summary.lr_sweep and s.summary.lr_sweep.groups or {}
  local names = base.sorted_keys(groups)
  local moved, fall, moved_names, old = 0, nil, {}, {}
  for _, name in ipairs(names) do
    local g = groups[name]
    local at_old = s:stat(name .. "-lr1e-2", s.primary).mean
    old[name] = at_old
    if finite(g.best_lr) and g.best_lr > 1e-2 then
      moved = moved + 1
      local cell, norm = name:match("^(.*)%-(%a+)$")
      local parts = cell_words(cell or "")
      moved_names[#moved_names + 1] = (norm == "layernorm" and "LayerNorm" or "no norm") ..
        " with " .. (#parts > 0 and table.concat(parts, " and ") or "GPT-2's initialization")
      if finite(at_old) and finite(g.best_loss) and (not fall or at_old - g.best_loss > fall) then
        fall = at_old - g.best_loss
      end
    end
  end
  def(S .. "MovedN", string.format("%d", moved))
  def(S .. "MovedWords", moved == 0 and "none" or F.count_words(moved))
  def(S .. "GroupsN", string.format("%d", #names))
  def(S .. "MaxFall", F.num(fall, 3))
  def(S .. "MovedSentence", moved == 0 and "the best moved there for none of them" or
    string.format("the best moved there for %s of them (%s), and the largest fall of a " ..
      "best mean loss was %s nats; the confirmatory runs of %s keep the sweep's rate",
      F.count_words(moved), table.concat(moved_names, "; "),
      F.num(fall, 3), moved == 1 and "that variant" or "those variants"))
  local n, l = groups["TPLR-none"], groups["TPLR-layernorm"]
  local n_old, l_old = old["TPLR-none"], old["TPLR-layernorm"]
  local text = ""
  if n and l and finite(n.best_loss) and finite(l.best_loss) and finite(n_old) and
      finite(l_old) then
    local function where(g, at_old)
      return g.best_lr > 1e-2 and ("moved to " .. F.lr(g.best_lr) .. " (mean loss " ..
        F.num(at_old, 3) .. " at \\num{1e-2}, " .. F.num(g.best_loss, 3) .. " there)") or
        "stayed at \\num{1e-2}"
    end
    local both = (n.best_lr == l.best_lr and n.best_lr == 1e-2) and
      ("the best rate stayed at \\num{1e-2} for both variants") or
      string.format("the best rate %s without a norm and %s with LayerNorm", where(n, n_old),
        where(l, l_old))
    local seeds = {}
    for _, x in ipairs(s.seeds or {}) do seeds[#seeds + 1] = string.format("%d", x) end
    text = string.format("At the bundle %s; LayerNorm's mean loss minus no norm's, each " ..
      "at its best, is %s nats on the sweep's grid and %s on the extended one (%s: a " ..
      "description, with no test).", both, F.num(l_old - n_old, 3),
      F.num(l.best_loss - n.best_loss, 3), (#seeds == 1 and "seed " or "seeds ") .. F.list(seeds))
  end
  def(S .. "Bundle", text)
  -- whether one more point beyond the grid left both of the bundle's bests where they were
  local held = n and l and n.best_lr == 1e-2 and l.best_lr == 1e-2
  def(S .. "BundleHeld", (n and l) and (held and "both variants a higher loss" or
    "a lower loss to at least one of the two variants") or DASH)
end

local NUMBERS = { init_parts_sweep = sweep_numbers, init_parts_long_sweep = sweep_numbers,
  init_parts_sweep_edge = edge_numbers, init_parts_long_sweep_edge = edge_numbers }

function M.numbers(def, s, S, ctx)
  if not s.summary then return end
  if NUMBERS[s.name] then NUMBERS[s.name](def, s, S) end
  if not s.primary then return end
  if s.name == "init_parts" then parts_numbers(def, s, S, ctx)
  elseif s.name == "init_parts_long" then long_numbers(def, s, S, ctx) end
end

-- Tables -------------------------------------------------------------------------------

-- s's table of `align` columns: `head`, then `rows` of LaTeX cells.
local function tabular(s, align, head, rows)
  return F.of_study(s, tbl.tabular({ align = align, head = head, rows = rows }, { fit = true }))
end

-- One row per component: LayerNorm's mean effect with and without it, the interaction
-- with its interval, Holm p and verdict, and the interaction after 30 and 75 steps.
function M.components_table(s)
  local rows = {}
  for _, c in ipairs(components(s)) do
    local e = c.e
    rows[#rows + 1] = { c.letter .. ": " .. what_tex(c.what), F.num(mean(e.diff_a), 3),
      F.num(mean(e.diff_b), 3), F.num(e.mean, 3), F.interval(data.interval(e), 3),
      F.p(e.p_holm), F.escape(e.verdict or DASH), F.num(at_step(s, e, 30), 3),
      F.num(at_step(s, e, 75), 3) }
  end
  return tabular(s, "lrrrlrlrr", { "Component at PyTorch's value", "with", "without",
    "$\\Delta$", "95\\,\\% CI", "$p_\\mathrm{Holm}$", "Verdict", "$\\Delta_{30}$",
    "$\\Delta_{75}$" }, rows)
end

-- The 16 set-ups: each variant's learning rate, mean validation loss, LayerNorm's mean
-- effect and the share of clipped steps.
function M.cells_table(s)
  local rows = {}
  for _, cell in ipairs(cells(s)) do
    local t, b = cell .. "-layernorm", cell .. "-none"
    local c = effect(s, cell)
    local lt, lb = s:stat(t, s.primary).mean, s:stat(b, s.primary).mean
    rows[#rows + 1] = { cell == "ref" and "none (GPT-2)" or cell, lr_of(s, b), lr_of(s, t),
      F.num(lb, 3), F.num(lt, 3),
      F.num(c and c.mean or ((finite(lt) and finite(lb)) and lt - lb or nil), 3),
      clip(s, b), clip(s, t) }
  end
  return tabular(s, "lllrrrrr", { "Components", "lr none", "lr LN", "loss none", "loss LN",
    "$\\Delta$", "clipped none", "clipped LN" }, rows)
end

-- Per set-up of init_parts_long, LayerNorm's effect after 30, 75, 150, 600 and 1,200
-- steps (the last with its interval and verdict), then each interaction with ref.
function M.long_table(s)
  local rows = {}
  for _, su in ipairs(long_setups(s)) do
    local t, b = su.cell .. "-layernorm", su.cell .. "-none"
    local row = { su.cell == "ref" and "GPT-2 reference" or su.cell == "TPLR" and
      "PyTorch's bundle" or setup_name(su.cell), lr_of(s, b) .. " / " .. lr_of(s, t) }
    for _, st in ipairs(STEPS) do
      local c = effect(s, su.cell, "val_loss_after_" .. st[2])
      row[#row + 1] = F.num(c and c.mean, 3)
    end
    local c = effect(s, su.cell)
    row[#row + 1] = F.num(c and c.mean, 3)
    row[#row + 1] = F.interval(c and data.interval(c), 3)
    row[#row + 1] = F.escape(c and (s:verdict(c) or {}).verdict or DASH)
    rows[#rows + 1] = row
  end
  for _, e in ipairs(s.summary.interactions or {}) do
    if e.metric == s.primary then
      local cell = e.name:match("^layernorm effect, (%S+) minus ref$")
      rows[#rows + 1] = { "interaction: " .. (cell == "TPLR" and "bundle" or
        setup_name(cell or "")) .. " minus reference", "", "", "", "", "",
        F.num(e.mean, 3), F.interval(data.interval(e), 3), F.escape(e.verdict or DASH) }
    end
  end
  return tabular(s, "llrrrrrll", { "Set-up", "lr none / LN", "$\\Delta_{30}$",
    "$\\Delta_{75}$", "$\\Delta_{150}$", "$\\Delta_{600}$", "$\\Delta_{1200}$",
    "95\\,\\% CI", "Verdict" }, rows)
end

M.tables = {
  init_parts_components = { build = M.components_table },
  init_parts_cells = { build = M.cells_table, records = true },
  init_parts_long = { build = M.long_table, records = true },
}

return M
