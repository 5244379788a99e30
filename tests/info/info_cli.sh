#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-info on the command line: --help and bad options, the tables and the
# CSV (sections add up to the payload, windows and frames as encoded), and
# bad input: a one-line error naming the file, the exit code, and no output
# file or temporary file left behind.
# usage: info_cli.sh PNMF_INFO FILE.pnmf (20 frames in windows of 10)
set -u
I=$1
F=$2
. "$(dirname "$0")/../lib.sh"
one_line() { [ "$(wc -l < "$1")" -eq 1 ]; }
no_leftovers() { [ -z "$(ls -A "$T/out")" ]; }
mkdir "$T/out"

# --help lists every option
"$I" --help > "$T/help" 2>&1
check '[ $? -eq 0 ]' "--help failed"
for o in --csv --level --components --window --components-format --scale --sprites; do
    check 'grep -q -- "$o" "$T/help"' "--help does not list $o"
done

# bad command lines: exit 2, one line naming the option
"$I" --level 23 "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --level "$T/err" && one_line "$T/err"' "--level 23: $(cat "$T/err")"
"$I" --components-format gif --components "$T/out/x.gif" "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --components-format "$T/err" && one_line "$T/err"' "--components-format gif: $(cat "$T/err")"
"$I" --window 1 "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --window "$T/err" && one_line "$T/err"' "--window without --components: $(cat "$T/err")"
"$I" --bogus "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --bogus "$T/err" && one_line "$T/err"' "--bogus: $(cat "$T/err")"
"$I" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && one_line "$T/err"' "no argument: $(cat "$T/err")"

# the tables
"$I" "$F" > "$T/table" 2> "$T/err"
check '[ $? -eq 0 ] && [ ! -s "$T/err" ]' "pnmf-info FILE: $(cat "$T/err")"
check 'grep -q "^frames  *20$" "$T/table"' "header: frames"
check 'grep -q "^windows  *2, of up to 10 frames$" "$T/table"' "header: windows"
check 'grep -q "^quality  *-q 16" "$T/table" && grep -q "^shift model  *torus" "$T/table"' "header: quality, shift model"
check '[ "$(grep -c "sum of sections" "$T/table")" -eq 3 ]' "section sums for 2 windows and the file"

# the CSV: each window's sections add up to its payload, the total row to the
# sum of the windows, the windows cover frames 0..19 in order
"$I" --csv "$F" > "$T/csv" 2> "$T/err"
check '[ $? -eq 0 ] && [ "$(wc -l < "$T/csv")" -eq 4 ]' "--csv: a heading, 2 windows, a total: $(cat "$T/err")"
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    raw = 0
    n = split("head sizes levels counts coefs rowshifts colshifts reshead resmodes resvectors reslevels", s, " ")
    for (i = 1; i <= n; i++) raw += $(col[s[i] "_raw"])
    if (raw != $(col["payload_bytes"])) { print "row " $1 ": sections " raw " != payload " $(col["payload_bytes"]); bad = 1 }
    if ($(col["coefs_values"]) != $(col["entries"]) || $(col["rowshifts_values"]) != $(col["entries"])) { print "row " $1 ": value counts"; bad = 1 }
    if ($1 != "total") {
        if ($(col["first_frame"]) != frames) { print "row " $1 ": first frame " $(col["first_frame"]); bad = 1 }
        frames += $(col["frames"]); payload += $(col["payload_bytes"]); entries += $(col["entries"]); windows++
    } else if ($(col["frames"]) != frames || $(col["payload_bytes"]) != payload || $(col["entries"]) != entries) {
        print "total row does not add up"; bad = 1
    }
}
END { if (windows != 2 || frames != 20) { print windows " windows, " frames " frames"; bad = 1 }; exit bad }
' "$T/csv" > "$T/awk"
check '[ $? -eq 0 ]' "csv: $(cat "$T/awk")"

# a window past the end: exit 2, nothing written
"$I" --components "$T/out/c.png" --window 2 "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q "2 windows" "$T/err" && one_line "$T/err"' "--window 2: $(cat "$T/err")"
check 'no_leftovers' "--window 2 left $(ls -A "$T/out")"
# an output directory that does not exist: exit 5
"$I" --components "$T/none/c.png" "$F" > /dev/null 2> "$T/err"
check '[ $? -eq 5 ] && grep -q "none/c.png" "$T/err" && one_line "$T/err"' "missing output dir: $(cat "$T/err")"
# a mosaic is written whole under its name, with nothing beside it
"$I" --components "$T/out/c.png" "$F" > "$T/legend" 2> "$T/err"
check '[ $? -eq 0 ] && [ -s "$T/out/c.png" ] && [ "$(ls -A "$T/out")" = c.png ]' "--components: $(cat "$T/err")"
check 'grep -q "^components of window 0" "$T/legend" && grep -q "gray = 255 v\|gray = 128 + 127 v" "$T/legend"' "legend"
rm -f "$T/out/c.png"

# bad input: one line naming the file, exit 3 or 4, no output left, an
# existing target untouched
size=$(wc -c < "$F")
printf 'hello, world\n' > "$T/text.pnmf"
head -c $((size / 2)) "$F" > "$T/trunc.pnmf"
head -c 200 "$F" > "$T/flip.pnmf"
printf '\377' >> "$T/flip.pnmf"
tail -c +202 "$F" >> "$T/flip.pnmf"
: > "$T/empty.pnmf"
echo precious > "$T/out/keep.png"
for bad in missing text trunc flip empty; do
    "$I" --components "$T/out/keep.png" "$T/$bad.pnmf" > /dev/null 2> "$T/err"
    rc=$?
    want=4
    [ $bad = missing ] && want=3
    check '[ $rc -eq $want ] && grep -q "$bad.pnmf" "$T/err" && one_line "$T/err"' "$bad input: exit $rc: $(cat "$T/err")"
    check '[ "$(cat "$T/out/keep.png")" = precious ] && [ "$(ls -A "$T/out")" = keep.png ]' "$bad input: output touched or left behind"
    "$I" --csv "$T/$bad.pnmf" > "$T/stdout" 2> /dev/null
    check '[ $? -eq $want ] && [ ! -s "$T/stdout" ]' "$bad input: --csv printed a partial table"
done

finish info_cli
