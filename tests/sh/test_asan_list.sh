#!/bin/sh
# make test-asan's list (tests/asan-files.txt) cannot go stale silently: it names every
# test file of the tree once, each C test binary as "c" (always run), no file that does
# not exist; and scripts/asan_coverage.sh's check fails, naming the line and the files, when
# a C line is run only by files the list skips.  Each fault is planted first, so the checks
# can fail.  (The coverage itself is make asan-coverage's: a gcov build, too slow here.)
set -u
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
list=tests/asan-files.txt
cov=scripts/asan_coverage.sh

sh "$cov" lint "$list" 2>"$tmp/err"
ok $? "$list names every test file once, each with seconds and a decision: $(cat "$tmp/err")"
n_files=$(ls tests/c/test_*.c tests/lua/test_*.lua tests/sh/test_*.sh | wc -l)
n_rows=$(grep -v '^#' "$list" | awk 'NF >= 4' | wc -l)
[ "$n_files" -eq "$n_rows" ]
ok $? "$n_rows rows for $n_files test files"
grep -q '^# .* of .* files, .* ASan seconds; they run .* C lines, the whole suite .*\.$' "$list"
ok $? "$list's header says how many files and lines"

# planted faults, each named
grep -v '^test_fuzz.lua ' "$list" >"$tmp/missing"
sh "$cov" lint "$tmp/missing" 2>"$tmp/err"
ok $((! $?)) "a list without test_fuzz.lua fails"
grep -q 'test_fuzz.lua is not in' "$tmp/err"
ok $? "the missing file is named: $(cat "$tmp/err")"

{ cat "$list"; echo "test_gone.lua 1.0 skip a file that does not exist"; } >"$tmp/extra"
sh "$cov" lint "$tmp/extra" 2>"$tmp/err"
ok $((! $?)) "a list naming a file that does not exist fails"
grep -q 'names test_gone.lua, which is no test file' "$tmp/err"
ok $? "the unknown name is given: $(cat "$tmp/err")"

{ cat "$list"; grep '^test_pcg ' "$list"; } >"$tmp/twice"
sh "$cov" lint "$tmp/twice" 2>"$tmp/err"
ok $((! $?)) "a list naming test_pcg twice fails"
grep -q 'names test_pcg twice' "$tmp/err"
ok $? "the twice-named file is given: $(cat "$tmp/err")"

sed 's/^\(test_gemm  *[0-9.]*  *\)c /\1skip /' "$list" >"$tmp/cskip"
cmp -s "$list" "$tmp/cskip"
ok $((! $?)) "the plant changed test_gemm's decision"
sh "$cov" lint "$tmp/cskip" 2>"$tmp/err"
ok $((! $?)) "a C test binary skipped fails"
grep -q "cskip:[0-9]*: test_gemm: decision skip" "$tmp/err"
ok $? "the C test binary's line is named: $(cat "$tmp/err")"

sed 's/^\(test_fuzz.lua  *[0-9.]*  *\)[a-z]* /\1maybe /' "$list" >"$tmp/dec"
sh "$cov" lint "$tmp/dec" 2>"$tmp/err"
ok $((! $?)) "an unknown decision fails"
grep -q 'test_fuzz.lua: decision "maybe" is none of' "$tmp/err"
ok $? "the decision is named: $(cat "$tmp/err")"

# the coverage check on planted per-file lines: every file runs engine/a.c:1; one file the
# list skips also runs engine/a.c:2, which no kept file runs
skipped=$(grep -v '^#' "$list" | awk '$3 == "skip" { print $1; exit }')
[ -n "$skipped" ]
ok $? "the list skips some file"
out=$tmp/cov
mkdir -p "$out/lines" "$out/status"
: >"$out/files.tsv"
for t in tests/c/test_*.c tests/lua/test_*.lua tests/sh/test_*.sh; do
    n=$(basename "$t" .c)
    echo "engine/a.c:1" >"$out/lines/$n"
    echo "0 1.0" >"$out/status/$n"
done
sh "$cov" check "$out" "$list" 2>"$tmp/err"
ok $? "check passes when the kept files run every line: $(cat "$tmp/err")"
grep -q "run 1 of the 1 C lines the whole suite runs" "$tmp/err"
ok $? "check counts the lines: $(cat "$tmp/err")"
[ -n "$skipped" ] && printf 'engine/a.c:1\nengine/a.c:2\n' >"$out/lines/$skipped"
sh "$cov" check "$out" "$list" 2>"$tmp/err"
ok $((! $?)) "check fails when a line only $skipped runs"
grep -q "^  engine/a.c:2: $skipped\$" "$tmp/err"
ok $? "check names the line and the file that runs it: $(cat "$tmp/err")"
grep -q "run 1 of the 2 C lines" "$tmp/err"
ok $? "check counts the line the set misses: $(cat "$tmp/err")"
sh "$cov" choose "$out" "$list" >"$tmp/new" 2>"$tmp/err"
ok $? "choose writes a new list: $(cat "$tmp/err")"
grep -q "^$skipped  *[0-9.]*  *cover  *alone runs 1 C line(s), the first engine/a.c:2\$" "$tmp/new"
ok $? "choose keeps $skipped, the only file running engine/a.c:2: $(grep "^$skipped " "$tmp/new")"
sh "$cov" check "$out" "$tmp/new" 2>"$tmp/err"
ok $? "check passes on the chosen list: $(cat "$tmp/err")"
rm "$out/lines/test_fuzz.lua"
sh "$cov" check "$out" "$list" 2>"$tmp/err"
ok $((! $?)) "check fails when a test file has no coverage"
grep -q "no coverage of test_fuzz.lua" "$tmp/err"
ok $? "the file without coverage is named: $(cat "$tmp/err")"

echo "test_asan_list.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
