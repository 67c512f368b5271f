#!/bin/sh
# The project's one dependency step: checks for every Debian package the suite needs
# and installs what is missing with apt-get when run as root; otherwise prints the
# exact command and fails.  Nothing else in the project installs packages.  The corpora
# of scripts/corpora.lua come from Debian packages too (dict-devil, bible-kjv): make data
# extracts them.
#   scripts/deps.sh            what `make`, `make test` and `make reproduce` need
#   scripts/deps.sh --test     also what `make test` needs beyond that: the aarch64 cross
#                              compiler and qemu-user (tests/sh/test_paths.sh), GNU parallel
#                              (tests/sh/test_parallel.sh), Chromium (Debian's `chromium`:
#                              tests/lua/test_user_study.lua reads the HTML report in it,
#                              headless; as root with --no-sandbox), NumPy (python3-numpy:
#                              tests/reference/safetensors_forward.py loads an exported model;
#                              its python3 runs scripts/similar_sentences.py), luac5.4
#                              (lua5.4: tests/lua/test_modules.lua lists the globals of
#                              every library module)
#   scripts/deps.sh --slurm    also Slurm and munge, for `make test-slurm`
#                              (tests/sh/test_slurm.sh starts its own single-node cluster)
#   scripts/deps.sh --torch    also python3-torch with OpenBLAS (PyTorch reference checks and
#                              make bench; without OpenBLAS, Debian's torch uses the slow
#                              reference BLAS and the comparison would flatter the engine)
#   scripts/deps.sh --reference  also python3-scipy and python3-statsmodels, to regenerate
#                              tests/vectors/stats_ref.json (tests/reference/stats_ref.py);
#                              make test reads the committed file and needs neither
set -eu

PACKAGES="gcc make pkg-config liblua5.4-dev libgsl-dev lua-cjson gnuplot-nox
texlive-latex-base texlive-latex-recommended texlive-science texlive-fonts-recommended
latexmk poppler-utils curl ca-certificates wamerican
dict-devil bible-kjv"
if [ "${1:-}" = "--test" ]; then
    PACKAGES="$PACKAGES gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user parallel chromium python3-numpy lua5.4"
fi
if [ "${1:-}" = "--slurm" ]; then
    PACKAGES="$PACKAGES slurm-wlm munge"
fi
if [ "${1:-}" = "--torch" ]; then
    PACKAGES="$PACKAGES python3-torch python3-numpy libopenblas0-pthread"
fi
if [ "${1:-}" = "--reference" ]; then
    PACKAGES="$PACKAGES python3-scipy python3-statsmodels"
fi

missing=""
for p in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >&2
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root:  sudo apt-get update && sudo $cmd" >&2
    exit 1
fi
