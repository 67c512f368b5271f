-- A task file: one JSON object per line, {"context": "...", "choices": [...],
-- "answer": k} (k 0-based; 2 to MAX_CHOICES choices, each a continuation of the context).
-- `read` refuses, naming the file and the item (its line), anything else: a line that
-- is not JSON or not UTF-8, an item without an answer or with one that is not an integer
-- (Infinity, NaN, 1e300, 0.5) or out of range, an empty
-- or duplicate choice, an empty context or one longer than any window the engine accepts
-- (MAX_CONTEXT_BYTES, config.c's largest context), unknown keys, more than MAX_ITEMS
-- lines (counted before anything is parsed).  `encode` writes the same format with sorted
-- keys, so an item set has one byte form.
local base = require "repro.core.base"
local json = require "repro.core.json"
local fs = require "repro.core.fs"

local M = {}
M.MAX_CHOICES = 4
M.MAX_ITEMS = 10000
M.MAX_CONTEXT_BYTES = 65536
M.MAX_FILE_BYTES = 16 * 1024 * 1024

local KEYS = { context = true, choices = true, answer = true }

-- nil, or why the item (a decoded table) is not one.
function M.problem(it)
  if type(it) ~= "table" then return "not a JSON object" end
  for _, k in ipairs(base.sorted_keys(it)) do
    if not KEYS[k] then return string.format("unknown key %q", tostring(k)) end
  end
  local ctx = it.context
  if type(ctx) ~= "string" or ctx == "" then return "context: a non-empty string expected" end
  if #ctx > M.MAX_CONTEXT_BYTES then
    return string.format("context of %d bytes, longer than any window (%d)", #ctx,
      M.MAX_CONTEXT_BYTES)
  end
  if not utf8.len(ctx) then return "context: not UTF-8" end
  local ch = it.choices
  if type(ch) ~= "table" or #ch < 2 or #ch > M.MAX_CHOICES then
    return string.format("choices: 2 to %d strings expected", M.MAX_CHOICES)
  end
  local seen = {}
  for j = 1, #ch do
    local c = ch[j]
    if type(c) ~= "string" or c == "" then
      return string.format("choice %d: a non-empty string expected", j)
    end
    if not utf8.len(c) then return string.format("choice %d: not UTF-8", j) end
    if seen[c] then return string.format("choice %d duplicates choice %d", j, seen[c]) end
    seen[c] = j
  end
  local a = it.answer
  if a == nil then return "no answer" end
  -- an integer-valued JSON number only (1 and 1.0 alike); Infinity, NaN, 1e300 and 0.5
  -- are not integers a choice can be numbered by
  local ai = type(a) == "number" and math.tointeger(a) or nil
  if not ai then
    return string.format("answer: an integer from 0 to %d expected, got %s", #ch - 1,
      type(a) == "number" and string.format("%.14g", a) or type(a))
  end
  if ai < 0 or ai >= #ch then
    return string.format("answer %d out of range (0 to %d)", ai, #ch - 1)
  end
  return nil
end

-- The items of a task file, checked; a user error naming path and line otherwise.
function M.read(path)
  local text, err = fs.read(path, M.MAX_FILE_BYTES)
  if not text then base.user_error("task file %s: %s", path, tostring(err)) end
  local n = select(2, text:gsub("\n", ""))
  if n > M.MAX_ITEMS then
    base.user_error("task file %s: %d items, more than the %d a task file may hold", path, n,
      M.MAX_ITEMS)
  end
  if text ~= "" and text:sub(-1) ~= "\n" then
    base.user_error("task file %s: the last line does not end in a newline", path)
  end
  local items, line = {}, 0
  local function refuse(why)
    base.user_error("task file %s: item %d (line %d): %s", path, line, line, why)
  end
  for s in text:gmatch("([^\n]*)\n") do
    line = line + 1
    if not utf8.len(s) then refuse(string.format("not UTF-8 (byte %d)", select(2, utf8.len(s)))) end
    local ok, it = pcall(json.decode, s)
    if not ok then refuse("not JSON") end
    local why = M.problem(it)
    if why then refuse(why) end
    it.answer = math.tointeger(it.answer)
    items[#items + 1] = it
  end
  if #items == 0 then base.user_error("task file %s: no items", path) end
  return items
end

-- The file text of a list of items (each checked; an internal error otherwise).
function M.encode(items)
  local out = {}
  for i, it in ipairs(items) do
    local why = M.problem(it)
    if why then error(string.format("item %d: %s", i, why)) end
    out[i] = json.encode({ context = it.context, choices = json.array(it.choices),
      answer = it.answer })
  end
  return table.concat(out, "\n") .. "\n"
end

return M
