#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The command line: --help, bad options, bad input, corrupt files, and no
# half-written output.
# usage: cli.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
. "$(dirname "$0")/lib.sh"

# --help lists every option with its default
"$B/pnmf-enc" --help > "$T/help" 2>&1
check '[ $? -eq 0 ]' "pnmf-enc --help failed"
for o in --components --window --quality --shift --canvas-pad --signed --unsigned --residual --no-residual --target-psnr --algo --iterations --inner --restarts --seed --threads --zstd-level --frames --start-number --strict --loglevel; do
    check 'grep -q -- "$o" "$T/help"' "pnmf-enc --help does not list $o"
done
check '[ "$(grep -c "default" "$T/help")" -ge 11 ]' "pnmf-enc --help does not give the defaults"
"$B/pnmf-dec" --help > "$T/dhelp" 2>&1
check '[ $? -eq 0 ] && grep -q -- --format "$T/dhelp" && grep -q -- --start "$T/dhelp" && grep -q -- --codec "$T/dhelp"' "pnmf-dec --help"

# bad options: exit 2 and a message naming the option
# each: the command, the option its message must name
while read -r opt args; do
    # shellcheck disable=SC2086
    expect_exit 2 "$B/pnmf-enc" $args "$S/life.mkv" "$T/x.pnmf"
    check '[ "$got" -eq 2 ] && grep -q -- "$opt" "$T/err"' "pnmf-enc $args: exit $got: $(cat "$T/err")"
done <<EOF2
--components -k 256
--shift --shift sideways
--target-psnr --target-psnr 5
--residual --shift vector --residual
--two-level --two-level 2 -k 4
EOF2
expect_exit 2 "$B/pnmf-enc" "$S/life.mkv"
check '[ "$got" -eq 2 ]' "pnmf-enc with one argument: exit $got"
check '[ ! -e "$T/x.pnmf" ]' "a failed command left an output file"

# the library's messages: none on stderr unless asked (-v, -vv or PNMF_DEBUG)
(unset PNMF_DEBUG; "$B/pnmf-enc" -Q --frames 4 -w 2 -k 2 "$S/life.mkv" "$T/v.pnmf" 2> "$T/err")
check '[ $? -eq 0 ] && [ ! -s "$T/err" ]' "pnmf-enc -Q wrote on stderr: $(cat "$T/err")"
"$B/pnmf-enc" -vv -Q --frames 4 -w 2 -k 2 "$S/life.mkv" "$T/vv.pnmf" 2> "$T/err"
check '[ $? -eq 0 ] && cmp -s "$T/v.pnmf" "$T/vv.pnmf"' "pnmf-enc -vv: another file or an error: $(cat "$T/err")"

# unreadable input: exit 3, one line naming the file
"$B/pnmf-enc" "$T/missing.mp4" "$T/x.pnmf" 2> "$T/err"
check '[ $? -eq 3 ] && grep -q "missing.mp4" "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ]' "missing input: $(cat "$T/err")"
check '[ ! -e "$T/x.pnmf" ]' "a failed encode left an output file"

# a frame size change mid-stream is an error, and an existing target is
# left untouched
if command -v ffmpeg >/dev/null; then
    mkdir "$T/seq"
    ffmpeg -v error -i "$S/life.mkv" -frames:v 3 "$T/seq/f_%03d.png"
    ffmpeg -v error -i "$S/life.mkv" -frames:v 1 -vf scale=64:48 -y "$T/seq/f_004.png"
    echo "precious" > "$T/keep.pnmf"
    "$B/pnmf-enc" -y -w 2 "$T/seq/f_%03d.png" "$T/keep.pnmf" 2> "$T/err"
    check '[ $? -eq 3 ] && grep -q "f_%03d.png" "$T/err"' "size change: $(cat "$T/err")"
    check '[ "$(cat "$T/keep.pnmf")" = "precious" ]' "a failed encode touched the existing target"
    check '[ -z "$(ls -A "$T/seq" | grep tmp)" ] && [ -z "$(ls -A "$T" | grep tmp)" ]' "temporary files left behind"
fi

# corrupt files: truncated, one flipped byte, not a pnmf file: exit 4 with the file named
"$B/pnmf-enc" -Q --frames 8 -w 4 -k 3 "$S/life.mkv" "$T/ok.pnmf"
check '[ $? -eq 0 ]' "encode life.mkv"
size=$(wc -c < "$T/ok.pnmf")
head -c $((size / 2)) "$T/ok.pnmf" > "$T/trunc.pnmf"
"$B/pnmf-dec" "$T/trunc.pnmf" "$T/out1" 2> "$T/err"
check '[ $? -eq 4 ] && grep -q "trunc.pnmf" "$T/err"' "truncated file: $(cat "$T/err")"
for pos in 20 $((size / 2)) $((size - 30)); do
    cp "$T/ok.pnmf" "$T/flip.pnmf"
    printf '\377' | dd of="$T/flip.pnmf" bs=1 seek=$pos conv=notrunc 2>/dev/null
    cmp -s "$T/ok.pnmf" "$T/flip.pnmf" || {
        "$B/pnmf-dec" -y "$T/flip.pnmf" "$T/out2" 2> "$T/err"
        check '[ $? -eq 4 ] && grep -q "flip.pnmf" "$T/err"' "byte $pos flipped: $(cat "$T/err")"
    }
done
"$B/pnmf-dec" "$S/make_samples.sh" "$T/out3" 2> "$T/err"
check '[ $? -eq 4 ]' "not a pnmf file: $(cat "$T/err")"
"$B/pnmf-dec" "$T/nothere.pnmf" "$T/out4" 2> "$T/err"
check '[ $? -eq 3 ] && grep -q nothere.pnmf "$T/err"' "missing .pnmf: $(cat "$T/err")"

# -f md5: the MD5 of the frames' pixel bytes, as md5sum computes it from the
# y4m stream with its stream header and FRAME lines cut out; --verify
# accepts that hash and rejects another (exit 1, both hashes named)
"$B/pnmf-dec" -Q -f y4m "$T/ok.pnmf" "$T/ok.y4m"
check '[ $? -eq 0 ]' "decode to y4m"
w=$(head -1 "$T/ok.y4m" | sed 's/.* W\([0-9]*\) .*/\1/')
h=$(head -1 "$T/ok.y4m" | sed 's/.* H\([0-9]*\) .*/\1/')
tail -c +$(($(head -1 "$T/ok.y4m" | wc -c) + 1)) "$T/ok.y4m" > "$T/frames"
n=$(($(wc -c < "$T/frames") / (6 + w * h)))
i=0
while [ $i -lt $n ]; do
    tail -c +$((i * (6 + w * h) + 7)) "$T/frames" | head -c $((w * h))
    i=$((i + 1))
done | md5sum | cut -d' ' -f1 > "$T/want.md5"
check '[ $n -eq 8 ]' "the y4m stream has $n frames, not 8"
"$B/pnmf-dec" -Q -f md5 "$T/ok.pnmf" > "$T/got.md5"
check '[ $? -eq 0 ] && cmp -s "$T/want.md5" "$T/got.md5"' "-f md5 printed $(cat "$T/got.md5"), md5sum of the pixels $(cat "$T/want.md5")"
"$B/pnmf-dec" -Q -f md5 "$T/ok.pnmf" "$T/file.md5"
check 'cmp -s "$T/want.md5" "$T/file.md5"' "-f md5 OUTPUT wrote $(cat "$T/file.md5")"
"$B/pnmf-dec" -Q -f md5 --verify "$(cat "$T/want.md5")" "$T/ok.pnmf" > "$T/out" 2> "$T/err"
check '[ $? -eq 0 ] && [ ! -s "$T/out" ] && [ ! -s "$T/err" ]' "--verify with the right hash: $(cat "$T/err")"
"$B/pnmf-dec" -Q -f md5 --verify 0123456789abcdef0123456789abcdef "$T/ok.pnmf" 2> "$T/err"
check '[ $? -eq 1 ] && grep -q "0123456789abcdef0123456789abcdef" "$T/err" && grep -q "$(cat "$T/want.md5")" "$T/err"' "--verify with a wrong hash: $(cat "$T/err")"
"$B/pnmf-dec" -Q -f md5 --verify 12345 "$T/ok.pnmf" 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- "--verify" "$T/err"' "--verify 12345: $(cat "$T/err")"
"$B/pnmf-dec" -Q -f pgm --verify "$(cat "$T/want.md5")" "$T/ok.pnmf" "$T/o6" 2> "$T/err"
check '[ $? -eq 2 ] && grep -q -- "-f md5" "$T/err"' "--verify without -f md5: $(cat "$T/err")"

# an input that cannot be read is exit 3 for every tool; an output that cannot be written, 5
mkdir "$T/adir"
"$B/pnmf-dec" "$T/adir" "$T/out5" 2> "$T/err"
check '[ $? -eq 3 ] && grep -q adir "$T/err"' "pnmf-dec on a directory: $(cat "$T/err")"
"$B/pnmf-psnr" "$T/nothere.mkv" "$S/life.mkv" > /dev/null 2> "$T/err"
check '[ $? -eq 3 ] && grep -q nothere.mkv "$T/err"' "pnmf-psnr on a missing file: $(cat "$T/err")"
"$B/pnmf-enc" -Q --frames 2 "$S/life.mkv" "$T/no/such/dir/x.pnmf" 2> "$T/err"
check '[ $? -eq 5 ] && grep -q "no/such/dir/x.pnmf" "$T/err"' "unwritable output: $(cat "$T/err")"

finish cli
