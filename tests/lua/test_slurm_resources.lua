-- `bin/repro submit --slurm --dry-run` asks Slurm for the resources a task needs: --mem
-- from the largest peak RSS the study's run manifests measured, times the headroom
-- (--mem overrides it; none measured: no --mem, said so), and --time always (the
-- documented default when not given), since the requeue relies on a time limit.  No
-- cluster is needed: the dry run writes nothing.
local check = require "check"
check.data_anywhere() -- its corpora are temporary files outside data/
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local slurm = require "repro.run.slurm"
local t = check.new("test_slurm_resources")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()
local corpus = dir .. "/corpus.txt"
check.write(corpus, assert(fs.read("data/tinyshakespeare.txt")):sub(1, 100000))
local study = dir .. "/res.lua"
check.write(study, string.format([[
return {
  name = "res",
  description = "a tiny study",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 6,
    warmup = 1, data = %q },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  analysis = { baseline = "none", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" },
}
]], corpus))
local root = dir .. "/out"
local function submit(flags)
  return check.run(string.format("PATH=/usr/bin:/bin %s submit --slurm %s --out-root %s " ..
    "--dry-run %s", repro, study, root, flags or ""))
end

-- nothing measured yet: no --mem, and the default --time
local code, out, err = submit()
t:eq(code, 0, "dry run without records: " .. err)
t:ok(not out:find("#SBATCH --mem", 1, true) and out:find("no run of the study has a measured peak RSS yet", 1, true),
  "no --mem before any run is measured, said so:\n" .. out)
t:ok(out:find("#SBATCH --time=" .. slurm.DEFAULT_TIME .. "\n", 1, true) and
  out:find("(the default: give --time)", 1, true), "the default --time is written, said so")

-- seed 1 measured: --mem from its manifests
code, _, err = check.run(string.format("%s run %s --only seed=1 --out-root %s", repro, study, root))
t:eq(code, 0, "seed 1 runs: " .. err)
local peak = 0
for _, v in ipairs({ "none", "layernorm" }) do
  local m = json.decode(fs.read(root .. "/res/" .. v .. "/seed-1/manifest.json"))
  peak = math.max(peak, m.peak_rss_bytes)
end
local mib = math.ceil(peak * slurm.MEM_HEADROOM / (1024 * 1024))
code, out, err = submit()
t:eq(code, 0, "dry run with seed 1 done: " .. err)
t:ok(out:find("#SBATCH --mem=" .. mib .. "M\n", 1, true), "--mem = the largest peak RSS x " ..
  slurm.MEM_HEADROOM .. " = " .. mib .. "M:\n" .. out)
t:ok(out:find("the largest peak RSS of 2 run manifests", 1, true), "and says where it came from")
t:ok(out:find("0) run=variant=none,seed=2 ;;", 1, true) and
  not out:find("seed=1 ;;", 1, true), "only the pending runs are in the array")

-- overrides and bad values
code, out = submit("--mem 3G --time 2:00:00")
t:ok(code == 0 and out:find("#SBATCH --mem=3G\n", 1, true) and
  out:find("#SBATCH --time=2:00:00\n", 1, true) and not out:find("the default: give", 1, true),
  "--mem and --time given are written as given")
code, _, err = submit("--mem lots")
t:ok(code ~= 0 and err:find("--mem lots", 1, true), "a bad --mem is refused, naming it: " .. err)
code, _, err = submit("--mem 0")
t:ok(code ~= 0 and err:find("--mem 0", 1, true), "--mem 0 is refused: " .. err)
t:ok(not fs.exists(root .. "/res/slurm"), "the dry runs wrote nothing")

check.rmtree(dir)
t:done()
