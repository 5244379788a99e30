#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Make cuts_mix.mkv, the development set's clip with scene cuts, from four of
# its other clips: x11_penguins frames 0-44, x11_fishtank 0-49, pingus_pan
# 0-54 and x11_oneko 0-39 (190 frames, cuts before frames 45, 95 and 150),
# stored like the others (H.264 lossless, yuv420p, Matroska). The frames
# are the sources' own: the script compares the framemd5 of the result with
# that of the concatenated source frames.
# usage: sh samples/devset/make_cuts.sh   (needs ffmpeg with libx264)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
FFMPEG=${FFMPEG:-ffmpeg}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ff() { $FFMPEG -nostdin -hide_banner -loglevel error -y "$@"; }

graph="[0:v]trim=start_frame=0:end_frame=45,setpts=PTS-STARTPTS[a];"
graph="$graph[1:v]trim=start_frame=0:end_frame=50,setpts=PTS-STARTPTS[b];"
graph="$graph[2:v]trim=start_frame=0:end_frame=55,setpts=PTS-STARTPTS[c];"
graph="$graph[3:v]trim=start_frame=0:end_frame=40,setpts=PTS-STARTPTS[d];"
graph="$graph[a][b][c][d]concat=n=4:v=1:a=0[o]"
ff -i "$here/x11_penguins.mkv" -i "$here/x11_fishtank.mkv" -i "$here/pingus_pan.mkv" -i "$here/x11_oneko.mkv" \
    -filter_complex "$graph" -map "[o]" -c:v rawvideo -pix_fmt yuv420p -f nut "$tmp/cuts.nut"
ff -i "$tmp/cuts.nut" -map 0:v -map_metadata -1 -fflags +bitexact -flags:v +bitexact -threads 1 \
    -c:v libx264 -qp 0 -preset veryslow -pix_fmt yuv420p "$tmp/cuts_mix.mkv"
ff -i "$tmp/cuts.nut" -f framemd5 "$tmp/ref.md5"
ff -i "$tmp/cuts_mix.mkv" -f framemd5 "$tmp/out.md5"
if ! cmp -s "$tmp/ref.md5" "$tmp/out.md5"; then
    echo "make_cuts: cuts_mix.mkv does not decode to its source frames" >&2
    exit 1
fi
mv "$tmp/cuts_mix.mkv" "$here/cuts_mix.mkv"
printf 'cuts_mix.mkv: %s bytes, %s frames\n' "$(wc -c < "$here/cuts_mix.mkv" | tr -d ' ')" \
    "$(grep -vc '^#' "$tmp/ref.md5")"
