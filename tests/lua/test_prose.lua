-- The paper's generated words (lua/repro/report/tex_prose.lua, and the verdict tables of
-- tex_numbers.lua).  Two checks, each first shown to fail on a planted sentence or paper
-- of the kind the paper used to print:
--   code names   no variant name ("layernorm-lr3e-3", "none") and no metric key
--                ("n_spikes", "n spikes", "val_loss") in a verdict table
--   duplicates   each verdict table macro used at most once by the paper
--                (paper/main.tex, paper/supplement.tex and the generated appendix)
-- Then every verdict table of every committed study (experiments/*/summary.json, named
-- through paper/paper.lua) passes the first, the paper's sources the second, and
-- hand-made cases give a degenerate comparison's note its wording.
local check = require "check"
local record_set = require "repro.record.set"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local F = require "repro.report.texfmt"
local data = require "repro.report.data"
local prose = require "repro.report.tex_prose"
local tex_numbers = require "repro.report.tex_numbers"
local report = require "repro.report"

local t = check.new("test_prose")
local manifest = report.load_manifest("paper/paper.lua")

-- The checks --------------------------------------------------------------------------

local function plain_find(text, word)
  -- word as a whole token: not inside a longer name of letters, digits, -, _ or .
  local i = 1
  while true do
    local a, b = text:find(word, i, true)
    if not a then return false end
    local before, after = text:sub(a - 1, a - 1), text:sub(b + 1, b + 1)
    if not before:match("[%w%-_]") and not after:match("[%w%-_]") then return true end
    i = b + 1
  end
end

-- The code names in `text` (a LaTeX verdict sentence) for study s: a list.
local function code_names(text, s)
  local found = {}
  for _, v in ipairs(s.variants) do
    if plain_find(text, v.name) then found[#found + 1] = v.name end
  end
  local metrics = { s.primary }
  for _, m in ipairs(s.analysis.metrics or {}) do metrics[#metrics + 1] = m end
  for _, m in ipairs(metrics) do
    if m:find("_", 1, true) then
      for _, form in ipairs({ m, F.escape(m), (m:gsub("_", " ")) }) do
        if text:find(form, 1, true) then found[#found + 1] = form end
      end
    end
  end
  if text:find("\\_", 1, true) then found[#found + 1] = "an escaped underscore" end
  return found
end

-- The verdict macros a TeX text uses more than once: a list.
local function duplicates(tex)
  local count, out = {}, {}
  for name in tex:gmatch("\\(%a+Verdicts)%f[^%a]") do count[name] = (count[name] or 0) + 1 end
  for name in tex:gmatch("\\(%a+Sentence)%f[^%a]") do count[name] = (count[name] or 0) + 1 end
  for name, n in pairs(count) do
    if n > 1 then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

-- A study from a hand-made summary, named through the manifest.
local dir = check.tmpdir()
local function study(name, summary)
  fs.mkdir_p(dir .. "/" .. name)
  -- the digest of the (here: no) records beside it, which the report checks
  summary.records_sha256 = record_set.digest(dir .. "/" .. name, record_set.design(summary))
  check.write(dir .. "/" .. name .. "/summary.json", json.pretty(summary))
  return data.load_study(dir, name, manifest.names, manifest.factor, { trust_summaries = true })
end

local function variants(list)
  local out = {}
  for _, v in ipairs(list) do
    out[#out + 1] = { name = v[1], overrides = { embed_norm = v[2], lr = v[3] } }
  end
  return out
end

-- The checks fail on what the paper used to print ----------------------------------------
local old = study("old", { seeds = { 1, 2, 3, 4, 5 }, per_variant = {},
  variants = variants({ { "none-lr3e-3", "none", 0.003 },
    { "layernorm-lr3e-3", "layernorm", 0.003 } }),
  analysis = { primary = "n_spikes", metrics = { "n_spikes", "val_loss" }, alpha = 0.05,
    min_effect = 5, better = "lower" } })
local planted = "With layernorm-lr3e-3, n spikes was lower than with none-lr3e-3 by 1 on " ..
  "average (-100.00 \\% of none-lr3e-3's mean)"
t:ok(#code_names(planted, old) >= 3, "planted: code names found: " ..
  table.concat(code_names(planted, old), ", "))
t:ok(#code_names("With layernorm, val\\_\\allowbreak{}loss was higher", old) >= 2,
  "planted: an escaped metric key is a code name")
t:eq(#code_names("At peak lr \\num{0.003}, LayerNorm raised validation perplexity", old), 0,
  "the prose's names are not code names")
t:eq(table.concat(duplicates("\\paragraph{Final.} \\FinalVerdicts\n\\section{Verdicts}\n" ..
  "\\FinalVerdicts \\PrelimVerdicts"), ","), "FinalVerdicts", "planted: a verdict printed twice")

-- Every committed verdict ------------------------------------------------------------------
-- The summaries as committed (their records' digests checked): that each is what its
-- records give is test_ledger's check (its context recomputes every study of the paper's
-- manifest, which names every study under experiments/), not redone here.
local TRUSTED = { trust_summaries = true }
local studies = data.load_all("experiments", manifest.studies, manifest.names, manifest.factor,
  nil, TRUSTED)
-- A committed summary names files relative to the project root: its bytes must not depend
-- on where the repository was cloned (an absolute path: "\/" after a quote, a space or a
-- parenthesis, as JSON escapes "/").
for _, s in ipairs(studies) do
  local text = fs.read(s.dir .. "/summary.json") or ""
  local at = text:find('[ %("]\\/%w')
  t:ok(not at, s.name .. ": no absolute path in summary.json" ..
    (at and (": " .. text:sub(at, at + 60)) or ""))
end
local n_verdicts = 0
for _, s in ipairs(studies) do
  local tex = tex_numbers.verdict_table(s, false) .. tex_numbers.verdict_table(s, true)
  -- the rows' names are the paired tables' labels (the manifest's); the rest is words
  local words_only = tex
  for _, v in ipairs(s.summary.verdicts or {}) do
    local label = s:comparison_label(v.treatment, v.baseline)
    local at = words_only:find(label, 1, true)
    if at then words_only = words_only:sub(1, at - 1) .. words_only:sub(at + #label) end
  end
  local names = code_names(words_only, s)
  t:eq(#names, 0, s.name .. ": the verdict tables have no code name (" ..
    table.concat(names, ", ") .. ")")
  t:ok(not tex:lower():find("%f[%w]nan%f[%W]") and not tex:find("%f[%w]inf%f[%W]"),
    s.name .. ": no nan or inf")
  -- each row's why is a sentence of its own: the text after the table never runs into it
  -- (the prose lint read "no meaningful difference Figure S10 is not drawn" as one clause)
  local open_rows = 0
  for last in tex:gmatch("([^&]-) \\\\") do
    if last ~= " Why" and not last:find("%.$") then open_rows = open_rows + 1 end
  end
  t:eq(open_rows, 0, s.name .. ": every verdict row's why ends its sentence")
  for _, v in ipairs(s.summary.verdicts or {}) do
    n_verdicts = n_verdicts + 1
    t:ok(tex:find("\\emph{" .. F.escape(v.verdict) .. "}", 1, true), string.format(
      "%s: %s vs %s: its verdict in the table", s.name, v.treatment, v.baseline))
  end
  -- the summary's own sentence (the terminal's, with its code names) is not the table's
  local first = (s.summary.verdicts or {})[1]
  if first then
    local sentence = require("repro.analysis.words").sentence(first, s.summary)
    t:ok(#code_names(F.escape(sentence), s) > 0,
      s.name .. ": the terminal's sentence has code names: " .. sentence)
  end
end
t:ok(n_verdicts > 0, "the committed studies have verdicts: " .. n_verdicts)

-- One definition of a perplexity change: exp of the mean paired difference of log
-- perplexity (the validation loss), minus 1, in every summary (checked on the primary
-- metric's pairs where it is the validation loss).
local n_ppl = 0
for _, s in ipairs(studies) do
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.metric == "val_loss" and c.val_ppl_change and c.a and #c.a == #c.b and #c.a > 0 then
      local sum = 0
      for i = 1, #c.a do sum = sum + (c.b[i] - c.a[i]) end
      local want = math.exp(sum / #c.a) - 1
      t:ok(math.abs(c.val_ppl_change - want) < 1e-6, string.format("%s: %s - %s: PPL " ..
        "change %.8f = exp(mean loss difference) - 1 = %.8f", s.name, c.treatment, c.baseline,
        c.val_ppl_change, want))
      n_ppl = n_ppl + 1
    end
  end
end
t:ok(n_ppl > 20, "perplexity changes checked: " .. n_ppl)

-- An interaction's row is named by the config words in which its two settings differ,
-- never by a variant's code tag ("L2d64") or its registered name ("layernorm effect, ...").
local n_inter = 0
for _, s in ipairs(studies) do
  for _, e in ipairs(s.summary.interactions or {}) do
    local label = s:interaction_label(e)
    local ta = s.variant_by_name[e.a[1]]
    t:ok(label:find(" minus ", 1, true) and label ~= F.escape(e.name), s.name .. ": " ..
      e.name .. ": labelled from its settings: " .. label)
    for _, v in ipairs({ ta, s.variant_by_name[e.b[1]] }) do
      if v.tag ~= "" and v.tag ~= v.setting then
        t:ok(not label:find(F.escape(v.tag), 1, true), s.name .. ": " .. e.name ..
          ": no code tag " .. v.tag .. " in " .. label)
      end
    end
    n_inter = n_inter + 1
  end
end
t:ok(n_inter >= 20, "interaction labels checked: " .. n_inter)
local ladder_label
for _, s in ipairs(studies) do
  if s.name == "ladder" then ladder_label = s:interaction_label(s.summary.interactions[1]) end
end
t:eq(ladder_label, "LayerNorm${}-{}$none, 2 blocks and width 64 minus 8 blocks and width 256",
  "ladder: the first interaction's label")

-- The forest plot's row labels name settings by their config in words, never by a tag of
-- a variant's name ("L2d64", "lr3e-4", "torch-L4-ps-tied-w30cos-d0").
local forest = require "repro.report.plot_forest"
local n_forest = 0
for _, s in ipairs(studies) do
  for _, c in ipairs(s:comparisons()) do
    local label = forest.plain_label(s, c)
    for _, name in ipairs({ c.treatment, c.baseline }) do
      local v = s.variant_by_name[name]
      if v and v.tag ~= "" and v.tag ~= v.setting and #v.tag > 2 then
        t:ok(not label:find(v.tag, 1, true), s.name .. ": forest label without the code tag " ..
          v.tag .. ": " .. label)
      end
    end
    n_forest = n_forest + 1
  end
end
t:ok(n_forest > 50, "forest labels checked: " .. n_forest)
-- ... and every label of the paper's forest figure fits beside its plot: a label longer
-- than half the figure's characters leaves gnuplot no canvas (the plot collapsed when
-- init_parts named its set-ups by five init keys; its figure spec's settings name them)
local forest_spec
for _, f in ipairs(manifest.figures or {}) do
  if f.kind == "forest" and f.metric == "val_loss" and not forest_spec then forest_spec = f end
end
local _, _, longest = forest.forest(studies, forest_spec.metric, forest_spec.labels,
  forest_spec.settings)
t:ok(longest and longest <= 60, "the forest figure's longest row label has " ..
  tostring(longest) .. " characters (at most 60)")
local _, _, unnamed = forest.forest(studies, forest_spec.metric, forest_spec.labels, nil)
t:ok(unnamed and unnamed > longest, "without the spec's settings names the labels are " ..
  "longer (" .. tostring(unnamed) .. " characters): the names are used")

-- A study registered under an earlier rule: its tables print the registered family's Holm
-- p beside the current rule's, and mark a verdict or an interaction they decide apart.
local tex_tables = require "repro.report.tex_tables"
local n_registered = 0
for _, s in ipairs(studies) do
  local reg = tex_tables.registered_family(s)
  local ptab = tex_tables.paired_table(s)
  local itab = #(s.summary.interactions or {}) > 0 and tex_tables.interactions_table(s) or nil
  local header = "$p_\\mathrm{Holm}^\\mathrm{reg}$"
  t:eq(ptab:find(header, 1, true) ~= nil, reg and true or false,
    s.name .. ": the registered family's column exactly when it registered an earlier rule")
  if reg then
    n_registered = n_registered + 1
    for _, c in ipairs(s.summary.comparisons or {}) do
      if c.metric == s.primary then
        local p = F.p(c.p_holm) .. " & " .. F.p(c.p_holm_rule1) .. " & "
        t:ok(ptab:find(p, 1, true), s.name .. ": " .. c.treatment .. " - " .. c.baseline ..
          ": both Holm p side by side (" .. p .. ")")
      end
    end
    for _, v in ipairs(s.summary.verdicts or {}) do
      if v.verdict_rule1 and v.verdict_rule1 ~= v.verdict then
        t:ok(ptab:find(string.format("under the registered rule %d: %s", reg,
          F.escape(v.verdict_rule1)), 1, true), s.name ..
          ": a verdict the registered rule gives otherwise is marked")
      end
    end
    for _, e in ipairs(itab and s.summary.interactions or {}) do
      t:ok(itab:find(F.p(e.p_holm_rule1), 1, true), s.name .. ": " .. e.name ..
        ": the registered family's p")
      if not e.exploratory and e.reject_holm_rule1 ~= e.reject_holm then
        t:ok(itab:find("under one family and not the other", 1, true) and
          (fs.read("paper/numbers.tex") or ""):find("families also disagree on interactions",
          1, true), s.name .. ": an interaction the families decide apart, marked and told")
      end
    end
  end
end
t:ok(n_registered > 0, "some committed study registered rule 1: " .. n_registered)

-- Each verdict once in the paper.
local paper = (fs.read("paper/main.tex") or "") .. (fs.read("paper/supplement.tex") or "") ..
  (fs.read("paper/tables/appendix.tex") or "")
local dup = duplicates(paper)
t:eq(#dup, 0, "the paper prints each verdict once: " .. table.concat(dup, ", "))
-- a study of the paper's manifest (body or appendix) has its verdicts there; a study
-- the manifest does not name (a user's, or one not yet written up) has none
local in_paper = {}
for _, n in ipairs(manifest.studies) do in_paper[n] = true end
for _, n in ipairs(manifest.appendix or {}) do in_paper[n] = true end
for _, s in ipairs(studies) do
  if #(s.summary.verdicts or {}) > 0 then
    local found = paper:find("\\" .. F.macro(s.name) .. "Verdicts", 1, true) ~= nil
    t:eq(found, in_paper[s.name] == true, s.name .. (in_paper[s.name] and
      ": its verdicts are in the paper" or ": not in the manifest, not in the paper"))
  end
end

-- Degenerate cases ------------------------------------------------------------------------
-- A degenerate comparison's note is worded from its flags, not the statistics' C text.
local note = prose.degenerate_note({ degenerate = true, n = 3, mean = 0, metric = "n_spikes",
  flags = { constant = true }, reason = "all 3 differences are equal (sd = 0): t, p_t" })
t:ok(note:find("All 3 seed pairs give the same difference", 1, true) and
  not note:find("p_t", 1, true) and not note:find("\\_", 1, true), "constant note: " .. note)
note = prose.degenerate_note({ degenerate = true, n = 5, t = 6932.46,
  flags = { nct_range = true } })
t:ok(note:find("\\num{6932.5}", 1, true) and note:find("noncentral", 1, true), "ncp note: " .. note)
t:eq(prose.degenerate_note({ degenerate = false }), "", "no note when nothing is undefined")

-- The manifest's names are checked, each error naming the field.
t:raises(function() report.check_names("m.lua", { keys = { { key = "lr", format = 3 } } }) end,
  "m.lua: names: keys[1] (lr): format", "a format that is not a string, table or false")
t:raises(function() report.check_names("m.lua", { labels = {} }) end,
  "m.lua: names: labels: unknown field", "an unknown field of names")
-- Without the manifest's names, a key reads "with <key> = <value>" (no paper in the library).
local two = study("two_lr", { seeds = { 1 }, per_variant = {}, analysis = {},
  variants = variants({ { "none-lr3e-3", "none", 0.003 },
    { "layernorm-lr1e-2", "layernorm", 0.01 } }) })
t:eq(two.variant_by_name["none-lr3e-3"].prose, "no norm at peak lr \\num{0.003}",
  "the manifest's name of a variant and its setting")
t:eq(data.load_study(dir, "two_lr", nil, { key = "embed_norm",
  labels = { layernorm = "LayerNorm" } }, { trust_summaries = true }).variant_by_name["layernorm-lr1e-2"].prose,
  "LayerNorm with lr = \\num{0.01}", "no manifest names: the generic name")
-- Without a factor (a study alone, that declares none), each variant is a level of its
-- own, named by its name; no config key is named.
local alone = data.load_study(dir, "two_lr", nil, nil, { trust_summaries = true })
t:eq(alone.variant_by_name["layernorm-lr1e-2"].prose, F.escape("layernorm-lr1e-2"),
  "no factor: the variant's own name")
t:eq(alone.factor.baseline, "none-lr3e-3", "no factor: the first variant is the baseline")
t:eq(old.variant_by_name["none-lr3e-3"].prose, "no norm", "a key all variants share is not named")

check.rmtree(dir)
-- The committed paper's text: no double negative, no run-together macro text, no config
-- syntax (tests/report/prose_lint.lua, each rule first shown to catch a planted fault),
-- and every verdict paragraph starts with a capital.
local lint = dofile("tests/report/prose_lint.lua")
for _, planted in ipairs({ { "We found that no set-up tried does not match it.", "double negative" },
    { "It is not unlikely.", "double negative" },
    { "as p. 13 printed Tables 18 and 19.ts effects", "run-together" },
    { "none, lr=0.003,min lr=0.0003 & 1", "config syntax" } }) do
  local f = lint.lint(planted[1])
  t:ok(f[1] and f[1].kind == planted[2], "prose lint catches a planted " .. planted[2])
end
t:eq(#lint.lint("Neither LayerNorm nor RMSNorm had a spike; no interval, no test. It is " ..
  "significant under one family and not under the other."), 0, "prose lint: no false alarm")
for _, doc in ipairs({ "paper/main.pdf", "paper/supplement.pdf" }) do
  local _, pdf_text = check.run("pdftotext " .. doc .. " -")
  t:ok(pdf_text and #pdf_text > 1000, "pdftotext reads " .. doc)
  for _, f in ipairs(lint.lint(pdf_text or "")) do
    t:ok(false, doc .. ": " .. f.kind .. ": " .. f.at)
  end
end
local numbers_tex = fs.read("paper/numbers.tex") or ""
local n_par = 0
for name, body in numbers_tex:gmatch("\\newcommand{\\(%w+Verdicts)}{(.-)}\n") do
  -- a study that registered no interaction has an empty InteractionVerdicts
  if body ~= "" or not name:match("InteractionVerdicts$") then
    n_par = n_par + 1
    t:ok(body:match("^[%u\\]"), name .. " starts with a capital: " .. body:sub(1, 40))
  end
end
t:ok(n_par > 5, "verdict paragraphs checked: " .. n_par)

-- README's Results list is the report's paper/results.md, copied by make paper: it cannot
-- fall behind the summaries without this failing.
local readme = fs.read("README.md") or ""
local results = fs.read("paper/results.md")
local block = readme:match("<!%-%- results: generated by make paper %-%->\n(.-)<!%-%- results: end %-%->")
t:ok(results and #results > 200, "paper/results.md exists")
t:eq(block, results, "README.md's Results block is paper/results.md (run make paper)")

-- The docs stay short enough to read: README in at most 200 lines with the two commands in
-- its first 40, DESIGN.md in at most 6,000 words (words as wc -w counts them).
local lines, first40 = 0, {}
for line in (readme .. "\n"):gmatch("(.-)\n") do
  lines = lines + 1
  if lines <= 40 then first40[#first40 + 1] = line end
end
first40 = table.concat(first40, "\n")
t:ok(lines - 1 <= 200, "README.md has at most 200 lines: " .. (lines - 1))
t:ok(first40:find("make reproduce", 1, true) and first40:find("make test", 1, true),
  "README.md names make reproduce and make test in its first 40 lines")
local design_words = select(2, (fs.read("docs/DESIGN.md") or ""):gsub("%S+", ""))
t:ok(design_words > 1000 and design_words <= 6000, "docs/DESIGN.md has at most 6,000 words: " ..
  design_words)

-- paper/lib/tex_trends.lua: a size study's fit slope is the least-squares slope of the
-- size means of LayerNorm - none on log10 parameters (here Sxy / Sxx, by hand), over the
-- comparisons whose two variants are one model by `same` (the scale study: one setting;
-- the ladder, each variant at its own learning rate: the same depth and width); checked
-- against numbers.tex's \<Study>LayernormFitSlope.  The number of sizes it fitted.
local function check_slope(s, S, same)
  local xs, ys = {}, {}
  for _, c in ipairs(s.summary.comparisons) do
    local tv, bv = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
    if c.metric == s.primary and tv.level == "layernorm" and bv.level == "none" and
        same(s, c, tv, bv) then
      xs[#xs + 1], ys[#ys + 1] = math.log(s:params(c.baseline), 10), c.mean
    end
  end
  local mx, my = 0, 0
  for i = 1, #xs do mx, my = mx + xs[i] / #xs, my + ys[i] / #ys end
  local sxy, sxx = 0, 0
  for i = 1, #xs do sxy, sxx = sxy + (xs[i] - mx) * (ys[i] - my), sxx + (xs[i] - mx) ^ 2 end
  local slope = F.num(sxy / sxx, 3)
  t:ok(numbers_tex:find("\\newcommand{\\" .. S .. "LayernormFitSlope}{" .. slope .. "}", 1,
    true), s.name .. " fit slope " .. slope .. " in numbers.tex")
  return #xs
end
local scale
for _, s in ipairs(studies) do if s.name == "scale" then scale = s end end
if scale then
  t:eq(check_slope(scale, "Scale", function(_, _, tv, bv) return tv.setting == bv.setting end),
    3, "scale: three sizes")
end
-- The ladder's table has a row per size with each variant's rate.
local ladder
for _, s in ipairs(studies) do if s.name == "ladder" then ladder = s end end
t:ok(ladder ~= nil, "the ladder study is committed")
if ladder then
  t:eq(check_slope(ladder, "Ladder", function(s, c)
    return s:config_value(c.treatment, "d_model") == s:config_value(c.baseline, "d_model") and
      s:config_value(c.treatment, "n_layer") == s:config_value(c.baseline, "n_layer")
  end), 4, "ladder: four sizes")
  local tab = fs.read("paper/tables/ladder_effect.tex") or ""
  local rows = 0
  for _ in tab:gmatch("LayerNorm%${}%-{}%$none") do rows = rows + 1 end
  t:eq(rows, 4, "ladder_effect.tex: a row per size")
  local verdicts = 0
  for _, c in ipairs(ladder.summary.verdicts) do
    if c.metric == ladder.primary and tab:find("& " .. c.verdict .. " \\", 1, true) then
      verdicts = verdicts + 1
    end
  end
  t:eq(verdicts, 4, "ladder_effect.tex: each row ends in its verdict word")
  t:ok(not tab:find("table: 0x", 1, true), "ladder_effect.tex: no Lua value printed as text")
  for _, v in ipairs(ladder.variants) do
    t:ok(numbers_tex:find("\\newcommand{\\Ladder" .. F.macro(v.name) .. "Lr}{" ..
      F.lr(ladder:config_value(v.name, "lr")) .. "}", 1, true), v.name .. "'s lr in numbers.tex")
  end
end
-- the horizon gap is printed for each primary comparison
t:ok(numbers_tex:find("\\newcommand{\\HorizonLayernormLrThreeEFourVsNoneLrThreeEFourGapEnd}{\\num{",
  1, true), "the horizon gap at the end is in numbers.tex")

-- The task pilot's accuracy table (lua/repro/report/tex_tasks.lua): a row per variant whose
-- marks of "above guessing" are the tasks whose mean accuracy (the summary's) lies above
-- the task's 99 % guessing limit, counted here by hand; the controls' rows; and
-- numbers.tex's largest count over the baselines.
local pilot = data.load_study("experiments", "tasks_pilot", manifest.names, manifest.factor,
  TRUSTED)
local ptab = fs.read("paper/tables/tasks_pilot_accuracy.tex") or ""
t:ok(ptab:find("\nbigram model & ", 1, true) and ptab:find("\nchance & ", 1, true),
  "tasks_pilot_accuracy.tex: the chance and bigram rows")
local most = 0
for _, v in ipairs(pilot.variants) do
  local want = 0
  for task, c in pairs(pilot.summary.tasks.chance) do
    local m = pilot.summary.per_variant[v.name].metrics["task_" .. task .. "_0shot_acc"]
    if m.mean > c.hi then want = want + 1 end
  end
  if v.level == "none" then most = math.max(most, want) end
  local row = ptab:match("\n" .. v.tex_label:gsub("%p", "%%%0") .. " & ([^\n]*)")
  local got = 0
  for _ in (row or ""):gmatch("%$%^{%+}%$") do got = got + 1 end
  t:ok(row ~= nil and got == want, string.format("tasks_pilot_accuracy.tex: %s marks %d " ..
    "tasks above guessing, the summary %d", v.name, got, want))
end
t:ok(numbers_tex:find("\\newcommand{\\TasksPilotMaxBaselineAboveChance}{" .. most .. "}", 1,
  true), "numbers.tex: the pilot's baselines beat guessing on at most " .. most .. " tasks")

t:done()
