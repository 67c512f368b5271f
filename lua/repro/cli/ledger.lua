-- `bin/repro ledger`: the statement ledger, checked as `make paper` checks it (exit 1,
-- every problem named, when one fails): the main text's checked assertions
-- (lua/repro/report/assertions.lua), one line each: its file and line, the macro, the
-- study and analysis it names, the verdict it expects and the summary's, ok or the fault;
-- then README's generated finding sentences (lua/repro/report/ledger.lua) with the analyses
-- that carry them and their verdicts.
--   bin/repro ledger [--experiments DIR] [--manifest FILE] [--tex FILE] [--trust-summaries]
--                    [--studies DIR] [--lenient-assertions]
-- --tex checks another LaTeX source than paper/main.tex (the tests' planted ones; with
-- another --manifest and no --tex no main text is checked);
-- --lenient-assertions lists contradicted and missing assertions without failing on them.
local host = require "repro.host"
local base = require "repro.core.base"
local report = require "repro.report"
local assertions = require "repro.report.assertions"

local M = {}

M.USAGE = "usage: bin/repro ledger [--experiments DIR] [--manifest FILE] [--tex FILE] " ..
  "[--trust-summaries] [--studies DIR] [--lenient-assertions]"

function M.main(args)
  local o = base.parse_options(args, "repro ledger", M.USAGE, {
    ["--experiments"] = { key = "experiments", kind = "value" },
    ["--manifest"] = { key = "manifest", kind = "value" },
    ["--tex"] = { key = "tex", kind = "value" },
    ["--studies"] = { key = "studies", kind = "value" },
    ["--trust-summaries"] = { key = "trust_summaries", kind = "flag" },
    ["--lenient-assertions"] = { key = "lenient", kind = "flag" } })
  if o.help then return 0 end
  if o.targets[1] then
    base.user_error("repro ledger: unknown argument %s (%s)", base.printable(o.targets[1]), M.USAGE)
  end
  o.manifest_given = o.manifest ~= nil
  o.manifest = o.manifest or (host.root .. "/paper/paper.lua")
  o.experiments = (o.experiments or "experiments"):gsub("/+$", "")
  o.studies = o.studies and o.studies:gsub("/+$", "")
  local ctx = report.context(o)
  local rows, problems, arows = report.ledger(ctx, report.main_text(o), o.lenient)
  local tex = o.tex or "paper/main.tex"
  local out = assertions.listing(arows, tex)
  local n_ok, n_analyses = 0, 0
  for _, r in ipairs(arows) do if r.ok then n_ok = n_ok + 1 end end
  out[#out + 1] = string.format("ledger: %d assertions in %s, %d as the summaries say",
    #arows, tex, n_ok)
  -- one block per sentence: where and name, the sentence, each analysis -> its verdict
  for _, r in ipairs(rows) do
    n_analyses = n_analyses + #r.analyses
    out[#out + 1] = string.format("%s  %s", r.entry.where, r.entry.id)
    out[#out + 1] = "  " .. r.text
    for _, a in ipairs(r.analyses) do
      out[#out + 1] = string.format("    -> %s: %s", a.label, a.verdict or
        (a.quoted and "quoted") or "-")
    end
  end
  for _, line in ipairs(out) do io.write(base.printable(line), "\n") end
  io.write(string.format("ledger: %d finding sentences, %d analyses named\n", #rows,
    n_analyses))
  if #problems > 0 then
    io.stderr:write(base.printable("ledger: " .. #problems .. " problem(s):\n" ..
      table.concat(problems, "\n")), "\n")
    return 1
  end
  return 0
end

return M
