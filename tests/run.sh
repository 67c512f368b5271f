#!/bin/sh
# Runs every C test binary in $TEST_DIR, every tests/lua/test_*.lua through $REPRO and
# every tests/sh/test_*.sh, $TEST_JOBS files at a time (default: the number of cores;
# TEST_JOBS=1 runs one at a time), the longest first: by the wall times of the last
# complete run in the same build ($TEST_DIR/../test-times), else by TEST_TIMES or the list below.  Each
# test works in its own temporary folders, so any two may run together.  A file's output
# is printed whole when it ends, then one line "[k/N] NAME: P passed, F failed (T s, C s
# CPU)"; at the end the suite's wall and CPU time and the sum of the files' "NAME: N
# passed, N failed" lines, ending with the total.  A test that exits non-zero without
# such a line (a crash, a sanitizer report) counts as one failure; one that prints
# "NAME: skipped (reason)" and exits 0 (a test that needs root, say) is counted and listed
# as skipped.  TEST_SKIP: names of test files not to run (make test-asan's list of Lua
# files whose C lines the others cover, Makefile), named at the start and counted at the
# end.  Exit status 1 if anything failed.
set -u
REPRO=${REPRO:-bin/repro}
TEST_DIR=${TEST_DIR:-build/tests}
export REPRO
# OpenMP's threads sleep when a parallel region ends instead of spinning for it: the tests'
# models are tiny (regions of microseconds) and two test files share the cores, so each
# file's spinning threads took the other's CPU (test_explain.lua: 20.7 CPU s with libgomp's
# default spin, 9.9 passive).  Results do not depend on it (the thread count does not
# change a bit); a caller's OMP_WAIT_POLICY is kept.
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
export OMP_WAIT_POLICY
jobs=${TEST_JOBS:-}
[ -n "$jobs" ] || jobs=$(nproc 2>/dev/null || echo 2)
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: TEST_JOBS=$jobs is not a positive number" >&2; exit 2 ;; esac
times_file=$(dirname "$TEST_DIR")/test-times
tab=$(printf '\t')

# Without test-times (a fresh build, as CI's): the files' seconds from TEST_TIMES, a file
# of "NAME SECONDS ..." lines ('#' starts a comment; make test-asan gives its list,
# tests/asan-files.txt, whose seconds are under the sanitizers), else the list below: the
# wall seconds of every file of at least 4 s in make test on a clean clone (CI, of
# e4e599de, on two idle Zen 5 cores, 2026-12-03, 04:43 UTC).  Any other file counts as 0
# and starts after these, by name; a long file started last holds the suite up while the other core idles.
DEFAULT_TIMES="test_pairs_order.lua 59
test_user_study.lua 47
test_ledger.lua 41
test_study.lua 22
test_kill.lua 20
test_report.lua 18
test_export_committed.lua 16
test_paths.sh 15
test_plan.lua 12
test_claim.lua 12
test_bad_inputs.lua 12
test_tasks.lua 11
test_adopted_records.lua 11
test_untrusted_code.lua 11
test_study_validate.lua 10
test_fuzz.lua 10
test_explain.lua 10
test_user_tasks.lua 9
test_study_jobs.lua 8
test_guardrails.lua 8
test_outputs.lua 7
test_export_model.lua 7
test_modules.lua 6
test_integrity.lua 6
test_corpora.lua 6
test_task_rebuild.lua 5
test_sandbox.lua 5
test_records_io.lua 4
test_gemm 4
test_bounds.lua 4"

work=$(mktemp -d)
cleanup() {
    for f in "$work"/*.job "$work"/*.pid; do
        [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ns() { date +%s%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
# `times` prints the shell's user and system time, then its children's ("0m1.250000s").
cpu_of() {
    tail -n 1 "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] } printf "%.1f", s }'
}
expected() {
    awk -v n="$1" '$1 == n { s = $2 } END { print s + 0 }' "$work/times"
}

if [ -f "$times_file" ]; then
    cp "$times_file" "$work/times"
elif [ -n "${TEST_TIMES:-}" ]; then
    [ -f "$TEST_TIMES" ] && [ -r "$TEST_TIMES" ] || {
        echo "tests/run.sh: TEST_TIMES=$TEST_TIMES cannot be read" >&2; exit 2; }
    grep -v '^#' "$TEST_TIMES" >"$work/times"
else
    echo "$DEFAULT_TIMES" >"$work/times"
fi
{
    for t in "$TEST_DIR"/test_*; do
        [ -f "$t" ] && [ -x "$t" ] && printf '%s\t%s\t%s\n' "$(basename "$t")" bin "$t"
    done
    for t in tests/lua/test_*.lua; do
        [ -f "$t" ] && printf '%s\t%s\t%s\n' "$(basename "$t")" lua "$t"
    done
    for t in tests/sh/test_*.sh; do
        [ -f "$t" ] && printf '%s\t%s\t%s\n' "$(basename "$t")" sh "$t"
    done
} | while IFS=$tab read -r name kind path; do
    case " ${TEST_SKIP:-} " in
        *" $name "*) echo "$name" >>"$work/not-run"; continue ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$(expected "$name")" "$name" "$kind" "$path"
done | sort -t "$tab" -k1,1nr -k2,2 >"$work/queue"
total=$(wc -l <"$work/queue")
not_run=""
if [ -f "$work/not-run" ]; then
    not_run=$(tr '\n' ' ' <"$work/not-run" | sed 's/ $//')
    echo "tests/run.sh: $total test files; not run here (TEST_SKIP): $not_run"
fi
for n in ${TEST_SKIP:-}; do
    case " $not_run " in
        *" $n "*) ;;
        *) echo "tests/run.sh: TEST_SKIP names $n, which is no test file" >&2; exit 2 ;;
    esac
done

# Each file runs in a background subshell that writes its log, exit status, times, and
# then its index to the FIFO the loop below reads.  SIGINT and SIGQUIT, which a shell
# ignores in background jobs, are set back to their defaults for the test (tests send
# them to their own children).
mkfifo "$work/done"
exec 3<>"$work/done"
start() {
    (
        t0=$(now_ns)
        case $2 in
            bin) exec env --default-signal=INT,QUIT "$3" ;;
            lua) exec env --default-signal=INT,QUIT "$REPRO" script "$3" ;;
            sh) exec env --default-signal=INT,QUIT sh "$3" ;;
        esac </dev/null >"$work/$1.log" 2>&1 3>&- &
        echo $! >"$work/$1.pid"
        wait $!
        rc=$?
        t1=$(now_ns)
        times >"$work/$1.times"
        echo "$rc $t0 $t1" >"$work/$1.status"
        echo "$1" >&3
    ) &
    echo $! >"$work/$1.job"
}

passed=0
failed=0
skipped=""
done_n=0
running=0
suite_t0=$(now_ns)
finish() {
    local j name rc t0 t1 log line p f skip what wall cpu
    read -r j <&3
    rm -f "$work/$j.pid" "$work/$j.job"
    name=$(cat "$work/$j.name")
    read -r rc t0 t1 <"$work/$j.status"
    log=$work/$j.log
    cat "$log"
    line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ -n "$line" ]; then
        p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
        f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
    else
        p=0
        f=0
    fi
    skip=$(grep -E '^[A-Za-z0-9_.-]+: skipped' "$log" | tail -n 1)
    what="$p passed, $f failed"
    if [ -z "$line" ] && [ -n "$skip" ] && [ "$rc" -eq 0 ]; then
        skipped="$skipped $name"
        what="skipped"
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exit status $rc" >&2
        f=1
        what="$what, exit status $rc"
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    done_n=$((done_n + 1))
    running=$((running - 1))
    wall=$(seconds "$t0" "$t1")
    cpu=$(cpu_of "$work/$j.times")
    printf '%s %s\n' "$name" "$wall" >>"$work/new-times"
    echo "$cpu" >>"$work/cpu"
    echo "[$done_n/$total] $name: $what ($wall s, $cpu s CPU)"
}

i=0
while IFS=$tab read -r est name kind path; do
    i=$((i + 1))
    echo "$name" >"$work/$i.name"
    while [ "$running" -ge "$jobs" ]; do finish; done
    start "$i" "$kind" "$path"
    running=$((running + 1))
done <"$work/queue"
while [ "$running" -gt 0 ]; do finish; done
if [ "$done_n" -eq "$total" ]; then
    # a file not run (TEST_SKIP) keeps its last time
    awk 'NR == FNR { seen[$1] = 1; print; next } !($1 in seen)' "$work/new-times" "$work/times" |
        sort >"$work/times.sorted" && mv "$work/times.sorted" "$times_file" 2>/dev/null
fi

echo "$total test files in $(seconds "$suite_t0" "$(now_ns)") s ($(awk '{ s += $1 } END { printf "%.1f", s }' "$work/cpu") s CPU, $jobs at a time)"
if [ -n "$skipped" ]; then
    echo "$(echo $skipped | wc -w) skipped:$skipped"
fi
if [ -n "$not_run" ]; then
    echo "$(echo $not_run | wc -w) not run (TEST_SKIP): $not_run"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
