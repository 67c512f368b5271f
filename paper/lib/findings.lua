-- This paper's statement ledger for README's Results list (lua/repro/report/ledger.lua;
-- paper/paper.lua: extensions): one entry per line of the list (results.md, in order),
-- with the analyses that carry it.  The words of a line that say a verdict or a sign come
-- from the summary's verdicts and signs, never typed, and the build checks each line
-- against what carries it.  Every entry is README's, so T is the ledger's Markdown format.
-- The main text states its findings in checked assertions of its own
-- (lua/repro/report/assertions.lua), not here.
local task_tex = require "repro.report.tex_tasks"
local F = require "repro.report.texfmt"
local words = require "repro.analysis.words"
-- the replication criteria, the runs gone bad and H1a's two readings in the main text's words
local main = require("repro.core.extension").load("tex_main", "paper/lib/findings.lua")

local M = {}

local function cmp(study, t, b) return { study = study, treatment = t, baseline = b } end

-- The claim study's closest set-up (its summary's claim.closest); nil when the search
-- selected none but the GPT-2 reference arm itself (make reproduce QUICK=1's budget): the
-- sentences on it are then left out.
local function closest(s)
  local cl = s.summary.claim and s.summary.claim.closest
  return cl and cl.setup ~= "ref" and cl.setup or nil
end
local function ref() return "ref" end
-- The variant of set-up setup_of(s) with norm `norm`, for a ledger carry.
local function arm(setup_of, norm)
  return function(s)
    local setup = setup_of(s)
    return setup and setup .. "-" .. norm
  end
end

-- Phrases from a resolved analysis a.
local function eff(a, T)
  return T.pct(a.ppl) .. " (" .. T.verdict(a.verdict) .. ")"
end
local function nats(a, T)
  return T.num(a.mean, 4) .. " nats " .. T.ci(a.ci, 4)
end
-- (of an interaction, `interaction` true: "equivalent" is of the two effects, not to no norm)
local function verdict_phrase(a, T, interaction)
  if a.verdict == "equivalent" then
    return T.verdict("equivalent") .. (interaction and "" or " to no norm") ..
      " within the minimum effect"
  elseif a.verdict == "inconclusive" and type(a.ci) == "table" and a.ci[1] < 0 and a.ci[2] > 0 then
    return T.verdict("inconclusive") .. ": its interval leaves the sign open"
  end
  return T.verdict(a.verdict)
end
-- a perplexity change with its loss difference and verdict
local function eff_nats(a, T)
  return T.pct(a.ppl) .. " (validation loss " .. nats(a, T) .. "; " .. verdict_phrase(a, T) .. ")"
end
local function params_m(s, variant) return (s:params(variant) or 0) / 1e6 end

-- The claim study's replication: each claim's verdict, and each set-up's (the closest and
-- the GPT-2 reference) with the criteria of "reproduced", or for a claim given without a
-- spread its direction.
local REPLICATION = {}
for _, id in ipairs({ "layernorm_perplexity", "rmsnorm_perplexity", "gradient_norm_ordering",
    "layernorm_mock_accuracy" }) do
  REPLICATION[#REPLICATION + 1] = { study = "claim", replication = id }
end
for _, setup in ipairs({ closest, ref }) do
  for _, x in ipairs({ { "layernorm_perplexity", "layernorm" }, { "rmsnorm_perplexity", "rmsnorm" },
      { "gradient_norm_ordering", "layernorm" }, { "gradient_norm_ordering", "rmsnorm" },
      { "layernorm_mock_accuracy", "layernorm" } }) do
    REPLICATION[#REPLICATION + 1] = { study = "claim", replication = x[1],
      treatment = arm(setup, x[2]), baseline = arm(setup, "none") }
  end
end
local function replication_text(A, T, ctx)
  local claim = ctx.by_name.claim.summary.claim or {}
  local function original(a) return T.pct(math.exp(a.e.original and a.e.original.estimate) - 1) end
  local function at(a)
    local c = main.criteria(a.e)
    return T.pct(math.exp(a.mean) - 1) .. ": same direction " .. c.direction ..
      ", inside the claim's prediction interval " .. c.pi .. ", not too small " .. c.size ..
      ", so " .. T.verdict(a.verdict)
  end
  local function agreed(a) return main.criteria(a.e).agreed end
  -- A[1..4]: the claims; A[5..9]: the closest set-up; A[10..14]: GPT-2's
  return "**The student's claim** (`claim`) that LayerNorm after the embeddings changes " ..
    "validation perplexity by " .. original(A[5]) .. " is " ..
    T.verdict(A[1].verdict) .. ": " .. (claim.matches_any and "a set-up matched the claim's" or
    "no set-up matched the claim's") .. ". At the closest set-up (PyTorch's default " ..
    "initialization, 4 blocks, the claim's learning rate) LayerNorm changes it by " ..
    at(A[5]) .. "; at GPT-2's initialization of the same model, by " .. at(A[10]) ..
    ". RMSNorm's claim (" .. original(A[6]) .. ") is " ..
    T.verdict(A[2].verdict) .. "; at the closest set-up RMSNorm changes perplexity by " ..
    at(A[6]) .. "; at GPT-2's, by " .. at(A[11]) .. ". The final gradient norms' ordering " ..
    "and the mock accuracy, reported without a spread, are " ..
    (A[3].verdict == A[4].verdict and ("both " .. T.verdict(A[3].verdict)) or
      (T.verdict(A[3].verdict) .. " and " .. T.verdict(A[4].verdict))) ..
    "; only their directions are compared: at the closest " ..
    "set-up LayerNorm's gradient norm " .. agreed(A[7]) .. ", RMSNorm's " .. agreed(A[8]) ..
    " and the mock accuracy " .. agreed(A[9]) .. "; at GPT-2's they " .. agreed(A[12]) ..
    ", " .. agreed(A[13]) .. " and " .. agreed(A[14]) .. "."
end

-- The sequential study at the claim's closest set-up with tuned rates: its verdict at the
-- stop, the Hodges-Lehmann estimate and repeated interval, where the claim's effect lies,
-- the paired t companion, the seeds that favour LayerNorm and the runs gone bad.
local function sequential_text(A, T, ctx)
  local s = ctx.by_name.sequential_claim
  local q = s.summary.sequential
  local c = q.comparisons[1]
  local bad = main.bad_runs(s)
  local none, ln = bad["TPLR-none"], bad["TPLR-layernorm"]
  local imp = A[1].c.improvement or {}
  local int = words.int
  return "**The claim's set-up at tuned learning rates** (`sequential_claim`, registered " ..
    "before its runs: the closest set-up, each variant at its best learning rate, looks " ..
    "at " .. words.int_list(q.design.looks) .. " seeds per variant). It stopped at " ..
    int(c.n) .. " seeds per variant (" .. int(q.runs_used) .. " runs, against " ..
    int(q.runs_fixed) .. " for the fixed design): LayerNorm changed validation loss by " ..
    T.num(c.estimate, 4) .. " nats (Hodges-Lehmann estimate, repeated interval " ..
    T.ci(c.ci, 4) .. "), " .. T.verdict(A[1].verdict) .. ", and the claim's " ..
    T.num(q.design.target, 3) .. " nats lies " .. (c.target_in_ci and "inside" or "outside") ..
    " that interval. The paired t test on the same seeds gives " .. T.num(A[1].mean, 4) ..
    " nats " .. T.ci(A[1].ci, 4) .. "; " .. int(imp.better) .. " of " .. int(imp.n) ..
    " seeds favour LayerNorm; runs gone bad (a final loss more than " ..
    T.num(main.BAD_MARGIN, 1) .. " nats above the arm's median): " .. int(none.bad) ..
    " of " .. int(none.runs) .. " without a norm, " .. int(ln.bad) .. " of " ..
    int(ln.runs) .. " with LayerNorm."
end

local function claim_text(A, T, ctx)
  local c = ctx.by_name.claim.summary.claim or {}
  local d = c.closest and type(c.closest.d) == "number" and string.format("%.1f", c.closest.d)
  return "**The claim's set-up.** Of the set-ups searched, the closest to the claim's " ..
    "numbers is PyTorch's default initialization of a 4-block model whose output layer " ..
    "is tied to its N(0, 1) token embedding, and it " ..
    (c.matches_any and "matches" or "does not match") .. " the claim's baseline row " ..
    "(D = " .. (d or "?") .. " against the threshold " ..
    (type(c.threshold) == "number" and string.format("%g", c.threshold) or "?") ..
    "); at that set-up (`claim`, " .. #ctx.by_name.claim.seeds .. " fresh seeds) LayerNorm " ..
    "changes perplexity by " .. eff(A[1], T) .. ", and at the GPT-2 initialization of " ..
    "the same model by " .. eff(A[2], T) .. "; the difference between the two " ..
    "effects (the initialization x norm interaction) is " .. T.verdict(A[3].verdict) ..
    ((A[3].verdict == "better" or A[3].verdict == "worse") and " for the closest set-up." or ".")
end

-- the instability study's outcomes over its grid, each norm against none at each warmup
local STABILITY = {}
for _, warmup in ipairs({ "w0", "w30" }) do
  for _, norm in ipairs({ "layernorm", "rmsnorm" }) do
    STABILITY[#STABILITY + 1] = { study = "instability", section = "sweep_outcomes",
      treatment = norm .. "-" .. warmup, baseline = "none-" .. warmup }
  end
end
local function stability_text(A, T, ctx)
  local inst = ctx.by_name.instability:section("sweep_outcomes")
  local lo, hi
  for _, a in ipairs(A) do
    local m = a.c.mde_adjusted and a.c.mde_adjusted.value
    if m then lo, hi = math.min(lo or m, m), math.max(hi or m, m) end
  end
  local v = {}
  for i, a in ipairs(A) do v[i] = T.verdict(a.verdict) end
  local after = inst.summary.secondary_comparisons or {}
  local held = 0
  for _, c in ipairs(after) do
    if c.holds_zero then held = held + 1 end
  end
  return "**Loss jumps at high learning rates** (`instability`). The largest loss " ..
    "jump of LayerNorm and RMSNorm against no norm was " .. v[1] .. " and " .. v[2] ..
    " without warmup, " .. v[3] .. " and " .. v[4] .. " with it; its primary " ..
    "comparisons would detect, with 80 % power, differences of " .. T.num(lo, 1) ..
    " to " .. T.num(hi, 1) .. " nats, against a pre-registered minimum effect of " ..
    T.num(inst.analysis.min_effect, 3) .. ". Measured from the end of warmup " ..
    "(exploratory), " .. held .. " of the " .. #after ..
    " differences in loss jump, gradient norm and its variation hold zero."
end

-- A size study's LayerNorm comparison with none at its smallest or largest model (in the
-- ladder each variant has its own learning rate), as a ledger carry.
local function size_carry(study, largest)
  local function pick(s)
    local rows = s:size_comparisons(nil, "layernorm")
    local r = rows[largest and #rows or 1]
    return r and r.c
  end
  return { study = study, treatment = function(s) return (pick(s) or {}).treatment end,
    baseline = function(s) return (pick(s) or {}).baseline end }
end

local function scale_text(A, T, ctx)
  local s = ctx.by_name.scale
  return string.format("**Model size** (`scale`). LayerNorm changes perplexity by %s at " ..
    "%.2f M parameters and by %s at %.2f M; sizes trained at one untuned learning rate " ..
    "do not say where it goes beyond them (the paper gives the fit and its interval).",
    eff(A[1], T), params_m(s, A[1].baseline), eff(A[2], T), params_m(s, A[2].baseline))
end

-- every size x norm interaction the ladder registered, each smaller size against the
-- largest (the k-th on the primary metric), so no decided one is left unsaid
local LADDER_SIZES = 3
local LADDER = { size_carry("ladder", false), size_carry("ladder", true) }
for k = 1, LADDER_SIZES do
  LADDER[#LADDER + 1] = { study = "ladder", interaction = function(s)
    local j = 0
    for _, e in ipairs(s.summary.interactions or {}) do
      if e.metric == s.primary then
        j = j + 1
        if j == k then return e.name end
      end
    end
  end }
end
-- The ladder's variants whose best rate in the size sweep (ladder_sweep) lies on the
-- grid's edge: "; LayerNorm's best rate at 0.11 M lies on the edge of the sweep's grid, so
-- it is not bracketed", or "" when none does.
local function ladder_edges(ctx)
  local s, sw = ctx.by_name.ladder, ctx.by_name.ladder_sweep
  local groups = sw and sw.summary.lr_sweep and sw.summary.lr_sweep.groups
  if not groups then return "" end
  local out = {}
  for _, v in ipairs(s.variants) do
    local g = groups[v.name]
    if g and g.best_at_edge and s:params(v.name) then
      out[#out + 1] = string.format("%s's at %.2f M", v.prose_level or v.level_label,
        params_m(s, v.name))
    end
  end
  if #out == 0 then return "" end
  local one = #out == 1
  return "; " .. (one and out[1]:gsub("'s at", "'s best rate at", 1) or
    ("the best rates " .. table.concat(out, ", "))) .. (one and " lies" or " lie") ..
    " on the edge of the sweep's grid, so " .. (one and "it is" or "they are") .. " not bracketed"
end
local function ladder_text(A, T, ctx)
  local s = ctx.by_name.ladder
  local parts, has = {}, {}
  for k = 1, LADDER_SIZES do
    local a = A[2 + k]
    local tag = a.c and a.c.name and a.c.name:match("layernorm effect, (L%d+d%d+) minus")
    local params
    for _, v in ipairs(s.variants) do
      if tag and v.name:match("%-(L%d+d%d+)$") == tag then params = s:params(v.name) end
    end
    parts[#parts + 1] = T.verdict(a.verdict) .. " at " ..
      (params and string.format("%.2f M", params / 1e6) or "a smaller size")
    has[a.verdict or ""] = true
  end
  local meaning = {}
  if has.worse then meaning[#meaning + 1] = "a " .. T.verdict("worse") .. " one means " ..
    "LayerNorm's effect was less favourable at the smaller size" end
  if has.better then meaning[#meaning + 1] = "a " .. T.verdict("better") .. " one means it " ..
    "was more favourable there" end
  return string.format("**Model size at tuned learning rates** (`ladder`). LayerNorm changes " ..
    "perplexity by %s at %.2f M parameters and by %s at %.2f M%s. The size x norm " ..
    "interactions (LayerNorm's effect at each smaller size minus its effect at the " ..
    "largest) are %s%s.", eff(A[1], T), params_m(s, A[1].baseline), eff(A[2], T),
    params_m(s, A[2].baseline), ladder_edges(ctx), F.list(parts),
    #meaning > 0 and ("; " .. table.concat(meaning, "; ")) or "")
end

-- The task study (the proposal's primary metric, zero-shot macro accuracy): LayerNorm and
-- RMSNorm against no norm at the tuned set-up and at the final protocol's rate, each with
-- how many tasks that set-up's baseline beats guessing on, and what the comparison says
-- of the proposal's hypotheses under the section's reading rule (a set-up whose baseline
-- beats guessing on at least MOST tasks: worse supports H1a, equivalent H0).
local MOST = 4
local TASK_SETUPS = { { key = "tuned", phrase = "with each variant at its own best learning " ..
  "rate" }, { key = "gpt2", phrase = "at the final protocol's learning rate" } }
local TASKS = {}
for _, st in ipairs(TASK_SETUPS) do
  TASKS[#TASKS + 1] = cmp("tasks", st.key .. "-layernorm", st.key .. "-none")
  TASKS[#TASKS + 1] = cmp("tasks", st.key .. "-rmsnorm", st.key .. "-none")
end
local function reading(a, above)
  if above < MOST then return ", not read for either hypothesis" end
  if a.verdict == "worse" then return ", supporting H1a" end
  if a.verdict == "equivalent" then return ", supporting H0" end
  return ", deciding neither hypothesis"
end
local function tasks_text(A, T, ctx)
  local s = ctx.by_name.tasks
  local n_tasks = 0
  for _ in pairs((s.summary.tasks or {}).chance or {}) do n_tasks = n_tasks + 1 end
  local function effect(a, above)
    return T.num(a.mean, 3) .. " " .. T.ci(a.ci, 3) .. " (" .. T.verdict(a.verdict) ..
      reading(a, above) .. ")"
  end
  local parts = {}
  for i, st in ipairs(TASK_SETUPS) do
    local above = task_tex.above_count(s, st.key .. "-none", 0)
    parts[#parts + 1] = string.format("%s, where the baseline beats guessing on %d of %d " ..
      "tasks, LayerNorm changes macro accuracy by %s and RMSNorm by %s", st.phrase, above,
      n_tasks, effect(A[2 * i - 1], above), effect(A[2 * i], above))
  end
  return string.format("**Task accuracy** (`tasks`, zero-shot macro accuracy over %d " ..
    "in-domain tasks, the proposal's primary metric): ", n_tasks) ..
    table.concat(parts, "; ") .. "."
end

-- The second task study: the proposal's primary outcome and its hypotheses.
local function tasks_v2_text(A, T, ctx)
  local s = ctx.by_name.tasks_v2
  local measurable, scored = main.few_shot(s.summary.tasks)
  local worded, registered = main.h1a_readings(s.summary.h1a)
  -- LayerNorm's largest gradient norm after warmup, as a factor of no norm's
  local after = s.summary.h1a.after_warmup.measures[2].norms.layernorm
  return "**Task accuracy, second suite** (`tasks_v2`, zero-shot macro accuracy): " ..
    "LayerNorm changes it by " .. T.num(A[1].mean, 3) .. " " .. T.ci(A[1].ci, 3) .. " (" ..
    T.verdict(A[1].verdict) .. ") at width 128 and by " .. T.num(A[2].mean, 3) .. " " ..
    T.ci(A[2].ci, 3) .. " (" .. T.verdict(A[2].verdict) .. ") in the ladder's largest " ..
    "model; few-shot accuracy is measurable on " .. measurable .. " of " .. scored ..
    " tasks, so H0 cannot be tested. H1a read as worded (lower accuracy and smoother " ..
    "training, registered as a smaller largest loss jump or gradient norm over the whole " ..
    "run) is " .. worded .. " for zero-shot accuracy, but the smaller peak falls in the " ..
    "first steps: from step " .. string.format("%d", s.summary.h1a.after_warmup.from) ..
    " on, LayerNorm's largest gradient norm is x" .. T.num(math.exp(after.coef), 3) .. " " ..
    T.ci({ math.exp(after.ci[1]), math.exp(after.ci[2]) }, 3) .. " no norm's " ..
    "(exploratory); read as registered (also a deficit beyond what the loss predicts) " ..
    "it is " .. registered .. "."
end

-- PyTorch's initialization taken apart: LayerNorm against no norm at the claim's set-up's
-- four parts of it (both embeddings N(0, 1), PyTorch's Linear init, no residual
-- rescaling; the output tied) and at GPT-2's, and each part's interaction with the norm
-- (init_parts, 150 steps); then the same two set-ups after 1,200 steps and the difference
-- of their effects (init_parts_long).  Each variant at its own best rate.
local PARTS = { { "T", "token embeddings drawn N(0, 1)" },
  { "P", "position embeddings drawn N(0, 1)" }, { "L", "PyTorch's Linear initialization" },
  { "R", "no residual rescaling" }, { "U", "an untied output layer" } }
local INIT_PARTS = { cmp("init_parts", "TPLR-layernorm", "TPLR-none"),
  cmp("init_parts", "ref-layernorm", "ref-none") }
for _, part in ipairs(PARTS) do
  INIT_PARTS[#INIT_PARTS + 1] = { study = "init_parts", interaction = function(s)
    for _, e in ipairs(s.summary.interactions or {}) do
      if (e.name or ""):find("layernorm effect, " .. part[1] .. " ", 1, true) == 1 then
        return e.name
      end
    end
  end }
end
local function init_parts_text(A, T)
  local parts, has, kinds = {}, {}, 0
  for i, part in ipairs(PARTS) do
    local v = A[2 + i].verdict
    parts[#parts + 1] = part[2] .. " " .. T.verdict(v)
    if not has[v or ""] then kinds = kinds + 1 end
    has[v or ""] = true
  end
  -- what a decided interaction means, only for the verdicts the sentence shows (the
  -- ledger refuses a verdict word that no carried analysis has)
  local meaning = {}
  if has.better then
    meaning[#meaning + 1] = T.verdict("better") .. ": LayerNorm's effect the more " ..
      "favourable with the part"
  end
  if has.worse then meaning[#meaning + 1] = T.verdict("worse") .. ": the less favourable" end
  local meant = #meaning > 0 and (" (" .. table.concat(meaning, "; ") .. ")") or ""
  -- one verdict for all five parts: said once
  local per_part = kinds == 1 and ("its interaction with each of the five parts (token " ..
    "and position embeddings drawn N(0, 1), PyTorch's Linear initialization, no residual " ..
    "rescaling, an untied output layer) was " .. T.verdict(A[3].verdict) .. meant) or
    ("per part, its interaction with the norm" .. meant .. " was: " .. table.concat(parts, "; "))
  return "**PyTorch's initialization taken apart** (`init_parts`, the claim's 4-block " ..
    "model, 150 steps, each variant at its best rate): LayerNorm changes perplexity by " ..
    eff_nats(A[1], T) .. " with the four parts of PyTorch's initialization that the claim " ..
    "study's closest set-up has (both embeddings drawn N(0, 1), PyTorch's Linear " ..
    "initialization, no residual rescaling) and by " .. eff(A[2], T) .. " with GPT-2's; " ..
    per_part .. "."
end

local function init_parts_long_text(A, T)
  return "**The same at 1,200 steps** (`init_parts_long`): LayerNorm changes perplexity by " ..
    eff_nats(A[1], T) .. " with those four parts and by " .. eff(A[2], T) .. " with " ..
    "GPT-2's initialization; the difference of the two effects (the initialization x norm " ..
    "interaction, LayerNorm's effect with those parts minus with GPT-2's) was " ..
    T.verdict(A[3].verdict) .. "."
end

-- The component init_parts' rule chose and init_parts_long followed (the set-up named by
-- its letter, the reference otherwise): LayerNorm against no norm there and its effect
-- there minus at the reference.  No such set-up (the rule chose none): no sentence.
local function chosen_cell(s)
  for _, v in ipairs(s.summary.variants or {}) do
    local cell = (v.name or ""):match("^(.*)%-none$")
    if cell and cell ~= "TPLR" and cell ~= "ref" then return cell end
  end
end
local INIT_PARTS_CHOSEN = {
  cmp("init_parts_long", arm(chosen_cell, "layernorm"), arm(chosen_cell, "none")),
  { study = "init_parts_long", interaction = function(s)
      local c = chosen_cell(s)
      return c and ("layernorm effect, " .. c .. " minus ref")
    end },
}
local function init_parts_chosen_text(A, T, ctx)
  local cell = chosen_cell(ctx.by_name.init_parts_long)
  for _, part in ipairs(PARTS) do
    if part[1] == cell then
      return "At 1,200 steps (`init_parts_long`), with " .. part[2] .. " alone (GPT-2's " ..
        "initialization otherwise), LayerNorm changes perplexity by " .. eff(A[1], T) ..
        "; its effect there minus its effect at GPT-2's initialization was " ..
        T.verdict(A[2].verdict) .. "."
    end
  end
end

local CORPORA_ACROSS = "lists each corpus study's own verdicts, side by side; no analysis " ..
  "compares the two corpora"

M.ledger = {
  { id = "ReadmeReplication", where = "readme", carries = REPLICATION, text = replication_text },
  { id = "ReadmeSequential", where = "readme", text = sequential_text,
    carries = { cmp("sequential_claim", "TPLR-layernorm", "TPLR-none") } },
  { id = "ReadmeGptTwo", where = "readme",
    carries = { cmp("final", "layernorm", "none"), cmp("tuned", "layernorm", "none"),
      cmp("final", "rmsnorm", "none"), cmp("tuned", "rmsnorm", "none") },
    across = "lists the untuned (final) and tuned (tuned) verdicts",
    text = function(A, T)
      return "**At the GPT-2 initialization** (embeddings N(0, 0.02)) an embedding " ..
        "LayerNorm changes validation perplexity by " .. eff(A[1], T) .. " at the claim's " ..
        "learning rate (`final`) and by " .. eff(A[2], T) .. " with each variant at its " ..
        "own best learning rate (`tuned`); RMSNorm by " .. eff(A[3], T) .. " and " ..
        eff(A[4], T) .. "."
    end },
  { id = "ReadmeClaim", where = "readme", text = claim_text,
    carries = { cmp("claim", arm(closest, "layernorm"), arm(closest, "none")),
      cmp("claim", "ref-layernorm", "ref-none"),
      { study = "claim", interaction = function(s)
        return closest(s) and "layernorm effect, " .. closest(s) .. " minus ref"
      end } } },
  { id = "ReadmeControls", where = "readme",
    carries = { cmp("tuned_controls", "scale", "none"),
      cmp("tuned_matched", "layernorm_matched", "none") },
    across = "lists the two controls, each against no norm",
    text = function(A, T, ctx)
      return "**Rescaling or normalizing.** Rescaling the embedding to unit RMS without " ..
        "normalizing changes perplexity by " .. eff(A[1], T) .. " (`tuned_controls`); " ..
        "normalizing without rescaling (matched LayerNorm), at finely tuned learning " ..
        "rates on " .. #ctx.by_name.tuned_matched.seeds .. " fresh seeds " ..
        "(`tuned_matched`), by " .. T.pct(A[2].ppl) .. ": " .. verdict_phrase(A[2], T) ..
        " (loss difference " .. nats(A[2], T) .. ")."
    end },
  { id = "ReadmeStdOne", where = "readme",
    carries = { cmp("init_scale", "layernorm-std1", "none-std1"),
      cmp("tuned_std1", "layernorm", "none") },
    across = "lists the shared (init_scale) and tuned (tuned_std1) verdicts",
    text = function(A, T)
      return "**Embeddings drawn N(0, 1).** LayerNorm changes perplexity by " ..
        eff(A[1], T) .. " at the shared learning rate (`init_scale`), and by " ..
        T.pct(A[2].ppl) .. " (" .. verdict_phrase(A[2], T) .. "; loss difference " ..
        nats(A[2], T) .. ") with each variant at its own best (`tuned_std1`)."
    end },
  { id = "ReadmeSensitivity", where = "readme",
    carries = { { study = "lr_sweep", sensitivity = "layernorm" },
      { study = "lr_sweep", sensitivity = "layernorm", own = true } },
    text = function(A, T)
      local function side(a)
        return (a.verdict == "positive" and "exceeds" or a.verdict == "negative" and
          "is below" or "differs from") .. " no norm's by " .. T.num(math.abs(a.mean), 3) ..
          " nats (difference " .. T.num(a.mean, 3) .. " " .. T.ci(a.ci, 3) .. ")"
      end
      return "**Learning-rate sensitivity** (`lr_sweep`). Against the best loss of any " ..
        "variant, LayerNorm's S " .. side(A[1]) .. "; against each variant's own best, its " ..
        "S_own " .. side(A[2]) .. "."
    end },
  { id = "ReadmeStability", where = "readme", carries = STABILITY, text = stability_text },
  { id = "ReadmeScale", where = "readme", text = scale_text,
    carries = { size_carry("scale", false), size_carry("scale", true) } },
  { id = "ReadmeLadder", where = "readme", carries = LADDER, text = ladder_text },
  -- the corpus studies: LayerNorm's effect at the final protocol on each other corpus, and
  -- the corpus x norm interaction against Tiny Shakespeare that each study registered
  { id = "ReadmeCorpora", where = "readme", across = CORPORA_ACROSS,
    carries = { cmp("final_devil", "layernorm-devil", "none-devil"),
      { study = "final_devil", interaction = "layernorm effect, devil minus Tiny Shakespeare" },
      cmp("final_kjv", "layernorm-kjv", "none-kjv"),
      { study = "final_kjv", interaction = "layernorm effect, kjv minus Tiny Shakespeare" } },
    text = function(A, T)
      return "**Other corpora** (`final_devil`, `final_kjv`, the final protocol). LayerNorm " ..
        "changes perplexity by " .. eff(A[1], T) .. " on The Devil's Dictionary and by " ..
        eff(A[3], T) .. " on the King James Bible; its effect on each minus its effect on " ..
        "Tiny Shakespeare (the corpus x norm interaction) is " .. verdict_phrase(A[2], T, true) ..
        " on The Devil's Dictionary and " .. verdict_phrase(A[4], T, true) ..
        " on the King James Bible."
    end },
  -- each variant at its own best rate from the corpus's own sweep (no interaction: the
  -- tuned studies train one corpus)
  { id = "ReadmeCorporaTuned", where = "readme", across = CORPORA_ACROSS,
    carries = { cmp("tuned_devil", "layernorm", "none"), cmp("tuned_kjv", "layernorm", "none") },
    text = function(A, T)
      return "**Other corpora at tuned learning rates** (`tuned_devil`, `tuned_kjv`, each " ..
        "variant at its best rate from the corpus's sweep). LayerNorm changes perplexity by " ..
        eff(A[1], T) .. " on The Devil's Dictionary and by " .. eff(A[2], T) ..
        " on the King James Bible."
    end },
  { id = "ReadmeTasks", where = "readme", carries = TASKS, text = tasks_text },
  { id = "ReadmeTasksTwo", where = "readme", text = tasks_v2_text,
    carries = { cmp("tasks_v2", "ts-layernorm", "ts-none"),
      cmp("tasks_v2", "L8d256-layernorm", "L8d256-none") } },
  { id = "ReadmeInitParts", where = "readme", carries = INIT_PARTS, text = init_parts_text },
  { id = "ReadmeInitPartsLong", where = "readme", text = init_parts_long_text,
    carries = { cmp("init_parts_long", "TPLR-layernorm", "TPLR-none"),
      cmp("init_parts_long", "ref-layernorm", "ref-none"),
      { study = "init_parts_long", interaction = "layernorm effect, TPLR minus ref" } } },
  { id = "ReadmeInitPartsChosen", where = "readme", carries = INIT_PARTS_CHOSEN,
    text = init_parts_chosen_text },
}

return M
