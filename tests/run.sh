#!/bin/sh
# Runs every C test binary in $TEST_DIR and every tests/lua/test_*.lua through $REPRO,
# sums their "NAME: N passed, N failed" lines and ends with the total.  A test that
# exits non-zero without such a line (a crash, a sanitizer report) counts as one
# failure; one that prints "NAME: skipped (reason)" and exits 0 (a test that needs
# root, say) is counted and listed as skipped.  Exit status 1 if anything failed.
set -u
REPRO=${REPRO:-bin/repro}
TEST_DIR=${TEST_DIR:-build/tests}
export REPRO
passed=0
failed=0
skipped=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_one() {
    name=$1
    shift
    "$@" >"$log" 2>&1
    rc=$?
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
    if [ -z "$line" ] && [ -n "$skip" ] && [ "$rc" -eq 0 ]; then
        skipped="$skipped $name"
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exit status $rc" >&2
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
}

for t in "$TEST_DIR"/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
for t in tests/lua/test_*.lua tests/sh/test_*.sh; do
    [ -f "$t" ] || continue
    case "$t" in
        *.lua) run_one "$(basename "$t")" "$REPRO" script "$t" ;;
        *) run_one "$(basename "$t")" sh "$t" ;;
    esac
done
if [ -n "$skipped" ]; then
    echo "$(echo $skipped | wc -w) skipped:$skipped"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
