-- `bin/repro ledger`: the statement ledger (lua/repro/report/ledger.lua) as a table, each
-- finding sentence with the analyses that carry it and their verdicts, checked as `make
-- paper` checks it (exit 1, every problem named, when one fails).
--   bin/repro ledger [--experiments DIR] [--manifest FILE] [--tex FILE] [--trust-summaries]
--                    [--studies DIR]
-- --tex checks another LaTeX source than paper/main.tex (the tests' planted ones).
local host = require "repro.host"
local base = require "repro.core.base"
local report = require "repro.report"
local ledger = require "repro.report.ledger"

local M = {}

function M.main(args)
  local o = { experiments = "experiments", manifest = host.root .. "/paper/paper.lua" }
  local i = 1
  while i <= #args do
    local a = args[i]
    local function value()
      i = i + 1
      return args[i] or base.user_error("repro ledger: %s needs a value", a)
    end
    if a == "--experiments" then o.experiments = value():gsub("/+$", "")
    elseif a == "--manifest" then o.manifest = value()
    elseif a == "--tex" then o.tex = value()
    elseif a == "--studies" then o.studies = value():gsub("/+$", "")
    elseif a == "--trust-summaries" then o.trust_summaries = true
    else
      base.user_error("repro ledger: unknown argument %s (usage: bin/repro ledger " ..
        "[--experiments DIR] [--manifest FILE] [--tex FILE] [--trust-summaries] " ..
        "[--studies DIR])", base.printable(a))
    end
    i = i + 1
  end
  local ctx = report.context(o)
  local rows, problems = report.ledger(ctx, o.tex)
  -- one block per sentence: where and name, the sentence, each analysis -> its verdict
  local out = {}
  for _, r in ipairs(rows) do
    out[#out + 1] = string.format("%s  %s", r.entry.where, r.entry.id)
    out[#out + 1] = "  " .. r.text
    for _, a in ipairs(r.analyses) do
      out[#out + 1] = string.format("    -> %s: %s", a.label, a.verdict or
        (a.quoted and "quoted") or "-")
    end
  end
  for _, line in ipairs(out) do io.write(base.printable(line), "\n") end
  io.write(string.format("ledger: %d finding sentences, %d analyses named\n", #rows,
    (function() local n = 0 for _, r in ipairs(rows) do n = n + #r.analyses end return n end)()))
  if #problems > 0 then
    io.stderr:write(base.printable("ledger: " .. #problems .. " problem(s):\n" ..
      table.concat(problems, "\n")), "\n")
    return 1
  end
  return 0
end

return M
