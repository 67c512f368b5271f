-- README.md's Results paragraph, generated from the summaries of this paper's studies
-- (paper/paper.lua: extensions), so that it cannot fall behind them: the report writes
-- paper/results.md (this file's `outputs`), `make paper` copies it into README.md
-- between the results markers (scripts/readme_results.lua), and test_prose fails when the
-- two differ.  Each line is a sentence of the statement ledger (paper/lib/findings.lua,
-- its "readme" entries, in order), checked against the analyses it names as the paper's
-- are; a study that has not run leaves its line out.  Plain Markdown.
local ledger = require "repro.report.ledger"

local M = {}

M.INTRO = "In short, as the committed records stand (this list is generated from the " ..
  "study summaries by `make paper`; each line names its study, and `bin/repro ledger` " ..
  "lists the analysis behind each; the paper has every interval, test and verdict):"

-- The files this extension adds to the paper folder: results.md, the ledger's README
-- sentences as a list.
function M.outputs(ctx)
  local lines, texts = {}, {}
  for _, r in ipairs(ctx.ledger or {}) do
    if r.entry.where == "readme" and r.text ~= "" then lines[#lines + 1] = "- " .. r.text end
    texts[#texts + 1] = r.text
  end
  local text = M.INTRO .. "\n\n" .. table.concat(lines, "\n") .. "\n"
  -- no sentence outside the ledger's states a finding
  local problems = ledger.check_md(text, "paper/results.md", texts)
  if #problems > 0 then
    error({ message = "report: the statement ledger: " .. table.concat(problems, "\n") })
  end
  return { ["results.md"] = text }
end

return M
