#!/bin/sh
# Regenerates the committed PyTorch parity fixtures in tests/fixtures/:
#   build/tests/test_parity --export tests/fixtures   writes parity_<case>.in.rptf (all of them)
#   gpt_ref.py parity IN OUT                          writes parity_<case>.out.rptf (float64)
# for each case of tests/c/test_parity.c: the embedding norms none layernorm rmsnorm scale
# layernorm_matched (tied), untied (none with a separate lm_head), and torch (init = torch,
# layernorm, untied; checked against the model written from PyTorch's default modules).
# It also writes tests/fixtures/torch_init.json: PyTorch's own default initialization of
# that model, per tensor (gpt_ref.py torchinit; the engine's init = torch test).  Run from the repository root after `make`
# (it changes to the root itself; BUILD=dir picks another build tree).  Installs nothing: PyTorch comes from Debian's
# python3-torch via /usr/bin/python3 (scripts/deps.sh --torch).
set -eu

cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
BUILD=${BUILD:-build}
EXPORT=$BUILD/tests/test_parity
OUT=tests/fixtures

if ! [ -x "$PY" ] || ! "$PY" -c 'import torch, numpy' >/dev/null 2>&1; then
    echo "regen_fixtures: no PyTorch for $PY: run scripts/deps.sh --torch" >&2
    exit 1
fi
if ! [ -x "$EXPORT" ]; then
    echo "regen_fixtures: $EXPORT not built: run make (and make $EXPORT) first" >&2
    exit 1
fi

mkdir -p "$OUT"
"$EXPORT" --export "$OUT"
CASES="none layernorm rmsnorm scale layernorm_matched untied torch"
for case in $CASES; do
    in="$OUT/parity_$case.in.rptf"
    if ! [ -f "$in" ]; then
        echo "regen_fixtures: $EXPORT --export did not write $in" >&2
        exit 1
    fi
    "$PY" tests/reference/gpt_ref.py parity "$in" "$OUT/parity_$case.out.rptf"
done
"$PY" tests/reference/gpt_ref.py torchinit "$OUT/torch_init.json"
echo "regen_fixtures: wrote $OUT/parity_{$(echo $CASES | tr ' ' ,)}.{in,out}.rptf (torch $("$PY" -c 'import torch; print(torch.__version__)'))" >&2
