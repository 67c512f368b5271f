-- The one table model (lua/repro/report/table.lua): one table, five renderers.  A reason
-- tied to a row goes under that row on the terminal and after the table, with its lead, in
-- a document; a cell that stands for no value is empty in CSV and named in
-- not_measurable; each format escapes what would break it (LaTeX specials, HTML markup,
-- a Markdown "|", a terminal escape).
local check = require "check"
local tbl = require "repro.report.table"
local t = check.new("test_table")

local function sample()
  return { title = "Verdicts on val_loss", head = { "treatment", "mean", "verdict" },
    rows = { { "ln_a|b", "0.5", "better" }, { "rms<x>", "-", "inconclusive" } },
    reasons = { { row = 1, lead = "ln vs none: ", text = "because p 0.01" }, "note_1 & 50 %" },
    note = "The last word." }
end

-- terminal: the reason right under its row, the free reason and the note after
local text = tbl.text(sample(), 80)
local lines = {}
for l in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
t:ok(lines[1] == "Verdicts on val_loss:", "text: the title first: " .. lines[1])
t:ok(lines[3]:find("ln_a|b", 1, true) and lines[4]:find("^%s+because p 0.01$"),
  "text: a row's reason under that row, without its lead:\n" .. text)
t:ok(lines[5]:find("rms<x>", 1, true) and lines[6]:find("note_1", 1, true) and
  lines[7]:find("The last word.", 1, true), "text: free reasons and the note after the rows")
t:ok(not tbl.text({ title = "x", head = { "a" }, rows = { { "\27[31mred" } } }, 80):find("\27", 1,
  true), "text: a terminal escape in a cell never reaches the output")
t:ok(tbl.text(sample(), 80, { title = false }):sub(1, 2) == "  ", "text: title = false leaves it out")
t:ok(tbl.text({ title = "x", head = { "a" }, rows = {}, note = "nothing yet" }):find("(nothing yet)",
  1, true), "text: an empty table says its note")

-- CSV: "-" empty and named; a comma quoted
local csv = tbl.csv(sample())
t:eq(csv, "treatment,mean,verdict,not_measurable\nln_a|b,0.5,better,\nrms<x>,,inconclusive,mean\n",
  "csv: the undefined cell empty and named in not_measurable")

-- LaTeX: specials escaped, the reason with its lead after the table
local tex = tbl.latex(sample())
t:ok(tex:find("ln\\_", 1, true) and tex:find("50 \\%", 1, true) and
  tex:find("ln vs none: because p 0.01", 1, true), "latex: escaped, reasons with their lead:\n" .. tex)

-- HTML: markup escaped
local html = tbl.html(sample())
t:ok(html:find("<td>rms&lt;x&gt;</td>", 1, true) and html:find("note_1 &amp; 50 %", 1, true),
  "html: markup in a cell escaped")

-- Markdown: a pipe in a cell escaped, one header rule
local md = tbl.markdown(sample())
t:ok(md:find("| ln_a\\|b | 0.5 | better |", 1, true) and md:find("| --- | --- | --- |", 1, true),
  "markdown: the pipe escaped, the header rule:\n" .. md)

-- The paper's form: LaTeX cells as they are, a group row spanning every column after a
-- rule, marks lettered in order of first use and each text once.
local marks = tbl.marks()
local a, b, a2 = marks.mark("one run"), marks.mark("no value"), marks.mark("one run")
t:ok(a == "$^{a}$" and b == "$^{b}$" and a2 == a, "marks: a, b, and a again for the same text")
local tab = tbl.tabular({ align = "lr", head = { "$x$", "n" }, rows = { { group = "loss" },
  { "\\num{1}" .. a, "2" }, { rule = true }, { "3", "4" } } }, { fit = true })
t:eq(tab, "\\ReportFit{\\begin{tabular}{@{}lr@{}}\n\\toprule\n$x$ & n \\\\\n\\midrule\n" ..
  "\\multicolumn{2}{@{}l}{\\emph{loss}} \\\\\n\\num{1}$^{a}$ & 2 \\\\\n\\midrule\n3 & 4 \\\\\n" ..
  "\\bottomrule\n\\end{tabular}}\n", "tabular: group row, rule, raw cells, fitted")
-- a row above the head, a group without its rule first (the head's rule stays), a little
-- space, rows spaced apart
tab = tbl.tabular({ above = { "", "\\multicolumn{1}{c}{m}" }, head = { "a", "b" }, skip = "2pt",
  rows = { { group = "g", rule = false }, { "1", "2" }, { space = true }, { "3", "4" } } })
t:eq(tab, "\\begin{tabular}{@{}ll@{}}\n\\toprule\n & \\multicolumn{1}{c}{m} \\\\\na & b \\\\\n" ..
  "\\midrule\n\\multicolumn{2}{@{}l}{\\emph{g}} \\\\\n1 & 2 \\\\[2pt]\n\\addlinespace\n" ..
  "3 & 4 \\\\[2pt]\n\\bottomrule\n\\end{tabular}\n", "tabular: above, unruled group, space, skip")
t:ok(marks.render():find("$^{b}$\\,no value", 1, true), "marks: the notes under the table")
t:eq(tbl.marks().render(), "", "marks: no note, nothing under the table")

-- Value cells: one row, each renderer's format.  As text (terminal, CSV) to 4 digits and
-- "< 0.001"; as the paper's LaTeX to the decimals of its metric or of its interval,
-- whichever are more (val_loss: 4; a half-width of 0.01: 3), texfmt's p and a level.
local V = tbl.value
local row = { "a_b", V.est(0.03125, "val_loss", { 0.02, 0.04 }),
  V.ci({ 0.02, 0.04 }, "val_loss", 0.03125), V.p(0.0004), V.fixed(1.23456, 2), V.level(0.9986),
  V.est(0 / 0, "val_loss") }
local vt = { title = "values", head = { "name", "est", "ci", "p", "stat", "level", "nan" },
  rows = { row } }
t:ok(tbl.text(vt, 120):find("a_b%s+0.03125%s+%[0.02, 0.04%]%s+< 0.001%s+1.235%s+99.86 %%%s+%-"),
  "values as text:\n" .. tbl.text(vt, 120))
t:eq(tbl.csv(vt), "name,est,ci,p,stat,level,nan,not_measurable\n" ..
  "a_b,0.03125,\"[0.02, 0.04]\",< 0.001,1.235,99.86 %,,nan\n",
  "values in CSV: as text, the undefined one empty and named")
t:ok(tbl.tabular(vt, { plain = true }):find("a\\_\\allowbreak{}b & \\num{0.0312} & " ..
  "[\\num{0.0200}, \\num{0.0400}] & $<$\\,\\num{0.001} & \\num{1.23} & 99.86\\,\\% & ---",
  1, true),
  "values in the paper's tabular, a plain text cell escaped:\n" .. tbl.tabular(vt, { plain = true }))
t:ok(tbl.latex(vt, { raw = true }):find("\\num{0.0312}", 1, true) and
  tbl.latex(vt):find("0.03125", 1, true), "latex: values as LaTeX when raw, as text otherwise")

t:done()
