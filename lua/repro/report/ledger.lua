-- The statement ledger: every sentence of a paper that states a finding names
-- the analysis that carries it, and the build checks the two against each other.
-- A manifest's extensions declare the entries (`ledger`, lua/repro/report/init.lua); this
-- module knows no paper.  An entry: { id =, where = ("readme": Markdown; else LaTeX),
-- carries = { <analysis>, ... }, across = "<why>" (required across studies), text =
-- function(A, T, ctx) (A[i] is carries[i] resolved; T is "tex" or "md") }.  An analysis:
-- { study =, treatment =, baseline =, metric = }, { study =, interaction = }, { study =,
-- section =, treatment =, baseline = }, { study =, sensitivity = <group>, own = bool },
-- { study =, replication = <claim id>, treatment =, baseline = } (a replicated claim's
-- verdict; with treatment and baseline, its verdict at that set-up) or
-- { quoted = "<source>" }; treatment, baseline and interaction may be functions of the
-- Study, nil leaving the sentence out, as does a study that has not run.  `check` returns
-- every problem (missing, verdict, sign, across, uncarried), each naming the sentence and
-- the analysis; the main text is checked by lua/repro/report/assertions.lua instead.
local F = require "repro.report.texfmt"

local M = {}

-- Verdict words, in the order they are matched (a phrase before the words inside it),
-- after the verdict classes they allow.  Matched on lower-case text with LaTeX commands
-- removed, as whole words or phrases.
local WORDS = {}
for _, group in ipairs({
  { { equivalent = true }, "no difference" },
  { { inconclusive = true, equivalent = true }, "not significant" },
  { { inconclusive = true }, "could not decide", "cannot decide" },
  { { inconclusive = true, equivalent = true }, "cannot tell" },
  { { inconclusive = true }, "leaves the sign open", "inconclusive" },
  { { equivalent = true }, "equivalent" },
  { { better = true, worse = true }, "significant", "depends", "depended" },
  { { better = true }, "better", "helped", "helps", "improved" },
  { { worse = true }, "worse", "hurt", "hurts", "cost", "costs" },
}) do
  for i = 2, #group do WORDS[#WORDS + 1] = { group[i], group[1] } end
end
-- Sign words: the sign of the difference (treatment - baseline) each says.
local SIGNS = {
  { "lowered", -1 }, { "raised", 1 }, { "exceeds", 1 }, { "exceeded", 1 },
  { "is below", -1 }, { "was below", -1 },
}
-- Words that compare two things: refused in a sentence across studies.
local COMPARING = { "than", "moved", "shrinks", "shrank", "grew", "more", "less", "unlike",
  "whereas", "while", "agrees" }
-- Words that make a sentence a finding (with the verdict and sign words).
local FINDING = { "changed", "differed", "differs", "removes", "protects", "agrees" }

-- The text of a sentence as the checks read it: LaTeX commands out, lower case.
function M.plain(text)
  local s = text:gsub("\\emph{([^}]*)}", "%1"):gsub("\\num{([^}]*)}", "%1")
  s = s:gsub("\\%a+", " "):gsub("[{}$~]", " ")
  return " " .. s:lower():gsub("%s+", " ") .. " "
end

-- Word or phrase w as a pattern: whole words, any space between them.
local function word_pattern(w)
  return "%f[%w]" .. w:gsub("%p", "%%%0"):gsub(" ", "%%s+") .. "%f[%W]"
end

-- Whether plain text p (lower case) has the word or phrase w.
local function has_word(p, w)
  return p:find(word_pattern(w)) ~= nil
end
local plain = M.plain

-- The first word or phrase of `list` that plain text p has (nil: none).
function M.first_word(p, list)
  for _, w in ipairs(list) do
    if has_word(p, w) then return w end
  end
end

-- The verdict words of a sentence: a list of {word, allowed classes}; a phrase covers
-- the single words inside it ("not significant" is not also "significant").
local function verdict_words(text)
  local p = plain(text)
  local out = {}
  for _, w in ipairs(WORDS) do
    if has_word(p, w[1]) then
      out[#out + 1] = { word = w[1], allow = w[2] }
      p = p:gsub(word_pattern(w[1]), " ")
    end
  end
  return out
end

-- The sign words of a sentence and its signed percentages ("\num{+12.77}\,\%"): {word, sign}.
local function sign_words(text)
  local out = {}
  local p = plain(text)
  for _, w in ipairs(SIGNS) do
    if has_word(p, w[1]) then out[#out + 1] = { word = w[1], sign = w[2] } end
  end
  for _, pattern in ipairs({ "\\num{([+%-])[%d.]+}\\,\\%%", "([+%-])[%d.]+ %%" }) do
    for s in text:gmatch(pattern) do
      out[#out + 1] = { word = s .. "%", sign = s == "-" and -1 or 1 }
    end
  end
  return out
end

-- Does the text state a finding? (a verdict or sign word, a finding word, or a macro of
-- the report's verdicts and effects)
local function is_finding(text)
  for _, suffix in ipairs({ "Verdicts?", "PplChange", "Sentence", "PrimaryDelta" }) do
    if text:find("\\%a+" .. suffix .. "%f[^%a]") then return true end
  end
  return #verdict_words(text) > 0 or #sign_words(text) > 0 or
    M.first_word(plain(text), FINDING) ~= nil
end

-- Resolving an analysis ------------------------------------------------------------------

local function name_of(x, s)
  if type(x) == "function" then return x(s) end
  return x
end

local function sign_of(x)
  if not F.finite(x) or x == 0 then return 0 end
  return x > 0 and 1 or -1
end

-- The analysis `a` in the studies `by_name`: the resolved analysis, or nil and why, or
-- "absent" when its study has not run.
local function resolve(by_name, a)
  if a.quoted then
    return { label = "quoted: " .. a.quoted, quoted = a.quoted }
  end
  local s = by_name[a.study]
  if not s then return nil, "absent" end
  if a.section then
    local sub = s:section(a.section)
    if not sub then return nil, a.study .. " has no " .. a.section end
    local r, why = resolve({ [a.study] = sub }, { study = a.study,
      treatment = a.treatment, baseline = a.baseline, metric = a.metric })
    if r then
      r.label = a.study .. " (" .. a.section .. "): " .. r.label:gsub("^[^:]*: ", "")
    end
    return r, why
  end
  if a.sensitivity then
    local sw = s.summary.lr_sweep
    local g = sw and sw.groups and sw.groups[a.sensitivity]
    local sens = g and g.sensitivity
    if sens and a.own then sens = sens.own end
    if not sens or sens.diff == nil then
      return nil, string.format("%s has no LR sensitivity%s of %s", a.study,
        a.own and " (own)" or "", a.sensitivity)
    end
    local ci = type(sens.diff_ci) == "table" and sens.diff_ci or nil
    local verdict = "undefined"
    if ci and F.finite(ci[1]) and F.finite(ci[2]) then
      verdict = ci[1] > 0 and "positive" or ci[2] < 0 and "negative" or "spans 0"
    end
    return { study = s, label = string.format("%s: LR sensitivity%s, %s minus %s", a.study,
        a.own and " S_own" or " S", a.sensitivity, g.sensitivity.reference or "?"),
      verdict = verdict, interval = true, sign = sign_of(sens.diff), mean = sens.diff, ci = ci }
  end
  if a.replication then
    local rep = type(s.summary.replication) == "table" and s.summary.replication or {}
    if a.treatment or a.baseline then
      local t, b = name_of(a.treatment, s), name_of(a.baseline, s)
      if t == nil or b == nil then return nil, "absent" end
      for _, e in ipairs(rep.entries or {}) do
        if e.claim == a.replication and e.treatment == t and e.baseline == b then
          local r = type(e.replication) == "table" and e.replication or {}
          return { study = s, e = e, label = string.format("%s: claim %s at %s vs %s",
              a.study, a.replication, t, b), verdict = e.verdict, sign = sign_of(r.mean),
            mean = r.mean, treatment = t, baseline = b }
        end
      end
      return nil, string.format("%s's replication has no claim %s at %s vs %s", a.study,
        tostring(a.replication), tostring(t), tostring(b))
    end
    for _, c in ipairs(rep.claims or {}) do
      if c.claim == a.replication then
        return { study = s, c = c, label = string.format("%s: claim %s", a.study,
          a.replication), verdict = c.verdict }
      end
    end
    return nil, string.format("%s's replication has no claim %s", a.study,
      tostring(a.replication))
  end
  local metric = a.metric or s.primary
  if a.interaction then
    local want = name_of(a.interaction, s)
    -- a function naming no interaction: the study has nothing to carry it (a design whose
    -- arm was not selected), as if it had not run
    if want == nil then return nil, "absent" end
    for _, e in ipairs(s.summary.interactions or {}) do
      if e.name == want and e.metric == metric then
        return { study = s, c = e, verdict = e.verdict, sign = sign_of(e.mean), mean = e.mean,
          ci = e.ci_decision, label = string.format("%s: interaction %s, %s", a.study, want,
          metric) }
      end
    end
    return nil, string.format("%s has no interaction %q on %s", a.study, tostring(want), metric)
  end
  local t, b = name_of(a.treatment, s), name_of(a.baseline, s)
  if t == nil or b == nil then return nil, "absent" end
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.treatment == t and c.baseline == b and c.metric == metric then
      local v = s:verdict(c)
      return { study = s, c = c, verdict = v and v.verdict, sign = sign_of(c.mean),
        mean = c.mean, ci = c.ci_decision, ppl = c.val_ppl_change, treatment = t, baseline = b,
        label = string.format("%s: %s vs %s, %s", a.study, t, b, metric) }
    end
  end
  return nil, string.format("%s has no comparison %s vs %s on %s", a.study, tostring(t),
    tostring(b), metric)
end

-- Formats: what an entry's text uses to print a number or a verdict.
M.FORMATS = {
  tex = { name = "tex", pct = F.percent, num = F.num, ci = F.interval,
    verdict = function(v) return "\\emph{" .. F.escape(v or "?") .. "}" end },
  md = {
    name = "md",
    pct = function(r)
      if not F.finite(r) then return "?" end
      return string.format("%+.2f %%", 100 * r)
    end,
    num = function(x, dec)
      return F.finite(x) and string.format("%." .. dec .. "f", x) or "?"
    end,
    ci = function(ci, dec)
      if type(ci) ~= "table" or not F.finite(ci[1]) then return "" end
      return string.format("[%." .. dec .. "f, %." .. dec .. "f]", ci[1], ci[2])
    end,
    verdict = function(v) return "*" .. (v or "?") .. "*" end,
  },
}

-- Checking one sentence -------------------------------------------------------------------

-- The problems of sentence `text` carried by the resolved analyses A.
function M.check_sentence(text, A, entry)
  local out = {}
  local function bad(fmt, ...) out[#out + 1] = string.format(fmt, ...) end
  local labels, tested, quoted, studies, n_studies = {}, {}, 0, {}, 0
  for i, a in ipairs(A) do
    labels[i] = a.label
    if a.verdict and not a.interval then tested[#tested + 1] = a end
    if a.quoted then quoted = quoted + 1 end
    local name = a.study and a.study.name or a.quoted
    if name and not studies[name] then studies[name], n_studies = true, n_studies + 1 end
  end
  local carried = table.concat(labels, "; ")
  -- a finding quoted from elsewhere is the source's: its words are not checked here
  if quoted == #A then return out end
  -- every verdict word is allowed by some carried verdict
  local said_words = verdict_words(text)
  for _, w in ipairs(said_words) do
    local ok = false
    for _, a in ipairs(tested) do ok = ok or w.allow[a.verdict] == true end
    if not ok then
      bad("the verdict word %q is not the verdict of what carries it (%s)", w.word, carried)
    end
  end
  -- every carried verdict is said
  local p = plain(text)
  for _, a in ipairs(tested) do
    local said = has_word(p, a.verdict)
    for _, w in ipairs(said_words) do
      said = said or (w.allow[a.verdict] and #tested == 1)
    end
    if not said then bad("it does not say the verdict %q of %s", a.verdict, a.label) end
  end
  -- every sign word and signed percentage is the sign of some carried analysis
  for _, w in ipairs(sign_words(text)) do
    local ok = false
    for _, a in ipairs(A) do ok = ok or a.sign == w.sign end
    if not ok then
      bad("the sign word %q is not the sign of what carries it (%s)", w.word, carried)
    end
  end
  -- analyses of several studies: only listed side by side
  if n_studies > 1 then
    if not entry.across then
      bad("it names analyses of %d studies (%s) but no analysis compares them " ..
        "(declare `across` if it only lists them)", n_studies, carried)
    else
      for _, w in ipairs(COMPARING) do
        if has_word(p, w) then
          bad("it lists analyses of several studies but compares them (%q): no analysis " ..
            "compares %s", w, carried)
        end
      end
    end
  end
  return out
end

-- The ledger of entries over the studies `by_name`: rows {entry, text, analyses,
-- problems} (only the entries whose studies have run) and every problem.
function M.build(entries, by_name, ctx)
  local rows, problems, ids = {}, {}, {}
  for i, e in ipairs(entries) do
    local where = string.format("ledger entry %s (%s)", tostring(e.id), tostring(e.where))
    if type(e.id) ~= "string" or not e.id:match("^%a[%w]*$") then
      problems[#problems + 1] = string.format("ledger entry %d: id: expected letters and digits", i)
    elseif ids[e.id] then
      problems[#problems + 1] = where .. ": the id is used twice"
    elseif type(e.carries) ~= "table" or #e.carries == 0 then
      problems[#problems + 1] = where .. ": it names no analysis that carries it"
    else
      ids[e.id] = true
      local row, absent = { entry = e, analyses = {}, problems = {}, text = "" }, false
      for _, a in ipairs(e.carries) do
        local r, why = resolve(by_name, a)
        if r then row.analyses[#row.analyses + 1] = r
        elseif why == "absent" then absent = true
        else row.problems[#row.problems + 1] = "the analysis it names does not exist: " .. why end
      end
      if #row.problems == 0 and not absent then
        local T = M.FORMATS[e.where == "readme" and "md" or "tex"]
        row.text = e.text(row.analyses, T, ctx) or ""
        if row.text ~= "" then row.problems = M.check_sentence(row.text, row.analyses, e) end
      end
      for _, m in ipairs(row.problems) do
        problems[#problems + 1] = string.format("%s: %s\n  sentence: %s", where, m,
          row.text ~= "" and row.text or "(not written)")
      end
      -- (an entry whose study has not run is no row, unless it names a missing analysis)
      if not absent or #row.problems > 0 then rows[#rows + 1] = row end
    end
  end
  return rows, problems
end

-- Checked texts ----------------------------------------------------------------------------

-- The sentences of a text as {text, closed, start}: split after . ! ? and the characters
-- that close a group (`closers`, a pattern class: default braces, parentheses and quotes,
-- "... match.}{} Its"), before white space and a capital, a backslash, a \1 mark
-- (assertions.lua's, for a carried sentence) or the end; text ends at the sentence's
-- punctuation, closed after its closing characters.
function M.sentences(text, closers)
  local out, s, i = {}, 1, 1
  local pattern = "[%.!?]([" .. (closers or "}%)'") .. "]*)%s+"
  while true do
    local a, b, closing = text:find(pattern, i)
    if not a then break end
    local nxt = text:sub(b + 1, b + 1)
    if nxt == "" or nxt:match("[%u\\\1]") then
      out[#out + 1] = { text = text:sub(s, a), closed = text:sub(s, a + #closing), start = s }
      s = b + 1
    end
    i = b + 1
  end
  local rest = text:sub(s)
  if rest:match("%S") then out[#out + 1] = { text = rest, closed = rest, start = s } end
  return out
end

-- The problems of a Markdown text built from ledger sentences (`texts`): no sentence
-- outside them states a finding.
function M.check_md(text, path, texts)
  local problems = {}
  local rest = text
  for _, t in ipairs(texts) do
    local a, b = rest:find(t, 1, true)
    if a then rest = rest:sub(1, a - 1) .. " . " .. rest:sub(b + 1) end
  end
  rest = rest:gsub("`[^`]*`", " ")
  -- (a quote or parenthesis after the full stop does not end a sentence here)
  for _, s in ipairs(M.sentences((rest:gsub("%s+", " ")), "}")) do
    if is_finding(s.text) then
      problems[#problems + 1] = string.format("%s: a finding that names no analysis: %s",
        path, (s.closed:gsub("^%s+", "")))
    end
  end
  return problems
end

return M
