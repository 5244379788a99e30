#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The command line never destroys a file and meets the habits of ffmpeg:
# an output that is the input is refused, an existing output is kept
# unless -y, -n never overwrites, '-' reads stdin and never becomes a file,
# pnmf-dec refuses a folder of old frames unless -y, damaged input is
# concealed with one warning (or refused with --strict), lost colour is
# said, and every tool answers --version and --help.
# usage: cli_safety.sh BUILD_DIR
set -u
B=$1
ENC=$B/pnmf-enc
DEC=$B/pnmf-dec
. "$(dirname "$0")/lib.sh"

command -v ffmpeg > /dev/null || { echo "cli_safety: SKIP: no ffmpeg program"; exit 0; }
cd "$T" || die "cannot enter $T"
# small generated clips: gray y4m, a colour mp4 (x264 when present)
ffmpeg -v error -f lavfi -i testsrc=size=32x24:rate=25 -frames:v 6 -pix_fmt gray -f yuv4mpegpipe g.y4m ||
    die "ffmpeg cannot make a test clip"
mp4enc=mpeg4
ffmpeg -v error -h encoder=libx264 2>/dev/null | grep -q libx264 && mp4enc=libx264
ffmpeg -v error -f lavfi -i testsrc=size=160x120:rate=25 -frames:v 50 -c:v $mp4enc -g 10 -pix_fmt yuv420p \
    -movflags +faststart t.mp4 || die "ffmpeg cannot make an mp4"
E="-Q -k 2 -w 3"

# ---- never destroy ----
cp g.y4m in.y4m
expect_exit 5 "$ENC" $E in.y4m in.y4m
check '[ "$got" -eq 5 ] && cmp -s g.y4m in.y4m && grep -q "is the input" err' "pnmf-enc IN IN: exit $got: $(cat err)"
ln -s in.y4m link.y4m
ln in.y4m hard.y4m
expect_exit 5 "$ENC" -y $E link.y4m in.y4m
check '[ "$got" -eq 5 ] && cmp -s g.y4m in.y4m' "pnmf-enc through a symbolic link, -y: exit $got: $(cat err)"
expect_exit 5 "$ENC" -y $E hard.y4m in.y4m
check '[ "$got" -eq 5 ] && cmp -s g.y4m in.y4m' "pnmf-enc through a hard link, -y: exit $got: $(cat err)"
"$ENC" $E g.y4m a.pnmf 2> err
check '[ $? -eq 0 ] && [ -s a.pnmf ]' "encode g.y4m: $(cat err)"
cp a.pnmf a.keep
echo precious > keep.pnmf
expect_exit 5 "$ENC" $E g.y4m keep.pnmf < /dev/null
check '[ "$got" -eq 5 ] && [ "$(cat keep.pnmf)" = precious ] && [ "$(wc -l < err)" -eq 1 ] && grep -q -- "-y" err' \
    "existing output without -y: exit $got: $(cat err)"
expect_exit 5 "$ENC" -n $E g.y4m keep.pnmf
check '[ "$got" -eq 5 ] && [ "$(cat keep.pnmf)" = precious ]' "-n overwrote: exit $got"
expect_exit 0 "$ENC" -y $E g.y4m keep.pnmf
check '[ "$got" -eq 0 ] && cmp -s a.pnmf keep.pnmf' "-y did not replace the output: exit $got: $(cat err)"
expect_exit 5 "$DEC" -Q -f y4m a.pnmf g.y4m
check '[ "$got" -eq 5 ] && [ "$(head -c 9 g.y4m)" = YUV4MPEG2 ] && cmp -s g.y4m in.y4m' "pnmf-dec over a y4m: exit $got"
expect_exit 5 "$DEC" -Q -f md5 a.pnmf a.pnmf
check '[ "$got" -eq 5 ] && cmp -s a.pnmf a.keep' "pnmf-dec IN IN: exit $got: $(cat err)"
expect_exit 5 "$B/pnmf-info" --components keep.pnmf a.pnmf
check '[ "$got" -eq 5 ] && cmp -s a.pnmf keep.pnmf' "pnmf-info --components over a file: exit $got: $(cat err)"

# a folder of frames: refused, or with -y emptied of its frame files only
"$DEC" -Q -f pgm a.pnmf dir 2> err
check '[ $? -eq 0 ] && [ "$(ls dir | wc -l)" -eq 6 ]' "decode to a folder: $(cat err)"
cp dir/frame_000001.pgm dir/frame_000060.pgm
echo mine > dir/notes.txt
echo mine > dir/frame_1.pgm
expect_exit 5 "$DEC" -Q -f pgm --frames 3 a.pnmf dir
check '[ "$got" -eq 5 ] && [ -e dir/frame_000006.pgm ] && grep -q "frame files" err' "stale frames: exit $got: $(cat err)"
expect_exit 0 "$DEC" -Q -y -f pgm --frames 3 a.pnmf dir
check '[ "$got" -eq 0 ] && [ "$(ls dir | grep -c "^frame_[0-9]\{6\}\.pgm$")" -eq 3 ] && [ -e dir/frame_000003.pgm ] &&
       [ ! -e dir/frame_000060.pgm ] && [ -e dir/notes.txt ] && [ -e dir/frame_1.pgm ]' \
    "-y into a folder of frames: exit $got: $(ls dir) $(cat err)"

# ---- '-' ----
"$ENC" $E - b.pnmf < g.y4m 2> err
check '[ $? -eq 0 ] && cmp -s a.pnmf b.pnmf' "stdin input gives other bytes: $(cat err)"
cat g.y4m | "$ENC" $E - c.pnmf 2> err
check '[ $? -eq 0 ] && cmp -s a.pnmf c.pnmf' "piped input gives other bytes: $(cat err)"
"$ENC" $E g.y4m - 2> err | cat > piped.pnmf
check '[ ! -s piped.pnmf ] && [ ! -e ./- ] && grep -q "regular file" err' "pnmf-enc to a pipe: $(cat err)"
"$ENC" $E g.y4m - > d.pnmf 2> err
check '[ $? -eq 0 ] && cmp -s a.pnmf d.pnmf && [ ! -e ./- ]' "pnmf-enc IN - > file: $(cat err)"
"$DEC" -Q -f md5 a.pnmf > want.md5
"$DEC" -Q -f md5 - < a.pnmf > file.md5 2> err
check '[ $? -eq 0 ] && cmp -s want.md5 file.md5' "pnmf-dec - < file: $(cat err)"
cat a.pnmf | "$DEC" -Q -f md5 - > pipe.md5 2> err
check '[ $? -eq 0 ] && cmp -s want.md5 pipe.md5' "pnmf-dec - from a pipe: $(cat err)"
cat a.pnmf | "$DEC" -Q -f md5 --start 2 - > /dev/null 2> err
check '[ $? -eq 2 ] && grep -q -- "--start" err' "pnmf-dec --start on a pipe: $(cat err)"
# image sequences: a start number past image2's search, and a glob
mkdir seq
ffmpeg -v error -i g.y4m -start_number 100 seq/f_%04d.pgm
"$ENC" $E --start-number 100 seq/f_%04d.pgm s1.pnmf 2> err
check '[ $? -eq 0 ] && cmp -s a.pnmf s1.pnmf' "--start-number 100: $(cat err)"
"$ENC" $E 'seq/f_*.pgm' s2.pnmf 2> err
check '[ $? -eq 0 ] && cmp -s a.pnmf s2.pnmf' "glob pattern: $(cat err)"

# ---- back into video files ----
# an .mkv (FFV1, gray): ffmpeg's decoding of it equals pnmf-dec's PGM frames
"$DEC" -Q a.pnmf v.mkv 2> err
check '[ $? -eq 0 ] && [ -s v.mkv ]' "pnmf-dec to .mkv: $(cat err)"
mkdir vm
ffmpeg -v error -i v.mkv vm/frame_%06d.pgm
same=yes
for f in dir/frame_00000[123].pgm; do cmp -s "$f" "vm/$(basename "$f")" || same=no; done
n=$(ls vm | wc -l)
check '[ $same = yes ] && [ "$n" -eq 6 ] && cmp -s dir/frame_000003.pgm vm/frame_000003.pgm' \
    "the .mkv's $n frames, decoded by ffmpeg, differ from pnmf-dec's PGM frames"
# every container: the luma plane (of the YUV that H.264 and VP9 decode
# to, gray otherwise) as pnmf-dec -f md5 hashes it
for e in mp4 webm gif apng y4m; do
    case $e in
    mp4) ffmpeg -v error -h encoder=libx264 | grep -q libx264 || { skip ".mp4: no libx264"; continue; } ;;
    webm) ffmpeg -v error -h encoder=libvpx-vp9 | grep -q vp9 || { skip ".webm: no libvpx-vp9"; continue; } ;;
    esac
    "$DEC" -Q a.pnmf "v.$e" 2> err || { fail "pnmf-dec to .$e: $(cat err)"; continue; }
    vf=null
    case $e in mp4|webm) vf=extractplanes=y ;; esac
    got=$(ffmpeg -v error -i "v.$e" -vf $vf -f rawvideo -pix_fmt gray - | md5sum | cut -d' ' -f1)
    check '[ "$got" = "$(cat want.md5)" ]' ".$e: ffmpeg decodes other pixels ($got)"
done
expect_exit 5 "$DEC" -Q a.pnmf v.mkv
check '[ "$got" -eq 5 ]' "pnmf-dec over an existing .mkv: exit $got"
"$DEC" -Q -y --codec png -f mkv a.pnmf v.mkv 2> err
check '[ $? -eq 0 ] && ffprobe -v error -show_entries stream=codec_name v.mkv | grep -q codec_name=png' \
    "--codec png: $(cat err)"
expect_exit 2 "$DEC" -Q --codec png a.pnmf vdir
check '[ "$got" -eq 2 ]' "--codec with frame files: exit $got"

# ---- what the encode loses, damaged input ----
"$ENC" -Q -k 2 -w 5 --frames 5 t.mp4 col.pnmf 2> err
check '[ $? -eq 0 ] && [ "$(grep -c "warning: colour" err)" -eq 1 ]' "no colour warning: $(cat err)"
"$ENC" -Q -k 2 -w 3 g.y4m gray.pnmf 2> err
check '[ ! -s err ]' "a gray clip warned: $(cat err)"
# bytes cut out of the middle of the mp4: the frames after the cut are lost
size=$(wc -c < t.mp4)
head -c $((size / 2)) t.mp4 > bad.mp4
tail -c +$((size / 2 + 2001)) t.mp4 >> bad.mp4
"$ENC" -k 2 -w 5 bad.mp4 bad.pnmf 2> err
check '[ $? -eq 0 ] && [ "$(grep -c "cannot be read" err)" -eq 1 ] && ! grep -q "^\[" err &&
       grep -q "concealed [1-9]" err' "damaged mp4: $(cat err)"
"$DEC" -Q -f md5 --frames 5 bad.pnmf > bad.md5
"$DEC" -Q -f md5 --frames 5 col.pnmf > col.md5
check 'cmp -s bad.md5 col.md5' "the damaged mp4's first frames differ from the good one's"
expect_exit 3 "$ENC" --strict -k 2 -w 5 bad.mp4 strict.pnmf
check '[ "$got" -eq 3 ] && [ ! -e strict.pnmf ] && [ -z "$(ls -A | grep tmp)" ]' "--strict: exit $got: $(cat err)"

# pnmf-paper refuses an existing figure, and runs no experiment
mkdir paper
echo precious > paper/exp1.png
expect_exit 5 "$B/pnmf-paper" exp1 --out paper
check '[ "$got" -eq 5 ] && [ "$(cat paper/exp1.png)" = precious ]' "pnmf-paper over a figure: exit $got: $(cat err)"

# ---- a FIFO (or a device such as /dev/null) is written in place, not replaced ----
if command -v timeout > /dev/null && mkfifo fifo 2> /dev/null; then
    # the reader gives up after a while if nothing opens the FIFO to write
    timeout 30 cat fifo > fromfifo &
    reader=$!
    "$DEC" -Q -y -f md5 a.pnmf fifo 2> err
    got=$?
    wait $reader
    check '[ "$got" -eq 0 ] && [ -p fifo ] && [ "$(cat fromfifo)" = "$("$DEC" -Q -f md5 a.pnmf)" ]' \
        "pnmf-dec -y -f md5 into a FIFO: exit $got, FIFO kept: $([ -p fifo ] && echo yes || echo no): $(cat err)"
else
    skip "no FIFO or timeout here"
fi

# ---- --version and --help everywhere ----
for t in enc dec info psnr compare bench paper; do
    [ -x "$B/pnmf-$t" ] || { skip "pnmf-$t not built"; continue; }
    v=$("$B/pnmf-$t" --version 2>&1)
    check '[ $? -eq 0 ] && echo "$v" | grep -q "^pnmf-$t [0-9]"' "pnmf-$t --version: $v"
    "$B/pnmf-$t" --help > help 2>&1
    check '[ $? -eq 0 ] && grep -q usage help' "pnmf-$t --help"
done

finish cli_safety
