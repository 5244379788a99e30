#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The 20-seed table of docs/paper.md: every experiment, algorithm and shift
# model over seeds 1..N, one run at a time (results do not depend on the
# machine's load; the times do).
# usage: table.sh PNMF_PAPER [SEEDS]
set -eu
P=$1
N=${2:-20}
now() { date +%s.%N; }
echo "| experiment | algorithm | shift | success | mean restarts | max restarts | mean min_ncc | placements | mean time (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for e in exp1 exp2; do
  for a in paper improved; do
    for s in vector torus; do
      ok=0 rs=0 rmax=0 ncc=0 pf=0 pq=0 t=0
      i=1
      while [ "$i" -le "$N" ]; do
        t0=$(now)
        out=$("$P" "$e" --seed "$i" --algo "$a" --shift "$s" --no-figure)
        t1=$(now)
        last=$(printf '%s\n' "$out" | tail -n 1)
        # recovered X/Y min_ncc=0.NNN restarts=R
        set -- $(printf '%s\n' "$last" | sed 's|recovered \([0-9]*\)/\([0-9]*\) min_ncc=\([0-9.]*\) restarts=\([0-9]*\)|\1 \2 \3 \4|')
        [ "$1" = "$2" ] && ok=$((ok + 1))
        rs=$((rs + $4))
        [ "$4" -gt "$rmax" ] && rmax=$4
        ncc=$(echo "$ncc + $3" | bc -l)
        t=$(echo "$t + $t1 - $t0" | bc -l)
        if [ "$e" = exp2 ]; then
          pl=$(printf '%s\n' "$out" | sed -n 's|^placements found \([0-9]*\)/\([0-9]*\)$|\1 \2|p')
          pf=$((pf + ${pl% *}))
          pq=$((pq + ${pl#* }))
        fi
        i=$((i + 1))
      done
      if [ "$e" = exp2 ]; then place="$pf/$pq"; else place="-"; fi
      printf '| %s | %s | %s | %d/%d | %.2f | %d | %.3f | %s | %.2f |\n' "$e" "$a" "$s" "$ok" "$N" \
        "$(echo "$rs / $N" | bc -l)" "$rmax" "$(echo "$ncc / $N" | bc -l)" "$place" "$(echo "$t / $N" | bc -l)"
    done
  done
done
