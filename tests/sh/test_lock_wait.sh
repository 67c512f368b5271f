#!/bin/sh
# Every wait is interruptible: a `bin/repro run` (and `analyze`,
# `run-one`) waiting for the study lock another process holds exits 130 within a second
# of SIGINT or SIGTERM and trains nothing, and stays stopped when the lock is released.
set -u
top=$(pwd)
REPRO=${REPRO:-bin/repro}
case $REPRO in /*) ;; *) REPRO=$top/$REPRO ;; esac
tmp=$(mktemp -d)
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

cat > "$tmp/lw.lua" <<EOF
return { name = "lw", description = "x",
  base = { n_layer = 1, d_model = 16, n_head = 2, context = 16, batch = 4, iters = 4, warmup = 1 },
  variants = { { name = "a" }, { name = "b", dropout = 0.1 } },
  seeds = { 1, 2 },
  analysis = { baseline = "a", metrics = { "val_loss" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" } }
EOF
mkdir -p "$tmp/o/lw"
# another process holds the study lock (as a `bin/repro run` of it would)
flock -x "$tmp/o/lw" sleep 60 &
holder=$!
sleep 0.3

# ms since the epoch
now_ms() { date +%s%3N; }

# waits for CMD (args) to say it waits, sends SIG, checks exit 130 within 1 s
check_wait() {
    sig=$1
    name=$2
    shift 2
    rm -f "$tmp/err" "$tmp/rc"
    ( "$@" >/dev/null 2>"$tmp/err"; echo $? >"$tmp/rc" ) &
    sub=$!
    i=0
    while ! grep -q "waiting" "$tmp/err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    grep -q "waiting" "$tmp/err"
    ok $? "$name: says it waits for the lock: $(cat "$tmp/err")"
    pid=$(pgrep -P "$sub" -n)
    t0=$(now_ms)
    kill -"$sig" "$pid"
    i=0
    while [ ! -s "$tmp/rc" ] && [ $i -lt 50 ]; do sleep 0.05; i=$((i + 1)); done
    t1=$(now_ms)
    [ "$(cat "$tmp/rc" 2>/dev/null)" = 130 ]
    ok $? "$name: SIG$sig while waiting exits 130 (got $(cat "$tmp/rc" 2>/dev/null))"
    [ $((t1 - t0)) -le 1000 ]
    ok $? "$name: within a second of SIG$sig ($((t1 - t0)) ms)"
    echo "test_lock_wait: $name: SIG$sig -> exit $(cat "$tmp/rc" 2>/dev/null) after $((t1 - t0)) ms"
    wait "$sub" 2>/dev/null
}

check_wait INT "run" "$REPRO" run "$tmp/lw.lua" --out-root "$tmp/o"
check_wait TERM "run" "$REPRO" run "$tmp/lw.lua" --out-root "$tmp/o"
check_wait INT "analyze" "$REPRO" analyze "$tmp/lw.lua" --out-root "$tmp/o"
check_wait INT "run-one" "$REPRO" run-one "$tmp/lw.lua" --only variant=a,seed=1 --out-root "$tmp/o"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=""
sleep 0.5
n=$(find "$tmp/o/lw" -name config.json -o -name metrics.json -o -name '*.rptf' | wc -l)
[ "$n" -eq 0 ]
ok $? "nothing was trained or written (found $n record files)"
echo "test_lock_wait: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
