-- Task `capital`: a held-out word as written vs the same word with its first letter's
-- case flipped ("The" vs "the", "Rome" vs "rome"), after the text before it: where
-- sentences start and which words are names.  Chance 1/2.
local CONTEXT_BYTES, MAX_RAW = 200, 2000
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local cands = {}
for p, w in text:gmatch("()(%a%l+)%f[^%a]") do
  if p > 1 and not text:sub(p - 1, p - 1):match("%a") then
    cands[#cands + 1] = { p = p, w = w }
  end
end
local items, stride = {}, math.max(1, #cands // MAX_RAW)
for i = 1, #cands, stride do
  local c = cands[i]
  local first = c.w:sub(1, 1)
  local flipped = (first:match("%u") and first:lower() or first:upper()) .. c.w:sub(2)
  items[#items + 1] = { context = tail(text:sub(1, c.p - 1)), answer = c.w,
    distractors = { flipped } }
end
return { items = items }
