-- The problems of a study file (lua/repro/study/init.lua): collected, located in its
-- source and reported in one message, and the small helpers every check of a study's
-- fields shares (what a value is, the closest known name).
local base = require "repro.core.base"

local M = {}

-- What a field takes, for P.check: an integer >= min, a finite number > 0, a number in
-- (0, 1), one of the given values, a boolean.
function M.integer_from(min)
  return function(v) return math.type(v) == "integer" and v >= min end
end
function M.positive(v) return type(v) == "number" and v > 0 and v < math.huge end
function M.fraction(v) return type(v) == "number" and v > 0 and v < 1 end
function M.one_of(...)
  local set = base.set_of({ ... })
  return function(v) return set[v] == true end
end
function M.boolean(v) return type(v) == "boolean" end
-- v as an integer when it is a whole float (3.0 reads as 3), else v as it is.
function M.as_integer(v) return math.type(v) == "float" and math.tointeger(v) or v end

-- The line of the n-th occurrence of `token` in the source as a whole word (or as a
-- quoted string when it is not an identifier), or nil.
function M.find_line(src, token, nth)
  if not src or token == nil then return nil end
  local escaped = tostring(token):gsub("%p", "%%%0")
  local pat = tostring(token):match("^[%a_][%w_]*$") and ("%f[%w_]" .. escaped .. "%f[^%w_]")
    or ("[\"']" .. escaped .. "[\"']")
  local n, line = 0, 0
  for l in (src .. "\n"):gmatch("(.-)\n") do
    line = line + 1
    if not l:match("^%s*%-%-") and l:find(pat) then
      n = n + 1
      if n >= (nth or 1) then return line end
    end
  end
end

-- The tokens of Lua source: {kind, text, line} with kind "name", "string", "number" or
-- the punctuation itself; comments and blanks skipped.  Enough of Lua's lexer for
-- M.value_lines (long strings and comments included), not a validator: the sandbox has
-- already loaded the file.
local function tokens(src)
  local out, i, line, n = {}, 1, 1, #src
  local function long_bracket(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local close = "]" .. eq .. "]"
    local s, e = src:find(close, at + #eq + 2, true)
    return e or n, src:sub(at, e or n)
  end
  while i <= n do
    local c = src:sub(i, i)
    if c == "\n" then
      line, i = line + 1, i + 1
    elseif c:match("%s") then
      i = i + 1
    elseif src:sub(i, i + 1) == "--" then
      local e, text = long_bracket(i + 2)
      if e then
        local _, nl = text:gsub("\n", "")
        line, i = line + nl, e + 1
      else
        i = (src:find("\n", i, true) or n + 1)
      end
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c do
        if src:sub(j, j) == "\\" then j = j + 1 end
        if src:sub(j, j) == "\n" then line = line + 1 end
        j = j + 1
      end
      out[#out + 1] = { "string", src:sub(i + 1, j - 1), line }
      i = j + 1
    elseif c == "[" and long_bracket(i) then
      local e, text = long_bracket(i)
      out[#out + 1] = { "string", text, line }
      local _, nl = text:gsub("\n", "")
      line, i = line + nl, e + 1
    elseif c:match("[%a_]") then
      local w = src:match("^[%w_]+", i)
      out[#out + 1] = { "name", w, line }
      i = i + #w
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local w = src:match("^[%w_.]+", i)
      while w:match("[eEpP]$") and src:sub(i + #w, i + #w):match("[+-]") do
        w = w .. src:match("^[+-][%w_.]*", i + #w)
      end
      out[#out + 1] = { "number", w, line }
      i = i + #w
    else
      local op = src:match("^%.%.%.", i) or src:match("^[=~<>]=", i) or src:match("^%.%.", i) or
        src:match("^::", i) or src:match("^//", i) or src:match("^<<", i) or
        src:match("^>>", i) or c
      out[#out + 1] = { op, op, line }
      i = i + #op
    end
  end
  return out
end

-- The line of each value a study file writes literally in its returned table, by the
-- path the validation names it with ("variants[2].dropout", "base.iters", "seeds[3]",
-- "analysis.comparisons[1][2]"): the line of its key, or of a list item's first token.
-- Tables built by code (loops, locals, function calls) get no entry; the caller falls
-- back to the word search (M.find_line).
function M.value_lines(src)
  local ok, toks = pcall(tokens, src or "")
  if not ok then return {} end
  local lines = {}
  -- the returned table: the first "{" after the last top-level "return"
  local start
  for k = #toks, 1, -1 do
    if toks[k][1] == "name" and toks[k][2] == "return" then
      if toks[k + 1] and toks[k + 1][1] == "{" then start = k + 1 end
      break
    end
  end
  if not start then return lines end
  -- frames: a table constructor {path (nil: not a literal path), index (of its list
  -- items), in_field, field (the current field's path)} or a bracket or parenthesis {}
  local stack = { { path = "", index = 0, table = true } }
  local k = start + 1
  while k <= #toks and #stack > 0 do
    local t, top = toks[k], stack[#stack]
    local kind = t[1]
    if top.table and not top.in_field and kind ~= "}" and kind ~= "," and kind ~= ";" then
      -- a field starts here
      local key
      if kind == "name" and toks[k + 1] and toks[k + 1][1] == "=" then
        key = top.path ~= nil and ((top.path == "" and "" or top.path .. ".") .. t[2]) or nil
        k = k + 2
      elseif kind == "[" and toks[k + 1] and toks[k + 2] and toks[k + 2][1] == "]" and
          toks[k + 3] and toks[k + 3][1] == "=" and toks[k + 1][1] == "string" then
        key = top.path ~= nil and ((top.path == "" and "" or top.path .. ".") .. toks[k + 1][2]) or
          nil
        k = k + 4
      else
        top.index = top.index + 1
        key = top.path ~= nil and top.path ~= "" and (top.path .. "[" .. top.index .. "]") or nil
      end
      top.field, top.in_field = key, true
      if key and not lines[key] then lines[key] = t[3] end
    else
      if kind == "{" then
        stack[#stack + 1] = { path = top.table and top.field or nil, index = 0, table = true }
      elseif kind == "(" or kind == "[" then
        stack[#stack + 1] = {} -- not a table: nothing in it is a field of the study's
      elseif kind == "}" or kind == ")" or kind == "]" then
        stack[#stack] = nil -- the enclosing field's value goes on until , ; or }
      elseif (kind == "," or kind == ";") and top.table then
        top.field, top.in_field = nil, false
      end
      k = k + 1
    end
  end
  return lines
end

-- At most this many problems are reported (and located in the source), the rest counted:
-- validation stays linear in the study's size however many problems it has.
M.MAX_PROBLEMS = 20
-- Reports each key k of table t that known(k) refuses, at prefix .. k with the text
-- msg(k) (computed only for a problem shown): the M.MAX_PROBLEMS smallest keys by name,
-- found in linear time (no sort of 200,000 unknown keys); the others are counted.
function M.unknown_keys(P, t, known, prefix, msg)
  local list, n = {}, 0
  for key in pairs(t) do
    if not known(key) then
      local k = tostring(key)
      n = n + 1
      if #list < M.MAX_PROBLEMS or k < list[#list] then
        local i = #list + 1
        while i > 1 and list[i - 1] > k do i = i - 1 end
        table.insert(list, i, k)
        list[M.MAX_PROBLEMS + 1] = nil
      end
    end
  end
  for _, k in ipairs(list) do P.add(prefix .. k, function() return msg(k) end, k) end
  P.count(n - #list)
end

-- A problem's text is cut to this many bytes (a 1 MB key is shown by its start).
local MAX_PROBLEM_BYTES = 300

-- A collector of problems; `add(path, msg, token, nth)` locates `token` in the source
-- (msg may be a function giving the text, called only for a problem that is shown).  A
-- problem found again (a base key that breaks every variant) is listed once.
function M.collector(file, src)
  local list, more, seen = {}, 0, {}
  local value_lines
  local P = {}
  function P.add(path, msg, token, nth)
    if #list >= M.MAX_PROBLEMS then
      more = more + 1
      return
    end
    if type(msg) == "function" then msg = msg() end -- a suggestion, computed when shown
    local line
    if path and path:match("^%-%-set") then
      token = false -- a value from the command line has no line in the file
    elseif path then
      value_lines = value_lines or M.value_lines(src)
      local key = path:gsub(" %b()", "")
      line = value_lines[key]
    end
    if token == nil then token = path and path:match("([%a_][%w_]*)$") end
    line = line or (token and #tostring(token) <= 200 and M.find_line(src, token, nth))
    local where = line and string.format("%s:%d: ", file, line) or (file .. ": ")
    local text = base.printable(where .. (path and (path .. ": ") or "") .. msg)
    if #text > MAX_PROBLEM_BYTES then
      text = text:sub(1, MAX_PROBLEM_BYTES) .. string.format("... (%d bytes)", #text)
    end
    if not seen[text] then
      seen[text] = true
      list[#list + 1] = text
    end
  end
  -- v when it is nil or ok(v) holds; else nil, with the problem msg at path (as P.add).
  function P.check(path, v, ok, msg, token)
    if v == nil or ok(v) then return v end
    P.add(path, msg, token)
    return nil
  end
  -- v, with the problem msg at path unless ok(v) holds (a required field: nil fails).
  function P.need(path, v, ok, msg, token)
    if not ok(v) then P.add(path, msg, token) end
    return v
  end
  function P.count(n) more = more + n end -- problems found but neither shown nor located
  function P.raise()
    if #list > 0 then
      local n = #list + more
      local head = n == 1 and "study: " or
        string.format("study: %s: %d problems in the study (nothing was run)%s:\n  ", file, n,
          more > 0 and string.format("; the first %d", #list) or "")
      base.user_error("%s", head .. table.concat(list, "\n  ") ..
        (more > 0 and string.format("\n  ... and %d more", more) or ""))
    end
  end
  return P
end

-- Reports each key of table t that is none of the names `known` (a list) as an unknown
-- field at path.<key>, in sorted order, followed by `tail` (default: the nearest known
-- name).  True when there is none.
function M.unknown_fields(P, t, path, known, tail)
  local set, ok = base.set_of(known), true
  for _, k in ipairs(base.sorted_keys(t)) do
    if not set[k] then
      local name = tostring(k)
      P.add(path .. "." .. name, function()
        return "unknown field" .. (tail or base.suggest(name, known))
      end, name)
      ok = false
    end
  end
  return ok
end

function M.is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

function M.typename(v)
  if math.type(v) then return math.type(v) == "integer" and "an integer" or "a number" end
  return "a " .. type(v)
end


return M
