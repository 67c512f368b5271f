-- The paper's smallest text (no figure or table text under 7 pt), checked while
-- LaTeX sets it (paper/printsize.tex) from the figures' font sizes that
-- lua/repro/report/gnuplot.lua reads from plots/*.gp:
--   smallest_font: the committed scripts' sizes (9 pt, the task figure's key 8 pt), a
--   planted script's 6 pt, a forest plot's namefont, and an error for a script with none;
--   a table that fits prints at its own size; one scaled down to the line under 7 pt stops
--   LaTeX with an error naming it; a figure printed so narrow that its 9 pt text would be
--   3.5 pt stops it too, and one without its font size in numbers.tex is an error; the
--   committed figure at the paper's width passes.
local check = require "check"
local fs = require "repro.core.fs"
local gnuplot = require "repro.report.gnuplot"

local t = check.new("test_printsize")

-- the scripts' smallest font sizes
t:eq(gnuplot.smallest_font("plots", "curves"), 9, "curves.gp: common.gp's 9 pt")
t:eq(gnuplot.smallest_font("plots", "tasks"), 8, "tasks.gp: its key's 8 pt")
t:eq(gnuplot.smallest_font("plots", "forest", { namefont = "LM Mono 10,7.5", labels = "a,5" }),
  7.5, "forest: a namefont's size counts, a label's text does not")
local gp = check.tmpdir()
check.write(gp .. "/common.gp", "set terminal pdfcairo font 'LM Roman 10,9'\n")
check.write(gp .. "/tiny.gp", "set key font \",6\"\nplot x\n")
t:eq(gnuplot.smallest_font(gp, "tiny"), 6, "a planted script's 6 pt key font")
check.write(gp .. "/common.gp", "set terminal pdfcairo\n")
check.write(gp .. "/bare.gp", "plot x\n")
t:raises(function() gnuplot.smallest_font(gp, "bare") end, "sets no font size",
  "a script with no font size is an error")
t:raises(function() gnuplot.smallest_font(gp, "missing") end, "cannot read",
  "a missing script is an error")

-- LaTeX on a small document with paper/printsize.tex: exit code and log
local dir = check.tmpdir()
check.write(dir .. "/printsize.tex", assert(fs.read("paper/printsize.tex")))
local fig = "paper/figures/final_loss.pdf"
t:ok(fs.exists(fig), "the committed figure exists: " .. fig)
check.write(dir .. "/fig.pdf", assert(fs.read(fig)))
local function latex(name, body, defs)
  check.write(dir .. "/" .. name .. ".tex", "\\documentclass[10pt]{article}\n" ..
    "\\usepackage{graphicx}\n\\input{printsize}\n" .. (defs or "") ..
    "\\begin{document}\n" .. body .. "\n\\end{document}\n")
  local code = check.run("cd " .. fs.quote(dir) .. " && pdflatex -interaction=nonstopmode " ..
    "-halt-on-error " .. name .. ".tex")
  return code, fs.read(dir .. "/" .. name .. ".log") or ""
end
local row = string.rep("a wide cell of words & ", 5) .. "end"

local code, log = latex("fits", "\\renewcommand{\\ReportCurrent}{narrow}" ..
  "\\ReportFit{\\begin{tabular}{ll}a & b\\end{tabular}}")
t:eq(code, 0, "a table that fits compiles")
t:ok(log:find("printsize: table narrow prints its smallest text at 10.0pt", 1, true),
  "it prints at the document's 10 pt")

code, log = latex("scaled", "\\renewcommand{\\ReportCurrent}{wider}" ..
  "\\ReportFit{\\begin{tabular}{lllll}" .. string.rep("a wide cell of words & ", 4) ..
  "end\\end{tabular}}")
t:eq(code, 0, "a table a little too wide compiles, scaled down")
local pt = tonumber(log:match("printsize: table wider prints its smallest text at ([%d.]+)pt"))
t:ok(pt and pt >= 7 and pt < 10, "it prints between 7 and 10 pt: " .. tostring(pt))

code, log = latex("toowide", "\\renewcommand{\\ReportCurrent}{widest}" ..
  "\\ReportFit{\\begin{tabular}{llllllllllll}" .. row .. " & " .. row .. "\\end{tabular}}")
t:ok(code ~= 0, "a table that would print under 7 pt stops LaTeX")
t:ok(log:find("printsize: table widest would print its smallest text at", 1, true),
  "the error names the table")

local font = "\\expandafter\\def\\csname ReportFigFont@fig\\endcsname{9}\n"
code, log = latex("figok", "\\ReportFigureBox{fig}{0.9\\linewidth}{0.4\\textheight}", font)
t:eq(code, 0, "the committed figure at 0.9 of the line compiles")
t:ok(log:find("printsize: figure fig prints its smallest text at", 1, true), "and says its size")

code, log = latex("fignarrow", "\\ReportFigureBox{fig}{2in}{0.4\\textheight}", font)
t:ok(code ~= 0, "the figure 2 in wide (its 9 pt text at about 3.5 pt) stops LaTeX")
pt = tonumber(log:match("printsize: figure fig would print its smallest text at ([%d.]+)pt"))
t:ok(pt and pt > 3 and pt < 4, "the error names the figure and its size: " .. tostring(pt))

code, log = latex("fignofont", "\\ReportFigureBox{fig}{0.9\\linewidth}{0.4\\textheight}")
t:ok(code ~= 0 and log:find("numbers.tex gives no smallest font size for figure fig", 1, true),
  "a figure without its font size is an error")

os.exit(t:done())
