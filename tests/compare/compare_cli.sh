#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-compare end to end on samples/sprites.mkv with pnmf and x264, 4
# points, 8 frames and small pnmf settings (a few seconds): the Markdown
# tables, rd.csv and bd.csv (rows and numeric fields), the plot (when
# gnuplot is installed), pnmf's row against pnmf-enc's own PSNR, the
# anchors read back from rd.csv (--anchors), running
# without gnuplot, --help and the errors; pnmf against pnmf-k0 (-k 0).
# usage: compare_cli.sh PNMF_COMPARE SAMPLES_DIR [PNMF_ENC]
set -u
C=$1
S=$2
ENC=${3:-}
. "$(dirname "$0")/../lib.sh"
# is $1 a number (integer or decimal)?
isnum() { echo "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; }

PNMF_SMALL="-w 4 -k 4 --iterations 5"

# ---- the main run ----
# shellcheck disable=SC2086
"$C" --codecs pnmf,x264 --points 4 --frames 8 $PNMF_SMALL --out "$T/out" "$S/sprites.mkv" \
    > "$T/table.md" 2> "$T/err"
rc=$?
cat "$T/table.md"
check '[ "$rc" -eq 0 ]' "exit status $rc: $(cat "$T/err")"
check 'grep -q "^| codec | setting | bytes | bpp | PSNR-Y dB | SSIM-Y | enc fps | dec fps | peak MiB |$" "$T/table.md"' \
    "no table header"
n=$(grep -c '^| pnmf | q [0-9]* | [0-9]' "$T/table.md")
check '[ "$n" -eq 4 ]' "$n pnmf rows in the table, expected 4"
n=$(grep -c '^| x264 | crf [0-9]* | [0-9]' "$T/table.md")
check '[ "$n" -eq 4 ]' "$n x264 rows in the table, expected 4"
check 'grep -q "^| anchor | BD-rate % | BD-PSNR dB |" "$T/table.md"' "no BD table"
check 'grep -q "^| x264 | " "$T/table.md"' "no x264 row in the BD table"
# the ladders: q 0,16,32,48 and crf 16,25,35,44
check 'grep -q "^| pnmf | q 16 |" "$T/table.md" && grep -q "^| x264 | crf 35 |" "$T/table.md"' "unexpected ladder values"

# rd.csv: a header and 8 rows, every measured field numeric
csv=$T/out/rd.csv
check '[ -s "$csv" ]' "no rd.csv"
check '[ "$(head -1 "$csv")" = "codec,knob,value,frames,width,height,bytes,bpp,psnr_y,ssim_y,enc_fps,dec_fps,enc_cpu_s,peak_mib,sei_bytes,status" ]' \
    "rd.csv header: $(head -1 "$csv")"
rows=$(($(wc -l < "$csv") - 1))
check '[ "$rows" -eq 8 ]' "rd.csv has $rows rows, expected 8"
nonnum=0
tail -n +2 "$csv" > "$T/rows"
while IFS=, read -r codec knob value frames w h bytes bpp psnr ssim efps dfps cpu peak sei status; do
    for v in "$value" "$frames" "$w" "$h" "$bytes" "$bpp" "$psnr" "$ssim" "$efps" "$dfps" "$cpu" "$peak" "$sei"; do
        isnum "$v" || { nonnum=$((nonnum + 1)); echo "rd.csv: $codec $value: '$v' is not a number" >&2; }
    done
    [ "$status" = ok ] || { nonnum=$((nonnum + 1)); echo "rd.csv: $codec $value: status $status" >&2; }
    [ "$frames" = 8 ] && [ "$w" = 160 ] && [ "$h" = 120 ] || { nonnum=$((nonnum + 1)); echo "rd.csv: $codec $value: $frames frames of ${w}x$h" >&2; }
    # bpp is 8 * bytes / (frames * w * h)
    awk "BEGIN{b=8*$bytes/(8*160*120); d=b-$bpp; exit !(d < 1e-5 && d > -1e-5)}" ||
        { nonnum=$((nonnum + 1)); echo "rd.csv: $codec $value: bpp $bpp for $bytes bytes" >&2; }
    awk "BEGIN{exit !($psnr > 15 && ($psnr < 100 || $psnr == 999) && $ssim > 0 && $ssim <= 1)}" ||
        { nonnum=$((nonnum + 1)); echo "rd.csv: $codec $value: PSNR $psnr, SSIM $ssim" >&2; }
done < "$T/rows"
check '[ "$nonnum" -eq 0 ]' "$nonnum bad fields in rd.csv"
check '[ "$(cut -d, -f1 "$T/rows" | sort | uniq -c | tr -s " " | sed "s/^ //" | tr "\n" ";")" = "4 pnmf;4 x264;" ]' \
    "rd.csv rows per codec: $(cut -d, -f1 "$T/rows" | sort | uniq -c | tr '\n' ' ')"
# bd.csv: a header and one row, pnmf against x264
check '[ "$(wc -l < "$T/out/bd.csv")" -eq 2 ] && grep -q "^pnmf,x264," "$T/out/bd.csv"' "bd.csv: $(cat "$T/out/bd.csv")"

# the plot
if command -v gnuplot > /dev/null 2>&1; then
    check '[ -s "$T/out/rd.svg" ] && grep -q "<svg" "$T/out/rd.svg"' "no SVG plot"
    check 'grep -q ">pnmf<" "$T/out/rd.svg" && grep -q ">x264<" "$T/out/rd.svg"' "the plot's key lacks a codec"
    "$C" -Q --codecs x264 --points 4 --frames 4 --plot png --out "$T/png" "$S/sprites.mkv" > /dev/null 2>&1
    check '[ "$(head -c 8 "$T/png/rd.png" | od -An -tx1 | tr -d " \n")" = "89504e470d0a1a0a" ]' "--plot png wrote no PNG"
else
    echo "gnuplot is not installed: plot not checked" >&2
    check 'grep -q gnuplot "$T/err"' "no word about the missing gnuplot"
fi

# the pnmf row's PSNR is the one pnmf-enc measures on its own
if [ -n "$ENC" ] && [ -x "$ENC" ]; then
    # shellcheck disable=SC2086
    "$ENC" $PNMF_SMALL -q 16 --threads 1 --frames 8 "$S/sprites.mkv" "$T/a.pnmf" 2> "$T/enc.log"
    enc_psnr=$(sed -n 's/.*psnr-y \([0-9.]*\) dB.*/\1/p' "$T/enc.log")
    enc_bytes=$(sed -n 's/.*bytes \([0-9]*\) .*/\1/p' "$T/enc.log")
    row=$(grep '^pnmf,q,16,' "$csv")
    cmp_psnr=$(echo "$row" | cut -d, -f9)
    cmp_bytes=$(echo "$row" | cut -d, -f7)
    check 'awk "BEGIN{d=$enc_psnr-$cmp_psnr; exit !(d < 0.006 && d > -0.006)}"' \
        "pnmf-enc says $enc_psnr dB, pnmf-compare $cmp_psnr dB"
    check '[ "$enc_bytes" = "$cmp_bytes" ]' "pnmf-enc wrote $enc_bytes bytes, pnmf-compare counted $cmp_bytes"
fi

# ---- --anchors: x264 read back from the main run's rd.csv, pnmf alone measured ----
# shellcheck disable=SC2086
"$C" --points 4 --frames 8 $PNMF_SMALL --anchors "$csv" --out "$T/anch" "$S/sprites.mkv" \
    > "$T/anch.md" 2> "$T/anch.err"
rc=$?
check '[ "$rc" -eq 0 ]' "--anchors: exit status $rc: $(cat "$T/anch.err")"
check 'grep -q "1 codecs, 4 points" "$T/anch.err"' "--anchors: not pnmf alone measured: $(head -1 "$T/anch.err")"
# (bytes to SSIM-Y: the speeds and memory, rounded again from the CSV's
# decimals, may differ in the last digit shown)
check '[ "$(grep "^| x264 | crf" "$T/anch.md" | cut -d"|" -f2-7)" = "$(grep "^| x264 | crf" "$T/table.md" | cut -d"|" -f2-7)" ]' \
    "--anchors: the x264 rows of the table differ from the run they were read from"
check '[ "$(grep "^x264," "$T/anch/rd.csv")" = "$(grep "^x264," "$csv")" ]' \
    "--anchors: rd.csv's x264 rows differ from the file they were read from"
# pnmf is deterministic: the same bytes and PSNR-Y as in the main run
check '[ "$(grep "^pnmf," "$T/anch/rd.csv" | cut -d, -f1-10)" = "$(grep "^pnmf," "$csv" | cut -d, -f1-10)" ]' \
    "--anchors: pnmf's points differ from the main run's"
check 'grep -q "^Read from .*rd.csv.*not measured here: x264\.$" "$T/anch.md"' "--anchors: the table does not say what was read"
# the same BD-rate and BD-PSNR, to the CSV's precision (PSNR-Y to 4 decimals)
bd0=$(grep "^pnmf,x264," "$T/out/bd.csv" | cut -d, -f3,4)
bd1=$(grep "^pnmf,x264," "$T/anch/bd.csv" | cut -d, -f3,4)
check 'awk -v a="$bd0" -v b="$bd1" "BEGIN{split(a,x,\",\"); split(b,y,\",\"); d=x[1]-y[1]; e=x[2]-y[2];
    exit !(x[1] != \"\" && d < 0.01 && d > -0.01 && e < 0.001 && e > -0.001)}"' \
    "--anchors: BD against x264 $bd1, measured $bd0"

# ---- without gnuplot: tables and CSV all the same, a word on stderr ----
PATH=/nonexistent "$C" --codecs x264 --points 4 --frames 4 --out "$T/nogp" "$S/sprites.mkv" \
    > "$T/nogp.md" 2> "$T/nogp.err"
rc=$?
check '[ "$rc" -eq 0 ]' "without gnuplot: exit status $rc"
check 'grep -q "gnuplot is not installed" "$T/nogp.err"' "without gnuplot: nothing said: $(cat "$T/nogp.err")"
check '[ "$(wc -l < "$T/nogp/rd.csv")" -eq 5 ] && [ ! -e "$T/nogp/rd.svg" ]' "without gnuplot: csv or plot wrong"
check '[ "$(grep -c "^| x264 | crf" "$T/nogp.md")" -eq 4 ]' "without gnuplot: no table"

# ---- --help and errors ----
"$C" --help > "$T/help" 2>&1
rc=$?
check '[ "$rc" -eq 0 ]' "--help exit status $rc"
for o in --codecs --anchors --points --range --frames --threads --out --plot --quiet --verbose --help \
         --components --window --shift --keyint --algo --iterations --inner --restarts --seed --zstd-level; do
    check 'grep -q -- "$o" "$T/help"' "--help does not list $o"
done
check 'grep -q "default 6" "$T/help" && grep -q "default 1," "$T/help" && grep -q "default compare-out" "$T/help"' \
    "--help lacks a default"

# bad command lines: exit 2, one line naming the option
err_case() { # expected-code description args...
    want=$1
    what=$2
    shift 2
    "$C" "$@" > /dev/null 2> "$T/e"
    rc=$?
    check '[ "$rc" -eq "$want" ]' "$what: exit status $rc, expected $want"
    check '[ "$(wc -l < "$T/e")" -eq 1 ] && grep -q "^pnmf-compare: " "$T/e"' "$what: not one line: $(cat "$T/e")"
}
err_case 2 "unknown codec" --codecs pnmf,h263 "$S/sprites.mkv"
check 'grep -q "h263" "$T/e"' "unknown codec not named"
err_case 2 "bad --points" --points 0 "$S/sprites.mkv"
err_case 2 "bad --range" --range x264=30:10 "$S/sprites.mkv"
err_case 2 "bad --plot" --plot gif "$S/sprites.mkv"
err_case 2 "unknown option" --bogus "$S/sprites.mkv"
err_case 2 "no clip"
err_case 3 "missing clip" --codecs x264 "$T/missing.mkv"
check 'grep -q "missing.mkv" "$T/e"' "missing clip not named"
: > "$T/file"
err_case 5 "output is a file" --codecs x264 --points 1 --frames 2 --out "$T/file/sub" "$S/sprites.mkv"
check 'grep -q "$T/file/sub" "$T/e"' "output directory not named"

# --anchors that cannot be used: exit 3, one line naming the file
err_case 3 "missing anchors" --anchors "$T/none.csv" --frames 8 "$S/sprites.mkv"
check 'grep -q "none.csv" "$T/e"' "missing anchors file not named"
err_case 3 "anchors of other frames" --anchors "$csv" --frames 6 "$S/sprites.mkv"
check 'grep -q "rd.csv: line 2: measured on 8 frames of 160x120, this run has 6 frames" "$T/e"' \
    "anchors of other frames: $(cat "$T/e")"
echo "codec,bytes" > "$T/notrd.csv"
err_case 3 "anchors not an rd.csv" --anchors "$T/notrd.csv" --frames 8 "$S/sprites.mkv"
check 'grep -q "notrd.csv: not an rd.csv" "$T/e"' "anchors not an rd.csv: $(cat "$T/e")"
sed '6s/^\(x264,crf,[0-9]*,8,160,120,\)[0-9]*/\1many/' "$csv" > "$T/badrow.csv"
err_case 3 "anchors with a bad row" --anchors "$T/badrow.csv" --frames 8 "$S/sprites.mkv"
check 'grep -q "badrow.csv: line 6: " "$T/e"' "anchors with a bad row: $(cat "$T/e")"
err_case 3 "anchors of pnmf alone" --anchors "$T/anch/rd.csv" --codecs pnmf,x264 --frames 8 "$S/sprites.mkv"
check 'grep -q "no point of a codec this run does not measure" "$T/e"' "anchors of pnmf alone: $(cat "$T/e")"

# pnmf-k0: the same pnmf with -k 0, only when named. On 30 frames of
# samples/sprites.mkv (a few rigid sprites) the sprite layer must pay:
# pnmf's BD-rate against pnmf-k0 is negative.
"$C" -Q --codecs pnmf,pnmf-k0 --points 4 --frames 30 --out "$T/k0" "$S/sprites.mkv" > "$T/k0.md" 2> "$T/err"
check '[ $? -eq 0 ]' "pnmf,pnmf-k0: $(cat "$T/err")"
bd=$(grep "^pnmf,pnmf-k0," "$T/k0/bd.csv" | cut -d, -f3)
echo "pnmf against pnmf-k0 on sprites.mkv: BD-rate $bd %"
check 'isnum "$bd" && awk "BEGIN{exit !($bd < -10)}"' "BD-rate of pnmf against pnmf-k0: '$bd': $(cat "$T/k0/bd.csv")"
check '! grep -q "pnmf-k0" "$T/out/rd.csv"' "pnmf-k0 ran without being named"

finish compare_cli
