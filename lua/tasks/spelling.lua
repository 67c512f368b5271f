-- Task `spelling`: a dictionary word of the held-out text vs a one-letter substitution
-- of it that is neither a dictionary word nor a word of the text, in the same context
-- (the text before the word).  "Real" is Debian's wamerican list (repro.dictionary).
-- The substituted letter is drawn from the interior letters of the candidate words
-- themselves, so the real and the made-up letters have one distribution and a model's
-- mere preference for some letters cancels, and neither the real nor the made-up letter
-- repeats a neighbour (the untrained control).  Chance 1/2.
local CONTEXT_BYTES, MAX_RAW = 200, 2000
local text = repro.text("validation")
local dict = {}
for _, w in ipairs(repro.dictionary()) do dict[w] = true end
local seen = {}
for w in text:gmatch("%a+") do seen[w:lower()] = true end

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local cands = {}
for p, w in text:gmatch("()(%l+)") do
  if #w >= 4 and dict[w] and p > 1 and not text:sub(p - 1, p - 1):match("%a") then
    cands[#cands + 1] = { p = p, w = w }
  end
end
local items, stride = {}, math.max(1, #cands // MAX_RAW)
local pool = {}
for i = 1, #cands, stride do pool[#pool + 1] = cands[i].w:sub(2, -2) end
local letters = table.concat(pool)
for i = 1, #cands, stride do
  local c = cands[i]
  local where, what = repro.draws(20, #c.w - 2), repro.draws(20, #letters)
  for k = 1, 20 do
    local pos, l = 2 + where[k], what[k] + 1
    local new, prev, next_ = letters:sub(l, l), c.w:sub(pos - 1, pos - 1), c.w:sub(pos + 1, pos + 1)
    local old = c.w:sub(pos, pos)
    local bad = c.w:sub(1, pos - 1) .. new .. c.w:sub(pos + 1)
    -- neither letter repeats a neighbour: an untrained model with tied embeddings favours
    -- a repeated character, which would favour one side
    local doubles = new == prev or new == next_ or old == prev or old == next_
    if bad ~= c.w and not doubles and not dict[bad] and not seen[bad] then
      items[#items + 1] = { context = tail(text:sub(1, c.p - 1)), answer = c.w,
        distractors = { bad } }
      break
    end
  end
end
return { items = items }
