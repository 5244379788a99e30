#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Window flags bit 21 (docs/format.md, "Long-term reference"): the first
# 40 frames of povray_spline (a rendered camera whose views come back) at
# -q 40 without a model are one window with the bit (pnmf-info's tool k; a
# reader of version 18 or, with the restoration filter, 19, or, with pixel
# levels in the sample-context stream at its step, 21),
# blocks of frames after the 16th predict from the key frame through
# reference 15 (side_bits' t column), and the file decodes to the PSNR-Y
# the encoder measured.
# usage: lterm.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

"$B/pnmf-enc" -y -q 40 -k 0 --frames 40 "$S/devset/povray_spline.mkv" "$T/l.pnmf" > "$T/l.log" 2>&1
check '[ $? -eq 0 ]' "encode: $(cat "$T/l.log")"
"$B/pnmf-info" "$T/l.pnmf" > "$T/info.txt" 2>&1
check 'grep -q "^version *[0-9]* (needs a reader of version \(1[89]\|21\)" "$T/info.txt"' "not a file for readers of version 18 on: $(head -3 "$T/info.txt")"
check 'awk "\$1 == 0 && \$5 ~ /k/ { f = 1 } END { exit !f }" "$T/info.txt"' "window 0 without tool k: $(cat "$T/info.txt")"
"$B/side_bits" "$T/l.pnmf" "$T/l.csv" > /dev/null 2>&1
far=$(awk -F, 'NR > 1 && $2 >= 17 && $8 == 15' "$T/l.csv" | wc -l)
check '[ "$far" -gt 0 ]' "no block of frames 17 on predicts from reference 15"
"$B/pnmf-dec" -y "$T/l.pnmf" "$T/l.y4m" > /dev/null 2>&1
check '[ $? -eq 0 ]' "decode"
enc=$(summary "$T/l.log" | cut -d' ' -f2)
dec=$("$B/pnmf-psnr" --frames 40 "$S/devset/povray_spline.mkv" "$T/l.y4m" | sed 's/.*psnr-y \([0-9.]*\) .*/\1/')
check 'awk "BEGIN { d = $enc - $dec; exit !(d < 0.01 && d > -0.01) }"' "encoder $enc dB, decoded $dec dB"
finish lterm
