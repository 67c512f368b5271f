-- Task `speaker` (turn-taking): after a blank line, the name of the speaker who speaks
-- next, in the corpus's format (a line that is a name and a colon, such as
-- "MENENIUS:"), vs the name of the speaker who just spoke.  In a dialogue between A and
-- B each name is the answer of some items and the distractor of others, so a model's
-- mere preference for some letters or lengths cancels (the untrained control).  Chance 1/2.
--
-- Version 1 only: retired from the core2 suite.  At the model's 128-character
-- window the header of the speaker who just spoke is inside the window on 72 % of the
-- Tiny Shakespeare items, and there "not the last speaker" is right every time (.72 of
-- all items for sure, about .83 with a guess on the rest), while the trained models
-- scored .48.  A distractor that is in the window and is not the last speaker exists only
-- where the window holds two other headers (37 % of turns), and there alternation ("the
-- speaker before the last") answers: no choice of distractor leaves the copy heuristics
-- at chance at this window (measured on tasks/tinyshakespeare/speaker-v1.jsonl).
local CONTEXT_BYTES = 200
local text = repro.text("validation")

local function tail(s)
  if #s <= CONTEXT_BYTES then return s end
  return (s:sub(-CONTEXT_BYTES):gsub("^[^%s]*%s", ""))
end

local items, prev = {}, nil
for p, name in text:gmatch("\n\n()(%u[%a' ]*):\n") do
  if prev and prev ~= name then
    items[#items + 1] = { context = tail(text:sub(1, p - 1)), answer = name .. ":",
      distractors = { prev .. ":" } }
  end
  prev = name
end
return { items = items }
