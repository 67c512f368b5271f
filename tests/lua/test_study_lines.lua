-- Every line number in a study file's error points at the offending value: an invalid value in a variant gives that variant's line even when its key
-- appears earlier in the file (in the description, in base, in another variant), and so
-- do base keys, analysis fields and list items; a value given with --set names no line.
local check = require "check"
local fs = require "repro.core.fs"
local prob = require "repro.study.problems"
local t = check.new("test_study_lines")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

-- line: 1
local TEMPLATE = [[
return {
  name = "lines",
  description = "dropout, lr and min_effect on a tiny model: does dropout help?",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, lr = %s },
  seeds = { 1, %s },
  analysis = { baseline = "nodrop", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", alpha = 0.05, correction = "holm", resamples = 1000,
    min_effect = %s,
    test = "t" },
  variants = {
    { name = "nodrop", dropout = 0.0 },
    {
      name = "drop",
      dropout = %s,
    },
  },
}
]]
local function errors(lr, seed, min_effect, dropout, extra)
  local path = dir .. "/lines.lua"
  check.write(path, string.format(TEMPLATE, lr, seed, min_effect, dropout))
  local _, _, err = check.run(repro .. " run " .. q(path) .. " --dry-run" .. (extra or ""))
  return err
end
local err = errors("3e-4", "2", "0.01", "1.5")
t:ok(err:find("lines.lua:15: variants[2].dropout: dropout=1.5", 1, true),
  "an invalid value in a variant: that variant's line (15), not the description's: " .. err)
err = errors("-1", "2", "0.01", "0.1")
t:ok(err:find("lines.lua:5: base.lr", 1, true), "an invalid base value: its line (5): " .. err)
err = errors("3e-4", "2", "-0.5", "0.1")
t:ok(err:find("lines.lua:9: analysis.min_effect", 1, true),
  "an invalid analysis value: its line (9), not the description's: " .. err)
err = errors("3e-4", "1", "0.01", "0.1")
t:ok(err:find("lines.lua:6: seeds[2]", 1, true), "a seed listed twice: its line (6): " .. err)
err = errors("3e-4", "2", "0.01", "0.1", " --set dropout=2")
t:ok(err:find("--set dropout", 1, true) and not err:find("lines.lua:%d+: %-%-set"),
  "a value from --set names no line of the file: " .. err)

-- the locator on its own: literal tables, long strings and comments, tables built by code
local lines = prob.value_lines([==[
-- a comment { with = braces }
local x = { 1, 2 }
return {
  name = [[a
  b]], --[[ base = { lr = 1 } ]]
  base = { lr = 2, ["iters"] = 3 },
  variants = { { name = "a" }, x, f({ lr = 4 }),
    { name = "b", dropout = 0.5 } },
}
]==])
t:eq(lines.name, 4, "name")
t:eq(lines["base.lr"], 6, "base.lr after a long string and a long comment")
t:eq(lines["base.iters"], 6, "a [\"key\"] field")
t:eq(lines["variants[4].dropout"], 8, "a list item after items built by code")
t:eq(lines["variants[3].lr"], nil, "a table inside a call has no path")
t:done()
