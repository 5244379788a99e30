#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Make the tables of docs/measurements.md again, from the built tools.
#
#   sh tools/measurements.sh [quick|full] [BUILD_DIR] [OUT_DIR]
#
# quick (default, several minutes): the default encode of samples/sprites.mkv,
#   its -q ladder with the residual layer alone, pnmf-compare on it, the
#   carried components, and the paper's experiments.
# full (hours on two cores): also pnmf-compare on every clip of
#   samples/devset, each part of pnmf switched off in turn (pnmf alone, the
#   other codecs read back with --anchors), pnmf-compare --lossless on every
#   clip, and pnmf-bench on x11_penguins.
#
# Everything runs under nice. The tables go to OUT_DIR/tables.md (default
# BUILD_DIR/measurements/), each run's own files beside it.
set -eu
cd "$(dirname "$0")/.."
MODE=${1:-quick}
BUILD=${2:-build}
OUT=${3:-$BUILD/measurements}
case $MODE in quick|full) ;; *) echo "usage: sh tools/measurements.sh [quick|full] [BUILD_DIR] [OUT_DIR]" >&2; exit 2 ;; esac
for t in pnmf-enc pnmf-dec pnmf-psnr pnmf-compare pnmf-bench; do
    [ -x "$BUILD/$t" ] || { echo "measurements.sh: $BUILD/$t missing: build first (sh tools/bootstrap.sh)" >&2; exit 1; }
done
mkdir -p "$OUT"
T="$OUT/tables.md"
N="nice -n 10"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
libcommit=$(git log -1 --format=%h -- src include 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with local changes)" || true)

# One Markdown row of BD-rates from a bd.csv, in the order of the table.
bd_row() { # LABEL BD_CSV
    awk -F, -v label="$1" '
        NR > 1 { v[$2] = ($8 == "ok") ? sprintf("%+.2f", $3) : "n/a" }
        END {
            printf "| %s", label
            n = split("x264 x264-anim x265 aom aom-screen svtav1 vp9 pnmf-k0", c, " ")
            for (i = 1; i <= n; i++) printf " | %s", (c[i] in v) ? v[c[i]] : "-"
            printf " |\n"
        }' "$2"
}
# One Markdown row of lossless sizes from a lossless.csv: bytes, marked
# when not lossless.
lossless_row() { # LABEL LOSSLESS_CSV
    awk -F, -v label="$1" '
        NR > 1 { v[$1] = ($15 != "ok") ? "failed" : ($11 == "yes") ? $5 : $5 " (not lossless)" }
        END {
            printf "| %s", label
            n = split("pnmf ffv1 x264 x265 aom aom-screen apng gif webp zstd", c, " ")
            for (i = 1; i <= n; i++) printf " | %s", (c[i] in v) ? v[c[i]] : "-"
            printf " |\n"
        }' "$2"
}
# BD-rate of pnmf against one anchor, from a bd.csv.
bd_of() { # BD_CSV ANCHOR
    awk -F, -v a="$2" 'NR > 1 && $2 == a { if ($8 == "ok") printf "%+.2f", $3; else printf "n/a" }' "$1"
}

{
    echo "# Measurements made by tools/measurements.sh $MODE"
    echo
    echo "Commit $commit$dirty (the library's last change: $libcommit), $(date -u +%Y-%m-%d)."
    echo
} > "$T"

# 1. The demo: the default encode of samples/sprites.mkv.
$N "$BUILD/pnmf-enc" -Q -y samples/sprites.mkv "$OUT/sprites.pnmf"
rm -rf "$OUT/sprites-frames"
$N "$BUILD/pnmf-dec" -Q "$OUT/sprites.pnmf" "$OUT/sprites-frames"
psnr=$("$BUILD/pnmf-psnr" samples/sprites.mkv "$OUT/sprites-frames/frame_%06d.png" | sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
bytes=$(wc -c < "$OUT/sprites.pnmf")
{
    echo "## Default encode of samples/sprites.mkv"
    echo
    echo "\`pnmf-enc samples/sprites.mkv sprites.pnmf\`: $bytes bytes, PSNR-Y $psnr dB (pnmf-psnr of the decoded frames)."
    echo
} >> "$T"

# 2. The -q ladder with the residual layer alone, 30 frames.
{
    echo "## -q ladder, samples/sprites.mkv, -k 0, 30 frames"
    echo
    echo "| -q | bytes | PSNR-Y dB |"
    echo "|---:|---:|---:|"
} >> "$T"
for q in 0 8 16 24 32 40 48 56 64; do
    $N "$BUILD/pnmf-enc" -Q -y -k 0 --frames 30 -q "$q" samples/sprites.mkv "$OUT/ladder.pnmf"
    rm -rf "$OUT/ladder-frames"
    "$BUILD/pnmf-dec" -Q "$OUT/ladder.pnmf" "$OUT/ladder-frames"
    p=$("$BUILD/pnmf-psnr" --frames 30 samples/sprites.mkv "$OUT/ladder-frames/frame_%06d.png" |
        sed -n 's/.*psnr-y \([0-9.]*\).*/\1/p')
    [ "$p" = "999.000" ] && p=lossless
    echo "| $q | $(wc -c < "$OUT/ladder.pnmf") | $p |" >> "$T"
done
rm -rf "$OUT/ladder-frames" "$OUT/ladder.pnmf"
echo >> "$T"

# 3. pnmf-compare: BD-rate of pnmf against each codec.
CLIPS="samples/sprites.mkv"
[ "$MODE" = full ] && CLIPS="$CLIPS samples/devset/x11_oneko.mkv samples/devset/x11_penguins.mkv
    samples/devset/x11_fishtank.mkv samples/devset/pingus_pan.mkv samples/devset/cuts_mix.mkv
    samples/devset/natural_vtest.mkv samples/devset/synfig_kid.mkv samples/devset/povray_spline.mkv
    samples/devset/natural_cup.mkv"
# natural_cup is not stored: made here, byte for byte, from opencv-doc's video
if [ "$MODE" = full ] && [ ! -f samples/devset/natural_cup.mkv ]; then
    sh samples/devset/make_devset.sh natural_cup >&2
fi
{
    echo "## BD-rate of pnmf against each codec, %"
    echo
    echo "\`pnmf-compare --codecs pnmf,pnmf-k0,x264,x264-anim,x265,aom,aom-screen,svtav1,vp9 --out DIR CLIP\`,"
    echo "default settings, 6 points, 1 thread."
    echo
    echo "| clip | x264 | x264 tune animation | x265 | libaom AV1 | libaom AV1 screen | SVT-AV1 | VP9 | pnmf -k 0 |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >> "$T"
for c in $CLIPS; do
    name=$(basename "$c" .mkv)
    $N "$BUILD/pnmf-compare" -Q --codecs pnmf,pnmf-k0,x264,x264-anim,x265,aom,aom-screen,svtav1,vp9 \
        --out "$OUT/compare-$name" "$c" > "$OUT/compare-$name.md" ||
        echo "measurements.sh: pnmf-compare $c: a point failed (see $OUT/compare-$name.md)" >&2
    bd_row "$name" "$OUT/compare-$name/bd.csv" >> "$T"
done
echo >> "$T"

# 5. Carried components: the model follows -q under --target-psnr.
{
    echo "## Carried components, samples/sprites.mkv, -q 40 --target-psnr 46 -w 20"
    echo
    echo "| | bytes | PSNR-Y | windows carried |"
    echo "|---|---:|---:|---:|"
} >> "$T"
for c in --carry --no-carry; do
    # the summary line goes to stderr
    line=$($N "$BUILD/pnmf-enc" -y -q 40 --target-psnr 46 -w 20 $c samples/sprites.mkv "$OUT/carry.pnmf" 2>&1 >/dev/null |
        tail -n 1)
    echo "$line" | awk -v opt="$c" '{
        b = ""; p = ""; k = 0
        for (i = 1; i < NF; i++) {
            if ($i == "bytes") b = $(i + 1)
            if ($i == "psnr-y") p = $(i + 1)
            if ($i == "carried") k = $(i + 1)
        }
        printf "| `%s` | %s | %s dB | %s |\n", opt, b, p, k
    }' >> "$T"
done
rm -f "$OUT/carry.pnmf"
echo >> "$T"

# 6. The paper's experiments over 20 seeds (docs/paper.md).
[ -x "$BUILD/pnmf-paper" ] && {
    echo "## The paper's experiments, seeds 1..20"
    echo
    $N sh tools/paper/table.sh "$BUILD/pnmf-paper" 20
    echo
} >> "$T"

if [ "$MODE" = full ]; then
    # 4. What each part is worth: pnmf alone with one part off, the anchors
    #    read back from the runs above.
    PARTS="-k_0 --keyint_1 --no-scenecut --refine_0 --no-carry"
    {
        echo "## BD-rate with one part of pnmf off, against libaom / x264 tune animation, %"
        echo
        echo "\`pnmf-compare --anchors DIR/rd.csv OPTION CLIP\`."
        echo
        echo "| clip | default | -k 0 | --keyint 1 | --no-scenecut | --refine 0 | --no-carry |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
    } >> "$T"
    for c in $CLIPS; do
        name=$(basename "$c" .mkv)
        row="| $name | $(bd_of "$OUT/compare-$name/bd.csv" aom) / $(bd_of "$OUT/compare-$name/bd.csv" x264-anim)"
        for p in $PARTS; do
            opt=$(echo "$p" | tr _ ' ')
            dir="$OUT/parts-$name$(echo "$p" | tr -d ' _-')"
            # shellcheck disable=SC2086 # opt is an option and its value
            $N "$BUILD/pnmf-compare" -Q --anchors "$OUT/compare-$name/rd.csv" --out "$dir" $opt "$c" > "$dir.md" ||
                echo "measurements.sh: pnmf-compare $opt $c: a point failed (see $dir.md)" >&2
            row="$row | $(bd_of "$dir/bd.csv" aom) / $(bd_of "$dir/bd.csv" x264-anim)"
        done
        echo "$row |" >> "$T"
    done
    echo >> "$T"

    # 8. Lossless: pnmf -q 0 against the lossless codecs.
    {
        echo "## Lossless, bytes"
        echo
        echo "\`pnmf-compare --lossless --out DIR CLIP\`, default settings, 1 thread."
        echo
        echo "| clip | pnmf -q 0 | FFV1 | x264 | x265 | libaom | libaom screen | APNG | GIF | WebP | zstd -19 --long |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    } >> "$T"
    for c in $CLIPS; do
        name=$(basename "$c" .mkv)
        $N "$BUILD/pnmf-compare" -Q --lossless --out "$OUT/lossless-$name" "$c" > "$OUT/lossless-$name.md" ||
            echo "measurements.sh: pnmf-compare --lossless $c: a codec failed (see $OUT/lossless-$name.md)" >&2
        lossless_row "$name" "$OUT/lossless-$name/lossless.csv" >> "$T"
    done
    echo >> "$T"

    # 7. Speed against x264 (docs/speed.md).
    $N "$BUILD/pnmf-bench" -Q --csv "$OUT/bench.csv" samples/devset/x11_penguins.mkv > "$OUT/bench.md"
    { echo "## pnmf-bench samples/devset/x11_penguins.mkv"; echo; cat "$OUT/bench.md"; echo; } >> "$T"
fi

echo "measurements.sh: tables in $T"
