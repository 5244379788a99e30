#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Levels, colour and frame times kept (format 8): a limited-range H.264 clip
# decodes to PNG with black at 0 and white at 255 as FFmpeg's own PNG of it,
# the y4m says LIMITED, a GIF with 0.1 s and 0.5 s delays comes back with the
# same times as GIF and MKV, pnmf-cat of two timed parts and pnmf-dec
# --start keep them, and pnmf-info shows them.
# usage: meta.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"
command -v ffmpeg > /dev/null && command -v ffprobe > /dev/null || { skip "no ffmpeg/ffprobe"; finish meta; exit 0; }

# gray bytes of a PNG, one a line (rgb24's first channel: R = G = B here)
png_bytes() { ffmpeg -v error -i "$1" -f rawvideo -pix_fmt "$2" - | od -An -tu1 -v | tr -s ' ' '\n' | awk 'NF'; }
# the packet times of a video, one line
pts_list() { ffprobe -v error -select_streams v -show_entries packet=pts_time -of csv=p=0 "$1" | tr '\n' ' '; }

# A limited-range H.264 clip of a black-to-white ramp, lossless.
ffmpeg -v error -y -f lavfi -i "gradients=s=64x48:r=10:c0=black:c1=white:d=0.5:seed=1" \
    -vf "format=yuv420p,scale=out_range=tv" -color_range tv -c:v libx264 -qp 0 "$T/lim.mp4" ||
    die "ffmpeg cannot make the limited-range clip"
mkdir "$T/ff"
ffmpeg -v error -i "$T/lim.mp4" "$T/ff/frame_%06d.png" || die "ffmpeg cannot decode it to PNG"
"$B/pnmf-enc" -Q -q 0 "$T/lim.mp4" "$T/lim.pnmf" || die "pnmf-enc lim.mp4 failed"
"$B/pnmf-info" "$T/lim.pnmf" > "$T/info"
check 'grep -q "^levels  *limited" "$T/info"' "pnmf-info does not say limited: $(grep levels "$T/info")"
"$B/pnmf-dec" -Q "$T/lim.pnmf" "$T/ours" || die "pnmf-dec to PNG failed"
for f in 1 5; do
    n=$(printf %06d $f)
    png_bytes "$T/ff/frame_$n.png" rgb24 | awk 'NR % 3 == 1' > "$T/ref.txt"
    png_bytes "$T/ours/frame_$n.png" gray > "$T/our.txt"
    r=$(paste "$T/ref.txt" "$T/our.txt" | awk 'BEGIN { m = 0 } { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d;
        if (NR == 1 || $1 < rmin) rmin = $1; if ($1 > rmax) rmax = $1;
        if (NR == 1 || $2 < omin) omin = $2; if ($2 > omax) omax = $2 } END { print m, rmin, rmax, omin, omax, NR }')
    read -r diff rmin rmax omin omax npix <<EOF2
$r
EOF2
    check '[ "$npix" -eq 3072 ] && [ "$diff" -le 1 ]' "frame $f: $diff levels from FFmpeg's PNG ($npix pixels)"
    check '[ "$rmin" -eq 0 ] && [ "$rmax" -eq 255 ] && [ "$omin" -eq 0 ] && [ "$omax" -eq 255 ]' \
        "frame $f: FFmpeg's PNG spans $rmin..$rmax, pnmf-dec's $omin..$omax, not 0..255"
done
# the y4m keeps the samples and says LIMITED; full-range sources say FULL
"$B/pnmf-dec" -Q "$T/lim.pnmf" - > "$T/lim.y4m"
check 'head -1 "$T/lim.y4m" | grep -q "XCOLORRANGE=LIMITED"' "y4m header: $(head -1 "$T/lim.y4m")"
check '[ "$(ffprobe -v error -show_entries stream=color_range -of csv=p=0 "$T/lim.y4m")" = tv ]' "FFmpeg does not read the y4m as limited"
l=$("$B/pnmf-psnr" "$T/lim.mp4" "$T/lim.y4m")
check 'echo "$l" | grep -q "psnr-y 999.000"' "the y4m against the source: $l"
# pnmf-psnr compares a limited clip with full-range PNGs on full levels
l=$("$B/pnmf-psnr" "$T/lim.mp4" "$T/ours/frame_%06d.png")
check 'echo "$l" | grep -q "psnr-y 999.000"' "the source against pnmf-dec's PNG: $l"
"$B/pnmf-enc" -Q -q 0 "$S/sprites.mkv" "$T/full.pnmf" && "$B/pnmf-dec" -Q --frames 1 "$T/full.pnmf" - > "$T/full.y4m"
check 'head -1 "$T/full.y4m" | grep -q "XCOLORRANGE=FULL"' "y4m header of a full-range clip: $(head -1 "$T/full.y4m")"
# a video keeps the samples and the tag
"$B/pnmf-dec" -Q "$T/lim.pnmf" "$T/lim.mkv"
check '[ "$(ffprobe -v error -show_entries stream=color_range -of csv=p=0 "$T/lim.mkv")" = tv ]' "mkv not tagged limited"

# A GIF with delays of 0.1 s and 0.5 s.
ffmpeg -v error -y -f lavfi -i "testsrc=s=64x48:r=10" -frames:v 6 \
    -vf "settb=1/100,setpts='if(lt(N\,3)\,N*10\,30+(N-3)*50)',format=gray" "$T/vfr.gif" || die "ffmpeg cannot make the GIF"
src=$(pts_list "$T/vfr.gif")
check '[ "$src" = "0.000000 0.100000 0.200000 0.300000 0.800000 1.300000 " ]' "the test GIF's times: $src"
"$B/pnmf-enc" -Q "$T/vfr.gif" "$T/vfr.pnmf" || die "pnmf-enc vfr.gif failed"
for ext in gif mkv; do
    "$B/pnmf-dec" -Q "$T/vfr.pnmf" "$T/back.$ext"
    got=$(pts_list "$T/back.$ext")
    check '[ "$got" = "$src" ]' "$ext times $got, the source's $src"
done
d=$(ffprobe -v error -select_streams v -show_entries packet=duration_time -of csv=p=0 "$T/back.gif" | tail -1)
check '[ "$d" = 0.500000 ]' "the last GIF frame lasts $d s, not 0.5"
"$B/pnmf-info" "$T/vfr.pnmf" > "$T/info"
check 'grep -q "frame times   time base 1/100: from 0 to 180" "$T/info"' "pnmf-info: $(grep "frame times" "$T/info")"
# two parts joined: the times go on
"$B/pnmf-enc" -Q --frames 4 -w 2 "$T/vfr.gif" "$T/a.pnmf" && "$B/pnmf-enc" -Q -w 2 --start 4 "$T/vfr.gif" "$T/b.pnmf" &&
    "$B/pnmf-cat" -Q -o "$T/ab.pnmf" "$T/a.pnmf" "$T/b.pnmf" || die "the parts or their join failed"
"$B/pnmf-dec" -Q "$T/ab.pnmf" "$T/ab.mkv"
got=$(pts_list "$T/ab.mkv")
check '[ "$got" = "$src" ]' "joined parts: times $got, the source's $src"
"$B/pnmf-cat" -Q -o "$T/ba.pnmf" "$T/b.pnmf" "$T/a.pnmf" && "$B/pnmf-dec" -Q "$T/ba.pnmf" "$T/ba.mkv"
got=$(pts_list "$T/ba.mkv")
check '[ "$got" = "0.000000 0.500000 1.000000 1.100000 1.200000 1.300000 " ]' "parts joined the other way: $got"
# decoding from frame 3 (the second window of a.pnmf's two-frame windows)
"$B/pnmf-dec" -Q --start 3 "$T/ab.pnmf" "$T/s3.mkv"
got=$(pts_list "$T/s3.mkv")
check '[ "$got" = "0.000000 0.500000 1.000000 " ]' "--start 3: times $got"
# a timed part does not join an untimed one
"$B/pnmf-cat" -Q -o "$T/x.pnmf" "$T/a.pnmf" "$S/../tests/golden/good/life_15x11_q0.pnmf" 2> "$T/err"
check '[ $? -ne 0 ]' "a timed and an old part joined"

# the golden v8 files keep their metadata (tests/golden/good/README.md)
G=$(dirname "$0")/golden/good
"$B/pnmf-info" "$G/ramp_limited_v8.pnmf" > "$T/info"
check 'grep -q "^levels  *limited" "$T/info" && grep -q "time base 1/10240: from 0 to 6144" "$T/info"' \
    "ramp_limited_v8.pnmf: $(sed -n 6,7p "$T/info")"
"$B/pnmf-dec" -Q "$G/gif_delays_v8.pnmf" "$T/g.gif"
got=$(pts_list "$T/g.gif")
check '[ "$got" = "$src" ]' "gif_delays_v8.pnmf: times $got"

finish meta
