#!/bin/sh
# make reproduce's study loop: `bin/repro run` of each study in the order given, finished
# runs reused.  A committed summary is never rewritten silently (issue 54): a study whose
# summary would change makes `bin/repro run` print what changes and why and exit 3 without
# writing it; the loop goes on with the next studies (which read the summary on disk) and
# then fails with the list of those studies.  UPDATE=1 (make reproduce UPDATE=1) passes
# --update to every run, writing the summaries that change.
#   scripts/reproduce_studies.sh STUDY... [-- RUN_FLAG...]
# Environment: REPRO (default bin/repro), STUDY_DIR (default lua/experiments), UPDATE.
set -u
REPRO=${REPRO:-bin/repro}
STUDY_DIR=${STUDY_DIR:-lua/experiments}
UPDATE=${UPDATE:-}
studies=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    studies="$studies $1"
    shift
done
[ $# -gt 0 ] && shift
update=""
[ "$UPDATE" = 1 ] && update="--update"
changed=""
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
