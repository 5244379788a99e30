#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerate the development-set clips in this directory (see README.md).
#
#   sh samples/devset/make_devset.sh               # every clip
#   sh samples/devset/make_devset.sh pingus_pan    # only the named clip(s)
#
# Clips: x11_penguins x11_oneko x11_fishtank pingus_pan natural_vtest, and
# cuts_mix, cut together from four of them (190 frames); the smooth clips
# synfig_kid (2-D cartoon), povray_spline (3-D animation) and natural_cup
# (camera footage)
#
# The clips are stored but natural_cup (2 MB), which this makes on demand
# (the same bytes on Debian 12); the tests never run this.
# Needs, on Debian 12 (bookworm, main):
#   apt-get install ffmpeg xvfb x11-apps x11-utils xdotool \
#                   xpenguins oneko xfishtank pingus-data synfig povray
# The sample files come from opencv-doc (natural_vtest, natural_cup),
# synfig-examples (synfig_kid) and povray-examples (povray_spline): each is
# taken from its place under /usr/share/doc when the package is installed,
# otherwise the script runs `apt-get download PACKAGE` (opencv-doc is 96 MB)
# into a temporary directory and unpacks only that file with dpkg-deb.
#
# Determinism: pingus_pan, natural_vtest and natural_cup are pure FFmpeg
# filter graphs over fixed package files, synfig_kid and povray_spline are
# renders of fixed scenes (one synfig thread, no antialiasing jitter) run
# through one: the same package versions and FFmpeg version give the same
# pixels (and, with one encoder thread and bitexact muxing, the same bytes). The x11_* clips are screen captures of programs that run
# on timers and random numbers (xpenguins, xfishtank) or chase a pointer
# (oneko): the scene setup, the pointer path and the window drags are fixed,
# but the exact frames differ from run to run.
#
# Every clip is 320x240, 150 frames (cuts_mix 190), 20 fps. Each is stored twice, as FFV1
# (level 3, intra, in Matroska) and as H.264 lossless (libx264 -qp 0, in
# Matroska), from the same intermediate frames; the smaller file is kept,
# and its decoded frames are checked against the intermediate (framemd5).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnmf-devset.XXXXXX")
xpid=''
mover=''
cleanup() {
    if [ -n "$mover" ]; then kill "$mover" 2>/dev/null || true; fi
    if [ -n "$xpid" ]; then kill "$xpid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

FFMPEG=${FFMPEG:-ffmpeg}
PATH=$PATH:/usr/games
export PATH
W=320 H=240 N=150 FPS=20
DPY=${DEVSET_DISPLAY:-:57}

ff() { $FFMPEG -nostdin -hide_banner -loglevel error -y "$@"; }

need() {
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || { echo "make_devset: missing $c (see the header of $0)" >&2; exit 1; }
    done
}

# store NAME PIXFMT: encode $tmp/NAME.nut (raw frames, exactly N frames at
# FPS, already in PIXFMT) losslessly both ways, keep the smaller as NAME.mkv.
store() {
    name=$1 pixfmt=$2 src=$tmp/$1.nut
    common="-map 0:v -map_metadata -1 -fflags +bitexact -flags:v +bitexact -threads 1"
    # shellcheck disable=SC2086
    ff -i "$src" $common -c:v ffv1 -level 3 -coder 2 -context 1 -g 1 -slices 4 -slicecrc 1 \
        -pix_fmt "$pixfmt" "$tmp/$name.ffv1.mkv"
    # shellcheck disable=SC2086
    ff -i "$src" $common -c:v libx264 -qp 0 -preset veryslow -pix_fmt "$pixfmt" \
        "$tmp/$name.x264.mkv"
    a=$(wc -c < "$tmp/$name.ffv1.mkv" | tr -d ' ')
    b=$(wc -c < "$tmp/$name.x264.mkv" | tr -d ' ')
    if [ "$a" -le "$b" ]; then pick=ffv1; else pick=x264; fi
    ff -i "$src" -f framemd5 "$tmp/$name.ref.md5"
    ff -i "$tmp/$name.$pick.mkv" -f framemd5 "$tmp/$name.out.md5"
    if ! cmp -s "$tmp/$name.ref.md5" "$tmp/$name.out.md5"; then
        echo "make_devset: $name.$pick.mkv does not decode to its source frames" >&2
        exit 1
    fi
    mv "$tmp/$name.$pick.mkv" "$here/$name.mkv"
    printf '%s.mkv: %s (ffv1 %s bytes, x264 -qp 0 %s bytes)\n' "$name" "$pick" "$a" "$b"
}

# Raw frames from any input: exactly N frames at FPS, given pixel format.
# to_nut NAME PIXFMT INPUT-ARGS... (the filter chain is in $vf)
to_nut() {
    name=$1 pixfmt=$2; shift 2
    ff "$@" -an -vf "$vf,setpts=N/($FPS*TB),format=$pixfmt" -r $FPS -frames:v $N \
        -c:v rawvideo -f nut "$tmp/$name.nut"
    got=$($FFMPEG -nostdin -v error -i "$tmp/$name.nut" -f framemd5 - | grep -vc '^#')
    [ "$got" -eq "$N" ] || { echo "make_devset: $name has $got frames, not $N" >&2; exit 1; }
}

# ---------------------------------------------------------------- X11 ---
xstart() {
    need Xvfb xdotool
    # -wr: white root window. (xsetroot has no visible effect on this Xvfb.)
    Xvfb "$DPY" -screen 0 ${W}x${H}x24 -nolisten tcp -wr >"$tmp/xvfb.log" 2>&1 &
    xpid=$!
    DISPLAY=$DPY
    export DISPLAY
    i=0
    until xdpyinfo >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 50 ] || { echo "make_devset: Xvfb did not start" >&2; exit 1; }
        sleep 0.1
    done
}

xstop() {
    # the xdotool loop first; the X clients die with the server
    if [ -n "$mover" ]; then kill "$mover" 2>/dev/null || true; wait "$mover" 2>/dev/null || true; fi
    mover=
    kill "$xpid" 2>/dev/null || true
    wait "$xpid" 2>/dev/null || true
    xpid=
    sleep 0.5
}

# capture NAME [MOUSE]: grab N frames of the whole screen at FPS (a few
# more are grabbed and the first ones dropped, so that the capture is
# running at full pace when the clip starts).
capture() {
    ff -f x11grab -draw_mouse "${2:-0}" -framerate $FPS -video_size ${W}x${H} -i "$DPY.0+0,0" \
        -frames:v $((N + 10)) -c:v rawvideo -f nut "$tmp/$1.grab.nut"
    vf="trim=start_frame=10"
    to_nut "$1" yuv420p -i "$tmp/$1.grab.nut"
}

winid() { xdotool search --class "$1" 2>/dev/null | head -n 1; }

# x11_penguins: xpenguins (Penguins theme, 8 toons) on a white desktop with
# two windows (xlogo, xclock) to walk on; xdotool drags the xlogo window,
# with the penguins on it, up and right across the screen.
clip_x11_penguins() {
    need xpenguins xlogo xclock
    xstart
    xlogo -geometry 110x60+10+120 -bg '#305070' -fg '#f0e0a0' 2>/dev/null &
    xclock -geometry 80x80+215+130 -bg '#a04030' -fg white -hd white -hl white -update 1 2>/dev/null &
    sleep 1
    xpenguins -q -n 8 -t Penguins -b -a -m 50 2>/dev/null &
    sleep 1.5
    wl=$(winid xlogo)
    (
        i=0
        while [ $i -le 70 ]; do
            xdotool windowmove "$wl" $((10 + i * 2)) $((120 - i)) 2>/dev/null || true
            sleep 0.1
            i=$((i + 1))
        done
    ) &
    mover=$!
    capture x11_penguins 0
    xstop
    store x11_penguins yuv420p
}

# x11_oneko: two identical oneko cats (the second one offset from the
# pointer) chase the pointer, which xdotool moves along a fixed Lissajous
# path; an xeyes window is dragged in from beyond the left edge and out past
# the right edge; a dark xlogo window sits on the white desktop.
clip_x11_oneko() {
    need oneko xeyes xlogo awk
    xstart
    xlogo -geometry 90x70+200+20 -bg '#202020' -fg '#d0d0d0' 2>/dev/null &
    xeyes -geometry 100x70+-100+160 2>/dev/null &
    sleep 1
    xdotool mousemove 160 120
    oneko -speed 12 2>/dev/null &
    oneko -speed 12 -position +48+24 2>/dev/null &
    sleep 1
    we=$(winid xeyes)
    awk 'BEGIN { for (i = 0; i <= 180; i++) {
            x = int(160 + 130 * sin(i * 0.045)); y = int(110 + 90 * sin(i * 0.07 + 0.8));
            ex = -100 + i * 4;
            printf "%d %d %d\n", x, y, ex } }' > "$tmp/path.txt"
    (
        while read -r x y ex; do
            xdotool mousemove "$x" "$y" 2>/dev/null || true
            xdotool windowmove "$we" "$ex" 160 2>/dev/null || true
            sleep 0.05
        done < "$tmp/path.txt"
    ) &
    mover=$!
    capture x11_oneko 1
    xstop
    store x11_oneko yuv420p
}

# x11_fishtank: xfishtank's fish (6, moving every 50 ms) and bubbles over a
# light blue tank; the capture starts once the first fish have swum in.
clip_x11_fishtank() {
    need xfishtank
    xstart
    xfishtank -c '#80b0d0' -f 6 -b 16 -r 0.05 -i 0.5 2>/dev/null &
    sleep 5
    capture x11_fishtank 0
    xstop
    store x11_fishtank yuv420p
}

# ------------------------------------------------------------ sprites ---
# pingus_pan: Pingus' menu scene (sky, sea and icebergs, snow bank; the
# layers of images/core/menu, composed at 800x600 as in the game's menu and
# scaled to 640x480) seen through a 320x240 window panning right by 2 px a
# frame. Over it, Pingus sprites at native size (frames of their sprite
# sheets, 100 ms each): two walkers of the same sheet, walking right (both on
# screen at once, drifting left with the pan, one leaving at the left edge),
# a third walking left that enters at the right and passes in front of one
# of them, a floater sinking behind the snow bank (occluded by the
# foreground layer), and a superman crossing the sky from edge to edge.
clip_pingus_pan() {
    p=/usr/share/games/pingus/data/images
    [ -f "$p/core/menu/layer4.png" ] || { echo "make_devset: install pingus-data" >&2; exit 1; }
    s=$p/pingus/player0
    # inputs: 0 sky colour, 1-4 menu layers, 5 walker, 6 floater, 7 superman
    fc="[0][1]overlay=0:0[b1];[b1][2]overlay=0:140[b2];[b2][3]overlay=0:294,
        scale=640:480:flags=area,crop=$W:$H:x='2*n':y=220[back];
        [4]format=rgba,pad=800:600:0:429:color=black@0,scale=640:480:flags=area,
        crop=$W:$H:x='2*n':y=220[front];
        [5]format=rgba,split=3[w1][w2][w3];
        [w1]crop=32:32:x='32*mod(floor(n/2),8)':y=32[wa];
        [w2]crop=32:32:x='32*mod(floor(n/2)+3,8)':y=32[wb];
        [w3]crop=32:32:x='32*mod(floor(n/2)+5,8)':y=0[wc];
        [6]format=rgba,crop=32:32:x='32*mod(floor(n/2),8)':y=0[fl];
        [7]format=rgba,crop=30:30:x='30*mod(floor(n/2),8)':y=0[sm];
        [back][fl]overlay=x='420-2*n':y='n-10':eval=frame[s1];
        [s1][front]overlay=0:0[s2];
        [s2][sm]overlay=x='3*n-30':y='30+floor(10*sin(n/10))':eval=frame[s3];
        [s3][wa]overlay=x='100-n':y=150:eval=frame[s4];
        [s4][wb]overlay=x='180-n':y=150:eval=frame[s5];
        [s5][wc]overlay=x='440-3*n':y=156:eval=frame,trim=end_frame=$N"
    ff -f lavfi -i "color=c=0x8fc4e0:s=800x600:r=$FPS" \
        -framerate $FPS -loop 1 -i "$p/core/menu/layer1.png" \
        -framerate $FPS -loop 1 -i "$p/core/menu/layer2.png" \
        -framerate $FPS -loop 1 -i "$p/core/menu/layer3.png" \
        -framerate $FPS -loop 1 -i "$p/core/menu/layer4.png" \
        -framerate $FPS -loop 1 -i "$s/walker.png" \
        -framerate $FPS -loop 1 -i "$s/floater.png" \
        -framerate $FPS -loop 1 -i "$s/superman.png" \
        -filter_complex "$fc" -frames:v $N -c:v rawvideo -pix_fmt rgb24 -f nut "$tmp/pingus_pan.rgb.nut"
    vf=null
    to_nut pingus_pan yuv420p -i "$tmp/pingus_pan.rgb.nut"
    store pingus_pan yuv420p
}

# pkgfile PACKAGE FILE: print the path of FILE (an absolute path the
# package installs): FILE itself when the package is installed, otherwise
# FILE unpacked from the package's .deb, downloaded once per run.
pkgfile() {
    if [ -f "$2" ]; then echo "$2"; return; fi
    need apt-get dpkg-deb
    d=$tmp/deb-$1
    if [ ! -d "$d" ]; then
        mkdir -p "$d"
        (cd "$d" && apt-get download "$1" >/dev/null 2>&1) ||
            { echo "make_devset: apt-get download $1 failed" >&2; exit 1; }
    fi
    dpkg-deb --fsys-tarfile "$d/$1"_*.deb | tar -x -C "$d" ".$2"
    echo "$d$2"
}

# ------------------------------------------------------------ natural ---
# natural_vtest: OpenCV's sample video vtest.avi (a fixed camera over a
# campus path, pedestrians walking; 768x576, 10 fps, MPEG-4 part 2): its
# first 150 frames, scaled to 320x240 (area averaging), played at 20 fps.
clip_natural_vtest() {
    v=$(pkgfile opencv-doc /usr/share/doc/opencv-doc/examples/data/vtest.avi)
    vf="scale=$W:$H:flags=area"
    to_nut natural_vtest yuv420p -i "$v"
    store natural_vtest yuv420p
}

# ------------------------------------------------------------- smooth ---
# natural_cup: the OpenCV.js tutorials' video cup.mp4 (a hand holds a black
# cup in front of a plain light wall and tilts it; 640x480, 26.777 fps,
# H.264): its first 150 frames, scaled to 320x240 (area averaging), played
# at 20 fps. Decoded with one thread: FFmpeg's frame-threaded H.264 decoder
# reports slice errors on this file, the single-threaded one does not.
clip_natural_cup() {
    g=$(pkgfile opencv-doc /usr/share/doc/opencv-doc/opencv4/html/cup.mp4.gz)
    gzip -dc "$g" > "$tmp/cup.mp4"
    vf="scale=$W:$H:flags=area"
    to_nut natural_cup yuv420p -threads 1 -i "$tmp/cup.mp4"
    store natural_cup yuv420p
}

# synfig_kid: synfig's example prologue_kid.sif (a cartoon boy in a cloak,
# shaded with gradients and soft outlines, breathing and swaying over a
# parchment background; 288x504, 5 s) rendered by the synfig CLI at
# 320x560 and 30 fps (its 5 s become 150 frames, played at 20 fps), seen
# through a 320x240 window that moves down 2 px a frame, head to boots.
clip_synfig_kid() {
    need synfig
    s=$(pkgfile synfig-examples /usr/share/doc/synfig-examples/examples/prologue_kid.sif)
    mkdir -p "$tmp/kid"
    synfig -T 1 "$s" -t png -w $W -h 560 --fps 30 --begin-time 0 --end-time $((N - 1))f \
        -o "$tmp/kid/k.png" >"$tmp/kid.log" 2>&1 ||
        { cat "$tmp/kid.log" >&2; echo "make_devset: synfig failed" >&2; exit 1; }
    vf="crop=$W:$H:0:'2*n'"
    to_nut synfig_kid yuv420p -framerate $FPS -start_number 0 -i "$tmp/kid/k.%04d.png"
    store synfig_kid yuv420p
}

# povray_spline: POV-Ray's animation example splinefollow.pov, overview
# camera: six aircraft (phong-shaded cones and a glass canopy) fly along a
# spline through a yellow and a blue ring and around a green pole, casting
# shadows on a checkered floor under a gradient sky. Rendered at 320x240
# with the example's antialiasing (threshold 0.3, depth 3, no jitter),
# clock 0.0025 a frame (0 to 0.3725): the aircraft are 1/6 of the clock
# apart, so no two frames of the clip are the same.
clip_povray_spline() {
    need povray
    s=$(pkgfile povray-examples /usr/share/doc/povray/examples/animations/splinefollow/splinefollow.pov)
    mkdir -p "$tmp/pov"
    (cd "$tmp/pov" && povray -GA +I"$s" +O"$tmp/pov/f.png" +FN +W$W +H$H -D \
        +A0.3 +R3 -J +KFI0 +KFF$((N - 1)) +KI0 +KF0.3725 >"$tmp/pov.log" 2>&1) ||
        { tail -20 "$tmp/pov.log" >&2; echo "make_devset: povray failed" >&2; exit 1; }
    vf=null
    to_nut povray_spline yuv420p -framerate $FPS -start_number 0 -i "$tmp/pov/f%03d.png"
    store povray_spline yuv420p
}

# ------------------------------------------------------------ cuts ------
# cuts_mix: scene cuts. x11_penguins frames 0-44, x11_fishtank 0-49,
# pingus_pan 0-54 and x11_oneko 0-39, the stored clips played one after the
# other (190 frames; cuts before frames 45, 95 and 150, none at a multiple
# of pnmf's default window of 60). Made after the clips it is cut from.
clip_cuts_mix() {
    g="[0:v]trim=end_frame=45,setpts=PTS-STARTPTS[a];[1:v]trim=end_frame=50,setpts=PTS-STARTPTS[b];"
    g="$g[2:v]trim=end_frame=55,setpts=PTS-STARTPTS[c];[3:v]trim=end_frame=40,setpts=PTS-STARTPTS[d];"
    ff -i "$here/x11_penguins.mkv" -i "$here/x11_fishtank.mkv" -i "$here/pingus_pan.mkv" -i "$here/x11_oneko.mkv" \
        -filter_complex "$g[a][b][c][d]concat=n=4:v=1:a=0[o]" -map "[o]" -c:v rawvideo -pix_fmt yuv420p \
        -f nut "$tmp/cuts_mix.nut"
    store cuts_mix yuv420p
}

need "$FFMPEG"
clips=${*:-x11_penguins x11_oneko x11_fishtank pingus_pan natural_vtest cuts_mix natural_cup synfig_kid povray_spline}
for c in $clips; do
    "clip_$c"
done
