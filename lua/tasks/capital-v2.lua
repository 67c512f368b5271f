-- Task `capital`, version 2: a held-out word as written vs the same word with its first
-- letter's case flipped ("The" vs "the"), after the text before it: where sentences
-- start.  Balanced per word and character before it: for each, as many items whose
-- answer is capitalized as items whose answer is not (the rest dropped), so each string
-- ("The", "the") is the answer as often as the distractor after the same character and
-- a scorer's preference for a word's spelling and a bigram's cue both cancel
-- (version 1 balanced per first letter and character before it only: a heuristic
-- that knows which words are usually capitalized scored .76); what is left is the text
-- further back (". " against "d ": a trigram's cue); at most MAX_PAIRS pairs, spread
-- over the words.  Names, never written in lower case, drop out by construction.
-- Chance 1/2.
local CONTEXT_BYTES, MAX_PAIRS = 200, 275
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local groups, letters = {}, {}
for p, w in text:gmatch("()(%a%l+)%f[^%a]") do
  if p > 1 and not text:sub(p - 1, p - 1):match("%a") then
    local key = w:lower() .. text:sub(p - 1, p - 1)
    if not groups[key] then
      groups[key] = { upper = {}, lower = {} }
      letters[#letters + 1] = key
    end
    local g = groups[key][w:sub(1, 1):match("%u") and "upper" or "lower"]
    g[#g + 1] = { p = p, w = w }
  end
end
table.sort(letters)
local pairs_ = {}
for _, key in ipairs(letters) do
  local g = groups[key]
  for i = 1, math.min(#g.upper, #g.lower) do pairs_[#pairs_ + 1] = { g.upper[i], g.lower[i] } end
end
local cands, stride = {}, math.max(1, math.ceil(#pairs_ / MAX_PAIRS))
for i = 1, #pairs_, stride do
  cands[#cands + 1] = pairs_[i][1]
  cands[#cands + 1] = pairs_[i][2]
end
local items = {}
for i = 1, #cands do
  local c = cands[i]
  local first = c.w:sub(1, 1)
  local flipped = (first:match("%u") and first:lower() or first:upper()) .. c.w:sub(2)
  items[#items + 1] = { context = tail(text:sub(1, c.p - 1)), answer = c.w,
    distractors = { flipped } }
end
return { items = items }
