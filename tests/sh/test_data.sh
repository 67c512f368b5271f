#!/bin/sh
# make data's fetch step: a good mirror installs a verified copy; a corrupted or
# truncated source is refused with both checksums and never installed.
set -u
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
SHA=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed

mkdir -p "$tmp/bad" "$tmp/short" "$tmp/out"
printf 'not shakespeare\n' > "$tmp/bad/tinyshakespeare.txt"
DATA_MIRROR="$tmp/bad" DATA_DIR="$tmp/out" "$top/scripts/fetch_data.sh" 2>"$tmp/err"
ok $((! $?)) "corrupted mirror must fail"
grep -q "$SHA" "$tmp/err" && grep -q "$(sha256sum "$tmp/bad/tinyshakespeare.txt" | cut -c1-64)" "$tmp/err"
ok $? "refusal shows both checksums: $(cat "$tmp/err")"
grep -q "$tmp/bad/tinyshakespeare.txt" "$tmp/err"
ok $? "refusal names the path"
[ -z "$(ls -A "$tmp/out")" ]
ok $? "nothing installed after a refusal: $(ls -A "$tmp/out")"

# a truncated copy of the real corpus, through the download path (file:// URL)
head -c 1000000 data/tinyshakespeare.txt > "$tmp/short/input.txt"
DATA_MIRROR="$tmp/none" DATA_DIR="$tmp/out" DATA_URL="file://$tmp/short/input.txt" \
    "$top/scripts/fetch_data.sh" 2>"$tmp/err"
ok $((! $?)) "truncated download must fail"
grep -q "1000000 bytes" "$tmp/err"
ok $? "refusal gives the size"
[ ! -e "$tmp/out/tinyshakespeare.txt" ]
ok $? "truncated copy not installed"

# a good source installs; a later corrupted install is replaced
cp data/tinyshakespeare.txt "$tmp/short/tinyshakespeare.txt"
DATA_MIRROR="$tmp/short" DATA_DIR="$tmp/out" "$top/scripts/fetch_data.sh" 2>"$tmp/err"
ok $? "good mirror installs"
[ "$(sha256sum "$tmp/out/tinyshakespeare.txt" | cut -c1-64)" = "$SHA" ]
ok $? "installed copy verified"
echo x >> "$tmp/out/tinyshakespeare.txt"
DATA_MIRROR="$tmp/short" DATA_DIR="$tmp/out" "$top/scripts/fetch_data.sh" 2>"$tmp/err"
ok $? "tampered install is refetched"
[ "$(sha256sum "$tmp/out/tinyshakespeare.txt" | cut -c1-64)" = "$SHA" ] && grep -q "refusing" "$tmp/err"
ok $? "tampered install refused and replaced"

# no mirror and no network (a URL that fails): the message gives the fix as a command,
# with the mirror resolved to an absolute path; run from a temporary copy of the scripts,
# so the default ../shared/data is resolved against that copy's root
mkdir -p "$tmp/empty" "$tmp/clone/scripts"
cp "$top/scripts/fetch_data.sh" "$tmp/clone/scripts/"
DATA_MIRROR="$tmp/empty" DATA_DIR="$tmp/out2" DATA_URL="file://$tmp/nowhere" \
    "$top/scripts/fetch_data.sh" 2>"$tmp/err"
ok $((! $?)) "no mirror and no download must fail"
grep -q "make test DATA_MIRROR=/abs/path/to/dir" "$tmp/err"
ok $? "the message gives the command: $(cat "$tmp/err")"
grep -q "no copy at" "$tmp/err" && grep -q "$tmp/empty/tinyshakespeare.txt" "$tmp/err"
ok $? "the message names the mirror's file"
(cd "$tmp/clone" && DATA_DIR="$tmp/out2" DATA_URL="file://$tmp/nowhere" \
    scripts/fetch_data.sh) 2>"$tmp/err"
ok $((! $?)) "default mirror missing must fail"
grep -q "$(realpath -m "$tmp/shared/data")/tinyshakespeare.txt" "$tmp/err" &&
    grep -q "relative to the" "$tmp/err" && grep -q "repository root, $(cd "$tmp/clone" && pwd -P)" "$tmp/err"
ok $? "the default is resolved to an absolute path and said relative to the root: $(cat "$tmp/err")"

echo "test_data: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
