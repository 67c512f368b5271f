#!/bin/sh
# Puts the Tiny Shakespeare corpus at $DATA_DIR/tinyshakespeare.txt, verified.
# Source: $DATA_MIRROR/tinyshakespeare.txt (default ../shared/data, relative to the
# repository root, where make runs this script) if that file exists, else $DATA_URL.
# Without either, the message gives the fix as a command: `make test
# DATA_MIRROR=/abs/path/to/dir` (the default shown resolved to an absolute path).  The copy goes to a temporary name, its SHA-256 is checked, and only
# then is it renamed into place; a file with the wrong checksum is refused (both
# checksums shown) and never installed.  An installed copy that no longer matches is
# replaced from the source.  SHA is the pin of scripts/corpora.lua (test_corpora checks
# that the two agree); make data builds the other corpora with `bin/repro corpora --build`.
set -eu

SHA=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed
NAME=tinyshakespeare.txt
DATA_DIR=${DATA_DIR:-data}
DATA_MIRROR=${DATA_MIRROR:-../shared/data}
DATA_URL=${DATA_URL:-https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt}
dest="$DATA_DIR/$NAME"

sha_of() { sha256sum "$1" | cut -c1-64; }

if [ -f "$dest" ]; then
    got=$(sha_of "$dest")
    [ "$got" = "$SHA" ] && exit 0
    echo "data: $dest has SHA-256 $got, expected $SHA: refusing it and fetching again" >&2
fi

mkdir -p "$DATA_DIR"
tmp=$(mktemp "$DATA_DIR/.$NAME.XXXXXX")
trap 'rm -f "$tmp"' EXIT INT TERM
if [ -f "$DATA_MIRROR/$NAME" ]; then
    src="$DATA_MIRROR/$NAME"
    cp "$src" "$tmp"
else
    src="$DATA_URL"
    echo "data: no mirror at $DATA_MIRROR/$NAME; downloading $src" >&2
    if ! curl -fsSL --retry 2 -o "$tmp" "$src"; then
        # the default mirror resolved to an absolute path (it need not exist)
        mirror_dir=$(realpath -m "$DATA_MIRROR")
        {
            echo "data: download of $src failed (no network?), and there is no copy at"
            echo "      $mirror_dir/$NAME"
            echo "      (DATA_MIRROR=$DATA_MIRROR; the default ../shared/data is relative to the"
            echo "      repository root, $(pwd -P))."
            echo "data: fix: put $NAME (SHA-256 $SHA) in a folder and give it:"
            echo "      make test DATA_MIRROR=/abs/path/to/dir"
            echo "      (or: cp /path/to/$NAME $mirror_dir/ && make test)"
        } >&2
        exit 1
    fi
fi
got=$(sha_of "$tmp")
if [ "$got" != "$SHA" ]; then
    size=$(wc -c < "$tmp")
    echo "data: refused $src ($size bytes): SHA-256 $got, expected $SHA" >&2
    exit 1
fi
chmod 0644 "$tmp"
mv -f "$tmp" "$dest"
trap - EXIT INT TERM
echo "data: $dest verified (SHA-256 $SHA)" >&2
