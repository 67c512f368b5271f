-- Names are data.  One name rule (base.valid_name) for study and
-- variant names and the directories under experiments/; a directory or summary that
-- breaks it is skipped by the report with a warning, never drawn or printed.  Every
-- string that reaches gnuplot is data: each script is rendered with backquotes,
-- system(...), macros, quotes and newlines in every label slot and data title, and no
-- command runs.  Every string that reaches LaTeX goes through texfmt.escape, fuzzed here
-- (random bytes with LaTeX's specials, control characters and invalid UTF-8) and
-- compiled by pdflatex in text, \section, \csname-value and \label positions.
local check = require "check"
local record_set = require "repro.record.set"
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local tex = require "repro.report.texfmt"
local plot = require "repro.report.plot"
local pcg = require "pcg"
local t = check.new("test_names")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local mark = dir .. "/PWNED"

-- The rule ----------------------------------------------------------------------------
for _, n in ipairs({ "final", "init_scale", "t0.02-p1-untied-w30cos-layernorm", "a",
  string.rep("x", base.NAME_MAX) }) do
  t:ok(base.valid_name(n), "a name: " .. n)
end
for _, n in ipairs({ "", ".", "..", ".hidden", "-flag", "_x", "a b", "a/b", "a`id`", "a$(id)",
  "a\nb", "a\0b", "caf\xc3\xa9", "a'b", "a\"b", "a\\b", string.rep("x", base.NAME_MAX + 1),
  string.rep("v", 300) }) do
  t:ok(not base.valid_name(n), "not a name: " .. base.printable(n))
end
t:ok(not base.valid_name(42) and not base.valid_name(nil), "a name is a string")

-- Study files: the same rule, and a description the paper can print ----------------------
local function study_file(name, fields)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = %s, base = { iters = 2 },
  variants = { { name = %q } }, seeds = { 1 },
  analysis = { primary = "val_loss", baseline = %q, comparisons = {} } }
]], fields.name or name, fields.description or '"ok"', fields.variant or "none",
    fields.variant or "none"))
  return path
end
local cases = {
  { "long_variant", { variant = string.rep("v", 300) }, "variants[1].name: expected a name" },
  { "tick_variant", { variant = "a`touch " .. mark .. "`" }, "variants[1].name: expected a name" },
  { "bad_utf8", { description = '"caf\\xc3 \\xff"' }, "description: is not valid UTF-8" },
  { "esc_desc", { description = '"red \\27[31m text"' }, "description: holds a control character (\\x1b)" },
}
for _, c in ipairs(cases) do
  local code, _, err = check.run(repro .. " run " .. fs.quote(study_file(c[1], c[2])) .. " --dry-run")
  t:ok(code == 1 and err:find(c[3], 1, true) ~= nil,
    c[1] .. ": refused naming the field: " .. err)
end

-- The report: hostile directory names and variant names are skipped ---------------------
local exp = dir .. "/experiments"
local summary = assert(fs.read("tests/report/final_summary.json"))
-- (the command names the marker through the environment: a name holds no slash)
local hostile_dirs = { "x`touch $REPRO_MARK`", "y$(touch $REPRO_MARK)", "z'\"q", "n\nl",
  "e\27[31m", "-rf", string.rep("w", 100) }
for _, d in ipairs(hostile_dirs) do
  fs.mkdir_p(exp .. "/" .. d)
  check.write(exp .. "/" .. d .. "/summary.json", summary)
end
fs.mkdir_p(exp .. "/good")
do -- with the digest of its (no) records, as bin/repro analyze writes it
  local json = require "repro.core.json"
  local sum = json.decode(summary)
  sum.records_sha256 = record_set.digest(exp .. "/good", record_set.design(sum))
  check.write(exp .. "/good/summary.json", json.pretty(sum))
end
-- a study directory with a valid name whose summary names a hostile variant
fs.mkdir_p(exp .. "/evilvariant")
check.write(exp .. "/evilvariant/summary.json",
  (summary:gsub('"layernorm"', '"lay`touch $REPRO_MARK`"')))
-- (a manifest that shows both in its appendix: the report reads no study it leaves out)
check.write(dir .. "/manifest.lua", 'return { studies = {}, appendix = { "good", ' ..
  '"evilvariant" }, tables = {}, figures = {} }')
local code, _, err = check.run("REPRO_MARK=" .. fs.quote(mark) .. " " .. repro .. " report --experiments " .. fs.quote(exp) ..
  " --paper " .. fs.quote(dir .. "/paper") .. " --plots-data " .. fs.quote(dir .. "/data") ..
  " --manifest " .. fs.quote(dir .. "/manifest.lua") .. " --trust-summaries")
t:eq(code, 0, "report with hostile directories: " .. err)
t:ok(not fs.exists(mark), "no command ran through a directory or variant name")
local warned = 0
for _ in err:gmatch("warning: skipped the directory") do warned = warned + 1 end
t:eq(warned, #hostile_dirs, "each hostile directory is skipped with a warning: " .. err)
t:ok(not err:find("\27", 1, true) and not err:find("\n[^r]*l/summary", 1),
  "the warnings print no escape or raw newline")
t:ok(err:find("skipped " .. exp .. "/evilvariant/summary.json: the variant name", 1, true),
  "a summary naming a hostile variant is skipped: " .. err)
t:ok(err:find("(good)", 1, true) or err:find("good", 1, true), "the good study is read")
local appendix = fs.read(dir .. "/paper/tables/appendix.tex") or ""
t:ok(appendix:find("\\label{sec:study-good}", 1, true) and not appendix:find("touch", 1, true),
  "the appendix shows the good study and no hostile name")
-- a note on how to read an appendix study is printed after its description; a note for a
-- study the appendix does not show is a manifest error naming the key
-- (the report with the manifest whose appendix_notes are `notes`, into folders of its own)
local function report_notes(k, notes)
  check.write(dir .. "/manifest" .. k .. ".lua", 'return { studies = {}, appendix = { "good" }, ' ..
    'appendix_notes = ' .. notes .. ', tables = {}, figures = {} }')
  return check.run(repro .. " report --experiments " .. fs.quote(exp) .. " --paper " ..
    fs.quote(dir .. "/paper" .. k) .. " --plots-data " .. fs.quote(dir .. "/data" .. k) ..
    " --no-figures --manifest " .. fs.quote(dir .. "/manifest" .. k .. ".lua") ..
    " --trust-summaries")
end
code, _, err = report_notes(3, '{ good = "Read its verdicts as descriptive." }')
t:eq(code, 0, "report with an appendix note: " .. err)
t:ok((fs.read(dir .. "/paper3/tables/appendix.tex") or ""):find(
  "\\par Read its verdicts as descriptive.", 1, true), "the appendix prints the study's note")
code, _, err = report_notes(4, '{ other = "x" }')
t:ok(code ~= 0 and err:find("appendix_notes.other", 1, true), "a note for a study outside " ..
  "the appendix is refused, naming the key: " .. err)
code, _, err = check.run(repro .. " report --experiments " .. fs.quote(dir .. "/nonexistent") ..
  " --paper " .. fs.quote(dir .. "/paper2") .. " --no-figures")
t:ok(code == 1 and err:find("is not a directory", 1, true), "report --experiments /nonexistent fails: " .. err)

-- gnuplot: every label slot and data title holds hostile text ----------------------------
local H = "h`touch " .. mark .. "`'q\"d system('touch " .. mark .. "') @gpdir \\n\n$(touch " ..
  mark .. ")"
local data = dir .. "/gp"
fs.mkdir_p(data .. "/png")
local function blocks(cols)
  local out = {}
  for b = 1, 2 do
    local rows = { plot.title(H .. b) }
    for x = 1, 4 do
      local r = { x * 10 }
      for c = 2, cols do r[#r + 1] = string.format("%g", x + b + (c - 2) * 0.1) end
      rows[#rows + 1] = table.concat(r, " ")
    end
    out[#out + 1] = table.concat(rows, "\n")
  end
  return table.concat(out, "\n\n\n") .. "\n"
end
local function file(name, text)
  local p = data .. "/" .. name .. ".dat"
  check.write(p, text)
  return p
end
local forest_rows = "# y mean lo hi mde min_effect label\n" ..
  "2 0.1 0.0 0.2 0.05 0.02 " .. plot.title(H) .. "\n1 -0.1 -0.2 0 0.05 0.02 " .. plot.title(H) .. "\n"
local common = { n = 2, colors = "#000000 #0072B2", dashes = "1 2", pts = "7 9" }
local function with(t2)
  local v = {}
  for k, x in pairs(common) do v[k] = x end
  for k, x in pairs(t2) do v[k] = x end
  return v
end
local specs = {
  { name = "forest", script = "forest", data = file("forest", forest_rows), vars = {
    rows = 4, lmargin = 20, nheads = 2, head1 = H, head_y1 = 4, head_kind1 = 1, head2 = H,
    head_y2 = 3, head_kind2 = 2, xlabel = H, xmin = -1, xmax = 1, xstep = 0.5 } },
  { name = "curves", script = "curves", data = file("curves", blocks(4)), vars = with({
    ylabel = H, logy = 1, ymin = 1, ymax = 10, ytics = "1 2 5 10", mark_every = 2 }) },
  { name = "curves_zoom", script = "curves", data = file("curves_zoom", blocks(4)), vars = with({
    ylabel = H, logy = 0, zoom = 1, zoom_from = 20, zoom_to = 40, zoom_ymin = 0,
    zoom_ymax = 10 }) },
  { name = "lrsweep", script = "lrsweep", data = file("lrsweep", blocks(4)), vars = with({
    diverged = file("lrsweep_div", "# x y rgb group point\n10 5 0 0 7\n"), xmin = 5, xmax = 50,
    xtics = "10 20", ymin = 0, ymax = 10, xlabel = H, ylabel = H }) },
  { name = "effect", script = "effect", data = file("effect", blocks(4)), vars = with({
    min_effect = 0.1, xmin = 5, xmax = 50, xtics = "10 20", xtic_labels = "a`id` b'c",
    ymin = -5, ymax = 10, ylabel = H }) },
  { name = "valend", script = "valend", data = file("valend", blocks(3)), vars = with({
    means = file("valend_means", "# x mean sd label\n1 2 0.1 " .. plot.title(H) .. "\n2 3 0.1 " ..
      plot.title(H) .. "\n") }) },
  { name = "divergence", script = "divergence", data = file("divergence", blocks(2)),
    vars = with({ xmin = 5, xmax = 50, xtics = "10 20" }) },
}
local written = {}
local out = { write = function(_, path, text)
  check.write(path, text)
  written[#written + 1] = path
end }
for _, s in ipairs(specs) do s.width, s.height = 4, 3 end
-- gnuplot's layout complaints about labels hundreds of characters long are expected
-- here: collected and checked (only layout), not printed into make test's output
local warnings = {}
local ok, rerr = pcall(plot.render, specs, { gp_dir = "plots", figures = data, out = out,
  on_warning = function(name, fmt, text)
    for l in text:gmatch("[^\n]+") do warnings[#warnings + 1] = name .. " (" .. fmt .. "): " .. l end
  end })
for _, w in ipairs(warnings) do
  t:ok(w:find("difficulty", 1, true), "gnuplot's only complaint is the layout of the long labels: " .. w)
end
t:ok(ok, "every script renders hostile labels: " .. tostring(type(rerr) == "table" and
  rerr.message or rerr))
t:eq(#written, 2 * #specs, "a PDF and a PNG per script")
t:ok(not fs.exists(mark), "no command ran from a gnuplot label, title or variable")
t:eq(plot.gp_string("a'b\nc`d`"), "'a''b c`d`'", "a gnuplot string: single quotes, one line")
for _, gp in ipairs(fs.capture("ls plots/*.gp") and { "classnorm", "common", "curves",
  "divergence", "effect", "forest", "lrsweep", "position", "reliability", "resid", "valend" }) do
  local text = assert(fs.read("plots/" .. gp .. ".gp"))
  t:ok(not text:gsub("#[^\n]*", ""):find("eval", 1, true) and
    not text:gsub("#[^\n]*", ""):find("@", 1, true),
    "plots/" .. gp .. ".gp evaluates no built string (no eval, no macro)")
end

-- LaTeX: texfmt.escape fuzzed -------------------------------------------------------------
local ALLOWED = { "\\textbackslash{}", "\\{", "\\}", "\\$", "\\&", "\\#", "\\textasciicircum{}",
  "\\_", "\\allowbreak{}", "\\%", "\\textasciitilde{}", "\\textless{}", "\\textgreater{}",
  "\\textbar{}", "\\times$", "\\approx$", "\\pm$", "\\le$", "\\ge$", "\\alpha$", "\\to$" }
local function safe(e)
  if e:find("[^\32-\126]") then return false, "a byte outside printable ASCII" end
  local i = 1
  while true do
    local b = e:find("\\", i, true)
    if not b then break end
    local hit
    for _, a in ipairs(ALLOWED) do
      if e:sub(b, b + #a - 1) == a then hit = a end
    end
    if not hit then return false, "a backslash starts " .. e:sub(b, b + 12) end
    i = b + #hit
  end
  -- braces only as \{ \} or the empty groups of the commands above; $ only around a symbol
  local bare = e:gsub("\\[%a]+{}", ""):gsub("\\[{}$&#_%%]", ""):gsub("%$\\%a+%$", "")
    :gsub("%$%-%$", "")
  if bare:find("[{}$%%#&^~\\]") then return false, "an unescaped special in " .. bare end
  return true
end
local PIECES = { "\\", "{", "}", "$", "&", "#", "^", "_", "%", "~", "<", ">", "|", "/", "`",
  "'", '"', "\n", "\r", "\0", "\27", "\127", "\xc3", "\xa9", "\x80", "\xff", "\xe2\x88\x92",
  "\xf0\x9f\x98\x80", "\\csname ", "\\endcsname", "\\label{", "\\input{/etc/passwd}",
  "\\write18{touch " .. mark .. "}", "\\def\\x{", "@", ",a", "a", "Z", "0", " ", "\\\\" }
local rng = pcg.new(28, 1)
local bad, samples = 0, {}
for k = 1, 3000 do
  local parts = {}
  for _ = 1, rng:bounded(24) do
    parts[#parts + 1] = rng:bounded(4) == 0 and string.char(rng:bounded(256))
      or PIECES[rng:bounded(#PIECES) + 1]
  end
  local s = table.concat(parts)
  local e = tex.escape(s)
  local good, why = safe(e)
  if not good then
    bad = bad + 1
    if bad <= 3 then t:ok(false, "escape(" .. base.printable(s) .. ") = " .. e .. ": " .. why) end
  end
  if k <= 40 then samples[#samples + 1] = e end
end
t:eq(bad, 0, "3000 fuzzed strings escape to safe LaTeX")
t:raises(function() tex.key("a}\\input{x}") end, "cannot be a LaTeX key", "a key must be a name")
t:eq(tex.key("init_scale"), "init_scale", "a name is a key")
-- every sample in text, a section title, a \csname value, a table cell; names as labels
local doc = { "\\documentclass[10pt]{article}", "\\usepackage{amsmath}", "\\usepackage{booktabs}",
  "\\usepackage[hidelinks]{hyperref}", "\\begin{document}" }
for i, e in ipairs(samples) do
  local key = tex.key("s" .. i .. "_x.y-z")
  doc[#doc + 1] = string.format("\\expandafter\\def\\csname Sample@%s\\endcsname{%s}", key, e)
  doc[#doc + 1] = string.format("\\section{%s}\\label{sec:%s}", e, key)
  doc[#doc + 1] = string.format("MARK%d \\texttt{%s} \\emph{%s} \\csname Sample@%s\\endcsname " ..
    "\\begin{tabular}{l}%s\\\\\\end{tabular}\\par", i, e, e, key, e)
end
doc[#doc + 1] = "\\end{document}"
fs.mkdir_p(dir .. "/tex")
check.write(dir .. "/tex/fuzz.tex", table.concat(doc, "\n") .. "\n")
code = check.run("cd " .. fs.quote(dir .. "/tex") .. " && pdflatex -no-shell-escape " ..
  "-interaction=nonstopmode -halt-on-error fuzz.tex >/dev/null")
t:eq(code, 0, "pdflatex compiles 40 fuzzed strings in every position (log: fuzz.log)")
local _, text = check.run("pdftotext " .. fs.quote(dir .. "/tex/fuzz.pdf") .. " -")
t:ok(text:find("MARK40", 1, true) ~= nil, "every sample reached the PDF")
t:ok(not fs.exists(mark), "no command ran from LaTeX")

check.rmtree(dir)
t:done()
