-- Recomputes every summary of an experiments folder from its verified records and fails
-- on one that differs (make verify).  Builds skip this: the report trusts a summary whose
-- inputs (record.inputs_digest) are those it was computed from.
--   bin/repro script scripts/check_summaries.lua [EXPERIMENTS [STUDIES]]
-- STUDIES: the folder of the study files (default lua/experiments/).
local data = require "repro.report.data"
local host = require "repro.host"

local exp = arg[1] or (host.root .. "/experiments")
local names = data.list_studies(exp)
for _, name in ipairs(names) do
  data.load_study(exp, name, nil, nil, { recompute = true, studies = arg[2] })
end
print(string.format("check_summaries: %d summaries, each the bytes its records give now", #names))
