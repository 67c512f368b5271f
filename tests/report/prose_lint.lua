-- Faults of wording in a paper's extracted text (pdftotext), shared by
-- tests/report/check_pdf.lua (the paper make reproduce QUICK=1 builds) and
-- tests/lua/test_prose.lua (the committed paper):
--   double negative   two negations in one clause ("no set-up tried does not match",
--                     "not ... not", "not un..."), which say the opposite of what is meant
--   run-together      a macro that swallowed the space after it ("Tables 18 and 19.ts")
--   config syntax     key=value of a config in running text or a table label
--                     ("lr=0.003,min lr=0.0003"), and key = value in prose ("with dropout
--                     = 0 with init = torch", `init = "torch"`), where a reader needs words
--   run-together      also across a macro boundary: a sentence's end run into the next
--                     word ("the norms match.ts effects", "Appendix.ts")
--   bare interval     an interval without its point value ("and RMSNorm's by [0.0446,
--                     0.0588]": an interval after a verb or preposition, not a number)
--   code label        a label of code in prose: hyphenated names with digits
--                     ("torch-L4-ps-tied-w30cos-d0"), snake_case names ("claim_search_v1")
--   double parentheses  "((" or "))", or a parenthesis opened inside one still open
--   colon capital     a capital after a colon inside a sentence ("study: With dropout"),
--                     where the clause goes on in lower case (names and "I" excepted)
-- lint(text) returns a list of {kind =, at =} (the matched text with some context); the
-- statement ledger's table, a list of code names by design, is left out (without_ledger).
local M = {}

local NEG = { "not", "never", "cannot", "no", "none", "nothing", "neither" }
local VERB = { "does", "do", "did", "is", "are", "was", "were", "can", "could", "will",
  "would", "has", "have", "had" }
local FILE_EXT = { lua = true, tex = true, csv = true, json = true, pdf = true, txt = true,
  py = true, sh = true, gp = true, md = true, png = true, html = true, c = true, h = true }

-- "e.g.", "i.e.", "et al.", "vs.", "Fig.": a period that is no sentence's end
local ABBREV = { e = true, i = true, g = true, al = true, vs = true, fig = true, eq = true,
  cf = true, etc = true, www = true }
-- lower-case words that stand in equations of the text ("log = ...")
local MATH_WORD = { log = true, exp = true, max = true, min = true, ppl = true, own = true,
  last = true }
-- the words before an interval that say a value was expected there
local BARE = { by = true, is = true, was = true, were = true, are = true, of = false,
  changed = true, differed = true, ["and"] = true }
-- capitalized words that may follow a colon mid-sentence: names
local NAME = { LayerNorm = true, RMSNorm = true, Table = true, Tables = true, Figure = true,
  Figures = true, Section = true, Appendix = true, Stage = true, PyTorch = true,
  Holm = true, BLOOM = true, Tiny = true, Shakespeare = true, Wortsman = true, Adam = true,
  AdamW = true, Bible = true, Devil = true, Debian = true, Slurm = true, QEMU = true,
  GPT = true, Pre = true, Le = true }

local function context(text, a, b)
  return (text:sub(math.max(1, a - 50), b + 30):gsub("%s+", " "))
end

-- The statement ledger's table (the supplement) lists each assertion's study and analysis
-- by their code names, on purpose: on every page where its header stands (a longtable
-- repeats it), the text from the header to the page's end is the table's, not prose.
local LEDGER_HEAD = "Verdict%s+expected;%s+the%s+summary"

function M.without_ledger(raw)
  local pages = {}
  for page in (raw .. "\f"):gmatch("([^\f]*)\f") do
    local at = page:find(LEDGER_HEAD)
    pages[#pages + 1] = at and page:sub(1, at - 1) or page
  end
  return table.concat(pages, "\f")
end

function M.lint(raw)
  local text = M.without_ledger(raw):gsub("\u{2212}", "-"):gsub("\u{2019}", "'")
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
  -- a word's end run into the next one across a period: "match.ts", not "e.g." or a file
  for a, w, ext, b in flat:gmatch("()(%a+)%.(%l%l+)()") do
    if not FILE_EXT[ext] and not ABBREV[w:lower()] and flat:sub(a - 1, a - 1) ~= "/" then
      add("run-together", a, b)
    end
  end
  -- key = value in prose: a lower-case key of two letters or more (not a symbol such as
  -- "n = 5" or "T = 1"), then a value
  for a, b in flat:gmatch("()%f[%w_]%l[%l_]+ = [\"%w][%w%.%-\"]*()") do
    local key = flat:sub(a, b - 1):match("^(%S+)")
    if not MATH_WORD[key] then add("config syntax", a, b) end
  end
  -- an interval with no point value before it
  for a, w, b in flat:gmatch("()%f[%a](%a+)%s+%[%-?%d[%d.]*, %-?%d[%d.]*%]()") do
    local before = flat:sub(math.max(1, a - 30), a - 1)
    if BARE[w:lower()] and not before:find("interval") and not before:find("range") then
      add("bare interval", a, b)
    end
  end
  -- labels of code
  -- (in running text: a lower-case word before or after it; a table's cell of names,
  -- between numbers, is a table's)
  local function in_prose(a, b)
    local before = flat:sub(math.max(1, a - 40), a - 1):match("(%a+)[%s%p]*$")
    local after = flat:sub(b, b + 40):match("^[%s%p]*(%a+)")
    return before and before:match("^%l%l+$") and after and after:match("^%l%l+$")
  end
  for a, b in flat:gmatch("()%f[%w]%a[%w]*_[%w_]+()") do
    if in_prose(a, b) then add("code label", a, b) end
  end
  for a, w, b in flat:gmatch("()%f[%w]([%w]+%-[%w%.]+%-[%w%.]+%-[%w%.%-]+)()") do
    if w:find("%a%d") and in_prose(a, b) then add("code label", a, b) end
  end
  -- double parentheses: "((", "))", or a parenthetical clause opened inside another
  -- ("(dropout (0.1) ...", not a function's argument "N(0, 1)" or a tuple "(0.9, 0.95)")
  for a, b in flat:gmatch("()%(%(()") do add("double parentheses", a, b) end
  for a, b in flat:gmatch("()%)%)()") do add("double parentheses", a, b) end
  -- (not across a page break, "\f" in the PDF's text, nor across a float's caption,
  -- "Table 6: ..." or "Figure 3: ...": the reading order may put a float's text amid a
  -- sentence, "(the engine's <page break> 4.4 no norm ... training loss (nats)")
  local paged = text:gsub("\f", "\1"):gsub("%f[%w]Table %d+: ", "\1%0")
    :gsub("%f[%w]Figure %d+: ", "\1%0"):gsub("[ \t\r\n]+", " ")
  for a, inner, b in paged:gmatch("() %(%a([^()\1]-) %(%a()") do
    if #inner <= 160 then
      out[#out + 1] = { kind = "double parentheses", at = context(paged, a, b) }
    end
  end
  -- a capital after a colon inside a sentence
  for a, w, b in flat:gmatch("()%l: (%u[%w]*)()") do
    local named = NAME[w] or #w == 1 or w:match("^%u+$") ~= nil
    for n in pairs(NAME) do named = named or w:sub(1, #n) == n end
    if not named then add("colon capital", a, b) end
  end
  for a, b in flat:gmatch("()%f[%w_][%a_][%w_ ]-=[%w%.%-]+()") do
    local s = flat:sub(a, b - 1)
    -- key=value; not an equation of symbols ("D = 3", "n = 5" have spaces around =)
    if s:match("^[%a_][%w_ ]*%a=[%w%.%-]") then add("config syntax", a, b) end
  end
  return out
end

return M
