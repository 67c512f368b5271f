-- The task stage (`repro.tasks`): multiple-choice tasks built from a corpus's held-out
-- text, written once to versioned files, and read back as the engine scores them.
-- A task is a generator file, lua/tasks/<task>.lua: data, evaluated in the study sandbox
-- and limits, with these host functions: repro.text("validation") (the validation split;
-- any other is refused), repro.train_counts(list) (each string's occurrences in the
-- training split; at most TRAIN_COUNTS_MAX strings per generator run, each of at most
-- TRAIN_COUNT_BYTES bytes), repro.dictionary() (the lowercase words of
-- /usr/share/dict/american-english) and repro.draws(n, bound) (PCG32 draws on the task's
-- stream: its only randomness).  It returns { items = { {context =, answer = "...",
-- distractors = {...}}, ... } }, or { skip = "why" }; distractors keep the answer's
-- length.  The host checks the items, skips a task with fewer than MIN_ITEMS, and writes
-- tasks/<corpus>/<task>-v<VERSION>.jsonl (test items) and .pool.jsonl (demonstrations),
-- committed and cited by SHA-256.  A suite (SUITES) names tasks; the config key `tasks`
-- names a suite.
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local host = require "repro.host"
local sandbox = require "repro.sandbox"
local pcg = require "pcg"
local items = require "repro.tasks.items"
local engine = require "engine"
local json = require "repro.core.json"

local M = {}
M.VERSION = 1
M.SEED = 37
M.MIN_ITEMS = 40
M.MAX_ITEMS = 500
M.MAX_POOL = 50
M.POOL_FRACTION = 0.2
M.SHOTS = { 0, 3 }
M.DICTIONARY = "/usr/share/dict/american-english"
-- repro.train_counts' bound (the header): strings per generator run, bytes per string.
-- The agreement task asks for 391 strings of at most 12 bytes.
M.TRAIN_COUNTS_MAX = 1024
M.TRAIN_COUNT_BYTES = 24
-- A suite lists its tasks; its `version` (default 1) names the task files it reads
-- (<task>-v<version>.jsonl) and the generators that build them (lua/tasks/<task>-v<version>.lua
-- when there is one, else lua/tasks/<task>.lua).  v1 stays as the records that used it
-- name it.
M.SUITES = {
  core = { "completion", "spelling", "order", "agreement", "speaker", "capital" },
  -- Agreement over more verb pairs, capital balanced per word, speaker retired
  -- (lua/tasks/speaker.lua says why), two in-context tasks no fixed-order n-gram solves
  core2 = { version = 2, "completion", "spelling", "order", "agreement", "capital", "recall",
    "recur" },
}
-- The n-gram ladder of the controls (engine/ngram.h, Witten-Bell on the training split):
-- a task is evidence of more than local statistics only where a trained model beats the
-- strongest of these.
M.NGRAM_LADDER = { 2, 3, 5 }
M.items = items

local user_error, need = base.user_error, base.need

-- The sandbox's limits (a copy, which a test may tighten).
M.LIMITS = {}
for k, v in pairs(sandbox.LIMITS) do M.LIMITS[k] = v end

-- A user's own tasks, outside the library (no library file edited): under the task
-- files' root (M.root(): tasks/ of the project, $REPRO_TASKS in the tests),
--   _suites/<suite>.lua          a suite: a Lua chunk evaluated as data in the sandbox,
--                                returning { version = N (default 1), "task", ... }
--   _generators/<task>.lua       a generator, as lua/tasks/<task>.lua (also
--                                <task>-v<N>.lua for a later version)
-- A study names such a suite by its config key `tasks` like a library one.  As with
-- extensions (lua/repro/core/extension.lua) the places are fixed by the project, never
-- by the file that names them: only a valid name (letters, digits, "_", ".", "-") of a
-- regular file directly in those folders, no symbolic link on the path
-- (fs.check_path); a library suite or task of the same name wins.  Both are data:
-- evaluated in the study sandbox with its limits, never run as host code.  A folder name
-- starting with "_" is no corpus's (a corpus's name starts with a letter or digit).
M.USER_SUITES, M.USER_GENERATORS = "_suites", "_generators"

local user_suite_cache = {}

-- The user suite `name` as {version =, tasks...}, or nil when there is none.
local function user_suite(name)
  if not base.valid_name(name) then return nil end
  local path = string.format("%s/%s/%s.lua", M.root(), M.USER_SUITES, name)
  if user_suite_cache[path] then return user_suite_cache[path] end
  if not fs.exists(path) then return nil end
  fs.check_path(path, "task suite")
  local src, err = fs.read(path, 64 * 1024)
  if not src then user_error("tasks: suite %s: %s: %s", name, fs.shown(path), tostring(err)) end
  local ok, value, msg = sandbox.eval(src, "@" .. path, M.LIMITS, {})
  need(ok, "tasks: suite %s: %s failed (%s): %s", name, fs.shown(path), value, tostring(msg))
  local list = {}
  for i, t in ipairs(type(value) == "table" and value or {}) do
    need(base.valid_name(t), "tasks: suite %s: %s: entry %d is not a task name", name,
      fs.shown(path), i)
    list[i] = t
  end
  list.version = type(value) == "table" and value.version or 1
  need(#list > 0 and math.type(list.version) == "integer" and list.version >= 1,
    "tasks: suite %s: %s must return { version = N (an integer >= 1, default 1), \"task\", " ..
    "... } with at least one task", name, fs.shown(path))
  user_suite_cache[path] = list
  return list
end

-- The suite `name`: a library one (SUITES) or a user's; nil when neither.
function M.find_suite(name)
  return M.SUITES[name] or user_suite(name)
end

-- The version of a suite's task files (its `version`, default 1).
function M.suite_version(name)
  local s = M.find_suite(name)
  return s and s.version or 1
end

function M.generator_path(task, version)
  version = version or 1
  local function pick(dir)
    local versioned = string.format("%s/%s-v%d.lua", dir, task, version)
    if version > 1 and fs.exists(versioned) then return versioned end
    local plain = string.format("%s/%s.lua", dir, task)
    return fs.exists(plain) and plain or nil
  end
  local lib = host.root .. "/lua/tasks"
  local found = pick(lib)
  local user = not found and base.valid_name(task) and pick(M.root() .. "/" .. M.USER_GENERATORS)
  if user then return fs.check_path(user, "task generator") end
  return found or string.format("%s/%s.lua", lib, task)
end

-- The suite's task names, or a user error naming the suite.
function M.suite(name)
  return need(M.find_suite(name), "tasks: unknown suite %q (known: %s; a suite of your own " ..
    "is %s/%s/<name>.lua)", tostring(name), table.concat(base.sorted_keys(M.SUITES), ", "),
    fs.shown(M.root()), M.USER_SUITES)
end

-- The corpus's name: its file name without the extension.
function M.corpus_name(data)
  local name = data:match("([^/]+)$"):gsub("%.[^.]*$", "")
  need(base.valid_name(name), "tasks: corpus %s: its name %q is not a valid name", data, name)
  return name
end

-- The task files' root: $REPRO_TASKS (tests), else tasks/ of the project.
function M.root()
  local env = os.getenv("REPRO_TASKS")
  if env and env ~= "" then return env end
  return host.root .. "/tasks"
end

function M.dir_of(data)
  return string.format("%s/%s", M.root(), M.corpus_name(data))
end

function M.files(dir, task, version)
  local stem = string.format("%s/%s-v%d", dir, task, version or M.VERSION)
  return stem .. ".jsonl", stem .. ".pool.jsonl"
end

-- The marker a build leaves for a task it skipped on this corpus (too few items): the
-- reason, one line.  A suite on the corpus is then its other tasks (M.load).
function M.skip_file(dir, task, version)
  return string.format("%s/%s-v%d.skipped", dir, task, version or M.VERSION)
end

local function split_text(data)
  local text, err = fs.read(data, 256 * 1024 * 1024)
  if not text then user_error("tasks: corpus %s: %s", data, tostring(err)) end
  local n_train = #text * 9 // 10
  return text:sub(1, n_train), text:sub(n_train + 1)
end

local function stream_of(task)
  local h = 0
  for i = 1, #task do h = (h * 31 + task:byte(i)) % 2147483647 end
  return h
end

-- A host function's refusal of a generator's arguments: the error of fmt, in the sandbox.
local function refuse_unless(ok, fmt, ...)
  if not ok then error(string.format(fmt, ...), 0) end
end

-- The host functions of a generator of `task` on the splits train and val.
local function api_for(task, train, val)
  local rng = pcg.new(M.SEED, stream_of(task))
  local asked = 0 -- strings counted so far (M.TRAIN_COUNTS_MAX)
  return {
    text = function(split)
      refuse_unless(split == "validation", "task %s asked for the %s split: a task generator " ..
        "reads the validation split only (repro.train_counts gives the training split's " ..
        "counts)", task, tostring(split))
      return val
    end,
    train_counts = function(list)
      refuse_unless(type(list) == "table", "train_counts: a list of strings expected")
      local out = {}
      refuse_unless(asked + #list <= M.TRAIN_COUNTS_MAX, "train_counts: task %s asks for the " ..
        "counts of %d strings, more than the %d a generator may ask in all (repro.tasks " ..
        "TRAIN_COUNTS_MAX: each count tells something of the training text)", task,
        asked + #list, M.TRAIN_COUNTS_MAX)
      for i, s in ipairs(list) do
        refuse_unless(type(s) == "string" and s ~= "",
          "train_counts: item %d is not a non-empty string", i)
        refuse_unless(#s <= M.TRAIN_COUNT_BYTES, "train_counts: item %d has %d bytes, more " ..
          "than the %d a counted string may have (repro.tasks TRAIN_COUNT_BYTES)", i, #s,
          M.TRAIN_COUNT_BYTES)
        local n, at = 0, train:find(s, 1, true)
        while at do n, at = n + 1, train:find(s, at + #s, true) end
        out[i] = n
      end
      asked = asked + #list
      return out
    end,
    dictionary = function()
      local text = fs.read(M.DICTIONARY, 64 * 1024 * 1024)
      refuse_unless(text, "%s is missing: run scripts/deps.sh (Debian's wamerican)", M.DICTIONARY)
      local words = {}
      for w in text:gmatch("[^\n]+") do
        if w:match("^%l+$") then words[#words + 1] = w end
      end
      return words
    end,
    draws = function(n, bound)
      refuse_unless(math.type(n) == "integer" and math.type(bound) == "integer" and n >= 0 and
        bound >= 1, "draws: a count >= 0 and a bound >= 1 expected")
      local out = {}
      for i = 1, n do out[i] = rng:bounded(bound) end
      return out
    end,
  }
end

-- Runs the generator of `task` on corpus `data`: its raw result, or a user error.
local function generate(task, train, val, gen_path)
  local src, err = fs.read(gen_path, 1024 * 1024)
  if not src then user_error("task %s: generator %s: %s", task, gen_path, tostring(err)) end
  local ok, value, msg = sandbox.eval(src, "@" .. gen_path, M.LIMITS, api_for(task, train, val))
  need(ok, "task %s: generator %s failed (%s): %s", task, fs.shown(gen_path), value,
    tostring(msg))
  need(type(value) == "table" and (value.skip ~= nil or type(value.items) == "table"),
    "task %s: generator %s returns neither {items = ...} nor {skip = ...}", task,
    fs.shown(gen_path))
  return value
end

local function permutation(rng, n)
  local p = {}
  for i = 1, n do p[i] = i end
  for i = 1, n - 1 do
    local j = i + rng:bounded(n - i + 1)
    p[i], p[j] = p[j], p[i]
  end
  return p
end

-- The answers' positions of items (a count per position) and their mean chance rate.
local function tally(list)
  local positions, chance = {}, 0
  for _, it in ipairs(list) do
    positions[it.answer + 1] = (positions[it.answer + 1] or 0) + 1
    chance = chance + 1 / #it.choices
  end
  return positions, chance / #list
end

-- Items with balanced answer positions: item i's answer at (i - 1) mod n.
local function place(raw_list)
  local out = {}
  for i, r in ipairs(raw_list) do
    local at = (i - 1) % (#r.distractors + 1)
    local choices = table.move(r.distractors, 1, at, 1, {})
    choices[at + 1] = r.answer
    table.move(r.distractors, at + 1, #r.distractors, at + 2, choices)
    out[i] = { context = r.context, choices = choices, answer = at }
  end
  return out
end

-- What building one task on corpus `data` into dir (default tasks/<corpus>/ of the
-- project) at opts.version (default 1) gives, nothing written: {task =, version =, dir =,
-- skipped = why | nil, n_items =, n_pool =, chance =, positions = {...}, file =,
-- pool_file =, writes = {{path, text}, ...}, removes = {path, ...}}; a user error when an
-- item does not check.  A skipped task has its marker (the reason) and no items; a built
-- one its items and pool and no marker.
function M.plan_build(data, task, opts)
  opts = opts or {}
  local version = opts.version or M.VERSION
  local dir = opts.dir or M.dir_of(data)
  local train, val = split_text(data)
  local value = generate(task, train, val, opts.generator or M.generator_path(task, version))
  local file, pool_file = M.files(dir, task, version)
  local marker = M.skip_file(dir, task, version)
  local function skip(why)
    return { task = task, version = version, dir = dir, skipped = why,
      writes = { { marker, why .. "\n" } }, removes = { file, pool_file } }
  end
  if value.skip ~= nil then return skip(tostring(value.skip)) end
  local raw, seen = {}, {}
  for i, r in ipairs(value.items) do
    local why = "{context =, answer = string, distractors = {...}} expected"
    if type(r) == "table" and type(r.answer) == "string" and type(r.distractors) == "table" then
      local choices = { r.answer }
      for _, d in ipairs(r.distractors) do choices[#choices + 1] = d end
      why = items.problem({ context = r.context, choices = choices, answer = 0 })
    end
    need(not why, "task %s: generated item %d: %s", task, i, why)
    local key = r.context .. "\0" .. r.answer .. "\0" .. table.concat(r.distractors, "\0")
    if not seen[key] then
      seen[key] = true
      raw[#raw + 1] = r
    end
  end
  if #raw < M.MIN_ITEMS then
    return skip(string.format("%d distinct items on corpus %s, fewer than the %d a task " ..
      "needs", #raw, M.corpus_name(data), M.MIN_ITEMS))
  end
  local order = permutation(pcg.new(M.SEED, stream_of(task) + 1), #raw)
  local n_pool = math.min(M.MAX_POOL, math.floor(#raw * M.POOL_FRACTION))
  local pool, test = {}, {}
  for i = 1, math.min(#order, n_pool + M.MAX_ITEMS) do
    local list = i <= n_pool and pool or test
    list[#list + 1] = raw[order[i]]
  end
  test, pool = place(test), place(pool)
  local positions, chance = tally(test)
  return { task = task, version = version, dir = dir, n_items = #test, n_pool = #pool,
    chance = chance, positions = positions, file = file, pool_file = pool_file,
    writes = { { pool_file, items.encode(pool) }, { file, items.encode(test) } },
    removes = { marker } }
end

-- The files of a planned build (M.plan_build) that exist with other bytes than it gives,
-- or that it would remove: a list of "<path> (why)".
local function changed_by(b)
  local out = {}
  for _, w in ipairs(b.writes) do
    if sys.lstat(w[1]) then
      local have, err = fs.read(w[1], 64 * 1024 * 1024)
      if have ~= w[2] then
        out[#out + 1] = fs.shown(w[1]) .. (have and " (other bytes)" or
          (" (unreadable: " .. tostring(err) .. ")"))
      end
    end
  end
  for _, path in ipairs(b.removes) do
    if sys.lstat(path) then out[#out + 1] = fs.shown(path) .. " (would be removed)" end
  end
  return out
end

-- Writes the planned files of built versions, or none of them: a version, once built (a
-- task's files, a suite's controls), is never rewritten, since the records scored on it
-- name its files' SHA-256 (a record is stale once they change: lua/repro/record/) and the
-- summaries computed from it read it.  plans: {what = "<name> v<N>", writes = {{path,
-- text}, ...}, removes = {path, ...}, dir}; why: what changed when the bytes differ;
-- bump(plan): how to raise the version of the first plan refused.  A plan giving every
-- existing file its bytes writes only what is missing; one that would change or remove a
-- file is a user error naming each such file, and nothing is written.
function M.write_versions(plans, why, bump)
  local changed, first = {}, nil
  for i, b in ipairs(plans) do
    local c = changed_by(b)
    if #c > 0 then
      first = first or i
      changed[#changed + 1] = string.format("%s: %s", b.what, table.concat(c, ", "))
    end
  end
  if #changed > 0 then
    user_error("tasks: a built version is never rewritten (records scored on it name " ..
      "its files' SHA-256), and this gives other files than those on disk (%s): %s; bump " ..
      "the version instead (%s); nothing was written", why, table.concat(changed, "; "),
      bump(plans[first]))
  end
  for _, b in ipairs(plans) do
    for _, w in ipairs(b.writes) do
      if not sys.lstat(w[1]) then
        fs.mkdir_p(b.dir)
        fs.write_atomic(w[1], w[2])
      end
    end
  end
end

-- Writes planned builds (M.plan_build) through M.write_versions.
function M.write_builds(builds)
  for _, b in ipairs(builds) do b.what = string.format("%s v%d", b.task, b.version) end
  M.write_versions(builds, "the generator or the corpus changed", function(b)
    return string.format("write the changed generator as lua/tasks/%s-v%d.lua and run " ..
      "`bin/repro tasks build %s --version %d`", b.task, b.version + 1, b.task, b.version + 1)
  end)
end

-- Builds one task (M.plan_build, then M.write_builds): the plan's result.
function M.build(data, task, opts)
  local b = M.plan_build(data, task, opts)
  M.write_builds({ b })
  return b
end

-- The task sets of a suite on corpus `data` as engine.score_tasks takes them, one per
-- task and shot count, with each file's SHA-256: {sets = {...}, files = {path = sha},
-- tasks = {...}, skipped = {{task =, why =}, ...}}.  A task the build skipped on this
-- corpus (its marker, M.skip_file) is left out and listed in `skipped`; one whose files
-- are missing is skipped when opts.missing_ok, else refused; a suite with no task left is
-- refused.
function M.load(data, suite, opts)
  opts = opts or {}
  local dir = opts.dir or M.dir_of(data)
  local sets, files, tasks, skipped = {}, {}, {}, {}
  local version = M.suite_version(suite)
  for _, task in ipairs(M.suite(suite)) do
    local file, pool_file = M.files(dir, task, version)
    local skip_file = M.skip_file(dir, task, version)
    local marker = not fs.exists(file) and fs.read(skip_file)
    if marker then
      skipped[#skipped + 1] = { task = task, why = marker:gsub("\n$", "") }
      files[fs.relative_to_root(skip_file)] = fs.sha256(skip_file)
    elseif not fs.exists(file) then
      need(opts.missing_ok, "tasks: suite %s: %s is missing: run `bin/repro tasks build %s " ..
        "--data %s`", suite, fs.shown(file), suite, fs.shown(data))
    else
      local test, pool = items.read(file), items.read(pool_file)
      files[fs.relative_to_root(file)] = fs.sha256(file)
      files[fs.relative_to_root(pool_file)] = fs.sha256(pool_file)
      tasks[#tasks + 1] = { task = task, chance = select(2, tally(test)), n_items = #test }
      for _, k in ipairs(opts.shots or M.SHOTS) do
        if k <= #pool then
          sets[#sets + 1] = { name = task, task = task, shots = k, seed = M.SEED,
            items = test, pool = pool }
        end
      end
    end
  end
  if #tasks == 0 and #skipped > 0 and not opts.missing_ok then
    user_error("tasks: suite %s: every task was skipped on corpus %s (%s)", suite,
      M.corpus_name(data), skipped[1].why)
  end
  return { sets = sets, files = files, tasks = tasks, skipped = skipped }
end

-- The bytes of the corpus at path (the engine's vocabulary, engine/data.c: every distinct
-- byte of the whole file) as a Lua pattern matching a byte outside it, or "" when every
-- byte is in it; nil and why when the corpus cannot be read.  Cached per path.
local outside_cache = {}
function M.outside_vocab(path)
  if outside_cache[path] then return outside_cache[path] end
  local text, err = fs.read(path, 256 * 1024 * 1024)
  if not text then return nil, err end
  local absent = {}
  for b = 0, 255 do
    local c = string.char(b)
    if not text:find(c, 1, true) then
      absent[#absent + 1] = c:match("%w") and c or ("%" .. c)
    end
  end
  local pat = #absent > 0 and ("[" .. table.concat(absent) .. "]") or ""
  outside_cache[path] = pat
  return pat
end

-- nil, or why the model of cfg cannot score an item of its suite (config key `tasks`):
-- a byte of a context or a choice (of a test item or a demonstration) outside the
-- corpus's vocabulary, or a choice longer than the model's window (`context`), the
-- message naming the task file and the item (its line).  The same checks the engine
-- makes when it scores (engine/tasks.c), made when a study is planned so that `run
-- --dry-run` refuses before anything trains.  A task file that does not read
-- (items.read: not JSON, an answer not an integer in range) gives its own message; task
-- files not built yet are left to the run, which refuses them (M.load).
function M.fit_problem(cfg)
  if type(cfg.tasks) ~= "string" or cfg.tasks == "" or type(cfg.data) ~= "string" then
    return nil
  end
  if not M.SUITES[cfg.tasks] then return nil end -- engine.check names an unknown suite
  local data = cfg.data:sub(1, 1) == "/" and cfg.data or (host.root .. "/" .. cfg.data)
  local ok, suite = pcall(M.load, data, cfg.tasks, { missing_ok = true, shots = { 0 } })
  if not ok then
    return type(suite) == "table" and tostring(suite.message) or tostring(suite)
  end
  local pat = M.outside_vocab(data)
  if not pat then return nil end -- the engine's check of the corpus names it
  local dir, version = M.dir_of(data), M.suite_version(cfg.tasks)
  for _, set in ipairs(suite.sets) do
    local file, pool_file = M.files(dir, set.task, version)
    for _, part in ipairs({ { set.items, file }, { set.pool, pool_file } }) do
      for i, it in ipairs(part[1]) do
        local texts = { { it.context, "its context" } }
        for j, c in ipairs(it.choices) do texts[#texts + 1] = { c, "choice " .. (j - 1) } end
        for _, x in ipairs(texts) do
          local at = pat ~= "" and x[1]:find(pat)
          if at then
            return string.format("task file %s: item %d (line %d): %s holds byte 0x%02x, " ..
              "which is not in the vocabulary of corpus %s: the model cannot score it",
              fs.shown(part[2]), i, i, x[2], x[1]:byte(at), M.corpus_name(data))
          end
        end
        for j, c in ipairs(it.choices) do
          if #c > cfg.context then
            return string.format("task file %s: item %d (line %d): choice %d has %d bytes, " ..
              "more than the model's window (context = %d): it cannot be scored",
              fs.shown(part[2]), i, i, j - 1, #c, cfg.context)
          end
        end
      end
    end
  end
  return nil
end

-- Scores one task file (and its pool, for shots > 0) with the model of cfg: as
-- initialized, or with a run's weights (opts.checkpoint: a training checkpoint of cfg's
-- run, or its kept model model.rptf, engine/train.h; opts.config_id, the run's
-- metrics.json config_sha256, checks it is that run's; cfg is the run's config.json): a
-- list of engine.score_tasks results, one per shot count of opts.shots (default SHOTS),
-- each with its shots and the file's SHA-256.  An engine error (a file of another config,
-- a corpus that cannot be read) is a user error naming the file.
function M.score_file(cfg, file, opts)
  opts = opts or {}
  local test = items.read(file)
  local pool_file = file:gsub("%.jsonl$", ".pool.jsonl")
  local pool = fs.exists(pool_file) and items.read(pool_file) or {}
  local sets = {}
  for _, k in ipairs(opts.shots or M.SHOTS) do
    need(k <= #pool, "tasks: %s: %d-shot needs %d demonstrations, its pool has %d", file, k, k,
      #pool)
    sets[#sets + 1] = { name = file, shots = k, seed = M.SEED, items = test, pool = pool }
  end
  local ok, r = pcall(engine.score_tasks, cfg, sets, { checkpoint = opts.checkpoint,
    config_id = opts.config_id })
  if not ok then
    if type(r) == "string" and base.set_of(engine.error_kinds)[r:match("^(%a+): ")] then
      user_error("tasks: scoring %s: %s", file, r)
    end
    error(r, 0)
  end
  local sha = fs.sha256(file)
  for i, x in ipairs(r) do x.shots, x.sha256 = sets[i].shots, sha end
  return r
end

-- The validity controls' untrained models: the study's two set-ups (the final protocol,
-- GPT-2 init; the claim's, PyTorch init, 4 blocks, tied), at init seed CONTROL_SEED.
M.CONTROL_SETUPS = {
  { name = "gpt2", label = "GPT-2 init, 8 blocks", cfg = {} },
  { name = "torch_l4_tied", label = "PyTorch init, 4 blocks, tied",
    cfg = { init = "torch", n_layer = 4, tie_embeddings = true } },
}
M.CONTROL_SEED = 1
-- The two-sided 99 % normal quantile of the binomial interval around chance.
M.CONTROL_Z = 2.5758293035489

-- The interval [lo, hi] in which n items of mean chance rate p0 put a model that only
-- guesses, 99 % of the time (normal approximation of the binomial).
function M.chance_interval(p0, n)
  local h = M.CONTROL_Z * math.sqrt(p0 * (1 - p0) / n)
  return p0 - h, p0 + h
end

-- The validity controls of a built suite on corpus data, per task: chance rate, answer
-- positions, the add-one bigram model's accuracy (bigram_acc), the n-gram ladder's
-- (opts.ladder, default NGRAM_LADDER: `ngram`, per order its acc and acc_norm and whether
-- acc lies in the chance interval; `ngram_best`, the strongest order and its acc) and each
-- untrained set-up's (opts.setups, default CONTROL_SETUPS) zero-shot accuracy with the
-- chance interval and whether it lies inside: a task whose untrained accuracy lies
-- outside leaks its answer through something other than language (length, position, a
-- letter's bias); one the ladder solves measures local statistics; `demos_kept`, per shot
-- count k > 0, the share of items whose k demonstrations all fit the default window
-- (a k-shot number is measurable only at 90 % or more).  opts.tasks keeps only
-- those tasks; opts.progress(what, i, n) is called before each scoring pass.
function M.controls(data, suite, opts)
  opts = opts or {}
  local loaded = M.load(data, suite, { dir = opts.dir, shots = { 0 } })
  local keep = opts.tasks and base.set_of(opts.tasks)
  local ladder = opts.ladder or M.NGRAM_LADDER
  -- one zero-shot set per task (loaded.tasks[i] is loaded.sets[i]'s), of the tasks kept
  local out, sets = {}, {}
  for i, t in ipairs(loaded.tasks) do
    if not keep or keep[t.task] then
      local lo, hi = M.chance_interval(t.chance, t.n_items)
      out[t.task] = { chance = t.chance, n_items = t.n_items, chance_lo = lo, chance_hi = hi,
        positions = json.array((tally(loaded.sets[i].items))), untrained = {},
        ngram = #ladder > 0 and json.array({}) or nil }
      sets[#sets + 1] = loaded.sets[i]
    end
  end
  -- r's accuracies, and whether acc lies in task o's chance interval
  local function scored(o, r, entry)
    entry.acc, entry.acc_norm = r.acc, r.acc_norm
    entry.within = r.acc >= o.chance_lo and r.acc <= o.chance_hi
    return entry
  end
  -- The scoring passes, in order: what the progress names, the config (default the
  -- control seed's), the sets, how they are scored, and what task o keeps of result r.
  local base_cfg = { data = data, seed = M.CONTROL_SEED }
  local passes = { { what = "add-one bigram", sets = sets, how = { bigram = true },
    keep = function(o, r) o.bigram_acc = r.acc end } }
  for _, order in ipairs(ladder) do
    passes[#passes + 1] = { what = string.format("%d-gram", order), sets = sets,
      how = { ngram = order }, keep = function(o, r)
        o.ngram[#o.ngram + 1] = scored(o, r, { order = order })
        if not o.ngram_best or r.acc > o.ngram_best.acc then
          o.ngram_best = { order = order, acc = r.acc }
        end
      end }
  end
  -- per shot count k > 0, the share of items that keep all k demonstrations inside the
  -- window of the control set-ups (the default context): where it is below 90 % a k-shot
  -- number is not measurable (lua/repro/analysis/tasks.lua)
  for _, k in ipairs(M.SHOTS) do
    if k > 0 then
      local ksets = {}
      for _, s in ipairs(M.load(data, suite, { dir = opts.dir, shots = { k } }).sets) do
        if out[s.task] then ksets[#ksets + 1] = s end
      end
      passes[#passes + 1] = { what = string.format("%d-shot demonstrations kept", k),
        sets = ksets, how = { ngram = 2 }, keep = function(o, r, s)
          o.demos_kept = o.demos_kept or json.array({})
          o.demos_kept[#o.demos_kept + 1] = { shots = k,
            kept_share = 1 - r.lost_demos / #s.items }
        end }
    end
  end
  for _, setup in ipairs(opts.setups or M.CONTROL_SETUPS) do
    local cfg = { data = data, seed = M.CONTROL_SEED }
    for k, v in pairs(setup.cfg) do cfg[k] = v end
    passes[#passes + 1] = { what = "untrained " .. setup.name, cfg = cfg, sets = sets,
      keep = function(o, r) o.untrained[setup.name] = scored(o, r, {}) end }
  end
  for i, pass in ipairs(passes) do
    if opts.progress then opts.progress(pass.what, i, #passes) end
    local r = #pass.sets > 0 and engine.score_tasks(pass.cfg or base_cfg, pass.sets, pass.how)
      or {}
    for j, s in ipairs(pass.sets) do pass.keep(out[s.task], r[j], s) end
  end
  local skipped = #loaded.skipped > 0 and {} or nil
  for _, k in ipairs(loaded.skipped) do skipped[k.task] = k.why end
  return { suite = suite, corpus = M.corpus_name(data), version = M.suite_version(suite),
    control_seed = M.CONTROL_SEED, tasks = out, files = loaded.files, skipped = skipped }
end

function M.controls_path(data, suite, dir)
  return string.format("%s/%s-controls-v%d.json", dir or M.dir_of(data), suite,
    M.suite_version(suite))
end

-- Writes a suite's controls c (M.controls) to M.controls_path through M.write_versions:
-- the controls of a suite's version, once written, are never rewritten.
function M.write_controls(data, suite, c, dir)
  local path = M.controls_path(data, suite, dir)
  M.write_versions({ { what = string.format("%s controls v%d", suite, M.suite_version(suite)),
    writes = { { path, json.pretty(c) } }, removes = {}, dir = path:match("^(.*)/[^/]+$") } },
    "the task files, the scoring or the control set-ups changed", function()
      return string.format("give suite %s its next version, %d, and build its task files",
        suite, M.suite_version(suite) + 1)
    end)
  return path
end

-- Every task metric name a record may hold (M.metrics), for studies to name.
function M.metric_names()
  local suites = base.sorted_keys(M.SUITES)
  -- and the user's suites (their tasks' metrics are named like the library's)
  for _, e in ipairs(sys.listdir(M.root() .. "/" .. M.USER_SUITES) or {}) do
    local name = e:match("^(.+)%.lua$")
    local ok, found = pcall(user_suite, name or "")
    if ok and found and not M.SUITES[name] then suites[#suites + 1] = name end
  end
  table.sort(suites)
  local names, seen = {}, {}
  local function add(fmt, ...)
    local n = string.format(fmt, ...)
    if not seen[n] then names[#names + 1], seen[n] = n, true end
  end
  for _, k in ipairs(M.SHOTS) do
    add("task_macro_acc_%dshot", k)
    add("task_macro_acc_norm_%dshot", k)
    for _, suite in ipairs(suites) do
      for _, t in ipairs(M.find_suite(suite)) do
        for _, f in ipairs({ "acc", "acc_norm", "lost_demos" }) do
          add("task_%s_%dshot_%s", t, k, f)
        end
      end
    end
  end
  return names
end

-- The metrics.json fields of engine results for sets (M.load's): per task and shot
-- count task_<task>_<k>shot_acc, _acc_norm and _lost_demos; per shot count
-- task_macro_acc_<k>shot and task_macro_acc_norm_<k>shot, the means over the tasks.
function M.metrics(sets, results)
  local out, sums = {}, {}
  for i, s in ipairs(sets) do
    local r = results[i]
    local p = string.format("task_%s_%dshot_", s.task, s.shots)
    out[p .. "acc"], out[p .. "acc_norm"], out[p .. "lost_demos"] = r.acc, r.acc_norm,
      r.lost_demos
    local m = sums[s.shots] or { acc = 0, acc_norm = 0, n = 0 }
    sums[s.shots] = m
    m.acc, m.acc_norm, m.n = m.acc + r.acc, m.acc_norm + r.acc_norm, m.n + 1
  end
  for k, m in pairs(sums) do
    out[string.format("task_macro_acc_%dshot", k)] = m.acc / m.n
    out[string.format("task_macro_acc_norm_%dshot", k)] = m.acc_norm / m.n
  end
  return out
end

-- The per-item correctness file of a run (tasks.csv): task,shots,item,correct,correct_norm.
function M.items_csv(sets, results)
  local lines = { "task,shots,item,correct,correct_norm" }
  for i, s in ipairs(sets) do
    local r = results[i]
    for j = 1, #r.correct do
      lines[#lines + 1] = string.format("%s,%d,%d,%d,%d", s.task, s.shots, j, r.correct[j],
        r.correct_norm[j])
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
