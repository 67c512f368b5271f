-- The study sandbox (lua/lsandbox.c, lua/repro/study/init.lua) against escape attempts:
-- the host's string metatable and libraries, debug, collectgarbage, setmetatable on
-- shared values, string.dump and load, coroutines, files and processes, huge
-- allocations, endless loops (plain, under pcall, in finalizers and error handlers),
-- C-level hangs, results that are not plain data, and the host API.  Each attempt must
-- fail cleanly (an error of the expected kind and message) or, where the sandbox lets
-- the study do it to itself, leave the host untouched; afterwards the host's string
-- functions, metatables and globals are the ones it started with and no file the
-- attempts aimed at exists.
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local sandbox = require "repro.sandbox"
local study = require "repro.study"
local t = check.new("test_sandbox")
local dir = check.tmpdir()
local marker = dir .. "/pwned"

local saved = { mt = getmetatable(""), index = getmetatable("").__index, gsub = string.gsub,
  format = string.format, rep = string.rep, quote = fs.quote("it's") }
local globals = {}
for k in pairs(_G) do globals[#globals + 1] = k end
table.sort(globals)
globals = table.concat(globals, " ")

-- The study limits, with a generous wall-clock limit so that a loaded machine still
-- reaches the memory and instruction limits first.
local L = {}
for k, v in pairs(study.LIMITS) do L[k] = v end
L.wall_s = 120
-- Smaller limits where an attempt only has to reach one (same code paths, faster).
local SMALL = { memory_bytes = 32 * 1024 * 1024, instructions = 20000000, wall_s = 120,
  result_bytes = 1024 * 1024, depth = 64 }
-- Only the wall-clock limit can stop a loop in C.
local BRIEF = { memory_bytes = 32 * 1024 * 1024, instructions = 20000000, wall_s = 1,
  result_bytes = 1024 * 1024, depth = 64 }

local host_table = { lr = 0.001, nested = { 1, 2, 3 } }
local API = {
  add = function(a, b) return a + b end,
  get = function() return host_table end,
  fn = function() return print end,
  fail = function() error({ message = "no such study 'x'" }) end,
  echo = function(...) return ... end,
}

-- { name, source, limits, expect }: expect = "ok" (then check(value) must hold) or
-- { kind, message fragment }.
local attempts = {
  { "replace gsub through the shared string metatable",
    [[getmetatable("").__index.gsub = function() return "pwned" end
      return { ("a"):gsub("a", "b") }]], L, "ok",
    function(v) return v[1] == "pwned" end },
  { "replace format through the string metatable",
    [[getmetatable("").__index.format = function() return "%s" end return 1]], L, "ok" },
  { "replace the string metatable's __index", [[getmetatable("").__index = {} return 1]], L, "ok" },
  { "replace string.rep in the library table", [[string.rep = nil return 1]], L, "ok" },
  { "setmetatable on a string", [[setmetatable("", {})]], L, { "error",
    "bad argument #1 to 'setmetatable'" } },
  { "setmetatable on _G",
    [[setmetatable(_G, { __index = function(_, k) return k end }) return pwned]],
    L, "ok", function(v) return v == "pwned" end },
  { "a metatable on the result (__index, __pairs, __newindex)",
    [[return setmetatable({ name = "x" }, { __index = function() os.exit(1) end,
        __pairs = function() while true do end end, __newindex = error })]],
    L, "ok", function(v) return v.name == "x" and getmetatable(v) == nil and v.other == nil end },
  { "debug.sethook", [[debug.sethook()]], L, { "error", "global 'debug'" } },
  { "debug.getregistry", [[return debug.getregistry()]], L, { "error", "global 'debug'" } },
  { "collectgarbage", [[collectgarbage("stop")]], L, { "error", "global 'collectgarbage'" } },
  { "string.dump", [[return string.dump(function() end)]], L, { "error", "field 'dump'" } },
  { "load", [[return load("return 1")]], L, { "error", "global 'load'" } },
  { "loadstring / dofile / loadfile", [[return (loadstring or dofile or loadfile)("x")]], L,
    { "error", "a nil value" } },
  { "require", [[return require("os")]], L, { "error", "global 'require'" } },
  { "package.loadlib", [[return package.loadlib("libc.so.6", "system")]], L, { "error",
    "global 'package'" } },
  { "coroutine.wrap", [[return coroutine.wrap(function() end)]], L, { "error",
    "global 'coroutine'" } },
  { "io.popen", [[io.popen("touch ]] .. marker .. [[")]], L, { "error", "global 'io'" } },
  { "os.execute", [[os.execute("touch ]] .. marker .. [[")]], L, { "error", "global 'os'" } },
  { "print", [[print("x")]], L, { "error", "global 'print'" } },
  { "math.random", [[return math.random()]], L, { "error", "field 'random'" } },
  { "a binary chunk", string.dump(function() return 1 end), L, { "syntax", "binary chunk" } },
  { "a string of 1 GiB", [[return string.rep("x", 1 << 30)]], L, { "memory", "" } },
  { "a string above Lua's own size limit", [[return string.rep("x", 1 << 31)]], L,
    { "error", "resulting string too large" } },
  { "many small tables", [[local t = {} for i = 1, 1e9 do t[i] = { i } end]], SMALL, { "memory",
    "" } },
  { "table.concat of a huge list", [[local t = {} for i = 1, 1e6 do t[i] = "abcdefghij" end
      return table.concat(t):rep(100)]], SMALL, { "memory", "" } },
  { "a memory error caught by pcall", [[pcall(string.rep, "x", 1 << 30) return { name = "x" }]],
    L, { "memory", "" } },
  { "an endless loop", [[while true do end]], L, { "instructions", "" } },
  { "endless loops under nested pcall",
    [[while true do pcall(pcall, function() while true do end end) end]],
    SMALL, { "instructions", "" } },
  { "an endless error handler (xpcall runs handlers with hooks off)",
    [[xpcall(error, function() while true do end end) return 1]], SMALL,
    { "error", "global 'xpcall'" } },
  { "an endless tail call", [[local function f() return f() end return f()]], SMALL,
    { "instructions", "" } },
  { "an endless __close", [[do local x <close> = setmetatable({}, { __close = function()
      while true do end end }) end return 1]], SMALL, { "instructions", "" } },
  { "an endless finalizer (Lua runs finalizers with hooks off)",
    [[setmetatable({}, { __gc = function() while true do end end })
      local t = {} for i = 1, 1e6 do t[i] = {} end]], SMALL,
    { "error", "a __gc metamethod is not allowed" } },
  { "an endless __close while an error unwinds", [[do local x <close> = setmetatable({},
      { __close = function() while true do end end }) while true do end end]], SMALL,
    { "instructions", "" } },
  { "unbounded recursion", [[local function f() return 1 + f() end return f()]], L,
    { "error", "stack overflow" } },
  { "a pathological pattern (time spent in C)",
    [[return ("a"):rep(30000):find(("a*"):rep(30) .. "b")]],
    BRIEF, { "time", "" } },
  { "an error object whose __tostring loops", [[error(setmetatable({}, { __tostring = function()
      while true do end end }))]], L, { "error", "not a message (a table)" } },
  { "a 100 MB error message", [[error(string.rep("x", 100000000))]], L, { "error", "xxxx" },
    nil, function(msg) return #msg <= 4096 end },
  { "a result above the size limit", [[return { s = string.rep("x", 2 * 1024 * 1024) }]], SMALL,
    { "result", "too large" } },
  { "a result nested too deep", [[local t = {} for i = 1, 100000 do t = { t } end return t]], L,
    { "result", "nested deeper than 64 levels" } },
  { "a cycle in the result", [[local t = { a = {} } t.a.b = t return t]], L,
    { "result", "a.b: the table contains itself" } },
  { "a function in the result", [[return { f = pairs }]], L, { "result",
    "f: a function cannot cross" } },
  { "a table as a key", [[return { [{}] = 1 }]], L, { "result", "a table used as a key" } },
  { "a shared (not cyclic) table is copied twice", [[local s = { 1 } return { a = s, b = s }]],
    L, "ok", function(v) return v.a ~= v.b and v.a[1] == 1 and v.b[1] == 1 end },
  { "a host function given a function", [[return repro.echo(function() end)]], L,
    { "error", "repro.echo: argument 1: a function cannot cross to the host" } },
  { "a host function returning a function", [[return repro.fn()]], L,
    { "error", "repro.fn: its result 1: a function cannot cross" } },
  { "a host function's error", [[return repro.fail()]], L, { "error",
    "repro.fail: no such study 'x'" } },
  { "a host function given a cycle", [[local t = {} t[1] = t return repro.echo(t)]], L,
    { "error", "repro.echo: argument 1[1]: the table contains itself" } },
  { "a host result changed by the study",
    [[local v = repro.get() v.lr = 1 v.nested[1] = 99 setmetatable(v, { __index = error })
      return { repro.get().lr, repro.get().nested[1], repro.add(2, 3) }]], L, "ok",
    function(v) return v[1] == 0.001 and v[2] == 1 and v[3] == 5 end },
  { "an unknown host function", [[return repro.system("id")]], L, { "error",
    "repro.system: no such function" } },
  { "the api table's metamethod called directly", [[return getmetatable(repro).__index(repro, {})]],
    L, { "error", "repro.?: no such function" } },
}

local blocked = 0
for _, a in ipairs(attempts) do
  local name, src, limits, expect, check_value, check_msg = a[1], a[2], a[3], a[4], a[5], a[6]
  local t0 = host.now()
  local ok, v, msg = sandbox.eval(src, "@attempt.lua", limits, API)
  local good
  if expect == "ok" then
    good = t:ok(ok and (not check_value or check_value(v)), name .. ": expected a harmless " ..
      "result, got " .. tostring(ok) .. " " .. tostring(v) .. " " .. tostring(msg))
  else
    good = t:ok(not ok and v == expect[1] and tostring(msg):find(expect[2], 1, true) ~= nil and
      (not check_msg or check_msg(msg)), string.format("%s: expected %s '%s', got %s %s %s",
      name, expect[1], expect[2], tostring(ok), tostring(v), tostring(msg):sub(1, 300)))
  end
  good = t:ok(host.now() - t0 < limits.wall_s + 5, name .. ": ended within its time limit") and good
  if good then blocked = blocked + 1 end
end

-- The host is as it was.
t:ok(getmetatable("") == saved.mt and getmetatable("").__index == saved.index and
  string.gsub == saved.gsub and string.format == saved.format and string.rep == saved.rep,
  "the host's string metatable and functions are untouched")
t:eq(fs.quote("it's"), saved.quote, "the host still quotes shell words")
t:eq(("%d-%s"):format(3, "x"), "3-x", "the host's format works")
local now = {}
for k in pairs(_G) do now[#now + 1] = k end
table.sort(now)
t:eq(table.concat(now, " "), globals, "the host's globals are untouched")
t:ok(host_table.lr == 0.001 and host_table.nested[1] == 1 and getmetatable(host_table) == nil,
  "a table the host API returned is untouched")
t:ok(not fs.exists(marker), "no file was created by an attempt")

-- Through study.load: limits named in the message, results validated after the copy.
study.LIMITS.wall_s = 120
local function load_err(src)
  local path = dir .. "/s.lua"
  check.write(path, src)
  local ok, err = pcall(study.load, path)
  return ok, type(err) == "table" and err.message or tostring(err)
end
local ok, err = load_err("while true do end")
t:ok(not ok and err:find("study: " .. dir .. "/s.lua: exceeded the limit of 100000000 Lua " ..
  "instructions", 1, true), "study.load names the instruction limit: " .. err)
ok, err = load_err("local s = ('x'):rep(1 << 30)")
t:ok(not ok and err:find("exceeded the 256 MiB memory limit", 1, true),
  "study.load names the memory limit: " .. err)
ok, err = load_err([[getmetatable("").__index.gsub = function() return "pwned" end
return { name = "s" }]])
t:ok(not ok and err:find("description: missing", 1, true) and fs.quote("a'b") == "'a'\\''b'",
  "a study that changes its string metatable is validated like any other: " .. err)

print(string.format("test_sandbox: %d escape attempts, %d blocked cleanly", #attempts, blocked))
check.rmtree(dir)
t:done()
