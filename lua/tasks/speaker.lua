-- Task `speaker`: after a blank line, the speaker's name in the corpus's format (a line
-- that is a name and a colon, such as "MENENIUS:") vs a common word of the same length
-- written the same way (case and colon).  The names are the held-out text's own; the
-- words are its most frequent lowercase words that are not names.  Chance 1/2.
local CONTEXT_BYTES, COMMON = 200, 400
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local cands, names = {}, {}
for p, name in text:gmatch("\n\n()(%u[%a' ]*):\n") do
  cands[#cands + 1] = { p = p, name = name }
  for w in name:gmatch("%a+") do names[w:lower()] = true end
end
local freq = {}
for w in text:gmatch("%l+") do freq[w] = (freq[w] or 0) + 1 end
local words = {}
for w in pairs(freq) do if not names[w] then words[#words + 1] = w end end
table.sort(words, function(a, b)
  if freq[a] ~= freq[b] then return freq[a] > freq[b] end
  return a < b
end)
local by_len = {}
for i = 1, math.min(COMMON, #words) do
  local w = words[i]
  by_len[#w] = by_len[#w] or {}
  table.insert(by_len[#w], w)
end

local items = {}
for _, c in ipairs(cands) do
  local list = by_len[#c.name]
  if list and not c.name:find(" ") then
    local w = list[repro.draws(1, #list)[1] + 1]
    if c.name == c.name:upper() then
      w = w:upper()
    else
      w = w:sub(1, 1):upper() .. w:sub(2)
    end
    items[#items + 1] = { context = tail(text:sub(1, c.p - 1)), answer = c.name .. ":",
      distractors = { w .. ":" } }
  end
end
return { items = items }
