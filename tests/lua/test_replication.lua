-- Replication verdicts and the robust companions.  A study file's `original`
-- on a comparison is checked (a bad one named by file, line and key); the summary of
-- synthetic runs carries each original's statistics and verdict by docs/DESIGN.md's rules
-- (reproduced, not reproduced, not testable here; one verdict per claim, not testable
-- when no set-up matches) and leaves every comparison's numbers as they were without it;
-- every comparison and interaction carries its robust companions, labelled exploratory,
-- and the leave-one-seed-out check names exactly the seeds whose removal changes a
-- verdict (checked by analysing the study again without each seed).  Last, a user's tiny
-- study with an original, trained in a temporary folder, gets a replication section and
-- the robust table in its own report.
local check = require "check"
local record_set = require "repro.record.set"
local replication = require "repro.analysis.replication"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local stats = require "stats"
local study = require "repro.study"
local analysis = require "repro.analysis"
local t = check.new("test_replication")
local dir = check.tmpdir()
local repro = os.getenv("REPRO") or "bin/repro"

local corpus = dir .. "/corpus.txt"
check.write(corpus, string.rep("the cat sat on the mat. a dog ran far.\n", 400))

local HEAD = [[
return { name = "zz_repl", description = "synthetic",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 6,
           warmup = 2, diag_every = 3, diag_windows = 2, data = "]] .. corpus .. [[" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" },
               { name = "rmsnorm", embed_norm = "rmsnorm" } },
  seeds = { 1, 2, 3, 4, 5, 6 },
  analysis = { baseline = "none", metrics = { "val_loss", "val_ppl" },
    primary = "val_loss", better = "lower", min_effect = 0.05, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t",
    comparisons = {
]]
local function study_text(ln_extra, rms_extra)
  return HEAD .. "      { \"layernorm\", \"none\"" .. (ln_extra or "") .. " },\n" ..
    "      { \"rmsnorm\", \"none\"" .. (rms_extra or "") .. " } },\n" ..
    "    interactions = { { name = \"ln minus rms\", a = { \"layernorm\", \"none\" },\n" ..
    "      b = { \"rmsnorm\", \"none\" } } } } }\n"
end
local function load(text)
  local path = dir .. "/zz_repl.lua"
  check.write(path, text)
  return study.load(path), path
end
local function msg(err) return type(err) == "table" and tostring(err.message) or tostring(err) end

-- Validation ----------------------------------------------------------------------------
local bad = {
  { [[,
      original = { claim = "x", source = "s", metric = "val_los", estimate = -0.1,
        matches = true }]], "analysis.comparisons[1].original.metric: expected one of the " ..
    "metrics compared", 12 },
  { [[,
      original = { claim = "x", source = "s", metric = "val_loss", estimate = -0.1,
        matches = true, margn = 0.1 }]], "analysis.comparisons[1].original.margn: unknown " ..
    "field (did you mean 'margin'?)", 13 },
  { [[,
      original = { claim = "x", source = "s", metric = "val_loss", matches = true,
        arms = { baseline = { mean = 22.18, sd = 0.9, n = 3 },
                 treatment = { mean = 20.64, sd = -1, n = 3 } }, scale = "log_ratio" }]],
    "analysis.comparisons[1].original.arms.treatment.sd: expected a number > 0", 14 },
  { [[,
      original = { claim = "x", source = "s", metric = "val_loss", estimate = -0.1,
        se = 0.02, matches = true }]], "analysis.comparisons[1].original.n: expected an " ..
    "integer >= 2", nil },
  { [[,
      original = { claim = "x", source = "s", metric = "val_loss", estimate = -0.1 }]],
    "analysis.comparisons[1].original.matches: expected true or false", nil },
  { [[,
      original = { claim = "x", source = "s", metric = "val_loss", estimate = -0.1,
        matches = true, arms = { baseline = { mean = 1 }, treatment = { mean = 2 } } }]],
    "expected either estimate (with se, n, design) or arms, not both", nil },
}
for i, b in ipairs(bad) do
  local ok, err = pcall(load, study_text(b[1]))
  local m = msg(err)
  t:ok(not ok and m:find(b[2], 1, true) ~= nil and m:find("zz_repl.lua:", 1, true) ~= nil,
    "bad original " .. i .. " refused, naming the file and the key: " .. m)
  if b[3] then
    t:ok(m:find("zz_repl.lua:" .. b[3] .. ":", 1, true) ~= nil, "bad original " .. i ..
      " located at line " .. b[3] .. ": " .. m)
  end
end

-- Synthetic runs ------------------------------------------------------------------------
-- layernorm: about -0.10 nats on every seed but one, which is -0.40 (its removal moves
-- the mean below... and the verdict); rmsnorm: about +0.01.
local none = { 2.00, 2.10, 2.05, 2.20, 2.15, 2.08 }
local ln_d = { -0.40, -0.021, -0.030, -0.025, -0.028, -0.022 }
local rms_d = { 0.012, 0.008, 0.015, 0.006, 0.011, 0.009 }
local function runs_of(seeds)
  local runs = { none = {}, layernorm = {}, rmsnorm = {} }
  for _, i in ipairs(seeds) do
    local function run(x)
      return { diverged = false, missing = {}, values = { val_loss = x, val_ppl = math.exp(x) } }
    end
    runs.none[i] = run(none[i])
    runs.layernorm[i] = run(none[i] + ln_d[i])
    runs.rmsnorm[i] = run(none[i] + rms_d[i])
  end
  return runs
end
local ALL = { 1, 2, 3, 4, 5, 6 }

local plain = load(study_text())
local sum0 = analysis.summarize(plain, runs_of(ALL))
t:eq(sum0.replication, nil, "no original: no replication section")

-- the originals: LayerNorm's as a paired estimate near the replication (reproduced), the
-- same as the claim's Table 1 arms at n = 3 on the log scale at a set-up declared not
-- matching, and RMSNorm's of the other sign (not reproduced) with a means-only accuracy
local ln_orig = [[,
      original = {
        { claim = "ln", source = "a paper", metric = "val_loss", estimate = -0.09, se = 0.03,
          n = 4, design = "paired", margin = 0.05, matches = true, declared = "before runs" },
        { claim = "ln_table1", source = "Table 1", metric = "val_loss", scale = "log_ratio",
          arms = { baseline = { mean = 22.18, sd = 0.90, n = 3 },
                   treatment = { mean = 20.64, sd = 0.81, n = 3 } }, matches = false,
          declared = "after runs" } }]]
local rms_orig = [[,
      original = {
        { claim = "rms", source = "a paper", metric = "val_loss", estimate = -0.2, se = 0.02,
          n = 5, design = "unpaired", matches = true },
        { claim = "rms_ppl", source = "a paper", metric = "val_ppl",
          arms = { baseline = { mean = 8 }, treatment = { mean = 7.9 } }, matches = true } }]]
local with = load(study_text(ln_orig, rms_orig))
t:eq(#with.analysis.originals, 4, "four originals normalized")
local sum = analysis.summarize(with, runs_of(ALL))
local function strip(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = json.encode(e) end
  return table.concat(out, "\n")
end
t:eq(strip(sum.comparisons), strip(sum0.comparisons),
  "declaring originals changes no field of any comparison")
t:eq(json.encode(sum.verdicts), json.encode(sum0.verdicts), "nor any verdict")
t:eq(json.encode(sum.analysis), json.encode(sum0.analysis), "nor the summary's analysis")
local rep = sum.replication
t:ok(rep and #rep.entries == 4 and #rep.claims == 4 and
  replication.RULES:find("prediction interval", 1, true),
  "the replication section: four entries, four claims and the rules")
local by = {}
for _, e in ipairs(rep.entries) do by[e.claim] = e end

-- the statistics are stats.replication's on the comparison's paired result
local ln = nil
for _, c in ipairs(sum.comparisons) do
  if c.treatment == "layernorm" and c.metric == "val_loss" then ln = c end
end
local want = stats.replication({ estimate = -0.09, se = 0.03, sd = 0.03 * 2, n1 = 4, n2 = 0 },
  { mean = ln.mean, sd = ln.sd, n = ln.n }, { alpha = 0.05, margin = 0.05 })
t:near(by.ln.stats.pi[1], want.pi[1], 1e-12, "the prediction interval from stats.replication")
t:near(by.ln.stats.d33_raw, want.d33_raw, 1e-12, "d33 from the paired design (sd = se sqrt(n))")
t:near(by.ln.stats.tost.p, want.tost_p, 1e-12, "the TOST at the declared margin")
t:eq(by.ln.stats.tost.descriptive, true, "the TOST is descriptive")
t:eq(by.ln.verdict, "reproduced", "LayerNorm: same direction, inside the PI, not too small: " ..
  replication.entry_reason(by.ln))
t:ok(by.ln.replication.hodges_lehmann == ln.robust.hodges_lehmann,
  "the entry quotes the comparison's Hodges-Lehmann estimate")
local arms = stats.original_from_arms({ 22.18, 20.64 }, { 0.90, 0.81 }, { 3, 3 },
  { log_ratio = true })
t:near(by.ln_table1.original.estimate, math.log(20.64 / 22.18), 1e-12,
  "Table 1's arms: the log ratio of the perplexities")
t:near(by.ln_table1.original.se, arms.se, 1e-12, "its se by the delta method")
t:eq(by.ln_table1.original.n1, 3, "an original with n = 3 per arm")
t:eq(by.rms.verdict, "not reproduced", "RMSNorm: the opposite direction")
t:ok(by.rms.reason_code:find("opposite_direction", 1, true) ~= nil, "its reason code")
t:eq(by.rms_ppl.verdict, "not testable here", "means without spreads: not testable")
t:eq(replication.direction(by.rms_ppl), "opposite direction (descriptive)",
  "its direction, descriptive")
local claims = {}
for _, c in ipairs(rep.claims) do claims[c.claim] = c end
t:eq(claims.ln.verdict, "reproduced", "claim ln: its matching set-up's verdict")
t:eq(claims.ln_table1.verdict, "not testable here", "claim ln_table1: no set-up matches")
t:eq(claims.rms.verdict, "not reproduced", "claim rms: not reproduced")
t:ok(table.concat(replication.text(rep), "\n"):find("declared after the study's runs", 1, true),
  "the summary says an original was declared after the runs")

-- decide: the order of the rules
t:eq((analysis and require("repro.analysis.replication").decide({ same_direction = true,
  pi = { -1, 1 }, in_pi = true, too_small = true }, 5, true)), "not reproduced",
  "too small by small telescopes: not reproduced even inside the PI")

-- Robust companions and leave one seed out -----------------------------------------------
for _, list in ipairs({ sum.comparisons, sum.interactions }) do
  for _, e in ipairs(list) do
    local r = e.robust
    local a, b = e.a, e.b
    if e.name then a, b = e.diff_b, e.diff_a end -- an interaction: effect a - effect b
    local want_r = stats.robust(a, b, { alpha = 0.05 })
    t:ok(r and r.exploratory == true and r.hodges_lehmann == want_r.hl and
      r.p_sign == want_r.p_sign and r.p_wilcoxon == want_r.p_wilcoxon,
      (e.treatment or e.name) .. " on " .. e.metric .. ": robust companions, exploratory")
    t:eq(r.leave_one_out ~= nil, e.metric == "val_loss",
      "leave one seed out only for the family's entries")
  end
end
local family = {}
for _, c in ipairs(sum.comparisons) do
  if c.metric == "val_loss" then family[#family + 1] = c end
end
for _, e in ipairs(sum.interactions) do
  if e.metric == "val_loss" then family[#family + 1] = e end
end
local any_change = false
for k, seed in ipairs(ALL) do
  local rest = {}
  for j, s in ipairs(ALL) do if j ~= k then rest[#rest + 1] = s end end
  local s2 = load((study_text():gsub("seeds = { 1, 2, 3, 4, 5, 6 }",
    "seeds = { " .. table.concat(rest, ", ") .. " }")))
  local sub = analysis.summarize(s2, runs_of(rest))
  local sub_family = {}
  for _, c in ipairs(sub.comparisons) do
    if c.metric == "val_loss" then sub_family[#sub_family + 1] = c end
  end
  for _, e in ipairs(sub.interactions) do
    if e.metric == "val_loss" then sub_family[#sub_family + 1] = e end
  end
  for i, e in ipairs(family) do
    local named = false
    for _, c in ipairs(e.robust.leave_one_out.changes) do
      if c.seed == seed then
        named = true
        t:eq(c.verdict, sub_family[i].verdict, "the verdict named without seed " .. seed)
      end
    end
    local changed = sub_family[i].verdict ~= e.verdict
    any_change = any_change or changed
    t:eq(named, changed, string.format("%s: seed %d named exactly when its removal changes " ..
      "the verdict (%s -> %s)", e.treatment or e.name, seed, e.verdict, sub_family[i].verdict))
  end
end
t:ok(any_change, "the data make some seed's removal change a verdict (the check can fail)")
local terminal = require("repro.report.terminal").verdict_table(sum, 200)
t:ok(terminal:find("Robust companions on", 1, true) and terminal:find("Hodges-Lehmann " ..
  "[interval]", 1, true) and terminal:find("Exploratory, outside the decision rule", 1, true) and terminal:find("replication of the originals", 1, true),
  "the verdict table shows the companions, labelled, and the replication: " .. terminal)

-- The paper's tables mark a verdict whose companions read differently (robust.differs)
local tex_tables = require "repro.report.tex_tables"
local sdir = dir .. "/texexp/zz_repl"
fs.mkdir_p(sdir)
sum.records_sha256 = record_set.digest(sdir, record_set.design(sum))
check.write(sdir .. "/summary.json", json.pretty(sum))
local st = require("repro.report.data").load_study(dir .. "/texexp", "zz_repl", nil, nil,
  { trust_summaries = true })
local tables = tex_tables.paired_table(st) .. tex_tables.interactions_table(st)
local n_differ = 0
for _, e in ipairs(family) do
  if #e.robust.differs > 0 then n_differ = n_differ + 1 end
  t:eq(e.robust.differs[1] ~= nil, #e.robust.leave_one_out.changes > 0 or
    (e.robust.p_sign and e.robust.p_sign <= 0.05 and e.verdict ~= "better" and
      e.verdict ~= "worse") or (e.robust.ci ~= nil and ((e.robust.ci[1] > 0 or e.robust.ci[2] < 0)
      ~= (e.verdict == "better" or e.verdict == "worse"))) or false,
    (e.treatment or e.name) .. ": differs exactly by its rule")
end
local _, marks = tables:gsub("exploratory %(outside the rule%): the Hodges", "")
t:ok(n_differ > 0 and marks == n_differ, string.format("the tables mark the %d entries whose " ..
  "companions read differently (%d notes)", n_differ, marks))

-- A user's study with an original gets a replication section in its own report ---------
local exp = dir .. "/experiments"
local user = dir .. "/zz_user.lua"
check.write(user, (study_text([[,
      original = { claim = "user_claim", source = "a blog post", metric = "val_loss",
        estimate = -0.05, se = 0.02, n = 3, design = "paired", matches = true,
        margin = 0.05 }]]):gsub("zz_repl", "zz_user")))
local code, _, err = check.run(string.format("%s run %s --out-root %s", repro, fs.quote(user),
  fs.quote(exp)))
t:eq(code, 0, "the user's study trains: " .. err)
local usum = json.decode(fs.read(exp .. "/zz_user/summary.json") or "{}")
t:ok(usum.replication and usum.replication.claims[1].claim == "user_claim",
  "its summary carries the replication")
code, _, err = check.run(string.format("%s report zz_user --experiments %s --studies %s",
  repro, fs.quote(exp), fs.quote(dir)))
t:eq(code, 0, "bin/repro report zz_user: " .. err)
local html = fs.read(exp .. "/zz_user/report/report.html") or ""
local tex = fs.read(exp .. "/zz_user/report/report.tex") or ""
t:ok(html:find("<h2>Replication</h2>", 1, true) and html:find("user_claim", 1, true) and
  html:find(usum.replication.entries[1].verdict, 1, true),
  "report.html: the replication section with the claim and its verdict")
t:ok(tex:find("\\subsection*{Replication}", 1, true) and tex:find("prediction interval", 1,
  true), "report.tex: the replication section")
t:ok(html:find("Robust companions on val_loss (exploratory)", 1, true),
  "report.html: the robust companions, labelled exploratory")
t:ok((fs.read(exp .. "/zz_user/report/report.pdf") or ""):sub(1, 5) == "%PDF-", "report.pdf")

t:done()
