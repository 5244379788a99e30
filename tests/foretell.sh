#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The step search's foretold finer walk (src/ratectl.c, PNMF_PICK_AHEAD;
# src/enc_rate.c): above -q 16 a finer step is not coded where its cost,
# foretold from the last two codings, cannot beat the finest made; not on
# a screen. povray_spline's first 60 frames at -q 45 (rendered): -q 44's
# and -q 40's steps, not -q 36's (whose cost the foretelling puts above
# -q 40's). x11_fishtank's first 60 frames at -q 45 (a screen capture, whose
# error falls faster from -q 36's step to -q 32's than from -q 40's to
# -q 36's): the walk goes on to -q 28's step, and -q 32's wins; the
# screen's window is first coded at -q 16's step (the pick's floor).
# povray_spline's first 30 frames at -q 45 in windows of 15 (rendered,
# with a sprite layer; src/enc_internal.h, enc_pick_from_lo; windows too
# short for the families to be weighed on their first frames,
# tests/familytie.sh): the sprite step weighs the layer at -q 44's step,
# the search reuses both of its codings there (the same error) and codes
# nothing at -q 16's.
# usage: foretell.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

"$B/pnmf-enc" -vv -y --threads 1 -q 45 --frames 60 "$S/devset/povray_spline.mkv" "$T/k.pnmf" > "$T/k.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/k.log")"
check 'grep -q "window 0: step of -q 40:" "$T/k.log"' "povray_spline -q 45: -q 40 not coded: $(grep "step of" "$T/k.log")"
check '! grep -q "window 0: step of -q 36:" "$T/k.log"' "povray_spline -q 45: -q 36 coded: $(grep "step of" "$T/k.log")"

"$B/pnmf-enc" -vv -y --threads 1 -q 45 --frames 60 "$S/devset/x11_fishtank.mkv" "$T/f.pnmf" > "$T/f.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/f.log")"
check 'grep -q "window 0: step of -q 28 with" "$T/f.log"' "x11_fishtank -q 45: -q 28 not coded: $(grep "step of" "$T/f.log")"
check 'grep -q "window 0: the step of -q 32" "$T/f.log"' "x11_fishtank -q 45: not -q 32's step: $(grep "the step" "$T/f.log")"
check 'grep -q "window 0: step of -q 16 with" "$T/f.log"' "x11_fishtank -q 45: -q 16 not coded: $(grep "step of" "$T/f.log")"

"$B/pnmf-enc" -vv -y --threads 1 -q 45 --frames 30 -w 15 "$S/devset/povray_spline.mkv" "$T/p.pnmf" > "$T/p.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/p.log")"
check '! grep -q "step of -q 16" "$T/p.log"' "povray_spline -q 45: -q 16 coded: $(grep "step of" "$T/p.log")"
# the sprite step's errors with the layer and without, as the search's at -q 44
e=$(sed -n 's/^window 0: with the model [0-9]* bytes, sse \([0-9]*\); without [0-9]* bytes, sse \([0-9]*\)$/\1 \2/p' "$T/p.log")
s1=$(sed -n 's/^window 0: step of -q 44 with the model: [0-9]* bytes, sse \([0-9]*\).*/\1/p' "$T/p.log")
s2=$(sed -n 's/^window 0: step of -q 44 without the model: [0-9]* bytes, sse \([0-9]*\).*/\1/p' "$T/p.log")
check '[ -n "$e" ] && [ "$e" = "$s1 $s2" ]' "povray_spline -q 45: sprite step $e, -q 44's step $s1 $s2"
finish foretell
