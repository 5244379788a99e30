#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-bench end to end on 20 frames of samples/sprites.mkv (a few
# seconds): the throughput tables (pnmf's decoded PSNR-Y is its encoder's,
# x264's CRF lands within 1 dB of it), the memory table (the 10x run's peak
# no more than 10 % above the 1x run's), the CSV file; the memory by frame
# size on 8 frames (1920x1080 within 600 MB); the scaling tables on 8
# frames; --help and the errors.
# usage: bench_cli.sh PNMF_BENCH SAMPLES_DIR
set -u
B=$1
S=$2
# Under AddressSanitizer (.ci/run's second pass) freed memory waits in a
# quarantine (256 MiB by default) instead of being reused, so the peak grows
# with all that the run ever allocated and the 10x run's peak would be
# about twice the 1x run's. No effect on other builds.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
. "$(dirname "$0")/lib.sh"
# is $1 a number (integer or decimal)?
isnum() { echo "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?$'; }
# field $2 (1-based, between the |) of the table row starting with "| $1 |"
field() { grep "^| $1 |" "$T/out.md" | head -1 | awk -F'|' -v f="$2" '{ gsub(/^ +| +$/, "", $(f + 1)); print $(f + 1) }'; }

# ---- throughput and memory ----
"$B" -Q --frames 20 --no-scaling --csv "$T/b.csv" "$S/sprites.mkv" > "$T/out.md" 2> "$T/err"
rc=$?
cat "$T/out.md"
check '[ "$rc" -eq 0 ]' "exit status $rc: $(cat "$T/err")"
check '[ ! -s "$T/err" ]' "-Q still wrote to stderr: $(cat "$T/err")"
for h in "## Throughput" "## Peak memory" "| step | setting | threads | seconds | CPU s | fps |"; do
    check 'grep -qF "$h" "$T/out.md"' "no '$h'"
done
check '! grep -q "## Scaling" "$T/out.md"' "--no-scaling still ran the scaling"
for step in "pnmf encode" "pnmf decode" "x264 encode" "h264 decode"; do
    s=$(field "$step" 4)
    f=$(field "$step" 6)
    check 'isnum "$s" && isnum "$f" && awk "BEGIN{exit !($s > 0 && $f > 0)}"' "$step: seconds '$s', fps '$f'"
    # within 1 %, or the rounding of fps to two decimals (0.31 for 20 frames in 65.31 s)
    check 'awk "BEGIN{d=20/$s-$f; t=0.01*$f+0.005; exit !(d < t && d > -t)}"' "$step: $f fps is not 20 frames in $s s"
done
check '[ "$(field "pnmf encode" 3)" -eq 2 ] || [ "$(field "pnmf encode" 3)" -eq "$(nproc)" ]' "pnmf's threads: $(field "pnmf encode" 3)"
check '[ "$(field "pnmf decode" 3)" = 1 ] && [ "$(field "h264 decode" 3)" = 1 ]' "the decoders do not use 1 thread"
check '[ "$(field "x264 encode" 3)" = "$(field "pnmf encode" 3)" ]' "x264 and pnmf encode with different threads"

# pnmf's decoded frames score what its encoder measured
enc=$(field pnmf 5)
dec=$(field pnmf 6)
check 'isnum "$enc" && [ "$enc" = "$dec" ]' "pnmf: encoder PSNR-Y '$enc', decoded '$dec'"
# x264's CRF: within 1 dB of pnmf's PSNR-Y, or crf 0 when pnmf is beyond it
x=$(field x264 6)
crf=$(field x264 2)
if grep -q "crf 0 used" "$T/out.md"; then
    check '[ "$crf" = "crf 0" ]' "crf 0 said to be used, the row says '$crf'"
else
    check 'isnum "$x" && awk "BEGIN{d=$x-$dec; exit !(d <= 1 && d >= -1)}"' "x264 $crf: $x dB, pnmf $dec dB"
    n=$(sed -n 's/.*bisection over 0\.\.51 .* \([0-9]*\) encodes (.*/\1/p' "$T/out.md")
    check '[ -n "$n" ] && [ "$n" -le 7 ]' "x264's CRF search: '$n' encodes"
fi
# the encoder's stage profile: every stage measured, together no more than the encode
pct=$(grep -A8 "^Where pnmf's encode time went" "$T/out.md" | grep "^| [a-z]" | grep -v "^| stage" |
    awk -F'|' '{ s += $4 } END { print s }')
check 'isnum "$pct" && awk "BEGIN{exit !($pct > 90 && $pct < 100.5)}"' "profile: stages sum to '$pct' % of the encode"
check '[ "$(grep -A8 "^Where pnmf" "$T/out.md" | grep -c "^| [a-z]")" -eq 6 ]' "profile: not 5 stages and a header"
for r in "encode time, pnmf s / x264 s" "decode speed, h264 CPU s / pnmf CPU s"; do
    v=$(field "$r" 2)
    check 'isnum "$v" && awk "BEGIN{exit !($v > 0)}"' "ratio '$r': '$v'"
done
# the decode ratio is the decoders' CPU times' (the table's CPU s column), not their wall clock's
pc=$(field "pnmf decode" 5)
hc=$(field "h264 decode" 5)
v=$(field "decode speed, h264 CPU s / pnmf CPU s" 2)
check 'isnum "$pc" && isnum "$hc" && awk "BEGIN{exit !($pc > 0 && $hc > 0)}"' "decoders' CPU s: pnmf '$pc', h264 '$hc'"
check 'awk "BEGIN{d=$hc/$pc-$v; t=0.002*$v+0.006; exit !(d < t && d > -t)}"' "decode ratio $v is not $hc / $pc"

# memory: 20 and 200 frames, and the peak does not grow with the length
check '[ "$(field 1x 2)" = 20 ] && [ "$(field 10x 2)" = 200 ]' "memory runs of $(field 1x 2) and $(field 10x 2) frames"
check 'grep -q -- "-k 0 -w 10," "$T/out.md"' "the memory runs' settings are not printed"
check '[ "$(field 1x 3)" = 2 ] && [ "$(field 10x 3)" = 20 ]' "memory runs of $(field 1x 3) and $(field 10x 3) windows"
ratio=$(sed -n 's/^Peak RSS ratio, 10x \/ 1x: \([0-9.]*\) .*/\1/p' "$T/out.md")
check 'isnum "$ratio" && awk "BEGIN{exit !($ratio > 0.5 && $ratio < 1.10)}"' "peak RSS ratio 10x / 1x: '$ratio'"
p1=$(field 1x 7)
check 'isnum "$p1" && awk "BEGIN{exit !($p1 > 1)}"' "1x peak RSS: '$p1' MiB"

# the CSV: a header, then numeric values; the same figures as the tables
check '[ "$(head -1 "$T/b.csv")" = "section,item,key,value" ]' "CSV header: $(head -1 "$T/b.csv")"
bad=$(tail -n +2 "$T/b.csv" | cut -d, -f4 | while read -r v; do isnum "$v" || echo "$v"; done)
check '[ -z "$bad" ] && [ "$(wc -l < "$T/b.csv")" -ge 20 ]' "CSV values: $bad"
v=$(sed -n 's/^throughput,pnmf,psnr_y_decoded,//p' "$T/b.csv")
check 'isnum "$v" && awk "BEGIN{d=$v-$dec; exit !(d < 0.006 && d > -0.006)}"' "CSV: pnmf's decoded PSNR-Y '$v', the table's $dec"
check 'grep -q "^memory,ratio,peak_10x_over_1x," "$T/b.csv"' "CSV lacks the memory ratio"

# ---- memory by frame size, on 8 frames: the 1920x1080 encode within 600 MB at default
# settings. A fit on the frame's torus peaks at about 620 MB on these 8 frames, the fit on
# the coarser torus (docs/scaling.md) at about 200 MB ----
"$B" -Q --frames 8 --no-scaling --no-memory --memory-sizes --csv "$T/s.csv" "$S/sprites.mkv" > "$T/out.md" 2> "$T/err"
rc=$?
grep -A6 "^## Peak memory by frame size" "$T/out.md"
check '[ "$rc" -eq 0 ]' "--memory-sizes: exit status $rc: $(cat "$T/err")"
for sz in 320x240 1280x720 1920x1080; do
    check '[ "$(field $sz 2)" = 8 ] && isnum "$(field $sz 6)" && isnum "$(field $sz 7)"' "$sz: $(grep "^| $sz |" "$T/out.md")"
done
small=$(field 320x240 6)
big=$(field 1920x1080 6)
mb=$(field 1920x1080 7)
check 'awk "BEGIN{exit !($big > $small)}"' "1920x1080 peak $big MiB not above 320x240's $small MiB"
check 'awk "BEGIN{exit !($mb <= 600)}"' "1920x1080 peak $mb MB over 600 MB"
check 'grep -q "^memory_size,1920x1080,peak_mib," "$T/s.csv"' "CSV lacks the 1920x1080 peak"

# ---- scaling, on 8 frames: windows of 2, 4 and 8 ----
"$B" -Q --frames 8 --no-memory "$S/sprites.mkv" > "$T/out.md" 2> "$T/err"
rc=$?
check '[ "$rc" -eq 0 ]' "scaling run: exit status $rc: $(cat "$T/err")"
check '! grep -q "## Peak memory" "$T/out.md"' "--no-memory still measured the memory"
check '[ "$(grep -c "^| [nmk] | [0-9]*x[0-9]* (" "$T/out.md")" -eq 9 ]' "scaling: not 9 runs: $(grep "^| [nmk] |" "$T/out.md")"
check 'grep -q "^| m | 108x80 (8640) | 2 | 4 |" "$T/out.md" && grep -q "^| m | 108x80 (8640) | 8 | 4 |" "$T/out.md"' \
    "scaling: not m = 2..8 on the middle crop"
for v in n m k; do
    b=$(grep "^| $v | [0-9.]*, " "$T/out.md" | awk -F'|' '{ gsub(/ /, "", $4); print $4 }')
    check 'isnum "$b" && awk "BEGIN{exit !($b > -1 && $b < 4)}"' "scaling: exponent of $v: '$b'"
done

# ---- --help and errors ----
"$B" --help > "$T/help" 2>&1
rc=$?
check '[ "$rc" -eq 0 ]' "--help exit status $rc"
for o in --quality --components --window --frames --threads --scaling --no-scaling --memory --no-memory \
         --memory-k --memory-sizes --csv --quiet --help --version; do
    check 'grep -q -- "$o" "$T/help"' "--help does not list $o"
done

# one line on stderr naming the problem, and the exit status
err_case() { # expected-code description args...
    want=$1
    what=$2
    shift 2
    "$B" "$@" > "$T/o" 2> "$T/e"
    rc=$?
    check '[ "$rc" -eq "$want" ]' "$what: exit status $rc, expected $want"
    check '[ "$(wc -l < "$T/e")" -eq 1 ] && grep -q "^pnmf-bench: " "$T/e"' "$what: not one line: $(cat "$T/e")"
}
err_case 3 "missing clip" "$T/missing.mkv"
check 'grep -q "missing.mkv" "$T/e"' "missing clip not named: $(cat "$T/e")"
err_case 3 "not a clip" "$S/make_samples.sh"
check 'grep -q "make_samples.sh" "$T/e"' "bad clip not named: $(cat "$T/e")"
err_case 2 "bad -q" -q 65 "$S/sprites.mkv"
check 'grep -q -- "--quality" "$T/e"' "-q 65: option not named"
err_case 2 "bad --threads" --threads x "$S/sprites.mkv"
err_case 2 "unknown option" --bogus "$S/sprites.mkv"
err_case 2 "no clip"
err_case 2 "two clips" "$S/sprites.mkv" "$S/life.mkv"
err_case 5 "unwritable CSV" --csv "$T/no/such/dir/b.csv" "$S/sprites.mkv"
check 'grep -q "no/such/dir/b.csv" "$T/e"' "unwritable CSV not named"

finish bench_cli
