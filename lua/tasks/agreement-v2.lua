-- Task `agreement`, version 2 (BLiMP's design): minimal pairs of a pronoun's verb form,
-- "thou art" vs "thou are".  The pairs of forms are mined from the training split's counts
-- only (repro.train_counts): for each pronoun and verb family, the form the corpus uses
-- after it (at least MIN_COUNT times, at least DOMINANCE of the family's uses after it)
-- against the family's other forms that the corpus uses after it at most RARE times as
-- often (a substring count also finds " he are " across a clause).  Forms of any length
-- (version 1 kept the same length only, which left 90 items on Tiny Shakespeare, 69 of
-- them am/is) and more verb families (the modals' -st forms, -est/-s/-eth present forms).
-- Items come in minimal pairs from the held-out occurrences of "<pronoun> <its form>"
-- (below): the context is the text up to and including the pronoun and its space, and
-- the counterpart differs only in the pronoun.  Chance 1/2.
local CONTEXT_BYTES, MIN_COUNT, DOMINANCE, RARE, MAX_PAIRS = 200, 3, 0.8, 0.02, 275
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

-- takes[w] = the pronouns whose own form of w's family is w: the pronouns a counterpart
-- of an item whose wrong form is w can take
local takes = {}
for _, p in ipairs(PRONOUNS) do
  for form in pairs(wrong[p] or {}) do
    takes[form] = takes[form] or {}
    takes[form][#takes[form] + 1] = p
  end
end
local function cased(p, like)
  if p == "I" or like == like:lower() then return p end
  return p:sub(1, 1):upper() .. p:sub(2)
end

-- Minimal pairs (BLiMP's design): each held-out occurrence "<pronoun> <form>" gives two
-- items with the same context but for the pronoun: the occurrence (answer its form, the
-- distractor a form of its family it never takes) and its counterpart, the context with
-- the pronoun replaced by one that takes that distractor and never the form (answer the
-- distractor, distractor the form).  Every pair of forms is balanced by construction, so
-- a model's mere preference for one form's letters cancels, and nothing in the context but
-- the pronoun tells the forms apart.  (Version 2 as first built balanced the occurrences of
-- each pair against each other and kept 172 of 580 on Tiny Shakespeare.)
-- every word followed by a space and a lowercase word (version 1's pattern consumed both
-- words, so a pronoun right after a matched pair, "that he knows", was never seen)
local pairs_found = {}
for pos, pr in text:gmatch("()%f[%a](%a+)") do
  local v = text:match("^ (%l+)%f[^%a]", pos + #pr)
  local p = pr == "I" and "I" or pr:lower()
  local alts = v and wrong[p] and wrong[p][v]
  if alts and (pr == p or pr == p:sub(1, 1):upper() .. p:sub(2)) then
    -- the wrong forms some other pronoun takes while never taking v
    local usable = {}
    for _, w in ipairs(alts) do
      local qs = {}
      for _, q in ipairs(takes[w] or {}) do
        local qw = wrong[q][w]
        for _, x in ipairs(qw) do
          if x == v then qs[#qs + 1] = q break end
        end
      end
      if #qs > 0 then usable[#usable + 1] = { w = w, qs = qs } end
    end
    if #usable > 0 then
      local u = usable[repro.draws(1, #usable)[1] + 1]
      local q = u.qs[repro.draws(1, #u.qs)[1] + 1]
      local ctx = tail(text:sub(1, pos + #pr))
      -- the pronoun is the context's last word but its space
      local counter = ctx:sub(1, #ctx - #pr - 1) .. cased(q, pr) .. " "
      pairs_found[#pairs_found + 1] = {
        { context = ctx, answer = v, distractors = { u.w } },
        { context = counter, answer = u.w, distractors = { v } } }
    end
  end
end
-- at most MAX_PAIRS pairs, drawn without replacement, kept in text order: 550 items, the
-- host's 50 demonstrations and 500 test items (repro.tasks MAX_POOL, MAX_ITEMS), so
-- no item is dropped; the pool's draw takes one item of some pairs, so the test items'
-- balance per pair of forms is nearly, not exactly, even (tasks show counts it)
local keep = {}
if #pairs_found > MAX_PAIRS then
  local idx = {}
  for i = 1, #pairs_found do idx[i] = i end
  for i = 1, MAX_PAIRS do
    local j = i + repro.draws(1, #idx - i + 1)[1]
    idx[i], idx[j] = idx[j], idx[i]
    keep[idx[i]] = true
  end
else
  for i = 1, #pairs_found do keep[i] = true end
end
local items = {}
for i, pr in ipairs(pairs_found) do
  if keep[i] then
    items[#items + 1] = pr[1]
    items[#items + 1] = pr[2]
  end
end
return { items = items }
