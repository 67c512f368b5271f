-- Outputs that describe a setup state the effective one: a
-- study run with --set says its overrides in the terminal (run and analyze), and its own
-- report's Design table shows the base config with the overrides applied and marked, and
-- the overrides themselves; the guardrail names the bigram level too (below unigram:
-- learned nothing; between: learned less than character pairs) in the terminal and the
-- report and summary.json's `warnings` (each entry with its level).
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local engine = require "engine"
local guardrail = require "repro.analysis.guardrail"
local t = check.new("test_setup")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

-- the levels
local ng = engine.ngram_ppl("data/tinyshakespeare.txt")
t:eq(guardrail.entry("a", ng.unigram_ppl + 1, "data/tinyshakespeare.txt").level, "unigram",
  "at or above the unigram PPL: the unigram level")
local w = guardrail.entry("a", (ng.unigram_ppl + ng.bigram_ppl) / 2, "data/tinyshakespeare.txt")
t:ok(w and w.level == "bigram" and w.text:find("learned less than character pairs", 1, true),
  "between bigram and unigram: the bigram level")
t:eq(guardrail.entry("a", ng.bigram_ppl - 0.5, "data/tinyshakespeare.txt"), nil,
  "below the bigram PPL: no warning")

-- an override to false shows false, not the base config's value
local final = json.decode(fs.read("experiments/final/summary.json"))
final.base = { tie_embeddings = true, iters = 300 }
final.command_line_overrides = { tie_embeddings = false }
local vt = require("repro.report.terminal").verdict_table(final, 200)
t:ok(vt:find("setup: iters=300 tie_embeddings=false; command-line overrides on every run: " ..
  "--set tie_embeddings=false", 1, true), "a --set to false is shown as false: " .. vt)

local S = dir .. "/set_up.lua"
check.write(S, [[
return { name = "set_up", description = "x",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 8, iters = 80,
    warmup = 5, lr = 3e-3 },
  variants = { { name = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss", "val_ppl" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]])
local root = dir .. "/o"
local set = " --set iters=60,diag_every=20 --out-root " .. q(root)
local code, out, err = check.run(repro .. " run " .. q(S) .. " --jobs 2" .. set)
t:eq(code, 0, "the study runs with --set: " .. err)
t:ok(err:find("--set iters=60,diag_every=20: every run of set_up trains with these overrides",
  1, true), "run says the overrides when it starts: " .. err)
t:ok(out:find("setup: batch=8 context=32 d_model=32 diag_every=20 iters=60 lr=0.003", 1, true)
  and out:find("command-line overrides on every run: --set diag_every=20,iters=60", 1, true),
  "the verdict table states the effective config and the overrides: " .. out)
local _, nbig = out:gsub("WARNING: [%w]+: validation PPL [%d.]+ is at or above the bigram PPL", "")
t:eq(nbig, 2, "the terminal warns at the bigram level for both variants: " .. out)
code, out = check.run(repro .. " analyze " .. q(S) .. set)
t:ok(code == 0 and out:find("--set diag_every=20,iters=60", 1, true),
  "analyze states them too: " .. out)
local sum = json.decode(fs.read(root .. "/set_up/summary.json"))
t:eq(sum.command_line_overrides.iters, 60, "summary.json has the overrides")
t:eq(#(sum.warnings or {}), 2, "summary.json's warnings name both variants at the bigram level")
for _, w in ipairs(sum.warnings or {}) do
  t:ok(w.level == "bigram" and w.val_ppl >= ng.bigram_ppl and w.val_ppl < ng.unigram_ppl and
    math.abs(w.bigram_ppl - ng.bigram_ppl) < 1e-9 and w.text == nil and
    guardrail.entry(w.variant, w.val_ppl, w.data).text:find("learned less than character pairs",
      1, true),
    "summary warning " .. tostring(w.variant) .. ": level " .. tostring(w.level) .. ", PPL " ..
    tostring(w.val_ppl) .. " between the bigram " .. ng.bigram_ppl .. " and unigram PPL")
end

code, _, err = check.run(repro .. " report set_up --experiments " .. q(root) ..
  " --studies " .. q(dir))
t:eq(code, 0, "the study's report: " .. err)
local html = fs.read(root .. "/set_up/report/report.html") or ""
t:ok(html:find("diag_every = 20 (--set), iters = 60 (--set), lr = 0.003", 1, true),
  "the report's base config is the effective one, overrides marked: " .. html:sub(1, 3000))
t:ok(html:find("command-line overrides</td><td>--set diag_every=20,iters=60", 1, true),
  "the report's Design table names the overrides")
local _, nrep = html:gsub("WARNING: [%w]+: validation PPL [%d.]+ is at or above the bigram PPL", "")
t:eq(nrep, 2, "the report warns at the bigram level")
local tex = fs.read(root .. "/set_up/report/report.tex") or ""
t:ok(tex:find("iters = 60 (--set)", 1, true), "report.tex too")

-- the forest plot and the curves (item 9): a study name with an underscore is set in the
-- mono font (one underscore reads as one), the caption explains the diamonds, and the
-- validation curve is drawn from val_loss, the alias of log.csv's d_val_loss
t:ok(tex:find("minimum detectable effect (MDE)", 1, true) and tex:find("diamonds", 1, true),
  "the forest plot's caption explains the diamonds at +-MDE")
t:ok(fs.exists(root .. "/set_up/report/figures/png/val_loss.png"),
  "the validation-loss curves are drawn (column val_loss: d_val_loss)")
if os.execute("command -v pdffonts >/dev/null 2>&1") then
  local _, fonts = check.run("pdffonts " .. q(root .. "/set_up/report/figures/forest.pdf"))
  t:ok(fonts:find("LMMono10", 1, true), "the forest plot's study header is in LM Mono: " .. fonts)
end
for _, gp in ipairs({ "common", "forest", "curves", "effect", "divergence", "lrsweep",
  "valend", "reliability", "position", "resid", "classnorm" }) do
  local src = (fs.read("plots/" .. gp .. ".gp") or ""):gsub("#[^\n]*", "")
  t:ok(not src:gsub("noenhanced", ""):find("enhanced", 1, true),
    "plots/" .. gp .. ".gp: no enhanced text (labels from data print as they are)")
end
t:done()
