-- Outputs that explain themselves.  A tiny two-variant study with tasks (no
-- dropout vs dropout 0.1, declared as the factor `dropout`; 1 block of width 16, 6 steps,
-- the core suite, 3 seeds) is run in a temporary records root; then:
--   * the terminal's verdict table names its interval's level and kind and counts its
--     Holm family in number ("Holm over 1 test");
--   * `bin/repro report` names every interval's kind (the verdict's decision interval in
--     the Verdicts table's header and the forest's caption; the task table's macro
--     interval as the BCa bootstrap, descriptive), each untrained control by its set-up,
--     the family in number, and each variant by one name in every table and figure (the
--     forest's row, the curves' and the task figure's keys: nodrop and drop01, never the
--     factor's levels 0.0 and 0.1);
--   * `bin/repro export`'s CSV header has no name twice (the config key seed is
--     config.seed).
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local sys = require "repro.sys"
local t = check.new("test_explain")

local repro = os.getenv("REPRO") or "bin/repro"
local tmp = check.tmpdir()
local out_root = tmp .. "/out"
check.write(tmp .. "/zz_drop.lua", [[
return {
  name = "zz_drop",
  description = "Does dropout 0.1 change zero-shot task accuracy of a tiny model?",
  factor = "dropout",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 32, batch = 4, iters = 6,
    warmup = 1, diag_every = 3, diag_windows = 2, tasks = "core" },
  variants = { { name = "nodrop" }, { name = "drop01", dropout = 0.1 } },
  seeds = { 1, 2, 3 },
  analysis = { baseline = "nodrop", metrics = { "task_macro_acc_0shot", "val_loss" },
    primary = "task_macro_acc_0shot", better = "higher", min_effect = 0.02, alpha = 0.05,
    correction = "holm", resamples = 200, test = "t",
    tasks = { suite = "core", shots = { 0, 3 } } },
}
]])
local function sh(cmd) return check.run("cd " .. fs.quote(host.root) .. " && " .. cmd) end

local code, out, err = sh(repro .. " run " .. tmp .. "/zz_drop.lua --out-root " .. out_root)
t:eq(code, 0, "the study runs: " .. err)
t:ok(out:find("95 % t interval (decision)", 1, true), "the terminal's interval column names " ..
  "its level and kind: " .. out)
t:ok(out:find("Holm over 1 test of the primary metric", 1, true) and
  not out:find("the 1 tests", 1, true), "and its family in number")

code, out, err = sh(repro .. " report zz_drop --experiments " .. out_root .. " --studies " .. tmp)
t:eq(code, 0, "bin/repro report: " .. err)
local dir = out_root .. "/zz_drop/report"
local html = fs.read(dir .. "/report.html") or ""
local text = html:gsub("<[^>]*>", " "):gsub("%s+", " ")
local function has(s, what) t:ok(text:find(s, 1, true), what .. ": " .. s) end
has("mean difference 95 % t interval (decision) p (Holm)", "in its place in the header")
has("with its decision interval (blue; 95 % t interval (decision), as in the Verdicts table)",
  "the forest's caption names the same interval")
has("untrained (GPT-2 init, 8 blocks)", "an untrained column names its set-up")
has("untrained (PyTorch init, 4 blocks, tied)", "the other untrained column names its set-up")
has("drop01 - nodrop: difference (Holm p); macro: BCa bootstrap interval",
  "the task comparison's column names what its cells are")
t:ok(text:find("macro %- %- %- %-[ %-]* [%d.]+ ± [%d.]+ [%d.]+ ± [%d.]+ %-?[%d.e-]+, BCa %[") ~= nil,
  "the macro cell says its interval is the BCa bootstrap's")
has("descriptive, not the verdict's", "the task table's note says which interval decides")
has("Holm over 1 test of the primary metric", "the family in number")
t:ok(not text:find("the 1 tests", 1, true), "no 'the 1 tests' anywhere in the report")
local tex = fs.read(dir .. "/report.tex") or ""
t:ok(tex:find("t interval (decision)", 1, true) and tex:find("BCa [", 1, true) and
  tex:find("untrained (GPT-2 init, 8 blocks)", 1, true), "report.tex says the same")

-- one name per variant: every label the figures draw
local labels = {}
for _, name in ipairs(sys.listdir(dir .. "/data") or {}) do
  for label in (fs.read(dir .. "/data/" .. name) or ""):gmatch('"([^"]*)"') do
    labels[label] = true
  end
end
t:ok(labels["drop01 - nodrop"], "the forest's row: drop01 - nodrop")
t:ok(labels.nodrop and labels.drop01, "the curves' and task figure's keys: nodrop, drop01")
local levels = {}
for label in pairs(labels) do
  if label:find("0%.1") or label:find("0%.0") then levels[#levels + 1] = label end
end
t:eq(table.concat(levels, ", "), "", "no figure names a variant by the factor's level")
t:ok(not tex:find("0.1 - 0.0", 1, true) and not html:find("0.1 - 0.0", 1, true),
  "nor does a table or caption")

-- export: unique CSV headers
code, out, err = sh(repro .. " export zz_drop --out-root " .. out_root)
t:eq(code, 0, "bin/repro export: " .. err)
local header = out:match("^([^\n]*)") or ""
local seen, twice = {}, {}
for col in header:gmatch("[^,]+") do
  if seen[col] then twice[#twice + 1] = col end
  seen[col] = true
end
t:eq(table.concat(twice, ", "), "", "no CSV header twice")
t:ok(seen.seed and seen["config.seed"], "the record's seed and the config key config.seed")

check.rmtree(tmp)
t:done()
