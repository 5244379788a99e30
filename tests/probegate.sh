#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The model probe's gate (src/enc_model.c, pnmf_window_probe): on 30 frames
# of natural_vtest (filmed, its blobs never recur within the noise) the
# sprite search's repeat gate finds no sprite animation, and the window goes
# without a model, unprobed; without the sprite layer (no repeat gate) the
# same window is probed, the probe drops the model, and the file is the
# same. On samples/sprites.mkv (exact, its sprites recur) the gate never
# sends a window away unprobed.
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

"$B/pnmf-enc" -v -q 48 --frames 60 "$S/sprites.mkv" "$T/s.pnmf" > "$T/s.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/s.log")"
check '! grep -q "$gate" "$T/s.log"' "samples/sprites.mkv: the gate skipped a probe: $(cat "$T/s.log")"

finish probegate
