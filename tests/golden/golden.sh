#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden files.
#  good/NAME.pnmf: decoded to PGM, every frame's MD5 must equal good/NAME.md5,
#    and decoding from --start N (through the index) must give frames N+1...
#  bad/NAME.pnmf: pnmf-dec must exit with the code bad/MANIFEST gives, print one
#    line on stderr containing the file's name and the expected reason, and
#    never crash (no signal, no sanitizer report); frames it wrote before
#    failing must be complete.
# usage: golden.sh PNMF_DEC GOLDEN_DIR [--update]  (--update rewrites good/*.md5)
set -u
DEC=$1
G=$2
UPDATE=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passes=0
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { passes=$((passes + 1)); }

# PGM frames written are complete (header, then exactly width*height bytes)
# and no temporary file is left in the directory.
pgm_complete() {
    d=$1
    [ -d "$d" ] || return 0
    for f in "$d"/frame_*.pgm; do
        [ -e "$f" ] || continue
        set -- $(head -c 20 "$f" | tr '\n' ' ')
        [ "$1" = P5 ] || return 1
        hl=$(printf 'P5\n%s %s\n255\n' "$2" "$3" | wc -c)
        [ "$(wc -c < "$f")" -eq $((hl + $2 * $3)) ] || return 1
    done
    ! ls -A "$d" | grep -q tmp
}

for f in "$G"/good/*.pnmf; do
    name=$(basename "$f" .pnmf)
    rm -rf "$T/out"
    if ! "$DEC" -Q -f pgm "$f" "$T/out" 2> "$T/err"; then
        fail "$name: pnmf-dec failed: $(cat "$T/err")"
        continue
    fi
    (cd "$T/out" && md5sum frame_*.pgm) > "$T/md5"
    if [ "$UPDATE" = --update ]; then
        cp "$T/md5" "$G/good/$name.md5"
    fi
    if cmp -s "$T/md5" "$G/good/$name.md5"; then pass; else
        fail "$name: frames differ from good/$name.md5:"
        diff "$G/good/$name.md5" "$T/md5" >&2
    fi
    # from the middle, through the index: the same frames
    n=$(wc -l < "$T/md5")
    start=$((n / 2 + 1))
    rm -rf "$T/mid"
    "$DEC" -Q -f pgm --start $start "$f" "$T/mid" 2> "$T/err"
    (cd "$T/mid" && md5sum frame_*.pgm | awk '{ print $1 }') > "$T/mid.md5"
    if tail -n +$((start + 1)) "$T/md5" | awk '{ print $1 }' | cmp -s - "$T/mid.md5"; then pass; else
        fail "$name: --start $start differs: $(cat "$T/err")"
    fi
done

# MANIFEST: FILE EXIT_CODE REASON... (REASON: a substring of the message)
while read -r file code reason; do
    case "$file" in ''|'#'*) continue ;; esac
    [ -e "$G/bad/$file" ] || { fail "$file: missing"; continue; }
    rm -rf "$T/out"
    "$DEC" -Q -f pgm "$G/bad/$file" "$T/out" > /dev/null 2> "$T/err"
    got=$?
    msg=$(cat "$T/err")
    if [ "$got" -ne "$code" ]; then fail "$file: exit $got, expected $code: $msg"
    elif [ "$(wc -l < "$T/err")" -ne 1 ]; then fail "$file: not one line on stderr: $msg"
    elif ! grep -qF -- "$file" "$T/err"; then fail "$file: the message does not name the file: $msg"
    elif ! grep -qF -- "$reason" "$T/err"; then fail "$file: expected '$reason' in: $msg"
    elif ! pgm_complete "$T/out"; then fail "$file: a half-written frame"
    else pass; fi
done < "$G/bad/MANIFEST"
# every bad file is in the manifest
for f in "$G"/bad/*.pnmf; do
    grep -q "^$(basename "$f") " "$G/bad/MANIFEST" || fail "$(basename "$f") is not in bad/MANIFEST"
done

echo "golden: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
