-- Task `agreement`, version 2 (BLiMP's idea): minimal pairs of a pronoun's verb form,
-- "thou art" vs "thou are".  The pairs are mined from the training split's counts only
-- (repro.train_counts): for each pronoun and verb family, the form the corpus uses
-- after it (at least MIN_COUNT times, at least DOMINANCE of the family's uses after it)
-- against the family's other forms that the corpus uses after it at most RARE times as
-- often (a substring count also finds " he are " across a clause; any length:
-- version 1 kept the same length only, which left 90 items on Tiny Shakespeare, 69 of
-- them am/is; the pair balance below is what keeps a scorer's taste for one form's
-- letters from answering; each occurrence's wrong form is the one whose pair lacks
-- items of its side most, so fewer are dropped).  Version 2 also has more verb families (the modals' -st
-- forms, -est/-s/-eth present forms).  Items are the held-out occurrences of "<pronoun> <its form>": the context is the
-- text up to and including the pronoun and its space.  For each pair of forms, as many
-- items whose answer is the one as items whose answer is the other (the rest dropped),
-- so a model's mere preference for one form's letters cancels (the untrained control).
-- Chance 1/2.
local CONTEXT_BYTES, MIN_COUNT, DOMINANCE, RARE = 200, 3, 0.8, 0.02
local PRONOUNS = { "I", "thou", "he", "she", "it", "we", "you", "ye", "they", "this", "these",
  "those" }
local FAMILIES = {
  { "am", "art", "is", "are" }, { "was", "wast", "were" },
  { "have", "hast", "hath", "has" }, { "do", "dost", "doth", "does" },
  { "shall", "shalt" }, { "will", "wilt" }, { "can", "canst" }, { "may", "mayst" },
  { "would", "wouldst" }, { "should", "shouldst" }, { "could", "couldst" },
  { "know", "knowest", "knows", "knoweth" },
  { "say", "sayest", "says", "saith" }, { "think", "thinkest", "thinks" },
  { "love", "lovest", "loves", "loveth" }, { "make", "makest", "makes", "maketh" },
  { "come", "comest", "comes", "cometh" }, { "speak", "speakest", "speaks", "speaketh" },
  { "see", "seest", "sees", "seeth" }, { "go", "goest", "goes", "goeth" },
  { "give", "givest", "gives", "giveth" }, { "take", "takest", "takes", "taketh" },
}
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

-- the (pronoun, family) pairs the held-out text has at all: only their forms are counted
-- in the training split (each count is a pass over it)
local family_of, present = {}, {}
for i, fam in ipairs(FAMILIES) do
  for _, v in ipairs(fam) do family_of[v] = i end
end
for pos, pr in text:gmatch("()%f[%a](%a+)") do
  local v = text:match("^ (%l+)%f[^%a]", pos + #pr)
  if v and family_of[v] then present[(pr == "I" and "I" or pr:lower()) .. "/" .. family_of[v]] = true end
end
local queries = {}
for _, p in ipairs(PRONOUNS) do
  for i, fam in ipairs(FAMILIES) do
    if present[p .. "/" .. i] then
      for _, v in ipairs(fam) do
        queries[#queries + 1] = " " .. p .. " " .. v .. " "
        if p ~= "I" then
          queries[#queries + 1] = " " .. p:sub(1, 1):upper() .. p:sub(2) .. " " .. v .. " "
        end
      end
    end
  end
end
local counts = repro.train_counts(queries)
local count = {}
for i, q in ipairs(queries) do count[q] = counts[i] end
local function uses(p, v)
  if not count[" " .. p .. " " .. v .. " "] then return 0 end
  local n = count[" " .. p .. " " .. v .. " "]
  if p ~= "I" then n = n + count[" " .. p:sub(1, 1):upper() .. p:sub(2) .. " " .. v .. " "] end
  return n
end

-- wrong[pronoun][form] = the other forms of its family it (almost) never takes
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
        if v ~= best and uses(p, v) <= RARE * best_n then alts[#alts + 1] = v end
      end
      if #alts > 0 then
        wrong[p] = wrong[p] or {}
        wrong[p][best] = alts
      end
    end
  end
end

local by_pair, pairs_seen = {}, {}
-- every word followed by a space and a lowercase word (version 1's pattern consumed both
-- words, so a pronoun right after a matched pair, "that he knows", was never seen)
for pos, pr in text:gmatch("()%f[%a](%a+)") do
  local v = text:match("^ (%l+)%f[^%a]", pos + #pr)
  local p = pr == "I" and "I" or pr:lower()
  local alts = v and wrong[p] and wrong[p][v]
  if alts and
      (pr == p or pr == p:sub(1, 1):upper() .. p:sub(2)) then
    -- the wrong form whose pair most lacks items answered by v (the balance below keeps
    -- min of the two sides), ties by a draw
    local best_d, ties = nil, {}
    for _, alt in ipairs(alts) do
      local k = v < alt and v .. "/" .. alt or alt .. "/" .. v
      local bp = by_pair[k] or {}
      local d = #(bp[alt] or {}) - #(bp[v] or {})
      if not best_d or d > best_d then best_d, ties = d, { alt }
      elseif d == best_d then ties[#ties + 1] = alt end
    end
    local pick = ties[repro.draws(1, #ties)[1] + 1]
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
