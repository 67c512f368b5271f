-- The main text's checked assertions (lua/repro/report/assertions.lua): \Claim,
-- \Replicated and \Assert against the summaries, on a fixture of two committed summaries
-- (tuned, claim) and a small planted main text:
--   a correct assertion of each kind passes; a contradicted verdict, an analysis, claim,
--   set-up or field that does not exist, a study that has not run (outside \IfStudy) and
--   a finding sentence that asserts nothing each fail, naming the file's line;
--   --lenient-assertions (make reproduce QUICK=1) lists a contradicted one and goes on;
--   bin/repro report and bin/repro ledger fail on a planted fault and write nothing;
--   generated content as a class: two manifest tables of different parameters with the
--   same bytes fail the report, naming both, and so does a figure drawn too tall for the
--   page (shrunk, its text would print small); the 3-shot task table differs from the 0-shot
--   one (it once printed the 0-shot one: the shot count never reached its builder);
--   the pre-registration table (lua/repro/report/tex_prereg.lua) on a planted git
--   history: a file committed after its first run and one changed after it are flagged,
--   and a tree without git says so.
local check = require "check"
local record_set = require "repro.record.set"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local report = require "repro.report"
local A = require "repro.report.assertions"

local t = check.new("test_paper_claims")
local repro = os.getenv("REPRO") or "bin/repro"

-- The fixture: the committed summaries of two studies, read as they are (no records beside
-- them: their digest is the empty folder's)
local dir = check.tmpdir()
for _, name in ipairs({ "tuned", "claim", "tasks" }) do
  fs.mkdir_p(dir .. "/exp/" .. name)
  local sum = json.decode(fs.read("experiments/" .. name .. "/summary.json"))
  sum.records_sha256 = record_set.digest(dir .. "/exp/" .. name, record_set.design(sum))
  check.write(dir .. "/exp/" .. name .. "/summary.json", json.encode(sum))
end
check.write(dir .. "/manifest.lua",
  'return { studies = { "tuned", "claim", "horizon" }, tables = {}, figures = {} }\n')
local ctx = report.context({ experiments = dir .. "/exp", manifest = dir .. "/manifest.lua",
  trust_summaries = true })
t:ok(ctx.by_name.tuned and ctx.by_name.claim and not ctx.by_name.horizon, "the fixture loads")

-- (run(GOOD:gsub(...)) passes gsub's count too: only a table is options)
local function run(src, opts)
  if type(opts) ~= "table" then opts = nil end
  return A.check(src, "main.tex", ctx.by_name, ctx.studies, { tuned = true, claim = true,
    horizon = true }, opts)
end
local function has(list, what)
  for _, x in ipairs(list) do if x:find(what, 1, true) then return true end end
  return false
end

-- correct assertions of every kind, and the finding sentences they carry (a verdict may
-- run over a line break)
local GOOD = [[
\documentclass{article}
\begin{document}
\begin{abstract}
% a comment with a verdict word: worse
\Claim{tuned}{layernorm}{none}{worse}{With each variant at its own best learning rate,
LayerNorm made validation loss worse by \TunedLayernormVsNonePplChange{}.}
\Replicated{layernorm_perplexity}{not testable here}{The claim could not be tested here.}
\end{abstract}
\section{Introduction}
The original study reports that LayerNorm is better.
\section{Results}
\Claim[val_loss]{tuned}{layernorm}{rmsnorm}{equivalent}{The two norms were equivalent.}
At the suite's reference set-up \Replicated[ref-layernorm/ref-none]{layernorm_perplexity}{not
reproduced}{the perplexity claim was not reproduced}, as Table~\ref{tab:x} shows.
\Assert{claim}{replication.claims[1].claim}{layernorm_perplexity}{The first claim is the
perplexity claim.} \Assert{tuned}{summary.seeds[1]}{101}{Its first seed is 101.}
\IfStudy{horizon}{\Claim{horizon}{layernorm}{none}{better}{Longer training helped.}}{The
training-length study has not run.}
A sentence with no finding in it stands alone.
\section{Conclusion}
\Claim{claim}{torch-L4-ps-tied-w30cos-d0-layernorm}{torch-L4-ps-tied-w30cos-d0-none}%
{better}{At the closest set-up LayerNorm did better.}
\end{document}
]]
local rows, problems, listed = run(GOOD)
t:eq(#problems, 0, "correct assertions pass: " .. table.concat(problems, "\n"))
t:eq(#rows, 7, "seven assertions checked (the one in the untaken \\IfStudy branch is not)")
local all_ok = true
for _, r in ipairs(rows) do all_ok = all_ok and r.ok == true end
t:ok(all_ok and #listed == 0, "each is as its summary says")
t:eq(rows[1].line, 5, "an assertion's row names its line")

-- a contradicted verdict (tuned: LayerNorm vs none is worse), naming the line
local bad = GOOD:gsub("{none}{worse}{With each", "{none}{better}{With each", 1)
rows, problems = run(bad)
t:ok(has(problems, 'main.tex:5: \\Claim{tuned}: layernorm vs none, val_loss: expected "better", ' ..
  'the summary says "worse"'), "a contradicted \\Claim fails at its line: " .. (problems[1] or ""))
-- the same, lenient: listed, not failed
local _, p2, l2 = run(bad, { lenient = true })
t:ok(#p2 == 0 and #l2 == 1 and l2[1]:find("main.tex:5:", 1, true),
  "lenient: the contradicted one is listed, not failed")
-- a contradicted replication verdict and set-up verdict
_, problems = run(GOOD:gsub("{not testable here}{The claim", "{reproduced}{The claim", 1))
t:ok(has(problems, 'main.tex:7: \\Replicated{claim}: claim layernorm_perplexity: expected ' ..
  '"reproduced", the summary says "not testable here"'), "a contradicted \\Replicated fails")
_, problems = run(GOOD:gsub("{not\nreproduced}{the perplexity", "{\nreproduced}{the perplexity", 1))
t:ok(has(problems, "main.tex:13: \\Replicated{claim}: claim layernorm_perplexity at " ..
  "ref-layernorm/ref-none"), "a contradicted set-up verdict fails")
-- a contradicted \Assert
_, problems = run(GOOD:gsub("{summary.seeds%[1%]}{101}", "{summary.seeds[1]}{102}", 1))
t:ok(has(problems, 'main.tex:16: \\Assert{tuned}: summary.seeds[1]: expected "102", the ' ..
  'summary says "101"'), "a contradicted \\Assert fails")

-- a list's length ("#"): the count a sentence of "none" or "only one" relies on
_, problems = run(GOOD:gsub("{summary.seeds%[1%]}{101}", "{summary.seeds#}{7}", 1))
t:eq(#problems, 0, "a list's length is asserted with #: " .. (problems[1] or ""))
_, problems = run(GOOD:gsub("{summary.seeds%[1%]}{101}", "{summary.seeds#}{0}", 1))
t:ok(has(problems, 'main.tex:16: \\Assert{tuned}: summary.seeds#: expected "0", the ' ..
  'summary says "7"'), "a wrong length fails: " .. (problems[1] or ""))
_, problems = run(GOOD:gsub("{summary.seeds%[1%]}{101}", "{summary.seeds[1]#}{1}", 1))
t:ok(has(problems, "summary.seeds[1] is not a list"), "# on a value fails: " .. (problems[1] or ""))

-- analyses that do not exist
_, problems = run(GOOD:gsub("{layernorm}{rmsnorm}{equivalent}",
  "{layernorm}{nonorm}{equivalent}", 1))
t:ok(has(problems,
  "main.tex:12: \\Claim: tuned has no verdict for layernorm vs nonorm on val_loss"),
  "a missing comparison fails: " .. (problems[1] or ""))
_, problems = run(GOOD:gsub("%[val_loss%]{tuned}", "[max_loss_jump]{tuned}", 1))
t:ok(has(problems, "is exploratory (secondary_comparisons): it has no verdict"),
  "an exploratory comparison has no verdict to assert")
_, problems = run(GOOD:gsub("{layernorm_perplexity}{not testable",
  "{layernorm_ppl}{not testable", 1))
t:ok(has(problems,
  'main.tex:7: \\Replicated: no study\'s replication has the claim "layernorm_ppl"'),
  "a missing claim fails")
_, problems = run(GOOD:gsub("%[ref%-layernorm/ref%-none%]", "[ref-layernorm/ref-nil]", 1))
t:ok(has(problems, "has no set-up ref-layernorm/ref-nil"), "a missing set-up fails")
_, problems = run(GOOD:gsub("replication.claims%[1%].claim", "h1a.verdict", 1))
t:ok(has(problems, "main.tex:15: \\Assert: the summary has no summary.h1a"),
  "a missing field fails")
-- a study that has not run, outside \IfStudy; one no manifest names
_, problems = run(GOOD:gsub("A sentence with no finding",
  "\\Claim{horizon}{layernorm}{none}{worse}{X.} A sentence with no finding", 1))
t:ok(has(problems, "main.tex:19: \\Claim: the study horizon has not been run"),
  "a study that has not run fails outside \\IfStudy")
_, p2, l2 = run(GOOD:gsub("\\Claim{tuned}{layernorm}{none}", "\\Claim{tunned}{layernorm}{none}", 1),
  { lenient = true })
t:ok(has(p2, "tunned is no study of the paper"), "a misspelt study fails, even lenient")

-- finding sentences that assert nothing, in the checked sections only
_, problems = run(GOOD:gsub("A sentence with no finding in it stands alone.",
  "LayerNorm was worse at every size.", 1))
t:ok(#problems == 1 and has(problems, 'main.tex:19: the section Results: a finding sentence ' ..
  'that asserts nothing (the verdict word "worse"'), "a typed verdict word fails: " ..
  (problems[1] or ""))
_, problems = run(GOOD:gsub("A sentence with no finding in it stands alone.",
  "Its effect was \\TunedRmsnormVsNoneCI{} in all.", 1))
t:ok(has(problems, "the result macro \\TunedRmsnormVsNoneCI"), "a typed result macro fails")
_, problems = run(GOOD:gsub("A sentence with no finding in it stands alone.",
  "Its accuracy fell by \\ZzHOneALayernormAccCoef{} at equal size.", 1))
t:ok(has(problems, "the result macro \\ZzHOneALayernormAccCoef"),
  "a fit's coefficient is a result macro too")
_, problems = run(GOOD:gsub("A sentence with no finding in it stands alone.",
  "Gradient peaks shrank by \\ZzHOneALayernormStabMaxGradNormFactor.", 1))
t:ok(has(problems, "the result macro \\ZzHOneALayernormStabMaxGradNormFactor"),
  "so is a factor")
_, problems = run(GOOD:gsub("The two norms were equivalent.}", "The two norms were equivalent.}" ..
  " And the rest was better.", 1))
t:ok(has(problems, "main.tex:12:") and has(problems, "And the rest was better."),
  "a sentence after an assertion's sentence is checked on its own")
t:eq(#select(2, run(GOOD:gsub("The original study reports",
  "We found worse: the original study reports", 1))), 0,
  "the Introduction is not checked")
_, problems = run("\\begin{abstract}\\Claim{tuned}{layernorm}{none}{worse}\\end{abstract}")
t:ok(has(problems, "\\Claim: expected 5 arguments in braces, found 4"),
  "a macro without its arguments fails")

-- bin/repro report and bin/repro ledger on a planted main text
check.write(dir .. "/main.tex", bad)
local flags = " --experiments " .. dir .. "/exp --manifest " .. dir .. "/manifest.lua " ..
  "--trust-summaries --tex " .. dir .. "/main.tex"
local code, out, err = check.run(repro .. " report --paper " .. dir .. "/paper --plots-data " ..
  dir .. "/plots --no-figures" .. flags)
out = (out or "") .. (err or "")
t:ok(code ~= 0 and out:find('expected "better", the summary says "worse"', 1, true),
  "bin/repro report fails on a contradicted assertion: " .. out:sub(1, 400))
t:ok(not fs.exists(dir .. "/paper/numbers.tex"), "... and writes nothing")
code, out, err = check.run(repro .. " report --paper " .. dir .. "/paper --plots-data " ..
  dir .. "/plots --no-figures --lenient-assertions" .. flags)
t:ok(code == 0 and (err or ""):find("listed, not failed", 1, true) and (err or ""):find("expected \"better\"", 1, true)
  and fs.exists(dir .. "/paper/numbers.tex"), "--lenient-assertions lists it and writes the paper: "
  .. (err or ""):sub(1, 400))
local ledger_tex = fs.read(dir .. "/paper/tables/ledger.tex") or ""
t:ok(ledger_tex:find("contradicted", 1, true) and ledger_tex:find("\\label{tab:ledger}", 1, true),
  "the ledger's table marks it")
t:ok((fs.read(dir .. "/paper/numbers.tex") or ""):find(
  "\\providecommand{\\Claim}[6][]{#6}", 1, true),
  "numbers.tex defines the macros")
code, out = check.run(repro .. " ledger" .. flags)
t:ok(code ~= 0 and (out or ""):find("CONTRADICTED", 1, true) and
  (out or ""):find("ledger: 7 assertions", 1, true),
  "bin/repro ledger lists and fails: " .. (out or ""))
check.write(dir .. "/main.tex", GOOD)
code, out = check.run(repro .. " ledger" .. flags)
t:ok(code == 0 and (out or ""):find("main.tex:5  \\Claim  tuned: layernorm vs none, val_loss  " ..
  "expected worse -> worse  ok", 1, true),
  "bin/repro ledger lists the correct ones: " .. (out or ""))

-- which main text a report checks: --tex; else paper/main.tex with the paper's manifest;
-- with another manifest (a test's fixture) none
t:ok(report.main_text({ tex = "x.tex" }) == "x.tex" and report.main_text({}) == nil and
  report.main_text({ manifest_given = true }) == false, "the main text checked: --tex, " ..
  "the default, none with another manifest")

-- Generated content as a class ---------------------------------------------------------
local P = report.identical_outputs({ { name = "a", kind = "k", study = "x" },
  { name = "b", kind = "k", study = "x", shots = 3 }, { name = "c", kind = "k", study = "y" } },
  { a = "\\begin{tabular}same", b = "\\begin{tabular}same", c = "\\begin{tabular}same" }, "tables")
t:ok(#P == 2 and P[1]:find("tables a (kind=k study=x) and b (kind=k shots=3 study=x): " ..
  "different parameters, byte-identical output", 1, true), "identical outputs of different " ..
  "parameters are named: " .. table.concat(P, "; "))
t:eq(#report.identical_outputs({ { name = "a", kind = "k", caption = "1" },
  { name = "b", kind = "k", caption = "2" } }, { a = "x", b = "x" }, "tables"), 0,
  "entries that differ only in their captions may print the same")
local function manifest_with(tables_lua)
  check.write(dir .. "/manifest.lua", 'return { studies = { "tuned", "claim", "tasks" }, ' ..
    'tables = { ' .. tables_lua .. ' }, figures = {} }\n')
end
manifest_with('{ name = "tasks0", kind = "task_comparisons", study = "tasks" }, ' ..
  '{ name = "tasks3", kind = "task_comparisons", study = "tasks", shots = 3 }')
check.write(dir .. "/main.tex", GOOD)
check.rmtree(dir .. "/paper")
code, out, err = check.run(repro .. " report --paper " .. dir .. "/paper --plots-data " ..
  dir .. "/plots --no-figures" .. flags)
t:ok(code == 0, "the report with a 0-shot and a 3-shot task table: " .. (err or ""):sub(1, 300))
local t0 = fs.read(dir .. "/paper/tables/tasks0.tex")
local t3 = fs.read(dir .. "/paper/tables/tasks3.tex")
t:ok(t0 and t3 and t0 ~= t3, "the 3-shot task table is not the 0-shot one")
manifest_with('{ name = "tasks0", kind = "task_comparisons", study = "tasks" }, ' ..
  '{ name = "tasks0b", kind = "task_comparisons", study = "tasks", shots = 0 }')
check.rmtree(dir .. "/paper")
code, out, err = check.run(repro .. " report --paper " .. dir .. "/paper --plots-data " ..
  dir .. "/plots --no-figures" .. flags)
t:ok(code ~= 0 and (err or ""):find("tables tasks0 (kind=task_comparisons study=tasks) and " ..
  "tasks0b (kind=task_comparisons shots=0 study=tasks): different parameters, byte-identical " ..
  "output", 1, true), "planted: two entries of different parameters, the same bytes: " ..
  (err or ""):sub(1, 400))
t:ok(not fs.exists(dir .. "/paper/numbers.tex"), "... and no paper is written")

-- a figure drawn taller than the page lets it be printed (the forest of 60 rows): refused
local tall = report.too_tall({ { name = "forest_all", height = 18.75 },
  { name = "forest_protocols", height = 3.95 }, { name = "skipped", skip = "no data" } }, 9)
t:ok(#tall == 1 and tall[1]:find("figures forest_all: drawn 18.8 in tall, more than 7.2 in", 1,
  true), "a figure too tall for the page is named: " .. table.concat(tall, "; "))
t:eq(#report.too_tall({ { name = "x", height = 30 } }, nil), 0,
  "without the manifest's text_height nothing is checked")

-- The pre-registration table on a planted history --------------------------------------------
local prereg = require "repro.report.tex_prereg"
local repo = dir .. "/repo"
fs.mkdir_p(repo .. "/lua/experiments")
local function git(args, when)
  local env = when and ("GIT_AUTHOR_DATE=" .. when .. " GIT_COMMITTER_DATE=" .. when .. " ") or ""
  return check.run(env .. "git -C " .. fs.quote(repo) .. " -c user.name=t -c user.email=t@t " ..
    args)
end
git("init -q")
check.write(repo .. "/lua/experiments/early.lua", "return {}\n")
git("add -A")
git("commit -q -m early", "2026-01-01T10:00:00Z")
check.write(repo .. "/lua/experiments/late.lua", "return {}\n")
git("add -A")
git("commit -q -m late", "2026-01-03T10:00:00Z")
check.write(repo .. "/lua/experiments/early.lua", "return { changed = true }\n")
git("add -A")
git("commit -q -m change", "2026-01-04T10:00:00Z")
local function fake(name, start)
  local sdir = dir .. "/runs/" .. name
  fs.mkdir_p(sdir .. "/a/seed-1")
  check.write(sdir .. "/a/seed-1/manifest.json", '{"start_utc": "' .. start .. '"}')
  return { name = name, dir = sdir, variants = { { name = "a" } }, seeds = { 1 },
    run_dir = function(_, v, seed) return sdir .. "/" .. v .. "/seed-" .. seed end }
end
local pctx = { root = repo, studies = { fake("early", "2026-01-02T00:00:00Z"),
  fake("late", "2026-01-02T00:00:00Z") } }
local ptex = prereg.prereg_table(pctx)
t:ok(ptex:find("early & \\texttt{%x+} 2026%-01%-01 10:00:00 & 2026%-01%-02 00:00:00 & " ..
  "\\texttt{%x+} & changed after its first run") ~= nil,
  "a file changed after its first run is flagged, with the commit: " .. ptex)
t:ok(ptex:find("late & \\texttt{%x+} 2026%-01%-03 10:00:00 & 2026%-01%-02 00:00:00 & none & " ..
  "committed after its first run") ~= nil,
  "a file committed after its first run is flagged: " .. ptex)
local defs = {}
prereg.numbers(function(k, v) defs[k] = v end, pctx)
t:ok(defs.PreregTotal == "2" and defs.PreregBefore == "1" and defs.PreregChanged == "1",
  "\\PreregTotal 2, \\PreregBefore 1, \\PreregChanged 1")
local nogit = { root = dir .. "/runs", studies = { fake("early", "2026-01-02T00:00:00Z") } }
t:ok(prereg.prereg_table(nogit):find("has no git history", 1, true),
  "a tree without git says so")

check.rmtree(dir)
t:done()
