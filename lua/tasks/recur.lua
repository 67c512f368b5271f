-- Task `recur` (in-context recall in running text): a rare word of the held-out text
-- (at least MIN_LEN letters, at most MAX_TRAIN occurrences in the training split,
-- repro.train_counts) at its second occurrence within GAP characters of its first; the
-- context is the text before the second occurrence, cut to CONTEXT_BYTES so that it
-- holds the first occurrence, and the answer the word.  The distractor is another such
-- word of the same length, case (lower, Capitalized, UPPER) and character before it that
-- is not in the context, and items come in pairs that swap answer and distractor, so a scorer that ignores the window (any fixed-order n-gram, an
-- untrained model) prefers the same string in both and gets one of the two right; the
-- word having occurred in the window is what gives the answer.  The context plus the
-- answer fit a 128-character window.  Chance 1/2.
local CONTEXT_BYTES, GAP, MIN_LEN, MAX_TRAIN = 112, 110, 4, 20
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

-- every occurrence of every word of MIN_LEN letters or more, by word
local at, order = {}, {}
for p, w in text:gmatch("()%f[%a](%a+)%f[^%a]") do
  if #w >= MIN_LEN then
    if not at[w] then
      at[w] = {}
      order[#order + 1] = w
    end
    local list = at[w]
    list[#list + 1] = p
  end
end
-- only the words that recur within GAP are counted in the training split (each count is
-- a pass over it)
local queries, index = {}, {}
for _, w in ipairs(order) do
  local ps = at[w]
  for j = 2, #ps do
    if ps[j] - ps[j - 1] <= GAP then
      queries[#queries + 1] = w
      index[w] = #queries
      break
    end
  end
end
local train_count = repro.train_counts(queries)

local function has_word(s, w)
  return s:find("%f[%a]" .. w .. "%f[^%a]") ~= nil
end

local function case_of(w)
  if w:match("^%l+$") then return "l" end
  if w:match("^%u%l+$") then return "c" end
  if w:match("^%u+$") then return "u" end
  return "m"
end

-- candidates by length, case and the character before: {word =, context =}
local by_len, lens = {}, {}
for _, w in ipairs(order) do
  if index[w] and train_count[index[w]] <= MAX_TRAIN then
    local ps = at[w]
    for j = 2, #ps do
      if ps[j] - ps[j - 1] <= GAP then
        local ctx = tail(text:sub(1, ps[j] - 1))
        -- the first occurrence whole inside the context
        if #ctx >= ps[j] - ps[j - 1] + 1 and has_word(ctx, w) then
          local key = string.format("%03d%s%03d", #w, case_of(w), ctx:byte(-1))
          if not by_len[key] then
            by_len[key] = {}
            lens[#lens + 1] = key
          end
          local l = by_len[key]
          l[#l + 1] = { word = w, context = ctx, p = ps[j] }
        end
        break
      end
    end
  end
end
table.sort(lens)

local items = {}
for _, n in ipairs(lens) do
  local l = by_len[n]
  table.sort(l, function(x, y) return x.p < y.p end)
  local i = 1
  while i < #l do
    local a, b = l[i], l[i + 1]
    if a.word ~= b.word and not has_word(a.context, b.word) and
        not has_word(b.context, a.word) then
      items[#items + 1] = { context = a.context, answer = a.word, distractors = { b.word } }
      items[#items + 1] = { context = b.context, answer = b.word, distractors = { a.word } }
      i = i + 2
    else
      i = i + 1
    end
  end
end
return { items = items }
