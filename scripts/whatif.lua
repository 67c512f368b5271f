-- The supplement's what-if table on the terminal (paper/lib/tex_whatif.lua), each
-- comparison replayed: where a sequential design declared now would have stopped it, its
-- verdict beside the fixed design's, and the runs it would have needed.
--   bin/repro script scripts/whatif.lua [EXPERIMENTS]
local host = require "repro.host"
local report = require "repro.report"
local extension = require "repro.core.extension"
local textable = require "repro.core.textable"

local ctx = report.context({ experiments = arg[1] or "experiments",
  manifest = host.root .. "/paper/paper.lua" })
io.write(extension.load("paper/lib/tex_whatif.lua", "scripts/whatif.lua").text(ctx,
  textable.width()))
