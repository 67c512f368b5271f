-- `bin/repro submit --slurm FILE`: a study's failed or pending runs (runstate.lua) as a
-- Slurm job array of `bin/repro run-one` tasks, then its analysis as a job that waits for
-- the array.  Into OUT/<study>/slurm/ go the array-<c>.sbatch scripts, analysis.sbatch,
-- submit.json (for `bin/repro status`) and logs/.  A task near its time limit stops its run
-- with a checkpoint and requeues itself.  --mem defaults to the largest peak RSS of the
-- study's run manifests x M.MEM_HEADROOM.  A shared filesystem is assumed; --dry-run
-- writes nothing.  Flags: docs/COMMANDS.md.
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local base = require "repro.core.base"
local plan = require "repro.run.parallel"
local runstate = require "repro.run.runstate"

local M = {}

local put, user_error = base.put, base.user_error

M.DEFAULT_MAX_ARRAY_SIZE = 1001 -- Slurm's default MaxArraySize
M.SIGNAL_BEFORE_S = 120 -- seconds before the time limit for SIGUSR1 (less for short limits)
-- A task told of its time limit sooner than this after it started is not requeued (Slurm
-- may send the signal up to a minute early: a short limit could requeue forever);
-- $REPRO_REQUEUE_MIN_S in the submitting environment overrides it (sbatch exports it).
M.MIN_RUN_S = 30
M.DEFAULT_TIME = "1:00:00"
M.MEM_HEADROOM = 1.5

M.USAGE = "usage: bin/repro submit --slurm lua/experiments/X.lua [--partition P] " ..
  "[--time T] [--mem M] [--max-parallel K] [--account A] [--threads N] [--only variant=V,seed=S] " ..
  "[--set key=value,...] [--out-root DIR] [--update] [--dry-run]"

-- Slurm's time formats (sbatch --time): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
-- D-HH:MM:SS.  Returns seconds, or nil.
function M.time_seconds(t)
  local d, rest = t:match("^(%d+)%-(.+)$")
  local f = {}
  for x in ((rest or t) .. ":"):gmatch("([^:]*):") do
    if not x:match("^%d+$") or #f == 3 then return nil end
    f[#f + 1] = math.tointeger(tonumber(x))
  end
  -- with a day or three fields: hours first; else minutes
  local h, m, sec = 0, f[1], f[2] or 0
  if d or #f == 3 then h, m, sec = f[1], f[2] or 0, f[3] or 0 end
  return (((d and math.tointeger(tonumber(d)) or 0) * 24 + h) * 60 + m) * 60 + sec
end

-- Seconds before the limit at which a task is told to stop: 120, or a fifth of a short
-- limit (Slurm sends it up to a minute early).
function M.signal_seconds(limit_s)
  if limit_s >= 5 * M.SIGNAL_BEFORE_S then return M.SIGNAL_BEFORE_S end
  return math.max(10, limit_s // 5)
end

-- Whether a command succeeded, and its output (stderr included).
local function run_command(cmd)
  local p = io.popen(cmd .. " 2>&1", "r")
  if not p then return false, "cannot run " .. cmd end
  local out = p:read("a")
  return p:close(), (out:gsub("%s+$", ""))
end

-- MaxArraySize from `scontrol show config`, and a note when it could not be read.
local function max_array_size()
  local ok, out = run_command("scontrol show config")
  local v = ok and math.tointeger(tonumber(out:match("MaxArraySize%s*=%s*(%d+)") or ""))
  if v and v >= 1 then return v end
  local why = ok and "no such line" or (out:match("[^\n]+") or "failed")
  return M.DEFAULT_MAX_ARRAY_SIZE, string.format("`scontrol show config` gave no MaxArraySize " ..
    "(%s): assuming Slurm's default, %d", why, M.DEFAULT_MAX_ARRAY_SIZE)
end

-- A value written into a script line (a comment or an #SBATCH directive), checked: no
-- control character (a newline would start a new shell line), and in a directive no
-- blank or quote (sbatch splits directives at blanks) and no '%' (Slurm expands %A, %j,
-- ... in --output and other directives).  Command lines are quoted by plan.command_line.
local function line_value(v, what, directive)
  v = tostring(v)
  local c = base.control_char(v)
  if c then
    user_error("repro submit: %s %s holds a control character (%s): no script written",
      what, base.printable(v), c)
  end
  if directive and v:find("[%s'\"`$\\]") then
    user_error("repro submit: %s %s holds a blank, a quote, '$' or a backslash: it cannot " ..
      "be an #SBATCH value (use a --out-root without them)", what, v)
  end
  if directive and v:find("%", 1, true) then
    user_error("repro submit: %s %s holds '%%': Slurm would expand it in an #SBATCH line " ..
      "(%%A, %%j, ...): refused, no script written (use a value without '%%')", what, v)
  end
  return v
end

-- The --partition, --account and --time of o, as #SBATCH lines appended to L.
local function directives(o, L)
  for _, k in ipairs({ "partition", "account", "time" }) do
    if o[k] then
      L[#L + 1] = string.format("#SBATCH --%s=%s", k, line_value(o[k], "--" .. k, true))
    end
  end
end

local function append(L, lines) table.move(lines, 1, #lines, #L + 1, L) end

-- An array task's shell after its case over the runs: the run in the background, so that
-- the time limit's SIGUSR1 reaches this shell; a run stopped by it with a checkpoint
-- requeues the task when it ran at least <min_run_s> s.
local TASK = [[
  *) echo "repro: array task ${SLURM_ARRAY_TASK_ID:-?} has no run here" >&2; exit 2 ;;
esac
<cmd> &
child=$!
start=$(date +%s)
limit=0
trap 'limit=1; kill -TERM "$child" 2>/dev/null' USR1
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
while :; do
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || break
done
if [ "$limit" = 1 ] && [ "$status" = 130 ]; then
  if [ $(($(date +%s) - start)) -ge "${REPRO_REQUEUE_MIN_S:-<min_run_s>}" ]; then
    echo "repro: time limit near: $run stopped with a checkpoint; requeueing this task" >&2
    scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" && exit 0
  fi
  echo "repro: time limit near after less than ${REPRO_REQUEUE_MIN_S:-<min_run_s>} s: not requeued (raise --time)" >&2
fi
exit "$status"]]

-- The sbatch script of one job array over runs (each {variant, seed, label}).
function M.array_script(p)
  local o, s, n = p.o, p.s, #p.runs
  local L = {
    "#!/bin/sh",
    string.format("# Written by `bin/repro submit --slurm` for study %s (%s):", s.name,
      line_value(s.file_abs, "the study file")),
    string.format("# array %d of %d, %d run%s.", p.index, p.count, n, n == 1 and "" or "s"),
    "# Task i trains run i (below) with `bin/repro run-one`, exactly as `bin/repro run` would,",
    "# into " .. line_value(p.dir, "the records directory") .. "/.",
    "# A shared filesystem is assumed: the project, the records and the corpus are read and",
    "# written at these paths on every node.  Records are written atomically and a run's",
    "# directory is locked while it trains, so tasks never collide and a killed task never",
    "# leaves a record that looks done.",
    string.format("# %d s before the time limit Slurm sends SIGUSR1: the run stops with a " ..
      "checkpoint", p.signal_s),
    "# and the task requeues itself, resuming from it bit-identically.  scancel and preemption",
    "# (SIGTERM) stop the run with a checkpoint too: Slurm's requeue or a second submit",
    "# resumes it.",
    "#SBATCH --job-name=repro-" .. line_value(s.name, "the study name", true),
    string.format("#SBATCH --array=0-%d%s", n - 1,
      p.max_parallel and ("%" .. p.max_parallel) or ""),
    "#SBATCH --ntasks=1",
    "#SBATCH --cpus-per-task=" .. p.threads,
  }
  directives(o, L)
  if p.mem then L[#L + 1] = "#SBATCH --mem=" .. line_value(p.mem, "--mem", true) end
  append(L, {
    string.format("#SBATCH --signal=B:USR1@%d", p.signal_s),
    "#SBATCH --requeue",
    "#SBATCH --open-mode=append",
    "#SBATCH --output=" .. line_value(p.logs, "the log directory", true) .. "/%A_%a.out",
    'case "${SLURM_ARRAY_TASK_ID:-}" in',
  })
  for i, r in ipairs(p.runs) do
    L[#L + 1] = string.format("  %d) run=variant=%s,seed=%d ;;", i - 1, r.variant, r.seed)
  end
  -- the value of --only (argv[5]) is the case's
  local argv = plan.run_one_argv(o, s, p.runs[1], p.out_root)
  local cmd = plan.command_line(table.move(argv, 1, 4, 1, {})) .. ' "$run" ' ..
    plan.command_line(table.move(argv, 6, #argv, 1, {}))
  L[#L + 1] = (TASK:gsub("<min_run_s>", M.MIN_RUN_S):gsub("<cmd>", function() return cmd end))
  return table.concat(L, "\n") .. "\n"
end

function M.analysis_script(p)
  local o, s = p.o, p.s
  local L = {
    "#!/bin/sh",
    string.format("# Written by `bin/repro submit --slurm`: the analysis of study %s (%s),", s.name,
      line_value(s.file_abs, "the study file")),
    "# submitted with --dependency=afterany on its job array(s): summary.json when every run",
    "# is done; otherwise the runs that failed or are still pending, and exit status 1.",
    "#SBATCH --job-name=repro-" .. line_value(s.name, "the study name", true) .. "-analysis",
    "#SBATCH --ntasks=1",
    "#SBATCH --cpus-per-task=1",
  }
  directives(o, L)
  L[#L + 1] = "#SBATCH --output=" .. line_value(p.logs, "the log directory", true) ..
    "/analysis-%j.out"
  local argv = { plan.exe(), "analyze", s.file_abs, "--out-root", p.out_root }
  if #o.set_raw > 0 then append(argv, { "--set", table.concat(o.set_raw, ",") }) end
  if o.allow_large then argv[#argv + 1] = "--allow-large" end
  -- without --update the analysis job lists what would change in the summary and exits 3
  if o.update then argv[#argv + 1] = "--update" end
  L[#L + 1] = "exec " .. plan.command_line(argv)
  return table.concat(L, "\n") .. "\n"
end

local function parse_args(args)
  local o = plan.parse(args, "repro submit", M.USAGE, { ["--threads"] = plan.THREADS,
    ["--slurm"] = { key = "slurm", kind = "flag" },
    ["--partition"] = { key = "partition", kind = "value" },
    ["--time"] = { key = "time", kind = "value" },
    ["--max-parallel"] = { key = "max_parallel", kind = "int", min = 1 },
    ["--account"] = { key = "account", kind = "value" },
    ["--dry-run"] = { key = "dry_run", kind = "flag" },
    ["--mem"] = { key = "mem", kind = "value" },
    ["--update"] = { key = "update", kind = "flag" } })
  if o.help then return o end
  if not o.slurm then user_error("repro submit: name the executor: --slurm\n%s", M.USAGE) end
  for _, key in ipairs({ "partition", "account" }) do
    if o[key] and not o[key]:match("^[%w_.%-]+$") then
      user_error("repro submit: --%s %s: expected letters, digits, '_', '.' or '-'", key, o[key])
    end
  end
  o.time_default = not o.time
  o.time = o.time or M.DEFAULT_TIME
  o.limit_s = M.time_seconds(o.time)
  if not o.limit_s or o.limit_s < 60 then
    user_error("repro submit: --time %s: expected a Slurm time of at least a minute " ..
      "(minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)", o.time)
  end
  if o.mem and not o.mem:match("^[1-9]%d*[KMGT]?$") then
    user_error("repro submit: --mem %s: expected a Slurm memory size, an integer with an " ..
      "optional K, M, G or T (megabytes without one), e.g. 2G", o.mem)
  end
  o.threads = o.threads or 1
  return o
end

-- --mem for the tasks: the flag's, else the largest peak RSS in the manifests of the
-- study's done runs x M.MEM_HEADROOM in MiB ("768M"), else nil; and where it came from.
local function task_mem(o, s, dir)
  if o.mem then return o.mem, "--mem " .. o.mem .. " (given)" end
  local peak, n = nil, 0
  for _, r in ipairs(s.runs) do
    local m = json.table_of(fs.read(dir .. "/" .. r.rel .. "/manifest.json"))
    if m and math.type(m.peak_rss_bytes) and m.peak_rss_bytes > 0 then
      n = n + 1
      peak = math.max(peak or 0, m.peak_rss_bytes)
    end
  end
  if not peak then
    return nil, "no run of the study has a measured peak RSS yet: no --mem (give one with --mem)"
  end
  local mib = math.ceil(peak * M.MEM_HEADROOM / (1024 * 1024))
  return mib .. "M", string.format("--mem %dM: the largest peak RSS of %d run manifest%s " ..
    "(%.0f MiB) x %g", mib, n, n == 1 and "" or "s", peak / (1024 * 1024), M.MEM_HEADROOM)
end

-- The job arrays ({runs, path, text}, at most max_size runs each) for the pending runs,
-- and the analysis job ({path, text}).
local function scripts(p, pending, max_size)
  local arrays = {}
  for first = 1, #pending, max_size do
    local last = math.min(first + max_size - 1, #pending)
    arrays[#arrays + 1] = table.move(pending, first, last, 1, {})
  end
  for i, runs in ipairs(arrays) do
    p.index, p.count, p.runs = i, #arrays, runs
    p.max_parallel = p.o.max_parallel and math.min(p.o.max_parallel, #runs)
    arrays[i] = { runs = runs, path = string.format("%s/array-%d.sbatch", p.slurm_dir, i),
      text = M.array_script(p) }
  end
  return arrays, { path = p.slurm_dir .. "/analysis.sbatch", text = M.analysis_script(p) }
end

local function sbatch_cmd(path, deps)
  return "sbatch --parsable" .. (deps and (" --dependency=afterany:" .. deps) or "") .. " " ..
    plan.shell_word(path)
end

-- Submits every array (each after the one before with --max-parallel), then the analysis
-- after them all, through submit(path, deps) -> job id.  Returns the array job ids and
-- the analysis job id.
local function submit_jobs(o, arrays, analysis, submit)
  local ids = {}
  for i, a in ipairs(arrays) do
    ids[i] = submit(a.path, (o.max_parallel and i > 1) and ids[i - 1] or nil)
  end
  return ids, submit(analysis.path, #ids > 0 and table.concat(ids, ":") or nil)
end

local function sbatch(path, deps)
  local ok, out = run_command(sbatch_cmd(path, deps))
  local id = ok and out:match("^(%d+)")
  if not id then
    user_error("repro submit: %s failed: %s", sbatch_cmd(path, deps),
      out ~= "" and out or "no output")
  end
  return id
end

-- --dry-run: the scripts and the sbatch commands on stdout.
local function print_dry_run(o, arrays, analysis)
  for _, job in ipairs(arrays) do
    put("# ---- " .. job.path)
    io.write(job.text)
  end
  put("# ---- " .. analysis.path)
  io.write(analysis.text)
  put("# ---- submission (--dry-run: nothing written, nothing submitted)")
  submit_jobs(o, arrays, analysis, function(path, deps)
    put(sbatch_cmd(path, deps))
    return "<job id of " .. path:match("([^/]*)%.sbatch$") .. ">"
  end)
end

local function tell(line) io.stderr:write(base.printable("repro submit: " .. line, true), "\n") end

-- Writes the scripts, submits them, writes submit.json and says what it submitted.
local function submit_all(p, arrays, analysis, notes)
  local o = p.o
  fs.mkdir_p(p.logs)
  for _, a in ipairs(arrays) do fs.write_atomic(a.path, a.text) end
  fs.write_atomic(analysis.path, analysis.text)
  local ids, analysis_job = submit_jobs(o, arrays, analysis, sbatch)
  local record_arrays = {}
  for i, a in ipairs(arrays) do
    local labels = {}
    for k, r in ipairs(a.runs) do labels[k] = r.label end
    record_arrays[i] = { job = ids[i], script = a.path, runs = labels }
  end
  fs.write_atomic(p.slurm_dir .. "/submit.json", json.pretty({ study = p.s.name,
    file = p.s.file_abs, submitted_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"), arrays = record_arrays,
    analysis = analysis_job, threads = o.threads, max_parallel = o.max_parallel,
    time = o.time, mem = p.mem, partition = o.partition, account = o.account,
    command_line_overrides = #o.set_raw > 0 and table.concat(o.set_raw, ",") or nil }))
  for _, line in ipairs(notes) do tell(line) end
  for i, a in ipairs(arrays) do
    put(string.format("array job %s: %d run%s (%s)%s", ids[i], #a.runs, #a.runs == 1 and "" or "s",
      fs.shown(a.path), (o.max_parallel and i > 1) and (" after job " .. ids[i - 1]) or ""))
  end
  put(string.format("analysis job %s%s: writes %s (%s)", analysis_job,
    #ids > 0 and (" after job" .. (#ids > 1 and "s " or " ") .. table.concat(ids, ", ")) or "",
    fs.shown(p.dir .. "/summary.json"), fs.shown(analysis.path)))
  put(string.format("watch: %s status %s%s", plan.shell_word(plan.exe()),
    plan.shell_word(p.s.file_abs),
    o.out_root and (" --out-root " .. plan.shell_word(p.out_root)) or ""))
end

function M.main(args)
  local o = parse_args(args)
  if o.help then return 0 end
  local s, runs, out_root, dir = plan.load(o, not o.dry_run)
  local n, running, pending = runstate.sort(runs)
  local max_size, note = max_array_size()
  local mem, mem_note = task_mem(o, s, dir)
  local p = { o = o, s = s, dir = dir, out_root = out_root, slurm_dir = dir .. "/slurm",
    logs = dir .. "/slurm/logs", threads = o.threads, signal_s = M.signal_seconds(o.limit_s),
    mem = mem }
  local resources = string.format("resources per task: %d cpu%s, --time %s%s; %s", o.threads,
    o.threads == 1 and "" or "s", o.time, o.time_default and " (the default: give --time)" or "",
    mem_note)
  local arrays, analysis = scripts(p, pending, max_size)
  local summary = string.format("study %s: %d of its %d runs selected: %d pending " ..
    "(job array%s), %d done, %d being trained elsewhere%s", s.name, #runs, #s.runs, #pending,
    #arrays > 1 and string.format("s: %d, MaxArraySize %d", #arrays, max_size) or "", n.done,
    #running, #running > 0 and (" (" .. table.concat(running, ", ") .. ", left out)") or "")
  if o.dry_run then
    for _, line in ipairs({ summary, resources, note }) do put("# " .. line) end
    print_dry_run(o, arrays, analysis)
  elseif #pending == 0 and #running == 0 and fs.exists(dir .. "/summary.json") then
    tell(summary .. "; summary.json is written: nothing to submit")
  else
    submit_all(p, arrays, analysis, { summary, resources, note })
  end
  return 0
end

return M
