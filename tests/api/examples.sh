#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The examples do what the tools do: examples/decode.c writes the bytes
# `pnmf-dec IN -` writes, and examples/encode.c, given a y4m stream, writes
# the bytes `pnmf-enc` writes for the same stream at default settings.
# usage: examples.sh BUILD_DIR DECODE ENCODE SAMPLES_DIR
set -eu
B=$1
DEC=$2
ENC=$3
S=$4
. "$(dirname "$0")/../lib.sh"

"$B/pnmf-enc" -w 20 -q 30 "$S/sprites.mkv" "$T/a.pnmf" 2>/dev/null
"$B/pnmf-dec" "$T/a.pnmf" - > "$T/tool.y4m" 2>/dev/null
"$DEC" "$T/a.pnmf" > "$T/example.y4m"
check 'cmp -s "$T/tool.y4m" "$T/example.y4m"' "examples/decode.c and pnmf-dec differ"
check '[ "$(wc -c < "$T/tool.y4m")" -gt 60000 ]' "pnmf-dec wrote almost nothing"

# encode the decoded frames again, through the example and through the tool
"$ENC" "$T/b.pnmf" < "$T/tool.y4m" 2>/dev/null
"$B/pnmf-enc" "$T/tool.y4m" "$T/c.pnmf" 2>/dev/null
check 'cmp -s "$T/b.pnmf" "$T/c.pnmf"' "examples/encode.c and pnmf-enc differ"

# a bad input: a clear error naming the file, a nonzero exit, no output left
printf 'not a pnmf file' > "$T/bad.pnmf"
check '! "$DEC" "$T/bad.pnmf" > "$T/bad.y4m" 2> "$T/bad.err"' "decode accepted a text file"
check 'grep -q "bad.pnmf: " "$T/bad.err"' "decode's error does not name the file"
check '! printf "YUV4MPEG2 W8 H8 F1:1 Cmono\nFRAME\nshort" | "$ENC" "$T/short.pnmf" 2>/dev/null' \
    "encode accepted a truncated frame"
check '[ ! -e "$T/short.pnmf" ]' "encode left a file behind after an error"
finish examples
