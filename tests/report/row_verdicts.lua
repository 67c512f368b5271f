-- The abstract's verdicts against Table 1's (paper/main.tex): each row of the claims table
-- prints its verdict as \RowVerdict{<row>}, defined once by \DefRowVerdict{<row>}{...}, and
-- the abstract states each row's verdict through the same macro (\RowVerdict{<a>,<b>} for
-- rows that share one).  check(main, numbers) returns the problems, each in words:
--   a row of the table or a \RowVerdict the abstract uses that \DefRowVerdict never
--   defines, or one defined twice;
--   a row of the table whose verdict the abstract never states, or a row the abstract
--   names that the table does not have;
--   a \RowVerdict of the abstract outside every checked assertion's sentence, or whose
--   words (expanded through numbers.tex) differ from the verdict that assertion expects
--   (\Claim's, \Replicated's, or an \Assert's expected value when it is a word);
--   rows named together whose verdicts differ;
--   a verdict word typed in the abstract's prose instead of a \RowVerdict.
-- Used by tests/lua/test_row_verdicts.lua on the committed paper and on planted texts.
local A = require "repro.report.assertions"

local M = {}

-- Verdict words the abstract may say only through a row's macro.
M.WORDS = { "reproduced", "testable", "better", "worse", "equivalent", "inconclusive",
  "supported", "exploratory" }

-- The braced group opening at src[i]: its content and the index after it.
local function group(src, i)
  if src:sub(i, i) ~= "{" then return nil end
  local depth, j = 0, i
  while j <= #src do
    local c = src:sub(j, j)
    if c == "\\" then j = j + 1
    elseif c == "{" then depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
      if depth == 0 then return src:sub(i + 1, j - 1), j + 1 end
    end
    j = j + 1
  end
  return nil
end

-- Each use of \<name>{arg}...: a list of {args = {...}, start, stop}, n arguments each.
local function uses(src, name, n)
  local out, init = {}, 1
  while true do
    local a, b = src:find("\\" .. name .. "%f[^%a@]", init)
    if not a then return out end
    local args, p = {}, b + 1
    for _ = 1, n do
      p = src:find("[^ \t\n]", p) or #src + 1
      local text, after = group(src, p)
      if not text then break end
      args[#args + 1], p = text, after
    end
    if #args == n then out[#out + 1] = { args = args, start = a, stop = p } end
    init = b + 1
  end
end

local function trim(s) return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")) end

-- The macro bodies of numbers.tex and of the main text's one-line \newcommands.
local function definitions(...)
  local defs = {}
  for _, text in ipairs({ ... }) do
    for name, body in text:gmatch("\\newcommand{\\(%a+)}{([^\n]*)}\n") do defs[name] = body end
  end
  return defs
end

-- A text with its macros expanded through defs and LaTeX markup removed: the words.
local function expand(text, defs, depth)
  depth = depth or 0
  if depth > 10 then return text end
  text = text:gsub("\\(%a+)(%s*)", function(name, space)
    local body = defs[name]
    if body then return expand(body, defs, depth + 1) end
    return "\\" .. name .. space
  end)
  text = text:gsub("\\emph", ""):gsub("{}", ""):gsub("[{}]", "")
  return trim(text)
end

local function split_ids(list)
  local out = {}
  for id in list:gmatch("[^,%s]+") do out[#out + 1] = id end
  return out
end

-- The problems of main text `main` with the definitions of numbers.tex `numbers`.
function M.check(main, numbers)
  local problems = {}
  local function bad(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end
  local src = A.strip_comments(main)
  local defs = definitions(numbers or "", src)
  local rows = {}
  for _, u in ipairs(uses(src, "DefRowVerdict", 2)) do
    local id = trim(u.args[1])
    if rows[id] then bad("\\DefRowVerdict{%s} is defined twice", id) end
    rows[id] = expand(u.args[2], defs)
  end
  -- the claims table
  local label = src:find("\\label{tab:claims}", 1, true)
  local t1
  for p in src:sub(1, label or 0):gmatch("()\\begin{table}") do t1 = p end
  local t2 = label and src:find("\\end{table}", label, true)
  if not (t1 and t2) then
    bad("main text: no table labelled tab:claims")
    return problems
  end
  local in_table = {}
  for _, u in ipairs(uses(src:sub(t1, t2), "RowVerdict", 1)) do
    for _, id in ipairs(split_ids(u.args[1])) do
      if in_table[id] then bad("Table 1 prints the verdict of row %s twice", id) end
      in_table[id] = true
      if not rows[id] then bad("Table 1's row %s has no \\DefRowVerdict", id) end
    end
  end
  -- the abstract
  local a1 = select(2, src:find("\\begin{abstract}", 1, true))
  local a2 = a1 and src:find("\\end{abstract}", a1, true)
  if not (a1 and a2) then
    bad("main text: no abstract")
    return problems
  end
  local abstract = src:sub(a1 + 1, a2 - 1)
  local listed = {}
  local list = A.parse(abstract, "abstract", listed)
  for _, p in ipairs(listed) do bad("%s", p) end
  local stated, prose = {}, {}
  for _, a in ipairs(list) do
    local sentence = a.args[#a.args].text
    prose[#prose + 1] = sentence
    local expected = a.kind == "Claim" and a.args[4].text or a.kind == "Replicated" and
      a.args[2].text or a.args[3].text
    expected = trim(expected)
    -- an \Assert expecting true, false or a number checks a value, not a verdict word
    local word = not (expected == "true" or expected == "false" or tonumber(expected))
    for _, u in ipairs(uses(sentence, "RowVerdict", 1)) do
      local ids = split_ids(u.args[1])
      local first
      for _, id in ipairs(ids) do
        stated[id] = true
        if not rows[id] then bad("the abstract states row %s, which \\DefRowVerdict never defines", id)
        elseif not in_table[id] then bad("the abstract states row %s, which Table 1 does not print", id)
        else
          first = first or rows[id]
          if rows[id] ~= first then
            bad("the abstract names rows %s together, but their verdicts differ (%q, %q)",
              u.args[1], first, rows[id])
          end
          if word and rows[id] ~= expected then
            bad("the abstract prints row %s's verdict %q inside \\%s, which expects %q",
              id, rows[id], a.kind, expected)
          end
        end
      end
    end
  end
  -- the text outside the assertions
  local outside, last = {}, 1
  for _, a in ipairs(list) do
    outside[#outside + 1] = abstract:sub(last, a.start - 1)
    last = math.max(last, a.stop)
  end
  outside[#outside + 1] = abstract:sub(last)
  for _, u in ipairs(uses(table.concat(outside, " "), "RowVerdict", 1)) do
    bad("the abstract states row %s's verdict outside every checked assertion", u.args[1])
  end
  for id in pairs(in_table) do
    if not stated[id] then bad("the abstract does not state the verdict of Table 1's row %s", id) end
  end
  -- verdict words typed by hand
  local text = table.concat(prose, " ") .. " " .. table.concat(outside, " ")
  text = text:gsub("\\RowVerdict%s*%b{}", " "):gsub("\\%a+", " "):lower()
  for _, w in ipairs(M.WORDS) do
    if text:find("%f[%a]" .. w .. "%f[%A]") then
      bad("the abstract types the verdict word %q instead of a row's \\RowVerdict", w)
    end
  end
  local n = 0
  for _ in pairs(in_table) do n = n + 1 end
  return problems, n
end

return M
