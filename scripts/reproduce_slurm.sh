#!/bin/sh
# `make reproduce` on a Slurm cluster (make reproduce-slurm, REPRODUCE.md): every study of
# lua/experiments/ submitted with `bin/repro submit --slurm` as soon as the studies it
# needs (`bin/repro studies --deps`) are analysed, then a wait until every study's
# analysis job has ended.  `make reproduce-slurm` then verifies the records and builds the
# paper.
#   scripts/reproduce_slurm.sh [--out-root DIR] [--set key=value,...] [SUBMIT FLAGS]
# SUBMIT FLAGS go to every `bin/repro submit --slurm` (--partition P, --time T,
# --max-parallel K, --account A, --threads N).  Run it on a login node, from the project
# directory on the cluster's shared filesystem; it only submits and polls squeue (every
# POLL_S seconds, default 30).  A study is skipped when its runs are done and its summary
# written ("nothing to submit").  When an analysis job ends without a summary (a run
# failed or was cancelled) it stops with that study's `bin/repro status`: run it again,
# finished runs are reused and stopped ones resume from their checkpoints.
set -eu
REPRO=${REPRO:-bin/repro}
POLL_S=${POLL_S:-30}
common=""   # --out-root / --set: where the records are, for submit and status alike
submit=""   # the rest: submit only
while [ $# -gt 0 ]; do
    case $1 in
        --out-root|--set)
            [ $# -ge 2 ] || { echo "reproduce_slurm: $1 needs a value" >&2; exit 2; }
            common="$common $1 $2"
            shift 2 ;;
        *)
            submit="$submit $1"
            shift ;;
    esac
done
out_root=experiments
# shellcheck disable=SC2086
set -- $common
while [ $# -gt 0 ]; do [ "$1" = --out-root ] && out_root=$2; shift; done

say() { echo "reproduce_slurm: $*" >&2; }
# The studies and what each needs, "name: dep dep", dependencies first.
deps=$("$REPRO" studies --deps --out-root "$out_root")
studies=$(echo "$deps" | sed 's/:.*//')
state_dir=$(mktemp -d)
trap 'rm -rf "$state_dir"' EXIT
# $state_dir/<study>: "job N" while its analysis job is queued or running, "done" after.

needs() { echo "$deps" | sed -n "s/^$1:\(.*\)/\1/p"; }
has_summary() {
    # shellcheck disable=SC2086
    "$REPRO" status "lua/experiments/$1.lua" $common 2>/dev/null | grep '^summary: ' |
        grep -qv '^summary: not written'
}

while :; do
    left=0
    for s in $studies; do
        st=$(cat "$state_dir/$s" 2>/dev/null || true)
        case $st in
            done) continue ;;
            job*)
                left=$((left + 1))
                job=${st#job }
                q=$(squeue -h -j "$job" -o %T 2>/dev/null) || continue # controller busy: ask later
                [ -z "$q" ] || continue
                if has_summary "$s"; then
                    echo done > "$state_dir/$s"
                    left=$((left - 1))
                    say "$s analysed (job $job)"
                else
                    say "$s: its analysis job $job ended without a summary:"
                    # shellcheck disable=SC2086
                    "$REPRO" status "lua/experiments/$s.lua" $common >&2 || true
                    say "run this again to resubmit what is missing"
                    exit 1
                fi ;;
            *)
                left=$((left + 1))
                ready=1
                for d in $(needs "$s"); do
                    [ "$(cat "$state_dir/$d" 2>/dev/null || true)" = done ] || ready=0
                done
                [ $ready = 1 ] || continue
                # shellcheck disable=SC2086
                out=$("$REPRO" submit --slurm "lua/experiments/$s.lua" $common $submit 2>&1) || {
                    echo "$out" >&2
                    say "submitting $s failed"
                    exit 1
                }
                job=$(echo "$out" | sed -n 's/^analysis job \([0-9][0-9]*\).*/\1/p')
                if [ -n "$job" ]; then
                    echo "job $job" > "$state_dir/$s"
                    say "$s submitted: $(echo "$out" | grep -c '^array job') array job(s), analysis job $job"
                else
                    echo done > "$state_dir/$s"
                    left=$((left - 1))
                    say "$s: nothing to submit (every run done, summary written)"
                fi ;;
        esac
    done
    [ $left -gt 0 ] || break
    sleep "$POLL_S"
done
say "every study is analysed"
