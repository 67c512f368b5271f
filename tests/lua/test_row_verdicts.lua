-- Each verdict the abstract states is its Table 1 row's (tests/report/row_verdicts.lua):
-- first on planted main texts, each fault of its list found (a row the abstract names that
-- the table lacks, a row of the table the abstract leaves out, a row's verdict inside an
-- assertion that expects another, rows named together whose verdicts differ, a verdict
-- outside every assertion, a verdict word typed by hand, a row defined twice) and a good
-- text passing; then on the committed paper/main.tex with paper/numbers.tex.
local check = require "check"
local fs = require "repro.core.fs"
local rv = dofile("tests/report/row_verdicts.lua")

local t = check.new("test_row_verdicts")

local NUMBERS = [[
\newcommand{\RepVerdict}{not testable here}
\newcommand{\RmsVerdict}{not testable here}
\newcommand{\TunedVerdict}{worse}
\newcommand{\SeqVerdict}{better}
]]
local GOOD = [[
\DefRowVerdict{ln}{\RepVerdict}
\DefRowVerdict{rms}{\RmsVerdict}
\DefRowVerdict{tuned}{\TunedVerdict}
\DefRowVerdict{hOneB}{exploratory}
\begin{document}
\begin{abstract}
\Replicated{layernorm_perplexity}{not testable here}{The claim is \RowVerdict{ln}.}
\Claim{tuned}{layernorm}{none}{worse}{With tuned rates LayerNorm is \RowVerdict{tuned}.}
\Replicated{rmsnorm_perplexity}{not testable here}{The other claims are likewise
\RowVerdict{rms,ln}.}
\Assert{instability_v1}{comparisons[3].improvement.share}{1}{H1b is \RowVerdict{hOneB}.}
\end{abstract}
\begin{table}[p]
\caption{Claims.}\label{tab:claims}
\begin{tabular}{ll}
LayerNorm & \RowVerdict{ln} \\
RMSNorm & \RowVerdict{rms} \\
Tuned & \RowVerdict{tuned} \\
H1b & \RowVerdict{hOneB} \\
\end{tabular}
\end{table}
\end{document}
]]

local function problems(src)
  local p = rv.check(src, NUMBERS)
  return p
end
local function has(list, what)
  for _, x in ipairs(list) do if x:find(what, 1, true) then return true end end
  return false
end

local p, n = rv.check(GOOD, NUMBERS)
t:eq(#p, 0, "a good text passes: " .. table.concat(p, "; "))
t:eq(n, 4, "its four rows are checked")

-- each fault, planted
p = problems(GOOD:gsub("likewise\n\\RowVerdict{rms,ln}", "likewise\n\\RowVerdict{rms,nope}", 1))
t:ok(has(p, "row nope, which \\DefRowVerdict never defines"), "a row nobody defined: " ..
  table.concat(p, "; "))
p = problems(GOOD:gsub("H1b & \\RowVerdict{hOneB} \\\\\n", "", 1))
t:ok(has(p, "row hOneB, which Table 1 does not print"), "a row the table lacks: " ..
  table.concat(p, "; "))
p = problems(GOOD:gsub("\\Assert{instability_v1}[^\n]*\n", "", 1))
t:ok(has(p, "does not state the verdict of Table 1's row hOneB"),
  "a row of the table the abstract leaves out: " .. table.concat(p, "; "))
p = problems(GOOD:gsub("LayerNorm is \\RowVerdict{tuned}", "LayerNorm is \\RowVerdict{tuned}, " ..
  "and at the closest set-up \\RowVerdict{ln}", 1))
t:ok(has(p, "prints row ln's verdict \"not testable here\" inside \\Claim, which expects \"worse\""),
  "a row's verdict inside an assertion that expects another: " .. table.concat(p, "; "))
p = problems(GOOD:gsub("\\RowVerdict{rms,ln}", "\\RowVerdict{rms,tuned}", 1))
t:ok(has(p, "names rows rms,tuned together, but their verdicts differ"),
  "rows named together whose verdicts differ: " .. table.concat(p, "; "))
p = problems(GOOD:gsub("\\end{abstract}", "Here H1b is \\RowVerdict{hOneB}.\n\\end{abstract}", 1))
t:ok(has(p, "states row hOneB's verdict outside every checked assertion"),
  "a verdict outside every assertion: " .. table.concat(p, "; "))
p = problems(GOOD:gsub("The claim is \\RowVerdict{ln}%.", "The claim is not testable here.", 1))
t:ok(has(p, "types the verdict word \"testable\""), "a verdict word typed by hand: " ..
  table.concat(p, "; "))
p = problems(GOOD:gsub("\\begin{document}", "\\DefRowVerdict{ln}{\\TunedVerdict}\n\\begin{document}", 1))
t:ok(has(p, "\\DefRowVerdict{ln} is defined twice"), "a row defined twice: " ..
  table.concat(p, "; "))
-- a comment is not text
p = problems(GOOD:gsub("\\end{abstract}", "%% not testable here, better\n\\end{abstract}", 1))
t:eq(#p, 0, "a comment's words are not the abstract's: " .. table.concat(p, "; "))

-- the committed paper
local main = fs.read("paper/main.tex")
local numbers = fs.read("paper/numbers.tex")
t:ok(main and numbers, "paper/main.tex and paper/numbers.tex exist (make paper)")
p, n = rv.check(main or "", numbers or "")
t:eq(#p, 0, "paper/main.tex: each verdict the abstract states is its Table 1 row's: " ..
  table.concat(p, "\n"))
t:ok((n or 0) >= 10, "Table 1's rows checked: " .. tostring(n))

t:done()
