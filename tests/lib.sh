# SPDX-License-Identifier: GPL-2.0-or-later
# What the shell tests share, sourced after their arguments are read: a
# temporary directory $T, removed on exit; check COND MESSAGE (COND is
# evaluated; when false, "FAIL: MESSAGE" on stderr); summary LOG (pnmf-enc's
# "frames 30  bytes 3918  bpp ...  psnr-y 35.17 dB ..." -> "3918 35.17");
# finish NAME, the script's last command (the counts; nonzero when a check
# failed).
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
check() { if eval "$1"; then passes=$((passes + 1)); else echo "FAIL: $2" >&2; fails=$((fails + 1)); fi; }
summary() { sed -n 's/.* bytes \([0-9]*\) .* psnr-y \([0-9.]*\) dB.*/\1 \2/p' "$1"; }
finish() { echo "$1: $passes passed, $fails failed"; [ "$fails" -eq 0 ]; }
# die MESSAGE: a failure the rest of the script cannot go on from.
die() { echo "FAIL: $*" >&2; exit 1; }
