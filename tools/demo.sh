#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a bundled sample: set up, encode, decode, and one summary
# line (frames, bytes, bits per pixel, PSNR-Y of the decoded frames).
set -eu
cd "$(dirname "$0")/.."
sh tools/bootstrap.sh
CLIP=${1:-samples/sprites.mkv}
OUT=build/demo
rm -rf "$OUT"
mkdir -p "$OUT"
build/pnmf-enc "$CLIP" "$OUT/clip.pnmf"
build/pnmf-dec "$OUT/clip.pnmf" "$OUT/frames"
line=$(build/pnmf-psnr "$CLIP" "$OUT/frames/frame_%06d.png")
frames=$(echo "$line" | sed -n 's/.*frames \([0-9]*\).*/\1/p')
psnr=$(echo "$line" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
bytes=$(wc -c < "$OUT/clip.pnmf")
wh=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$OUT/frames/frame_000001.png")
w=${wh%x*}
h=${wh#*x}
bpp=$(awk "BEGIN{printf \"%.4f\", 8 * $bytes / ($frames * $w * $h)}")
echo "$CLIP: frames $frames  bytes $bytes  bpp $bpp  psnr-y $psnr dB  (decoded frames in $OUT/frames/)"
