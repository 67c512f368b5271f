-- Committed results are never rewritten silently.  A tiny study (two variants,
-- 1 block of width 16, 4 steps, a small corpus) in a temporary records root: its first summary is
-- written without --update, an identical one is no change; `analyze`, `run` and make
-- reproduce's study loop (scripts/reproduce_studies.sh) refuse a summary that would
-- change, print what changes and why, keep the file's bytes and exit 3 (the loop: 1, with
-- the list of studies), and write it with --update (UPDATE=1).  changes.describe names
-- the reasons it can tell: another record set, tasks the records were never scored on,
-- task files changed since, a changed study file, the library since the commit named.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"
local changes = require "repro.analysis.changes"
local t = check.new("test_update")

local repro = os.getenv("REPRO") or "bin/repro"
local tmp = check.tmpdir()
local file, out_root = tmp .. "/zz_update.lua", tmp .. "/out"
-- the summaries' updates do not depend on the corpus: a small one (check.small_corpus)
local corpus = check.small_corpus(tmp .. "/corpus.txt")
local summary_path = out_root .. "/zz_update/summary.json"

local function study(seeds)
  check.write(file, string.format([[
return {
  name = "zz_update",
  description = "Does dropout change validation loss (a tiny check of summary updates)?",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 2, iters = 4,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "nodrop" }, { name = "drop01", dropout = 0.1 } },
  seeds = { %s },
  analysis = { baseline = "nodrop", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.02, alpha = 0.05, correction = "holm",
    resamples = 200, test = "t" },
}
]], corpus, seeds))
end

local function cmd(verb, extra)
  return check.run(string.format("cd %s && %s %s %s --out-root %s %s", fs.quote(host.root),
    repro, verb, fs.quote(file), fs.quote(out_root), extra or ""))
end

-- the first summary: no --update needed
study("1, 2")
local code, out, err = cmd("run")
t:eq(code, 0, "the first run writes its summary without --update: " .. err)
local first = fs.read(summary_path)
t:ok(first and first:find('"records_sha256"', 1, true), "summary.json written")

-- the same summary again: no change, exit 0, same bytes
code, out, err = cmd("analyze")
t:eq(code, 0, "analyze of an unchanged study: " .. err)
t:eq(fs.read(summary_path), first, "an identical summary is no change")
t:ok(not err:find("would change", 1, true), "and nothing is said about a change")

-- analyze of a summary on disk that differs (an older library's verdict): refused
-- (the verdict of summary.verdicts, the decision's: a robust companion's leave-one-seed-out
-- verdicts come earlier in the file)
local edited = first:gsub('("verdicts": %[%s*{[^}]-"verdict": )"%a+"', '%1"worse"', 1)
t:ok(edited ~= first, "the summary edited as an older library would have written it")
fs.write_atomic(summary_path, edited)
code, out, err = cmd("analyze")
t:eq(code, 3, "analyze refuses to rewrite a summary that would change: " .. err)
t:eq(fs.read(summary_path), edited, "the summary on disk keeps its bytes")
t:ok(err:find("would change; not written", 1, true), "it says the summary would change")
t:ok(err:find("verdict of drop01 vs nodrop on val_loss: worse -> ", 1, true),
  "it names the verdict that changes, in words: " .. err)
t:ok(err:find("why: the same records and study file", 1, true),
  "and why: the same records, so the analysis: " .. err)
t:ok(err:find("--update", 1, true) and err:find("bin/repro analyze " .. file, 1, true),
  "and the command that writes it")
t:ok(out:find("summary: not written", 1, true), "stdout says it was not written: " .. out)
code, out, err = cmd("analyze", "--update")
t:eq(code, 0, "analyze --update writes it: " .. err)
t:eq(fs.read(summary_path), first, "the summary written is the recomputed one")
t:ok(err:find("updated (--update); what changed", 1, true), "and says what changed: " .. err)

-- run: a third seed trains two runs; the new summary is refused, the records kept
study("1, 2, 3")
code, out, err = cmd("run")
t:eq(code, 3, "run refuses to rewrite the summary after training new seeds: " .. err)
t:eq(fs.read(summary_path), first, "the old summary stays")
t:ok(fs.exists(out_root .. "/zz_update/drop01/seed-3/metrics.json"), "the new runs are kept")
t:ok(err:find("why: a different record set", 1, true), "why: another record set: " .. err)
t:ok(err:find("variant drop01: runs 2 -> 3 (seeds 1,2 -> 1,2,3)", 1, true),
  "the runs and seeds per variant that change: " .. err)
t:ok(err:find("the study changed: its seeds differ", 1, true), "the study's seeds changed")

-- make reproduce's loop: fails with the list of studies; UPDATE=1 writes
local function loop(update)
  return check.run(string.format("cd %s && REPRO=%s STUDY_DIR=%s UPDATE=%s " ..
    "scripts/reproduce_studies.sh zz_update -- --out-root %s", fs.quote(host.root), repro,
    fs.quote(tmp), update, fs.quote(out_root)))
end
code, out, err = loop("")
t:eq(code, 1, "make reproduce's loop fails when a summary would change: " .. err)
t:ok(err:find("would change, and were not written: zz_update", 1, true) and
  err:find("make reproduce UPDATE=1", 1, true), "naming the study and the way to pass: " .. err)
t:eq(fs.read(summary_path), first, "and writes nothing")
code, out, err = loop("1")
t:eq(code, 0, "UPDATE=1 passes: " .. err)
local third = fs.read(summary_path)
t:ok(third ~= first and third:find('"seeds": [1, 2, 3]', 1, true) ~= nil or
  (third ~= first and json.decode(third).seeds[3] == 3), "and writes the new summary")
code, out, err = loop("")
t:eq(code, 0, "then the loop passes without UPDATE: nothing changes: " .. err)

-- changes.describe: the reasons it tells apart
local old = json.decode(third)
local function text(x) return json.encode(x) end
t:eq(changes.describe(third, third), nil, "the same bytes: no change")
local new = json.decode(third)
new.analysis.min_effect = 0.05
local lines = table.concat(changes.describe(text(old), text(new)) or {}, "\n")
t:ok(lines:find("the study changed: its analysis differs", 1, true),
  "a changed pre-registered analysis is named: " .. lines)
-- an interaction over several set-ups (each side a list of pairs) is named by its names
local o4, n4 = json.decode(third), json.decode(third)
o4.interactions = { { a = { { "A-ln", "A-none" }, { "B-ln", "B-none" } },
  b = { { "C-ln", "C-none" } }, metric = "val_loss", verdict = "inconclusive" } }
n4.interactions = {}
lines = table.concat(changes.describe(text(o4), text(n4)) or {}, "\n")
t:ok(lines:find("interaction ((A-ln - A-none), (B-ln - B-none)) minus ((C-ln - C-none)) on " ..
  "val_loss (inconclusive): no longer in the summary", 1, true) and not lines:find("table: "),
  "an interaction of several pairs is named by its variants: " .. lines)
-- tasks the records were never scored on, and task files changed since
-- (a record of the study's record set: a variant and a seed of its summary)
local dir = tmp .. "/tasks_study"
local member = string.format("%s/%s/seed-%d", dir, old.variants[1].name,
  math.tointeger(old.seeds[1]))
fs.mkdir_p(member)
local task_file = tmp .. "/alpha-v1.jsonl"
check.write(task_file, "{}\n")
check.write(member .. "/manifest.json", json.encode({ task_files =
  { [task_file] = string.rep("0", 64) } }))
local o2, n2 = json.decode(third), json.decode(third)
o2.tasks = { suite = "core", per_task = { { task = "alpha", treatment = "b", baseline = "a",
  metric = "m", mean = 0.1 } } }
n2.tasks = { suite = "core", per_task = { { task = "alpha", treatment = "b", baseline = "a",
  metric = "m", mean = 0.1 }, { task = "zeta", treatment = "b", baseline = "a", metric = "m",
  mean = 0.2 } } }
lines = table.concat(changes.describe(text(o2), text(n2), { dir = dir }) or {}, "\n")
t:ok(lines:find("tasks new in the summary: zeta", 1, true), "a task new in the summary: " .. lines)
t:ok(lines:find("the records were never scored on zeta", 1, true),
  "whose records were never scored on it: " .. lines)
t:ok(lines:find("task files changed since the records were scored: " .. task_file, 1, true),
  "a task file whose SHA-256 is not the one the records name: " .. lines)
-- the library: the commit the study's manifest names
local n3 = json.decode(third)
n3.exploratory_note = "other words"
lines = table.concat(changes.describe(third, text(n3), { old_manifest =
  json.encode({ git_commit = "abcdef0123456789" }), commit = "99999999aaaa" }) or {}, "\n")
t:ok(lines:find("the library's analysis changed since the summary was written (by commit " ..
  "abcdef012345; this checkout: 99999999aaaa)", 1, true), "the library, by commit: " .. lines)
t:ok(lines:find("exploratory_note: new in the summary", 1, true), "the field that changes: " .. lines)


-- run-one (GNU parallel's path) and a Slurm submission never drop or rewrite a summary:
-- run-one of a run that was removed trains it and leaves summary.json's bytes; the
-- submission's analysis job takes --update only when the submission says it
do
  local before = fs.read(summary_path)
  t:ok(before ~= nil, "a summary on disk before run-one")
  check.rmtree(out_root .. "/zz_update/drop01/seed-1")
  local c2, _, e2 = cmd("run-one", "--only variant=drop01,seed=1")
  t:eq(c2, 0, "run-one retrains the removed run: " .. e2)
  t:eq(fs.read(summary_path), before, "run-one keeps summary.json's bytes")
  check.rmtree(out_root .. "/zz_update/drop01/seed-2") -- a run for the job array
  local c3, o3 = cmd("submit --slurm", "--dry-run")
  t:ok(c3 == 0 and o3:find("repro analyze", 1, true) and not o3:find("--update", 1, true),
    "a submission's analysis job without --update: " .. o3:sub(-600))
  local c4, o4 = cmd("submit --slurm", "--dry-run --update")
  t:ok(c4 == 0 and o4:find("repro analyze [^\n]*%-%-update"), "with --update, its analysis " ..
    "job writes a changed summary: " .. o4:sub(-600))
end

check.rmtree(tmp)
t:done()
