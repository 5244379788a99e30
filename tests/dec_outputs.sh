#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-dec's outputs that need no FFmpeg (md5, y4m, pgm) write the bytes
# pinned here, and, in a build that loads FFmpeg at run time
# (PNMF_DEC_DLOPEN), pnmf-dec neither lists FFmpeg's libraries as needed
# nor loads them for those outputs, while a PNG output loads them and
# writes the same frames.
# usage: dec_outputs.sh PNMF_DEC GOLDEN_GOOD_DIR DLOPEN(0|1)
set -u
DEC=$1
G=$2
DL=$3
. "$(dirname "$0")/lib.sh"
cd "$T" || die "cannot enter $T"
F=$G/sprites_places_v11.pnmf

# the bytes of each output, pinned: the frames' MD5 (as golden.sh pins it),
# the y4m stream and the PGM files (12 frames of 48x32) in order
got=$("$DEC" -Q -f md5 "$F" -)
check '[ "$got" = "$(cat "$G/sprites_places_v11.md5")" ]' "-f md5: $got"
got=$("$DEC" -Q "$F" - | md5sum | cut -c1-32)
check '[ "$got" = 98c35a0ab5c826463f223da8742a1803 ]' "y4m to stdout: md5 $got"
"$DEC" -Q -f pgm "$F" pgm/ || fail "-f pgm: exit $?"
got=$(cat pgm/frame_*.pgm | md5sum | cut -c1-32)
check '[ "$got" = 2e18a3b392ebf486e80287f519d936cd ]' "pgm frames: md5 $got"
check '"$DEC" -Q -f md5 --verify "$(cat "$G/sprites_places_v11.md5")" "$F"' "--verify of the pinned MD5"

# which libraries the process maps (glibc's LD_DEBUG): a PNG output must
# show libavcodec, or this loader says nothing and the check cannot run
if [ "$DL" = 1 ]; then
    if command -v readelf > /dev/null; then
        check '! readelf -d "$DEC" | grep NEEDED | grep -q "libav\|libsw"' "pnmf-dec lists FFmpeg as needed"
    else
        skip "no readelf"
    fi
    LD_DEBUG=files "$DEC" -Q "$F" png/ 2> png.log > /dev/null || fail "-f png: exit $?"
    if grep -q "file=libavcodec" png.log; then
        for fmt in md5 y4m; do
            LD_DEBUG=files "$DEC" -Q -f $fmt "$F" - 2> $fmt.log > /dev/null
            check '! grep -q "file=libav\|file=libsw" $fmt.log' "-f $fmt loads FFmpeg"
        done
        LD_DEBUG=files "$DEC" -Q -f pgm "$F" pgm2/ 2> pgm.log
        check '! grep -q "file=libav\|file=libsw" pgm.log' "-f pgm loads FFmpeg"
    else
        skip "LD_DEBUG=files shows no library loads here"
    fi
    # the PNG frames hold the same pixels as the PGM ones (ffmpeg reads both)
    if command -v ffmpeg > /dev/null; then
        a=$(ffmpeg -v error -i png/frame_%06d.png -f rawvideo -pix_fmt gray - | md5sum | cut -c1-32)
        check '[ "$a" = "$(cat "$G/sprites_places_v11.md5")" ]' "PNG frames: md5 $a"
    else
        skip "no ffmpeg program"
    fi
fi
finish dec_outputs
