#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pnmf-parallel: encode a clip in chunks, each by its own pnmf-enc --start
# --frames, run by GNU parallel on this machine or on others over SSH, and
# join the chunks with pnmf-cat (docs/scaling.md).
set -u
prog=pnmf-parallel

usage() {
    cat <<EOF
usage: $prog [options] INPUT OUTPUT.pnmf [-- pnmf-enc options]
       $prog --list [--chunk FRAMES] [--frames N] INPUT [-- pnmf-enc options]
Encode INPUT in chunks, one pnmf-enc --start S --frames N per chunk, run by GNU
parallel here (-j) or on other hosts over SSH (--sshlogin, --slf), and join them
with pnmf-cat into OUTPUT.pnmf. Chunks end at the encoder's scene cuts
(pnmf-enc --scenes), else after --chunk frames rounded down to a whole number of
windows (-w), so no window of a one-process encode is cut in two.

  -j, --jobs N          chunks encoded at once on each host (default: one per
                        core); with more than one, each pnmf-enc gets --threads 1
                        unless the pnmf-enc options set --threads
  -S, --sshlogin HOSTS  run on these hosts (GNU parallel's --sshlogin: host,
                        user@host, N/host, ':' for this machine; comma-separated)
      --slf FILE        the hosts, one a line (GNU parallel's --sshloginfile)
      --chunk FRAMES    frames per chunk at most, unless a window is longer
                        (default 600)
      --frames N        INPUT has N frames: skip the scan for scene cuts and
                        chunk every --chunk frames
      --list            encode nothing: print the chunks, 'INDEX START FRAMES' a
                        line (for a batch system's job array, docs/scaling.md)
  -y                    overwrite OUTPUT if it exists (else it is kept: the
                        run refuses before encoding anything)
  -Q, --quiet           no progress lines
  -h, --help            this help
  -V, --version         print the version

Shared paths, no transfer: every host runs pnmf-enc at the path it has here
(PNMF_BIN, else beside this script, else the one on PATH), reads INPUT at its
absolute path and writes its chunk into a temporary directory beside OUTPUT,
so INPUT and OUTPUT's directory must be on a file system every host mounts at
the same place. Each chunk prints one line when done; a chunk that fails is
tried once more (GNU parallel --retries 2), and reported. On any failure the
run stops and leaves nothing behind; OUTPUT appears only when complete.
Exit status: 0 ok, 1 a chunk or the join failed, 2 usage, 3 cannot read INPUT,
5 OUTPUT exists (without -y).
EOF
}

die() { echo "$prog: $*" >&2; exit "${code:-1}"; }

jobs="" hosts="" slf="" chunk=600 frames="" quiet=0 list=0 overwrite=0
while [ $# -gt 0 ]; do
    case $1 in
    -j|--jobs) [ $# -ge 2 ] || code=2 die "option $1 needs a value"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    -S|--sshlogin) [ $# -ge 2 ] || code=2 die "option $1 needs a value"; hosts=$2; shift 2 ;;
    --sshlogin=*) hosts=${1#*=}; shift ;;
    --slf) [ $# -ge 2 ] || code=2 die "option $1 needs a value"; slf=$2; shift 2 ;;
    --slf=*) slf=${1#*=}; shift ;;
    --chunk) [ $# -ge 2 ] || code=2 die "option $1 needs a value"; chunk=$2; shift 2 ;;
    --chunk=*) chunk=${1#*=}; shift ;;
    --frames) [ $# -ge 2 ] || code=2 die "option $1 needs a value"; frames=$2; shift 2 ;;
    --frames=*) frames=${1#*=}; shift ;;
    -Q|--quiet) quiet=1; shift ;;
    -y) overwrite=1; shift ;;
    -V|--version)
        for e in "${PNMF_BIN:-/nonexistent}/pnmf-enc" "$(dirname "$0")/pnmf-enc" pnmf-enc; do
            v=$("$e" --version 2>/dev/null) && break
        done
        echo "$prog ${v#pnmf-enc }"; exit 0 ;;
    --list) list=1; quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) break ;;
    -?*) code=2 die "invalid option '$1'; try '$prog --help'" ;;
    *) break ;;
    esac
done
if [ $list = 1 ]; then
    [ $# -ge 1 ] || code=2 die "expected INPUT; try '$prog --help'"
    input=$1 output=${TMPDIR:-/tmp}/list
    shift
else
    [ $# -ge 2 ] || code=2 die "expected INPUT and OUTPUT.pnmf; try '$prog --help'"
    input=$1 output=$2
    shift 2
    [ -e "$output" ] && [ $overwrite = 0 ] && code=5 die "$output: exists; -y to overwrite it"
fi
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || code=2 die "unexpected '$1': pnmf-enc options follow '--'"
    shift
fi
isnum() { case $1 in ''|*[!0-9]*) return 1 ;; *) [ "$1" -ge "$2" ] 2>/dev/null ;; esac; }
[ -z "$jobs" ] || isnum "$jobs" 1 || code=2 die "option -j expects a positive integer, got '$jobs'"
isnum "$chunk" 1 || code=2 die "option --chunk expects a positive integer, got '$chunk'"
[ -z "$frames" ] || isnum "$frames" 1 || code=2 die "option --frames expects a positive integer, got '$frames'"
[ -z "$hosts" ] || [ -z "$slf" ] || code=2 die "--sshlogin and --slf: one or the other"

# The window length and the options the chunks must not get twice.
window=60 keyint=250 threads_set=0 scenecut=1
prev=""
for a in "$@"; do
    case $prev in -w|--window) window=$a ;; --keyint) keyint=$a ;; esac
    case $a in
    --keyint=*) keyint=${a#*=} ;;
    -w?*) window=${a#-w} ;;
    --window=*) window=${a#*=} ;;
    --threads|--threads=*) threads_set=1 ;;
    --no-scenecut) scenecut=0 ;;
    --scenecut) scenecut=1 ;;
    --start|--start=*|--frames|--frames=*|--scenes) code=2 die "pnmf-enc option $a: $prog sets it for each chunk" ;;
    esac
    prev=$a
done
isnum "$window" 1 || code=2 die "pnmf-enc option -w expects a positive integer, got '$window'"
isnum "$keyint" 1 || code=2 die "pnmf-enc option --keyint expects a positive integer, got '$keyint'"

# The tools: PNMF_BIN, beside this script, or on PATH; absolute, for the hosts.
here=$(cd "$(dirname "$0")" && pwd)
find_tool() {
    if [ -n "${PNMF_BIN:-}" ]; then echo "$PNMF_BIN/$1"
    elif [ -x "$here/$1" ]; then echo "$here/$1"
    else command -v "$1" || echo "$1"; fi
}
enc=$(find_tool pnmf-enc)
cat_=$(find_tool pnmf-cat)
command -v parallel >/dev/null 2>&1 || die "GNU parallel is not installed (Debian: apt-get install parallel)"
[ -x "$enc" ] || die "$enc: no pnmf-enc there (set PNMF_BIN)"
[ -x "$cat_" ] || die "$cat_: no pnmf-cat there (set PNMF_BIN)"

case $input in /*) ;; *) input=$(pwd)/$input ;; esac
outdir=$(cd "$(dirname "$output")" && pwd) || die "$output: no such directory"
tmp=$(mktemp -d "$outdir/.pnmf-parallel.XXXXXX") || die "$output: cannot make a temporary directory beside it"
pid=""
trap 'rm -rf "$tmp"' EXIT
for sig in INT TERM HUP; do
    trap '[ -z "$pid" ] || { kill -TERM $pid; wait $pid; }; exit 1' $sig
done
t0=$(date +%s)

# Frame count and scene cuts.
if [ -n "$frames" ]; then
    echo "frames $frames" > "$tmp/scenes"
else
    [ $quiet = 1 ] || echo "$prog: scanning $input for scene cuts" >&2
    "$enc" --scenes "$@" "$input" > "$tmp/scenes" || code=3 die "$input: the scan for scene cuts failed"
fi

# Chunks: "index start count" lines. A chunk ends at the last scene cut in
# the second half of its --chunk frames, else at the last boundary of the
# grid within them, else (a grid step longer than --chunk) at the first
# boundary after its start. The grid restarts at each cut. Its step is the
# spacing of a one-process encode's key windows (the first window at least
# --keyint frames after the last key window) when --chunk holds one: each
# chunk then starts where that encode starts a key window anyway, and the
# joined file is that encode's bytes. Otherwise it is the window length,
# and each chunk adds a key window.
period=$(( (keyint + window - 1) / window * window ))
awk -v chunk="$chunk" -v w="$window" -v period="$period" -v usecuts="$scenecut" '
    $1 == "cut" && usecuts { cut[++nc] = $2 }
    $1 == "frames" { F = $2 }
    END {
        if (chunk >= period) w = period
        cut[0] = 0
        s = 0; i = 0
        while (s < F) {
            lim = s + chunk
            if (lim >= F) e = F
            else {
                e = -1; L = 0; next_cut = F
                for (k = 0; k <= nc; k++) {
                    if (cut[k] <= lim) L = cut[k]
                    if (cut[k] > s + chunk / 2 && cut[k] <= lim) e = cut[k]
                    if (cut[k] > s && cut[k] < next_cut) next_cut = cut[k]
                }
                if (e < 0) {
                    e = L + int((lim - L) / w) * w
                    if (e <= s) {
                        base = L > s ? L : 0
                        for (k = 0; k <= nc; k++) if (cut[k] <= s) base = cut[k]
                        e = base + (int((s - base) / w) + 1) * w
                        if (e > next_cut) e = next_cut
                        if (e > F) e = F
                    }
                }
            }
            printf "%d %d %d\n", ++i, s, e - s
            s = e
        }
    }' "$tmp/scenes" > "$tmp/chunks"
n=$(wc -l < "$tmp/chunks")
[ "$n" -gt 0 ] || code=3 die "$input: no frames"
if [ $list = 1 ]; then
    cat "$tmp/chunks"
    exit 0
fi

jobopt=""
[ -n "$jobs" ] && jobopt="--jobs $jobs"
if [ $threads_set = 0 ] && [ "${jobs:-0}" != 1 ]; then set -- "$@" --threads 1; fi
[ $quiet = 0 ] || set -- "$@" -Q
[ $quiet = 1 ] || echo "$prog: $n chunks of $input, ${jobs:-one per core} at once${hosts:+ on $hosts}${slf:+ on the hosts of $slf}" >&2

# One pnmf-enc a chunk, as a shell command (each attempt noted in
# $tmp/attempts); its summary line, tagged, is the chunk's progress (GNU
# parallel prints a job's output when it ends). No --halt: GNU parallel
# would stop at a first failure without retrying it.
q() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }
cmd="echo {1} >> $(q "$tmp/attempts"); exec $(q "$enc") --start {2} --frames {3}"
for a in "$@"; do cmd="$cmd $(q "$a")"; done
cmd="$cmd $(q "$input") $(q "$tmp")/chunk_{1}.pnmf"
# shellcheck disable=SC2086
parallel --will-cite $jobopt ${hosts:+--sshlogin "$hosts"} ${slf:+--sshloginfile "$slf"} --retries 2 --joblog "$tmp/joblog" --colsep ' ' \
    --tagstring "chunk {1}/$n (frames {2}+{3})" "$cmd" :::: "$tmp/chunks" &
pid=$!
wait $pid
status=$?
pid=""
# Chunks tried twice; the job log (Seq Host Start Runtime Send Receive
# Exitval Signal Command) has each chunk's last attempt.
failed=0
for c in $(sort -n "$tmp/attempts" 2>/dev/null | uniq -d); do
    set -- $(sed -n "${c}p" "$tmp/chunks")  # index start count
    last=$(awk -F '\t' -v c="$c" 'NR > 1 && $1 == c { print $7 + $8 }' "$tmp/joblog")
    if [ "${last:-1}" = 0 ]; then
        echo "$prog: chunk $1 (frames $2..$(($2 + $3 - 1))) failed once; the retry succeeded" >&2
    else
        echo "$prog: chunk $1 (frames $2..$(($2 + $3 - 1))) failed twice (its error is above)" >&2
        failed=$((failed + 1))
    fi
done
[ $status -eq 0 ] || die "$output: not written: $failed of $n chunks failed"

set --
i=1
while [ $i -le "$n" ]; do
    [ -f "$tmp/chunk_$i.pnmf" ] || die "$output: not written: chunk $i is missing (a host that does not share $tmp?)"
    set -- "$@" "$tmp/chunk_$i.pnmf"
    i=$((i + 1))
done
"$cat_" -Q -y -o "$output" "$@" || die "$output: not written: the join failed"
if [ $quiet = 0 ]; then
    echo "$output: $n chunks, $(wc -c < "$output" | tr -d ' ') bytes, $(($(date +%s) - t0)) s" >&2
fi
exit 0
