-- `bin/repro new`: the template validates as written and runs at a tiny budget to a
-- summary; every analysis field is in it with what it takes; --from copies a study's
-- design (its variants, seeds and analysis load the same); an existing file, a bad name
-- and a bad flag are refused, writing nothing; a study missing an analysis field is
-- told the values it takes.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local study = require "repro.study"
local sys = require "repro.sys"
local t = check.new("test_new")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 100000))

local code, out, err = check.run(repro .. " new mystudy --dir " .. dir)
t:eq(code, 0, "new exits 0: " .. err)
local path = dir .. "/mystudy.lua"
local text = fs.read(path) or ""
t:ok(err:find("wrote", 1, true) and err:find("--dry-run", 1, true), "it says what it wrote: " .. err)
for _, f in ipairs(study.analysis_fields({ "tied", "untied" })) do
  local first = f[2]:match("^(%S+%s+%S+)")
  t:ok(text:find("-- " .. f[1] .. ": " .. first, 1, true), "analysis field " .. f[1] ..
    " is explained in a comment")
end
t:ok(text:find('"signflip"', 1, true) and text:find('"higher"', 1, true) and
  text:find("val_ppl", 1, true), "the allowed values are written out")
local s = study.load(path)
t:eq(s.name, "mystudy", "the template validates as written (study.load)")
t:eq(#s.runs, 10, "2 variants x 5 seeds")
for line in text:gmatch("[^\n]+") do
  t:ok(#line <= 92 or not line:match("^%s*%-%-"), "comment line fits 92 columns: " .. line)
end

-- runs at a tiny budget, to a summary
local TINY = "n_layer=1,d_model=32,n_head=2,context=32,batch=4,iters=12,warmup=2,diag_every=0,data=" ..
  corpus
code, out, err = check.run(repro .. " run " .. path .. " --jobs 2 --set " .. TINY ..
  " --out-root " .. dir .. "/out")
t:eq(code, 0, "the template runs at a tiny budget: " .. err)
local sum = fs.read(dir .. "/out/mystudy/summary.json")
t:ok(sum and json.decode(sum).study == "mystudy", "its summary is written")
t:ok(out:find("verdicts on val_loss", 1, true), "and its verdicts printed: " .. out)

-- never overwrites; refuses bad names and flags, writing nothing
local before = fs.read(path)
code, _, err = check.run(repro .. " new mystudy --dir " .. dir)
t:ok(code ~= 0 and err:find("exists", 1, true) and err:find("not overwritten", 1, true),
  "an existing file is refused: " .. err)
t:eq(fs.read(path), before, "and left as it was")
code, _, err = check.run(repro .. " new 'bad name' --dir " .. dir)
t:ok(code ~= 0 and err:find("NAME 'bad name'", 1, true), "a bad name is refused: " .. err)
code, _, err = check.run(repro .. " new x --bogus")
t:ok(code ~= 0 and err:find("unknown option --bogus", 1, true), "a bad flag: " .. err)
code, _, err = check.run(repro .. " new x --dir " .. dir .. "/nope")
t:ok(code ~= 0 and err:find("--dir", 1, true), "a missing --dir is named: " .. err)
code, _, err = check.run(repro .. " new x --from no_such_study --dir " .. dir)
t:ok(code ~= 0 and err:find("--from no_such_study", 1, true), "a missing --from is named: " .. err)
local names = sys.listdir(dir)
table.sort(names)
t:eq(table.concat(names, ","), "corpus.txt,mystudy.lua,out", "nothing else was written")

-- --from: the same design under a new name
for _, from in ipairs({ "final", "scale", "init_scale" }) do
  local name = "copy_of_" .. from
  code, _, err = check.run(repro .. " new " .. name .. " --from " .. from .. " --dir " .. dir)
  t:eq(code, 0, "new --from " .. from .. ": " .. err)
  local src = study.load("lua/experiments/" .. from .. ".lua")
  local got = study.load(dir .. "/" .. name .. ".lua")
  t:eq(#got.runs, #src.runs, from .. ": as many runs")
  local same = true
  for i, r in ipairs(src.runs) do
    if json.encode(r.cfg) ~= json.encode(got.runs[i].cfg) or r.label ~= got.runs[i].label then
      same = false
    end
  end
  t:ok(same, from .. ": every run's config is the source's")
  for _, k in ipairs({ "primary", "better", "min_effect", "alpha", "test", "baseline" }) do
    t:eq(got.analysis[k], src.analysis[k], from .. ": analysis." .. k)
  end
  t:eq(json.encode(got.analysis.comparisons), json.encode(src.analysis.comparisons),
    from .. ": comparisons")
  t:eq(json.encode(got.analysis.interactions), json.encode(src.analysis.interactions),
    from .. ": interactions")
end

-- a missing analysis field: its allowed values in the message
local bad = dir .. "/missing_test.lua"
check.write(bad, (text:gsub("mystudy", "missing_test"):gsub('\n    test = "t",', "")))
code, _, err = check.run(repro .. " run " .. bad .. " --dry-run")
t:ok(code ~= 0 and err:find("analysis.test: missing", 1, true) and err:find('"t"', 1, true) and
  err:find('"signflip"', 1, true), "a missing analysis.test names the values it takes: " .. err)
check.write(bad, (text:gsub("mystudy", "missing_test"):gsub('\n    baseline = "tied",', "")))
code, _, err = check.run(repro .. " run " .. bad .. " --dry-run")
t:ok(code ~= 0 and err:find("analysis.baseline: missing", 1, true) and
  err:find('"tied", "untied"', 1, true), "a missing baseline names the variants: " .. err)

check.rmtree(dir)
t:done()
