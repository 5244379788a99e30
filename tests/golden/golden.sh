#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden files.
#  good/NAME.pnmf: the MD5 of its decoded frames (pnmf-dec -f md5: every
#    frame's gray bytes in order, no headers) must be good/NAME.md5, checked
#    with --verify, which must also reject that hash with one digit changed.
#    The same hash must come out of md5sum over the pixel bytes of the
#    frames decoded to PGM (headers cut off), so -f md5 is checked against an
#    independent digest; decoding from --start N (through the index) must
#    give the MD5 of those frames from N on.
#  bad/NAME.pnmf: pnmf-dec must exit with the code bad/MANIFEST gives, print one
#    line on stderr containing the file's name and the expected reason, and
#    never crash (no signal, no sanitizer report); frames it wrote before
#    failing must be complete.
# usage: golden.sh PNMF_DEC GOLDEN_DIR [--update]  (--update rewrites good/*.md5)
set -u
DEC=$1
G=$2
UPDATE=${3:-}
. "$(dirname "$0")/../lib.sh"

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

# The MD5 of the pixel bytes of the PGM frames $1/frame_*.pgm from the
# $2-th on (1-based), headers cut off: what pnmf-dec -f md5 must print.
pgm_pixels_md5() {
    for f in $(ls "$1"/frame_*.pgm | tail -n +"$2"); do
        set -- $(head -c 20 "$f" | tr '\n' ' ')
        tail -c $(($2 * $3)) "$f"
    done | md5sum | cut -d' ' -f1
}

# The hash with its first digit changed: --verify must reject it.
other_hash() { echo "$1" | sed 's/^0/1/; t; s/^./0/'; }

for f in "$G"/good/*.pnmf; do
    name=$(basename "$f" .pnmf)
    if [ "$UPDATE" = --update ]; then
        "$DEC" -Q -y -f md5 "$f" "$G/good/$name.md5" || die "$name: pnmf-dec -f md5 failed"
    fi
    pinned=$(cat "$G/good/$name.md5")
    check 'echo "$pinned" | grep -Eq "^[0-9a-f]{32}$"' "$name: good/$name.md5 does not hold an MD5: $pinned"
    "$DEC" -Q -f md5 --verify "$pinned" "$f" 2> "$T/err"
    check '[ $? -eq 0 ]' "$name: frames differ from good/$name.md5: $(cat "$T/err")"
    wrong=$(other_hash "$pinned")
    "$DEC" -Q -f md5 --verify "$wrong" "$f" 2> "$T/err"
    check '[ $? -eq 1 ] && grep -q "$wrong" "$T/err"' "$name: --verify $wrong passed: $(cat "$T/err")"

    rm -rf "$T/out"
    if ! "$DEC" -Q -f pgm "$f" "$T/out" 2> "$T/err"; then
        check false "$name: pnmf-dec -f pgm failed: $(cat "$T/err")"
        continue
    fi
    got=$(pgm_pixels_md5 "$T/out" 1)
    check '[ "$got" = "$pinned" ]' "$name: md5sum of the PGM frames' pixels is $got, good/$name.md5 $pinned"
    # from the middle, through the index: the same frames
    n=$(ls "$T/out" | wc -l)
    start=$((n / 2))
    mid=$("$DEC" -Q -f md5 --start $start "$f" 2> "$T/err")
    want=$(pgm_pixels_md5 "$T/out" $((start + 1)))
    check '[ "$mid" = "$want" ]' "$name: --start $start gives $mid, not $want: $(cat "$T/err")"
done

# MANIFEST: FILE EXIT_CODE REASON... (REASON: a substring of the message)
while read -r file code reason; do
    case "$file" in ''|'#'*) continue ;; esac
    [ -e "$G/bad/$file" ] || { check false "$file: missing"; continue; }
    rm -rf "$T/out"
    "$DEC" -Q -f pgm "$G/bad/$file" "$T/out" > /dev/null 2> "$T/err"
    got=$?
    msg=$(cat "$T/err")
    if [ "$got" -ne "$code" ]; then check false "$file: exit $got, expected $code: $msg"
    elif [ "$(wc -l < "$T/err")" -ne 1 ]; then check false "$file: not one line on stderr: $msg"
    elif ! grep -qF -- "$file" "$T/err"; then check false "$file: the message does not name the file: $msg"
    elif ! grep -qF -- "$reason" "$T/err"; then check false "$file: expected '$reason' in: $msg"
    elif ! pgm_complete "$T/out"; then check false "$file: a half-written frame"
    else check true ""; fi
done < "$G/bad/MANIFEST"
# every bad file is in the manifest
for f in "$G"/bad/*.pnmf; do
    check 'grep -q "^$(basename "$f") " "$G/bad/MANIFEST"' "$(basename "$f") is not in bad/MANIFEST"
done

finish golden
