#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The model probe's gate (src/enc_model.c, pnmf_window_probe): on 30 frames
# of natural_vtest (filmed, its blobs never recur within the noise) the
# sprite search's repeat gate finds no sprite animation, and the window goes
# without a model, unprobed; without the sprite layer (no repeat gate) the
# same window is probed, the probe drops the model, and the file is the
# same. At -q 45 such a window's step search also goes without -q 16's
# coding and keeps the step the probed window keeps.
# usage: probegate.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"
gate="no model (no sprite animation"

"$B/pnmf-enc" -v --frames 30 "$S/devset/natural_vtest.mkv" "$T/g.pnmf" > "$T/g.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/g.log")"
check 'grep -q "window 0: $gate" "$T/g.log"' "natural_vtest: the gate did not skip the probe: $(cat "$T/g.log")"
check '! grep -q "probe:" "$T/g.log"' "natural_vtest: a window was probed: $(cat "$T/g.log")"
"$B/pnmf-enc" -v --no-sprites --frames 30 "$S/devset/natural_vtest.mkv" "$T/n.pnmf" > "$T/n.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/n.log")"
check 'grep -q "window 0: probe: no model" "$T/n.log"' "natural_vtest --no-sprites: no probe, or it kept a model: $(cat "$T/n.log")"
check 'cmp -s "$T/g.pnmf" "$T/n.pnmf"' "natural_vtest: the unprobed window differs from the probed one"

# -q 45 (src/enc_rate.c, choose_step's no_floor): the unprobed window's
# step search goes without -q 16's coding, the probed one makes it, and
# both keep the same step: the same file
"$B/pnmf-enc" -vv -q 45 --frames 30 "$S/devset/natural_vtest.mkv" "$T/g45.pnmf" > "$T/g45.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/g45.log")"
check '! grep -q "step of -q 16:" "$T/g45.log"' "natural_vtest -q 45: -q 16's step coded: $(cat "$T/g45.log")"
check 'grep -q "step of -q 44:" "$T/g45.log"' "natural_vtest -q 45: -q 44's step not coded: $(cat "$T/g45.log")"
"$B/pnmf-enc" -vv --no-sprites -q 45 --frames 30 "$S/devset/natural_vtest.mkv" "$T/n45.pnmf" > "$T/n45.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/n45.log")"
check 'grep -q "step of -q 16:" "$T/n45.log"' "natural_vtest -q 45 --no-sprites: -q 16's step not coded: $(cat "$T/n45.log")"
check 'cmp -s "$T/g45.pnmf" "$T/n45.pnmf"' "natural_vtest -q 45: the search without -q 16's coding kept another step"

# sprite animation through a lossy codec: x11_fishtank's frames 60..119
# through x264 (CRF 23). A fifth of its blobs recur exactly, over a quarter
# within the coding noise (sprite_find.c's near recurrences): the pose
# search runs, and no window goes unprobed for want of sprite animation.
if command -v ffmpeg >/dev/null; then
    ffmpeg -v error -i "$S/devset/x11_fishtank.mkv" -vf "trim=start_frame=60:end_frame=120,setpts=PTS-STARTPTS" \
        -c:v libx264 -crf 23 -pix_fmt yuv420p "$T/fish.mkv"
    check '[ $? -eq 0 ]' "ffmpeg could not make the x264 copy of x11_fishtank"
    "$B/pnmf-enc" -vv -q 45 "$T/fish.mkv" "$T/f.pnmf" > "$T/f.log" 2>&1
    check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/f.log")"
    check 'grep -q "window 0: .* blobs of 8 pixels or more recur: pose search" "$T/f.log"' \
        "x11_fishtank through x264: no pose search: $(grep -m1 recur "$T/f.log")"
    check '! grep -q "$gate" "$T/f.log"' "x11_fishtank through x264: the gate skipped a probe"
else
    skip "no ffmpeg program: the lossy sprite clip is not made"
fi

finish probegate
