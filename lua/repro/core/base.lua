-- The lowest layer of the Lua library: what every other module may need and none
-- defines again.  Requires nothing but the C binding repro.sys (printable).
local M = {}

-- A user error (bad flag, bad config, bad study file): a table with a `message`, which
-- bin/repro (lua/repro.c) prints alone, without a traceback; any other error is a bug.
function M.user_error(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- ok, or else the user error of fmt and its arguments (the check of an input, as
-- luaL_argcheck is the C API's).
function M.need(ok, fmt, ...)
  if not ok then M.user_error(fmt, ...) end
  return ok
end

-- The set {v -> true} of a list's values.
function M.set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- The edit distance (Levenshtein) of two strings.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- " (did you mean 'x'?)" for the closest of the known names (a list, or a set: a table
-- whose keys are the names) within a small edit distance, else "".  The one suggestion of
-- the suite, wherever a name is typed: study files, key=value and --set, --only, options,
-- commands, --metrics, --columns.  None for a long name (the distance is quadratic).
function M.suggest(name, known)
  name = tostring(name)
  if #name > 64 then return "" end
  local list = #known > 0 and table.move(known, 1, #known, 1, {}) or M.sorted_keys(known)
  table.sort(list, function(x, y) return tostring(x) < tostring(y) end)
  local best, bd = nil, math.huge
  for _, k in ipairs(list) do
    local d = distance(name, tostring(k))
    if d < bd then best, bd = k, d end
  end
  if best and bd <= math.max(2, #name // 4) and best ~= name then
    return string.format(" (did you mean '%s'?)", best)
  end
  return ""
end

-- The keys of a table in one order on every run (Lua seeds its string hashes per process,
-- so `pairs` visits keys in an order that changes from run to run): by type, then by text,
-- then numbers by value.  Every loop whose visiting order shows (a file's bytes, which
-- problem a message names first) goes through it (tests/lua/test_pairs_order.lua).
function M.sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return list
end

-- A number that is neither NaN nor infinite (false for anything that is not a number).
function M.finite(x)
  return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
end

-- The key/value pairs every table of list holds, as a new table ({} for an empty list).
function M.common_pairs(list)
  local out = {}
  for k, x in pairs(list[1] or {}) do out[k] = x end
  for i = 2, #list do
    for k, x in pairs(out) do
      if list[i][k] ~= x then out[k] = nil end
    end
  end
  return out
end

-- Whether x is a whole number that a double holds exactly (|x| < 2^53): "%d" writes it.
function M.whole(x)
  return type(x) == "number" and x == math.floor(x) and math.abs(x) < 2 ^ 53
end

-- The one rule for a name the suite reads from a study file, the file system or a
-- command line (study and variant names, directories under experiments/): ASCII
-- letters, digits, '_', '-' and '.', starting with a letter or digit, at most
-- NAME_MAX bytes.  Such a name is safe as a path component, in a shell word, in a
-- gnuplot string and in a LaTeX \csname or \label.
M.NAME_MAX = 64
M.NAME_RULE = string.format("letters, digits, '_', '-' or '.', starting with a letter " ..
  "or digit, at most %d characters", M.NAME_MAX)

function M.valid_name(s)
  return type(s) == "string" and #s <= M.NAME_MAX and s:match("^[A-Za-z0-9][A-Za-z0-9_.%-]*$")
    ~= nil
end

-- The first control character (bytes 0-31 and 127: newline, NUL, escape, ...) of s as
-- a readable escape ("\n", "\0", "\x1b"), or nil when s has none.
function M.control_char(s)
  local c = tostring(s):match("[%z\1-\31\127]")
  if not c then return nil end
  local named = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\0"] = "\\0" }
  return named[c] or string.format("\\x%02x", c:byte())
end

-- s as a terminal may show it: text from data (a directory's name, a config value, a
-- metric key, a study's error, a record's field) never drives the terminal.  The one
-- rule, repro_printable in lua/lsys.c, also used for the error text bin/repro prints:
-- C0 controls (ESC, BEL, backspace, CR, ...; newline and tab kept when keep_lines) and
-- DEL as \xNN, the C1 controls U+0080-U+009F and the bidirectional overrides and
-- isolates (U+202A-U+202E, U+2066-U+2069) as \uNNNN, each byte of invalid UTF-8 as
-- \xNN; other text (valid UTF-8 too) unchanged.  Every sink that writes data to a
-- terminal goes through it (progress.say, textable.render, results.emit on a terminal,
-- the direct prints of verify, status, plan and report).
function M.printable(s, keep_lines)
  return require("repro.sys").printable(tostring(s), keep_lines)
end

-- A line on stdout, through M.printable (newlines kept).
function M.put(s) print(M.printable(s, true)) end

-- The number of option `flag` (parse_options' "int" or "number" spec s: min, max), or a
-- user error naming the flag and what it needs.
local function number_value(v, who, flag, s)
  local x = tonumber(v)
  if s.kind == "int" then x = math.tointeger(x) end
  M.need(x and x >= s.min and x <= (s.max or math.huge) and x < math.huge,
    "%s: %s needs %s %s, got %s", who, flag, s.kind == "int" and "an integer" or "a number",
    s.max and string.format("in [%s, %s]", s.min, s.max) or (">= " .. s.min), M.printable(v))
  return x
end

-- A command's options: spec maps each option to { key =, kind = "flag" | "value" | "list"
-- | "int" | "number" } ("list": comma-separated values); a flag with `set` stores that
-- value, and two flags of one key are refused with `one_of` ("--csv and --json").  "int"
-- and "number" take a value >= min (and <= max, when given).  A value given twice, a
-- missing value (`needs` names what it takes: "a directory") and an unknown option are
-- user errors naming `who` (and `usage`); with `repeats` an option may come again, its
-- values gathered into a list.  --help prints usage and sets o.help.  The other arguments
-- go to o.targets in order.
function M.parse_options(args, who, usage, spec)
  local o = { targets = {} }
  local i = 1
  while i <= #args do
    local a, s = args[i], spec[args[i]]
    if a == "--help" then
      io.write(usage, "\n")
      o.help = true
    elseif s and s.kind == "flag" then
      if s.set ~= nil and o[s.key] ~= nil then M.user_error("%s: give one of %s", who, s.one_of) end
      o[s.key] = s.set == nil or s.set
    elseif s then
      if o[s.key] ~= nil and not s.repeats then M.user_error("%s: %s is given twice", who, a) end
      i = i + 1
      local v = args[i] or M.user_error("%s: %s needs %s", who, a, s.needs or "a value")
      if s.kind == "int" or s.kind == "number" then v = number_value(v, who, a, s) end
      if s.kind == "list" then
        o[s.key] = s.repeats and o[s.key] or {}
        for x in v:gmatch("[^,]+") do o[s.key][#o[s.key] + 1] = x end
      elseif s.repeats then
        o[s.key] = o[s.key] or {}
        o[s.key][#o[s.key] + 1] = v
      else
        o[s.key] = v
      end
    elseif a:match("^%-") then
      M.user_error("%s: unknown option %s%s (%s)", who, a, M.suggest(a, spec), usage)
    else
      o.targets[#o.targets + 1] = a
    end
    i = i + 1
  end
  return o
end

return M
