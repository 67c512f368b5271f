-- `bin/repro run STUDY.lua`: every run of a study, then its analysis; and `bin/repro
-- analyze STUDY.lua`, the analysis alone.  Runs go to OUT/<study>/<variant>/seed-<s>/
-- (OUT: --out-root, else $REPRO_EXPERIMENTS, else <project root>/experiments), each reused,
-- copied, resumed, rerun or trained (lua/repro/plan/init.lua says when), in worker
-- processes whose records are byte-identical for any --jobs.  A summary is never rewritten
-- silently: one that differs from the one on disk is written only with --update; otherwise
-- the command prints what would change (lua/repro/analysis/changes.lua) and exits with
-- status M.EXIT_UNCHANGED (3).  Flags: docs/COMMANDS.md, "Train and run studies".
local host = require "repro.host"
local proc = require "repro.proc"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local record = require "repro.record"
local set = require "repro.record.set"
local study = require "repro.study"
local analysis = require "repro.analysis"
local changes = require "repro.analysis.changes"
local seq = require "repro.analysis.sequential"
local progress = require "repro.core.progress"
local planner = require "repro.plan"
local cost = require "repro.plan.cost"
local pool = require "repro.run.pool"
local plan = require "repro.run.parallel"
local textable = require "repro.core.textable"
local base = require "repro.core.base"

-- A line on stdout; text from data in it goes through base.printable.
local put = base.put

local M = {}

local user_error = base.user_error
local say = progress.say
-- The command messages are labelled with: "repro run", or "repro analyze" (M.main).
local who = "repro run"
local shown = fs.shown

M.USAGE = "usage: bin/repro run lua/experiments/X.lua [--jobs N] [--only variant=V,seed=S] " ..
  "[--dry-run] [--force] [--out-root DIR] [--set key=value,...] [--allow-large] [--keep-model] " ..
  "[--update]"
M.ANALYZE_USAGE = "usage: bin/repro analyze lua/experiments/X.lua [--set key=value,...] " ..
  "[--out-root DIR] [--update]"

-- The exit status of run and analyze when the summary would change and --update was not
-- given (make reproduce lists those studies).
M.EXIT_UNCHANGED = 3


local function plural(n, word) return n == 1 and word or word .. "s" end

local function parse_args(args, usage)
  local flag = function(key) return { key = key, kind = "flag" } end
  return plan.parse(args, who, usage, { ["--jobs"] = { key = "jobs", kind = "int", min = 1 },
    ["--dry-run"] = flag("dry_run"), ["--force"] = flag("force"),
    ["--keep-model"] = flag("keep_model"), ["--update"] = flag("update") })
end

-- Worker processes and threads per worker: --jobs (else the study's), at most the CPUs.
local function workers(o, s)
  local jobs, cores = o.jobs or s.jobs, sys.cores()
  if jobs > cores then
    say(who .. ": %d jobs, more than the %d %s this process may use: running %d at once " ..
      "(results do not depend on it)", jobs, cores, plural(cores, "CPU"), cores)
    jobs = cores
  end
  return jobs, math.max(1, cores // jobs)
end

-- How often a wait for another runner's lock looks again (and at SIGINT/SIGTERM).
local LOCK_POLL_S = 0.1

-- Takes the study directory's lock, waiting for another runner; the plan is made again
-- after a wait (the other runner changed the records).  The wait is interruptible: from
-- here on SIGINT and SIGTERM are counted (proc.trap_signals, as the pool does while
-- training), and one that comes while waiting ends the command (exit status 130) before
-- anything is trained or written.  Returns 130 then, else nil.
local function lock_study(s, runs, dir, out_root, force)
  fs.mkdir_p(dir)
  proc.trap_signals()
  local seen = proc.sigints()
  if proc.lock(dir, false) then return nil end
  say(who .. ": another bin/repro run is working on %s; waiting for it to finish (Ctrl-C " ..
    "stops waiting)", shown(dir))
  while not proc.lock(dir, false) do
    if proc.sigints() > seen then
      say("%s: interrupted while waiting for %s; nothing was trained", who, shown(dir))
      return 130
    end
    proc.sleep(LOCK_POLL_S)
  end
  planner.plan(s, runs, out_root, force)
  local refused = planner.refusal(runs)
  if refused then user_error("%s", refused) end
  return nil
end

-- Carries out the actions that need no training (a corrupt record put aside, a copy);
-- returns the queue to train, the count of each action and the number of runs done.
local function queue_runs(runs, out_root)
  local count, queue, done = {}, {}, 0
  for _, r in ipairs(runs) do
    count[r.action] = (count[r.action] or 0) + 1
    if r.status == "corrupt" then
      local aside = record.put_aside(r.dir)
      say("record %s failed its checks (%s): its files are kept in %s; it is trained again",
        r.label, table.concat(r.info.problems, "; "), shown(aside))
      r.status = "missing"
    end
    if r.action == "reuse" then
      done = done + 1
    elseif r.action == "copy" then
      planner.copy_record(r, out_root)
      done = done + 1
      say("copied %s from %s (identical config)", r.label, shown(r.source))
    else
      queue[#queue + 1] = r
    end
  end
  return queue, count, done
end

local function labels(runs)
  local t = {}
  for _, r in ipairs(runs) do t[#t + 1] = r.label end
  return table.concat(t, ", ")
end

-- After an interruption or a failure: which runs finished, stopped, failed or never
-- started.  Returns the exit status.
local function report_incomplete(runs, res)
  local done = {}
  for _, r in ipairs(runs) do
    if record.status(r.dir, r.cfg) == "done" then done[#done + 1] = r end
  end
  say(who .. ": %s. Finished: %d of %d runs%s.", res.interrupted and "interrupted" or
    "some runs failed", #done, #runs, #done > 0 and (" (" .. labels(done) .. ")") or "")
  local t, at_start = {}, {}
  for _, r in ipairs(res.stopped) do
    if r.stopped_at == "start" then
      at_start[#at_start + 1] = r
    else
      t[#t + 1] = string.format("%s at step %s", r.label, tostring(r.stopped_at or "?"))
    end
  end
  if #t > 0 then say("Stopped with a checkpoint: %s.", table.concat(t, ", ")) end
  if #at_start > 0 then say("Stopped as they started: %s.", labels(at_start)) end
  if #res.failed > 0 then
    local t = {}
    for _, r in ipairs(res.failed) do t[#t + 1] = r.label .. " (" .. r.failure .. ")" end
    say("Failed: %s.", table.concat(t, ", "))
  end
  if #res.not_started > 0 then say("Not started: %s.", labels(res.not_started)) end
  say("Rerun the same command to finish only what is missing.")
  return res.interrupted and 130 or 1
end

local function write_study_manifest(s, dir, facts)
  local commit, dirty = record.git_info()
  local sum = 0
  for _, r in ipairs(s.runs) do
    local m = json.table_of(fs.read(dir .. "/" .. r.rel .. "/manifest.json"))
    if m and not m.copied_from and type(m.wall_s) == "number" then
      sum = sum + m.wall_s
    end
  end
  facts.study, facts.file = s.name, s.file_rel
  facts.file_git = record.file_git_status(s.file)
  facts.git_commit, facts.git_dirty = commit, dirty
  facts.host, facts.repro_version = host.hostname(), host.version
  facts.runs_wall_s_sum = sum
  fs.write_atomic(dir .. "/manifest.json", json.pretty(facts))
end

-- summary.json and manifest.json of study s in dir (ctx: what this invocation did and
-- what the directory held before it).  Returns the summary.
local function write_summary(s, dir, records, ctx)
  local summary, text = analysis.summary_of(s, dir, records)
  local same = text == ctx.old_summary
  local function say_changes(head)
    say(head, who, shown(dir .. "/summary.json"))
    for _, l in ipairs(changes.describe(ctx.old_summary, text, { dir = dir,
      old_manifest = ctx.old_manifest, commit = (record.git_info()) })) do
      say("%s", l)
    end
  end
  if ctx.old_summary and not same and not ctx.update then
    say_changes("%s: %s would change; not written (the summary on disk is kept):")
    say("%s: to write it (the records stay as they are): %s", who, ctx.update_command)
    return summary, false
  end
  fs.write_atomic(dir .. "/summary.json", text)
  if ctx.old_summary and not same then say_changes("%s: %s updated (--update); what changed:") end
  local diverged = 0
  for _, v in pairs(summary.per_variant) do diverged = diverged + v.n_diverged end
  if ctx.trained == 0 and not ctx.count.copy and same and ctx.old_manifest then
    -- Nothing trained or copied and the same summary: keep the manifest of the invocation
    -- that made it, so rerunning a finished study changes no file (make reproduce).
    fs.write_atomic(dir .. "/manifest.json", ctx.old_manifest)
    return summary, true
  end
  if ctx.trained == 0 and not ctx.count.copy and ctx.old_manifest then
    -- Nothing trained or copied, another summary (the analysis changed): the facts of the
    -- invocation that trained the runs stay (its times, jobs, counts, commit: the study's
    -- compute), with when this analysis ran and its commit (analysed_*).
    local m = json.table_of(ctx.old_manifest)
    if m and m.runs == #s.runs and type(m.wall_s) == "number" then
      m.analysed_utc = record.utc()
      m.analysed_git_commit, m.analysed_git_dirty = record.git_info()
      fs.write_atomic(dir .. "/manifest.json", json.pretty(m))
      return summary, true
    end
  end
  write_study_manifest(s, dir, {
    start_utc = ctx.start_utc, end_utc = record.utc(), wall_s = host.now() - ctx.t_start,
    jobs = ctx.jobs, threads_per_job = ctx.threads,
    runs = #s.runs, runs_trained = ctx.trained, runs_reused = ctx.count.reuse or 0,
    runs_copied = ctx.count.copy or 0, runs_diverged = diverged,
    command_line_overrides = s.set and json.object(s.set) or nil,
  })
  return summary, true
end

-- The analysis once every run is done: summary, manifest, verdicts on stdout.
local function analyse(s, dir, ctx)
  local records, missing, warnings, counts = analysis.study_records(s, dir, who)
  for _, w in ipairs(warnings) do say("%s", w) end
  say("%s: %s", who, set.count_text(counts))
  -- a sequential study is done when every comparison is decided: the runs after are not run
  local open = s.analysis and s.analysis.sequential and seq.needed((seq.state(s, records)))
  if #missing > 0 and (open or not (s.analysis and s.analysis.sequential)) then
    say(who .. ": %d %s of the study %s not done (%s); no summary. Run the study " ..
      "without --only to complete it.", #missing, plural(#missing, "run"),
      #missing == 1 and "is" or "are", table.concat(missing, ", "))
    return 0
  end
  local summary, written = write_summary(s, dir, records, ctx)
  say("study %s: %d trained, %d reused, %d copied in %s", s.name, ctx.trained,
    ctx.count.reuse or 0, ctx.count.copy or 0, progress.fmt_time(host.now() - ctx.t_start))
  io.write(base.printable(require("repro.report.terminal").verdict_table(summary,
    textable.width(), s.extensions), true))
  if not written then
    put("summary: not written (it would change " .. shown(dir .. "/summary.json") ..
      "; --update writes it)")
    return M.EXIT_UNCHANGED
  end
  put("summary: " .. shown(dir .. "/summary.json"))
  return 0
end

-- The runs of a sequential study's next look, those the comparisons still open need
-- (lua/repro/analysis/sequential.lua); the others; the seeds per variant the look reaches.
-- Nil when every comparison is decided.
function M.next_look(s, runs, dir)
  local need = seq.needed((seq.state(s, (analysis.study_records(s, dir)))))
  if not need then return nil end
  local pos, batch, rest, upto = {}, {}, {}, 0
  for i, seed in ipairs(s.seeds) do pos[seed] = i end
  for _, r in ipairs(runs) do
    if need[r.variant] and pos[r.seed] <= need[r.variant] then
      batch[#batch + 1] = r
      upto = math.max(upto, need[r.variant])
    else
      rest[#rest + 1] = r
    end
  end
  return batch, rest, upto
end

-- A sequential study (analysis.sequential): look by look, the runs the comparisons still
-- open need (lua/repro/analysis/sequential.lua), then the analysis.  A finished run is
-- never trained again, so an interrupted study resumes at its look; a rerun of a finished
-- one trains nothing.
local function run_sequential(s, runs, queue, dir, ctx, jobs, threads, done)
  ctx.trained = 0
  while true do
    local batch, rest, upto = M.next_look(s, queue, dir)
    if not batch or #batch == 0 then break end
    say("study %s: next look at %d seeds per variant: %d %s to train", s.name, upto, #batch,
      plural(#batch, "run"))
    local res = {}
    res.finished, res.stopped, res.failed, res.not_started, res.interrupted =
      pool.run(s, batch, jobs, threads, done, #runs)
    if res.interrupted or #res.failed > 0 then return report_incomplete(runs, res) end
    ctx.trained, done, queue = ctx.trained + #res.finished, done + #res.finished, rest
  end
  return analyse(s, dir, ctx)
end

-- The study of o, its selected runs planned, its records root and its directory.
local function load(o)
  local s, runs, out_root, dir = plan.load(o, true, true)
  if not o.set then return s, runs, out_root, dir end
  if o.set.lr ~= nil and o.set.min_lr == nil then
    say("%s: --set lr=%s: min_lr follows it: lr x min_lr_ratio = %s (--set min_lr=X gives " ..
      "another)", who, tostring(o.set.lr), tostring(s.runs[1].cfg.min_lr))
  end
  say("%s: --set %s: every run of %s trains with %s", who, table.concat(o.set_raw, ","),
    s.name, #o.set_raw == 1 and "this override" or "these overrides")
  if not o.out_root then
    say(who .. ": runs changed by --set go to %s (their own records root; --out-root " ..
      "chooses another)", shown(out_root))
  end
  return s, runs, out_root, dir
end

-- The command that writes the summary a run or analyze of o refused to write.
local function update_command(o)
  local function q(x) return x:match("^[%w%./_,=:+-]+$") and x or fs.quote(x) end
  local parts = { "bin/repro analyze", q(o.file) }
  if o.out_root then parts[#parts + 1] = "--out-root " .. q(o.out_root) end
  if #o.set_raw > 0 then parts[#parts + 1] = "--set " .. q(table.concat(o.set_raw, ",")) end
  parts[#parts + 1] = "--update"
  return table.concat(parts, " ")
end

-- The task files the runs to train need (config key tasks) that are missing for their
-- corpus: one line per suite and corpus, each with the build command for that corpus.
local function missing_task_files(runs)
  local tasks = require "repro.tasks"
  local seen, out = {}, {}
  for _, r in ipairs(cost.to_train(runs)) do
    local suite = r.cfg.tasks
    if suite and suite ~= "" then
      local data = record.data_path(r.cfg)
      local key = suite .. "\0" .. data
      if not seen[key] then
        seen[key] = true
        local ok, err = pcall(tasks.load, data, suite, { shots = { 0 } })
        if not ok then
          if type(err) ~= "table" then error(err, 0) end -- a bug, not a missing file
          out[#out + 1] = tostring(err.message)
        end
      end
    end
  end
  return out
end

-- analyze_only (`bin/repro analyze`): the same, except that it trains nothing: with any
-- run of the study not done it lists them with their state and exits 1, no summary.
function M.main(args, analyze_only)
  who = analyze_only and "repro analyze" or "repro run"
  local o = parse_args(args, analyze_only and M.ANALYZE_USAGE or M.USAGE)
  if o.help then return 0 end
  if analyze_only and (o.jobs or o.force or o.dry_run or #o.only > 0) then
    user_error("repro analyze: takes only --out-root, --set and --update (it trains " ..
      "nothing and analyses every run of the study)")
  end
  local s, runs, out_root, dir = load(o)
  local jobs, threads = workers(o, s)
  local missing = not analyze_only and missing_task_files(runs) or {}
  if o.dry_run then
    planner.print(s, runs, out_root, threads, jobs)
    local pending = cost.to_train(runs)
    if #pending > 0 then print(select(2, cost.line(pending, jobs, threads))) end
    if s.analysis and s.analysis.sequential and #pending > 0 then
      local per_run = cost.line(pending, jobs, threads) / #pending
      local cases, fixed = seq.expected(s)
      for _, c in ipairs(cases) do
        print(string.format("sequential: under an effect of %g: about %.1f seeds per variant, " ..
          "%.0f runs, %s (a difference found with probability %.2f)", c.effect, c.seeds,
          c.runs, cost.fmt(c.runs * per_run), c.reject))
      end
      print(string.format("sequential: the fixed design (the cap): %d runs, %s; runs come " ..
        "look by look, each look only for the comparisons still open", fixed,
        cost.fmt(fixed * per_run)))
    end
    for _, m in ipairs(missing) do print("refused: " .. m) end
    -- the real run would refuse: so does its dry run's exit status
    return (planner.refusal(runs) or #missing > 0) and 1 or 0
  end
  local refused = planner.refusal(runs)
  if refused then user_error("%s", refused) end
  if #missing > 0 then user_error("%s", table.concat(missing, "\n")) end
  -- analyze of a study with no directory: nothing is done, and nothing is created
  if analyze_only and not fs.exists(dir) then return plan.unfinished(s, runs) end
  if lock_study(s, runs, dir, out_root, o.force) then return 130 end
  -- Under the lock: a killed runner's temporary files are stale.
  fs.remove_stale_tmp(dir)
  local ctx = { t_start = host.now(), start_utc = record.utc(), update = o.update,
    update_command = update_command(o),
    jobs = not analyze_only and jobs or nil, threads = not analyze_only and threads or nil }
  -- The summary on disk and its manifest, compared with the new one at the end (kept
  -- until then: a summary changes only when written anew, never by being removed).
  ctx.old_summary, ctx.old_manifest = fs.read(dir .. "/summary.json"), fs.read(dir .. "/manifest.json")
  local queue, count, done = queue_runs(runs, out_root)
  if s.keep_model and not analyze_only then
    local bare = {}
    for _, r in ipairs(runs) do
      if (r.action == "reuse" or r.action == "copy") and
          not fs.exists(r.dir .. "/" .. record.MODEL) then
        bare[#bare + 1] = r.label
      end
    end
    if #bare > 0 then
      say("%s: keep_model: %d finished %s no kept model (%s); a finished run is not " ..
        "retrained for it: add --force --only variant=V,seed=S to retrain one with its model",
        who, #bare, #bare == 1 and "run has" or "runs have", table.concat(bare, ", "))
    end
  end
  if analyze_only and #queue > 0 and not (s.analysis and s.analysis.sequential) then
    return plan.unfinished(s, queue)
  end
  if s.seeds_from_power and #queue > 0 then say("%s", study.seeds_text(s.seeds_from_power)) end
  say("study %s: %d %s selected: %d to train (%d resumed, %d rerun after a config change%s), " ..
    "%d reused, %d copied; %d %s x %d %s", s.name, #runs, plural(#runs, "run"), #queue,
    count.resume or 0, count.rerun or 0, count.retrain and string.format(", %d retrained " ..
    "on changed task files", count.retrain) or "", count.reuse or 0, count.copy or 0, jobs,
    plural(jobs, "job"), threads, plural(threads, "thread"))
  local predicted
  if #queue > 0 then
    local line
    predicted, line = cost.line(queue, jobs, threads)
    say("study %s: %s", s.name, line)
  end
  if s.analysis and s.analysis.sequential then
    if #o.only > 0 then
      user_error("%s: %s is sequential: its looks choose the runs (no --only)", who, s.name)
    end
    ctx.count = count
    return run_sequential(s, runs, queue, dir, ctx, jobs, threads, done)
  end
  local res = {}
  local t_train = host.now()
  res.finished, res.stopped, res.failed, res.not_started, res.interrupted =
    pool.run(s, queue, jobs, threads, done, #runs)
  if res.interrupted or #res.failed > 0 then return report_incomplete(runs, res) end
  if predicted and predicted > 0 then
    local actual = host.now() - t_train
    say("study %s: trained in %s, predicted %s (%+.0f%%)", s.name, cost.fmt(actual),
      cost.fmt(predicted), 100 * (predicted - actual) / actual)
  end
  ctx.trained, ctx.count = #res.finished, count
  return analyse(s, dir, ctx)
end

return M
