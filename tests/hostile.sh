#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile input for pnmf-dec and pnmf-enc. Every run must
# exit with its documented code (README, "Exit codes"), print one line on
# stderr naming the file, never crash (no exit >= 128 unless a test sends
# the signal, no sanitizer report), and leave nothing half-written: frame
# files present are complete, no temporary file remains, an existing
# target is untouched.
#
# Hand-made bad .pnmf files (wrong magic, empty, 3 bytes, text, png and mp4
# renamed, versions, reserved bits, sizes 0 / 65535x65535 / products past 64
# bits, k = 0 and 2^31, a missing component, a shift outside the torus,
# windows not adding up, zstd claiming a huge size, the decode work limit)
# are tests/golden/bad/, checked by tests/golden/golden.sh; here they are
# decoded again to PNG and y4m for the no-half-written-output rules.
#
# usage: hostile.sh BUILD_DIR SAMPLES_DIR
set -u
B=$1
S=$2
G=$(dirname "$0")/golden
ENC=$B/pnmf-enc
DEC=$B/pnmf-dec
. "$(dirname "$0")/lib.sh"
is_root() { [ "$(id -u)" -eq 0 ]; }

# ---- checks ----

# No sanitizer report, no crash: $1 exit code, $2 stderr file.
sane() {
    [ "$1" -lt 128 ] && ! grep -q -e 'Sanitizer' -e 'runtime error:' "$2"
}

# Complete frame files only, no temporary files: PGM has its header and
# exactly width*height bytes, PNG ends with its IEND chunk.
frames_complete() {
    d=$1
    [ -d "$d" ] || return 0
    ! ls -A "$d" | grep -q tmp || return 1
    for f in "$d"/frame_*; do
        [ -e "$f" ] || continue
        case "$f" in
        *.pgm)
            set -- $(head -c 20 "$f" | tr '\n' ' ')
            [ "$1" = P5 ] || return 1
            hl=$(printf 'P5\n%s %s\n255\n' "$2" "$3" | wc -c)
            [ "$(wc -c < "$f")" -eq $((hl + $2 * $3)) ] || return 1 ;;
        *.png)
            [ "$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] || return 1 ;;
        *) return 1 ;;
        esac
    done
}

# run EXPECTED_CODE NAME_IN_MESSAGE CMD...: the exit code, one sane line on
# stderr naming NAME_IN_MESSAGE. Sets $msg.
run() {
    want=$1 name=$2
    shift 2
    "$@" > /dev/null 2> "$T/err"
    got=$?
    msg=$(cat "$T/err")
    if ! sane $got "$T/err"; then fail "$* crashed (exit $got): $msg"; return 1; fi
    if [ $got -ne "$want" ]; then fail "$*: exit $got, expected $want: $msg"; return 1; fi
    # FFmpeg's own log lines ("[mov,mp4,... @ 0x...] moov atom not found")
    # would come ahead of pnmf-enc's line; FFmpeg prints only fatal errors by
    # default (tools/input/avlog.c), and those are not counted
    lines=$(grep -cv '^\[.* @ 0x[0-9a-f]*\] ' "$T/err")
    if [ "$want" -ne 0 ] && { [ "$lines" -ne 1 ] || ! tail -n 1 "$T/err" | grep -qF -- "$name"; }; then
        fail "$*: expected one line naming $name: $msg"
        return 1
    fi
    return 0
}

no_tmp_in() { ! ls -A "$1" | grep -q tmp; }

# ---- pnmf-dec: truncation and a flipped bit at every byte offset ----

small=$G/good/tiny_2windows.pnmf   # 345 bytes, 4 frames of 15x11 in 2 windows
size=$(wc -c < "$small")
bad_trunc=0
i=0
while [ $i -lt "$size" ]; do
    head -c $i "$small" > "$T/cut.pnmf"
    rm -rf "$T/o"
    "$DEC" -Q -f pgm "$T/cut.pnmf" "$T/o" > /dev/null 2> "$T/err"
    got=$?
    if [ $got -ne 4 ] || ! sane $got "$T/err" || [ "$(wc -l < "$T/err")" -ne 1 ] || ! frames_complete "$T/o"; then
        fail "truncated to $i bytes: exit $got: $(cat "$T/err")"
        bad_trunc=$((bad_trunc + 1))
    fi
    i=$((i + 1))
done
[ $bad_trunc -eq 0 ] && pass
echo "hostile: $size truncations, $bad_trunc bad"

bad_flip=0
i=0
while [ $i -lt "$size" ]; do
    cp "$small" "$T/flip.pnmf"
    byte=$(od -An -tu1 -j $i -N1 "$small" | tr -d ' ')
    printf "$(printf '\\%03o' $((byte ^ (1 << (i % 8)))))" |
        dd of="$T/flip.pnmf" bs=1 seek=$i conv=notrunc 2>/dev/null
    rm -rf "$T/o"
    "$DEC" -Q -f pgm "$T/flip.pnmf" "$T/o" > /dev/null 2> "$T/err"
    got=$?
    if [ $got -ne 4 ] || ! sane $got "$T/err" || [ "$(wc -l < "$T/err")" -ne 1 ] || ! frames_complete "$T/o"; then
        fail "bit $((i % 8)) of byte $i flipped: exit $got: $(cat "$T/err")"
        bad_flip=$((bad_flip + 1))
    fi
    i=$((i + 1))
done
[ $bad_flip -eq 0 ] && pass
echo "hostile: $size bit flips, $bad_flip bad"

# A truncation part-way: the frames before the damage are written, complete,
# and the message names the frame that failed.
head -c $((size - 20)) "$small" > "$T/late.pnmf"
rm -rf "$T/o"
run 4 "after the last frame (4)" "$DEC" -Q "$T/late.pnmf" "$T/o" && frames_complete "$T/o" &&
    [ "$(ls "$T/o" | grep -c 'frame_.*png$')" -eq 4 ] && pass || fail "late truncation: $msg"
head -c 200 "$small" > "$T/mid.pnmf"
rm -rf "$T/o"
run 4 "frame 3" "$DEC" -Q "$T/mid.pnmf" "$T/o" && frames_complete "$T/o" &&
    [ "$(ls "$T/o" | grep -c 'frame_.*png$')" -eq 2 ] && pass || fail "truncation in window 2: $msg"

# Every bad golden file again, to PNG and to y4m: no half-written output,
# and an existing y4m file is left as it was.
for f in "$G"/bad/*.pnmf; do
    rm -rf "$T/o"
    "$DEC" -Q "$f" "$T/o" > /dev/null 2> "$T/err"
    got=$?
    { sane $got "$T/err" && [ $got -ne 0 ] && frames_complete "$T/o"; } && pass ||
        fail "$(basename "$f") to png: exit $got: $(cat "$T/err")"
    echo precious > "$T/keep.y4m"
    "$DEC" -Q -y -f y4m "$f" "$T/keep.y4m" > /dev/null 2> "$T/err"
    got=$?
    { sane $got "$T/err" && [ $got -ne 0 ] && [ "$(cat "$T/keep.y4m")" = precious ] && no_tmp_in "$T"; } && pass ||
        fail "$(basename "$f") to y4m: exit $got, $(cat "$T/err")"
done

# ---- pnmf-dec: input and output ----

run 3 nothere.pnmf "$DEC" "$T/nothere.pnmf" "$T/o" && pass
mkdir -p "$T/adir"
run 3 adir "$DEC" "$T/adir" "$T/o" && pass
cp "$small" "$T/locked.pnmf"
chmod 000 "$T/locked.pnmf"
if is_root; then skip "unreadable input: running as root, which reads any file"
else run 3 locked.pnmf "$DEC" "$T/locked.pnmf" "$T/o" && pass; fi
rm -rf "$T/new"
run 0 "" "$DEC" -Q "$small" "$T/new/deeper/frames" &&
    [ "$(ls "$T/new/deeper/frames" | wc -l)" -eq 4 ] && pass || fail "missing OUTDIR not created"
touch "$T/afile"
run 5 afile "$DEC" -Q "$small" "$T/afile" && pass
run 5 afile/x "$DEC" -Q "$small" "$T/afile/x" && pass
mkdir -p "$T/ro"
chmod 555 "$T/ro"
if is_root; then skip "read-only OUTDIR: running as root, which writes anywhere"
else
    run 5 ro "$DEC" -Q -f pgm "$small" "$T/ro" && no_tmp_in "$T/ro" && pass
    run 5 ro/x.y4m "$DEC" -Q "$small" "$T/ro/x.y4m" && pass
fi
# A full disk: a file-size limit of 0 for the frame files, then one smaller
# than the y4m stream (4 blocks of 512 or 1024 bytes; the stream is 7021).
rm -rf "$T/o"
(ulimit -f 0; exec "$DEC" -Q -f pgm "$G/good/sprites_torus.pnmf" "$T/o") > /dev/null 2> "$T/err"
got=$?
{ [ $got -eq 5 ] && sane $got "$T/err" && frames_complete "$T/o"; } && pass ||
    fail "full disk, pgm: exit $got: $(cat "$T/err")"
echo precious > "$T/full.y4m"
(ulimit -f 4; exec "$DEC" -Q -y -f y4m "$G/good/sprites_torus.pnmf" "$T/full.y4m") > /dev/null 2> "$T/err"
got=$?
{ [ $got -eq 5 ] && sane $got "$T/err" && [ "$(cat "$T/full.y4m")" = precious ] && no_tmp_in "$T"; } && pass ||
    fail "full disk, y4m: exit $got: $(cat "$T/err")"
# nonsense options
for o in "--start -1" "--start x" "--frames -1" "--frames 1e3" "-f tiff" "--start 99"; do
    run 2 "" "$DEC" $o "$small" "$T/o" && pass
done

# ---- pnmf-enc: input ----

echo "This is a text file, not a video." > "$T/text.mp4"
cp "$G/bad/png_renamed.pnmf" "$T/broken.png"
printf 'YUV4MPEG2 W16 H16 F25:1 Ip A1:1 Cmono\n' > "$T/zero.y4m"
run 3 nothere.mkv "$ENC" "$T/nothere.mkv" "$T/x.pnmf" && pass
run 3 adir "$ENC" "$T/adir" "$T/x.pnmf" && pass
run 3 text.mp4 "$ENC" "$T/text.mp4" "$T/x.pnmf" && pass
run 3 zero.y4m "$ENC" "$T/zero.y4m" "$T/x.pnmf" && pass
cp "$small" "$T/small.pnmf"
run 3 small.pnmf "$ENC" "$T/small.pnmf" "$T/x.pnmf" && pass # not a clip FFmpeg reads
cp "$S/life.mkv" "$T/locked.mkv"
chmod 000 "$T/locked.mkv"
if is_root; then skip "unreadable encoder input: running as root, which reads any file"
else run 3 locked.mkv "$ENC" "$T/locked.mkv" "$T/x.pnmf" && pass; fi
if command -v ffmpeg > /dev/null; then
    ffmpeg -v error -f lavfi -i sine=frequency=440:duration=0.2 -y "$T/audio.wav" &&
        run 3 audio.wav "$ENC" "$T/audio.wav" "$T/x.pnmf" && pass
    mkdir -p "$T/seq"
    ffmpeg -v error -i "$S/life.mkv" -frames:v 2 -vf scale=16:12 -y "$T/seq/f_%03d.png" &&
        ffmpeg -v error -i "$S/life.mkv" -frames:v 1 -vf scale=12:16 -y "$T/seq/f_003.png" &&
        run 3 f_%03d.png "$ENC" -w 1 "$T/seq/f_%03d.png" "$T/x.pnmf" && pass
else
    skip "audio-only input and size change: no ffmpeg"
fi
[ ! -e "$T/x.pnmf" ] && no_tmp_in "$T" && pass || fail "a failed encode left a file"

# ---- pnmf-enc: output ----

clip=$G/good/sprites_torus.pnmf   # decoded to y4m: a 32x24 clip of 9 frames
"$DEC" -Q -f y4m "$clip" "$T/clip.y4m" || fail "cannot make the test clip"
run 5 no/such/dir "$ENC" -Q -k 2 -w 4 "$T/clip.y4m" "$T/no/such/dir/x.pnmf" && pass
run 5 afile/x.pnmf "$ENC" -Q -k 2 -w 4 "$T/clip.y4m" "$T/afile/x.pnmf" && pass
if is_root; then skip "read-only output directory for pnmf-enc: running as root"
else run 5 ro/x.pnmf "$ENC" -Q -k 2 -w 4 "$T/clip.y4m" "$T/ro/x.pnmf" && pass; fi
echo precious > "$T/keep.pnmf"
# a limit of one block (512 or 1024 bytes) below the file (1,957 bytes at -q 0)
(ulimit -f 1; exec "$ENC" -Q -y -k 2 -w 4 -q 0 "$T/clip.y4m" "$T/keep.pnmf") > /dev/null 2> "$T/err"
got=$?
{ [ $got -eq 5 ] && sane $got "$T/err" && grep -q keep.pnmf "$T/err" &&
  [ "$(cat "$T/keep.pnmf")" = precious ] && no_tmp_in "$T"; } && pass ||
    fail "full disk, encoder: exit $got: $(cat "$T/err")"
# SIGTERM part-way: the temporary file goes, the target stays. The model
# alone (--no-residual) fits every window: seconds, where the default
# encode of this clip (the model dropped by the probe) can end within the
# second, or be killed after its rename, in its exit (ASan's leak check).
"$ENC" -Q -y -k 8 -w 10 --no-residual "$S/sprites.mkv" "$T/keep.pnmf" 2> "$T/err" &
pid=$!
sleep 1
kill -TERM $pid 2>/dev/null
wait $pid
got=$?
if [ $got -eq 0 ] || [ "$(head -c 4 "$T/keep.pnmf" | tail -c 3)" = PNM ]; then
    skip "SIGTERM: the encode finished within a second"
elif [ $got -eq 143 ] && [ "$(cat "$T/keep.pnmf")" = precious ] && no_tmp_in "$T"; then pass
else fail "SIGTERM: exit $got, target or temporary file: $(ls -A "$T")"; fi
# A successful encode replaces the target when -y is given.
run 0 "" "$ENC" -Q -y -k 2 -w 4 "$T/clip.y4m" "$T/keep.pnmf" && [ "$(head -c 4 "$T/keep.pnmf" | tail -c 3)" = PNM ] &&
    pass || fail "encode over an existing target"

# nonsense options: exit 2 and a message naming the option
for o in "-k -1:--components" "-k abc:--components" "-k 256:--components" \
         "-k 2x:--components" "-k 99999999999999999999:--components" "-w 0:--window" \
         "-w 1025:--window" "-q -1:--quality" "-q 65:--quality" "--frames 0:--frames" \
         "--threads -1:--threads" "--zstd-level 0:--zstd-level" "--iterations -1:--iterations" \
         "--shift diagonal:--shift" "--algo magic:--algo"; do
    run 2 "${o#*:}" "$ENC" ${o%%:*} "$T/clip.y4m" "$T/y.pnmf" && pass
done
run 2 "residual layer alone" "$ENC" -k 0 --no-residual "$T/clip.y4m" "$T/y.pnmf" && pass
run 2 "residual layer alone" "$ENC" -k 0 --shift vector "$T/clip.y4m" "$T/y.pnmf" && pass
run 2 "not with --shift vector" "$ENC" --residual --shift vector "$T/clip.y4m" "$T/y.pnmf" && pass
run 2 "" "$ENC" --no-such-option "$T/clip.y4m" "$T/y.pnmf" && pass
run 2 "" "$ENC" "$T/clip.y4m" && pass
[ ! -e "$T/y.pnmf" ] && pass || fail "a refused command line left a file"

finish hostile
