#!/bin/sh
# make test-slurm: `bin/repro submit --slurm` on a real single-node Slurm (Debian
# slurm-wlm + munge, installed by scripts/deps.sh --slurm; needs root).  The test starts
# munged, slurmctld and slurmd on localhost with a configuration written under a
# temporary directory, then:
#   1. submits a tiny study, waits for its analysis job, and compares every record
#      (config.json, log.csv, metrics.json) and summary.json with a local
#      `bin/repro run --jobs 2` byte for byte;
#   2. submits a slower version (--set), cancels one array task mid-run (scancel: SIGTERM,
#      the run stops with a checkpoint), checks that the analysis job reports that run,
#      resubmits, and compares again: the resumed record is identical;
#   3. sends one task the time-limit signal (SIGUSR1 to the batch shell, as --signal does
#      before the limit): the run stops with a checkpoint, the task requeues itself and
#      resumes; records and summary identical again.
# It stops every daemon it started, by PID, on any exit.  Under `make test` (without
# REPRO_TEST_SLURM=1) it only says so: tests/run.sh runs every tests/sh/test_*.sh.
set -u
if [ "${REPRO_TEST_SLURM:-}" != 1 ]; then
    echo "test_slurm: skipped (it runs under make test-slurm: a real Slurm, as root)"
    exit 0
fi
top=$(pwd)
REPRO=${REPRO:-bin/repro}
# its corpora are temporary files outside data/ (README: REPRO_DATA_ANYWHERE)
export REPRO_DATA_ANYWHERE=1
case $REPRO in /*) ;; *) REPRO=$top/$REPRO ;; esac
CTLD_PORT=${REPRO_SLURMCTLD_PORT:-16817}
SLURMD_PORT=$((CTLD_PORT + 1))
T0=$(date +%s)
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
note() { echo "test_slurm: +$(($(date +%s) - T0)) s: $*" >&2; }
finish() { echo "test_slurm: $pass passed, $fail failed ($(($(date +%s) - T0)) s)"; [ "$fail" -eq 0 ]; exit; }

if [ "$(id -u)" -ne 0 ]; then ok 1 "needs root (slurmd runs jobs as their user)"; finish; fi
for c in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel; do
    command -v $c >/dev/null 2>&1 || { ok 1 "$c not installed: scripts/deps.sh --slurm"; finish; }
done

tmp=$(mktemp -d /tmp/repro-slurm.XXXXXX)
chmod 755 "$tmp" # munged wants every directory above its socket searchable
munged_pid=
ctld_pid=
slurmd_pid=
stop_pid() { # pid: SIGTERM, up to 20 s, then SIGKILL
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || return 0
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
cleanup() {
    if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
        jobs_left=$(squeue -h -o %A 2>/dev/null | sort -u)
        [ -n "$jobs_left" ] && scancel $jobs_left 2>/dev/null
        i=0
        while [ -n "$(squeue -h 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
    fi
    stop_pid "$slurmd_pid"
    stop_pid "$ctld_pid"
    stop_pid "$munged_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- the cluster ---------------------------------------------------------------------
mkdir -p "$tmp/munge" "$tmp/sock" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 700 "$tmp/munge"
chmod 755 "$tmp/sock"
mungekey -c -k "$tmp/munge/munge.key" >/dev/null 2>&1
ok $? "mungekey"
munged -F --socket="$tmp/sock/munge.sock" --key-file="$tmp/munge/munge.key" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" \
    --seed-file="$tmp/munge/seed" >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
i=0
while [ ! -S "$tmp/sock/munge.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$tmp/sock/munge.sock" ]
ok $? "munged started: $(cat "$tmp/log/munged.out" "$tmp/log/munged.log" 2>/dev/null)"

# The node declares most of its memory: Slurm's default RealMemory is 1 MiB, and the
# submission asks --mem from the measured peak RSS of the runs done so far.
REAL_MEM_MIB=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
cat > "$tmp/slurm.conf" <<EOF
ClusterName=repro-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/sock/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
KillWait=30
InactiveLimit=0
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=$REAL_MEM_MIB State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" -N localhost >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
i=0
while [ "$(sinfo -h -o %T 2>/dev/null)" != idle ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ]
ok $? "the node is idle (ports $CTLD_PORT and $SLURMD_PORT free? else set REPRO_SLURMCTLD_PORT): $(sinfo 2>&1; tail -n 5 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log")"
[ "$fail" -eq 0 ] || finish

# --- helpers -----------------------------------------------------------------------------
# wait_gone JOB [SECONDS, default 600]: until squeue no longer lists JOB (or any task of it)
wait_gone() {
    i=0
    while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ] && [ $i -lt $((${2:-600} * 5)) ]; do
        sleep 0.2
        i=$((i + 1))
    done
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]
}
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
# same_results A B WHAT: records and summary.json of study stiny under roots A and B
same_results() {
    for r in none/seed-1 layernorm/seed-1 none/seed-2 layernorm/seed-2; do
        for f in config.json log.csv metrics.json; do
            cmp -s "$1/stiny/$r/$f" "$2/stiny/$r/$f"
            ok $? "$3: $r/$f differs from the local run"
        done
    done
    cmp -s "$1/stiny/summary.json" "$2/stiny/summary.json"
    ok $? "$3: summary.json differs from the local run"
}
analysis_job() { sed -n 's/^analysis job \([0-9]*\).*/\1/p' "$1"; }
array_job() { sed -n 's/^array job \([0-9]*\):.*/\1/p' "$1" | head -n 1; }

head -c 100000 data/tinyshakespeare.txt > "$tmp/corpus.txt"
cat > "$tmp/stiny.lua" <<EOF
return {
  name = "stiny",
  description = "a tiny study for Slurm",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 20,
    warmup = 2, diag_every = 5, diag_windows = 4, data = "$tmp/corpus.txt" },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" } },
  seeds = { 1, 2 },
  checkpoint_every = 10,
  analysis = { baseline = "none", metrics = { "val_loss", "val_acc" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" },
}
EOF
study=$tmp/stiny.lua
# A few seconds a run: long enough to be cancelled mid-run.
SLOW=n_layer=2,d_model=64,context=64,batch=8,iters=300

# --- 1. submit, wait, compare ---------------------------------------------------------
t1=$(date +%s)
"$REPRO" run "$study" --out-root "$tmp/L" --jobs 2 >/dev/null 2>"$tmp/L.err"
ok $? "local run: $(cat "$tmp/L.err")"
"$REPRO" submit --slurm "$study" --out-root "$tmp/S" --max-parallel 2 >"$tmp/sub1.out" 2>&1
ok $? "submit: $(cat "$tmp/sub1.out")"
a=$(analysis_job "$tmp/sub1.out")
[ -n "$a" ] && wait_gone "$a"
ok $? "analysis job ${a:-?} ended: $(squeue 2>&1)"
[ "$(job_state "$a")" = COMPLETED ]
ok $? "analysis job COMPLETED: $(job_state "$a"); $(cat "$tmp"/S/stiny/slurm/logs/* 2>/dev/null)"
same_results "$tmp/L" "$tmp/S" "Slurm"
"$REPRO" status "$study" --out-root "$tmp/S" >"$tmp/status1.out" 2>&1
grep -q "4 done, 0 running, 0 failed, 0 pending" "$tmp/status1.out" &&
    grep -q "^summary: " "$tmp/status1.out"
ok $? "status after Slurm: $(cat "$tmp/status1.out")"
echo "test_slurm: submit, 4 runs, analysis: $(($(date +%s) - t1)) s" >&2

# --- 2. scancel one task mid-run, resubmit -----------------------------------------------
t2=$(date +%s)
"$REPRO" run "$study" --set "$SLOW" --out-root "$tmp/L2" --jobs 2 >/dev/null 2>"$tmp/L2.err"
ok $? "local slow run: $(cat "$tmp/L2.err")"
note "local slow run done"
"$REPRO" submit --slurm "$study" --set "$SLOW" --out-root "$tmp/C" --max-parallel 2 \
    >"$tmp/sub2.out" 2>&1
ok $? "submit (slow): $(cat "$tmp/sub2.out")"
note "submitted"
arr=$(array_job "$tmp/sub2.out")
a=$(analysis_job "$tmp/sub2.out")
run_dir=$tmp/C/stiny/none/seed-1
i=0
while ! ls "$run_dir"/checkpoint-*.rptf >/dev/null 2>&1 && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
ls "$run_dir"/checkpoint-*.rptf >/dev/null 2>&1
ok $? "task ${arr}_0 wrote a checkpoint"
note "checkpoint seen"
scancel "${arr}_0"
wait_gone "${arr}_0" 60
ok $? "task ${arr}_0 cancelled"
note "task cancelled"
[ ! -e "$run_dir/metrics.json" ]
ok $? "the cancelled run does not look done"
grep -q '"state": "stopped"' "$run_dir/attempt.json" 2>/dev/null
ok $? "the cancelled run stopped with a checkpoint: $(cat "$run_dir/attempt.json" 2>&1; cat "$tmp"/C/stiny/slurm/logs/${arr}_0.out)"
stopped_at=$(sed -n 's/.*"step": \([0-9]*\).*/\1/p' "$run_dir/attempt.json")
[ -n "$a" ] && wait_gone "$a"
ok $? "analysis job ended"
note "analysis job ended"
[ "$(job_state "$a")" = FAILED ] && grep -q "pending  none/seed-1  stopped by a signal at step" \
    "$tmp"/C/stiny/slurm/logs/analysis-"$a".out
ok $? "the analysis job reports the cancelled run: $(job_state "$a"); $(cat "$tmp"/C/stiny/slurm/logs/analysis-"$a".out)"
[ ! -e "$tmp/C/stiny/summary.json" ]
ok $? "no summary while a run is missing"
"$REPRO" status "$study" --set "$SLOW" --out-root "$tmp/C" >"$tmp/status2.out" 2>&1
grep -q "3 done, 0 running, 0 failed, 1 pending" "$tmp/status2.out"
ok $? "status after scancel: $(cat "$tmp/status2.out")"
"$REPRO" submit --slurm "$study" --set "$SLOW" --out-root "$tmp/C" >"$tmp/sub3.out" 2>&1
ok $? "resubmit: $(cat "$tmp/sub3.out")"
note "resubmitted"
grep -q "1 pending (job array), 3 done" "$tmp/sub3.out"
ok $? "the resubmission holds the one unfinished run: $(cat "$tmp/sub3.out")"
arr2=$(array_job "$tmp/sub3.out")
a=$(analysis_job "$tmp/sub3.out")
[ -n "$a" ] && wait_gone "$a"
ok $? "analysis job of the resubmission ended"
note "analysis of the resubmission ended"
[ "$(job_state "$a")" = COMPLETED ]
ok $? "analysis job COMPLETED: $(cat "$tmp"/C/stiny/slurm/logs/analysis-"$a".out 2>&1)"
grep -q "resuming from its checkpoint" "$tmp/C/stiny/slurm/logs/${arr2}_0.out" &&
    grep -q "from step $stopped_at" "$tmp/C/stiny/slurm/logs/${arr2}_0.out"
ok $? "the resubmitted task resumed from step $stopped_at: $(cat "$tmp/C/stiny/slurm/logs/${arr2}_0.out")"
same_results "$tmp/L2" "$tmp/C" "scancel + resubmit"
echo "test_slurm: scancel at step $stopped_at of 300, resubmit: $(($(date +%s) - t2)) s" >&2

# --- 3. the time-limit signal: checkpoint, requeue, resume ----------------------------------
t3=$(date +%s)
REPRO_REQUEUE_MIN_S=0 "$REPRO" submit --slurm "$study" --set "$SLOW" --out-root "$tmp/Q" \
    --max-parallel 2 >"$tmp/sub4.out" 2>&1
ok $? "submit (requeue): $(cat "$tmp/sub4.out")"
note "submitted"
arr=$(array_job "$tmp/sub4.out")
a=$(analysis_job "$tmp/sub4.out")
run_dir=$tmp/Q/stiny/none/seed-1
i=0
while ! ls "$run_dir"/checkpoint-*.rptf >/dev/null 2>&1 && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
note "checkpoint seen"
# scancel returns only once Slurm has settled the task, which requeues itself meanwhile
# (it may answer "Job can not be altered now" then): in the background, ended by PID.
scancel --batch --signal=USR1 "${arr}_0" 2>"$tmp/scancel.err" &
scancel_pid=$!
note "SIGUSR1 sent"
i=0
while [ "$(squeue -h -j "${arr}_0" -o %T 2>/dev/null)" != PENDING ] && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(squeue -h -j "${arr}_0" -o %T 2>/dev/null)" = PENDING ]
ok $? "task ${arr}_0 requeued itself: $(squeue 2>&1; cat "$tmp/scancel.err" "$tmp/Q/stiny/slurm/logs/${arr}_0.out")"
note "requeued"
kill "$scancel_pid" 2>/dev/null
wait "$scancel_pid" 2>/dev/null
# Slurm holds a requeued job for about two minutes (BeginTime); release it now.
scontrol update JobId="${arr}_0" StartTime=now
[ -n "$a" ] && wait_gone "$a"
ok $? "analysis job ended"
[ "$(job_state "$a")" = COMPLETED ]
ok $? "analysis job COMPLETED: $(cat "$tmp"/Q/stiny/slurm/logs/analysis-"$a".out 2>&1)"
log=$tmp/Q/stiny/slurm/logs/${arr}_0.out
grep -q "requeueing this task" "$log" && grep -q "resuming from its checkpoint" "$log"
ok $? "the task stopped, requeued and resumed: $(cat "$log")"
same_results "$tmp/L2" "$tmp/Q" "time-limit signal + requeue"
echo "test_slurm: time-limit signal, requeue, resume: $(($(date +%s) - t3)) s" >&2
finish
