#!/bin/sh
# make reproduce's study loop: `bin/repro run` of each study, finished runs reused.  A
# committed summary is never rewritten silently: a study whose summary would
# change makes `bin/repro run` print what changes and why and exit 3 without writing it;
# the loop goes on with the next studies (which read the summary on disk) and then fails
# with the list of those studies.  UPDATE=1 (make reproduce UPDATE=1) passes --update to
# every run, writing the summaries that change.
#   scripts/reproduce_studies.sh STUDY... [-- RUN_FLAG...]
# Environment: REPRO (default bin/repro), STUDY_DIR (default lua/experiments), UPDATE,
# STUDY_JOBS and STUDY_DEPS (below).
#
# STUDY_JOBS=1 (the default) runs the studies one after another in the order given, their
# output as it comes.  STUDY_JOBS=N runs up to N at once, each as soon as every study it
# needs has ended; STUDY_DEPS holds what each needs, one line "NAME: DEP DEP ..." per study
# (`bin/repro studies --deps`; a dependency not among the STUDY arguments counts as ended).
# Of the studies ready to start, the one with the longest chain of work after it goes
# first: its own time plus the longest of the studies that need it, by each study's wall
# time in STUDY_TIMES (written at the end of a complete run; without it, by the order
# given; STUDY_TIMES_DEFAULT names a file of the same form to use until STUDY_TIMES exists,
# make reproduce QUICK=1's scripts/quick-study-times.txt).  A study's output is printed whole when it ends, after "reproduce: study NAME
# started" when it starts.  After a failure (an exit status other than 0 and 3) no study
# starts; the running ones end, and the loop exits with the first failure's status.
# make reproduce QUICK=1 runs two at once: its tiny runs leave a core idle while a study
# is analysed, and its studies are short.
set -u
REPRO=${REPRO:-bin/repro}
STUDY_DIR=${STUDY_DIR:-lua/experiments}
UPDATE=${UPDATE:-}
STUDY_JOBS=${STUDY_JOBS:-1}
STUDY_TIMES=${STUDY_TIMES:-}
STUDY_TIMES_DEFAULT=${STUDY_TIMES_DEFAULT:-}
case $STUDY_JOBS in '' | *[!0-9]* | 0)
    echo "reproduce: STUDY_JOBS=$STUDY_JOBS is not a positive number" >&2; exit 2 ;;
esac
studies=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    studies="$studies $1"
    shift
done
[ $# -gt 0 ] && shift
update=""
[ "$UPDATE" = 1 ] && update="--update"
changed=""

report_changed() {
    if [ -n "$changed" ]; then
        {
            echo "reproduce: the summaries of these studies would change, and were not written:$changed"
            echo "reproduce: what changes in each, and why, is printed above its verdict table."
            echo "reproduce: to write them: make reproduce UPDATE=1"
            echo "           (or one study: bin/repro analyze $STUDY_DIR/<study>.lua --update)"
        } >&2
        exit 1
    fi
    exit 0
}

if [ "$STUDY_JOBS" -eq 1 ]; then
    for s in $studies; do
        echo "reproduce: study $s" >&2
        "$REPRO" run "$STUDY_DIR/$s.lua" "$@" $update
        rc=$?
        if [ "$rc" -eq 3 ]; then
            changed="$changed $s"
        elif [ "$rc" -ne 0 ]; then
            exit "$rc"
        fi
    done
    report_changed
fi

# ---- up to STUDY_JOBS studies at once ----------------------------------------------------
if [ -z "${STUDY_DEPS:-}" ]; then
    echo "reproduce: STUDY_JOBS=$STUDY_JOBS needs STUDY_DEPS (bin/repro studies --deps)" >&2
    exit 2
fi
for s in $studies; do
    printf '%s\n' "$STUDY_DEPS" | grep -q "^$s:" || {
        echo "reproduce: STUDY_DEPS has no line for the study $s" >&2; exit 2; }
done
work=$(mktemp -d)
# Ctrl-C reaches the running studies from the terminal (each stops its runs with a
# checkpoint); a TERM sent to this loop alone is passed on to them.  Either way the loop
# waits for them before it exits.
stop_all() {
    for f in "$work"/*.pid; do
        [ -f "$f" ] && kill "-$1" "$(cat "$f")" 2>/dev/null
    done
}
trap 'wait; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'stop_all TERM; exit 143' TERM

now_ns() { date +%s%N; }

# The queue: the studies by their chain of work after them, longest first (the given
# order breaks ties), from the last complete run's times (0 for a study without one).
printf '%s\n' "$STUDY_DEPS" >"$work/deps"
if [ -n "$STUDY_TIMES" ] && [ -f "$STUDY_TIMES" ]; then
    grep -v '^#' "$STUDY_TIMES" >"$work/times"
elif [ -n "$STUDY_TIMES_DEFAULT" ] && [ -f "$STUDY_TIMES_DEFAULT" ]; then
    grep -v '^#' "$STUDY_TIMES_DEFAULT" >"$work/times"
else
    : >"$work/times"
fi
queue=$(awk -v list="$studies" '
    FILENAME == ARGV[1] { t[$1] = $2 + 0; next }
    {
        name = $1; sub(/:$/, "", name); n++; order[n] = name; at[name] = n
        for (i = 2; i <= NF; i++) { needs[name] = needs[name] " " $i }
    }
    END {
        k = split(list, sel, " "); for (i = 1; i <= k; i++) chosen[sel[i]] = 1
        # the deps lines come dependencies first: walk them backwards
        for (i = n; i >= 1; i--) {
            s = order[i]; chain[s] += t[s]
            m = split(needs[s], d, " ")
            for (j = 1; j <= m; j++) if (chain[d[j]] < chain[s]) chain[d[j]] = chain[s]
        }
        for (i = 1; i <= n; i++) if (order[i] in chosen) printf "%.3f %d %s\n", chain[order[i]], i, order[i]
    }' "$work/times" "$work/deps" | sort -k1,1nr -k2,2n | awk '{ print $3 }')
queue=$(echo $queue)

ended=" "
selected=" $(echo $studies) "
ready() {
    for d in $(awk -v s="$1" '{ n = $1; sub(/:$/, "", n) } n == s { $1 = ""; print }' "$work/deps"); do
        case $selected in *" $d "*) ;; *) continue ;; esac
        case $ended in *" $d "*) ;; *) return 1 ;; esac
    done
    return 0
}

mkfifo "$work/done"
exec 3<>"$work/done"
start() {
    st=$1
    shift
    echo "reproduce: study $st started" >&2
    (
        t0=$(now_ns)
        env --default-signal=INT,QUIT "$REPRO" run "$STUDY_DIR/$st.lua" "$@" $update \
            </dev/null >"$work/$st.log" 2>&1 3>&- &
        echo $! >"$work/$st.pid"
        wait $!
        rc=$?
        echo "$rc $t0 $(now_ns)" >"$work/$st.status"
        echo "$st" >&3
    ) &
}

running=0
failed=0
while :; do
    if [ "$failed" -eq 0 ]; then
        rest=""
        for s in $queue; do
            if [ "$running" -lt "$STUDY_JOBS" ] && ready "$s"; then
                start "$s" "$@"
                running=$((running + 1))
            else
                rest="$rest $s"
            fi
        done
        queue=$(echo $rest)
    fi
    [ "$running" -eq 0 ] && break
    read -r s <&3
    read -r rc t0 t1 <"$work/$s.status"
    rm -f "$work/$s.pid"
    running=$((running - 1))
    ended="$ended$s "
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    echo "reproduce: study $s ended (exit status $rc, $wall s)" >&2
    cat "$work/$s.log"
    printf '%s %s\n' "$s" "$wall" >>"$work/new-times"
    if [ "$rc" -eq 3 ]; then
        changed="$changed $s"
    elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        failed=$rc
        echo "reproduce: study $s failed (exit status $rc): no further study starts" >&2
    fi
done
if [ "$failed" -ne 0 ]; then exit "$failed"; fi
if [ -n "$queue" ]; then
    echo "reproduce: these studies never became ready (what they need is not among them): $queue" >&2
    exit 2
fi
if [ -n "$STUDY_TIMES" ]; then
    mkdir -p "$(dirname "$STUDY_TIMES")" && sort "$work/new-times" >"$STUDY_TIMES"
fi
report_changed
