#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-compare --lossless end to end on 8 frames of samples/sprites.mkv with
# real encoders (pnmf -q 0, FFV1, x264, x265, libaom, APNG, GIF, zstd, and
# animated WebP when this build decodes it): every row says lossless, the
# CSV agrees (no differing pixel), pnmf's bytes are pnmf-enc -q 0's, the
# bar chart names each codec; pnmf with --no-residual (the model alone,
# lossy even at -q 0) is reported not lossless; the options that do not
# apply are refused.
# usage: compare_lossless.sh PNMF_COMPARE SAMPLES_DIR [PNMF_ENC]
set -u
C=$1
S=$2
ENC=${3:-}
. "$(dirname "$0")/../lib.sh"
isnum() { echo "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; }

PNMF_SMALL="-w 4 -k 4 --iterations 5"
CODECS="pnmf,ffv1,x264,x265,aom,apng,gif,zstd"
NC=8

# ---- the main run ----
# shellcheck disable=SC2086
"$C" --lossless --codecs $CODECS --frames 8 $PNMF_SMALL --out "$T/out" "$S/sprites.mkv" > "$T/table.md" 2> "$T/err"
rc=$?
cat "$T/table.md"
check '[ "$rc" -eq 0 ]' "exit status $rc: $(cat "$T/err")"
check 'grep -q "^| codec | bytes | bpp | vs pnmf | enc fps | dec fps | peak MiB | lossless |$" "$T/table.md"' \
    "no table header"
for c in $(echo "$CODECS" | tr , ' '); do
    check 'grep -q "^| $c | [0-9][0-9]* | [0-9.]* | .* | yes |$" "$T/table.md"' "no lossless row for $c: $(grep "^| $c |" "$T/table.md")"
done
check '[ "$(grep -c "| yes |$" "$T/table.md")" -eq "$NC" ]' "not $NC lossless rows"
check '! grep -q "not lossless" "$T/table.md"' "a row says not lossless"
# the others' size against pnmf's, from the bytes shown
pb=$(grep "^| pnmf |" "$T/table.md" | cut -d"|" -f3 | tr -d " ")
xb=$(grep "^| x264 |" "$T/table.md" | cut -d"|" -f3 | tr -d " ")
vs=$(grep "^| x264 |" "$T/table.md" | cut -d"|" -f5 | tr -d " %")
check 'awk -v p="$pb" -v x="$xb" -v v="$vs" "BEGIN{d = 100 * (x / p - 1) - v; exit !(d < 0.06 && d > -0.06)}"' \
    "x264 vs pnmf says $vs %, bytes $xb against $pb"

# lossless.csv: a header and one row per codec, each exact
csv=$T/out/lossless.csv
check '[ "$(head -1 "$csv")" = "codec,frames,width,height,bytes,bpp,enc_fps,dec_fps,enc_cpu_s,peak_mib,lossless,diff_pixels,max_diff,psnr_y,status" ]' \
    "lossless.csv header: $(head -1 "$csv")"
check '[ "$(($(wc -l < "$csv") - 1))" -eq "$NC" ]' "lossless.csv has $(($(wc -l < "$csv") - 1)) rows, expected $NC"
bad=0
tail -n +2 "$csv" > "$T/rows"
while IFS=, read -r codec frames w h bytes bpp efps dfps cpu peak lossless diff maxd psnr status; do
    for v in "$frames" "$bytes" "$bpp" "$efps" "$dfps" "$cpu" "$diff" "$maxd" "$psnr"; do
        isnum "$v" || { bad=$((bad + 1)); echo "lossless.csv: $codec: '$v' is not a number" >&2; }
    done
    [ "$frames,$w,$h" = "8,160,120" ] || { bad=$((bad + 1)); echo "lossless.csv: $codec: $frames frames of ${w}x$h" >&2; }
    [ "$lossless,$diff,$maxd,$psnr,$status" = "yes,0,0,999.0000,ok" ] ||
        { bad=$((bad + 1)); echo "lossless.csv: $codec: $lossless,$diff,$maxd,$psnr,$status" >&2; }
    awk "BEGIN{b=8*$bytes/(8*160*120); d=b-$bpp; exit !($bytes > 0 && d < 1e-5 && d > -1e-5)}" ||
        { bad=$((bad + 1)); echo "lossless.csv: $codec: bpp $bpp for $bytes bytes" >&2; }
done < "$T/rows"
check '[ "$bad" -eq 0 ]' "$bad bad fields in lossless.csv"
check '[ "$(cut -d, -f1 "$T/rows" | tr "\n" ,)" = "$CODECS," ]' "lossless.csv codecs: $(cut -d, -f1 "$T/rows" | tr '\n' ' ')"

# pnmf's row is pnmf-enc -q 0's file, which pnmf-enc finds exact
if [ -n "$ENC" ] && [ -x "$ENC" ]; then
    # shellcheck disable=SC2086
    "$ENC" $PNMF_SMALL -q 0 --threads 1 --frames 8 "$S/sprites.mkv" "$T/a.pnmf" 2> "$T/enc.log"
    check '[ "$(summary "$T/enc.log")" = "$(grep "^pnmf," "$csv" | cut -d, -f5) 999.00" ]' \
        "pnmf-enc -q 0: $(summary "$T/enc.log"), pnmf-compare: $(grep "^pnmf," "$csv" | cut -d, -f5)"
fi

# the bar chart
if command -v gnuplot > /dev/null 2>&1; then
    check '[ -s "$T/out/lossless.svg" ] && grep -q "<svg" "$T/out/lossless.svg"' "no SVG bar chart"
    for c in $(echo "$CODECS" | tr , ' '); do
        check 'grep -q ">$c<" "$T/out/lossless.svg"' "the bar chart does not name $c"
    done
else
    skip "gnuplot is not installed: bar chart not checked"
fi

# ---- animated WebP, where this build decodes it ----
"$C" --lossless --codecs webp --frames 8 --plot none --out "$T/webp" "$S/sprites.mkv" > "$T/webp.md" 2> "$T/webp.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "webp is not available" "$T/webp.err"; then
    skip "webp: $(cat "$T/webp.err")"
else
    check '[ "$rc" -eq 0 ] && grep -q "^| webp | [0-9][0-9]* | .* | yes |$" "$T/webp.md"' \
        "webp: exit $rc, $(grep "^| webp" "$T/webp.md") $(cat "$T/webp.err")"
fi

# ---- a lossy entry is flagged: pnmf's model alone (--no-residual) at -q 0 ----
"$C" --lossless --codecs pnmf,zstd --frames 8 -w 4 -k 4 --iterations 5 --no-residual --plot svg \
    --out "$T/lossy" "$S/sprites.mkv" > "$T/lossy.md" 2> "$T/lossy.err"
rc=$?
cat "$T/lossy.md"
check '[ "$rc" -eq 0 ]' "--no-residual: exit status $rc: $(cat "$T/lossy.err")"
check 'grep -q "^| pnmf | [0-9]* | [0-9.]* | — | .* | \*\*not lossless\*\*: [1-9][0-9]* of 153600 pixels differ (by up to [1-9][0-9]*), PSNR-Y [0-9.]* dB |$" "$T/lossy.md"' \
    "--no-residual: pnmf not flagged: $(grep "^| pnmf" "$T/lossy.md")"
check 'grep -q "^| zstd | .* | — | .* | yes |$" "$T/lossy.md"' "--no-residual: zstd row: $(grep "^| zstd" "$T/lossy.md")"
check 'grep -q "^pnmf,8,160,120,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.n/a]*,no,[1-9][0-9]*,[1-9][0-9]*,[0-9.]*,ok$" "$T/lossy/lossless.csv"' \
    "--no-residual: lossless.csv: $(grep "^pnmf," "$T/lossy/lossless.csv")"
check 'grep -q "NOT LOSSLESS" "$T/lossy.err"' "--no-residual: no word in the progress lines"
if command -v gnuplot > /dev/null 2>&1; then
    check 'grep -q "not lossless" "$T/lossy/lossless.svg"' "--no-residual: the bar chart does not say not lossless"
fi

# ---- what does not apply ----
err_case() { # description args...
    what=$1
    shift
    "$C" "$@" > /dev/null 2> "$T/e"
    rc=$?
    check '[ "$rc" -eq 2 ] && [ "$(wc -l < "$T/e")" -eq 1 ] && grep -q "^pnmf-compare: " "$T/e"' \
        "$what: exit status $rc: $(cat "$T/e")"
}
err_case "--lossless --points" --lossless --points 4 "$S/sprites.mkv"
check 'grep -q -- "--points does not apply with --lossless" "$T/e"' "--points not named: $(cat "$T/e")"
err_case "--lossless --range" --range x264=20:30 --lossless "$S/sprites.mkv"
err_case "--lossless --anchors" --lossless --anchors "$csv" "$S/sprites.mkv"
err_case "--lossless, a lossy-only codec" --codecs pnmf,vp9 --lossless "$S/sprites.mkv"
check 'grep -q "unknown codec .vp9. with --lossless" "$T/e"' "vp9 not named: $(cat "$T/e")"

finish compare_lossless
