-- Arguments and paths refused with a clear message, or given the sensible behaviour: a NUL
-- in `data`, --only with duplicate keys or an empty selection, verify on a missing root,
-- numbers on the command line (decimal only), and corpora outside data/.  (Invalid UTF-8
-- descriptions and 300-character variant names: test_names.lua; --out-root "" and escape
-- sequences in study errors: test_inject.lua; verify DIR DIR: test_integrity.lua.)
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local config = require "repro.core.config"
local t = check.new("test_refused_arguments")
local repro = os.getenv("REPRO") or "bin/repro"
local dir = check.tmpdir()
local q = fs.quote

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 50000))
local function study(name, data)
  local path = dir .. "/" .. name .. ".lua"
  check.write(path, string.format([[
return { name = %q, description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4,
    warmup = 1, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], name, data))
  return path
end

-- a NUL inside `data` is refused at validation, not at every run
local S = study("nul", corpus .. "\0x")
local code, _, err = check.run(repro .. " run " .. q(S) .. " --dry-run")
t:ok(code == 1 and err:find("base.data: holds a control character (\\0)", 1, true),
  "a NUL in data is refused by validation: " .. err)

-- --only: duplicate keys and an empty selection are refused by every command
S = study("only", corpus)
for _, cmd in ipairs({ "run", "run-one", "plan", "status" }) do
  code, _, err = check.run(repro .. " " .. cmd .. " " .. q(S) ..
    " --only variant=none,variant=layernorm,seed=1 --out-root " .. q(dir .. "/o"))
  t:ok(code == 1 and err:find("variant is given twice", 1, true),
    cmd .. ": duplicate --only keys are refused: " .. err)
  code, _, err = check.run(repro .. " " .. cmd .. " " .. q(S) .. " --only '' --out-root " ..
    q(dir .. "/o"))
  t:ok(code == 1 and err:find("--only is empty", 1, true), cmd .. ": --only '' is refused: " .. err)
end
t:ok(not fs.exists(dir .. "/o/only/none"), "nothing trained")

-- an output folder that is a file is refused before any work, the dry run included
local afile = dir .. "/a-file"
check.write(afile, "x")
for _, cmd in ipairs({ "run", "plan" }) do
  code, _, err = check.run(repro .. " " .. cmd .. " " .. q(S) .. " --out-root " .. q(afile) ..
    (cmd == "run" and " --dry-run" or ""))
  t:ok(code == 1 and err:find("the records folder " .. afile .. "/only cannot be made: " .. afile ..
    " is a file, not a directory (nothing was run)", 1, true), cmd .. ": --out-root FILE: " .. err)
end
code, _, err = check.run(repro .. " tasks build order --data " .. q(corpus) .. " --dir " .. q(afile))
t:ok(code == 1 and err:find("--dir " .. afile .. ": " .. afile .. " is a file, not a directory", 1, true),
  "tasks build --dir FILE refused before any generator runs: " .. err)

-- verify with a root that does not exist fails
code, _, err = check.run("REPRO_EXPERIMENTS=" .. q(dir .. "/nonexistent") .. " " .. repro .. " verify")
t:ok(code == 1 and err:find("no such directory", 1, true), "REPRO_EXPERIMENTS=/nonexistent verify fails: " .. err)

-- numbers on the command line: decimal only, nothing that reads as another value
local bad = {
  { "lr=0x10", "expected a number" }, { "iters= 5", "expected an integer" },
  { "iters=0x5", "expected an integer" }, { "lr=1e-400", "too small for a double" },
  { "lr=1e999", "must be finite" }, { "lr=nan", "expected a number" },
  { "lr= 3e-4", "expected a number" }, { "iters=5.0", "expected an integer" },
}
for _, c in ipairs(bad) do
  local ok, e = pcall(config.parse_overrides, { c[1] }, "t")
  t:ok(not ok and e.message:find(c[2], 1, true), c[1] .. " is refused: " .. tostring(e and e.message))
end
for _, a in ipairs({ "lr=3e-4", "lr=.5", "lr=-1.5E-3", "iters=+5", "lr=0", "lr=1e-300" }) do
  local ok = pcall(config.parse_overrides, { a }, "t")
  t:ok(ok, a .. " is accepted")
end
local cfg = config.parse_overrides({ "lr=1e-300" }, "t")
t:eq(cfg.lr, 1e-300, "a small value keeps its value")
code, _, err = check.run(repro .. " train lr=1e-400")
t:ok(code == 1 and err:find("lr=1e-400: too small", 1, true), "train lr=1e-400 is refused: " .. err)

-- The data path is restricted to the project's data directory (data/) unless
-- REPRO_DATA_ANYWHERE=1: these commands run without it.
local host = require "repro.host"
local strict = "env -u REPRO_DATA_ANYWHERE " .. repro
local link = "data/zz-test-link-" .. host.pid() .. ".txt"
os.execute("ln -s /etc/passwd " .. q(host.root .. "/" .. link))
for _, c in ipairs({ { "/etc/passwd", "/etc/passwd" }, { "data/../README.md", "it is " .. host.root ..
    "/README.md" }, { link, "it is /etc/passwd" }, { corpus, corpus } }) do
  S = study("outside", c[1])
  code, _, err = check.run(strict .. " run " .. q(S) .. " --dry-run")
  t:ok(code == 1 and err:find("base.data: data=" .. c[1] .. ": outside the project's data " ..
    "directory " .. host.root .. "/data/", 1, true) and err:find(c[2], 1, true) and
    err:find("REPRO_DATA_ANYWHERE=1", 1, true),
    "a study's data " .. c[1] .. " is refused, naming the key, the file and the variable: " .. err)
end
code, _, err = check.run(strict .. " train data=/etc/passwd iters=2 warmup=1")
t:ok(code == 1 and err:find("config: data=/etc/passwd: outside the project's data directory", 1,
  true), "train data=/etc/passwd is refused: " .. err)
S = study("inside", "data/tinyshakespeare.txt")
code, _, err = check.run(strict .. " run " .. q(S) .. " --dry-run --set data=" .. q(link))
t:ok(code == 1 and err:find("--set data: data=" .. link .. ": outside", 1, true),
  "--set data= a link out of data/ is refused: " .. err)
code, _, err = check.run(strict .. " run " .. q(S) .. " --dry-run")
t:eq(code, 0, "a corpus inside data/ passes: " .. err)
code, _, err = check.run("REPRO_DATA_ANYWHERE=1 " .. repro .. " run " .. q(study("anywhere", corpus)) ..
  " --dry-run")
t:eq(code, 0, "REPRO_DATA_ANYWHERE=1 allows a corpus elsewhere: " .. err)
os.remove(host.root .. "/" .. link)

check.rmtree(dir)
t:done()
