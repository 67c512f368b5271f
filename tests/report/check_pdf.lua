-- Checks a generated paper against the summaries it came from (as written: the `make
-- paper` before it checked their inputs; their records digests are checked here); the last step
-- of `make reproduce QUICK=1` (CI):
--   bin/repro script tests/report/check_pdf.lua EXPERIMENTS PAPER_DIR
-- For every study with a summary that the paper shows (main.tex, supplement.tex or the
-- generated appendix inputs its paired table, or a paired table of a nested summary of
-- its, the manifest's `section`, or a task study's zero-shot comparisons table; the
-- others are named on stderr): its tables exist and
-- hold numbers (not the sentence of an absent study), every figure it feeds
-- (paper/paper.lua, and its appendix forest plot) exists as PDF and PNG (or, when its
-- data are all zero, numbers.tex says so in its place), and the text of PAPER_DIR/main.pdf
-- and supplement.pdf (pdftotext) contains, for each comparison on the primary metric, the
-- mean difference and the Holm-adjusted p as the paired table prints them, and its
-- verdict.  Nowhere "nan" or "inf"; no fault of wording of any class of
-- tests/report/prose_lint.lua (double negative, run-together text, config notation, code
-- labels, bare intervals, double parentheses, a capital after a mid-sentence colon).
-- Prints "check_pdf: N passed, N failed".
local fs = require "repro.core.fs"
local report = require "repro.report"
local data = require "repro.report.data"
local tex = require "repro.report.texfmt"
local tables = require "repro.report.tex_tables"
local host = require "repro.host"
local check = dofile(host.root .. "/tests/lua/check.lua")

local exp, paper = arg[1], arg[2]
if not exp or not paper then
  io.stderr:write("usage: bin/repro script tests/report/check_pdf.lua EXPERIMENTS PAPER_DIR\n")
  os.exit(2)
end
local t = check.new("check_pdf")

-- "\num{-0.0500}" -> "-0.0500", "$<$\,\num{0.001}" -> "<0.001": the text pdftotext gives
-- once spaces are removed and the minus sign is ASCII.
local function plain(s)
  return (s:gsub("\\num{([^}]*)}", "%1"):gsub("%$<%$\\,", "<"):gsub("%s+", ""))
end

-- the main text and its supplement, read as one text
local raw = ""
for _, doc in ipairs({ "main", "supplement" }) do
  local pdf = paper .. "/" .. doc .. ".pdf"
  t:ok(fs.exists(pdf), "the PDF exists: " .. pdf)
  local _, part = check.run("pdftotext " .. fs.quote(pdf) .. " -")
  raw = raw .. (part or "") .. "\n"
end
t:ok(#raw > 1000, "the PDF has text")
local text = raw:gsub("\u{2212}", "-"):gsub("%s+", "")
local lower = raw:lower()
t:ok(not lower:find("%f[%w]nan%f[%W]") and not lower:find("%f[%w]%-?inf%f[%W]"),
  "no nan or inf in the PDF text")

-- wording: every class of tests/report/prose_lint.lua
local lint = dofile(host.root .. "/tests/report/prose_lint.lua")
for _, f in ipairs(lint.lint(raw)) do t:ok(false, "the PDF's text: " .. f.kind .. ": " .. f.at) end

local numbers_tex = fs.read(paper .. "/numbers.tex") or ""
local manifest = report.load_manifest(host.root .. "/paper/paper.lua")
-- The summaries as written, each still refused unless its records digest matches the
-- records beside it: `make paper`, which ran just before in the same make reproduce, has
-- checked every summary's inputs, and the analysis wrote each from its records.
local studies = data.load_all(exp, manifest.studies, manifest.names, manifest.factor, nil,
  { trust_summaries = true })
t:ok(#studies > 0, "there are study summaries under " .. exp)
-- The studies the paper shows: those whose paired table main.tex or the appendix inputs
-- (a descriptive study with no comparison has none: it is named, not checked).
local main_tex = (fs.read(paper .. "/main.tex") or "") ..
  (fs.read(paper .. "/supplement.tex") or "") .. (fs.read(paper .. "/tables/appendix.tex") or "")
local shown = {} -- {s = study, table = its paired table's name, sub = the Study it compares}
for _, s in ipairs(studies) do
  local any = false
  if main_tex:find("{" .. s.name .. "_paired}", 1, true) then
    shown[#shown + 1] = { s = s, table = s.name .. "_paired", sub = s }
    any = true
  end
  -- a paired table of a nested summary of the study's (the manifest's `section`)
  for _, e in ipairs(manifest.tables) do
    if e.kind == "paired" and e.section and e.study == s.name and
        main_tex:find("{" .. e.name .. "}", 1, true) and s:section(e.section) then
      shown[#shown + 1] = { s = s, table = e.name, sub = s:section(e.section) }
      any = true
    end
  end
  -- a task study's comparisons table (its zero-shot one) stands for its paired table
  for _, e in ipairs(manifest.tables) do
    if not any and e.kind == "task_comparisons" and e.study == s.name and
        (e.shots or 0) == 0 and main_tex:find("{" .. e.name .. "}", 1, true) then
      shown[#shown + 1] = { s = s, table = e.name, sub = s }
      any = true
    end
  end
  if not any then
    io.stderr:write("check_pdf: ", s.name, ": not in the paper yet (main.tex inputs no ",
      "tables/", s.name, "_paired): its numbers are not checked\n")
  end
end
local figures_checked = {}
for _, entry in ipairs(shown) do
  local s = entry.s
  local paired = fs.read(paper .. "/tables/" .. entry.table .. ".tex") or ""
  t:ok(paired:find("\\num{", 1, true) and not paired:find("Not available", 1, true),
    entry.table .. ": paired table with numbers")
  local figures = { { study = s.name, name = tables.forest_name(s) } }
  if manifest.listed[s.name] then figures = manifest.figures end
  if figures_checked[s.name] then figures = {} end
  figures_checked[s.name] = true
  for _, f in ipairs(figures) do
    if f.study == s.name then
      local drawn = fs.exists(paper .. "/figures/" .. f.name .. ".pdf") and
        fs.exists(paper .. "/figures/png/" .. f.name .. ".png")
      -- or not drawn for a reason of its data (all zero: no run diverged), said in
      -- numbers.tex, never because its study is missing
      local why = numbers_tex:match("ReportNoFig@" .. f.name:gsub("%p", "%%%0") ..
        "\\endcsname{([^\n]*)}\n")
      t:ok(drawn or (why and not why:find("has not been run", 1, true)),
        "figure " .. f.name .. (drawn and "" or (": not drawn: " .. tostring(why))))
    end
  end
  local sub = entry.sub
  for _, c in ipairs(sub:comparisons()) do
    local ci = data.interval(c)
    local what = string.format("%s: %s vs %s", entry.table, c.treatment, c.baseline)
    if tex.finite(c.mean) then
      local d = plain(tex.num(c.mean, tex.diff_decimals(c.metric, c.mean, ci)))
      t:ok(text:find(d, 1, true), what .. ": mean difference " .. d .. " in the PDF")
    end
    -- as a table prints it, or as a verdict row's words do (analysis/words.lua)
    local p, pw = plain(tex.p(c.p_holm)), plain(require("repro.analysis.words").fmt(c.p_holm))
    t:ok(text:find(p, 1, true) or text:find(pw, 1, true), what .. ": Holm-adjusted p " .. p ..
      " (or " .. pw .. ") in the PDF")
    local v = sub:verdict(c)
    if v then
      t:ok(text:find(v.verdict:gsub("%s+", ""), 1, true), what .. ": verdict " .. v.verdict)
    end
  end
end
for _, name in ipairs(manifest.studies) do
  local present = false
  for _, s in ipairs(studies) do present = present or s.name == name end
  if not present then
    t:ok(text:find(("the " .. name .. " study has not been run yet"):gsub("[%s_]+", ""), 1, true),
      name .. ": absent, and the PDF says so")
  end
end
t:done()
