#!/bin/sh
# The same bytes on every CPU path, thread count and architecture (engine/kernels.h):
#  - tests/cross/tiny_train (the engine's C core alone) on every path this CPU has, at 1
#    and 2 threads: identical log rows, metrics and task scores (engine/tasks.h: every
#    choice's log-likelihood, 0- and 1-shot), printed to 17 digits;
#  - bin/repro train --out on every path: identical log.csv and metrics.json, and the
#    path recorded in manifest.json;
#  - the same driver cross-compiled for aarch64 (gcc-aarch64-linux-gnu) and run under
#    qemu-aarch64: identical to x86 (scripts/deps.sh --test installs both);
#  - no engine object calls the C library's exp, log, pow, cos, sin or tanh.
# Env: REPRO (bin/repro), TEST_DIR (the test binaries, tiny_train among them).
set -u
top=$(pwd)
REPRO=${REPRO:-bin/repro}
# its corpora are temporary files outside data/ (README: REPRO_DATA_ANYWHERE)
export REPRO_DATA_ANYWHERE=1
TEST_DIR=${TEST_DIR:-build/tests}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

head -c 60000 data/tinyshakespeare.txt > "$tmp/corpus.txt"
CFG="n_layer=2 d_model=32 n_head=2 context=32 batch=4 iters=12 warmup=2 diag_every=4 diag_windows=3"
paths=$("$TEST_DIR/tiny_train" --paths 2>/dev/null)
[ -n "$paths" ]
ok $? "tiny_train --paths lists this CPU's paths"
first=""
for p in $paths; do
    for th in 1 2; do
        REPRO_ISA=$p "$TEST_DIR/tiny_train" "$tmp/corpus.txt" $CFG threads=$th \
            > "$tmp/out.$p.$th" 2>"$tmp/err"
        ok $? "tiny_train on $p, $th threads: $(cat "$tmp/err")"
        if [ -z "$first" ]; then
            first="$tmp/out.$p.$th"
            [ "$(wc -l < "$first")" -gt 20 ]
            ok $? "tiny_train printed its log and metrics"
            [ "$(grep -c '^task_loglik' "$first")" -eq 2 ]
            ok $? "tiny_train printed its task scores"
        else
            cmp -s "$first" "$tmp/out.$p.$th"
            ok $? "$p at $th threads gives the bytes of $(basename "$first")"
        fi
    done
done

# bin/repro records on every path
rfirst=""
for p in $paths; do
    REPRO_ISA=$p "$REPRO" train data="$tmp/corpus.txt" $CFG --out "$tmp/rec.$p" >/dev/null 2>"$tmp/err"
    ok $? "bin/repro train on $p: $(tail -n 3 "$tmp/err")"
    grep -q "\"isa\": *\"$p\"" "$tmp/rec.$p/manifest.json"
    ok $? "manifest.json of the $p run records its path"
    if [ -z "$rfirst" ]; then
        rfirst=$p
    else
        for f in log.csv metrics.json config.json; do
            cmp -s "$tmp/rec.$rfirst/$f" "$tmp/rec.$p/$f"
            ok $? "$f identical on $rfirst and $p"
        done
    fi
done
REPRO_ISA=nosuch "$REPRO" train data="$tmp/corpus.txt" $CFG >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "REPRO_ISA=nosuch" "$tmp/err" && grep -q generic "$tmp/err"
ok $? "an unknown REPRO_ISA is refused with its name and the paths: $(cat "$tmp/err")"
"$REPRO" --version > "$tmp/version" 2>&1
grep -q "paths:.*generic" "$tmp/version" && grep -q "path in use:" "$tmp/version"
ok $? "bin/repro --version lists the paths and the chosen one: $(cat "$tmp/version")"

# aarch64 under qemu
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
    src=""
    for f in engine/*.c; do
        case "$f" in engine/kern_avx*) ;; *) src="$src $f" ;; esac
    done
    # shellcheck disable=SC2086
    aarch64-linux-gnu-gcc -std=c11 -O2 -ffp-contract=off -fopenmp -D_GNU_SOURCE -Wall -Wextra \
        -Werror -Iengine $src tests/cross/tiny_train.c -o "$tmp/tiny_train.arm64" -static -lm \
        2>"$tmp/err"
    # (-static warns about dlopen in libgomp: a linker note, not a compiler warning)
    ok $? "aarch64 cross-compile: $(grep -v dlopen "$tmp/err" | head -n 5)"
    qemu-aarch64 "$tmp/tiny_train.arm64" "$tmp/corpus.txt" $CFG threads=2 > "$tmp/out.arm64" \
        2>"$tmp/err"
    ok $? "qemu-aarch64 run: $(cat "$tmp/err")"
    grep -q "path generic" "$tmp/err"
    ok $? "aarch64 runs the generic path"
    cmp -s "$first" "$tmp/out.arm64"
    ok $? "aarch64 (qemu) gives the bytes of x86 $(basename "$first")"
else
    ok 1 "aarch64 check needs gcc-aarch64-linux-gnu and qemu-user (scripts/deps.sh --test)"
fi

# no libm transcendental in the engine's objects
objdir=$(dirname "$TEST_DIR")/engine
bad=$(nm -u "$objdir"/*.o 2>/dev/null | grep -wE '(exp|expf|exp2|log|logf|log2|log1p|expm1|pow|powf|cos|cosf|sin|sinf|tanh|tanhf|erf)' | sort -u)
[ -d "$objdir" ] && [ -z "$bad" ]
ok $? "engine objects call no libm transcendental function: $bad"

echo "test_paths: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
