-- Every bad input of tests/lua/bad_inputs.lua (the command line, configs, corpora,
-- records, study files and their sandbox) is refused: the expected exit status, a
-- message containing the expected fragment, no traceback, and nothing written: every
-- file and directory under the case's own directory (its records root included) and
-- under the shared fixtures is byte-identical afterwards.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local sys = require "repro.sys"
local t = check.new("test_bad_inputs")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local F, B = dir .. "/fixtures", dir .. "/base"
local q = fs.quote
fs.mkdir_p(F)
fs.mkdir_p(B)

-- Shared fixtures: corpora good and bad, files that are no study.
local g = require("pcg").new(17, 0)
local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
local text = {}
for i = 1, 3000 do text[i] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ") end
local C = F .. "/corpus.txt"
check.write(C, table.concat(text))
check.write(F .. "/empty.txt", "")
check.write(F .. "/one.txt", string.rep("a", 5000))
check.write(F .. "/small.txt", string.rep("ab cd\n", 40))
check.write(F .. "/huge.lua", "-- " .. string.rep("x", 2 * 1024 * 1024) .. "\nreturn {}\n")
check.write(F .. "/binary.lua", string.dump(function() return {} end))
os.execute("mkfifo " .. q(F .. "/fifo") .. " && truncate -s 300M " .. q(F .. "/big.txt"))
local M = "n_layer=1 d_model=16 n_head=2 context=16 batch=4 warmup=1"
local T = M .. " iters=4 data=" .. C

-- The analysis of a valid study: with the decision test when this tree's validator knows it.
local A = '{ baseline = "none", metrics = { "val_loss" }, primary = "val_loss", better = ' ..
  '"lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000, test = "t" }'
local cases = dofile("tests/lua/bad_inputs.lua")
local function fill(s, extra)
  local v = { F = F, C = C, T = T, M = M, A = A }
  for k, x in pairs(extra or {}) do v[k] = x end
  return (s:gsub("{(%u)}", function(k) return v[k] end))
end
fs.mkdir_p(dir .. "/probe")
check.write(dir .. "/probe/good.lua", fill(cases.TEMPLATE, { N = "good" }))
local study = require "repro.study"
local ok, err = pcall(study.load, dir .. "/probe/good.lua")
if not ok and tostring(err.message or err):find("analysis.test: unknown field", 1, true) then
  A = A:gsub(', test = "t"', "")
  check.write(dir .. "/probe/good.lua", fill(cases.TEMPLATE, { N = "good" }))
  ok, err = pcall(study.load, dir .. "/probe/good.lua")
end
t:ok(ok, "the template study is valid: " .. tostring(ok or err.message or err))
check.write(B .. "/good.lua", fill(cases.TEMPLATE, { N = "good" }))

-- A records folder that another (existing) study file made.
fs.mkdir_p(F .. "/elsewhere")
fs.mkdir_p(F .. "/owned/good")
check.write(F .. "/elsewhere/good.lua", fill(cases.TEMPLATE, { N = "good" }))
check.write(F .. "/owned/good/manifest.json", '{"file": "' .. F .. '/elsewhere/good.lua"}\n')

-- The copied base: a finished record, damaged copies of it, a study's records.
local function sh(cmd)
  local code, _, e = check.run(cmd)
  if code ~= 0 then error("fixture: " .. cmd .. ": " .. e) end
end
sh(string.format("cd %s && %s train %s --out rec >/dev/null", q(B), repro, T))
sh(string.format("cp -a %s/rec %s/badrec && cp -a %s/rec %s/nolog && rm %s/nolog/log.csv",
  q(B), q(B), q(B), q(B), q(B)))
local mtext = fs.read(B .. "/badrec/metrics.json")
local at = mtext:find('"val_loss": %d') + #'"val_loss": '
local digit = mtext:sub(at, at)
check.write(B .. "/badrec/metrics.json",
  mtext:sub(1, at - 1) .. (digit == "9" and "8" or "9") .. mtext:sub(at + 1))
sh(string.format("cd %s && REPRO_EXPERIMENTS=%s/exp %s run good.lua >/dev/null", q(B), q(B), repro))
check.write(B .. "/afile", "not a directory\n")

-- A kept model and forged copies of its record, their manifest resealed.
local json = require "repro.core.json"
local record = require "repro.record"
sh(string.format("cd %s && %s train %s --out kept --keep-model >/dev/null", q(B), repro, T))
local function forge(name, files)
  local d = B .. "/" .. name
  sh(string.format("cp -a %s/kept %s", q(B), q(d)))
  local man = json.decode(fs.read(d .. "/manifest.json"))
  for file, text in pairs(files) do
    os.remove(d .. "/" .. file)
    if text == "<dir>" then
      fs.mkdir_p(d .. "/" .. file)
    else
      check.write(d .. "/" .. file, text)
      if file == record.MODEL then
        man.model_sha256 = sys.sha256(text)
      else
        man.sha256[file] = sys.sha256(text)
      end
    end
  end
  check.write(d .. "/manifest.json", record.manifest_text(man))
end
forge("kept-metrics5", { ["metrics.json"] = "5" })
forge("kept-noid", { ["metrics.json"] = '{"val_loss": 1}' })
forge("kept-cfgarray", { ["config.json"] = "[]" })
local badcfg = fs.read(B .. "/kept/config.json"):gsub('"n_layer": 1', '"n_layer": "x"')
forge("kept-badcfg", { ["config.json"] = badcfg, ["metrics.json"] =
  (fs.read(B .. "/kept/metrics.json"):gsub('"config_sha256": "%x+"',
    '"config_sha256": "' .. sys.sha256(badcfg) .. '"')) })
forge("kept-dirmodel", { [record.MODEL] = "<dir>" })

-- Every file and directory under root: relative path -> type, size and SHA-256.
local function snapshot(root)
  local out = {}
  local function walk(d, rel)
    for _, name in ipairs(sys.listdir(d) or {}) do
      local p, key = d .. "/" .. name, rel .. name
      local st = sys.stat(p)
      if not st then
        out[key] = "dangling"
      elseif st.type == "dir" then
        out[key] = "dir"
        walk(p, key .. "/")
      elseif st.type == "file" then
        out[key] = st.size .. " " .. (st.size < 16 * 1024 * 1024 and sys.sha256_file(p) or "")
      else
        out[key] = st.type
      end
    end
  end
  walk(root, "")
  return out
end

local function changes(a, b)
  local t_ = {}
  for k, v in pairs(a) do if b[k] ~= v then t_[#t_ + 1] = k end end
  for k in pairs(b) do if a[k] == nil then t_[#t_ + 1] = k end end
  table.sort(t_)
  return table.concat(t_, ", ")
end

local fixtures_before = snapshot(F)
local refused = 0
for i, c in ipairs(cases) do
  local name, args, want_code, says = c[1], c[2], c[3], c[4]
  local case = string.format("%s/case-%03d", dir, i)
  sh(string.format("cp -a %s %s", q(B), q(case)))
  local vars = {}
  if c.study then
    local sname = c.study_name or "s"
    vars.N, vars.S = sname, sname .. ".lua"
    check.write(case .. "/" .. vars.S, fill(c.study, vars))
  end
  args, says = fill(args, vars), fill(says, vars)
  local before = snapshot(case)
  local code, out, e = check.run(string.format("cd %s && REPRO_EXPERIMENTS=%s/exp %s %s",
    q(case), q(case), repro, args))
  local all = e .. out
  local good = t:eq(code, want_code, name .. ": exit status (" .. all .. ")")
  good = t:ok(all:find(says, 1, true), name .. ": message has '" .. says .. "' -- got: " .. all)
    and good
  good = t:ok(not all:find("traceback", 1, true) and not all:find("internal error", 1, true),
    name .. ": no traceback -- got: " .. all) and good
  local changed = changes(before, snapshot(case))
  good = t:ok(changed == "", name .. ": nothing written, but changed: " .. changed) and good
  if good then refused = refused + 1 end
  os.execute("rm -rf " .. q(case))
end
t:eq(changes(fixtures_before, snapshot(F)), "", "the shared fixtures are unchanged")
t:ok(#cases >= 60, "at least 60 bad inputs: " .. #cases)
print(string.format("test_bad_inputs: %d bad inputs tried, %d refused cleanly", #cases, refused))

-- Inputs that are accepted, with a warning or somewhere else than one might fear.
local case = dir .. "/accepted"
sh(string.format("cp -a %s %s", q(B), q(case)))
local function run_in(args)
  return check.run(string.format("cd %s && REPRO_EXPERIMENTS=%s/exp %s %s", q(case), q(case),
    repro, fill(args)))
end
local cores = sys.cores()
local code, out, e = run_in("train {T} threads=1000 --out capped")
t:ok(code == 0 and e:find(string.format("threads=1000 is more than the %d CPU", cores), 1, true),
  "threads above the CPUs: capped with a warning: " .. e)
t:ok(fs.read(case .. "/capped/manifest.json"):find(string.format('"threads": %d', cores), 1, true),
  "threads above the CPUs: the manifest records the threads used")
local before = snapshot(case .. "/exp/good")
code, out, e = run_in("run good.lua --set iters=5")
t:eq(code, 0, "--set without --out-root: runs: " .. e)
t:eq(changes(before, snapshot(case .. "/exp/good")), "",
  "--set without --out-root: the study's own records are untouched")
local set_root = e:match("go to (%S+) %(their own records root")
t:ok(set_root and set_root:find("exp%-set/iters=5%-%x+$") and fs.exists(case .. "/" .. set_root ..
  "/good/summary.json"), "--set without --out-root: records in <root>-set/<slug>-<hash>: " .. e)
code, out, e = run_in("run good.lua --jobs 64 --dry-run")
t:ok(code == 0 and e:find("64 jobs, more than the", 1, true), "--jobs above the CPUs: capped " ..
  "with a warning: " .. e)
code, out, e = run_in("train {T} --out rec --force")
t:ok(code == 0 and fs.read(case .. "/rec/log.csv") == fs.read(B .. "/rec/log.csv"),
  "--force retrains over a finished record: " .. e)
os.execute("rm -rf " .. q(case))

-- An internal error (here a bug planted in a copy of lua/repro/cli/init.lua) keeps its
-- traceback and says that it is one.
local fake = dir .. "/fake-root"
fs.mkdir_p(fake .. "/lua/repro")
check.write(fake .. "/lua/repro/cli.lua",
  "local M = {}\nfunction M.main() local cfg = nil\n  return cfg.iters\nend\nreturn M\n")
code, out, e = check.run("REPRO_ROOT=" .. q(fake) .. " " .. repro .. " train")
t:ok(code == 1 and e:find("cli.lua:3: attempt to index a nil value", 1, true) and
  e:find("stack traceback:", 1, true) and
  e:find("repro train: internal error (a bug in bin/repro, not a problem with your input)", 1,
    true), "an internal error: traceback and a line saying so: " .. e)

-- Every committed record is consistent (none mismatches; older ones carry no checksum).
code, out, e = check.run(repro .. " verify experiments")
t:ok(code == 0 and out:find(" 0 mismatch", 1, true), "bin/repro verify experiments: " ..
  (out:match("verify: [^\n]*") or e))

check.rmtree(dir)
t:done()
