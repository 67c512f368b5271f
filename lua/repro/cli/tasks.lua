-- `bin/repro tasks build [SUITE|TASK ...] [--data FILE] [--dir DIR] [--version N]`: builds
-- the task files of a corpus (lua/repro/tasks/init.lua; default the core suite on
-- data/tinyshakespeare.txt into tasks/<corpus>/; a suite's tasks at the suite's version, a
-- task named alone at --version, default 1), printing per task its items, pool, chance
-- rate and answer positions, or why it was skipped.
-- `bin/repro tasks controls [SUITE|TASK] [--data FILE] [--dir DIR]`: the suite's validity
-- controls (chance with its 99 % interval, answer positions, the add-one bigram, the
-- n-gram ladder and the untrained models' accuracy) into
-- tasks/<corpus>/<suite>-controls-v<version>.json, and a table of them, with progress on
-- stderr; a TASK of the core suite (or of the suite --suite names) is scored and shown,
-- not written.
-- `bin/repro tasks show TASK [--n N] [--data FILE] [--dir DIR]`: the first N (default 3)
-- items of a built task, context tail, choices and answer marked.  Task text and skip
-- reasons are printed through base.printable (put).
local tasks = require "repro.tasks"
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local host = require "repro.host"
local json = require "repro.core.json"

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
  "       bin/repro tasks show TASK [--n N] [--data FILE] [--dir DIR] [--version N|--suite S]"
M.DEFAULT_DATA = "data/tinyshakespeare.txt"
M.SHOW_CONTEXT = 120

local function parse(args)
  local o = base.parse_options(args, WHO, M.USAGE, {
    ["--data"] = { key = "data", kind = "value" },
    ["--dir"] = { key = "dir", kind = "value" },
    ["--n"] = { key = "n", kind = "value" },
    ["--version"] = { key = "version", kind = "value" },
    ["--suite"] = { key = "suite", kind = "value" },
  })
  if o.version then
    local v = math.tointeger(tonumber(o.version))
    if not v or v < 1 then
      base.user_error("%s: --version needs an integer >= 1, got %s", WHO,
        base.printable(o.version))
    end
    o.version = v
  end
  o.data = o.data or (host.root .. "/" .. M.DEFAULT_DATA)
  return o
end

-- The tasks to build, each {task =, version =}.
local function task_names(targets, version)
  local out = {}
  for _, t in ipairs(#targets > 0 and targets or { "core" }) do
    if tasks.SUITES[t] then
      for _, x in ipairs(tasks.SUITES[t]) do
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

local function build(o)
  for _, x in ipairs(task_names(o.targets, o.version)) do
    local t = x.task
    local r = tasks.build(o.data, t, { dir = o.dir, version = x.version })
    put(M.build_line(t, r))
  end
  return 0
end

local function controls(o)
  local target = o.targets[1] or o.suite or "core"
  local suite, only = target, nil
  if not tasks.SUITES[target] then
    suite = o.suite or "core"
    local found = false
    for _, t in ipairs(tasks.suite(suite)) do found = found or t == target end
    if not found then
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
  local path
  if not only then
    path = tasks.controls_path(o.data, suite, o.dir)
    fs.write_atomic(path, json.pretty(c))
  end
  local names = {}
  for _, s in ipairs(c.setups or tasks.CONTROL_SETUPS) do names[#names + 1] = s.name end
  io.write(string.format("%-12s %5s %6s %15s %7s", "task", "items", "chance", "99% interval",
    "bigram"))
  for _, order in ipairs(tasks.NGRAM_LADDER) do
    io.write(string.format(" %7s", string.format("WB %d-g", order)))
  end
  for _, n in ipairs(names) do io.write(string.format(" %18s", "untrained " .. n)) end
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
      io.write("\n")
    end
  end
  io.write(string.format("(WB: Witten-Bell n-gram of the training split; ! outside the " ..
    "interval)  %s\n", path and fs.shown(path) or "(one task: not written)"))
  return 0
end

local function show(o)
  local t = o.targets[1] or base.user_error("%s", M.USAGE)
  local n = math.tointeger(tonumber(o.n or "3"))
  if not n or n < 1 then base.user_error("%s: --n needs an integer >= 1, got %s", WHO, o.n) end
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
  if sub == "build" then return build(o) end
  if sub == "show" then return show(o) end
  if sub == "controls" then return controls(o) end
  base.user_error("%s", M.USAGE)
end

return M
