-- JSON with a stable byte layout.  Every scalar is encoded and every document parsed by
-- lua-cjson; this module only walks tables and writes object keys in sorted order,
-- which cjson cannot do (and Lua 5.4 seeds its string hashes per process, so `pairs`
-- order differs from run to run).  Numbers carry cjson's 14 significant digits.
-- Non-finite numbers are refused with the path of the value.
local cjson = require "cjson"

local M = {}
M.null = cjson.null

local ARRAY = { __jsontype = "array" }
local OBJECT = { __jsontype = "object" }

-- Marks a table to be written as an array (an empty table is otherwise an object).
function M.array(t) return setmetatable(t or {}, ARRAY) end
function M.object(t) return setmetatable(t or {}, OBJECT) end

local function is_array(t)
  local mt = getmetatable(t)
  if mt == ARRAY then return true end
  if mt == OBJECT then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n > 0 and n == #t
end

-- The path of the value being written ("$.a[2].b"), built only for an error message:
-- keys[1..depth] are the object keys (strings) and array indices (integers) down to it.
local function path_of(keys, depth)
  local parts = { "$" }
  for i = 1, depth do
    local k = keys[i]
    parts[#parts + 1] = type(k) == "number" and ("[" .. k .. "]") or ("." .. k)
  end
  return table.concat(parts)
end

local function scalar(v, keys, depth)
  local ty = type(v)
  if ty == "number" then
    if v ~= v or v == math.huge or v == -math.huge then
      error(string.format("json: %s: cannot write the non-finite number %s",
        path_of(keys, depth), tostring(v)), 0)
    end
    return cjson.encode(v)
  elseif ty == "string" or ty == "boolean" then
    return cjson.encode(v)
  elseif v == cjson.null then
    return "null"
  end
  error(string.format("json: %s: cannot write a %s", path_of(keys, depth), ty), 0)
end

-- Indented (indent given), an array's elements go one to a line when any is a table, else
-- on one line after ", "; an object's members always one to a line.
local function encode(v, out, indent, level, keys)
  if type(v) ~= "table" then
    out[#out + 1] = scalar(v, keys, level)
    return
  end
  local array, members, flat = is_array(v), {}, true
  if array then
    for i = 1, #v do
      members[i] = i
      if type(v[i]) == "table" then flat = false end
    end
  else
    local bad -- the key named is the same on every run (not the first `pairs` reaches)
    for k in pairs(v) do
      if type(k) ~= "string" then
        if bad == nil or tostring(k) < tostring(bad) then bad = k end
      else
        members[#members + 1] = k
      end
    end
    if bad ~= nil then
      error(string.format("json: %s: object key %s is not a string", path_of(keys, level),
        tostring(bad)), 0)
    end
    table.sort(members)
    flat = false
  end
  local pad = indent and ("\n" .. string.rep(indent, level + 1)) or ""
  out[#out + 1] = array and "[" or "{"
  for i, k in ipairs(members) do
    if i > 1 then out[#out + 1] = flat and ", " or "," end
    if not flat then out[#out + 1] = pad end
    if not array then out[#out + 1] = cjson.encode(k) .. (indent and ": " or ":") end
    keys[level + 1] = k
    encode(v[k], out, indent, level + 1, keys)
  end
  if indent and not flat and #members > 0 then
    out[#out + 1] = "\n" .. string.rep(indent, level)
  end
  out[#out + 1] = array and "]" or "}"
end

-- One line, no spaces: for stdout summaries.
function M.encode(v)
  local out = {}
  encode(v, out, nil, 0, {})
  return table.concat(out)
end

-- Indented, one key per line, trailing newline: for files kept in git.
function M.pretty(v)
  local out = {}
  encode(v, out, "  ", 0, {})
  out[#out + 1] = "\n"
  return table.concat(out)
end

function M.decode(s)
  return cjson.decode(s)
end

-- The table a JSON text decodes to; nil when the text is missing, not JSON, or a scalar.
function M.table_of(text)
  local ok, t = pcall(cjson.decode, text or "")
  if ok and type(t) == "table" then return t end
  return nil
end

return M
