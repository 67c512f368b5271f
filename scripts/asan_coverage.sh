#!/bin/sh
# make asan-coverage: which C lines each test file executes, and whether make test-asan's
# set (tests/asan-files.txt) still executes every C line the whole suite does.
#
#   scripts/asan_coverage.sh run OUT [NAME...]   each test file ALONE against the gcov build
#                  (REPRO, TEST_DIR: that build's bin/repro and test binaries), JOBS at a time
#                  (default 1), each writing its .gcda under its own temporary folder
#                  (GCOV_PREFIX), so one file's counts never mix with another's; then OUT/lines/NAME: the lines
#                  "engine/x.c:12" of engine/, stats/ and lua/ it executed (gcov -t), and
#                  OUT/status/NAME: "exit-status CPU-seconds".  No NAME: every test file.
#   scripts/asan_coverage.sh check OUT [LIST]    fails (exit 1), naming them, on: a C line some
#                  file executes that no file LIST keeps executes (with the files that do),
#                  and what lint finds.  LIST: tests/asan-files.txt by default.
#   scripts/asan_coverage.sh lint LIST          the list's form alone (no coverage): every test
#                  file named once, no other name, numbers, decisions, every C test binary "c".
#   scripts/asan_coverage.sh choose OUT [LIST]   prints the set cover (below) as a new LIST
#                  from OUT's lines, LIST's ASan CPU seconds and its "memory" decisions.
#
# The set: every C test binary, every file LIST marks "memory" (it feeds C hostile input),
# every file that alone executes some line, then greedily the file that executes the most
# lines not yet executed per ASan CPU second, until nothing is left; last, a file whose
# lines the others all execute is dropped again (the most expensive first).  Lines are
# those of the C files of engine/, stats/ and lua/ (not of the tests themselves); a header's
# line is one line per object compiling it.  Limits: a process that ends by a signal or
# _exit writes no counts (test_kill's killed workers); a line that runs only on a timing
# (a retry after EINTR) or only while a cache is cold (build/provenance, a cost
# calibration) can move from one file to another between runs: check then names it, and
# choose settles it.
# Run from the tree's top (make asan-coverage does).
set -u
case $0 in /*) self=$0 ;; *) self=$(pwd)/$0 ;; esac
[ -f tests/run.sh ] || { echo "scripts/asan_coverage.sh: run it from the tree's top" >&2; exit 2; }
top=$(pwd)
REPRO=${REPRO:-build-cov/bin/repro}
TEST_DIR=${TEST_DIR:-build-cov/tests}
case $REPRO in /*) ;; *) REPRO=$top/$REPRO ;; esac
case $TEST_DIR in /*) ;; *) TEST_DIR=$top/$TEST_DIR ;; esac
export REPRO TEST_DIR
tab=$(printf '\t')

usage() {
    echo "usage: scripts/asan_coverage.sh run OUT [NAME...] | check OUT [LIST] | choose OUT [LIST] | lint LIST" >&2
    exit 2
}

# name<TAB>kind<TAB>path of every test file, as tests/run.sh finds them
test_files() {
    for t in tests/c/test_*.c; do
        n=${t##*/} && n=${n%.c} && [ -f "$t" ] && printf '%s\tbin\t%s\n' "$n" "$TEST_DIR/$n"
    done
    for t in tests/lua/test_*.lua; do
        [ -f "$t" ] && printf '%s\tlua\t%s\n' "${t##*/}" "$t"
    done
    for t in tests/sh/test_*.sh; do
        [ -f "$t" ] && printf '%s\tsh\t%s\n' "${t##*/}" "$t"
    done
}

# One file, alone: run it with its own GCOV_PREFIX, then its executed lines.
run_one() {
    name=$1 kind=$2 path=$3 out=$4
    # outside the tree: a test that checks it wrote nothing there must not see the counts
    gcda=$(mktemp -d "${TMPDIR:-/tmp}/asan-coverage.XXXXXX") || exit 2
    pre=$gcda/$name
    mkdir -p "$pre" "$out/lines" "$out/status" "$out/log"
    # the .gcda paths are absolute (this tree's): strip them to the tree's relative paths
    strip=$(echo "$top" | awk -F/ '{ n = 0; for (i = 1; i <= NF; i++) if ($i != "") n++; print n }')
    (
        export GCOV_PREFIX="$pre" GCOV_PREFIX_STRIP="$strip"
        (
            case $kind in
                bin) exec env --default-signal=INT,QUIT "$path" ;;
                lua) exec env --default-signal=INT,QUIT "$REPRO" script "$path" ;;
                sh) exec env --default-signal=INT,QUIT sh "$path" ;;
            esac
        ) </dev/null >"$out/log/$name" 2>&1
        rc=$?
        # `times` in this shell, not in a $(...) one: its second line is the test's CPU time
        times >"$out/status/$name.times"
        tail -n 1 "$out/status/$name.times" | awk -v rc=$rc '{ s = 0
            for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] }
            printf "%d %.1f\n", rc, s }' >"$out/status/$name.tmp"
        rm -f "$out/status/$name.times"
    )
    find "$pre" -name '*.gcda' | while read -r g; do
        rel=${g#"$pre"/}
        ln -sf "$top/${rel%.gcda}.gcno" "${g%.gcda}.gcno"
    done
    # gcov -t: the annotated sources on stdout, each after its "-: 0:Source:FILE" line; a
    # count (with a * when some block of the line did not run) marks an executed line.  One
    # object at a time: a header's line counts once per object that compiles it
    # (engine/kern_body.h:40@kern_generic: each CPU path has its own copy).
    find "$pre" -name '*.gcda' | sort | while read -r g; do
        obj=$(basename "$g" .gcda)
        gcov -t "$g" 2>/dev/null | awk -F: -v obj="$obj" '
            $2 + 0 == 0 && $3 == "Source" { src = $4; keep = (src ~ /^(engine|stats|lua)\//)
                                            at = (src ~ /\.h$/) ? "@" obj : ""; next }
            keep && $2 + 0 > 0 { c = $1; gsub(/ /, "", c); if (c ~ /^[0-9]/) print src ":" ($2 + 0) at }'
    done |
        sort -u >"$out/lines/$name.tmp" &&
        mv "$out/lines/$name.tmp" "$out/lines/$name" &&
        mv "$out/status/$name.tmp" "$out/status/$name"
    rm -rf "$gcda"
    read -r rc cpu <"$out/status/$name"
    echo "$name: exit status $rc, $cpu s CPU, $(wc -l <"$out/lines/$name") C lines" >&2
}

# LIST without comments: name, ASan CPU seconds, decision, reason
list_rows() {
    grep -v '^#' "$1" | awk 'NF >= 3'
}

# The list's form: every test file named once, no name that is no test file, a number of
# seconds and a known decision on each row, every C test binary "c" and only those.
check_names() {
    list=$1
    bad=0
    test_files | cut -f1 | sort >"$work/files"
    test_files | awk -F"$tab" '$2 == "bin" { print $1 }' >"$work/bins"
    list_rows "$list" | awk '{ print $1 }' | sort >"$work/named"
    for n in $(comm -23 "$work/files" "$work/named"); do
        echo "asan-coverage: $n is not in $list: make asan-coverage, then make asan-coverage-choose adds it" >&2
        bad=1
    done
    for n in $(comm -13 "$work/files" "$work/named"); do
        echo "asan-coverage: $list names $n, which is no test file" >&2
        bad=1
    done
    for n in $(uniq -d "$work/named"); do
        echo "asan-coverage: $list names $n twice" >&2
        bad=1
    done
    awk -v list="$list" '
        NR == FNR { bin[$1] = 1; next }
        /^#/ || /^[ \t]*$/ { next }
        {   where = list ":" FNR ": " $1
            if (NF < 4) { print where ": a row is: name seconds decision reason"; bad = 1; next }
            if ($2 !~ /^[0-9]+(\.[0-9]+)?$/) { print where ": seconds \"" $2 "\" is no number"; bad = 1 }
            if ($3 !~ /^(c|memory|cover|skip)$/) { print where ": decision \"" $3 "\" is none of c, memory, cover, skip"; bad = 1 }
            else if (($1 in bin) != ($3 == "c")) { print where ": decision " $3 ": \"c\" is for the C test binaries, and every one"; bad = 1 }
        }
        END { exit bad }' "$work/bins" "$list" >&2 || bad=1
    return $bad
}

# The set cover (see the top), printed as a new list: LIST's seconds (else the last make
# test-asan's wall seconds, build-asan/test-times, else the coverage build's CPU seconds)
# and its "memory" decisions with their reasons; every other decision is recomputed.
choose() {
    times=build-asan/test-times
    [ -f "$times" ] || times=/dev/null
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
    list_rows "$1" >"$work/rows"
    awk -F"$tab" -v today="$(date -u +%Y-%m-%d)" -v commit="$commit" '
        FILENAME == ARGV[1] { split($0, f, " "); w[f[1]] = f[2] + 0; dec[f[1]] = f[3]
                              r = $0; for (i = 1; i <= 3; i++) sub(/^[^ ]+ +/, "", r); why[f[1]] = r; next }
        FILENAME == ARGV[2] { split($0, f, " "); if (!(f[1] in w)) w[f[1]] = f[2] + 0; next }
        FILENAME == ARGV[3] { isbin[$1] = 1; next }
        FILENAME == ARGV[4] { file[$3] = $1; names[++nn] = $1; cpu[$1] = $2 + 0; next }
        {   n = file[FILENAME]; k = ++nl[n]; L[n, k] = $0
            if (!($0 in cnt)) nall++
            if (++cnt[$0] == 1) only[$0] = n
        }
        function weight(n) { return (n in w && w[n] > 0) ? w[n] : (cpu[n] > 0 ? cpu[n] : 0.1) }
        function take(n, d, r,   i) {
            inset[n] = 1; decision[n] = d; reason[n] = r
            for (i = 1; i <= nl[n]; i++) cov[L[n, i]] = 1
        }
        function gain(n,   i, g) {
            g = 0
            for (i = 1; i <= nl[n]; i++) if (!(L[n, i] in cov)) g++
            return g
        }
        END {
            for (i = 1; i <= nn; i++) {
                n = names[i]
                if (n in isbin) take(n, "c", "a C test binary: every one runs")
                else if (dec[n] == "memory") take(n, "memory", why[n])
            }
            for (l in cnt) if (cnt[l] == 1 && !(l in cov)) { u[only[l]]++; if (!(only[l] in eg) || l < eg[only[l]]) eg[only[l]] = l }
            for (n in u) take(n, "cover", "alone runs " u[n] " C line(s), the first " eg[n])
            while (1) {
                best = ""; bg = 0
                for (i = 1; i <= nn; i++) {
                    n = names[i]
                    if (n in inset) continue
                    g = gain(n)
                    if (g > 0 && (best == "" || g / weight(n) > bg / weight(best))) { best = n; bg = g }
                }
                if (best == "") break
                take(best, "cover", "greedy: runs " bg " C line(s) the files above do not")
            }
            # a greedy pick whose lines the others all run goes again, the most expensive first
            for (i = 1; i <= nn; i++) if (names[i] in inset) for (k = 1; k <= nl[names[i]]; k++) incount[L[names[i], k]]++
            do {
                drop = ""
                for (i = 1; i <= nn; i++) {
                    n = names[i]
                    if (!(n in inset) || decision[n] != "cover" || substr(reason[n], 1, 6) != "greedy") continue
                    ok = 1
                    for (k = 1; k <= nl[n] && ok; k++) if (incount[L[n, k]] < 2) ok = 0
                    if (ok && (drop == "" || weight(n) > weight(drop))) drop = n
                }
                if (drop != "") {
                    delete inset[drop]
                    for (k = 1; k <= nl[drop]; k++) incount[L[drop, k]]--
                }
            } while (drop != "")
            nset = 0; sset = 0; sall = 0; nkept = 0
            for (i = 1; i <= nn; i++) {
                n = names[i]; sall += weight(n)
                if (n in inset) { nset++; sset += weight(n) }
                else { decision[n] = "skip"; reason[n] = "every C line it runs, a file above runs too" }
            }
            for (l in incount) if (incount[l] > 0) nkept++
            print "# make test-asan: the test files run under AddressSanitizer + UndefinedBehaviorSanitizer."
            print "# Written by make asan-coverage-choose (scripts/asan_coverage.sh) on " today " from the"
            print "# per-file C line coverage of commit " commit "; make asan-coverage checks it still holds."
            print "#   c       every C test binary"
            print "#   memory  kept by hand: it feeds the C code hostile or malformed input (parsers,"
            print "#           sandbox limits, file and write errors), and other inputs find other bugs"
            print "#   cover   the weighted set cover: a file that alone runs some C line, then greedily the"
            print "#           file running the most lines not yet run per ASan second; then a greedy pick"
            print "#           whose lines the others all run is dropped (the most expensive first)"
            print "#   skip    not run by make test-asan (TEST_SKIP): the files above run each of its C lines;"
            print "#           make test-asan-all runs it too"
            printf "# %d of %d files, %.0f of %.0f ASan seconds; they run %d C lines, the whole suite %d.\n", \
                nset, nn, sset, sall, nkept, nall
            print "# A test file not named here fails tests/sh/test_asan_list.sh and runs under make test-asan."
            print "# ASan-seconds, the weights of the cover: the wall seconds of the file in the last complete run"
            print "# under the sanitizers (build-asan/test-times: two files at a time), kept from this list once"
            print "# in it; a file new to the list gets the CPU seconds of its coverage run."
            print "# name  ASan-seconds  decision  reason"
            for (i = 1; i <= nn; i++) {
                n = names[i]
                o = (decision[n] == "c") ? 1 : (decision[n] == "memory") ? 2 : (decision[n] == "cover") ? 3 : 4
                printf "%d\t%09.1f\t%-28s %7.1f  %-7s %s\n", o, 100000 - weight(n), n, weight(n), decision[n], reason[n] | "sort | cut -f3-"
            }
            close("sort | cut -f3-")
        }' "$work/rows" "$times" "$work/bins" "$work/cov.tsv" $(cut -f3 "$work/cov.tsv")
}

cmd=${1:-}
[ $# -ge 2 ] || usage
out=$2
shift 2
case $cmd in
    run)
        mkdir -p "$out"
        test_files >"$out/files.tsv"
        if [ $# -gt 0 ]; then
            for n in "$@"; do
                grep -q "^$n$tab" "$out/files.tsv" || { echo "asan-coverage: $n is no test file" >&2; exit 2; }
            done
            printf '%s\n' "$@" | awk -F"$tab" 'NR == FNR { want[$1] = 1; next } $1 in want' - "$out/files.tsv" >"$out/run.tsv"
        else
            cp "$out/files.tsv" "$out/run.tsv"
        fi
        # the longest first, by the last make test-asan's times (tests/run.sh's test-times)
        times=build-asan/test-times
        [ -f "$times" ] || times=/dev/null
        # (FILENAME, not NR == FNR: without the times file, /dev/null is empty and the
        # test of NR == FNR would take the list itself for the times)
        awk -F"$tab" -v OFS="$tab" -v times="$times" \
            'FILENAME == times { s[$1] = $2; next } { print s[$1] + 0, $1, $2, $3 }' \
            FS=" " "$times" FS="$tab" "$out/run.tsv" |
            sort -t "$tab" -k1,1nr -k2,2 | cut -f2- | tr "$tab" ' ' |
            xargs -r -P "${JOBS:-1}" -L 1 sh "$self" one "$out"
        ;;
    one)
        # internal (run): one OUT NAME KIND PATH
        run_one "$1" "$2" "$3" "$out"
        ;;
    lint)
        # internal form: lint LIST (no coverage needed; tests/sh/test_asan_list.sh)
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        check_names "$out"
        exit $?
        ;;
    check | choose)
        list=${1:-tests/asan-files.txt}
        [ -f "$list" ] || { echo "asan-coverage: no list $list" >&2; exit 2; }
        [ -f "$out/files.tsv" ] || { echo "asan-coverage: no coverage in $out (run first)" >&2; exit 2; }
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        # the test files of this tree that have no lines in OUT were not run: run them first
        test_files | cut -f1 | while read -r n; do
            [ -f "$out/lines/$n" ] || echo "$n"
        done >"$work/missing"
        if [ -s "$work/missing" ]; then
            echo "asan-coverage: no coverage of $(tr '\n' ' ' <"$work/missing")in $out" \
                "(scripts/asan_coverage.sh run $out NAME...)" >&2
            exit 1
        fi
        for n in $(test_files | cut -f1); do
            read -r rc cpu <"$out/status/$n"
            [ "$rc" -eq 0 ] || echo "asan-coverage: warning: $n exited $rc in the coverage build" \
                "($out/log/$n): its lines may be too few" >&2
            printf '%s\t%s\t%s\n' "$n" "$cpu" "$out/lines/$n"
        done >"$work/cov.tsv"
        test_files | awk -F"$tab" '$2 == "bin" { print $1 }' >"$work/bins"
        if [ "$cmd" = check ]; then
            bad=0
            check_names "$list" || bad=1
            # every file but the list's "skip" ones runs under make test-asan
            list_rows "$list" | awk '$3 == "skip" { print $1 }' >"$work/skip"
            awk -F"$tab" -v out="$out" -v list="$list" -v nfiles="$(wc -l <"$work/cov.tsv")" '
                FILENAME == ARGV[1] { skip[$1] = 1; next }
                FILENAME == ARGV[2] && ($1 in skip) { nskip++ }
                FILENAME == ARGV[2] { file[$3] = $1; next }
                {   n = file[FILENAME]
                    if (!($0 in all)) { all[$0] = 1; nall++ }
                    if (n in skip) { by[$0] = by[$0] " " n; next }
                    if (!($0 in kept)) { kept[$0] = 1; nkept++ }
                }
                END {
                    for (l in by) if (!(l in kept)) miss[++nmiss] = l
                    printf "asan-coverage: %d of %d test files under the sanitizers (%s) run %d of the %d C lines the whole suite runs\n", \
                        nfiles - nskip, nfiles, list, nkept, nall > "/dev/stderr"
                    if (nmiss == 0) exit 0
                    printf "asan-coverage: %d C lines are run only by files %s skips (line: the files that run it):\n", \
                        nmiss, list > "/dev/stderr"
                    for (i = 1; i <= nmiss; i++) print miss[i] ":" by[miss[i]] | "sort -V | sed \"s/^/  /\" >&2"
                    close("sort -V | sed \"s/^/  /\" >&2")
                    printf "asan-coverage: keep one of those files (make asan-coverage-choose rewrites %s)\n", list > "/dev/stderr"
                    exit 1
                }' "$work/skip" "$work/cov.tsv" $(cut -f3 "$work/cov.tsv") || bad=1
            exit $bad
        fi
        choose "$list"
        ;;
    *) usage ;;
esac
