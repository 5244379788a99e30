#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The step search's tie rule (src/enc_rate.c, choose_step, PNMF_PICK_TIE):
# a window coded with its sprite layer and with the residual layer alone
# (two families) whose costs at the first step the search codes both at
# lie under 5 % apart codes the family offered there alone at the later
# steps. povray_spline's first 30 frames in windows of 15 (exact rendered
# content: its layer and the residual layer alone cost within 2 % of each
# other) at -q 45: the tie is found at -q 44's step (-q 16's codings are
# held from the sprite step) and -q 40's is coded once; the same file on
# two threads. In one window of 30 frames the sprite step weighs the two
# families on its first 15 (src/enc_sprite.c, PNMF_SPRITE_EARLY_TIE): the
# lower alone goes on, and the pick codes -q 44's step once.
# samples/sprites.mkv, whose layer costs a fifth
# of the residual layer alone: no tie; both families at -q 16's and -q 44's
# steps, where the layer is ahead by over PNMF_PICK_CLEAR at both, then the
# layer alone (-q 40's step coded once).
# usage: familytie.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

"$B/pnmf-enc" -vv -y --threads 1 -q 45 --frames 30 -w 15 "$S/devset/povray_spline.mkv" "$T/p1.pnmf" > "$T/p1.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/p1.log")"
check 'grep -q "window 0: the two families tie at -q 44 " "$T/p1.log"' \
    "povray_spline -q 45: no tie at -q 44: $(grep "step of" "$T/p1.log")"
check '[ "$(grep -c "window 0: step of -q 44 with" "$T/p1.log")" -eq 2 ]' \
    "povray_spline -q 45: -q 44's step not coded with and without the layer: $(grep "step of" "$T/p1.log")"
check '[ "$(grep -c "window 0: step of -q 40 with" "$T/p1.log")" -eq 1 ]' \
    "povray_spline -q 45: -q 40's step not coded once: $(grep "step of" "$T/p1.log")"
"$B/pnmf-enc" -Q -y --threads 2 -q 45 --frames 30 -w 15 "$S/devset/povray_spline.mkv" "$T/p2.pnmf"
check 'cmp -s "$T/p1.pnmf" "$T/p2.pnmf"' "povray_spline -q 45: two threads write another file"
"$B/pnmf-dec" "$T/p1.pnmf" "$T/p1.y4m" > /dev/null 2>&1
check '[ $? -eq 0 ]' "povray_spline -q 45: the file does not decode"

# one window of 30 frames: the families weighed on 15 by the sprite step
"$B/pnmf-enc" -vv -y --threads 1 -q 45 --frames 30 "$S/devset/povray_spline.mkv" "$T/e1.pnmf" > "$T/e1.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/e1.log")"
check 'grep -q "window 0: on 15 frames the layer costs" "$T/e1.log"' \
    "povray_spline -q 45, 30 frames: the families not weighed on 15: $(grep "sprites" "$T/e1.log")"
check '! grep -q "families tie" "$T/e1.log"' "povray_spline -q 45, 30 frames: a tie in the pick: $(grep tie "$T/e1.log")"
check '[ "$(grep -c "window 0: step of -q 44" "$T/e1.log")" -eq 1 ]' \
    "povray_spline -q 45, 30 frames: -q 44's step not coded once: $(grep "step of" "$T/e1.log")"
"$B/pnmf-enc" -Q -y --threads 2 -q 45 --frames 30 "$S/devset/povray_spline.mkv" "$T/e2.pnmf"
check 'cmp -s "$T/e1.pnmf" "$T/e2.pnmf"' "povray_spline -q 45, 30 frames: two threads write another file"
"$B/pnmf-dec" "$T/e1.pnmf" "$T/e1.y4m" > /dev/null 2>&1
check '[ $? -eq 0 ]' "povray_spline -q 45, 30 frames: the file does not decode"

# -q 16 codes one step: nothing to tie
"$B/pnmf-enc" -vv -y -q 16 --frames 30 "$S/devset/povray_spline.mkv" "$T/p16.pnmf" > "$T/p16.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/p16.log")"
check '! grep -q "families tie" "$T/p16.log"' "povray_spline -q 16: a tie: $(grep tie "$T/p16.log")"

# far apart: both families at each step
"$B/pnmf-enc" -vv -y -q 45 "$S/sprites.mkv" "$T/s.pnmf" > "$T/s.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(tail -3 "$T/s.log")"
check '! grep -q "families tie" "$T/s.log"' "sprites -q 45: a tie: $(grep tie "$T/s.log")"
check 'grep -q "window 0: step of -q 44 without the model" "$T/s.log"' \
    "sprites -q 45: -q 44 coded without the residual layer alone: $(grep "step of" "$T/s.log")"
check 'grep -q "window 0: with the model ahead by [0-9.]* at -q 44: alone on" "$T/s.log"' \
    "sprites -q 45: the layer not alone after -q 44: $(grep "step of" "$T/s.log")"
check '[ "$(grep -c "window 0: step of -q 40 with" "$T/s.log")" -eq 1 ] && ! grep -q "step of -q 40 without" "$T/s.log"' \
    "sprites -q 45: -q 40's step not coded with the layer alone: $(grep "step of" "$T/s.log")"

finish familytie
