-- The claim's reference rows: a study at the claim's protocol (150 iterations at peak lr
-- 3e-4) appears beside the claim's Table 1 in the paper's claim table (read from its
-- records), while its own summary and console say nothing of the claim; any other study
-- does not appear there.  Synthetic runs for the analysis, committed records for the table.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local analysis = require "repro.analysis"
local study = require "repro.study"
local claim = require("repro.core.extension").load("paper/lib/claim.lua", "test")
local t = check.new("test_claim_reference")
local dir = check.tmpdir()
check.write(dir .. "/corpus.txt", string.rep("the cat sat on a mat and ran far away. ", 300))

local function write(name, base)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, warmup = 1,
    data = %q%s },
  variants = { { name = "none" }, { name = "ln", embed_norm = "layernorm" },
    { name = "sc", embed_norm = "scale" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss", "val_ppl" }, primary = "val_loss",
    better = "lower", min_effect = 0.02, alpha = 0.05, correction = "holm",
    resamples = 1000, test = "t" } }
]], name, dir .. "/corpus.txt", base))
  return study.load(path)
end

local PPL = { none = { 14.0, 14.2 }, ln = { 17.0, 17.4 }, sc = { 15.0, 15.0 } }
local runs = {}
for v, list in pairs(PPL) do
  runs[v] = {}
  for i, p in ipairs(list) do
    runs[v][i] = { diverged = false, missing = {}, values = { val_ppl = p, val_loss = math.log(p) } }
  end
end

-- A study's summary and console carry no claim of their own: a study at the claim's
-- protocol is laid beside the claim's Table 1 by the paper's claim table, read from its
-- records, not by the analysis.
local sum = analysis.summarize(write("at_claim", ", iters = 150"), runs)
t:eq(sum.claim_reference, nil, "a study at 150 iterations and lr 3e-4: no claim in its summary")
t:ok(not require("repro.report.terminal").verdict_table(sum):find("claim", 1, true),
  "nor on the terminal: " .. require("repro.report.terminal").verdict_table(sum))

-- The paper's tables (paper/lib/tex_claim.lua) on the committed claim_v1 (the first
-- attempt, distance 1) and prelim summaries:
-- the claim's Table 1 as its summary carries it, each set-up, the pinned set-up's rows,
-- the n-gram references, and the effects as changes of perplexity, exp(d) - 1.
local data = require "repro.report.data"
local tex_claim = require("repro.core.extension").load("paper/lib/tex_claim.lua", "test")
local cs, ps = data.load_study("experiments", "claim_v1"), data.load_study("experiments",
  "prelim")
local CS = require("repro.report.texfmt").escape("claim_v1")
if cs and ps then
  local ctx = { names = { "prelim", "claim_v1" }, by_name = { prelim = ps, claim_v1 = cs } }
  local tab = tex_claim.claim_table(cs, ctx)
  local row = claim.TABLE1.rows.none
  t:ok(tab:find(string.format("claim (Table~1) & none & 3 & \\num{%.2f} $\\pm$ \\num{%.2f}",
    row.val_ppl, row.val_ppl_sd), 1, true), "the claim's baseline row: " .. tab)
  t:ok(tab:find("(8/150)", 1, true), "its mock accuracy as a count of 150")
  t:ok(tab:find(CS .. ", set-up 1 & none & 5 & ", 1, true) and
    tab:find(CS .. ", set-up 2 & none & 5 & ", 1, true), "both set-ups, 5 seeds each")
  local pv = ps.summary.per_variant.none.metrics.val_ppl
  t:ok(tab:find(string.format("prelim & none & 3 & \\num{%.3f}", pv.mean), 1, true),
    "the pinned set-up's baseline beside it")
  t:ok(tab:find("prelim & none & 3 & ", 1, true) and tab:find(" & LayerNorm & 3 & ", 1, true)
    and tab:find(" & RMSNorm & 3 & ", 1, true), "prelim's three norms, from its records")
  local fs_ = require("repro.report.data").load_study("experiments", "final")
  if fs_ then
    ctx.names[#ctx.names + 1], ctx.by_name.final = "final", fs_
    t:ok(not tex_claim.claim_table(cs, ctx):find("\nfinal & ", 1, true),
      "final (300 iterations) is not at the claim's protocol: not in the table")
  end
  t:ok(tab:find("corpus & unigram &  & \\num{", 1, true) and tab:find(" & bigram &  & \\num{", 1,
    true), "the n-gram references")
  local eff = tex_claim.claim_effects_table(cs)
  local claim_ln = 100 * (claim.TABLE1.rows.layernorm.val_ppl / row.val_ppl - 1)
  t:ok(eff:find(string.format("LayerNorm vs none & student study (3 seeds) & \\num{%.2f}\\,\\%%",
    claim_ln), 1, true), string.format("the claim's LayerNorm effect %.2f %% of PPL: %s",
    claim_ln, eff))
  local e1 = cs.summary.claim.setups[1].effects[1]
  t:ok(eff:find(string.format(" & set-up 1 (5 seeds) & \\num{%+.5f}\\,\\%%",
    100 * (math.exp(e1.mean) - 1)), 1, true), "set-up 1's effect as exp(d) - 1")
  t:ok(eff:find("The set-ups, as they differ from the default model: set-up 1, ", 1, true)
    and eff:find("; set-up 2, ", 1, true), "the note names what each set-up is: " .. eff)
  t:ok(not eff:find(CS, 1, true), "no study name in the table: " .. eff)
  t:ok(not eff:find("nats", 1, true), "no percentage of a loss in nats")
  local no = tex_claim.claim_table(ps, ctx)
  t:ok(no:find("has no comparison with the claim", 1, true), "a study without a claim: " .. no)
else
  t:ok(false, "the committed claim and prelim summaries exist")
end

check.rmtree(dir)
t:done()
