-- Task `agreement` (BLiMP's idea): minimal pairs of a pronoun's verb form, "thou art" vs
-- "thou are".  The pairs are mined from the training split's counts only
-- (repro.train_counts): for each pronoun and verb family, the form the corpus uses
-- after it (at least MIN_COUNT times, at least DOMINANCE of the family's uses after it)
-- against the family's other forms of the same length that the corpus never uses after
-- it.  Items are the held-out occurrences of "<pronoun> <its form>": the context is the
-- text up to and including the pronoun and its space.  For each pair of forms, as many
-- items whose answer is the one as items whose answer is the other (the rest dropped),
-- so a model's mere preference for one form's letters cancels (the untrained control).
-- Chance 1/2.
local CONTEXT_BYTES, MIN_COUNT, DOMINANCE = 200, 3, 0.8
local PRONOUNS = { "I", "thou", "he", "she", "it", "we", "you", "ye", "they" }
local FAMILIES = {
  { "am", "art", "is", "are" }, { "was", "wast", "were" },
  { "have", "hast", "hath", "has" }, { "do", "dost", "doth", "does" },
  { "shall", "shalt" }, { "will", "wilt" }, { "can", "canst" }, { "may", "mayst" },
}
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local queries = {}
for _, p in ipairs(PRONOUNS) do
  for _, fam in ipairs(FAMILIES) do
    for _, v in ipairs(fam) do
      queries[#queries + 1] = " " .. p .. " " .. v .. " "
      if p ~= "I" then queries[#queries + 1] = " " .. p:sub(1, 1):upper() .. p:sub(2) .. " " .. v .. " " end
    end
  end
end
local counts = repro.train_counts(queries)
local count = {}
for i, q in ipairs(queries) do count[q] = counts[i] end
local function uses(p, v)
  local n = count[" " .. p .. " " .. v .. " "]
  if p ~= "I" then n = n + count[" " .. p:sub(1, 1):upper() .. p:sub(2) .. " " .. v .. " "] end
  return n
end

-- wrong[pronoun][form] = the other forms of its family, same length, never used after it
local wrong = {}
for _, p in ipairs(PRONOUNS) do
  for _, fam in ipairs(FAMILIES) do
    local total, best, best_n = 0, nil, 0
    for _, v in ipairs(fam) do
      local n = uses(p, v)
      total = total + n
      if n > best_n then best, best_n = v, n end
    end
    if best and best_n >= MIN_COUNT and best_n >= DOMINANCE * total then
      local alts = {}
      for _, v in ipairs(fam) do
        if v ~= best and #v == #best and uses(p, v) == 0 then alts[#alts + 1] = v end
      end
      if #alts > 0 then
        wrong[p] = wrong[p] or {}
        wrong[p][best] = alts
      end
    end
  end
end

local by_pair, pairs_seen = {}, {}
for pos, pr, v in text:gmatch("()(%a+) (%l+)%f[^%a]") do
  local p = pr == "I" and "I" or pr:lower()
  local alts = wrong[p] and wrong[p][v]
  if alts and (pos == 1 or not text:sub(pos - 1, pos - 1):match("%a")) and
      (pr == p or pr == p:sub(1, 1):upper() .. p:sub(2)) then
    local pick = alts[repro.draws(1, #alts)[1] + 1]
    local key = v < pick and v .. "/" .. pick or pick .. "/" .. v
    if not by_pair[key] then
      by_pair[key] = {}
      pairs_seen[#pairs_seen + 1] = key
    end
    local side = by_pair[key][v] or {}
    by_pair[key][v] = side
    side[#side + 1] = { context = tail(text:sub(1, pos + #pr)), answer = v,
      distractors = { pick } }
  end
end
table.sort(pairs_seen)
local items = {}
for _, key in ipairs(pairs_seen) do
  local a, b = key:match("^(.-)/(.*)$")
  local sa, sb = by_pair[key][a] or {}, by_pair[key][b] or {}
  for i = 1, math.min(#sa, #sb) do
    items[#items + 1] = sa[i]
    items[#items + 1] = sb[i]
  end
end
return { items = items }
