-- `bin/repro tasks build|controls|new|show`: a corpus's task files
-- (lua/repro/tasks/init.lua).  build writes a suite's or a task's files (never rewriting
-- a built version: nothing is written when one would change) and prints per task its
-- items, pool, chance rate and answer positions, or why it was skipped; controls
-- writes the suite's validity controls to tasks/<corpus>/<suite>-controls-v<version>.json
-- and shows them (a single TASK is shown, not written); new writes a user's template
-- generator (and suite file), never overwriting; show prints a built task's first items.
-- Task text and skip reasons are printed through base.printable.  Flags:
-- docs/COMMANDS.md, "Study files and tasks".
local tasks = require "repro.tasks"
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local host = require "repro.host"

local M = {}
local WHO = "repro tasks"

-- A line on stdout: task text and skip reasons come from data (a corpus, a generator, a
-- task file), so every line goes through the one printable function (base.printable,
-- lua/lsys.c repro_printable: no escape sequence, C1 control or bidi override reaches
-- the terminal), keeping its newlines.
function M.put(s) io.write(base.printable(s, true), "\n") end
local put = M.put

M.USAGE = "usage: bin/repro tasks build [SUITE|TASK ...] [--data FILE] [--dir DIR] " ..
  "[--version N]\n" ..
  "       bin/repro tasks controls [SUITE|TASK] [--suite SUITE] [--data FILE] [--dir DIR]\n" ..
  "       bin/repro tasks new NAME [--suite S]\n" ..
  "       bin/repro tasks show TASK [--n N] [--data FILE] [--dir DIR] [--version N|--suite S]"
M.DEFAULT_DATA = "data/tinyshakespeare.txt"
M.SHOW_CONTEXT = 120

local function parse(args)
  local o = base.parse_options(args, WHO, M.USAGE, {
    ["--data"] = { key = "data", kind = "value" },
    ["--dir"] = { key = "dir", kind = "value" },
    ["--n"] = { key = "n", kind = "int", min = 1 },
    ["--version"] = { key = "version", kind = "int", min = 1 },
    ["--suite"] = { key = "suite", kind = "value" },
  })
  o.data = o.data or (host.root .. "/" .. M.DEFAULT_DATA)
  local why, at
  if o.dir then why, at = fs.out_dir_problem(o.dir) end
  if why then
    base.user_error("%s: --dir %s: %s is %s, not a directory", WHO, base.printable(o.dir),
      base.printable(at), why)
  end
  return o
end

-- The tasks to build, each {task =, version =}.
local function task_names(targets, version)
  local out = {}
  for _, t in ipairs(#targets > 0 and targets or { "core" }) do
    if tasks.find_suite(t) then
      for _, x in ipairs(tasks.find_suite(t)) do
        out[#out + 1] = { task = x, version = tasks.suite_version(t) }
      end
    elseif base.valid_name(t) and fs.exists(tasks.generator_path(t, version)) then
      out[#out + 1] = { task = t, version = version or 1 }
    else
      base.user_error("%s: %q is neither a suite nor a task (lua/tasks/)", WHO,
        base.printable(t))
    end
  end
  return out
end

-- The line `tasks build` prints for task t's build result r (tasks.build), before put.
function M.build_line(t, r)
  if r.skipped then return string.format("%-12s skipped: %s", t, r.skipped) end
  return string.format("%-12s %4d items, pool %3d, chance %.3f, answer positions %s  %s",
    t, r.n_items, r.n_pool, r.chance, table.concat(r.positions, "/"), fs.shown(r.file))
end

-- Every task is built before any file is written: one whose version exists with other
-- bytes refuses the whole build (tasks.write_builds).
local function build(o)
  local builds = {}
  for _, x in ipairs(task_names(o.targets, o.version)) do
    builds[#builds + 1] = tasks.plan_build(o.data, x.task, { dir = o.dir, version = x.version })
  end
  tasks.write_builds(builds)
  for _, r in ipairs(builds) do put(M.build_line(r.task, r)) end
  return 0
end

local function controls(o)
  local target = o.targets[1] or o.suite or "core"
  local suite, only = target, nil
  if not tasks.find_suite(target) then
    suite = o.suite or "core"
    if not base.set_of(tasks.suite(suite))[target] then
      base.user_error("%s: %q is neither a suite nor a task of suite %s", WHO,
        base.printable(target), suite)
    end
    only = { target }
  end
  local c = tasks.controls(o.data, suite, { dir = o.dir, tasks = only,
    progress = function(what, i, n)
      io.stderr:write(string.format("controls %s on %s: %s (%d/%d)\n", suite,
        tasks.corpus_name(o.data), what, i, n))
    end })
  local path = not only and tasks.write_controls(o.data, suite, c, o.dir) or nil
  local names = {}
  for _, s in ipairs(c.setups or tasks.CONTROL_SETUPS) do names[#names + 1] = s.name end
  io.write(string.format("%-12s %5s %6s %15s %7s", "task", "items", "chance", "99% interval",
    "bigram"))
  for _, order in ipairs(tasks.NGRAM_LADDER) do
    io.write(string.format(" %7s", string.format("WB %d-g", order)))
  end
  for _, n in ipairs(names) do io.write(string.format(" %18s", "untrained " .. n)) end
  for _, k in ipairs(tasks.SHOTS) do
    if k > 0 then io.write(string.format(" %12s", string.format("%d-shot kept", k))) end
  end
  io.write("\n")
  for _, t in ipairs(tasks.suite(suite)) do
    local r = c.tasks[t]
    if r then
      io.write(string.format("%-12s %5d %6.3f   [%.3f, %.3f] %7.3f", t, r.n_items, r.chance,
        r.chance_lo, r.chance_hi, r.bigram_acc))
      for _, g in ipairs(r.ngram or {}) do
        io.write(string.format(" %6.3f%s", g.acc, g.within and " " or "!"))
      end
      for _, n in ipairs(names) do
        local u = r.untrained[n]
        io.write(string.format(" %17.3f%s", u.acc, u.within and " " or "!"))
      end
      for _, d in ipairs(r.demos_kept or {}) do
        io.write(string.format(" %11.0f%%", 100 * d.kept_share))
      end
      io.write("\n")
    end
  end
  io.write(string.format("(WB: Witten-Bell n-gram of the training split; ! outside the " ..
    "interval; k-shot kept: items whose k demonstrations all fit the window, a k-shot " ..
    "number measurable at 90 %%)  %s\n", path and fs.shown(path) or "(one task: not written)"))
  return 0
end

-- A working generator a user starts from (lua/repro/tasks/init.lua's generator
-- contract): a held-out word after the text before it, against another held-out word of
-- the same length, items paired so that each word is the answer once and the distractor
-- once (a scorer's taste for one string cancels: the untrained control stays at chance).
M.TEMPLATE = [[
-- Task `%s` (your own: `bin/repro tasks new` wrote this template; edit it).  A generator
-- is data: it runs in the study sandbox with repro.text("validation"),
-- repro.train_counts(list), repro.dictionary() and repro.draws(n, bound) (see
-- lua/repro/tasks/init.lua) and returns { items = { { context =, answer =,
-- distractors = { ... } }, ... } } or { skip = "why" }.
-- This one: a held-out word after the text before it, against another held-out word of
-- the same length; items come in pairs that swap answer and distractor, so a scorer's
-- preference for one string cancels.  Chance 1/2.
local CONTEXT_BYTES, MIN_LEN, MAX_LEN, MAX_PAIRS = 100, 4, 12, 300
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%%s]*%%s", ""))
end

local by_len = {}
for p, w in text:gmatch("()%%f[%%l](%%l+)%%f[^%%a]") do
  if #w >= MIN_LEN and #w <= MAX_LEN and p > CONTEXT_BYTES then
    local l = by_len[#w] or {}
    by_len[#w] = l
    l[#l + 1] = { p = p, w = w }
  end
end
local items, pairs_made = {}, 0
for n = MIN_LEN, MAX_LEN do
  local l = by_len[n] or {}
  for i = 1, #l - 1, 2 do
    local a, b = l[i], l[i + 1]
    if a.w ~= b.w and pairs_made < MAX_PAIRS then
      pairs_made = pairs_made + 1
      items[#items + 1] = { context = tail(text:sub(1, a.p - 1)), answer = a.w,
        distractors = { b.w } }
      items[#items + 1] = { context = tail(text:sub(1, b.p - 1)), answer = b.w,
        distractors = { a.w } }
    end
  end
end
return { items = items }
]]

local function new(o)
  local name = o.targets[1]
  if not name or not base.valid_name(name) or name:find("%.") then
    base.user_error("%s new: a task name (letters, digits, \"_\", \"-\") expected, got %s",
      WHO, base.printable(tostring(name)))
  end
  if fs.exists(host.root .. "/lua/tasks/" .. name .. ".lua") then
    base.user_error("%s new: %s is a task of the library (lua/tasks/%s.lua): pick another name",
      WHO, name, name)
  end
  local gdir = tasks.root() .. "/" .. tasks.USER_GENERATORS
  local path = gdir .. "/" .. name .. ".lua"
  if fs.exists(path) then
    base.user_error("%s new: %s exists: nothing written", WHO, fs.shown(path))
  end
  local suite_path
  if o.suite then
    if not base.valid_name(o.suite) or o.suite:find("%.") or tasks.SUITES[o.suite] then
      base.user_error("%s new: --suite %s: a new suite's name expected (not a library suite)",
        WHO, base.printable(o.suite))
    end
    suite_path = tasks.root() .. "/" .. tasks.USER_SUITES .. "/" .. o.suite .. ".lua"
  end
  fs.mkdir_p(gdir)
  fs.write_atomic(path, string.format(M.TEMPLATE, name))
  io.write(string.format("wrote %s (a working template: edit it)\n", fs.shown(path)))
  if suite_path and not fs.exists(suite_path) then
    fs.mkdir_p(tasks.root() .. "/" .. tasks.USER_SUITES)
    fs.write_atomic(suite_path, string.format("-- Suite `%s`: a study names it with the config " ..
      "key tasks = %q.\nreturn { version = 1, %q }\n", o.suite, o.suite, name))
    io.write(string.format("wrote %s (suite %s: %s)\n", fs.shown(suite_path), o.suite, name))
  elseif suite_path then
    io.write(string.format("%s exists: add %q to it yourself\n", fs.shown(suite_path), name))
  end
  local suite = o.suite or "SUITE"
  io.write(string.format("next: bin/repro tasks build %s --data CORPUS; bin/repro tasks " ..
    "controls %s --data CORPUS (its untrained and n-gram controls); bin/repro tasks show %s " ..
    "--suite %s --data CORPUS; then a study with tasks = %q\n", suite, suite, name, suite,
    suite))
  return 0
end

local function show(o)
  local t = o.targets[1] or base.user_error("%s", M.USAGE)
  local n = o.n or 3
  local file = tasks.files(o.dir or tasks.dir_of(o.data), t,
    o.version or (o.suite and tasks.suite_version(o.suite)))
  if not fs.exists(file) then
    base.user_error("%s: %s does not exist: run `bin/repro tasks build %s`", WHO,
      fs.shown(file), t)
  end
  local its = tasks.items.read(file)
  put(string.format("%s: %d items (%s)", t, #its, fs.shown(file)))
  for i = 1, math.min(n, #its) do
    local it = its[i]
    local ctx = it.context
    if #ctx > M.SHOW_CONTEXT then
      -- the tail, from a character's first byte (a cut never leaves half a character)
      local at = #ctx - M.SHOW_CONTEXT + 1
      while at <= #ctx and ctx:byte(at) >= 0x80 and ctx:byte(at) < 0xC0 do at = at + 1 end
      ctx = "..." .. ctx:sub(at)
    end
    put(string.format("\n[%d] %s", i, (ctx:gsub("\n", "\\n"))))
    for j, c in ipairs(it.choices) do
      put(string.format("   %s %d. \"%s\"", j - 1 == it.answer and "*" or " ", j - 1,
        (c:gsub("\\", "\\\\"):gsub("\"", "\\\""):gsub("\n", "\\n"))))
    end
  end
  return 0
end

function M.main(args)
  local sub = table.remove(args, 1)
  local o = parse(args)
  if o.help then return 0 end
  local run = ({ build = build, show = show, controls = controls, new = new })[sub]
  return run and run(o) or base.user_error("%s", M.USAGE)
end

return M
