-- A user's own task and suite, outside the library (lua/repro/tasks/init.lua: _suites/
-- and _generators/ under the task files' root, here $REPRO_TASKS in a temporary folder):
-- `bin/repro tasks new` writes a working template and the suite file, `tasks build` and
-- `tasks controls` use them, a tiny study names the suite and runs, and no file of the
-- project changes.  A missing task file for the study's corpus is refused by run
-- --dry-run with the build command for that corpus.  The study keeps its models, and `eval
-- RUN --tasks mine` scores one again on the user's suite, as the run did.
local check = require "check"
check.data_anywhere() -- its corpus is a temporary file outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local pcg = require "pcg"
local proc = require "repro.proc"
local tasks = require "repro.tasks"
local t = check.new("test_user_tasks")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
proc.setenv("REPRO_TASKS", dir .. "/tasks")

local function status_of_project()
  local _, out = check.run("git status --porcelain --untracked-files=all")
  return out
end
local before = status_of_project()

-- a corpus of dictionary words in lines
local dict = {}
for w in (fs.read(tasks.DICTIONARY, 64 * 1024 * 1024) or ""):gmatch("[^\n]+") do
  if w:match("^%l+$") and #w >= 4 and #w <= 8 then dict[#dict + 1] = w end
end
local r = pcg.new(5, 2)
local lines = {}
while #table.concat(lines) < 120000 do
  local l = {}
  for _ = 1, 6 + r:bounded(5) do l[#l + 1] = dict[r:bounded(400) + 1] end
  lines[#lines + 1] = table.concat(l, " ") .. ".\n"
end
local corpus = dir .. "/words.txt"
fs.write_atomic(corpus, table.concat(lines))

local code, out, err = check.run(repro .. " tasks new mytask --suite mine")
t:eq(code, 0, "tasks new: " .. err)
t:ok(fs.exists(dir .. "/tasks/_generators/mytask.lua") and
  fs.exists(dir .. "/tasks/_suites/mine.lua") and out:find("tasks build mine", 1, true),
  "the template generator and the suite file written, the next steps said: " .. out)
code, _, err = check.run(repro .. " tasks new mytask --suite mine")
t:ok(code ~= 0 and err:find("exists: nothing written", 1, true), "never overwrites: " .. err)
code, _, err = check.run(repro .. " tasks new order")
t:ok(code ~= 0 and err:find("a task of the library", 1, true), "a library task's name refused")
code, _, err = check.run(repro .. " tasks new '../x'")
t:ok(code ~= 0 and err:find("a task name", 1, true), "a path refused as a name: " .. err)

code, out, err = check.run(repro .. " tasks build mine --data " .. corpus)
t:ok(code == 0 and out:find("mytask%s+%d+ items"), "tasks build mine: " .. out .. err)
t:ok(fs.exists(dir .. "/tasks/words/mytask-v1.jsonl"), "the user task's file, by corpus")
code, out, err = check.run(repro .. " tasks controls mine --data " .. corpus)
local ctl = json.decode(fs.read(dir .. "/tasks/words/mine-controls-v1.json") or "{}")
local c = (ctl.tasks or {}).mytask or {}
t:ok(code == 0 and c.untrained and c.ngram and #c.ngram == 3, "its controls: " .. out .. err)
-- the controls of a version are never rewritten: the same bytes again are a no-op; other
-- bytes are refused, naming the file and the next version, and nothing is written
local ctl_file = dir .. "/tasks/words/mine-controls-v1.json"
local ctl_text = fs.read(ctl_file)
code, out, err = check.run(repro .. " tasks controls mine --data " .. corpus)
t:ok(code == 0 and fs.read(ctl_file) == ctl_text, "tasks controls again: the same bytes, a no-op: " .. err)
check.write(ctl_file, ctl_text .. "\n")
code, out, err = check.run(repro .. " tasks controls mine --data " .. corpus)
t:ok(code == 1 and err:find(fs.shown(ctl_file) .. " (other bytes); bump the version instead " ..
  "(give suite mine its next version, 2,", 1, true) and err:find("nothing was written", 1, true),
  "tasks controls refuses to rewrite a version's controls, as tasks build does: " .. err)
t:eq(fs.read(ctl_file), ctl_text .. "\n", "and writes nothing")
check.write(ctl_file, ctl_text)

-- a tiny study naming the suite, without any library edit
check.write(dir .. "/zz_mine.lua", string.format([[
return {
  name = "zz_mine",
  description = "tiny",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 32, batch = 4, iters = 10,
    warmup = 2, data = %q, tasks = "mine" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  keep_model = true,
  analysis = { baseline = "none", metrics = { "task_macro_acc_0shot", "task_mytask_0shot_acc",
      "val_loss" }, primary = "task_macro_acc_0shot", better = "higher", min_effect = 0.02,
    alpha = 0.05, correction = "holm", resamples = 1000, test = "t",
    tasks = { suite = "mine", shots = { 0 } } },
}
]], corpus))
code, out, err = check.run(repro .. " run " .. dir .. "/zz_mine.lua --out-root " .. dir ..
  "/exp")
t:eq(code, 0, "the tiny study with the user's suite runs: " .. err)
local sum = json.decode(fs.read(dir .. "/exp/zz_mine/summary.json") or "{}")
local st = sum.tasks or {}
t:ok(st.suite == "mine" and st.macro_over and st.macro_over.n == 1 and
  st.macro_over.tasks[1] == "mytask", "summary.tasks: the macro over the user's one task")
local man = json.decode(fs.read(dir .. "/exp/zz_mine/none/seed-1/manifest.json") or "{}")
local named = false
for f in pairs(man.task_files or {}) do named = named or f:find("mytask%-v1%.jsonl$") ~= nil end
t:ok(named, "the run's manifest names the user's task file with its SHA-256")
-- the kept model scored again on the user's suite, from outside the library
local run1 = dir .. "/exp/zz_mine/layernorm/seed-1"
t:ok(fs.exists(run1 .. "/model.rptf"), "the study kept its models (keep_model = true)")
code, out, err = check.run(repro .. " eval " .. run1 .. " --tasks mine --json")
local ev = code == 0 and json.decode(out) or {}
local m1 = json.decode(fs.read(run1 .. "/metrics.json") or "{}")
t:ok(ev.agrees == true and type(ev.metrics) == "table" and
  ev.metrics.task_mytask_0shot_acc == m1.task_mytask_0shot_acc and
  m1.task_mytask_0shot_acc ~= nil, "eval --tasks mine scores the kept model as the run did: " ..
  tostring(ev.metrics and ev.metrics.task_mytask_0shot_acc) .. " vs " ..
  tostring(m1.task_mytask_0shot_acc) .. " " .. err)
t:eq(status_of_project(), before, "no file of the project changed")

-- the study on a corpus without the task files: refused by the dry run, with the command
local other = dir .. "/words2.txt"
fs.write_atomic(other, fs.read(corpus))
check.write(dir .. "/zz_mine2.lua", (fs.read(dir .. "/zz_mine.lua"):gsub("zz_mine", "zz_mine2")
  :gsub("words%.txt", "words2.txt")))
code, out = check.run(repro .. " run " .. dir .. "/zz_mine2.lua --dry-run --out-root " ..
  dir .. "/exp")
t:ok(code ~= 0 and out:find("bin/repro tasks build mine --data " .. other, 1, true),
  "dry run: refused, with the build command for the study's corpus: " .. out)

-- trust: a suite file that is a symbolic link, and a suite that is not a list of names
os.execute("ln -s " .. dir .. "/tasks/_suites/mine.lua " .. dir .. "/tasks/_suites/linked.lua")
t:raises(function() tasks.suite("linked") end, "link", "a linked suite file refused")
check.write(dir .. "/tasks/_suites/bad.lua", "return { version = 1, '../x' }")
t:raises(function() tasks.suite("bad") end, "entry 1 is not a task name", "a bad entry refused")
check.write(dir .. "/tasks/_suites/evil.lua", "return { os.exit(3) }")
t:raises(function() tasks.suite("evil") end, "failed", "a suite is data: no os in the sandbox")

check.rmtree(dir)
t:done()
