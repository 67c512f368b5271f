-- No untrusted file decides which code runs.  Each break and its class,
-- with at least two spellings of the attack each; every attack would leave a marker file
-- (touch), so "refused and no marker" is the check.
--   1. extensions: a study names a project .lua file, a path with '..', an absolute path
--      or a file through a symbolically linked folder: refused, nothing runs (run
--      --dry-run, new --from).
--   2. a summary names a study file (absolute, with '..'): refused before any evaluation.
--   3. the one path check: a linked folder anywhere in a path, '..'.
--   4. script mode: only with the word script; a study file (under lua/experiments/, by a
--      link, failing in the sandbox, running out of instructions) is refused.
--   5. gnuplot sees only names the suite made: --experiments and --plots-data starting
--      with '<', --paper starting with '|'; a title with backquotes stays text.
--   6. temporary files: one private folder, a dead process's folder removed at the next
--      start, a killed report's figure temporaries removed by the next report.
local check = require "check"
check.data_anywhere()
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local sys = require "repro.sys"
local t = check.new("test_untrusted_code")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local q = fs.quote
local root = os.getenv("PWD")

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 50000))
local function study_text(name, extra)
  return string.format([[
return { name = %q, description = "security",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" }%s }
]], name, corpus, extra or "")
end
-- An extension that, loaded with full globals, leaves the marker.
local function evil_ext(mark)
  return string.format("if os and os.execute then os.execute(%q) end\n" ..
    "return { check = function(P, s) return s end, summarize = function() return {} end }\n",
    "touch " .. mark)
end
local n_mark = 0
local function marker()
  n_mark = n_mark + 1
  return dir .. "/PWNED" .. n_mark
end

-- 1. Extensions only from the project's trusted folders --------------------------------
local ev_dir = dir .. "/outside"
fs.mkdir_p(ev_dir)
local m1 = marker()
check.write(ev_dir .. "/ev.lua", evil_ext(m1))
local rel_up = ("../"):rep(select(2, root:gsub("/", ""))) .. ev_dir:sub(2) .. "/ev.lua"
local attempts = {
  { "a project file outside the trusted folders", "lua/repro/core/base.lua" },
  { "an absolute path", ev_dir .. "/ev.lua" },
  { "a path climbing out with '..'", rel_up },
  { "a trusted folder then '..'", "paper/lib/../../" .. rel_up },
  { "a study file of the project", "lua/experiments/final.lua" },
}
for i, a in ipairs(attempts) do
  local f = dir .. "/ext" .. i .. ".lua"
  check.write(f, study_text("ext" .. i, string.format(", extensions = { x = %q }", a[2])))
  local code, _, err = check.run(repro .. " run " .. q(f) .. " --out-root " .. q(dir .. "/e") ..
    " --dry-run")
  t:ok(code == 1 and err:find("extensions.x", 1, true) and not fs.exists(m1),
    "extensions: " .. a[1] .. " is refused and runs nothing: " .. err)
end
-- a study naming itself: loaded with full globals it would leave the marker
local self_file = dir .. "/selfext.lua"
local m2 = marker()
check.write(self_file, "if os and os.execute then os.execute(" .. string.format("%q", "touch " .. m2) ..
  ") end\n" .. study_text("selfext", string.format(", extensions = { x = %q }", self_file)))
for _, cmd in ipairs({ " run " .. q(self_file) .. " --dry-run --out-root " .. q(dir .. "/e"),
    " new zz_copied --from " .. q(self_file) .. " --dir " .. q(dir) }) do
  local code, _, err = check.run(repro .. cmd)
  t:ok(code ~= 0 and not fs.exists(m2), "a study naming itself as its extension runs nothing (" ..
    cmd:match("^ (%S+)") .. "): " .. err)
end
-- inside the project (build/, ignored by git): a study naming itself by its relative
-- path, and a file through a linked folder of the project
local inproj = string.format("build/sec-test-%d", require("repro.host").pid())
fs.mkdir_p(root .. "/" .. inproj)
os.execute("ln -s " .. q(ev_dir) .. " " .. q(root .. "/" .. inproj .. "/linkdir"))
local m9 = marker()
local self_rel = inproj .. "/self.lua"
check.write(root .. "/" .. self_rel, "if os and os.execute then os.execute(" ..
  string.format("%q", "touch " .. m9) .. ") end\n" ..
  study_text("self", string.format(", extensions = { x = %q }", self_rel)))
local link_f = dir .. "/linkext.lua"
check.write(link_f, study_text("linkext", string.format(", extensions = { x = %q }",
  inproj .. "/linkdir/ev.lua")))
for _, a in ipairs({ { "a study naming itself", " run " .. self_rel .. " --dry-run" },
    { "new --from that study", " new zz_from --from " .. self_rel .. " --dir " .. q(dir) },
    { "an extension through a linked folder", " run " .. q(link_f) .. " --dry-run" } }) do
  local code, _, err = check.run(repro .. a[2] .. " --out-root " .. q(dir .. "/e"))
  if a[2]:find(" new ", 1, true) then
    code, _, err = check.run(repro .. a[2])
  end
  t:ok(code ~= 0 and not fs.exists(m9) and not fs.exists(m1), "extensions: " .. a[1] ..
    " is refused and runs nothing: " .. err)
end
fs.remove_tree(root .. "/" .. inproj)
-- a trusted folder's path through a linked folder: the extension loader checks every
-- component (an extensions/ folder that is a link to the outside)
local ext_link = root .. "/extensions"
if not sys.lstat(ext_link) then
  os.execute("ln -s " .. q(ev_dir) .. " " .. q(ext_link))
  for _, ref in ipairs({ "extensions/ev.lua", "ev" }) do
    local f = dir .. "/extlink.lua"
    check.write(f, study_text("extlink", string.format(", extensions = { x = %q }", ref)))
    local code, _, err = check.run(repro .. " run " .. q(f) .. " --dry-run --out-root " ..
      q(dir .. "/e"))
    t:ok(code == 1 and not fs.exists(m1), "extensions: " .. ref .. " through a linked " ..
      "extensions/ folder is refused: " .. err)
  end
  os.remove(ext_link)
else
  t:ok(false, "the project has an extensions/ entry: the linked-folder case was not run")
end
-- the paper's own extension still loads by its trusted path and by its name
local ext = require "repro.core.extension"
t:ok(ext.resolve("paper/lib/claim.lua") == "paper/lib/claim.lua" and
  ext.resolve("claim") == "paper/lib/claim.lua", "paper/lib/claim.lua is found by path and name")
t:ok(not ext.resolve("paper/lib/sub/claim.lua") and not ext.resolve("paper/lib/claim") and
  not ext.resolve("paper//lib/claim.lua"), "only a file directly in a trusted folder")

-- 3. The one path check ----------------------------------------------------------------
fs.mkdir_p(dir .. "/real")
check.write(dir .. "/real/f.txt", "x")
os.execute("ln -s " .. q(dir .. "/real") .. " " .. q(dir .. "/linkdir"))
t:ok(fs.path_problem(dir .. "/real/f.txt") == nil, "a plain path passes")
t:ok(fs.path_problem(dir .. "/linkdir/f.txt"), "a linked folder in the middle is refused")
t:ok(fs.path_problem(dir .. "/real/../real/f.txt"), "'..' is refused")
t:ok(fs.read(dir .. "/linkdir/f.txt") == nil, "fs.read refuses a path through a linked folder")
os.execute("ln -s " .. q(dir .. "/real/f.txt") .. " " .. q(dir .. "/real/l.txt"))
t:ok(fs.path_problem(dir .. "/real/l.txt"), "a linked last component is refused")

-- 2. A summary never names the code that recomputes it ---------------------------------
local exp = dir .. "/exp"
local study_f = dir .. "/sumevil.lua"
check.write(study_f, study_text("sumevil"))
local code, _, err = check.run(repro .. " run " .. q(study_f) .. " --out-root " .. q(exp))
t:eq(code, 0, "a tiny study runs: " .. err)
local sum_path = exp .. "/sumevil/summary.json"
local sum_text = assert(fs.read(sum_path))
local m3 = marker()
local evil_study = dir .. "/evilsum.lua"
check.write(evil_study, "if os and os.execute then os.execute(" .. string.format("%q", "touch " .. m3) ..
  ") end\n" .. study_text("sumevil", string.format(", extensions = { x = %q }", evil_study)))
check.write(dir .. "/manifest.lua", 'return { studies = {}, appendix = { "sumevil" }, ' ..
  'tables = {}, figures = {} }')
local rep = repro .. " report --experiments " .. q(exp) .. " --paper " .. q(dir .. "/paper") ..
  " --plots-data " .. q(dir .. "/pdata") .. " --no-figures --manifest " .. q(dir .. "/manifest.lua")
for _, spelling in ipairs({ evil_study, "tests/../" .. rel_up:gsub("outside/ev", "evilsum") }) do
  local sum = json.decode(sum_text)
  sum.file = spelling
  check.write(sum_path, json.pretty(sum))
  code, _, err = check.run(rep .. " --studies " .. q(dir))
  t:ok(code == 1 and err:find("not sumevil.lua", 1, true) and not fs.exists(m3),
    "a summary naming a study file (" .. spelling .. ") is refused, nothing evaluated: " .. err)
end
check.write(sum_path, sum_text)
code, _, err = check.run(rep .. " --studies " .. q(dir))
t:eq(code, 0, "the untouched summary is recomputed from <studies>/<name>.lua: " .. err)
code, _, err = check.run(rep)
t:ok(code == 1 and err:find("lua/experiments/sumevil.lua does not exist", 1, true),
  "without --studies only lua/experiments/<name>.lua is looked at: " .. err)

-- 4. Script mode only when asked, never a study ---------------------------------------
local m4 = marker()
local failing = dir .. "/failing.lua"
check.write(failing, "os.execute(" .. string.format("%q", "touch " .. m4) .. ")\n" ..
  study_text("failing"))
local spin = dir .. "/spin.lua"
check.write(spin, "local n = 0 while true do n = n + 1 end\n")
os.execute("ln -s " .. q(root .. "/lua/experiments") .. " " .. q(dir .. "/studies_link"))
for _, a in ipairs({
    { "bin/repro FILE.lua", " " .. q(failing), "unknown command" },
    { "a study that fails in the sandbox", " script " .. q(failing), "fails in the study sandbox" },
    { "a file that runs out of instructions", " script " .. q(spin), "fails in the study sandbox" },
    { "lua/experiments/X.lua", " script lua/experiments/final.lua", "under lua/experiments/" },
    { "a study through a linked folder", " script " .. q(dir .. "/studies_link/final.lua"),
      "symbolic link" },
    { "a study by '..'", " script tests/../lua/experiments/final.lua", "'..'" } }) do
  code, _, err = check.run(repro .. a[2])
  t:ok(code ~= 0 and err:find(a[3], 1, true) and not fs.exists(m4),
    "script mode: " .. a[1] .. " is refused: " .. err)
end
local plain = dir .. "/plain.lua"
check.write(plain, "if io then io.write('ran ', ...) end\n")
local out
code, out = check.run(repro .. " script " .. q(plain) .. " x")
t:ok(code == 0 and out == "ran x", "a file the sandbox proves no study runs: " .. out)

-- 5. gnuplot sees only names the suite made --------------------------------------------
local gp = require "repro.report.gnuplot"
local m5 = marker()
local a = gp.assignments({ data = "d", width = 1, height = 1,
  vars = { title = "`touch " .. m5 .. "`", xl = "$(touch " .. m5 .. ")" } }, "pdf", "o", "g")
os.execute("gnuplot -e " .. q(a .. "; print title; print xl") .. " >/dev/null 2>&1")
t:ok(not fs.exists(m5), "a title with backquotes reaches gnuplot as text")
local work = dir .. "/work"
fs.mkdir_p(work)
local m6, m7, m8 = "PWNED_exp", "PWNED_pd", "PWNED_paper"
local evil_exp = "<touch " .. m6 .. ";echo x"
os.execute("cp -r " .. q(exp) .. " " .. q(work .. "/" .. evil_exp))
local function in_work(cmd)
  return check.run("cd " .. q(work) .. " && " .. cmd)
end
code, _, err = in_work(repro .. " report sumevil --experiments " .. q(evil_exp) .. " --studies " .. q(dir))
t:ok(not fs.exists(work .. "/" .. m6), "report --experiments '<cmd' runs no command: " .. err)
t:ok(code == 0, "and the study's report is drawn: " .. err)
check.write(work .. "/manifest.lua", 'return { studies = { "sumevil" }, appendix = {}, ' ..
  'tables = {}, figures = { { name = "f1", kind = "forest", metric = "val_loss" } } }')
code, _, err = in_work(repro .. " report --experiments " .. q(exp) .. " --studies " .. q(dir) ..
  " --paper " .. q("|touch " .. m8 .. ";cat>/dev/null;echo ") .. " --plots-data " ..
  q("<touch " .. m7 .. ";echo y") .. " --manifest manifest.lua")
t:ok(not fs.exists(work .. "/" .. m7) and not fs.exists(work .. "/" .. m8),
  "report --plots-data '<cmd' and --paper '|cmd' run no command: " .. err)
t:ok(code == 0, "and the paper's figures are drawn: " .. err)

-- gnuplot's failure shows gnuplot's own error text, or its exit status when it has none
local gpd = dir .. "/gp"
fs.mkdir_p(gpd .. "/figs/png")
check.write(gpd .. "/bad.gp", "plot data using 1:2 with lines lc rgb nosuchcolour\n")
check.write(gpd .. "/d.dat", "1 2\n2 3\n")
local sink = { write = function() end }
local ok, e = pcall(gp.render, { { name = "x", script = "bad", data = gpd .. "/d.dat", width = 2,
  height = 2 } }, { gp_dir = gpd, figures = gpd .. "/figs", out = sink })
local msg = type(e) == "table" and e.message or tostring(e)
t:ok(not ok and msg:find("gnuplot failed on", 1, true) and msg:find("bad.gp", 1, true) and
  msg:find("line 1", 1, true), "gnuplot's failure shows its error text: " .. msg)
check.write(gpd .. "/quiet.gp", "exit status 3\n")
ok, e = pcall(gp.render, { { name = "x", script = "quiet", data = gpd .. "/d.dat", width = 2,
  height = 2 } }, { gp_dir = gpd, figures = gpd .. "/figs", out = sink })
msg = type(e) == "table" and e.message or tostring(e)
t:ok(not ok and msg:find("exited with status 3 and wrote no figure", 1, true),
  "a silent gnuplot failure gives its exit status: " .. msg)

-- 7. Integrity stated honestly: a forged record passes verify, audit retrains it --------
local rec = exp .. "/sumevil/layernorm/seed-2"
local mtext = assert(fs.read(rec .. "/metrics.json"))
local metrics = json.decode(mtext)
metrics.val_loss = metrics.val_loss - 0.05
local forged = json.pretty(metrics)
check.write(rec .. "/metrics.json", forged)
local man = json.decode(assert(fs.read(rec .. "/manifest.json")))
man.sha256["metrics.json"] = sys.sha256(forged)
check.write(rec .. "/manifest.json", record.manifest_text(man))
code, out = check.run(repro .. " verify " .. q(exp))
t:ok(code == 1 and out:find("4 verified", 1, true) and out:find("not forgery", 1, true) and
  out:find("ADOPTED      " .. rec .. ": adopted (neither committed nor made", 1, true),
  "a re-hashed forged record passes the checksums, which catch corruption, not forgery; " ..
  "this checkout did not make it: " .. out)
code, out, err = check.run(repro .. " audit sumevil --sample 4 --out-root " .. q(exp))
t:ok(code == 1 and out:find("DIFFERS  " .. rec .. ": metrics.json differs", 1, true),
  "audit retrains the forged record and names it and its file: " .. out .. err)
t:ok(out:find("predicted time: %d+[hms]") and out:find("4 runs chosen %(seed %d+, from the system's random source") and
  out:find("4 per study", 1, true),
  "audit prints the chosen runs and the predicted time first: " .. out)
code, out, err = check.run(repro .. " audit sumevil --sample 1 --seed 3 --out-root " .. q(exp))
local one = out:match("\n  (%S+)  %(")
t:ok(one and ((one == rec) == (code == 1)), "--sample 1 retrains one run chosen by the seed: " .. out .. err)
code, _, err = check.run(repro .. " audit sumevil --out-root " .. q(exp))
t:ok(code == 1 and err:find("--sample N is required", 1, true), "audit without --sample: " .. err)
check.write(rec .. "/metrics.json", mtext)
man.sha256["metrics.json"] = sys.sha256(mtext)
check.write(rec .. "/manifest.json", record.manifest_text(man))
code, out, err = check.run(repro .. " audit sumevil --sample 2 --seed 5 --out-root " .. q(exp))
t:ok(code == 0 and out:find("2 the same, 0 differ", 1, true), "honest records pass the audit: " .. out .. err)

-- 8. Smaller: '%' never reaches an #SBATCH line; a description every output prints ----
for _, a in ipairs({ { "--out-root", q(dir .. "/pct%A") }, { "--partition", "p%u" },
    { "--account", "a%j" } }) do
  local extra = a[1] == "--out-root" and (" --out-root " .. a[2]) or (" " .. a[1] .. " " .. a[2])
  code, out, err = check.run(repro .. " submit --slurm " .. q(study_f) .. extra .. " --dry-run")
  t:ok(code == 1 and (err:find("holds '%'", 1, true) or err:find("expected letters", 1, true))
    and not out:find("#SBATCH", 1, true),
    "submit: '%' in " .. a[1] .. " is refused, no script: " .. err)
end
for _, n in ipairs({ 300 * 1024, 2001 }) do
  local f = dir .. "/longdesc.lua"
  check.write(f, (study_text("longdesc"):gsub('description = "security"',
    'description = "' .. ("x"):rep(n) .. '"')))
  code, _, err = check.run(repro .. " run " .. q(f) .. " --dry-run --out-root " .. q(dir .. "/e"))
  t:ok(code == 1 and err:find(f, 1, true) and err:find("description", 1, true) and
    err:find("more than the 2000", 1, true), "a " .. n .. "-byte description is refused, naming " ..
    "the file and key: " .. err)
end

-- 6. Temporary files ------------------------------------------------------------------
local top = (os.getenv("TMPDIR") or "/tmp"):gsub("/+$", "") .. "/repro-" .. sys.euid()
local stale = top .. "/99999999.stale1"
fs.mkdir_p(stale)
check.write(stale .. "/leftover", "x")
code, _, err = in_work(repro .. " report sumevil --experiments " .. q(exp) .. " --studies " .. q(dir))
t:ok(code == 0 and not fs.exists(stale), "a dead process's private folder is removed at the " ..
  "next start: " .. err)
local st = sys.lstat(top)
t:ok(st and st.type == "dir" and st.mode == tonumber("700", 8), "the private folder is mode 0700")
local leftovers = {}
for _, n in ipairs(sys.listdir(top) or {}) do
  local pid = tonumber(n:match("^(%d+)%."))
  if pid and not sys.pid_alive(pid) then leftovers[#leftovers + 1] = n end
end
t:eq(#leftovers, 0, "a finished report leaves no folder of its own: " .. table.concat(leftovers, " "))
local figs = exp .. "/sumevil/report/figures"
check.write(figs .. "/forest.pdf.tmp.99999999.pdf", "half")
check.write(figs .. "/png/forest.png.tmp.99999999.png", "half")
code, _, err = in_work(repro .. " report sumevil --experiments " .. q(exp) .. " --studies " .. q(dir))
t:ok(code == 0 and not fs.exists(figs .. "/forest.pdf.tmp.99999999.pdf") and
  not fs.exists(figs .. "/png/forest.png.tmp.99999999.png"),
  "a killed report's figure temporaries are removed by the next report: " .. err)

check.rmtree(dir)
t:done()
