# SPDX-License-Identifier: GPL-2.0-or-later
# What the shell tests share, sourced after their arguments are read:
#  $T             a temporary directory, removed on exit (made writable
#                 first, for tests that take write permission away);
#  check COND MSG COND is evaluated: true counts a pass, false prints
#                 "FAIL: MSG" on stderr and counts a failure;
#  pass, fail MSG, skip MSG
#                 count a pass, a failure ("FAIL: MSG"), or a check that
#                 cannot run here ("SKIP: MSG");
#  die MSG        a failure the script cannot go on from: "FAIL: MSG", exit 1;
#  expect_exit CODE CMD...
#                 run CMD with stderr in $T/err and its exit status in $got;
#                 true when that is CODE;
#  summary LOG    pnmf-enc's "frames 30  bytes 3918  bpp ...  psnr-y 35.17 dB
#                 ..." -> "3918 35.17";
#  finish NAME    the script's last command: the counts, nonzero when a
#                 check failed.
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
passes=0
skips=0
pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
skip() { echo "SKIP: $*" >&2; skips=$((skips + 1)); }
check() { if eval "$1"; then pass; else fail "$2"; fi; }
die() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() {
    want=$1
    shift
    "$@" 2> "$T/err"
    got=$?
    [ "$got" -eq "$want" ]
}
summary() { sed -n 's/.* bytes \([0-9]*\) .* psnr-y \([0-9.]*\) dB.*/\1 \2/p' "$1"; }
finish() {
    if [ "$skips" -gt 0 ]; then
        echo "$1: $passes passed, $fails failed, $skips skipped"
    else
        echo "$1: $passes passed, $fails failed"
    fi
    [ "$fails" -eq 0 ]
}
