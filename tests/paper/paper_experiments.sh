#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-paper end to end on fixed seeds: every figure recovered, above a
# measured NCC floor, the figure written atomically and reproducibly, and
# the command line's errors.
#
# Thresholds. A component that is exactly a figure still scores below 1:
# it also carries the average of the noise (uniform, mean 0.15) around the
# figure. Measured over seeds 1..20 (docs/paper.md), the smallest min_ncc
# of a successful run was 0.908 for the paper's algorithm (exp1, vector)
# and 0.972 for the improved one (0.974 on exp2). So: the paper's
# algorithm must reach the issue's recovery threshold 0.90 (seed 1 gives
# 0.914 vector / 0.964 torus on exp1, 0.979 on exp2); the improved one
# 0.95, a margin of about 0.02 under its worst seed, and 0.03 over the
# paper algorithm's worst, so a regression to paper-level components fails.
# Placements: with the improved algorithm every copy is found on seed 1
# (78/78, and 1423/1432 over 20 seeds); the paper's finds 66/78.
# usage: paper_experiments.sh PNMF_PAPER
set -u
P=$1
. "$(dirname "$0")/../lib.sh"

# run EXP ALGO SHIFT: leaves stdout in $T/out, the exit code in $rc
run() { "$P" "$1" --seed 1 --algo "$2" --shift "$3" --out "$T/$1-$2-$3" > "$T/out" 2> "$T/err"; rc=$?; }

# the last line: recovered X/Y min_ncc=0.NNN restarts=R -> X Y NCC R
last() { tail -n 1 "$T/out" | sed -n 's|^recovered \([0-9]*\)/\([0-9]*\) min_ncc=\(0\.[0-9][0-9][0-9]\) restarts=\([0-9]*\)$|\1 \2 \3 \4|p'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

for cfg in "exp1 paper vector 2 0.90 3" "exp1 paper torus 2 0.90 3" "exp1 improved vector 2 0.95 1" \
           "exp1 improved torus 2 0.95 1" "exp2 paper vector 3 0.90 2" "exp2 improved torus 3 0.95 1"; do
    set -- $cfg
    e=$1 a=$2 s=$3 y=$4 floor=$5 rmax=$6
    run "$e" "$a" "$s"
    check '[ $rc -eq 0 ] && [ ! -s "$T/err" ]' "$e $a $s: exit $rc, $(cat "$T/err")"
    l=$(last)
    check '[ -n "$l" ]' "$e $a $s: last line '$(tail -n 1 "$T/out")'"
    [ -n "$l" ] || continue
    set -- $l
    gx=$1 gy=$2 ncc=$3 rs=$4
    check '[ "$gx" = "$y" ] && [ "$gy" = "$y" ]' "$e $a $s: recovered $gx/$gy, want $y/$y"
    check 'ge "$ncc" "$floor"' "$e $a $s: min_ncc $ncc < $floor"
    check '[ "$rs" -ge 1 ] && [ "$rs" -le "$rmax" ]' "$e $a $s: restarts $rs > $rmax"
    png="$T/$e-$a-$s/$e.png"
    check '[ "$(head -c 8 "$png" | od -An -c | tr -d " ")" = "211PNG\r\n032\n" ]' "$e $a $s: $png is not a PNG"
    check '[ "$(ls -A "$T/$e-$a-$s")" = "$e.png" ]' "$e $a $s: other files in the output: $(ls -A "$T/$e-$a-$s")"
    if [ "$e" = exp2 ]; then
        pl=$(sed -n 's|^placements found \([0-9]*\)/\([0-9]*\)$|\1 \2|p' "$T/out")
        check '[ "$(tail -n 2 "$T/out" | head -n 1 | cut -c1-17)" = "placements found " ]' "$e $a $s: no placements line before the last"
        set -- $pl 0 0
        pf=$1 pq=$2
        if [ "$a" = improved ]; then
            check '[ "$pf" -eq "$pq" ] && [ "$pq" -gt 0 ]' "$e $a $s: placements $pf/$pq, want all"
        else
            check '[ "$pq" -gt 0 ] && [ $((pf * 4)) -ge $((pq * 3)) ]' "$e $a $s: placements $pf/$pq, want >= 75%"
        fi
    fi
done

# same seed, same output: stdout and the figure's bytes
"$P" exp1 --seed 7 --out "$T/a" > "$T/a.out" && "$P" exp1 --seed 7 --out "$T/b" > "$T/b.out"
grep -v '^wrote ' "$T/a.out" > "$T/a2.out"; grep -v '^wrote ' "$T/b.out" > "$T/b2.out"
check 'cmp -s "$T/a2.out" "$T/b2.out" && [ -s "$T/a2.out" ]' "exp1 --seed 7 twice: different stdout"
check 'cmp -s "$T/a/exp1.png" "$T/b/exp1.png"' "exp1 --seed 7 twice: different figures"
"$P" exp1 --seed 8 --no-figure > "$T/c.out"
check '! cmp -s "$T/a.out" "$T/c.out"' "seeds 7 and 8 give the same output"

# the command line
"$P" --help > "$T/help" 2>&1
check '[ $? -eq 0 ]' "--help failed"
for o in exp1 exp2 --seed --shift --algo --max-restarts --iterations --out --no-figure --help; do
    check 'grep -q -- "$o" "$T/help"' "--help does not list $o"
done
"$P" exp3 > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q exp3 "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ]' "exp3: $(cat "$T/err")"
"$P" exp1 --shift sideways > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --shift "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ]' "--shift sideways: $(cat "$T/err")"
"$P" exp1 --algo fast > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --algo "$T/err"' "--algo fast: $(cat "$T/err")"
"$P" exp1 --seed -3 > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --seed "$T/err"' "--seed -3: $(cat "$T/err")"
"$P" > /dev/null 2> "$T/err"
check '[ $? -eq 2 ] && [ "$(wc -l < "$T/err")" -eq 1 ]' "no experiment: $(cat "$T/err")"
: > "$T/file"
"$P" exp1 --max-restarts 1 --out "$T/file" > /dev/null 2> "$T/err"
check '[ $? -eq 5 ] && grep -q "$T/file" "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ]' "--out onto a file: $(cat "$T/err")"

finish paper_experiments
