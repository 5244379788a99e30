#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rate control: -q is monotone in bytes and in PSNR-Y across its
# range, --target-psnr lands within 0.5 dB of its target, and the decoder
# shows exactly the PSNR the encoder reports.
# usage: rate.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

# ladder PREFIX CLIP OP Q...: 30 frames of CLIP with the residual layer
# alone (-k 0, fast; $LARGS instead if set) at each Q, into
# $T/PREFIX$Q.pnmf and .log; each point's bytes and PSNR-Y OP ("<" or
# "<=") the previous point's
ladder() {
    pre=$1 clip=$2 op=$3
    shift 3
    prev=""
    for q in "$@"; do
        # shellcheck disable=SC2086
        "$B/pnmf-enc" ${LARGS:--k 0 --frames 30} -q "$q" "$S/$clip" "$T/$pre$q.pnmf" > "$T/$pre$q.log" 2>&1
        check '[ $? -eq 0 ]' "$clip at -q $q failed: $(cat "$T/$pre$q.log")"
        cur=$(summary "$T/$pre$q.log")
        echo "$clip ${LARGS:-} -q $q: $cur"
        if [ -n "$prev" ]; then
            check 'awk "BEGIN{split(\"$prev\", a, \" \"); split(\"$cur\", b, \" \"); exit !(b[1] $op a[1] && b[2] $op a[2])}"' \
                "$clip -q $q ($cur) is not $op the previous point ($prev) in bytes and PSNR-Y"
        fi
        prev=$cur
    done
}

# -q 8..64 in steps of 8: each point no larger and no better (the step
# search of -q 24 codes -q 16's step too, and may keep it where the two
# costs are within a few bytes), and at least 7 of the 8 points differ;
# -q 0 no smaller and no worse than -q 8 (whose pick may keep the
# lossless coding)
ladder q sprites.mkv "<=" 8 16 24 32 40 48 56 64
check '[ "$(for q in 8 16 24 32 40 48 56 64; do summary "$T/q$q.log"; done | sort -u | wc -l)" -ge 7 ]' \
    "sprites.mkv -q 8..64 make fewer than 7 different points"
ladder q sprites.mkv "<=" 0
check 'awk "BEGIN{split(\"$(summary "$T/q8.log")\", a, \" \"); split(\"$(summary "$T/q0.log")\", b, \" \"); exit !(b[1] >= a[1] && b[2] >= a[2])}"' \
    "sprites.mkv -q 0 ($(summary "$T/q0.log")) is smaller or worse than -q 8 ($(summary "$T/q8.log"))"
# below -q 16 each window's coding is picked from its codings at the
# steps of -q 16, 14, ..., 0 (ratectl.h, pnmf_fine_pick): every -q 0..16 on
# x11_penguins, screen content where quantization noise at a step of 1.2
# or 1.4 gray levels breaks the exact repeats that lossless coding finds,
# so a finer -q could cost more bytes than a lossless coding if the pick
# did not weigh both
ladder f devset/x11_penguins.mkv "<=" 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
# the ladder shows something: a -q under 16 is not lossless, so that
# -q 0..16 make at least two different files
check '[ "$(summary "$T/f15.log" | cut -d" " -f2)" != 999.00 ]' "x11_penguins -q 15 is lossless: the test shows nothing"
check '[ "$(for q in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do summary "$T/f$q.log"; done | sort -u | wc -l)" -ge 2 ]' \
    "x11_penguins -q 0..16 make one file: the test shows nothing"
# on camera footage (natural_vtest, whose windows the floor's step codes
# far from exactly, ratectl.h) the search
# below the floor codes the floor's step and one more, -q + 8's or -q 14's: -q
# 1, 3, 5 and 9 code the steps of -q 10, 12, 14 and 14, each point
# no larger and no better than the one before, and at least three differ
ladder n devset/natural_vtest.mkv "<=" 1 3 5 9
check '[ "$(for q in 1 3 5 9; do summary "$T/n$q.log"; done | sort -u | wc -l)" -ge 3 ]' \
    "natural_vtest -q 1..9 make fewer than 3 different points"

# above -q 16 each window's coding is picked from its codings at the
# steps of -q 16, 20, ..., 64 that a search around -q's step makes
# (ratectl.h, pnmf_step_search): a higher -q weighs bytes more and allows
# more error, so it gets fewer bytes and a lower PSNR-Y. Every even -q, and
# odd ones between, so that a pick that sees too few codings shows up
ladder e sprites.mkv "<=" 16 18 20 22 24 26 28 30 32 34 35 36 38 40 42 44 46 47 48 50 52 54 56 58 60 61 62 64
# and at default settings on x11_oneko, whose bytes hardly depend on -q
# (a model probed, none kept): small differences between the steps'
# codings, where an order that is not monotone shows first
LARGS="--frames 60 --threads 1" ladder o devset/x11_oneko.mkv "<=" 24 26 28 30 32 34 36 38 40 42 44 46 48

# and where a window keeps a model: from -q 16 up the model is fitted,
# quantized and weighed as at -q 52 whatever -q is, and the pick is
# offered, at each step, the coding with it or without it, whichever
# costs less at that step (encode.c, model_quality), so the model's steps
# do not move with -q; the sprite layer is offered the same way. samples/sprites.mkv's 60 frames, where the probe
# lets the model through (at 30 frames it does not: PROBE_MARGIN_FIXED),
# with a lighter fit for time (a fit is most of an encode's time), over
# the -q from 36 up
EVEN="36 38 40 42 44 46 48 50 52 54 56 58 60 62 64"
# shellcheck disable=SC2086
LARGS="--iterations 2 --refine 0 --inner 2 --zstd-level 3" ladder m sprites.mkv "<=" $EVEN
with=0
for q in $EVEN; do
    # entries or sprite placements: either model
    n=$("$B/pnmf-info" "$T/m$q.pnmf" | awk '$1 == "all" { gsub(",", ""); print $3 + $8 }')
    [ "${n:-0}" -gt 0 ] && with=$((with + 1))
done
echo "sprites.mkv with a model at $with of the 15 -q"
check '[ $with -ge 8 ]' "a model at $with of the 15 -q only: the ladder above shows little of the model's"

# -q 0 is lossless (pnmf-enc prints 999.00 dB for an exact match), with
# the residual layer alone and over a model
check '[ "$(summary "$T/q0.log" | cut -d" " -f2)" = 999.00 ]' "-q 0 -k 0 is not lossless: $(summary "$T/q0.log")"
"$B/pnmf-enc" -q 0 -k 2 --iterations 3 --refine 0 --frames 20 "$S/sprites.mkv" "$T/m0.pnmf" > "$T/m0.log" 2>&1
check '[ "$(summary "$T/m0.log" | cut -d" " -f2)" = 999.00 ]' "-q 0 with a model is not lossless: $(cat "$T/m0.log")"
# and at default settings where a lossless window costs less than -q 16's
# coding (x11_oneko's second window): -q 0 must stay lossless even when a
# coarser coding is smaller
"$B/pnmf-enc" -q 0 "$S/devset/x11_oneko.mkv" "$T/o0.pnmf" > "$T/o0.log" 2>&1
check '[ "$(summary "$T/o0.log" | cut -d" " -f2)" = 999.00 ]' "x11_oneko -q 0 is not lossless: $(cat "$T/o0.log")"
# the range of -q spans 32 to 45 dB at least, on camera footage where no
# coarse step codes exactly (on samples/sprites.mkv the palette blocks
# make an exact key frame so cheap that even -q 64's pick keeps it)
"$B/pnmf-enc" -k 0 --frames 10 -q 0 "$S/devset/natural_vtest.mkv" "$T/v0.pnmf" > "$T/v0.log" 2>&1
"$B/pnmf-enc" -k 0 --frames 10 -q 64 "$S/devset/natural_vtest.mkv" "$T/v64.pnmf" > "$T/v64.log" 2>&1
check 'awk "BEGIN{split(\"$(summary "$T/v0.log")\", a, \" \"); split(\"$(summary "$T/v64.log")\", b, \" \"); exit !(a[2] >= 45 && b[2] > 0 && b[2] <= 32)}"' \
    "natural_vtest -q 0 .. 64 does not span 32 to 45 dB: $(summary "$T/v0.log"), $(summary "$T/v64.log")"
# and at default settings (a model probed) the quality fades at the
# bottom of the range too
"$B/pnmf-enc" --frames 20 -q 64 "$S/devset/natural_vtest.mkv" "$T/d64.pnmf" > "$T/d64.log" 2>&1
check 'awk "BEGIN{split(\"$(summary "$T/d64.log")\", b, \" \"); exit !(b[2] > 0 && b[2] <= 32)}"' \
    "natural_vtest -q 64 at default settings: $(summary "$T/d64.log"), not 32 dB or lower"
# --target-psnr, without and with a model
for t in 35 40 45; do
    "$B/pnmf-enc" -k 0 --target-psnr "$t" --frames 30 "$S/sprites.mkv" "$T/t$t.pnmf" > "$T/t$t.log" 2>&1
    got=$(summary "$T/t$t.log" | cut -d' ' -f2)
    echo "--target-psnr $t: $got dB"
    check 'awk "BEGIN{d = $got - $t; exit !(d <= 0.5 && d >= -0.5)}"' "--target-psnr $t gave $got dB"
done
"$B/pnmf-enc" -k 2 --iterations 3 --refine 0 -w 10 --target-psnr 42 --frames 20 "$S/sprites.mkv" "$T/tm.pnmf" > "$T/tm.log" 2>&1
got=$(summary "$T/tm.log" | cut -d' ' -f2)
echo "--target-psnr 42 with a model: $got dB"
check 'awk "BEGIN{d = $got - 42; exit !(d <= 0.5 && d >= -0.5)}"' "--target-psnr 42 with a model gave $got dB"
# what the decoder shows is what the encoder reports
"$B/pnmf-dec" -Q -f pgm "$T/tm.pnmf" "$T/frames"
dec=$("$B/pnmf-psnr" --frames 20 "$S/sprites.mkv" "$T/frames/frame_%06d.pgm" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
check 'awk "BEGIN{d = $dec - $got; exit !(d < 0.01 && d > -0.01)}"' "decoded PSNR $dec, encoder said $got"

# --target-psnr needs the residual layer
"$B/pnmf-enc" --no-residual --target-psnr 40 "$S/sprites.mkv" "$T/x.pnmf" 2> "$T/err"
check '[ $? -eq 2 ] && [ ! -e "$T/x.pnmf" ]' "--target-psnr with --no-residual: $(cat "$T/err")"
"$B/pnmf-enc" --target-psnr 5 "$S/sprites.mkv" "$T/x.pnmf" 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- --target-psnr "$T/err"' "--target-psnr 5: $(cat "$T/err")"

finish rate
