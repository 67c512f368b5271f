-- A sequential study's own report and the paper's what-if replay.
-- `bin/repro report` on a tiny sequential study: the trajectory figure's data (a block per
-- comparison, a row per look reached, the stop marked, the summary's numbers), the
-- verdicts table (the look each comparison stopped at and why) and the path tables, the
-- path figure in the forest's place, the paper's table kind, and the same bytes again.
-- The what-if (paper/lib/tex_whatif.lua) on hand-made summaries with known differences: a
-- large effect stops at the first look, a null one reaches the cap; runs and agreement
-- counted; a comparison of fewer than 10 pairs and a sequential study are not replayed.
local check = require "check"
check.data_anywhere()
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local extension = require "repro.core.extension"
local data = require "repro.report.data"
local pseq = require "repro.report.sequential"
local t = check.new("test_sequential_report")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()

local corpus = check.word_corpus(dir .. "/corpus.txt", 7, 4000)

-- `slow` trains with a learning rate 100 times smaller (a large effect: it stops at the
-- first look), `other` from one other initialization for every seed (no effect to speak
-- of: it goes on to the cap).
check.write(dir .. "/seqrep.lua", string.format([[
return {
  name = "seqrep",
  description = "a tiny sequential study for its report",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 10,
    warmup = 2, lr = 1e-2, data = %q },
  variants = { { name = "base" }, { name = "slow", lr = 1e-4 }, { name = "other", init_seed = 999 } },
  seeds = { 11, 12, 13, 14, 15, 16 },
  analysis = { baseline = "base", metrics = { "val_loss" },
    comparisons = { { "slow", "base" }, { "other", "base" } },
    primary = "val_loss", better = "lower", min_effect = 0.01, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t",
    sequential = { looks = { 3, 6 }, shape = "obf", test = "t", stop = { "difference" },
      target = -0.5, sd = 0.05, sd_source = "a guess for the test" } },
}
]], corpus))
local root = dir .. "/exp"
local code, out, err = check.run(string.format("%s run %s/seqrep.lua --out-root %s --jobs 1",
  repro, dir, root))
t:eq(code, 0, "the study runs: " .. err)
local sum = json.decode(assert(fs.read(root .. "/seqrep/summary.json")))
local slow, other = sum.sequential.comparisons[1], sum.sequential.comparisons[2]
t:ok(slow.stopped_at == 1 and slow.verdict == "worse" and other.stopped_at == 2 and
  other.decision == "cap", "the large effect stops at look 1, the small one at the cap: " ..
  out)

local function report()
  return check.run(string.format("%s report seqrep --experiments %s --studies %s", repro, root,
    dir))
end
code, _, err = report()
t:eq(code, 0, "bin/repro report seqrep: " .. err)
local rdir = root .. "/seqrep/report"

-- the figure's data: a block per comparison, a row per look reached, the stop marked
local dat = fs.read(rdir .. "/data/path.dat") or ""
local blocks = {}
for block in (dat .. "\n\n\n"):gmatch("(.-)\n\n\n") do
  if block:find("%S") then
    local rows = {}
    for n, est, lo, hi, stop in block:gmatch("\n(%d+) (%S+) (%S+) (%S+) ([01])") do
      rows[#rows + 1] = { n = tonumber(n), est = tonumber(est), lo = tonumber(lo),
        hi = tonumber(hi), stop = stop == "1" }
    end
    blocks[#blocks + 1] = { title = block:match('^"([^"]*)"'), rows = rows }
  end
end
t:eq(#blocks, 2, "a block per comparison: " .. dat)
for i, e in ipairs(sum.sequential.comparisons) do
  local b = blocks[i] or { rows = {} }
  local ok = #b.rows == #e.looks
  for k, lk in ipairs(e.looks) do
    local r = b.rows[k] or {}
    ok = ok and r.n == lk.n and math.abs(r.est - lk.estimate) <= 1e-5 * math.abs(lk.estimate)
      + 1e-9 and math.abs(r.lo - lk.ci[1]) <= 1e-5 * math.abs(lk.ci[1]) + 1e-9 and
      r.stop == (k == #e.looks)
  end
  t:ok(ok, string.format("block %d: each look's seeds, estimate and repeated interval, the " ..
    "last one the stop: %s", i, dat))
end
t:ok(blocks[1] and blocks[1].title:find("slow", 1, true) and
  blocks[2] and blocks[2].title:find("other", 1, true), "each block titled by its comparison")

-- the tables: where and why each comparison stopped, and its path look by look
local tex = fs.read(rdir .. "/report.tex") or ""
t:ok(tex:find("slow & base & 1 & 3 &", 1, true) and tex:find("other & base & 2 & 6 &", 1, true),
  "the verdicts table gives the look and seeds of each stop")
t:ok(tex:find("slow vs base: worse because at look 1 (3 seeds per variant) the statistic",
  1, true) and tex:find("other vs base: inconclusive because at look 2 (6 seeds per " ..
  "variant), the cap, without a decision", 1, true), "and why, in the analysis's words")
t:ok(tex:find("Path of slow vs base", 1, true) and tex:find("stop: difference", 1, true) and
  tex:find("stop: the cap", 1, true) and tex:find("go on", 1, true),
  "a path table per comparison, its decision at each look")
t:ok(tex:find("figures/path.pdf", 1, true) and not tex:find("figures/forest.pdf", 1, true),
  "the path figure in the forest's place")
t:ok(not tex:find("TOST p (Holm)", 1, true), "no fixed design's verdict table")
local html = fs.read(rdir .. "/report.html") or ""
t:ok(html:find("<td>stop: difference</td>", 1, true) and
  fs.exists(rdir .. "/figures/png/path.png"), "the HTML has the same tables and the figure")
local before = {}
for _, f in ipairs({ "data/path.dat", "figures/path.pdf", "figures/png/path.png",
  "report.tex", "report.html" }) do before[f] = fs.read(rdir .. "/" .. f) end
code, _, err = report()
local same = code == 0 and err:find("(0 files changed", 1, true) ~= nil
for f, text in pairs(before) do same = same and fs.read(rdir .. "/" .. f) == text end
t:ok(same, "a second report writes the same bytes: " .. err)

-- the paper's table kind
local s = data.load_study(root, "seqrep", nil, nil, { studies = dir })
local ptex = pseq.tex_table(s)
local _, n_rows = ptex:gsub("\n%d & ", "")
t:eq(n_rows, #slow.looks + #other.looks, "the paper's table: a row per look reached")
t:ok(ptex:find("stop: the cap", 1, true) and ptex:find("worse because at look 1", 1, true),
  "with each stop and its reason")

-- The what-if replay --------------------------------------------------------------------
local W = extension.load("paper/lib/tex_whatif.lua", "test_sequential_report")
t:eq(table.concat(W.looks(12), ","), "5,10,12", "looks every 5 pairs and at n")
t:eq(table.concat(W.looks(20), ","), "5,10,15,20", "the cap a multiple of 5")

-- 20 seeds; `big` is the baseline plus 1 with a little spread (lower is better: worse),
-- `null` the baseline plus differences of mean 0
local seeds, base, big, null = {}, {}, {}, {}
for i = 1, 20 do
  seeds[i] = 100 + i
  base[i] = 2 + 0.05 * math.sin(i)
  big[i] = base[i] + 1 + 0.01 * math.cos(3 * i)
  null[i] = base[i] + (i % 2 == 0 and 0.1 or -0.1)
end
local function comparison(tv, b)
  return { treatment = tv, baseline = "base", metric = "val_loss", a = base, b = b,
    seeds = seeds, n = #seeds }
end
local hand = { seeds = seeds, analysis = { m = 2, alpha = 0.05, better = "lower",
  primary = "val_loss" }, comparisons = { comparison("big", big), comparison("null", null) },
  verdicts = { { treatment = "big", baseline = "base", metric = "val_loss", verdict = "worse" },
    { treatment = "null", baseline = "base", metric = "val_loss", verdict = "equivalent" } } }
t:ok(W.replayable(hand), "a study of a fixed number of seeds with a family is replayed")
local row = W.replay("hand", hand)
local eb, en = row.comparisons[1], row.comparisons[2]
t:ok(eb.look == 1 and eb.seeds == 5 and eb.verdict == "worse" and eb.agrees,
  string.format("the large effect stops at look 1 (5 seeds), worse: look %s, %s", eb.look,
    eb.verdict))
-- its statistic is the paired t of the first 5 differences, against the calibrated bound
local d, mean, ss = {}, 0, 0
for i = 1, 5 do d[i] = big[i] - base[i]; mean = mean + d[i] / 5 end
for i = 1, 5 do ss = ss + (d[i] - mean) ^ 2 end
t:near(eb.statistic, mean / math.sqrt(ss / 4 / 5), 1e-9, "the statistic is the paired t")
t:ok(eb.bound > 10 and eb.statistic >= eb.bound, "reaching its O'Brien-Fleming bound " ..
  tostring(eb.bound))
t:ok(en.look == 4 and en.looks == 4 and en.seeds == 20 and en.verdict == "inconclusive" and
  en.agrees, string.format("the null effect reaches the cap (look 4 of 4, 20 seeds), no " ..
  "verdict, agreeing with equivalent: look %s, %s", en.look, en.verdict))
t:eq(row.runs_fixed, 60, "the fixed design: 3 variants x 20 seeds")
t:eq(row.runs_sequential, 45, "sequentially: base and null 20, big 5")
t:ok(row.worse == 1 and row.cap == 1 and row.better == 0 and row.agree == 2,
  "the verdicts counted")
-- a fixed verdict the sequential design contradicts does not agree
hand.verdicts[1].verdict = "inconclusive"
t:ok(not W.replay("hand", hand).comparisons[1].agrees, "a difference against inconclusive " ..
  "does not agree")
local short = { seeds = { 1, 2, 3, 4, 5, 6, 7, 8 }, analysis = hand.analysis,
  comparisons = { { treatment = "big", baseline = "base", metric = "val_loss",
    a = { 1, 2, 3, 4, 5, 6, 7, 8 }, b = { 2, 3, 4, 5, 6, 7, 8, 9 } } },
  verdicts = hand.verdicts }
t:ok(W.replay("short", short).skip, "fewer than 10 pairs: not replayed")
t:ok(not W.replayable(sum), "a sequential study is not replayed")
local ctx_rows, total = W.rows({ studies = { { name = "hand", summary = hand },
  { name = "short", summary = short }, { name = "seqrep", summary = sum } } })
t:ok(#ctx_rows == 2 and total.studies == 1 and total.runs_fixed == 60 and
  total.runs_sequential == 45, "the totals count the replayed studies only")
local wtex = W.table({ studies = { { name = "hand", summary = hand },
  { name = "short", summary = short } } })
t:ok(wtex:find("hand & 20 & 2 & 2 & 60 & 45 & 0 & 1 & 1 & 1/2", 1, true) and
  wtex:find("not replayed: fewer than 10 pairs", 1, true) and
  wtex:find("60 runs for the fixed designs against 45 sequentially", 1, true),
  "the table's rows and its note's totals: " .. wtex)
t:done()
