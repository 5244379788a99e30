#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-info --sprites: samples/sprites.mkv in windows of 20 with key windows
# 0 and 2, whose window table counts the new poses and the placements.
# The sprites come out as gray+alpha PNGs, one per distinct image (fewer
# than the poses sent: key window 2 sends the poses of window 0 again);
# tracks.csv has a row per placement, each naming a written sprite; an
# existing folder is refused without -y; test_info_sprites compares the
# rows and PNGs with the decoder's placements and frames.
# usage: sprites_cli.sh BUILD_DIR TEST_INFO_SPRITES SAMPLES_DIR
set -u
B=$1
C=$2
S=$3
. "$(dirname "$0")/../lib.sh"
"$B/pnmf-enc" -Q -w 20 --keyint 40 "$S/sprites.mkv" "$T/s.pnmf" || die "encode $S/sprites.mkv"
"$B/pnmf-info" --level 0 "$T/s.pnmf" > "$T/table" || die "pnmf-info"
# the window table's last row: all ... poses places chunk payload
poses=$(awk '$1 == "all" && NF >= 6 { gsub(",", ""); print $(NF - 3); exit }' "$T/table")
places=$(awk '$1 == "all" && NF >= 6 { gsub(",", ""); print $(NF - 2); exit }' "$T/table")
[ -n "$poses" ] && [ -n "$places" ] || die "no poses and places in the window table"
check '[ "$poses" -ge 2 ] && [ "$places" -ge 1 ]' "window table: $poses poses, $places places"

"$B/pnmf-info" --level 0 --sprites "$T/sp" "$T/s.pnmf" > "$T/out" 2> "$T/err"
check '[ $? -eq 0 ] && [ ! -s "$T/err" ]' "--sprites failed: $(cat "$T/err")"
nspr=$(ls "$T/sp" | grep -c '^sprite_[0-9]\{4\}\.png$')
check '[ "$nspr" -ge 2 ]' "$nspr sprite PNGs"
check '[ "$nspr" -lt "$poses" ]' "$nspr sprite PNGs for $poses poses sent: a pose sent again is written again"
check '[ -z "$(ls -A "$T/sp" | grep -v "^sprite_[0-9]\{4\}\.png$" | grep -v "^tracks.csv$")" ]' \
    "other files in the folder: $(ls -A "$T/sp")"
check 'grep -q "^sprites: $nspr written to .*, $places placements in" "$T/out"' "summary: $(grep '^sprites' "$T/out")"
if command -v ffprobe > /dev/null; then
    for p in "$T"/sp/sprite_*.png; do
        fmt=$(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 "$p")
        check '[ "$fmt" = ya8 ]' "$p: pix_fmt '$fmt', not ya8"
    done
else
    skip "no ffprobe: the PNGs' pixel format is checked by test_info_sprites alone"
fi
check '[ "$(head -n 1 "$T/sp/tracks.csv")" = "frame,sprite,x,y,coefficient" ]' "tracks.csv header"
rows=$(($(wc -l < "$T/sp/tracks.csv") - 1))
check '[ "$rows" -eq "$places" ]' "tracks.csv: $rows rows, $places placements in the window table"
for id in $(tail -n +2 "$T/sp/tracks.csv" | cut -d, -f2 | sort -u); do
    f=$(printf 'sprite_%04d.png' "$id")
    check '[ -s "$T/sp/$f" ]' "tracks.csv names sprite $id, $f is missing"
done

# an existing folder: refused (exit 5) without -y, its files kept; -y replaces them
touch "$T/sp/sprite_9999.png"
"$B/pnmf-info" --level 0 --sprites "$T/sp" "$T/s.pnmf" > /dev/null 2> "$T/err" < /dev/null
check '[ $? -eq 5 ] && [ -e "$T/sp/sprite_9999.png" ] && [ "$(wc -l < "$T/err")" -eq 1 ]' \
    "an existing folder without -y: $(cat "$T/err")"
"$B/pnmf-info" --level 0 -y --sprites "$T/sp" "$T/s.pnmf" > /dev/null 2> "$T/err"
check '[ $? -eq 0 ] && [ ! -e "$T/sp/sprite_9999.png" ] && [ -s "$T/sp/tracks.csv" ]' \
    "-y on an existing folder: $(cat "$T/err")"
mkdir "$T/other" && touch "$T/other/notes.txt"
"$B/pnmf-info" --level 0 -y --sprites "$T/other" "$T/s.pnmf" > /dev/null 2> "$T/err"
check '[ $? -eq 5 ] && [ -e "$T/other/notes.txt" ]' "-y on a folder of other files: $(cat "$T/err")"

"$C" "$T/s.pnmf" "$T/sp" > "$T/c" 2>&1
check '[ $? -eq 0 ]' "test_info_sprites: $(cat "$T/c")"
finish sprites_cli
