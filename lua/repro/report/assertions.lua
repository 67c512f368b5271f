-- Checked assertions: the hand-written text of a paper states a finding only
-- inside a macro that names the analysis it relies on and the verdict it expects, and the
-- build checks the two against the study's summary.  The macros (\Claim, \Replicated,
-- \Assert; numbers.tex defines them to typeset their sentence only) and \IfStudy:
-- docs/DESIGN.md, "Checked assertions".  `check` returns the faults, each naming the file
-- and line: contradicted, missing, unknown, syntax and uncarried (a finding sentence that
-- asserts nothing); a lenient check (make reproduce QUICK=1) lists the contradicted and
-- missing ones instead of failing.  This module knows no paper: lua/repro/report/init.lua
-- runs it on the paper's main text.
local F = require "repro.report.texfmt"
local base = require "repro.core.base"

local M = {}

local SECTIONS = { "Results", "Discussion", "Conclusion" }
local VERDICT_WORDS = { "reproduced", "not testable", "worse", "better", "equivalent",
  "inconclusive" }
local RESULT_SUFFIXES = { "Delta", "AbsDelta", "CI", "CILo", "CIHi", "DZ", "PT", "PSignflip",
  "PHolm", "PTost", "PHolmRuleOne", "RelChange", "PplChange", "Verdict", "Verdicts",
  "InteractionVerdicts", "Sentence", "Coef", "Factor" }

-- The macros and their arguments: optional one, then mandatory ones.
local MACROS = {
  Claim = { optional = true, n = 5 },
  Replicated = { optional = true, n = 3 },
  Assert = { optional = false, n = 4 },
}

-- Source text ----------------------------------------------------------------------------

-- Every character but newlines as a space: offsets and lines stay where they were.
local function blank(s) return (s:gsub("[^\n]", " ")) end

-- The source with its comments blanked (a % not escaped by a backslash to the line's end).
function M.strip_comments(src)
  return (src:gsub("[^\n]+", function(line)
    local j = line:find("[\\%%]")
    -- a backslash escapes the character after it
    while j and line:sub(j, j) == "\\" do j = line:find("[\\%%]", j + 2) end
    if j then return line:sub(1, j - 1) .. blank(line:sub(j)) end
  end))
end

-- The line of offset `pos` in `src`.
local function line_of(src, pos)
  local n = 1
  for _ in src:sub(1, pos - 1):gmatch("\n") do n = n + 1 end
  return n
end

-- The group that opens at `pos` (the character there is `open`): its content, the offset
-- of the content's start and the offset after the closing character; nil when unbalanced.
local function group(src, pos, open, close)
  if src:sub(pos, pos) ~= open then return nil end
  local depth, j = 0, pos
  while j <= #src do
    local c = src:sub(j, j)
    if c == "\\" then j = j + 1
    elseif c == open then depth = depth + 1
    elseif c == close then
      depth = depth - 1
      if depth == 0 then return src:sub(pos + 1, j - 1), pos + 1, j + 1 end
    end
    j = j + 1
  end
  return nil
end

local function skip_space(src, pos)
  return src:find("[^ \t\n]", pos) or #src + 1
end

-- The arguments of the macro whose name ends before `pos`: {opt = ..., [1..n] = {text,
-- start}}, and the offset after them; nil and why when one is missing.
local function arguments(src, pos, optional, n)
  local args, p = {}, pos
  if optional then
    local q = skip_space(src, p)
    if src:sub(q, q) == "[" then
      local text, _, after = group(src, q, "[", "]")
      if not text then return nil, "an optional argument [...] without its ]" end
      args.opt, p = text, after
    end
  end
  for k = 1, n do
    local q = skip_space(src, p)
    local text, start, after = group(src, q, "{", "}")
    if not text then
      return nil, string.format("expected %d arguments in braces, found %d", n, k - 1)
    end
    args[k] = { text = text, start = start }
    p = after
  end
  return args, p
end

-- The next use of \<name> in `src` from offset `init` (followed, after spaces, by a
-- character of the class `opens`: not its definition, \newcommand{\<name>}): its offset
-- and the offset after the name; nil when there is none.
local function next_use(src, name, init, opens)
  while true do
    local a, b = src:find("\\" .. name, init, true)
    if not a then return nil end
    local q = skip_space(src, b + 1)
    if not src:sub(b + 1, b + 1):match("%a") and src:sub(q, q):match(opens) then
      return a, b + 1
    end
    init = b + 1
  end
end

-- The source with the branch of every \IfStudy{<study>}{A}{B} that is not taken blanked
-- (A when the study has not run, B when it has): `have(study)` says which.  Problems
-- (an \IfStudy without its three arguments) go to `problems`.
local function taken_branches(src, have, path, problems)
  local a, after = next_use(src, "IfStudy", 1, "{")
  while a do
    local args, why = arguments(src, after, false, 3)
    if not args then
      problems[#problems + 1] = string.format("%s:%d: \\IfStudy: %s", path, line_of(src, a), why)
    else
      local skip = have(args[1].text) and args[3] or args[2]
      src = src:sub(1, skip.start - 1) .. blank(skip.text) .. src:sub(skip.start + #skip.text)
    end
    -- (a branch blanked holds no \IfStudy any more)
    a, after = next_use(src, "IfStudy", after, "{")
  end
  return src
end

-- The assertions of a source (comments and untaken branches blanked already): a list of
-- {kind, line, start, stop, args} in order, and syntax problems into `problems`.
function M.parse(src, path, problems)
  local list = {}
  for _, name in ipairs(base.sorted_keys(MACROS)) do
    local spec = MACROS[name]
    local a, after = next_use(src, name, 1, "[%[{]")
    while a do
      local args, stop = arguments(src, after, spec.optional, spec.n)
      if not args then
        problems[#problems + 1] = string.format("%s:%d: \\%s: %s", path, line_of(src, a), name,
          stop)
      else
        list[#list + 1] = { kind = name, line = line_of(src, a), start = a, stop = stop,
          args = args }
      end
      a, after = next_use(src, name, after, "[%[{]")
    end
  end
  table.sort(list, function(x, y) return x.start < y.start end)
  return list
end

-- Resolving against the summaries -----------------------------------------------------------

-- (spaces inside collapsed too: an argument may run over a line break)
local function trim(s)
  return (tostring(s or ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- The verdicts a study's summary holds, in words, for a message: "a vs b (metric): v".
local function verdict_list(summary)
  local out = {}
  for _, v in ipairs(summary.verdicts or {}) do
    out[#out + 1] = string.format("%s vs %s (%s): %s", tostring(v.treatment),
      tostring(v.baseline), tostring(v.metric), tostring(v.verdict))
  end
  for _, v in ipairs(summary.interaction_verdicts or {}) do
    out[#out + 1] = string.format("interaction %q (%s): %s", tostring(v.name),
      tostring(v.metric), tostring(v.verdict))
  end
  return #out > 0 and table.concat(out, "; ") or "none"
end

-- \Claim: the verdict, or nil and why.
local function claim_verdict(s, t, b, metric)
  local sm = s.summary
  if b == "" then
    for _, v in ipairs(sm.interaction_verdicts or {}) do
      if v.name == t and v.metric == metric then return v.verdict end
    end
    return nil, string.format("%s has no interaction %q on %s (its verdicts: %s)", s.name, t,
      metric, verdict_list(sm))
  end
  for _, v in ipairs(sm.verdicts or {}) do
    if v.treatment == t and v.baseline == b and v.metric == metric then return v.verdict end
  end
  for _, c in ipairs(sm.secondary_comparisons or {}) do
    if c.treatment == t and c.baseline == b and c.metric == metric then
      return nil, string.format("%s's comparison %s vs %s on %s is exploratory " ..
        "(secondary_comparisons): it has no verdict", s.name, t, b, metric)
    end
  end
  return nil, string.format("%s has no verdict for %s vs %s on %s (its verdicts: %s)",
    s.name, t, b, metric, verdict_list(sm))
end

-- \Replicated: the verdict, or nil and why.
local function replicated_verdict(studies, id, setup)
  local ids = {}
  for _, s in ipairs(studies) do
    local rep = type(s.summary.replication) == "table" and s.summary.replication or {}
    for _, c in ipairs(rep.claims or {}) do
      ids[#ids + 1] = tostring(c.claim)
      if c.claim == id then
        if not setup then return c.verdict, s end
        local t, b = setup:match("^%s*(.-)%s*/%s*(.-)%s*$")
        local names = {}
        for _, u in ipairs(c.setups or {}) do
          if u.treatment == t and u.baseline == b then return u.verdict, s end
          names[#names + 1] = tostring(u.treatment) .. "/" .. tostring(u.baseline)
        end
        return nil, string.format("%s's claim %s has no set-up %s (its set-ups: %s)",
          s.name, id, setup, #names > 0 and table.concat(names, ", ") or "none")
      end
    end
  end
  return nil, string.format("no study's replication has the claim %q (the claims: %s)", id,
    #ids > 0 and table.concat(ids, ", ") or "none")
end

-- \Assert: the value at `path` of a summary, or nil and why.  A path that ends in "#"
-- gives the length of the list it names (`tasks.beyond_ngram.recall.variants#`: how many
-- variants beat that task's control), so a sentence about "none" or "only one" can be
-- checked.
local function path_value(summary, path)
  local p = trim(path):gsub("^summary%.", "")
  local count = p:sub(-1) == "#"
  if count then p = p:sub(1, -2) end
  local v, walked = summary, "summary"
  for part in p:gmatch("[^%.]+") do
    local key, rest = part:match("^([%w_%-]+)(.*)$")
    if not key then return nil, string.format("%s: expected keys separated by dots", path) end
    if type(v) ~= "table" then return nil, walked .. " is not a table" end
    v, walked = v[key], walked .. "." .. key
    for idx in rest:gmatch("%[(%d+)%]") do
      if type(v) ~= "table" then return nil, walked .. " is not a list" end
      v, walked = v[tonumber(idx)], walked .. "[" .. idx .. "]"
    end
    if rest:gsub("%[%d+%]", "") ~= "" then
      return nil, string.format("%s: expected keys and [n] indexes", path)
    end
    if v == nil then return nil, "the summary has no " .. walked end
  end
  if count then
    if type(v) ~= "table" then return nil, walked .. " is not a list (it has no length)" end
    return #v
  end
  if type(v) == "table" then return nil, walked .. " is a table, not a value" end
  return v
end

local function value_matches(v, expected)
  expected = trim(expected)
  if type(v) == "number" then return tonumber(expected) == v end
  if type(v) == "boolean" then return expected == tostring(v) end
  return tostring(v) == expected
end

local function shown(v)
  if type(v) == "number" then return string.format("%.17g", v):gsub("%.?0+$", "") end
  return tostring(v)
end

-- One assertion resolved: its row {kind, line, study, what, expected, actual, ok, fault}.
local function resolve(a, by_name, studies, manifest_names)
  local row = { kind = a.kind, line = a.line }
  local function study_of(name)
    local s = by_name[name]
    if s then return s end
    row.fault = "unknown"
    row.why = manifest_names and manifest_names[name] and
      string.format("the study %s has not been run (no summary.json; an assertion on it " ..
        "belongs in \\IfStudy{%s}{...}{...})", name, name) or
      string.format("%s is no study of the paper (not run, and not in the manifest's " ..
        "studies or appendix)", name)
    return nil
  end
  local A = a.args
  if a.kind == "Claim" then
    local name, t, b = trim(A[1].text), trim(A[2].text), trim(A[3].text)
    row.study, row.expected = name, trim(A[4].text)
    local s = study_of(name)
    local metric = a.args.opt and trim(a.args.opt) or (s and s.primary)
    row.what = b == "" and string.format("interaction %s, %s", t, tostring(metric)) or
      string.format("%s vs %s, %s", t, b, tostring(metric))
    if s then row.actual, row.why = claim_verdict(s, t, b, metric) end
  elseif a.kind == "Replicated" then
    local id = trim(A[1].text)
    row.expected = trim(A[2].text)
    row.what = "claim " .. id .. (a.args.opt and (" at " .. trim(a.args.opt)) or "")
    local v, s = replicated_verdict(studies, id, a.args.opt)
    if v ~= nil then row.actual, row.study = v, s.name
    else row.why, row.study = s, "?" end
  else
    local name = trim(A[1].text)
    row.study, row.expected, row.what = name, trim(A[3].text), trim(A[2].text)
    local s = study_of(name)
    if s then
      local v, why = path_value(s.summary, A[2].text)
      if v == nil then row.why = why else row.actual = shown(v) row.value = v end
    end
  end
  if row.fault then return row end
  if row.actual == nil then
    row.fault = "missing"
  elseif a.kind == "Assert" then
    row.ok = value_matches(row.value, row.expected)
  else
    row.ok = trim(row.actual) == row.expected
  end
  if row.ok == false then row.fault = "contradicted" end
  return row
end

-- Finding sentences ---------------------------------------------------------------------------

-- The checked parts of a source: {start, stop} offsets of the abstract and of each section
-- whose title starts with one of SECTIONS (to the next \section or \appendix).
local function checked_parts(src)
  local parts = {}
  local a1, a2 = src:find("\\begin{abstract}", 1, true)
  if a1 then
    local e = src:find("\\end{abstract}", a2, true) or #src
    parts[#parts + 1] = { start = a2 + 1, stop = e - 1, name = "the abstract" }
  end
  for a, after, title in src:gmatch("()\\section%*?%s*{()([^}]*)") do
    for _, t in ipairs(SECTIONS) do
      if title:sub(1, #t) == t then
        local stop = src:find("\\section%*?%s*{", after) or src:find("\\appendix", after, true)
          or src:find("\\end{document}", after, true) or #src + 1
        parts[#parts + 1] = { start = a, stop = stop - 1, name = "the section " .. title }
      end
    end
  end
  return parts
end

local ledger = require "repro.report.ledger"

-- What makes a text (outside assertions) a finding: the first verdict word or result macro.
local function finding_mark(text)
  for name in text:gmatch("\\(%a+)") do
    for _, suf in ipairs(RESULT_SUFFIXES) do
      if #name > #suf and name:sub(-#suf) == suf then return "the result macro \\" .. name end
    end
  end
  local w = ledger.first_word(ledger.plain(text), VERDICT_WORDS)
  return w and ("the verdict word \"" .. w .. "\"")
end

-- Commands whose argument is not prose: titles, labels, references, floats' names.
local NOT_PROSE = { "section", "subsection", "subsubsection", "paragraph", "label", "ref",
  "cite", "eqref", "PaperTable", "PaperFigure", "input", "includegraphics", "Absent" }

-- The uncarried finding sentences of a source (comments and untaken branches blanked,
-- assertions `list`), appended to `problems`, each naming its line.
local function uncarried(src, list, path, problems)
  -- each assertion becomes marks: the sentence it carries is carried whole
  -- (its last character a full stop when its sentence ends with one: what follows is a
  -- sentence of its own)
  for _, a in ipairs(list) do
    local marks = src:sub(a.start, a.stop - 1):gsub("[^\n]", "\1")
    if a.args[#a.args].text:match("[%.!?]%s*$") then marks = marks:sub(1, -2) .. "." end
    src = src:sub(1, a.start - 1) .. marks .. src:sub(a.stop)
  end
  local parts = checked_parts(src)
  for _, name in ipairs(NOT_PROSE) do
    src = src:gsub("(\\" .. name .. "%*?%s*)(%b{})", function(cmd, arg)
      return cmd .. "{" .. blank(arg:sub(2, -2)) .. "}"
    end)
  end
  for _, part in ipairs(parts) do
    -- (assertions already replaced by \1 marks of their length)
    for _, sent in ipairs(ledger.sentences(src:sub(part.start, part.stop))) do
      sent.start = part.start + sent.start - 1
      if not sent.text:find("\1", 1, true) then
        local mark = finding_mark(sent.text)
        if mark then
          local lead = sent.text:match("^%s*()")
          problems[#problems + 1] = string.format("%s:%d: %s: a finding sentence that " ..
            "asserts nothing (%s outside \\Claim, \\Replicated or \\Assert): %s", path,
            line_of(src, sent.start + lead - 1), part.name, mark,
            (sent.text:gsub("%s+", " "):gsub("^ ", ""):sub(1, 160)))
        end
      end
    end
  end
end

-- The whole check -------------------------------------------------------------------------------

-- Checks the LaTeX source `src` (shown as `path`) against the studies (`by_name`, and the
-- list `studies` in order; `manifest_names`: name -> true for the manifest's studies).
-- Returns the rows (one per assertion, in order), the failures (hard faults, and with
-- opts.lenient false also the contradicted and missing ones) and the listed ones (with
-- opts.lenient, the contradicted and missing ones: reported, not failed).
function M.check(src, path, by_name, studies, manifest_names, opts)
  opts = opts or {}
  local problems = {}
  local text = M.strip_comments(src)
  -- \PaperNeeds{<study>}: the text typesets only a note naming the missing studies when
  -- one has no summary (main.tex ends there), so on such records (a test's fixture, a
  -- --set root, a partial tree) its assertions are not checked: one line says so, listed
  -- with opts.lenient or when opts.partial_ok, a failure otherwise
  local missing = {}
  for name in text:gmatch("\\PaperNeeds%s*{%s*([^}]-)%s*}") do
    if not by_name[name] then missing[#missing + 1] = name end
  end
  if #missing > 0 then
    local msg = string.format("%s: not checked: the text needs studies these records do not " ..
      "have (\\PaperNeeds): %s; it typesets only a note naming them", path,
      table.concat(missing, ", "))
    if opts.lenient or opts.partial_ok then return {}, {}, { msg } end
    return {}, { msg }, {}
  end
  text = taken_branches(text, function(n) return by_name[n] ~= nil end, path, problems)
  local list = M.parse(text, path, problems)
  local rows, listed = {}, {}
  for _, a in ipairs(list) do
    local row = resolve(a, by_name, studies, manifest_names)
    rows[#rows + 1] = row
    if row.fault then
      row.message = row.fault == "contradicted" and
        string.format("%s:%d: \\%s{%s}: %s: expected %q, the summary says %q", path, row.line,
          row.kind, tostring(row.study), row.what, row.expected, row.actual) or
        string.format("%s:%d: \\%s: %s", path, row.line, row.kind, row.why)
      local to = opts.lenient and row.fault ~= "unknown" and listed or problems
      to[#to + 1] = row.message
    end
  end
  uncarried(text, list, path, problems)
  return rows, problems, listed
end

-- The listing of the assertions (bin/repro ledger): one line each, "path:line  \\Kind  study:
-- what  expected -> actual  ok|CONTRADICTED|MISSING|UNKNOWN".
function M.listing(rows, path)
  local out = {}
  for _, r in ipairs(rows) do
    out[#out + 1] = string.format("%s:%d  \\%s  %s: %s  expected %s -> %s  %s", path, r.line,
      r.kind, tostring(r.study), r.what, r.expected, tostring(r.actual or "-"),
      r.ok and "ok" or (r.fault or "?"):upper())
  end
  return out
end

local TABLE_CAPTION = "The statement ledger: each checked assertion of the main text (its line " ..
  "in main.tex), the study and the analysis it names, the verdict or value it expects and " ..
  "the one the study's summary holds (``the same'' when they agree)."

-- The ledger's table for the supplement: a longtable labelled tab:ledger.
function M.tex_table(rows)
  local cols = "@{}r>{\\raggedright\\arraybackslash}p{0.14\\linewidth}" ..
    ">{\\raggedright\\arraybackslash}p{0.42\\linewidth}" ..
    ">{\\raggedright\\arraybackslash}p{0.27\\linewidth}@{}"
  local head = "\\toprule\nLine & Study & Analysis & Verdict expected; the summary's \\\\\n" ..
    "\\midrule"
  local lines = { "\\begin{longtable}{" .. cols .. "}",
    "\\caption{" .. TABLE_CAPTION .. "}\\label{tab:ledger}\\\\", head,
    "\\endfirsthead", head, "\\endhead", "\\bottomrule", "\\endlastfoot" }
  if #rows == 0 then
    lines[#lines + 1] = "\\multicolumn{4}{@{}l@{}}{The main text makes no checked assertion.} \\\\"
  end
  for _, r in ipairs(rows) do
    -- (one cell, the two apart by a semicolon, the summary's word only where it differs:
    -- "not testable here" twice in a clause reads as a double negative)
    local actual = r.ok and "the same" or r.actual and
      (F.escape(tostring(r.actual)) .. " (\\emph{contradicted})") or
      ("\\emph{" .. (r.fault or "?") .. "}")
    lines[#lines + 1] = string.format("%d & %s & %s & %s; %s \\\\", r.line,
      F.escape(tostring(r.study)), F.escape(r.what), F.escape(r.expected), actual)
  end
  lines[#lines + 1] = "\\end{longtable}"
  return table.concat(lines, "\n") .. "\n"
end

-- The LaTeX definitions of the macros (numbers.tex): each typesets its sentence only.
M.TEX_DEFS = table.concat({
  "% Checked assertions (lua/repro/report/assertions.lua): each typesets its sentence only.",
  "\\providecommand{\\Claim}[6][]{#6}",
  "\\providecommand{\\Replicated}[4][]{#4}",
  "\\providecommand{\\Assert}[4]{#4}",
}, "\n") .. "\n"

return M
