-- Faults of wording in a paper's extracted text (pdftotext), shared by
-- tests/report/check_pdf.lua (the paper make reproduce QUICK=1 builds) and
-- tests/lua/test_prose.lua (the committed paper):
--   double negative   two negations in one clause ("no set-up tried does not match",
--                     "not ... not", "not un..."), which say the opposite of what is meant
--   run-together      a macro that swallowed the space after it ("Tables 18 and 19.ts")
--   config syntax     key=value of a config in running text or a table label
--                     ("lr=0.003,min lr=0.0003"), where a reader needs display labels
-- lint(text) returns a list of {kind =, at =} (the matched text with some context).
local M = {}

local NEG = { "not", "never", "cannot", "no", "none", "nothing", "neither" }
local VERB = { "does", "do", "did", "is", "are", "was", "were", "can", "could", "will",
  "would", "has", "have", "had" }
local FILE_EXT = { lua = true, tex = true, csv = true, json = true, pdf = true, txt = true,
  py = true, sh = true, gp = true, md = true, png = true, html = true, c = true, h = true }

local function context(text, a, b)
  return (text:sub(math.max(1, a - 50), b + 30):gsub("%s+", " "))
end

function M.lint(raw)
  local text = raw:gsub("\u{2212}", "-"):gsub("\u{2019}", "'")
  local flat = text:gsub("%s+", " ")
  local out = {}
  local function add(kind, a, b) out[#out + 1] = { kind = kind, at = context(flat, a, b) } end
  -- clauses: split at . ; : ( ) and commas, so parallel lists ("no interval, no test")
  -- and neither/nor pairs in separate clauses stay apart
  for clause, stop in flat:gmatch("([^%.;:,%(%)]+)()") do
    local words = {}
    local lower = clause:lower()
    for w in lower:gmatch("[%a']+") do words[#words + 1] = w end
    local negs = 0
    for i, w in ipairs(words) do
      local neg = w:match("n't$") ~= nil
      for _, n in ipairs(NEG) do if w == n then neg = true end end
      -- "neither ... nor" is one negation; "not only" and "no more than" are not negations
      if w == "not" and words[i + 1] == "only" then neg = false end
      if w == "no" and (words[i + 1] == "more" or words[i + 1] == "less" or
          words[i + 1] == "longer") then neg = false end
      if neg then negs = negs + 1 end
    end
    local bad = false
    for w in lower:gmatch("%f[%a]not (un%a+)") do
      if w ~= "under" and w ~= "until" and w ~= "unless" and w ~= "unit" then bad = true end
    end
    if negs >= 2 and lower:find("%f[%a]not%f[%A]") then
      -- "not" with another negation in the same clause: "no set-up ... does not",
      -- "not ... not", "never ... not"
      local first = lower:find("%f[%a]no%f[%A]") or lower:find("%f[%a]never%f[%A]") or
        lower:find("%f[%a]none%f[%A]") or lower:find("%f[%a]nothing%f[%A]")
      for _, v in ipairs(VERB) do
        local nt = lower:find("%f[%a]" .. v .. " not%f[%A]")
        if first and nt and first < nt then bad = true end
      end
      local _, c = lower:gsub("%f[%a]not%f[%A]", "")
      if c >= 2 then bad = true end
    end
    if bad then add("double negative", stop - #clause, stop - 1) end
  end
  for a, ext, b in flat:gmatch("()%d%.(%l%l+)()") do
    if not FILE_EXT[ext] then add("run-together", a, b) end
  end
  for a, b in flat:gmatch("()%f[%w_][%a_][%w_ ]-=[%w%.%-]+()") do
    local s = flat:sub(a, b - 1)
    -- key=value; not an equation of symbols ("D = 3", "n = 5" have spaces around =)
    if s:match("^[%a_][%w_ ]*%a=[%w%.%-]") then add("config syntax", a, b) end
  end
  return out
end

return M
