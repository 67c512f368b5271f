-- The problems of a study file (lua/repro/study/init.lua): collected, located in its
-- source and reported in one message, and the small helpers every check of a study's
-- fields shares (what a value is, the closest known name).
local base = require "repro.core.base"

local M = {}

function M.sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

function M.set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- The closest known name (base.suggest: one function for every place a name is typed).
M.distance, M.suggest = base.distance, base.suggest

-- The line of the n-th occurrence of `token` in the source as a whole word (or as a
-- quoted string when it is not an identifier), or nil.
function M.find_line(src, token, nth)
  if not src or token == nil then return nil end
  token = tostring(token)
  local pat
  if token:match("^[%a_][%w_]*$") then
    pat = "%f[%w_]" .. token:gsub("%p", "%%%0") .. "%f[^%w_]"
  else
    pat = "[\"']" .. token:gsub("%p", "%%%0") .. "[\"']"
  end
  local n = 0
  local line = 0
  for l in (src .. "\n"):gmatch("(.-)\n") do
    line = line + 1
    if not l:match("^%s*%-%-") and l:find(pat) then
      n = n + 1
      if n >= (nth or 1) then return line end
    end
  end
  return nil
end

-- At most this many problems are reported (and located in the source), the rest counted:
-- validation stays linear in the study's size however many problems it has.
M.MAX_PROBLEMS = 20
-- The M.MAX_PROBLEMS smallest of the strings given to add (sorted, in `list`) and how
-- many were given (`n`): the problems shown are the first ones in key order, found in
-- linear time (no sort of 200,000 unknown keys).
function M.smallest()
  local S = { list = {}, n = 0 }
  function S.add(k)
    S.n = S.n + 1
    local l = S.list
    if #l >= M.MAX_PROBLEMS and k >= l[#l] then return end
    local i = #l + 1
    while i > 1 and l[i - 1] > k do i = i - 1 end
    table.insert(l, i, k)
    if #l > M.MAX_PROBLEMS then l[#l] = nil end
  end
  return S
end

-- A problem's text is cut to this many bytes (a 1 MB key is shown by its start).
local MAX_PROBLEM_BYTES = 300

-- A collector of problems; `add(path, msg, token, nth)` locates `token` in the source
-- (msg may be a function giving the text, called only for a problem that is shown).  A
-- problem found again (a base key that breaks every variant) is listed once.
function M.collector(file, src)
  local list, more, seen = {}, 0, {}
  local P = {}
  function P.add(path, msg, token, nth)
    if #list >= M.MAX_PROBLEMS then
      more = more + 1
      return
    end
    if type(msg) == "function" then msg = msg() end -- a suggestion, computed when shown
    if token == nil then token = path and path:match("([%a_][%w_]*)$") end
    local line = token and #tostring(token) <= 200 and M.find_line(src, token, nth)
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
