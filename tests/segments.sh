#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Encoding a clip in parts and joining them: pnmf-enc --start/--frames and
# --scenes, pnmf-cat, pnmf-parallel (locally, and over SSH to this machine
# when an sshd can be started), and the commands of the Slurm recipe in
# docs/scaling.md.
# usage: segments.sh BUILD_DIR SAMPLES_DIR
B=$1
S=$2
. "$(dirname "$0")/lib.sh"
PAR="$(cd "$(dirname "$0")/.." && pwd)/tools/pnmf-parallel.sh"
export PNMF_BIN="$B"
CLIP=$S/devset/x11_oneko.mkv
cd "$T" || die "cannot enter $T"

# No output and no temporary file beside it.
clean() { [ ! -e "$1" ] && [ -z "$(ls -A "$(dirname "$1")" | grep '^\.')" ]; }

# --start is exact: a lossless part decodes to the same frames of a
# lossless encode of the whole.
"$B/pnmf-enc" -Q -q 0 -k 0 --frames 60 "$CLIP" full.pnmf || die "pnmf-enc failed"
"$B/pnmf-enc" -Q -q 0 -k 0 --start 37 --frames 20 "$CLIP" part.pnmf || die "pnmf-enc --start failed"
check '[ "$("$B/pnmf-dec" -Q -f md5 --start 37 --frames 20 full.pnmf)" = "$("$B/pnmf-dec" -Q -f md5 part.pnmf)" ]' \
    "--start 37 --frames 20 does not give frames 37..56"
check 'expect_exit 3 "$B/pnmf-enc" -Q --start 150 "$CLIP" x.pnmf && grep -q "only 150 frames" "$T/err"' \
    "--start past the end: exit $got, $(cat "$T/err")"

# --scenes finds the cuts the encoder makes.
"$B/pnmf-enc" --scenes "$S/devset/cuts_mix.mkv" > scenes.txt || die "pnmf-enc --scenes failed"
"$B/pnmf-enc" -v -k 0 --frames 100 "$S/devset/cuts_mix.mkv" cm.pnmf 2> cm.log || die "pnmf-enc -v failed"
check '[ "$(sed -n "s/^cut //p" scenes.txt | awk "\$1 < 100" | tr "\n" " ")" = \
         "$(sed -n "s/^scene cut before frame //p" cm.log | tr "\n" " ")" ] && grep -q "^frames 190$" scenes.txt' \
    "--scenes: $(tr '\n' ' ' < scenes.txt) against the encoder's $(grep -c 'scene cut' cm.log) cuts"

# Three parts joined decode to the three decodes, one after the other.
"$B/pnmf-enc" -Q -k 0 --frames 50 "$CLIP" a.pnmf &&
    "$B/pnmf-enc" -Q -k 0 --start 50 --frames 50 "$CLIP" b.pnmf &&
    "$B/pnmf-enc" -Q -k 0 --start 100 "$CLIP" c.pnmf || die "encoding the parts failed"
check '"$B/pnmf-cat" -Q -o joined.pnmf a.pnmf b.pnmf c.pnmf' "pnmf-cat failed"
for p in a b c joined; do "$B/pnmf-dec" -Q -f y4m $p.pnmf $p.y4m || fail "decoding $p.pnmf"; done
{ cat a.y4m; tail -n +2 b.y4m; tail -n +2 c.y4m; } > abc.y4m
check 'cmp -s abc.y4m joined.y4m' "the joined file does not decode to its parts' frames"
# Seeking into the second and third parts.
check '[ "$("$B/pnmf-dec" -Q -f md5 --start 50 --frames 50 joined.pnmf)" = "$("$B/pnmf-dec" -Q -f md5 b.pnmf)" ]' \
    "seeking to the second part"
check '[ "$("$B/pnmf-dec" -Q -f md5 --start 117 --frames 20 joined.pnmf)" = \
         "$("$B/pnmf-dec" -Q -f md5 --start 17 --frames 20 c.pnmf)" ]' "seeking into the third part"

# Refusals: a size, a rate, a damaged part; each names the part and leaves nothing.
mkdir bad
"$B/pnmf-enc" -Q -k 0 --frames 10 "$S/sprites.mkv" size.pnmf || die "pnmf-enc sprites failed"
{ head -n 1 b.y4m | sed 's/ F20:1 / F25:1 /'; tail -n +2 b.y4m; } > b25.y4m
"$B/pnmf-enc" -Q -k 0 b25.y4m rate.pnmf || die "pnmf-enc of a 25 fps y4m failed"
cp b.pnmf corrupt.pnmf
printf '\377' | dd of=corrupt.pnmf bs=1 seek=3000 conv=notrunc 2> /dev/null
for t in "size frame size" "rate frame rate" "corrupt crc mismatch"; do
    set -- $t
    part=$1
    shift
    what=$*
    check 'expect_exit 1 "$B/pnmf-cat" -o bad/out.pnmf a.pnmf $part.pnmf || [ "$part" = corrupt -a "$got" -eq 4 ]' \
        "pnmf-cat with a $part mismatch: exit $got"
    check 'grep -q "^pnmf-cat: $part.pnmf: .*$what" "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ]' \
        "pnmf-cat with a $part mismatch said: $(cat "$T/err")"
    check 'clean bad/out.pnmf' "pnmf-cat left output after refusing a $part mismatch"
done

# pnmf-parallel: chunks that start where a one-process encode starts key
# windows give that encode's bytes: -k 0 --keyint 60 on x11_oneko (chunks of
# one window), then cuts_mix (scene cuts 45, 95, 150) with -w 30 --keyint 60
# and --chunk 100 (chunks of two windows, ending at the cut at 95).
"$B/pnmf-enc" -Q -k 0 --keyint 60 "$CLIP" one.pnmf || die "pnmf-enc failed"
check 'sh "$PAR" -j 2 --chunk 60 "$CLIP" par.pnmf -- -k 0 --keyint 60 2> par.log' \
    "pnmf-parallel -j 2 failed: $(cat par.log)"
check 'cmp -s one.pnmf par.pnmf' "pnmf-parallel -j 2 --chunk 60 does not give the one-process bytes"
check '[ "$(grep -c "^chunk [0-9]/3 " par.log)" -eq 3 ]' "pnmf-parallel showed no progress per chunk"
"$B/pnmf-enc" -Q -k 0 -w 30 --keyint 60 "$S/devset/cuts_mix.mkv" one2.pnmf || die "pnmf-enc failed"
check 'sh "$PAR" -Q -j 2 --chunk 100 "$S/devset/cuts_mix.mkv" par2.pnmf -- -k 0 -w 30 --keyint 60' \
    "pnmf-parallel on cuts_mix failed"
check 'cmp -s one2.pnmf par2.pnmf' "pnmf-parallel at scene cuts does not give the one-process bytes"
# At default settings (--keyint 250) chunks of 60 frames add key windows,
# whose first frames are coded finer: the quality is no lower than the
# one-process encode's (the bytes grow, docs/scaling.md).
"$B/pnmf-enc" -Q -k 0 "$CLIP" one3.pnmf || die "pnmf-enc failed"
check 'sh "$PAR" -Q -j 2 --chunk 60 "$CLIP" par3.pnmf -- -k 0' "pnmf-parallel at default settings failed"
"$B/pnmf-dec" -Q -f y4m one3.pnmf one3.y4m && "$B/pnmf-dec" -Q -f y4m par3.pnmf par3.y4m || fail "decoding"
p1=$("$B/pnmf-psnr" "$CLIP" one3.y4m | awk '{ print $4 }')
p2=$("$B/pnmf-psnr" "$CLIP" par3.y4m | awk '{ print $4 }')
check 'awk -v a="$p1" -v b="$p2" "BEGIN { exit !(a > 0 && b > 0 && b >= a - 0.5) }"' \
    "pnmf-parallel: psnr-y $p2 against $p1 dB"

# A chunk that fails: named, the run fails, nothing left behind.
mkdir fail
check 'expect_exit 1 sh "$PAR" -j 2 --frames 150 --chunk 60 "$T/missing.mkv" fail/out.pnmf' \
    "pnmf-parallel with a missing input: exit $got"
check 'grep -q "chunk 1 (frames 0..59) failed twice" "$T/err" && grep -q "missing.mkv: cannot open" "$T/err" &&
       grep -q "not written" "$T/err"' "pnmf-parallel's failure message: $(cat "$T/err")"
check 'clean fail/out.pnmf' "pnmf-parallel left files after a failure"

# The Slurm recipe of docs/scaling.md: its encode.sbatch, taken from the
# page, run for every task of the array, then the join.
DOC="$(cd "$(dirname "$0")/.." && pwd)/docs/scaling.md"
mkdir -p slurm/parts
awk '/^encode.sbatch:/ { f = 1; next } f && /^```sh/ { g = 1; next } g && /^```/ { exit } g' "$DOC" > slurm/encode.sbatch
check 'grep -q "pnmf-enc .*--start" slurm/encode.sbatch' "no encode.sbatch in docs/scaling.md"
ln -s "$CLIP" slurm/clip.mkv
(
    cd slurm || exit 1
    OPTS="-k 0 --keyint 60"
    export OPTS PATH="$B:$PATH"
    sh "$PAR" --list --chunk 60 clip.mkv -- $OPTS > chunks.txt || exit 1
    n=$(wc -l < chunks.txt)
    for t in $(seq 0 $((n - 1))); do
        SLURM_ARRAY_TASK_ID=$t sh encode.sbatch || exit 1
    done
    pnmf-cat -Q -o clip.pnmf parts/part_*.pnmf
) || fail "the Slurm recipe's commands failed"
check '[ "$(wc -l < slurm/chunks.txt)" -eq 3 ] && cmp -s slurm/clip.pnmf one.pnmf' \
    "the Slurm recipe's commands do not give the one-process bytes"

# Over SSH, two logins to this machine (skipped without sshd).
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen > /dev/null && [ "$(id -u)" -eq 0 ]; then
    D=$T/ssh
    mkdir -m 700 "$D"
    ssh-keygen -q -t ed25519 -N '' -f "$D/hostkey" && ssh-keygen -q -t ed25519 -N '' -f "$D/id" &&
        cp "$D/id.pub" "$D/authorized_keys" || die "ssh-keygen failed"
    port=$((20000 + $$ % 20000))
    printf 'Port %s\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPidFile %s\nStrictModes no\nPasswordAuthentication no\nUsePAM no\n' \
        "$port" "$D/hostkey" "$D/authorized_keys" "$D/sshd.pid" > "$D/sshd_config"
    mkdir -p /run/sshd
    if /usr/sbin/sshd -f "$D/sshd_config" -E "$D/log"; then
        trap 'kill "$(cat "$D/sshd.pid" 2>/dev/null)" 2>/dev/null; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
        sleep 1
        export PARALLEL_SSH="ssh -p $port -i $D/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
        check 'sh "$PAR" -Q -j 1 -S 1/127.0.0.1,1/localhost --chunk 60 "$CLIP" ssh.pnmf -- -k 0 --keyint 60' \
            "pnmf-parallel over SSH failed"
        check 'cmp -s ssh.pnmf one.pnmf' "pnmf-parallel over SSH does not give the one-process bytes"
    else
        skip "cannot start sshd: $(cat "$D/log")"
    fi
else
    skip "no sshd: pnmf-parallel over SSH not tested"
fi

# an existing output is kept unless -y, by pnmf-cat and by pnmf-parallel
# (which refuses before encoding anything)
printf 'keep me' > kept.pnmf
check 'expect_exit 5 "$B/pnmf-cat" -Q -o kept.pnmf a.pnmf b.pnmf < /dev/null' "pnmf-cat replaced an existing output: exit $got"
check '[ "$(cat kept.pnmf)" = "keep me" ]' "pnmf-cat changed an existing output it refused"
check 'expect_exit 5 sh "$PAR" -Q -j 1 --frames 150 --chunk 60 "$CLIP" kept.pnmf < /dev/null' \
    "pnmf-parallel went on over an existing output: exit $got"
check '[ "$(cat kept.pnmf)" = "keep me" ]' "pnmf-parallel changed an existing output it refused"
check '"$B/pnmf-cat" -Q -y -o kept.pnmf a.pnmf b.pnmf && "$B/pnmf-cat" -Q -o ab.pnmf a.pnmf b.pnmf && cmp -s kept.pnmf ab.pnmf' \
    "pnmf-cat -y did not write the join over an existing output"
finish segments
