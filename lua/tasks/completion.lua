-- Task `completion` (LAMBADA's idea): a held-out line's last word among 4 candidates of
-- the same length and the nearest frequency ranks in the validation split.  Context: the
-- line before and the line up to its last word.  Chance 1/4.
local CONTEXT_BYTES, MAX_RAW = 200, 2000
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local freq = {}
for w in text:gmatch("%a+") do freq[w] = (freq[w] or 0) + 1 end
local vocab = {}
for w in pairs(freq) do vocab[#vocab + 1] = w end
table.sort(vocab, function(a, b)
  if freq[a] ~= freq[b] then return freq[a] > freq[b] end
  return a < b
end)
local by_len, at = {}, {}
for _, w in ipairs(vocab) do
  local list = by_len[#w] or {}
  by_len[#w] = list
  list[#list + 1] = w
  at[w] = #list
end

-- the 3 words of w's length nearest to it in frequency rank
local function neighbours(w)
  local list, i, out = by_len[#w], at[w], {}
  for d = 1, #list do
    for _, j in ipairs({ i - d, i + d }) do
      if #out < 3 and list[j] then out[#out + 1] = list[j] end
    end
    if #out == 3 then return out end
  end
  return nil
end

local cands, prev = {}, ""
for line in text:gmatch("([^\n]*)\n") do
  local head, last = line:match("^(.*%s)(%a+)%p*$")
  if head and #last >= 3 and select(2, head:gsub("%a+", "")) >= 3 then
    local d = neighbours(last)
    if d then cands[#cands + 1] = { context = tail(prev .. "\n" .. head), answer = last,
      distractors = d } end
  end
  prev = line
end
local items, stride = {}, math.max(1, #cands // MAX_RAW)
for i = 1, #cands, stride do items[#items + 1] = cands[i] end
return { items = items }
