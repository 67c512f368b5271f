-- The task stage (lua/repro/tasks, lua/tasks/, engine/tasks.h from Lua): every generator
-- on a second small corpus this test writes, deterministic builds, balanced answer
-- positions, a built version never rewritten (the same bytes a no-op, other bytes refused
-- writing nothing), the bad inputs (refused, naming file and item, writing nothing), a planted
-- task a trained tiny model must get right, an untrained model at chance, permutation
-- invariance, identical scores at 1 and 2 threads, and the config key's record.
local check = require "check"
check.data_anywhere() -- its corpus is a temporary file outside data/
local engine = require "engine"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local pcg = require "pcg"
local proc = require "repro.proc"
local tasks = require "repro.tasks"
local items = tasks.items
local t = check.new("test_tasks")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
proc.setenv("REPRO_TASKS", dir .. "/tasks")

-- A second corpus: dialogue in the format "NAME:\nline\nline\n\n", pronouns with the
-- verb forms they take, words from the dictionary with skewed frequencies.
local function write_corpus(path)
  local dict = {}
  for w in (fs.read(tasks.DICTIONARY, 64 * 1024 * 1024) or ""):gmatch("[^\n]+") do
    if w:match("^%l+$") and #w >= 3 and #w <= 8 then dict[#dict + 1] = w end
  end
  local r = pcg.new(7, 1)
  local vocab = {}
  for i = 1, 300 do vocab[i] = dict[r:bounded(#dict) + 1] end
  local names = { "ROSA", "MILO", "AGATHA", "BRUNO", "CLEON" }
  local subj = { { "thou", "art" }, { "thou", "hast" }, { "he", "hath" }, { "she", "is" },
    { "we", "are" }, { "you", "are" }, { "they", "have" }, { "I", "am" }, { "he", "doth" },
    { "thou", "dost" }, { "it", "is" }, { "I", "have" } }
  local function word()
    local u = r:uniform()
    return vocab[math.floor(u * u * #vocab) + 1]
  end
  local function cap(s) return s:sub(1, 1):upper() .. s:sub(2) end
  local out, who = {}, 1
  while #table.concat(out) < 160000 do
    who = (who + r:bounded(#names - 1)) % #names + 1
    out[#out + 1] = names[who] .. ":\n"
    for _ = 1, 1 + r:bounded(3) do
      local s = subj[r:bounded(#subj) + 1]
      local line = { s[1] == "I" and "I" or cap(s[1]), s[2], word(), word() }
      if r:bounded(2) == 0 then
        local s2 = subj[r:bounded(#subj) + 1]
        line[#line + 1] = "and " .. s2[1] .. " " .. s2[2]
      end
      line[#line + 1] = word()
      line[#line + 1] = word()
      local how = r:bounded(4)
      if how == 0 then line[1] = cap(word()) end
      if how == 1 then line[1] = word() end -- a line that goes on a sentence
      if r:bounded(3) == 0 then line[#line + 1] = word() .. ". " .. cap(word()) end
      out[#out + 1] = table.concat(line, " ") .. (r:bounded(2) == 0 and ".\n" or ",\n")
    end
    out[#out + 1] = "\n"
  end
  fs.write_atomic(path, table.concat(out))
end

local corpus = dir .. "/minidialog.txt"
write_corpus(corpus)

-- 1. Every generator on the second corpus, twice: the same bytes, balanced positions.
local built, sums = {}, {}
for _, task in ipairs(tasks.suite("core")) do
  local r = tasks.build(corpus, task)
  built[task] = r
  t:ok(not r.skipped, task .. " builds on the second corpus: " .. tostring(r.skipped))
  if not r.skipped then
    sums[task] = fs.sha256(r.file) .. fs.sha256(r.pool_file)
    local lo, hi = math.huge, 0
    for _, c in pairs(r.positions) do lo, hi = math.min(lo, c), math.max(hi, c) end
    t:ok(hi - lo <= 1, task .. ": answer positions balanced " .. table.concat(r.positions, "/"))
    t:ok(#items.read(r.file) == r.n_items, task .. ": its file reads back")
  end
end
for _, task in ipairs(tasks.suite("core")) do
  local r = tasks.build(corpus, task)
  if sums[task] then
    t:eq(fs.sha256(r.file) .. fs.sha256(r.pool_file), sums[task], task .. ": same bytes twice")
  end
end
-- `tasks build`: one file of the suite's version changed refuses the whole build, naming
-- it, and writes nothing (not even a file that is missing); the same bytes are a no-op
do
  local core_dir = tasks.dir_of(corpus)
  local order_file = tasks.files(core_dir, "order")
  local completion, completion_pool = tasks.files(core_dir, "completion")
  local order_text = fs.read(order_file)
  check.write(order_file, order_text .. "\n")
  os.remove(completion_pool)
  local c, _, e = check.run(repro .. " tasks build core --data " .. corpus)
  t:ok(c == 1 and e:find(fs.shown(order_file) .. " (other bytes)", 1, true) and
    e:find("bump the version instead", 1, true) and e:find("nothing was written", 1, true),
    "tasks build: a changed file of a built version is refused, naming it: " .. e)
  t:ok(not fs.exists(completion_pool), "tasks build: a refused build writes nothing")
  check.write(order_file, order_text)
  c, _, e = check.run(repro .. " tasks build core --data " .. corpus)
  t:ok(c == 0 and fs.sha256(completion) .. fs.sha256(completion_pool) == sums.completion and
    fs.read(order_file) == order_text, "tasks build: the same bytes, the missing file " ..
    "written again: " .. e)
end
-- the items come from the validation split: every context ends inside its text
local text = fs.read(corpus)
local val = text:sub(#text * 9 // 10 + 1)
local inside = true
for _, it in ipairs(items.read(built.order.file)) do
  inside = inside and val:find(it.context:sub(-40), 1, true) ~= nil
end
t:ok(inside, "order's contexts are validation text")

-- 1b. The committed task files rebuilding byte for byte: tests/lua/test_task_rebuild.lua
-- (a file of its own: it runs beside this one, and make test-asan leaves it out when the
-- files it keeps run every C line it runs).

-- 2. Bad inputs: named, and nothing written.
local function file_with(name, lines)
  local p = dir .. "/" .. name
  local f = io.open(p, "wb")
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  return p
end
local good = '{"answer":0,"choices":["a","b"],"context":"xy"}'
local cases = {
  { { good, '{"choices":["a","b"],"context":"xy"}' }, "item 2 (line 2): no answer" },
  { { '{"answer":2,"choices":["a","b"],"context":"xy"}' }, "answer 2 out of range" },
  { { '{"answer":0,"choices":["a",""],"context":"xy"}' }, "choice 2: a non-empty string" },
  { { '{"answer":0,"choices":["a","a"],"context":"xy"}' }, "choice 2 duplicates choice 1" },
  { { '{"answer":0,"choices":["a","b"],"context":"' .. ("x"):rep(65537) .. '"}' },
    "longer than any window" },
  { { good, '{"answer":0,"choices":["a","b\255"],"context":"xy"}' }, "item 2 (line 2): not UTF-8" },
  { { good, "{not json" }, "item 2 (line 2): not JSON" },
  { { '{"answer":0,"choices":["a","b","c","d","e"],"context":"xy"}' }, "2 to 4 strings" },
}
for i, c in ipairs(cases) do
  local p = file_with("bad" .. i .. ".jsonl", c[1])
  t:raises(function() items.read(p) end, "task file " .. p .. ": ", "bad file " .. i .. " named")
  t:raises(function() items.read(p) end, c[2], "bad file " .. i .. ": " .. c[2])
end
local big = {}
for i = 1, 1000000 do big[i] = "x" end
local pbig = file_with("big.jsonl", big)
t:raises(function() items.read(pbig) end, "1000000 items, more than the 10000",
  "a task file of 10^6 items refused before parsing")
-- a generator asking for the training split, and one returning a bad item
local function gen(name, src)
  local p = dir .. "/" .. name .. ".lua"
  fs.write_atomic(p, src)
  return p
end
local tdir = dir .. "/badtasks"
t:raises(function()
  tasks.build(corpus, "peek", { dir = tdir, generator = gen("peek",
    'local s = repro.text("train") return { items = {} }') })
end, "reads the validation split only", "a generator reading the training split is refused")
t:raises(function()
  tasks.build(corpus, "empty", { dir = tdir, generator = gen("empty",
    'return { items = { { context = "a", answer = "b", distractors = { "b" } } } }') })
end, "generated item 1: choice 2 duplicates choice 1", "a generated duplicate choice is named")
t:ok(not fs.exists(tdir), "the refused builds wrote nothing")
local few = tasks.build(corpus, "few", { dir = tdir, generator = gen("few",
  'return { items = { { context = "a", answer = "b", distractors = { "c" } } } }') })
t:ok(few.skipped and few.skipped:find("1 distinct items", 1, true), "too few items: skipped " ..
  "with the count: " .. tostring(few.skipped))
t:raises(function() tasks.suite("nosuch") end, 'unknown suite "nosuch"', "unknown suite")
-- a skipped task leaves its marker (the reason) and no items; a suite on the corpus is its
-- other tasks, the skip listed and its marker's SHA-256 among the files a run records; a
-- task neither built nor skipped is refused, and so is a suite with every task skipped
t:eq(fs.read(tasks.skip_file(tdir, "few")), few.skipped .. "\n", "the skip marker says why")
t:ok(not fs.exists((tasks.files(tdir, "few"))), "a skipped task has no items file")
tasks.build(corpus, "order", { dir = tdir })
tasks.SUITES.planted = { "few", "order" }
local loaded = tasks.load(corpus, "planted", { dir = tdir })
t:ok(#loaded.tasks == 1 and loaded.tasks[1].task == "order" and #loaded.skipped == 1 and
  loaded.skipped[1].task == "few", "a suite with a skipped task loads its other tasks")
local marked = false
for f in pairs(loaded.files) do marked = marked or f:find("few%-v%d+%.skipped$") ~= nil end
t:ok(marked, "the skip marker is among the files a run records")
tasks.SUITES.planted = { "few", "order", "absent" }
t:raises(function() tasks.load(corpus, "planted", { dir = tdir }) end, "absent-v1.jsonl is missing",
  "a task neither built nor skipped is refused")
tasks.SUITES.planted = { "few" }
t:raises(function() tasks.load(corpus, "planted", { dir = tdir }) end,
  "every task was skipped on corpus minidialog", "a suite with every task skipped is refused")
tasks.SUITES.planted = nil
-- a built version is never rewritten: the same bytes again are a no-op; a changed
-- generator (here one with enough items, which would remove the marker) is refused,
-- naming the file, and writes nothing; as a new version it builds, without a marker
local marker_before = fs.read(tasks.skip_file(tdir, "few"))
tasks.build(corpus, "few", { dir = tdir, generator = dir .. "/few.lua" })
t:eq(fs.read(tasks.skip_file(tdir, "few")), marker_before, "the same build again: a no-op")
local items40 = {}
for i = 1, 60 do
  items40[i] = string.format('{ context = "c%d ", answer = "a%d", distractors = { "b%d" } }', i, i, i)
end
local few2 = gen("few2", "return { items = { " .. table.concat(items40, ", ") .. " } }")
t:raises(function() tasks.build(corpus, "few", { dir = tdir, generator = few2 }) end,
  fs.shown(tasks.skip_file(tdir, "few")) .. " (would be removed)",
  "a changed build of a built version is refused, naming the file")
t:ok(fs.read(tasks.skip_file(tdir, "few")) == marker_before and
  not fs.exists((tasks.files(tdir, "few"))), "and nothing was written")
local rebuilt = tasks.build(corpus, "few", { dir = tdir, generator = few2, version = 2 })
t:ok(not rebuilt.skipped and not fs.exists(tasks.skip_file(tdir, "few", 2)) and
  fs.exists(rebuilt.file), "as version 2 it builds: its items and no marker")
local order_file = tasks.files(tdir, "order")
local order_text = fs.read(order_file)
check.write(order_file, order_text:gsub("\n$", "\n\n"))
t:raises(function() tasks.build(corpus, "order", { dir = tdir }) end,
  fs.shown(order_file) .. " (other bytes); bump the version instead",
  "an items file with other bytes is never rewritten")
check.write(order_file, order_text)

-- 3. A planted task: the answer is the most frequent character after the context's last
-- character in the training split, the distractor the least frequent one seen there.
local train = text:sub(1, #text * 9 // 10)
local next_count = {}
for i = 1, #train - 1 do
  local a, b = train:sub(i, i), train:sub(i + 1, i + 1)
  next_count[a] = next_count[a] or {}
  next_count[a][b] = (next_count[a][b] or 0) + 1
end
local planted, r = {}, pcg.new(11, 2)
while #planted < 200 do
  local p = 40 + r:bounded(#val - 80)
  local ctx = val:sub(p - 30, p)
  local counts, best, worst = next_count[ctx:sub(-1)] or {}, nil, nil
  local keys = {}
  for k in pairs(counts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if not best or counts[k] > counts[best] then best = k end
    if not worst or counts[k] < counts[worst] then worst = k end
  end
  if best and worst and best ~= worst and counts[best] >= 5 * counts[worst] then
    local at = #planted % 2
    local ch = at == 0 and { best, worst } or { worst, best }
    planted[#planted + 1] = { context = ctx, choices = ch, answer = at }
  end
end
local planted_set = { { name = "planted", task = "planted", items = planted, pool = {}, shots = 0 } }
local tiny = { data = corpus, n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 8,
  iters = 150, warmup = 10, lr = 3e-3, min_lr = 3e-4, seed = 3, threads = 1 }
local m = engine.train(tiny, { tasks = planted_set })
t:ok(m.tasks and m.tasks[1].acc >= 0.9, string.format("planted most-frequent-next-character " ..
  "task >= 0.9 after training: %s", m.tasks and m.tasks[1].acc or "none"))
local u = engine.score_tasks(tiny, planted_set)
t:ok(u[1].acc < 0.9, string.format("... and not before (untrained %.3f)", u[1].acc))

-- a kept model: a run stopped at step 100 keeps its checkpoint, which scores later as
-- the trained model did; another run's checkpoint is refused
local ckpt = dir .. "/kept.rptf"
local planted_file = dir .. "/planted.jsonl"
fs.write_atomic(planted_file, items.encode(planted))
local kept = engine.train(tiny, { checkpoint = ckpt, config_id = "kept-run", tasks = planted_set,
  on_step = function(step) return step + 1 >= 100 end })
t:ok(kept.stopped and fs.exists(ckpt), "the stopped run kept its checkpoint")
local later = tasks.score_file(tiny, planted_file, { checkpoint = ckpt, config_id = "kept-run",
  shots = { 0 } })
t:ok(later[1].acc > u[1].acc and later[1].sha256 == fs.sha256(planted_file), string.format(
  "a kept model scores a task file later: %.3f (untrained %.3f)", later[1].acc, u[1].acc))
t:raises(function() tasks.score_file(tiny, planted_file, { checkpoint = ckpt,
  config_id = "another-run", shots = { 0 } }) end, "checkpoint", "another run's checkpoint refused")

-- 4. The untrained model at chance on every built task (the controls), and the bigram.
local setups = { { name = "tiny", cfg = { n_layer = 1, d_model = 32, n_head = 2, context = 64 } },
  { name = "tiny_torch", cfg = { n_layer = 1, d_model = 32, n_head = 2, context = 64,
    init = "torch" } } }
local ctl = tasks.controls(corpus, "core", { setups = setups })
for _, task in ipairs(tasks.suite("core")) do
  local c = ctl.tasks[task]
  for _, s in ipairs(setups) do
    local un = c.untrained[s.name]
    t:ok(un.within, string.format("%s: untrained %s accuracy %.3f within [%.3f, %.3f]", task,
      s.name, un.acc, c.chance_lo, c.chance_hi))
  end
  t:ok(c.bigram_acc >= 0 and c.bigram_acc <= 1, task .. ": bigram accuracy measured")
end
t:ok(ctl.tasks.agreement.bigram_acc > 0.5, "agreement: the bigram model sees the verb forms")
-- the n-gram ladder: one entry per order of NGRAM_LADDER, its best the strongest, the
-- Witten-Bell bigram scoring the same choices as the engine's ngram = 2 on the same sets
for _, task in ipairs(tasks.suite("core")) do
  local c = ctl.tasks[task]
  local orders, best = {}, -1
  for _, g in ipairs(c.ngram or {}) do
    orders[#orders + 1] = g.order
    best = math.max(best, g.acc)
    t:ok(g.within == (g.acc >= c.chance_lo and g.acc <= c.chance_hi), task .. ": within as measured")
  end
  t:eq(table.concat(orders, ","), table.concat(tasks.NGRAM_LADDER, ","), task .. ": the ladder's orders")
  t:ok(c.ngram_best and c.ngram_best.acc == best, task .. ": ngram_best is the strongest order")
end
do
  local l0 = tasks.load(corpus, "core", { shots = { 0 } })
  local r5 = engine.score_tasks({ data = corpus, seed = tasks.CONTROL_SEED }, l0.sets, { ngram = 5 })
  for i, s in ipairs(l0.sets) do
    t:eq(ctl.tasks[s.task].ngram[3].acc, r5[i].acc, s.task .. ": the 5-gram row is the engine's")
  end
  t:raises(function() engine.score_tasks({ data = corpus }, l0.sets, { ngram = 8 }) end,
    "order in 1..7", "an n-gram order above 7 refused")
  -- the spelling task's misspellings are rarely seen in training: the 5-gram solves it
  t:ok(ctl.tasks.spelling.ngram_best.acc > ctl.tasks.spelling.chance_hi,
    "spelling: the 5-gram lies above guessing")
end
local progress = {}
tasks.controls(corpus, "core", { setups = { setups[1] }, tasks = { "order" }, ladder = { 2 },
  progress = function(what, i, n) progress[#progress + 1] = string.format("%s %d/%d", what, i, n) end })
t:eq(table.concat(progress, "; "), "add-one bigram 1/4; 2-gram 2/4; 3-shot demonstrations " ..
  "kept 3/4; untrained tiny 4/4", "controls report each pass")
-- the test corpus's contexts are long: at the default window few 3-shot items keep their
-- demonstrations, and the share is what the engine's scoring counts
do
  local d = ctl.tasks.order.demos_kept and ctl.tasks.order.demos_kept[1]
  local l3 = tasks.load(corpus, "core", { shots = { 3 } })
  local s3
  for _, s in ipairs(l3.sets) do if s.task == "order" then s3 = s end end
  -- (a 1-block model at the default window: which demonstrations fit depends on the
  -- window alone, and the default 8 blocks cost 40 s of make test-asan here)
  local r3 = engine.score_tasks({ data = corpus, seed = tasks.CONTROL_SEED, n_layer = 1,
    d_model = 32, n_head = 2 }, { s3 })
  t:ok(d and d.shots == 3 and d.kept_share == 1 - r3[1].lost_demos / #s3.items and
    d.kept_share < 0.9, "order: the 3-shot kept share, as the model's scoring counts it")
end

-- 4b. The v2 suite (core2) on the second corpus: each task built or skipped with its
-- reason; in the paired tasks each string is the answer as often as the distractor; the
-- in-context task recall is at chance for every control, the n-gram ladder included.
local v2 = {}
for _, task in ipairs(tasks.suite("core2")) do
  v2[task] = tasks.build(corpus, task, { version = tasks.suite_version("core2") })
  t:ok(v2[task].skipped or fs.exists(v2[task].file), "core2: " .. task .. " built or skipped")
end
t:ok(tasks.generator_path("agreement", 2):find("agreement%-v2%.lua$") and
  tasks.generator_path("order", 2):find("/order%.lua$"), "a v2 generator where there is one")
for _, task in ipairs({ "recall", "capital", "agreement" }) do
  if not v2[task].skipped then
    local bal, n = {}, 0
    for _, f in ipairs({ v2[task].file, v2[task].pool_file }) do
      for _, it in ipairs(items.read(f)) do
        for j, ch in ipairs(it.choices) do
          bal[ch] = (bal[ch] or 0) + (j - 1 == it.answer and 1 or -1)
        end
        n = n + 1
      end
    end
    local off = 0
    for _, d in pairs(bal) do if d ~= 0 then off = off + 1 end end
    t:ok(n > 0 and (task ~= "recall" or off == 0),
      string.format("core2 %s: %d items, %d strings unbalanced", task, n, off))
  end
end
local ctl2 = tasks.controls(corpus, "core2", { setups = setups, tasks = { "recall" } })
local rc = ctl2.tasks.recall
t:ok(rc.untrained.tiny.within and rc.untrained.tiny_torch.within,
  "recall: the untrained models at chance")
local inside = 0
for _, g in ipairs(rc.ngram) do if g.within then inside = inside + 1 end end
t:eq(inside, #tasks.NGRAM_LADDER, "recall: every n-gram of the ladder inside the guessing interval")

-- 5. Permuting the choices changes no correctness; 1 and 2 threads give the same bits.
local loaded = tasks.load(corpus, "core", { shots = { 0 } })
local perm_sets = {}
for i, s in ipairs(loaded.sets) do
  local its = {}
  for j, it in ipairs(s.items) do
    local n, ch = #it.choices, {}
    for k = 1, n do ch[k] = it.choices[n - k + 1] end
    its[j] = { context = it.context, choices = ch, answer = n - 1 - it.answer }
  end
  perm_sets[i] = { name = s.name, task = s.task, items = its, pool = s.pool, shots = 0 }
end
local cfg1 = { data = corpus, n_layer = 1, d_model = 32, n_head = 2, context = 64, threads = 1 }
local a = engine.score_tasks(cfg1, loaded.sets)
local b = engine.score_tasks(cfg1, perm_sets)
cfg1.threads = 2
local c2 = engine.score_tasks(cfg1, loaded.sets)
for i, s in ipairs(loaded.sets) do
  t:eq(table.concat(b[i].correct, ""), table.concat(a[i].correct, ""), s.task ..
    ": reversed choices, the same items right")
  local same = true
  for j = 1, #a[i].loglik do
    for k = 1, #a[i].loglik[j] do same = same and a[i].loglik[j][k] == c2[i].loglik[j][k] end
  end
  t:ok(same, s.task .. ": 1 and 2 threads, the same log-likelihoods")
end

-- 6. The config key: omittable, and a record with it carries metrics, tasks.csv and the
-- task files' hashes.
local args = "n_layer=1 d_model=16 n_head=2 context=32 batch=4 iters=4 warmup=1 data=" .. corpus
local code, _, err = check.run(repro .. " train " .. args .. " --out " .. dir .. "/plain")
t:eq(code, 0, "train without tasks: " .. err)
t:ok(not fs.read(dir .. "/plain/config.json"):find('"tasks"'), "absent key: not in config.json")
t:ok(not fs.exists(dir .. "/plain/tasks.csv"), "no tasks.csv without the key")
code, _, err = check.run(repro .. " train " .. args .. " tasks=core --out " .. dir .. "/with")
t:eq(code, 0, "train with tasks=core: " .. err)
local mj = json.decode(fs.read(dir .. "/with/metrics.json") or "{}")
local man = json.decode(fs.read(dir .. "/with/manifest.json") or "{}")
t:ok(type(mj.task_macro_acc_0shot) == "number" and type(mj.task_spelling_0shot_acc) == "number"
  and type(mj.task_order_3shot_lost_demos) == "number", "metrics.json has the task metrics")
t:ok(man.sha256 and man.sha256["tasks.csv"] == fs.sha256(dir .. "/with/tasks.csv"),
  "tasks.csv is in the manifest's checksums")
local nfiles = 0
for _ in pairs(man.task_files or {}) do nfiles = nfiles + 1 end
t:eq(nfiles, 12, "the manifest names the 6 task files and their pools with their SHA-256")
local csv = fs.read(dir .. "/with/tasks.csv") or ""
t:eq(select(2, csv:gsub("\n", "")), 1 + 2 * (function()
  local n = 0
  for _, s in ipairs(loaded.sets) do n = n + #s.items end
  return n
end)(), "tasks.csv: a row per item and shot count")
local f = io.open(dir .. "/with/tasks.csv", "ab")
f:write("x\n")
f:close()
code = check.run(repro .. " verify " .. dir .. "/with")
t:ok(code ~= 0, "a changed tasks.csv fails verify")
code, _, err = check.run(repro .. " train " .. args .. " tasks=nosuch --out " .. dir .. "/bad")
t:ok(code ~= 0 and err:find("unknown suite", 1, true), "an unknown suite is refused: " .. err)

-- 7. A tiny study with the suite: summary.tasks holds the macro accuracy's paired
-- bootstrap, per-task Holm over tasks x comparisons and the item-level sign flip.
check.write(dir .. "/zz_tasks.lua", string.format([[
return {
  name = "zz_tasks",
  description = "tiny",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 32, batch = 4, iters = 20,
    warmup = 2, data = %q, tasks = "core" },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2, 3 },
  analysis = { baseline = "none", metrics = { "task_macro_acc_0shot", "val_loss" },
    primary = "task_macro_acc_0shot", better = "higher", min_effect = 0.02, alpha = 0.05,
    correction = "holm", resamples = 1000, test = "t", tasks = { suite = "core",
    shots = { 0, 3 } } },
}
]], corpus))
-- the suite's controls, committed beside its task files as `bin/repro tasks controls` does
fs.write_atomic(tasks.controls_path(corpus, "core"), json.pretty(ctl))
code, _, err = check.run(repro .. " run " .. dir .. "/zz_tasks.lua --out-root " .. dir ..
  "/exp --jobs 2")
t:eq(code, 0, "the tiny task study runs: " .. err)
local sum = json.decode(fs.read(dir .. "/exp/zz_tasks/summary.json") or "{}")
local st = sum.tasks or {}
t:eq(#(st.macro or {}), 2, "summary.tasks.macro: one comparison x 2 shot counts")
t:ok(st.macro and st.macro[1] and st.macro[1].ci_bca ~= nil or st.macro and st.macro[1] and
  st.macro[1].ci_percentile ~= nil, "macro accuracy has a paired bootstrap interval")
t:eq(#(st.per_task or {}), 12, "summary.tasks.per_task: 6 tasks x 2 shot counts")
t:ok(st.per_task and st.per_task[1] and st.per_task[1].holm_m == 6 and
  type(st.per_task[1].p_holm) == "number", "per-task Holm over the 6 tasks x 1 comparison")
t:eq(#(st.items or {}), 14, "summary.tasks.items: per task and all, x 2 shot counts")
local all0
for _, e in ipairs(st.items or {}) do if e.task == "all" and e.shots == 0 then all0 = e end end
t:ok(all0 and all0.n_items == (function()
  local n = 0
  for _, s in ipairs(loaded.sets) do n = n + #s.items end
  return n
end)() and type(all0.p_signflip) == "number", "the item-level sign flip over every item")

t:ok(st.chance and st.chance.order and st.chance.order.rate == 0.5 and st.chance.order.hi > 0.5,
  "summary.tasks.chance: each task's chance rate and interval")
-- the ladder in the summary: per task its orders and strongest, and which variants beat it
local sp = st.chance and st.chance.spelling or {}
t:ok(sp.ngram and #sp.ngram == #tasks.NGRAM_LADDER and sp.ngram_best and
  sp.ngram_best.acc == ctl.tasks.spelling.ngram_best.acc, "summary.tasks.chance: the n-gram ladder")
local function mean0(v, task)
  local x = sum.per_variant[v].metrics[string.format("task_%s_0shot_acc", task)]
  return x and x.mean
end
local agree = 0
for task, b in pairs(st.beyond_ngram or {}) do
  for _, v in ipairs({ "none", "layernorm" }) do
    local listed = false
    for _, x in ipairs(b.variants) do listed = listed or x == v end
    if listed == (mean0(v, task) > math.max(b.acc, st.chance[task].hi)) and
        b.threshold == math.max(b.acc, st.chance[task].hi) then
      agree = agree + 1
    end
  end
end
t:eq(agree, 12, "beyond_ngram lists exactly the variants whose mean beats the strongest " ..
  "n-gram and guessing")
-- the study's own report: a per-task table per shot count, chance and bigram beside
local tables = require("repro.report.study_tables").tables({ name = "zz_tasks", summary = sum })
local t0
for _, tb in ipairs(tables) do if tb.title == "Tasks, 0-shot accuracy" then t0 = tb end end
t:ok(t0 and #t0.rows == 7 and t0.rows[7][1] == "macro" and t0.head[2] == "chance" and
  t0.head[3] == "bigram", "the report's 0-shot task table: 6 tasks and the macro row")
t:ok(t0 and t0.head[4] == "best n-gram" and t0.rows[2][4] ==
  string.format("%.4g (%d-gram)", sp.ngram_best.acc, sp.ngram_best.order) or false,
  "the report's task table names the strongest n-gram: " .. tostring(t0 and t0.rows[2][4]))

-- and its figure's data: a block per variant, chance and bigram per task
local study = require("repro.report.data").load_study(dir .. "/exp", "zz_tasks", nil, nil,
  { studies = dir })
local text, marks, _, ntasks = require("repro.report.plot_data").tasks(study, 0)
t:ok(text and ntasks == 6 and select(2, text:gsub("# x mean sd", "")) == 2 and
  select(2, marks:gsub("\n", "")) == 7, "the task figure's data: 2 variants x 6 tasks, marks")
-- the macro states what it averages
t:ok(st.macro_over and st.macro_over.n == 6 and #st.macro_over.skipped == 0,
  "summary.tasks.macro_over: the 6 tasks the macro averages, none skipped")
t:ok(t0 and t0.note:find("The macro row averages 6 tasks.", 1, true), "the report says so")
local fake = { tasks = { shots = { 0 }, per_task = {}, macro = {}, macro_over = { n = 5,
  tasks = {}, skipped = { { task = "speaker", why = "12 distinct items" } } } },
  variants = {}, per_variant = {} }
local ft = require("repro.report.study_tables").tables({ name = "fake", summary = fake })
local fnote = ""
for _, tb in ipairs(ft) do if tb.title == "Tasks, 0-shot accuracy" then fnote = tb.note end end
t:ok(fnote:find("averages 5 tasks (skipped on this corpus: speaker, 12 distinct items)", 1,
  true), "a skipped task is named beside the macro: " .. fnote)
-- few-shot measured honestly: at a 32-character window no 3-shot item keeps its
-- demonstrations, so every task's 3-shot number is "not measurable at this window"
local demos, lost_all = st.demos or {}, 0
for _, d in ipairs(demos) do
  if d.shots == 3 and d.kept_share == 0 and d.measurable == false then lost_all = lost_all + 1 end
end
t:eq(#demos, 6, "summary.tasks.demos: per task at 3 shots")
t:eq(lost_all, 6, "every task's items lost their demonstrations at a 32-character window")
local t3
for _, tb in ipairs(tables) do if tb.title == "Tasks, 3-shot accuracy" then t3 = tb end end
-- the first variant's column, found by its header (the controls' columns come before it)
local vcol
for i, h in ipairs(t3 and t3.head or {}) do
  if not vcol and h == sum.variants[1].name then vcol = i end
end
t:ok(t3 and vcol and t3.rows[1][vcol] == "not measurable at this window" and
  t3.rows[7][vcol] == "not measurable at this window" and t0.rows[1][vcol] ~= t3.rows[1][vcol],
  "the report's 3-shot table says not measurable, for tasks and macro; the 0-shot one has numbers")
local tex3 = require("repro.report.tex_tasks").accuracy_table(study, nil, { shots = 3 })
t:ok(tex3:find("n.m. &", 1, true) and tex3:find("not measurable at this window", 1, true) and
  not tex3:find("%d %$\\pm%$"), "the 3-shot accuracy table: n.m. cells, no macro number, the note")
-- the paper's task table: a row per rung of the ladder, its footnote, the stars
local tex = require("repro.report.tex_tasks").accuracy_table(study, nil, { shots = 0 })
t:ok(tex:find("5-gram (Witten-Bell)", 1, true) and tex:find("strongest $n$-gram and the guessing", 1, true),
  "the accuracy table shows the ladder and says what its star means")

-- 8. run --dry-run refuses a study whose corpus lacks the suite's task files, naming the
-- build command for that corpus (not the default one), and the real run refuses too
local other = dir .. "/other.txt"
check.write(other, fs.read(corpus))
check.write(dir .. "/zz_other.lua", (fs.read(dir .. "/zz_tasks.lua"):gsub("zz_tasks", "zz_other")
  :gsub(corpus:gsub("%p", "%%%0"), other)))
local out
code, out, err = check.run(repro .. " run " .. dir .. "/zz_other.lua --dry-run --out-root " ..
  dir .. "/exp")
t:ok(code ~= 0 and out:find("other-v1.jsonl", 1, true) == nil and
  out:find("tasks/other/completion-v1.jsonl is missing", 1, true) and
  out:find("bin/repro tasks build core --data " .. other, 1, true),
  "dry run: the missing task file and the build command for the study's corpus: " .. out .. err)
code, out, err = check.run(repro .. " run " .. dir .. "/zz_other.lua --out-root " .. dir .. "/exp")
t:ok(code ~= 0 and err:find("bin/repro tasks build core --data " .. other, 1, true) and
  not fs.exists(dir .. "/exp/zz_other/none"), "the real run refuses before training: " .. err)

-- A study on two corpora: each run's 3-shot kept share is counted against its own
-- corpus's items (Tiny Shakespeare's 87 recur items, the Devil's Dictionary's own count),
-- never the first corpus's: with the first's, a corpus with more items gave a negative share
-- (kjv's 156 recur items over Tiny Shakespeare's 87: -0.79 in make reproduce QUICK=1).
do
  local atasks = require "repro.analysis.tasks"
  proc.setenv("REPRO_TASKS", require("repro.host").root .. "/tasks") -- the committed files
  local corpora = { ts = "data/tinyshakespeare.txt", dv = "data/devil.txt" }
  local n_of = {}
  for v, d in pairs(corpora) do
    n_of[v] = {}
    for _, x in ipairs(tasks.load(require("repro.host").root .. "/" .. d, "core2", { shots = { 0 },
        missing_ok = true }).tasks) do
      n_of[v][x.task] = x.n_items
    end
  end
  local function run(v, seed, lose)
    local values = {}
    for task, n in pairs(n_of[v]) do
      values["task_" .. task .. "_0shot_acc"] = 0.5
      values["task_" .. task .. "_3shot_acc"] = 0.5
      values["task_" .. task .. "_3shot_lost_demos"] = lose and n or 0
    end
    values.task_macro_acc_0shot, values.task_macro_acc_3shot = 0.5, 0.5
    return { variant = v, seed = seed, cfg = { data = corpora[v] }, values = values }
  end
  local runs, by = {}, { ts = {}, dv = {} }
  for _, v in ipairs({ "ts", "dv" }) do
    for seed = 1, 2 do
      local r = run(v, seed, v == "dv")
      runs[#runs + 1], by[v][seed] = r, r
    end
  end
  local out = atasks.summarize({ an = { alpha = 0.05, comparisons = {},
      tasks = { suite = "core2", shots = { 0, 3 } } },
    s = { runs = runs, variants = { { name = "ts" }, { name = "dv" } }, seeds = { 1, 2 } },
    runs = by })
  local least, n = math.huge, 0
  for _, d in ipairs(out.demos or {}) do
    n = n + 1
    if d.kept_share < least then least = d.kept_share end
  end
  t:ok(n > 0 and least == 0, "two corpora: the devil runs lost every demonstration, " ..
    "kept share 0 (not negative): least " .. tostring(least) .. " over " .. n .. " tasks")
  t:ok(n_of.dv.agreement ~= n_of.ts.agreement, "the corpora's agreement items differ: " ..
    tostring(n_of.dv.agreement) .. " and " .. tostring(n_of.ts.agreement))
  proc.setenv("REPRO_TASKS", dir .. "/tasks")
end

-- 9. A record whose task file changed since it was scored is stale: verify names it (and
-- fails), analyze lists it as not done with the file, run --dry-run plans it again, eval
-- --tasks refuses to compare its scores, and run trains it again, its old files kept aside.
do
  local kept = dir .. "/kept"
  local c, o, e = check.run(repro .. " train " .. args .. " tasks=core --out " .. kept ..
    " --keep-model")
  t:eq(c, 0, "a kept model scored on the suite: " .. e)
  local order_file = tasks.files(tasks.dir_of(corpus), "order")
  local order_text = fs.read(order_file)
  local first, rest = order_text:match("^([^\n]*\n)([^\n]*\n)")
  check.write(order_file, rest .. first .. order_text:sub(#first + #rest + 1))
  local named = fs.relative_to_root(order_file)
  c, o, e = check.run(repro .. " verify " .. dir .. "/exp/zz_tasks")
  t:ok(c == 1 and o:find("STALE", 1, true) and o:find(named .. " (SHA-256 ", 1, true) and
    o:find("6 stale", 1, true), "verify names a stale record and its task file: " .. o .. e)
  c, o, e = check.run(repro .. " analyze " .. dir .. "/zz_tasks.lua --out-root " .. dir .. "/exp")
  t:ok(c == 1 and (o .. e):find("scored on task files that changed since: " .. named, 1, true)
    and (o .. e):find("6 of its 6 runs not done", 1, true),
    "analyze lists the stale runs as not done, naming the file: " .. o .. e)
  c, o, e = check.run(repro .. " run " .. dir .. "/zz_tasks.lua --dry-run --out-root " ..
    dir .. "/exp")
  t:ok(c == 0 and o:find("retrain none/seed-1", 1, true) and o:find("6 to train", 1, true),
    "run --dry-run plans the stale runs again: " .. o .. e)
  c, o, e = check.run(repro .. " eval " .. kept .. " --tasks core")
  t:ok(c == 1 and e:find(named .. " (SHA-256 ", 1, true) and
    e:find("its task scores are not these files'", 1, true),
    "eval --tasks refuses a stale record's scores, naming the file: " .. e)
  -- compare and export mark the stale records' task metrics, in one wording
  local stale_mark = dir .. "/exp/zz_tasks/none/seed-1: STALE: scored on task files that " ..
    "changed since: " .. named .. " (SHA-256 "
  c, o, e = check.run(repro .. " compare zz_tasks --metrics task_macro_acc_0shot --csv " ..
    "--out-root " .. dir .. "/exp")
  t:ok(c == 0 and e:find("repro compare: " .. stale_mark, 1, true) and
    o:match("^[^\n]*,stale,not_measurable\n") and select(2, o:gsub(",3,\n", "")) == 2,
    "compare marks each stale run and counts them per row: " .. o .. e)
  c, o, e = check.run(repro .. " audit zz_tasks --sample 1 --seed 3 --out-root " .. dir .. "/exp")
  t:ok(c == 1 and o:find("\nSTALE    " .. dir .. "/exp/zz_tasks/", 1, true) and
    o:find(": scored on task files that changed since: " .. named, 1, true) and
    o:find("audit: 0 runs retrained: 0 the same, 0 differ; 1 stale, not retrained", 1, true),
    "audit names a stale record as stale, not as forged, and trains nothing: " .. o .. e)
  c, o, e = check.run(repro .. " export zz_tasks --out-root " .. dir .. "/exp")
  t:ok(c == 0 and e:find("repro export: " .. stale_mark, 1, true) and
    o:find("^study,variant,seed,run,provenance,stale,") and select(2, o:gsub(",made_here,true,", "")) == 6,
    "export marks each stale run in its column stale: " .. o:sub(1, 300) .. e)
  local before = fs.read(dir .. "/exp/zz_tasks/none/seed-1/metrics.json")
  c, o, e = check.run(repro .. " run " .. dir .. "/zz_tasks.lua --only variant=none,seed=1 " ..
    "--out-root " .. dir .. "/exp")
  local aside
  for _, n in ipairs(require("repro.sys").listdir(dir .. "/exp/zz_tasks/none/seed-1") or {}) do
    if n:match("^stale%-") then aside = dir .. "/exp/zz_tasks/none/seed-1/" .. n end
  end
  t:ok((c == 0 or c == 3) and (o .. e):find("1 retrained on changed task files", 1, true) and
    aside and fs.read(aside .. "/metrics.json") == before,
    "run trains a stale run again, its old files kept in stale-<time>/: " .. o .. e)
  c, o = check.run(repro .. " verify " .. dir .. "/exp/zz_tasks/none/seed-1")
  t:ok(c == 0 and not o:find("STALE", 1, true), "the run trained again is current: " .. o)
  check.write(order_file, order_text)
end

check.rmtree(dir)
t:done()
