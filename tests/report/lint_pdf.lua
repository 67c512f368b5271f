-- The prose lint (tests/report/prose_lint.lua) on a PDF's text, as `make paper` runs it:
--   bin/repro script tests/report/lint_pdf.lua PAPER_DIR/main.pdf
-- Prints every fault with its context and exits 1 when there is one.
local fs = require "repro.core.fs"
local host = require "repro.host"
local check = dofile(host.root .. "/tests/lua/check.lua")
local pdf = arg[1]
if not pdf then
  io.stderr:write("usage: bin/repro script tests/report/lint_pdf.lua FILE.pdf\n")
  os.exit(2)
end
local _, text = check.run("pdftotext " .. fs.quote(pdf) .. " -")
if not text or #text < 1000 then
  io.stderr:write("lint_pdf: no text from " .. pdf .. "\n")
  os.exit(1)
end
local lint = dofile(host.root .. "/tests/report/prose_lint.lua")
local faults = lint.lint(text)
for _, f in ipairs(faults) do io.stderr:write("paper: prose lint: ", f.kind, ": ", f.at, "\n") end
if #faults > 0 then
  io.stderr:write("paper: ", #faults, " fault(s) of wording in ", pdf, " (tests/report/prose_lint.lua)\n")
  os.exit(1)
end
