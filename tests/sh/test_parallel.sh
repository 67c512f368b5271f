#!/bin/sh
# GNU parallel over `bin/repro plan`: a tiny study's planned commands run with -j 2 give
# records byte-identical to `bin/repro run --jobs 2`, `bin/repro analyze` then writes the
# same summary.json, and running the same plan again trains nothing.  GNU parallel is
# installed by the dependency step (scripts/deps.sh).
set -u
top=$(pwd)
REPRO=${REPRO:-bin/repro}
# its corpora are temporary files outside data/ (README: REPRO_DATA_ANYWHERE)
export REPRO_DATA_ANYWHERE=1
case $REPRO in /*) ;; *) REPRO=$top/$REPRO ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
done_line() { echo "test_parallel: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

if ! command -v parallel >/dev/null 2>&1; then
    ok 1 "GNU parallel is not installed (scripts/deps.sh installs it)"
    done_line
fi

head -c 100000 data/tinyshakespeare.txt > "$tmp/corpus.txt"
cat > "$tmp/partiny.lua" <<EOF
return {
  name = "partiny",
  description = "a tiny study for GNU parallel",
  base = { n_layer = 1, d_model = 32, n_head = 2, context = 32, batch = 4, iters = 20,
    warmup = 2, diag_every = 5, diag_windows = 4, data = "$tmp/corpus.txt" },
  variants = { { name = "none", embed_norm = "none" }, { name = "layernorm", embed_norm = "layernorm" },
    { name = "rmsnorm", embed_norm = "rmsnorm" } },
  seeds = { 1, 2 },
  checkpoint_every = 5,
  analysis = { baseline = "none", metrics = { "val_loss", "val_acc" }, primary = "val_loss",
    better = "lower", min_effect = 0.01, alpha = 0.05, correction = "holm", resamples = 1000,
    test = "t" },
}
EOF
study=$tmp/partiny.lua

"$REPRO" run "$study" --out-root "$tmp/J" --jobs 2 >"$tmp/run.out" 2>"$tmp/run.err"
ok $? "bin/repro run --jobs 2: $(cat "$tmp/run.err")"

"$REPRO" plan "$study" --out-root "$tmp/P" --threads 1 >"$tmp/plan.txt" 2>"$tmp/plan.err"
ok $? "bin/repro plan: $(cat "$tmp/plan.err")"
[ "$(wc -l < "$tmp/plan.txt")" -eq 6 ]
ok $? "one command per run: $(cat "$tmp/plan.txt")"

parallel --will-cite -j 2 --joblog "$tmp/joblog" < "$tmp/plan.txt" >"$tmp/par.out" 2>"$tmp/par.err"
ok $? "parallel -j 2 over the plan: $(cat "$tmp/par.err")"
[ "$(awk 'NR > 1 && $7 == 0' "$tmp/joblog" | wc -l)" -eq 6 ]
ok $? "six jobs exited 0: $(cat "$tmp/joblog")"
[ "$(grep -c 'done (trained 20 steps' "$tmp/par.out")" -eq 6 ]
ok $? "six runs trained: $(cat "$tmp/par.out")"

"$REPRO" analyze "$study" --out-root "$tmp/P" >"$tmp/an.out" 2>"$tmp/an.err"
ok $? "bin/repro analyze: $(cat "$tmp/an.err")"
for r in none/seed-1 layernorm/seed-1 rmsnorm/seed-1 none/seed-2 layernorm/seed-2 rmsnorm/seed-2; do
    for f in config.json log.csv metrics.json; do
        cmp -s "$tmp/J/partiny/$r/$f" "$tmp/P/partiny/$r/$f"
        ok $? "$r/$f: parallel -j 2 differs from --jobs 2"
    done
done
cmp -s "$tmp/J/partiny/summary.json" "$tmp/P/partiny/summary.json"
ok $? "summary.json: analyze after parallel differs from run --jobs 2"

# The same plan again: every run is done, nothing trains, no record changes.
cat "$tmp"/P/partiny/*/seed-*/manifest.json > "$tmp/manifests.before"
parallel --will-cite -j 2 --joblog "$tmp/joblog2" < "$tmp/plan.txt" >"$tmp/par2.out" 2>"$tmp/par2.err"
ok $? "second parallel run: $(cat "$tmp/par2.err")"
[ "$(grep -c 'done (reused)' "$tmp/par2.out")" -eq 6 ]
ok $? "second parallel run reuses all six: $(cat "$tmp/par2.out")"
cat "$tmp"/P/partiny/*/seed-*/manifest.json | cmp -s - "$tmp/manifests.before"
ok $? "second parallel run rewrote a record"
"$REPRO" plan "$study" --out-root "$tmp/P" >"$tmp/plan2.txt" 2>/dev/null
[ ! -s "$tmp/plan2.txt" ]
ok $? "nothing left to plan: $(cat "$tmp/plan2.txt")"
"$REPRO" status "$study" --out-root "$tmp/P" >"$tmp/status.out" 2>&1
grep -q "6 done, 0 running, 0 failed, 0 pending" "$tmp/status.out"
ok $? "status: six done: $(cat "$tmp/status.out")"
done_line
