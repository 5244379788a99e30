#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end on the bundled samples with the real FFmpeg, FFTW and zstd:
# encode, decode, check frame count, size and a PSNR-Y floor; encoding is
# deterministic (twice, and with 1 or 2 threads); decoding is deterministic;
# png, pgm, y4m and seeking through the index agree.
# usage: roundtrip.sh BUILD_DIR SAMPLES_DIR
set -eu
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

# PSNR-Y floor for samples/sprites.mkv at default settings, which give about
# 44 dB: the floor leaves room for small changes in the fit.
FLOOR=43

"$B/pnmf-enc" --threads 2 "$S/sprites.mkv" "$T/a.pnmf" 2> "$T/enc.log"
cat "$T/enc.log"
enc_psnr=$(sed -n 's/.*psnr-y \([0-9.]*\) dB.*/\1/p' "$T/enc.log")
"$B/pnmf-dec" "$T/a.pnmf" "$T/png" 2> "$T/dec.log"
n=$(ls "$T/png" | grep -c '^frame_[0-9]\{6\}\.png$')
check '[ "$n" -eq 60 ]' "decoded $n frames, expected 60"
line=$("$B/pnmf-psnr" "$S/sprites.mkv" "$T/png/frame_%06d.png")
echo "pnmf-psnr: $line"
frames=$(echo "$line" | sed -n 's/.*frames \([0-9]*\).*/\1/p')
psnr=$(echo "$line" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
check '[ "$frames" -eq 60 ]' "pnmf-psnr compared $frames frames"
check 'awk "BEGIN{exit !($psnr >= $FLOOR)}"' "PSNR-Y $psnr below the floor $FLOOR"
# what the encoder measured is what the decoder shows
check 'awk "BEGIN{d=$psnr-$enc_psnr; exit !(d < 0.01 && d > -0.01)}"' "encoder said $enc_psnr dB, decoded frames give $psnr dB"
# a decoded frame has the clip's size (160x120): ffprobe reads it back
if command -v ffprobe >/dev/null; then
    wh=$(ffprobe -v error -show_entries stream=width,height,pix_fmt -of csv=p=0 "$T/png/frame_000001.png")
    check '[ "$wh" = "160,120,gray" ]' "decoded PNG is $wh"
fi

# determinism: same bytes twice, and for 1 or 2 threads (30 frames, 3 windows)
"$B/pnmf-enc" -Q --frames 30 -w 10 --threads 2 "$S/sprites.mkv" "$T/b1.pnmf"
"$B/pnmf-enc" -Q --frames 30 -w 10 --threads 2 "$S/sprites.mkv" "$T/b2.pnmf"
"$B/pnmf-enc" -Q --frames 30 -w 10 --threads 1 "$S/sprites.mkv" "$T/b3.pnmf"
check 'cmp -s "$T/b1.pnmf" "$T/b2.pnmf"' "two encodes differ"
check 'cmp -s "$T/b1.pnmf" "$T/b3.pnmf"' "--threads 1 and --threads 2 differ"

# decoding twice gives identical frames; pgm and y4m carry the same pixels
"$B/pnmf-dec" -Q "$T/a.pnmf" "$T/png2"
check '[ "$(cd "$T/png" && cat * | md5sum)" = "$(cd "$T/png2" && cat * | md5sum)" ]' "two decodes differ"
"$B/pnmf-dec" -Q -f pgm "$T/a.pnmf" "$T/pgm"
"$B/pnmf-dec" -Q "$T/a.pnmf" - > "$T/a.y4m"
l2=$("$B/pnmf-psnr" "$T/png/frame_%06d.png" "$T/pgm/frame_%06d.pgm")
check 'echo "$l2" | grep -q "frames 60 psnr-y 999.000"' "png and pgm differ: $l2"
check 'head -1 "$T/a.y4m" | grep -q "^YUV4MPEG2 W160 H120 F20:1 "' "y4m header: $(head -1 "$T/a.y4m")"
l3=$("$B/pnmf-psnr" "$T/png/frame_%06d.png" "$T/a.y4m")
check 'echo "$l3" | grep -q "frames 60 psnr-y 999.000"' "png and y4m differ: $l3"

# seeking through the index (b1.pnmf: windows of 10 frames): frames 16..20
# alone equal the full decode's, and from frame 26 to the end the decoder
# still checks the index and trailer
"$B/pnmf-dec" -Q -f pgm "$T/b1.pnmf" "$T/bpgm"
"$B/pnmf-dec" -Q -f pgm --start 15 --frames 5 "$T/b1.pnmf" "$T/seek"
same=1
for i in 1 2 3 4 5; do
    cmp -s "$T/seek/frame_00000$i.pgm" "$T/bpgm/frame_0000$((15 + i)).pgm" || same=0
done
check '[ "$same" -eq 1 ]' "frames decoded after --start 15 differ from the full decode"
"$B/pnmf-dec" -Q -f pgm --start 25 "$T/b1.pnmf" "$T/seek2"
check '[ $? -eq 0 ] && [ "$(ls "$T/seek2" | wc -l)" -eq 5 ]' "--start 25 to the end"
check 'cmp -s "$T/seek2/frame_000005.pgm" "$T/bpgm/frame_000030.pgm"' "last frame after --start 25 differs"

# the paper's model and algorithm end to end (vector shifts, PG W step)
"$B/pnmf-enc" -Q --shift vector --algo paper -w 5 -k 3 --frames 10 --iterations 5 "$S/sprites.mkv" "$T/v.pnmf"
"$B/pnmf-dec" -Q "$T/v.pnmf" "$T/v"
l6=$("$B/pnmf-psnr" "$S/sprites.mkv" "$T/v/frame_%06d.png")
check 'echo "$l6" | grep -q "^frames 10 "' "vector/paper round trip: $l6"

# the canvas model with signed components (format v2) end to end: the
# frames decoded are what the encoder measured, and seeking agrees
"$B/pnmf-enc" --shift canvas --signed -w 5 -k 3 --frames 10 --iterations 5 --threads 2 "$S/sprites.mkv" "$T/cv.pnmf" 2> "$T/cv.log"
cv_psnr=$(sed -n 's/.*psnr-y \([0-9.]*\) dB.*/\1/p' "$T/cv.log")
"$B/pnmf-dec" -Q -f pgm "$T/cv.pnmf" "$T/cv"
l8=$("$B/pnmf-psnr" "$S/sprites.mkv" "$T/cv/frame_%06d.pgm")
cv_dec=$(echo "$l8" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
check 'echo "$l8" | grep -q "^frames 10 "' "canvas round trip: $l8"
check 'awk "BEGIN{d=$cv_dec-$cv_psnr; exit !(d < 0.01 && d > -0.01 && $cv_dec > 25)}"' "canvas: encoder said $cv_psnr dB, decoded frames give $cv_dec dB"
"$B/pnmf-dec" -Q -f pgm --start 6 "$T/cv.pnmf" "$T/cvs"
check 'cmp -s "$T/cvs/frame_000004.pgm" "$T/cv/frame_000010.pgm"' "canvas: frame 10 after --start 6 differs"

# other containers and an odd size: an mp4 (H.264) and a 77x53 gif
if command -v ffmpeg >/dev/null; then
    ffmpeg -v error -i "$S/sprites.mkv" -frames:v 12 -c:v libx264 -pix_fmt yuv420p "$T/c.mp4"
    "$B/pnmf-enc" -Q -w 6 "$T/c.mp4" "$T/c.pnmf"
    "$B/pnmf-dec" -Q "$T/c.pnmf" "$T/c"
    l4=$("$B/pnmf-psnr" "$T/c.mp4" "$T/c/frame_%06d.png")
    check 'echo "$l4" | grep -q "^frames 12 "' "mp4 round trip: $l4"
    ffmpeg -v error -i "$S/life.mkv" -frames:v 6 -c:v mjpeg -q:v 2 "$T/life.avi"
    "$B/pnmf-enc" -Q -w 3 -k 4 "$T/life.avi" "$T/avi.pnmf"
    "$B/pnmf-dec" -Q "$T/avi.pnmf" "$T/avi"
    l7=$("$B/pnmf-psnr" "$T/life.avi" "$T/avi/frame_%06d.png")
    check 'echo "$l7" | grep -q "^frames 6 "' "avi round trip: $l7"
    ffmpeg -v error -i "$S/life.mkv" -frames:v 8 -vf crop=77:53:3:5 "$T/odd.gif"
    "$B/pnmf-enc" -Q -w 4 -k 4 "$T/odd.gif" "$T/odd.pnmf"
    "$B/pnmf-dec" -Q "$T/odd.pnmf" "$T/odd"
    l5=$("$B/pnmf-psnr" "$T/odd.gif" "$T/odd/frame_%06d.png")
    check 'echo "$l5" | grep -q "^frames 8 "' "odd-size gif round trip: $l5"
    wh=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$T/odd/frame_000001.png")
    check '[ "$wh" = "77,53" ]' "odd-size frame is $wh"
fi

finish roundtrip
