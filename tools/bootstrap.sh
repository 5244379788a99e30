#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what is missing (Debian 12, apt-get), configure and build into
# build/. Idempotent: with everything present it only runs an incremental
# build.
set -eu
cd "$(dirname "$0")/.."
PKGS="build-essential cmake pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libfftw3-dev libzstd-dev libwebp-dev ffmpeg gnuplot-nox parallel openssh-client python3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "bootstrap: installing$missing" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi
BUILD=${PNMF_BUILD_DIR:-build}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ${PNMF_CMAKE_ARGS:-} >&2
cmake --build "$BUILD" -j"$(nproc)" >&2
