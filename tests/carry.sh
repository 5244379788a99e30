#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Components carried over across windows: on samples/sprites.mkv in
# windows of 20 frames, the windows after the first reuse its components
# (pnmf-enc counts them, pnmf-info marks them), the file is at least 10 %
# smaller than with --no-carry within 0.3 dB of its PSNR (at -q 40 on this
# clip 0.3 dB is worth under 2 % of the bytes, so a smaller file bought with
# quality does not pass), the decoder shows exactly the PSNR the encoder
# reports, and decoding from a frame inside a carrying window (through the
# index, from the key window) gives the frames of a full decode.
# --target-psnr: without it, from -q 16 up the probe weighs the model as at
# -q 52 and lets no 20-frame window of this clip through (encode.c,
# PROBE_MARGIN_FIXED), so no window would have components to carry; with
# it the model follows -q (40 here) and the probe's margin is PROBE_MARGIN.
# --no-sprites: the sprite layer would take every window before the probe.
# usage: carry.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

"$B/pnmf-enc" --no-sprites -q 40 --target-psnr 46 -w 20 "$S/sprites.mkv" "$T/c.pnmf" > "$T/c.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/c.log")"
"$B/pnmf-enc" --no-sprites -q 40 --target-psnr 46 -w 20 --no-carry "$S/sprites.mkv" "$T/n.pnmf" > "$T/n.log" 2>&1
check '[ $? -eq 0 ]' "encode --no-carry: $(cat "$T/n.log")"
c=$(summary "$T/c.log")
n=$(summary "$T/n.log")
echo "carry: $c  no-carry: $n"
check 'grep -q "carried 2" "$T/c.log"' "windows 1 and 2 did not carry the components over: $(cat "$T/c.log")"
check '! grep -q carried "$T/n.log"' "--no-carry carried: $(cat "$T/n.log")"
check 'awk "BEGIN{split(\"$c\", a, \" \"); split(\"$n\", b, \" \"); exit !(a[1] < 0.9 * b[1] && a[2] >= b[2] - 0.3)}"' \
    "carrying ($c) is not 10 % smaller within 0.3 dB than not ($n)"
"$B/pnmf-info" "$T/c.pnmf" > "$T/info" 2>&1
check '[ $(grep -c "^ *[12] .* no  *[-qd8cmpansv]*  *8 c " "$T/info") -eq 2 ]' "pnmf-info does not mark windows 1 and 2 as carried: $(head -20 "$T/info")"

# what the decoder shows is what the encoder reports
"$B/pnmf-dec" -Q -f pgm "$T/c.pnmf" "$T/all"
dec=$("$B/pnmf-psnr" "$S/sprites.mkv" "$T/all/frame_%06d.pgm" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
enc=$(echo "$c" | cut -d' ' -f2)
check 'awk "BEGIN{d = $dec - $enc; exit !(d < 0.01 && d > -0.01)}"' "decoded PSNR $dec, encoder said $enc"
# from frame 45 (window 2 carries window 0's components through window 1)
"$B/pnmf-dec" -Q -f pgm --start 45 "$T/c.pnmf" "$T/part"
same=1
for i in $(seq 1 15); do
    a=$(printf '%s/part/frame_%06d.pgm' "$T" "$i")
    b=$(printf '%s/all/frame_%06d.pgm' "$T" $((i + 45)))
    cmp -s "$a" "$b" || same=0
done
check '[ $same -eq 1 ]' "decoding from frame 45 differs from a full decode"

finish carry
