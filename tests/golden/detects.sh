#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# golden.sh must fail when a pinned hash is wrong: on a copy of the golden
# files with one digit of good/tiny_2windows.md5 changed, it exits nonzero
# and names that file.
# usage: detects.sh PNMF_DEC GOLDEN_DIR
set -u
DEC=$1
G=$2
. "$(dirname "$0")/../lib.sh"

cp -R "$G/good" "$G/bad" "$T/" || die "cannot copy $G"
h=$(cat "$T/good/tiny_2windows.md5")
echo "$h" | sed 's/^0/1/; t; s/^./0/' > "$T/good/tiny_2windows.md5"
check '[ "$(cat "$T/good/tiny_2windows.md5")" != "$h" ]' "the hash was not changed"
sh "$(dirname "$0")/golden.sh" "$DEC" "$T" > "$T/out" 2> "$T/err"
check '[ $? -ne 0 ]' "golden.sh passed with a wrong hash in good/tiny_2windows.md5"
check 'grep -q "tiny_2windows: frames differ" "$T/err"' "golden.sh did not name tiny_2windows: $(cat "$T/err")"
check '[ "$(grep -c "^FAIL" "$T/err")" -eq 2 ]' "one wrong hash should fail two checks (--verify, the PGM pixels): $(cat "$T/err")"
finish golden_detects
