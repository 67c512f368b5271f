-- Task `order`: a held-out pair of adjacent lowercase words vs the same two words
-- swapped, after the text before them.  Chance 1/2.
local CONTEXT_BYTES, MAX_RAW = 200, 2000
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local cands = {}
for p, a, b in text:gmatch("()(%l+) (%l+)") do
  if a ~= b and #a >= 2 and #b >= 2 and p > 1 and not text:sub(p - 1, p - 1):match("%a") then
    cands[#cands + 1] = { p = p, a = a, b = b }
  end
end
local items, stride = {}, math.max(1, #cands // MAX_RAW)
for i = 1, #cands, stride do
  local c = cands[i]
  items[#items + 1] = { context = tail(text:sub(1, c.p - 1)), answer = c.a .. " " .. c.b,
    distractors = { c.b .. " " .. c.a } }
end
return { items = items }
