-- No control characters in paths or values, and script mode is
-- explicit (class 3).  A newline, escape or other control character in a command-line
-- value or in an environment variable the suite reads is refused naming the flag or the
-- variable; `plan` prints one sh-quoted line per run (or NUL-terminated commands with
-- -0) that parse back to exactly the intended words with hostile --out-root and study
-- paths; the sbatch scripts of `submit --slurm` pass `sh -n` with hostile paths, and a
-- value that cannot be an #SBATCH value is refused.  `bin/repro FILE.lua` is no command;
-- `bin/repro script FILE.lua` refuses a study file and runs a script.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local t = check.new("test_inject")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local mark = dir .. "/PWNED"
local q = fs.quote

local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 100000))
-- the study sits in a directory whose name is hostile (its own name is a name)
local sdir = dir .. "/a b'c\"d$(touch " .. mark .. ")`touch " .. mark .. "`;e*"
fs.mkdir_p(sdir)
local study = sdir .. "/tiny.lua"
check.write(study, string.format([[
return { name = "tiny", description = "a tiny study",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 4,
    warmup = 1, diag_every = 2, diag_windows = 2, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
]], corpus))

-- 1. Control characters on the command line and in the environment are refused ----------
local NL, ESC = "\n", "\27[31m"
local refused = {
  { "plan " .. q(study) .. " --out-root " .. q(dir .. "/x" .. NL .. "y"), "the value of --out-root", "\\n" },
  { "run " .. q(study) .. " --dry-run --out-root " .. q("r" .. ESC), "the value of --out-root", "\\x1b" },
  { "run-one " .. q(study) .. " --only " .. q("variant=none" .. NL .. "touch x,seed=1"),
    "the value of --only", "\\n" },
  { "status " .. q(study .. NL), "argument 1", "\\n" },
  { "analyze " .. q(study) .. " --set " .. q("lr=1" .. NL), "the value of --set", "\\n" },
  { "submit --slurm " .. q(study) .. " --partition " .. q("p" .. NL .. "#SBATCH --x"),
    "the value of --partition", "\\n" },
  { "submit --slurm " .. q(study) .. " --time " .. q("10\r"), "the value of --time", "\\r" },
  { "train --out " .. q(dir .. "/o\tx"), "the value of --out", "\\t" },
  { "verify " .. q(dir .. "/v" .. NL), "argument 1", "\\n" },
  { "report --experiments " .. q(dir .. ESC), "the value of --experiments", "\\x1b" },
  { "plan " .. q(study) .. " --out-root ''", "--out-root \"\": an empty path", "" },
  { "run " .. q(study) .. " --dry-run --out-root ''", "--out-root \"\": an empty path", "" },
}
for _, c in ipairs(refused) do
  local code, out, err = check.run(repro .. " " .. c[1])
  t:ok(code == 1 and err:find(c[2], 1, true) and err:find(c[3], 1, true) and
    not err:find("traceback", 1, true) and out == "",
    "refused naming " .. c[2] .. ": " .. err)
end
for _, env in ipairs({ "PWD", "REPRO_EXPERIMENTS", "SLURM_CPUS_PER_TASK" }) do
  local code, _, err = check.run(env .. "=" .. q("/tmp/a" .. NL .. "b") .. " " .. repro ..
    " status " .. q(study))
  t:ok(code == 1 and err:find("the environment variable " .. env, 1, true),
    env .. " with a newline is refused: " .. err)
end
t:ok(not fs.exists(mark), "no command ran")
t:ok(not fs.exists(dir .. "/x") and not fs.exists("r" .. ESC), "nothing was written")

-- 2. plan: one quoted line per run, parsed back to the intended words -------------------
local root = dir .. "/out root 'q' \"d\" $(touch " .. mark .. ") `touch " .. mark .. "` ;|&*?"
local code, out, err = check.run(repro .. " plan " .. q(study) .. " --out-root " .. q(root))
t:eq(code, 0, "plan with a hostile --out-root: " .. err)
local lines = {}
for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
t:eq(#lines, 4, "one line per run")
local function words(line)
  -- the shell parses the line; each word comes back NUL-terminated
  local _, w = check.run("sh -c 'for a in \"$@\"; do printf \"%s\\0\" \"$a\"; done' sh " .. line)
  local list = {}
  for a in w:gmatch("([^%z]*)%z") do list[#list + 1] = a end
  return list
end
for i, l in ipairs(lines) do
  local w = words(l)
  t:ok(w[2] == "run-one" and w[3] == study and w[6] == "--out-root" and w[7] == root,
    "plan line " .. i .. " parses back to the intended words: " .. table.concat(w, " | "))
  t:eq(check.run("sh -n -c " .. q(l)), 0, "plan line " .. i .. " passes sh -n")
end
t:ok(not fs.exists(mark), "parsing the plan ran no command")
local code0, out0 = check.run(repro .. " plan -0 " .. q(study) .. " --out-root " .. q(root))
local recs = {}
for rec in out0:gmatch("([^%z]*)%z") do recs[#recs + 1] = rec end
t:ok(code0 == 0 and #recs == 4 and not out0:find("\n", 1, true),
  "plan -0: four NUL-terminated commands, no newline")
t:ok(recs[1] == lines[1] and recs[4] == lines[4], "plan -0: the same commands")

-- 3. submit --slurm: scripts with hostile paths pass sh -n; bad #SBATCH values refused -----
local sroot = dir .. "/slurmroot"
code, out, err = check.run(repro .. " submit --slurm " .. q(study) .. " --out-root " .. q(sroot) ..
  " --partition debug --account a_b --time 1:00:00 --dry-run")
t:eq(code, 0, "submit --dry-run with a hostile study path: " .. err)
local scripts = {}
local cur
for line in out:gmatch("[^\n]*") do
  local path = line:match("^# %-%-%-%- (%S+%.sbatch)$")
  if path or line:match("^# %-%-%-%- ") then
    cur = path and { path = path, text = "" } or nil
    if cur then scripts[#scripts + 1] = cur end
  elseif cur then
    cur.text = cur.text .. line .. "\n"
  end
end
t:eq(#scripts, 2, "an array script and an analysis script")
for _, sc in ipairs(scripts) do
  local f = dir .. "/check.sh"
  check.write(f, sc.text .. "\n")
  local c, _, e = check.run("sh -n " .. q(f))
  t:eq(c, 0, sc.path .. " passes sh -n: " .. e)
  local cmd = sc.text:match("\n([^\n]*run%-one[^\n]*) &\n") or sc.text:match("\nexec ([^\n]*)")
  local w = cmd and words((cmd:gsub('"%$run"', "variant=none,seed=1"))) or {}
  t:ok(w[3] == study, sc.path .. ": the study path is one word: " .. tostring(w[3]))
end
t:ok(not fs.exists(mark), "checking the scripts ran no command")
code, _, err = check.run(repro .. " submit --slurm " .. q(study) .. " --out-root " ..
  q(dir .. "/a b") .. " --dry-run")
t:ok(code == 1 and err:find("cannot be an #SBATCH value", 1, true),
  "a log directory with a blank is refused for #SBATCH: " .. err)
code, _, err = check.run(repro .. " submit --slurm " .. q(study) .. " --partition 'a;b' --dry-run")
t:ok(code == 1 and err:find("--partition a;b", 1, true), "a partition that is no name is refused")

-- 4. Script mode ----------------------------------------------------------------------------
code, _, err = check.run(repro .. " script " .. q(study))
t:ok(code == 1 and err:find("returns a study table", 1, true) and err:find("bin/repro run", 1, true),
  "bin/repro script STUDY.lua is refused with a pointer to run: " .. err)
code, _, err = check.run(repro .. " lua/experiments/final.lua")
t:ok(code == 1 and err:find("unknown command", 1, true),
  "bin/repro lua/experiments/X.lua is no command (script mode needs the word script): " .. err)
code, _, err = check.run(repro .. " script lua/experiments/final.lua")
t:ok(code == 1 and err:find("is a study file (it is under lua/experiments/)", 1, true),
  "bin/repro script lua/experiments/X.lua is refused: " .. err)
local sneaky = dir .. "/sneaky.lua"
check.write(sneaky, "local f = io and io.open(" .. string.format("%q", mark) ..
  ", 'w') if f then f:close() end\nreturn { name = 'sneaky', variants = {} }\n")
code, _, err = check.run(repro .. " script " .. q(sneaky))
t:ok(code == 1 and not fs.exists(mark), "a study that opens files in script mode is refused " ..
  "before it runs: " .. err)
local script = dir .. "/hello.lua"
check.write(script, "if io then print('hello', ...) end\n")
code, out = check.run(repro .. " script " .. q(script) .. " a b")
t:ok(code == 0 and out == "hello\ta\tb\n", "bin/repro script FILE.lua runs it with its arguments")
code, out, err = check.run(repro .. " " .. q(script) .. " a")
t:ok(code == 1 and out == "" and err:find("unknown command", 1, true),
  "bin/repro FILE.lua runs nothing: script mode needs the word script: " .. err)
code, _, err = check.run(repro .. " script")
t:ok(code == 2 and err:find("usage", 1, true), "script without a file: usage")

-- 5. Error text is printed without terminal escapes --------------------------------------
local loud = dir .. "/loud.lua"
check.write(loud, "return { name = 'loud', description = 1, variants = {{ name = 'x\\27[2J' }} }\n")
code, _, err = check.run(repro .. " run " .. q(loud) .. " --dry-run")
t:ok(code == 1 and not err:find("\27", 1, true), "a study's error text carries no escape: " ..
  err:gsub("\27", "<ESC>"))

check.rmtree(dir)
t:done()
