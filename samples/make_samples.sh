#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerate the sample clips in this directory. Needs cc and ffmpeg.
# Deterministic: the same ffmpeg version gives the same bytes (bitexact
# muxing, one encoder thread); the decoded frames are the same with any
# version, since both clips are stored losslessly.
#   sh samples/make_samples.sh            # writes samples/sprites.mkv, samples/life.mkv
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnmf-samples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

CC=${CC:-cc}
FFMPEG=${FFMPEG:-ffmpeg}

# Lossless gray FFV1 in Matroska, with nothing that changes from run to run.
ffv1="-c:v ffv1 -level 3 -slices 4 -slicecrc 1 -g 1 -threads 1 -pix_fmt gray
      -map_metadata -1 -fflags +bitexact -flags:v +bitexact"

# (a) sprites.mkv: 4 sprites over a static background, 160x120, 60 frames, 20 fps.
$CC -std=c99 -O2 -o "$tmp/make_sprites" "$here/make_sprites.c"
"$tmp/make_sprites" > "$tmp/sprites.y4m"
# shellcheck disable=SC2086
$FFMPEG -nostdin -hide_banner -loglevel error -y -f yuv4mpegpipe -i "$tmp/sprites.y4m" \
    $ffv1 "$here/sprites.mkv"

# (b) life.mkv: Conway's game of life on a 128x96 torus, fixed seed, 60 frames, 20 fps.
# shellcheck disable=SC2086
$FFMPEG -nostdin -hide_banner -loglevel error -y \
    -f lavfi -i "life=size=128x96:rate=20:seed=20240601:ratio=0.3:stitch=1" \
    -frames:v 60 $ffv1 "$here/life.mkv"

for f in sprites life; do
    printf '%s.mkv: %s bytes\n' "$f" "$(wc -c < "$here/$f.mkv" | tr -d ' ')"
done
