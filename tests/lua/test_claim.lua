-- The claim's Table 1 stages (paper/lib/claim.lua): the distance and its threshold, the
-- ranking, the validation of analysis.claim, the search summary (ranking, selection,
-- "no set-up tried matches"), the Table-1 summary (rows beside the claim's, pooled
-- subset accuracy, the norm's effect beside the claim's, n-gram references, the closest
-- set-up), and a tiny end-to-end search run through bin/repro run.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local claim = require("repro.core.extension").load("paper/lib/claim.lua", "test")
local analysis = require "repro.analysis"
local study = require "repro.study"
local json = require "repro.core.json"
local stats = require "stats"
local engine = require "engine"
local t = check.new("test_claim")
local dir = check.tmpdir()
local REPRO = os.getenv("REPRO") or "bin/repro"

local none = claim.TABLE1.rows.none
local s_ppl = none.val_ppl_sd / none.val_ppl

-- the distance
local d = claim.distance({ val_ppl = none.val_ppl, final_grad_norm = none.final_grad_norm,
  embed_norm = none.embed_norm })
t:eq(d.d, 0.0, "the claim's own row is at distance 0")
t:ok(d.matches, "the claim's own row matches")
t:eq(claim.threshold(), 12, "threshold: 3 terms x 2^2")
d = claim.distance({ val_ppl = none.val_ppl * math.exp(s_ppl), final_grad_norm =
  none.final_grad_norm, embed_norm = none.embed_norm })
t:near(d.d, 1.0, 1e-12, "PPL one claimed spread away (log scale): D = 1")
t:near(d.terms[1].sigma, 0.90 / 22.18, 1e-15, "PPL tolerance: the claim's sd / mean")
d = claim.distance({ val_ppl = none.val_ppl, final_grad_norm = 2 * none.final_grad_norm,
  embed_norm = none.embed_norm / 2 })
local z = math.log(2) / claim.TOLERANCE
t:near(d.d, 2 * z * z, 1e-12, "twice and half as large are equally far: D = 2 (ln 2 / 0.1)^2")
t:near(d.terms[2].z, z, 1e-12, "z of the gradient norm")
t:near(d.terms[3].z, -z, 1e-12, "z of the embedding norm, signed")
t:ok(not d.matches, "a factor 2 in a norm does not match")
d = claim.distance({ val_ppl = none.val_ppl * math.exp(2 * s_ppl), final_grad_norm =
  none.final_grad_norm * math.exp(2 * claim.TOLERANCE), embed_norm = none.embed_norm *
  math.exp(-2 * claim.TOLERANCE) })
t:near(d.d, 12, 1e-9, "every term at z = 2: D at the threshold")
t:near(d.rms_z, 2, 1e-9, "root-mean-square z 2")
local lr = claim.TABLE1.rows.layernorm
d = claim.distance({ val_ppl = lr.val_ppl, final_grad_norm = lr.final_grad_norm,
  embed_norm = lr.embed_norm }, "layernorm")
t:eq(d.d, 0.0, "the LayerNorm row against its own row")
local dn = claim.distance({ val_ppl = lr.val_ppl, final_grad_norm = lr.final_grad_norm,
  embed_norm = lr.embed_norm }, "none")
t:ok(dn.d > 0, "the LayerNorm row is not at 0 from the none row")
local none_d, why = claim.distance({ val_ppl = 20, final_grad_norm = 0.2 })
t:ok(none_d == nil and why:find("embed_norm", 1, true), "a missing value: no distance: " ..
  tostring(why))
none_d, why = claim.distance({ val_ppl = 20, final_grad_norm = 0, embed_norm = 11 })
t:ok(none_d == nil and why:find("final_grad_norm", 1, true), "a zero value: no distance")
t:raises(function() claim.distance({}, "batchnorm") end, "unknown row", "an unknown row")
-- mock accuracy: every value of the claim is a count out of mock_acc_samples
for _, row in ipairs(claim.ROWS) do
  local k = claim.TABLE1.rows[row].mock_acc * claim.TABLE1.mock_acc_samples
  t:ok(math.abs(k - math.floor(k + 0.5)) < 0.05, row .. ": mock accuracy x " ..
    claim.TABLE1.mock_acc_samples .. " is a whole count: " .. k)
end

-- distance 2: PPL, embedding norm, the balanced accuracy on 150 positions on
-- its own scale against the claim's mock macro accuracy, the gradient norm at weight 1/4
local v2own = { val_ppl = none.val_ppl, embed_norm = none.embed_norm,
  bal_subset_acc_mean = none.mock_acc, final_grad_norm = none.final_grad_norm }
d = claim.distance(v2own, "none", 2)
t:eq(d.d, 0.0, "distance 2: the claim's own row is at 0")
t:eq(claim.threshold(2), 13, "distance 2: threshold 2^2 x (1 + 1 + 1 + 1/4)")
local sd150 = math.sqrt(none.mock_acc * (1 - none.mock_acc) / 150)
local v2 = {}
for k, x in pairs(v2own) do v2[k] = x end
v2.bal_subset_acc_mean = none.mock_acc + 2 * sd150
d = claim.distance(v2, "none", 2)
t:near(d.d, 4, 1e-9, "two binomial sds above the claim's accuracy: D = 4")
t:near(d.terms[3].sigma, sd150, 1e-15, "the accuracy term's sigma: the binomial sd at 150")
t:near(d.terms[3].difference, 2 * sd150, 1e-15, "on its own scale (a difference)")
t:eq(d.terms[3].weight, 1, "weight 1")
v2.bal_subset_acc_mean = none.mock_acc
v2.final_grad_norm = none.final_grad_norm * math.exp(0.5)
d = claim.distance(v2, "none", 2)
t:near(d.d, 0.25 * 4, 1e-9, "the gradient norm two tolerances (25 %) away counts a quarter")
t:near(d.rms_z, math.sqrt(1 / 3.25), 1e-9, "the weighted root-mean-square z")
v2.bal_subset_acc_mean = 0
t:ok(claim.distance(v2, "none", 2) ~= nil, "a balanced accuracy of 0 has a distance")
t:ok(claim.distance({ val_ppl = 20, embed_norm = 11, final_grad_norm = 0.2 }, "none", 2) == nil,
  "distance 2 needs the balanced accuracy")
t:raises(function() claim.distance(v2own, "none", 3) end, "unknown version", "an unknown version")

-- the ranking: by D, ties and undefined distances in the given order, undefined last
local far = { val_ppl = 14, final_grad_norm = 0.8, embed_norm = 0.4 }
local near = { val_ppl = 21, final_grad_norm = 0.2, embed_norm = 11 }
local ranked = claim.rank({
  { variant = "a", values = far }, { variant = "b", values = { val_ppl = 20 } },
  { variant = "c", values = near }, { variant = "d", values = far },
  { variant = "e", values = near },
})
local order = {}
for i, e in ipairs(ranked) do order[i] = e.variant end
t:eq(table.concat(order, " "), "c e a d b", "ranking: nearest first, ties stable, undefined last")
t:eq(ranked[1].rank, 1, "rank 1")
t:ok(ranked[5].distance == nil and ranked[5].reason, "an undefined distance says why")

-- analysis.claim is validated before anything runs
check.write(dir .. "/corpus.txt", string.rep("The quick brown fox jumps over the lazy dog.\n", 60))
local function study_file(name, body)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, body)
  return path
end
local BASE = [[base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4,
  iters = 4, warmup = 1, data = "]] .. dir .. [[/corpus.txt" },]]
local AN = [[baseline = "a", metrics = { "val_loss", "val_ppl", "final_grad_norm",
  "embed_norm" }, primary = "val_loss", better = "lower", min_effect = 0.02, alpha = 0.05,
  correction = "holm", resamples = 1000, test = "t",]]
local function search_src(name, claim_field, seeds)
  return "return { name = '" .. name .. "', description = 'x', " .. BASE .. [[
  variants = { { name = "a" }, { name = "b", tok_init_std = 1.0 },
    { name = "c", pos_init_std = 0.0 } },
  seeds = ]] .. (seeds or "{ 1 }") .. [[, extensions = { claim = "paper/lib/claim.lua" },
  analysis = { ]] .. AN .. [[ comparisons = {}, claim = ]] .. claim_field .. " } }"
end
t:raises(function() study.load(study_file("bad1", search_src("bad1",
  "{ stage = 'search', select = 4 }"))) end, "analysis.claim.select", "select beyond the variants")
t:raises(function() study.load(study_file("bad2", search_src("bad2",
  "{ stage = 'serach', select = 1 }"))) end, "expected \"search\" or \"table1\"", "a bad stage")
t:raises(function() study.load(study_file("bad3", search_src("bad3",
  "{ stage = 'search', select = 1, k = 2 }"))) end, "analysis.claim.k: unknown field",
  "an unknown field")
t:raises(function() study.load(study_file("bad4", search_src("bad4",
  "{ stage = 'table1', setups = { { name = 's', none = 'a', layernorm = 'b', " ..
  "rmsnorm = 'c' } } }"))) end, "variant 'b' has embed_norm none, not layernorm",
  "a set-up's variant with the wrong embed_norm")
t:raises(function() study.load(study_file("bad5", search_src("bad5",
  "{ stage = 'table1', setups = { { name = 's', none = 'a', layernorm = 'zz', " ..
  "rmsnorm = 'c' } } }"))) end, "analysis.claim.setups[1].layernorm", "an unknown variant")
-- The claim stages are an extension (paper/lib/claim.lua): a study that does not name
-- it has no such field, and an extension must be a Lua file of the project's trusted
-- folders (paper/lib/, extensions/) that offers check and summarize.
local function ext_src(name, ext)
  return search_src(name, "{ stage = 'search', select = 1 }"):gsub(
    'extensions = { claim = "paper/lib/claim.lua" }', ext, 1)
end
t:raises(function() study.load(study_file("noext", ext_src("noext", "depends = {}"))) end,
  "analysis.claim: unknown field", "no extension named: analysis.claim is unknown")
t:raises(function() study.load(study_file("ext1", ext_src("ext1",
  'extensions = { claim = "../paper/lib/claim.lua" }'))) end, "expected the name of an extension",
  "an extension outside the project is refused")
t:raises(function() study.load(study_file("ext2", ext_src("ext2",
  'extensions = { claim = "/etc/passwd.lua" }'))) end, "expected the name of an extension",
  "an absolute path is refused")
t:raises(function() study.load(study_file("ext3", ext_src("ext3",
  'extensions = { claim = "paper/paper.lua" }'))) end, "only those trusted folders",
  "a project file outside the trusted folders is refused")
t:raises(function() study.load(study_file("ext3b", ext_src("ext3b",
  'extensions = { claim = "paper/lib/readme.lua" }'))) end, "offers no check and summarize",
  "a file that is no extension is refused")
t:raises(function() study.load(study_file("ext4", ext_src("ext4",
  'extensions = { sweep = "paper/lib/claim.lua" }'))) end, "extensions.sweep: expected the " ..
  "name of an analysis field of the extension's own", "an extension may not take a suite field")
-- with no comparisons one seed is a valid (descriptive) design; with the default
-- comparisons it is refused, as before
local s = study.load(study_file("search", search_src("search", "{ stage = 'search', select = 2 }")))
t:eq(#s.analysis.comparisons, 0, "comparisons = {}: no family")
t:eq(s.analysis.claim.select, 2, "select kept")
t:raises(function() study.load(study_file("bad6", (search_src("bad6",
  "{ stage = 'search', select = 1 }"):gsub("comparisons = {},", "")))) end,
  "cannot reach the Holm first-step level", "one seed with comparisons is still refused")

-- the search summary from synthetic records
local function run_of(v)
  return { diverged = false, missing = {}, values = v }
end
local runs = {
  a = { [1] = run_of({ val_loss = math.log(14), val_ppl = 14, final_grad_norm = 0.8,
    embed_norm = 0.4 }) },
  b = { [1] = run_of({ val_loss = math.log(21), val_ppl = 21, final_grad_norm = 0.25,
    embed_norm = 12 }) },
  c = { [1] = { diverged = true, missing = {}, values = {} } },
}
local sum = analysis.summarize(s, runs)
t:ok(pcall(json.pretty, sum), "search summary encodes as JSON")
local c = sum.claim
t:eq(c.stage, "search", "claim stage in the summary")
t:eq(c.ranking[1].variant, "b", "the nearest set-up ranks first")
t:eq(c.ranking[3].variant, "c", "the diverged set-up (no distance) ranks last")
t:ok(c.ranking[3].distance.reason == "not_positive" and c.ranking[3].distance.metric == "val_ppl",
  "and says why")
t:eq(#c.selected, 2, "two selected")
t:eq(c.selected[2], "a", "the second closest selected")
t:eq(c.ranking[1].overrides.tok_init_std, 1.0, "a ranked set-up carries its overrides")
local want = claim.distance({ val_ppl = 21, final_grad_norm = 0.25, embed_norm = 12 }).d
t:near(c.ranking[1].distance.d, want, 1e-12, "the summary's distance is claim.distance's")
t:ok(want > claim.threshold() and not c.matches_any, "b is beyond the threshold")
local sentence = claim.sentence(c)
t:ok(sentence:find("No set-up tried matches", 1, true) and sentence:find("b,", 1, true),
  "the sentence says no set-up matches and names the closest: " .. sentence)
t:ok(sentence:find("final_grad_norm", 1, true), "and names the largest mismatch")
t:eq(sum.analysis.m, 0, "no family")
t:eq(#sum.verdicts, 0, "no verdicts")
local text = require("repro.report.terminal").verdict_table(sum, nil, s.extensions)
t:ok(text:find("distance to the claim's baseline row", 1, true) and text:find("selected for " ..
  "the next stage: b, a", 1, true), "the run command prints the ranking: " .. text)
-- a set-up at the claim's own numbers matches
runs.b[1].values = { val_loss = math.log(none.val_ppl), val_ppl = none.val_ppl * 1.01,
  final_grad_norm = none.final_grad_norm * 0.95, embed_norm = none.embed_norm * 1.02 }
c = analysis.summarize(s, runs).claim
t:ok(c.matches_any and c.closest.variant == "b" and claim.sentence(c):find("^The closest " ..
  "set%-up is b"), "a set-up near the claim matches: " .. claim.sentence(c))

-- the distance-2 search: set-ups at or above the unigram PPL of the split are excluded
-- before ranking; the pilot is the seed-to-seed RMS difference of the closest admissible
local uni = engine.ngram_ppl(dir .. "/corpus.txt").unigram_ppl
local s2 = study.load(study_file("search2", search_src("search2",
  "{ stage = 'search', select = 2, distance = 2, pilot = 2 }", "{ 1, 2 }")))
t:eq(s2.analysis.claim.distance, 2, "distance 2 kept")
t:raises(function() study.load(study_file("bad7", search_src("bad7",
  "{ stage = 'search', select = 1, distance = 5 }"))) end, "analysis.claim.distance",
  "an unknown distance version")
t:raises(function() study.load(study_file("bad8", search_src("bad8",
  "{ stage = 'search', select = 1, pilot = 2 }"))) end, "analysis.claim.pilot",
  "a pilot needs distance 2")
local function v2run(ppl, acc, dl)
  return run_of({ val_loss = math.log(ppl) + dl, val_ppl = ppl, final_grad_norm = 0.2,
    embed_norm = 11, bal_subset_acc_mean = acc })
end
local runs2 = {
  a = { [1] = v2run(uni * 1.01, 0.05, 0), [2] = v2run(uni * 1.01, 0.05, 0.03) },
  b = { [1] = v2run(22, 0.06, 0), [2] = v2run(22, 0.06, -0.04) },
  c = { [1] = v2run(uni * 0.7, 0.2, 0), [2] = v2run(uni * 0.7, 0.2, 0.0) },
}
local sum2 = analysis.summarize(s2, runs2)
local c2 = sum2.claim
t:eq(#c2.excluded, 1, "one set-up excluded")
t:eq(c2.excluded[1].variant, "a", "the one above the unigram PPL")
t:ok(claim.excluded_words(c2.excluded[1], c2.ngram):find("unigram", 1, true),
  "and says why: " .. c2.excluded[1].reason)
t:eq(#c2.ranking, 2, "the admissible two ranked")
t:eq(c2.selected[1], "b", "the nearest admissible selected first")
t:near(c2.ngram.unigram_ppl, uni, 1e-12, "the unigram PPL of the split in the summary")
t:ok(claim.sentence(c2):find("1 of 3 set-ups were excluded", 1, true),
  "the sentence says so: " .. claim.sentence(c2))
t:near(c2.pilot.sd, math.sqrt((0.04 ^ 2 + 0) / 2), 1e-9, "pilot: RMS of the admissible " ..
  "set-ups' seed differences (b 0.04, c 0), not the excluded a's")
t:eq(c2.pilot.df, 2, "with 2 degrees of freedom")
t:ok(sum2.pilot_comparisons and sum2.pilot_comparisons[1].sd == c2.pilot.sd,
  "offered as the summary's pilot_comparisons")
local text2 = require("repro.report.terminal").verdict_table(sum2, nil, s2.extensions)
t:ok(text2:find("distance 2 to the claim's baseline row", 1, true) and
  text2:find("excluded: a", 1, true) and text2:find("pilot for the next stage", 1, true),
  "the run command prints ranking, exclusions and pilot: " .. text2)

-- the Table-1 summary: two set-ups x three norms x three seeds
local vlist = {}
for _, su in ipairs({ "p", "q" }) do
  for _, norm in ipairs(claim.ROWS) do
    vlist[#vlist + 1] = string.format("{ name = '%s-%s', embed_norm = '%s'%s }", su, norm, norm,
      su == "q" and ", tok_init_std = 1.0" or "")
  end
end
local t1 = study_file("tab", "return { name = 'tab', description = 'x', " .. BASE ..
  " variants = { " .. table.concat(vlist, ", ") .. [[ },
  seeds = { 1, 2, 3 }, extensions = { claim = "paper/lib/claim.lua" },
  analysis = { baseline = "p-none", metrics = { "val_loss", "val_ppl", "val_acc",
    "final_grad_norm", "embed_norm" }, primary = "val_loss", better = "lower",
    min_effect = 0.02, alpha = 0.05, correction = "holm", resamples = 1000, test = "t",
    comparisons = { { "p-layernorm", "p-none" }, { "p-rmsnorm", "p-none" },
      { "p-layernorm", "p-rmsnorm" }, { "q-layernorm", "q-none" }, { "q-rmsnorm", "q-none" },
      { "q-layernorm", "q-rmsnorm" } },
    claim = { stage = "table1", setups = {
      { name = "p", none = "p-none", layernorm = "p-layernorm", rmsnorm = "p-rmsnorm",
        search = { study = "claim_search", rank = 2, d = 900.5 } },
      { name = "q", none = "q-none", layernorm = "q-layernorm", rmsnorm = "q-rmsnorm",
        search = { study = "claim_search", rank = 1, d = 30.25 } } } } } }
]])
s = study.load(t1)
local base = { p = { ppl = 14, g = 0.8, e = 0.4 }, q = { ppl = 22, g = 0.2, e = 11.5 } }
local factor = { none = 1, layernorm = 0.93, rmsnorm = 0.99 }
runs = {}
local subsets = {}
for _, su in ipairs({ "p", "q" }) do
  for _, norm in ipairs(claim.ROWS) do
    local v = su .. "-" .. norm
    runs[v] = {}
    for seed = 1, 3 do
      local ppl = base[su].ppl * factor[norm] * (1 + 0.01 * seed)
      local list = {}
      for k = 1, 20 do list[k] = ((seed * 7 + k * 3) % 11) / 50 end
      if v == "q-none" then
        for _, x in ipairs(list) do subsets[#subsets + 1] = x end
      end
      runs[v][seed] = { diverged = false, missing = {}, subset_acc = list,
        values = { val_loss = math.log(ppl), val_ppl = ppl, val_acc = 0.25 + 0.001 * seed,
          final_grad_norm = base[su].g * (1 + 0.02 * seed), embed_norm = base[su].e } }
    end
  end
end
sum = analysis.summarize(s, runs)
t:ok(pcall(json.pretty, sum), "Table-1 summary encodes as JSON")
c = sum.claim
t:eq(c.stage, "table1", "table1 stage")
t:eq(c.closest.setup, "q", "the closest set-up by its none row on this study's seeds")
local q = c.setups[2]
t:eq(q.name, "q", "set-ups in the given order")
t:eq(q.search.rank, 1, "the search's provenance is kept")
t:near(q.rows.none.val_ppl.mean, 22 * 1.02, 1e-12, "the none row's PPL mean over seeds")
local mean_vals = { val_ppl = 22 * 1.02, final_grad_norm = 0.2 * 1.04, embed_norm = 11.5 }
t:near(q.distance_none, claim.distance(mean_vals).d, 1e-12, "the none row's distance")
t:eq(q.matches, q.distance_none <= 12, "matches as the threshold says")
local pool = stats.summary(subsets)
t:eq(q.rows.none.subset_acc.n, 60, "60 subset accuracies pooled (3 seeds x 20)")
t:near(q.rows.none.subset_acc.sd, pool.sd, 1e-12, "pooled subset sd")
t:eq(q.rows.none.subset_acc.min, pool.min, "pooled subset min")
t:eq(q.rows.none.subset_acc.subsets_per_seed, 20, "20 subsets per seed")
t:ok(q.rows.none.subset_acc.sd_seed_means > 0, "the sd of the seed means")
t:near(q.rows.none.mock_acc_count, 8, 1e-3,
  "the claim's none mock accuracy is about 8 / 150 (0.0533 x 150 = 7.995)")
local eff = q.effects[1]
t:ok(eff.treatment == "layernorm" and eff.baseline == "none", "first effect: layernorm vs none")
t:near(eff.claim, math.log(20.64 / 22.18), 1e-12, "the claim's effect on val_loss: ln PPL ratio")
t:near(eff.mean, math.log(0.93), 1e-12, "the suite's effect")
t:eq(eff.same_sign, true, "same sign as the claim")
t:ok(eff.verdict ~= nil, "the effect carries the verdict")
t:eq(#q.effects, 3, "three effects per set-up")
t:ok(c.ngram.unigram_ppl and c.ngram.bigram_ppl, "n-gram references computed")
local ng = engine.ngram_ppl(dir .. "/corpus.txt")
t:eq(c.ngram.unigram_ppl, ng.unigram_ppl, "unigram PPL of the study's corpus")
text = require("repro.report.terminal").verdict_table(sum, nil, s.extensions)
t:ok(text:find("22.18 +- 0.90", 1, true) and text:find("20.64 +- 0.81", 1, true) and
  text:find("0.0533 (8.0/150)", 1, true), "the claim's Table 1 is printed: " .. text)
t:ok(text:find("beside set-up q (3 seeds; claim_search rank 1 at D = 30.2), the closest " ..
  "on these seeds", 1, true), "the closest is marked, with its search rank and distance")
t:ok(text:find("unigram PPL", 1, true) and text:find("bigram PPL", 1, true),
  "the reference perplexities are printed")
t:ok(text:find("50-pos. subset acc.", 1, true), "the subset accuracy row is printed")
t:ok(claim.sentence(c):find("closest", 1, true), "the sentence names the closest: " ..
  claim.sentence(c))

-- end to end: a tiny search through bin/repro run
local e2e = study_file("e2e", search_src("e2e", "{ stage = 'search', select = 2 }"))
local code, out, err = check.run(string.format("%s run %s --out-root %s/out", REPRO, e2e, dir))
t:eq(code, 0, "bin/repro run of a tiny search: " .. err)
t:ok(out:find("distance to the claim's baseline row", 1, true), "it prints the ranking")
local f = io.open(dir .. "/out/e2e/summary.json")
local doc = f and json.decode(f:read("a"))
if f then f:close() end
t:ok(doc and doc.claim and #doc.claim.ranking == 3 and #doc.claim.selected == 2,
  "the summary ranks the 3 set-ups and selects 2")

-- the real two stages at a tiny budget: claim.lua runs the set-ups claim_search selected
local function read_json(path)
  local fh = io.open(path)
  if not fh then return nil end
  local x = json.decode(fh:read("a"))
  fh:close()
  return x
end
-- (the first attempt, claim_search_v1.lua and claim_v1.lua, distance 1)
local tiny = "--jobs 2 --out-root " .. dir .. "/real --set n_layer=1,d_model=16,n_head=2," ..
  "context=16,batch=4,iters=4,warmup=1,data=" .. dir .. "/corpus.txt"
code, out, err = check.run(string.format("%s run lua/experiments/claim_v1.lua %s", REPRO, tiny))
t:ok(code ~= 0 and err:find("claim_search_v1", 1, true) and err:find("run it first", 1, true),
  "stage 2 before stage 1 is refused and says what to run: " .. err)
code, out, err = check.run(string.format("%s run lua/experiments/claim_search_v1.lua %s", REPRO,
  tiny))
t:eq(code, 0, "claim_search_v1.lua runs at a tiny budget: " .. err)
local search = read_json(dir .. "/real/claim_search_v1/summary.json")
t:ok(search and #search.claim.ranking == 24 and #search.claim.selected == 2,
  "claim_search_v1 ranks 24 set-ups and selects 2")
code, out, err = check.run(string.format("%s run lua/experiments/claim_v1.lua %s", REPRO, tiny))
t:eq(code, 0, "claim_v1.lua runs after claim_search_v1: " .. err)
local tab = read_json(dir .. "/real/claim_v1/summary.json")
t:ok(tab and tab.claim and tab.claim.stage == "table1", "claim_v1.lua writes the Table-1 summary")
if search and tab and tab.claim then
  local ranked = {}
  for _, e in ipairs(search.claim.ranking) do ranked[e.variant] = e end
  for i, name in ipairs(search.claim.selected) do
    local su = tab.claim.setups[i]
    t:eq(su and su.name, name, "set-up " .. i .. " is the search's selection " .. i)
    t:eq(su and su.search.rank, ranked[name].rank, name .. ": the search's rank kept")
    for _, norm in ipairs(claim.ROWS) do
      local v
      for _, x in ipairs(tab.variants) do
        if x.name == name .. "-" .. norm then v = x end
      end
      local same = v ~= nil and v.overrides.embed_norm == norm
      for k, x in pairs(ranked[name].overrides) do same = same and v.overrides[k] == x end
      t:ok(same, name .. "-" .. norm .. ": the search's overrides and embed_norm " .. norm)
    end
  end
  t:eq(#tab.comparisons // #tab.analysis.metrics, 6, "6 comparisons: 3 per set-up")
  t:eq(tab.analysis.m, 6, "Holm over the 6 comparisons on the primary metric")
  t:eq(#tab.seeds, 5, "5 seeds")
  t:ok(out:find("the claim's Table 1", 1, true) and out:find("unigram PPL", 1, true),
    "bin/repro run prints the Table-1 layout")
end

-- the new stages at a tiny budget: stage A ranks the admissible set-ups of its
-- 48 (at 4 steps none is: every one excluded), and stage B runs its selection (here none)
-- and the GPT-2 reference arm, with seeds from power between 10 and 12
code, out, err = check.run(string.format("%s run lua/experiments/claim.lua %s", REPRO, tiny))
t:ok(code ~= 0 and err:find("claim_search", 1, true) and err:find("run it first", 1, true),
  "stage B before stage A is refused and says what to run: " .. err)
code, out, err = check.run(string.format("%s run lua/experiments/claim_search.lua %s", REPRO,
  tiny))
t:eq(code, 0, "claim_search.lua runs at a tiny budget: " .. err)
search = read_json(dir .. "/real/claim_search/summary.json")
t:ok(search and #search.claim.ranking + #search.claim.excluded == 48 and
  #search.claim.selected <= 2 and search.claim.distance_version == 2,
  "claim_search ranks or excludes its 48 set-ups by distance 2 and selects at most 2")
t:ok(search and search.pilot_comparisons and search.pilot_comparisons[1].df == 8,
  "and offers a pilot with 8 degrees of freedom")
code, out, err = check.run(string.format("%s run lua/experiments/claim.lua %s", REPRO, tiny))
t:eq(code, 0, "claim.lua runs after claim_search: " .. err)
tab = read_json(dir .. "/real/claim/summary.json")
if search and tab and tab.claim then
  local k = #search.claim.selected
  t:eq(#tab.claim.setups, k + 1, "the selected set-ups and the reference arm")
  t:eq(tab.claim.setups[k + 1].name, "ref", "the reference arm last")
  t:eq(tab.analysis.m, 2 * (k + 1) + k, "Holm over 2 comparisons per set-up and the " ..
    "interactions")
  local sfp = tab.seeds_from_power or tab.analysis.seeds_from_power
  t:ok(#tab.seeds >= 10 and #tab.seeds <= 12 and tab.seeds[1] == 101,
    "fresh seeds from 101, between 10 and 12: " .. #tab.seeds)
  t:ok(sfp and sfp.upper == 0.8 and sfp.df == 8 and sfp.sd > sfp.sd_pilot,
    "sized with the 80 % upper confidence limit of the pilot's sd")
end

check.rmtree(dir)
t:done()
