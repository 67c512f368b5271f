-- A user's study is the user's.  In a copy of the project, a tiny study that is
-- not about norms (tied vs untied output layer, 2 blocks of width 32, a few steps, on a
-- small corpus of its own in data/) is
-- dropped into lua/experiments/ and run; `make paper` (its summaries read as committed:
-- test_ledger recomputes them) then changes no file of the paper,
-- of its figures (README's among them) or of plots/data; `bin/repro report <study>`
-- writes experiments/<study>/report/ with a PDF and an HTML page that name the study's
-- own variants and say nothing of the claim or of a rule it did not register.  The HTML
-- is read back by headless Chromium when it is installed.
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local t = check.new("test_user_study")

local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) == "/" then repro = fs.relative_to_root(repro) end
-- The build the binary belongs to (make test: build/ and bin/; make test-asan: build-asan/),
-- so that make in the copy finds everything up to date instead of rebuilding.
local bin_dir = repro:match("^(.*)/repro$") or "bin"
local build_dir = bin_dir:match("^(.*)/bin$") or "build"

local copy = check.tmpdir()
local code, _, err = check.run(string.format("tar -C %s --exclude=./.git --exclude=./build/quick " ..
  "--exclude=./build-asan/quick -cf - . | tar -C %s -xf -", fs.quote(host.root), fs.quote(copy)))
t:eq(code, 0, "the project copied: " .. err)
-- the copy shares the project's git history (the paper's pre-registration table reads
-- when each study file was committed): a .git file naming the project's git folder
local gitdir = fs.capture("git -C " .. fs.quote(host.root) .. " rev-parse --absolute-git-dir")
if gitdir and gitdir ~= "" then
  check.write(copy .. "/.git", "gitdir: " .. gitdir .. "\n")
end
local function run(cmd)
  return check.run("cd " .. fs.quote(copy) .. " && " .. cmd)
end

-- Every file of the paper's outputs with its digest.
local function digests()
  local out, list = {}, {}
  local _, text = run("find paper plots/data README.md -type f | sort")
  for path in text:gmatch("[^\n]+") do
    list[#list + 1] = path
    out[path] = fs.sha256(copy .. "/" .. path)
  end
  return out, list
end
local before, files = digests()
t:ok(#files > 50, "the paper's files: " .. #files)

-- the user's own corpus in the copy's data/ (a small one: a run's final evaluation of Tiny
-- Shakespeare's validation split would cost most of the study's time)
check.small_corpus(copy .. "/data/zz_words.txt")
check.write(copy .. "/lua/experiments/zz_tied.lua", [[
return {
  name = "zz_tied",
  description = "Does tying the output layer to the token embedding change validation loss?",
  base = { n_layer = 2, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 20,
    warmup = 2, diag_every = 5, diag_windows = 2, data = "data/zz_words.txt" },
  variants = { { name = "tied" }, { name = "untied", tie_embeddings = false } },
  seeds = { 1, 2, 3 },
  analysis = { baseline = "tied", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.02, alpha = 0.05, correction = "holm",
    resamples = 1000, test = "t" },
}
]])
local out
code, out, err = run(repro .. " run lua/experiments/zz_tied.lua")
t:eq(code, 0, "the user's study runs: " .. err)
t:ok(out:find("untied", 1, true) and not out:lower():find("claim", 1, true) and
  not out:lower():find("rule 1", 1, true), "its verdict table on the terminal: its variants, " ..
  "no claim, no rule it did not register: " .. out)
local summary = fs.read(copy .. "/experiments/zz_tied/summary.json") or ""
t:ok(summary ~= "" and not summary:find("claim", 1, true),
  "its summary carries nothing of the claim")
t:ok(summary ~= "" and not summary:find("rule1", 1, true) and
  not summary:find("rule_1", 1, true), "nor anything of rule 1, which it did not register")

-- The paper's summaries are read as committed (REPORT_FLAGS=--trust-summaries): that each
-- is what its records give now is test_ledger's check (its context recomputes them all);
-- this one is about what the user's study changes, and a study the manifest does not name
-- is read in neither mode (report/init.lua's context).
code, _, err = run(string.format("make --no-print-directory paper BIN=%s BUILD=%s " ..
  "REPORT_FLAGS=--trust-summaries", bin_dir, build_dir))
t:eq(code, 0, "make paper: " .. err)
t:ok(not err:find("zz_tied", 1, true), "the paper's report does not read it: " .. err)
local after, files_after = digests()
t:eq(#files_after, #files, "make paper adds or removes no file of the paper")
local changed = {}
for _, f in ipairs(files) do
  if after[f] ~= before[f] then changed[#changed + 1] = f end
end
t:eq(table.concat(changed, ", "), "", "make paper changes no file of the paper, its figures " ..
  "or plots/data")

code, _, err = run(repro .. " report zz_tied")
t:eq(code, 0, "bin/repro report zz_tied: " .. err)
local dir = copy .. "/experiments/zz_tied/report"
local pdf = fs.read(dir .. "/report.pdf") or ""
t:ok(pdf:sub(1, 5) == "%PDF-", "report.pdf is a PDF")
local html = fs.read(dir .. "/report.html") or ""
for _, want in ipairs({ "<td>untied</td><td>tied</td>", "Verdicts on val_loss", "Design",
  'src="figures/png/forest.png"', 'src="figures/png/train_loss.png"',
  'src="figures/png/val_loss.png"' }) do
  t:ok(html:find(want, 1, true), "report.html holds " .. want)
end
for _, png in ipairs({ "forest", "train_loss", "val_loss" }) do
  t:ok((fs.read(dir .. "/figures/png/" .. png .. ".png") or ""):sub(2, 4) == "PNG",
    "its figure " .. png .. ".png")
end
local function clean_of(text, what)
  local low = text:lower()
  for _, bad in ipairs({ "claim", "rule 1", "rule1", "layernorm", "embed_norm", "no norm" }) do
    t:ok(not low:find(bad, 1, true), what .. " says nothing of " .. bad)
  end
end
clean_of(html, "report.html")
local csv = fs.read(dir .. "/tables/03-verdicts-on-val-loss.csv") or ""
t:ok(csv:find("^treatment,baseline,") and csv:find(",not_measurable\n", 1, true) and
  select(2, csv:gsub("\n", "")) >= 2, "the verdict table as CSV, with not_measurable: " .. csv)
local design = fs.read(dir .. "/tables/01-design.csv") or ""
t:ok(design ~= "" and not design:find(",-,", 1, true), "no dash in a CSV cell: " .. design)
local tex = fs.read(dir .. "/report.tex") or ""
t:ok(tex:find("untied", 1, true) and tex:find("\\includegraphics[width=0.9\\linewidth]{figures/forest.pdf}",
  1, true), "report.tex: the variants by their names and the forest plot")
clean_of(tex, "report.tex")
if os.execute("command -v pdftotext >/dev/null 2>&1") then
  local _, text = run("pdftotext experiments/zz_tied/report/report.pdf -")
  t:ok(text:find("untied", 1, true) and text:find("Verdicts on val_loss", 1, true),
    "the PDF's text: the variants and the verdicts")
  clean_of(text, "report.pdf")
end

-- The HTML in a browser: headless Chromium's DOM after loading it.
local chromium
for _, c in ipairs({ "chromium", "chromium-browser", "google-chrome" }) do
  if not chromium and os.execute("command -v " .. c .. " >/dev/null 2>&1") then chromium = c end
end
if chromium then
  local _, dom = run(chromium .. " --headless --no-sandbox --disable-gpu --dump-dom " ..
    "file://" .. fs.quote(dir .. "/report.html") .. " 2>/dev/null")
  t:ok(dom:find("<td>untied</td>", 1, true) and dom:find("figures/png/forest.png", 1, true),
    "headless " .. chromium .. " reads the page: its tables and figures")
else
  print("test_user_study: note: no Chromium installed; the HTML is checked as text only")
end

check.rmtree(copy)
t:done()
