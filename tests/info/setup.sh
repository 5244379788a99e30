#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The info tests' fixture: 20 frames of samples/sprites.mkv in two windows
# of 10, and the mosaic of window 1 as PNG and PGM.
# usage: setup.sh BUILD_DIR OUT_DIR SAMPLES_DIR
set -u
B=$1
O=$2
S=$3
. "$(dirname "$0")/../lib.sh"
mkdir -p "$O" || die "cannot create $O"
rm -f "$O/sprites.pnmf" "$O/comp1.png" "$O/comp1.pgm"
"$B/pnmf-enc" -Q --frames 20 -w 10 --iterations 10 --refine 1 --threads 1 --no-residual "$S/sprites.mkv" "$O/sprites.pnmf" ||
    die "encode $S/sprites.mkv"
"$B/pnmf-info" --level 0 --window 1 --components "$O/comp1.png" "$O/sprites.pnmf" > /dev/null || die "pnmf-info PNG mosaic"
"$B/pnmf-info" --level 0 --window 1 --components "$O/comp1.pgm" --components-format pgm "$O/sprites.pnmf" > /dev/null ||
    die "pnmf-info PGM mosaic"
