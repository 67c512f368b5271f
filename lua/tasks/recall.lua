-- Task `recall` (in-context copy; an induction-head test on the corpus's words): a list
-- of LIST_LEN distinct words of the held-out text, drawn at random (repro.draws: no
-- natural order to learn), a newline, then the list again cut before its c-th word;
-- the answer is that word, the distractor the list's d-th word (c ~= d, both in the
-- list, so both strings are in the window).  Items come in pairs on one list, (c, d) and
-- (d, c), so each string is the answer of one item and the distractor of the other: a
-- scorer that ignores the window (any fixed-order n-gram, an untrained model) prefers
-- the same string in both and gets one of the two right.  Only the copy gives the
-- answer.  The whole item fits a 128-character window.  Chance 1/2.
local LIST_LEN, MIN_LEN, MAX_LEN, N_LISTS = 6, 4, 8, 200
local text = repro.text("validation")

local seen, words = {}, {}
for w in text:gmatch("%f[%a](%l+)%f[^%a]") do
  if #w >= MIN_LEN and #w <= MAX_LEN and not seen[w] then
    seen[w] = true
    words[#words + 1] = w
  end
end
if #words < 4 * LIST_LEN then return { skip = "fewer than 24 distinct words" } end

local items = {}
for _ = 1, N_LISTS do
  local list, used = {}, {}
  while #list < LIST_LEN do
    local w = words[repro.draws(1, #words)[1] + 1]
    if not used[w] then
      used[w] = true
      list[#list + 1] = w
    end
  end
  -- two distinct positions among 2..LIST_LEN (the second copy's first word is cued by
  -- nothing but the newline)
  local c = 2 + repro.draws(1, LIST_LEN - 1)[1]
  local d = 2 + repro.draws(1, LIST_LEN - 2)[1]
  if d >= c then d = d + 1 end
  local shown = table.concat(list, " ") .. "\n"
  for _, k in ipairs({ { c, d }, { d, c } }) do
    local a, b = k[1], k[2]
    items[#items + 1] = { context = shown .. table.concat(list, " ", 1, a - 1) .. " ",
      answer = list[a], distractors = { list[b] } }
  end
end
return { items = items }
