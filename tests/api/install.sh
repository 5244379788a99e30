#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The library as a user installs it: `cmake --install` into a fresh prefix,
# the examples built against it with pkg-config alone (shared and static),
# only pnmf_ symbols exported, the soname versioned; then a decoder-only
# build (-DPNMF_BUILD_ENCODER=OFF) that needs neither FFTW nor the encoder.
# usage: install.sh SOURCE_DIR BUILD_DIR
set -eu
SRC=$1
B=$2
. "$(dirname "$0")/../lib.sh"
CC=${CC:-cc}

cmake --install "$B" --prefix "$T/prefix" > /dev/null
P=$T/prefix
LIBDIR=$(ls -d "$P"/lib*/pkgconfig | head -1 | xargs dirname)
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
for f in bin/pnmf-enc bin/pnmf-dec include/pnmf/pnmf.h include/pnmf/version.h; do
    check '[ -e "$P/$f" ]' "$f not installed"
done
check '[ -f "$LIBDIR/libpnmf.a" ]' "no static library installed"
soname=$(objdump -p "$LIBDIR/libpnmf.so" | sed -n 's/.*SONAME *//p')
check '[ "$soname" = libpnmf.so.0 ]' "soname is '$soname', expected libpnmf.so.0"
real=$(basename "$(ls "$LIBDIR"/libpnmf.so.*.*.*)")
check '[ "libpnmf.so.$(pkg-config --modversion pnmf)" = "$real" ]' "pkg-config's version and $real differ"
others=$(nm -D --defined-only "$LIBDIR/libpnmf.so" | awk '$3 !~ /^pnmf_/ {print $3}' | tr '\n' ' ')
check '[ -z "$others" ]' "the shared library exports more than pnmf_ symbols: $others"

# The examples, with nothing but pkg-config's flags.
$CC -std=c99 -Wall -Werror -o "$T/decode" "$SRC/examples/decode.c" $(pkg-config --cflags --libs pnmf)
$CC -std=c99 -Wall -Werror -o "$T/encode" "$SRC/examples/encode.c" $(pkg-config --cflags --libs pnmf)
$CC -std=c99 -Wall -Werror -o "$T/decode-static" "$SRC/examples/decode.c" -static-libgcc \
    $(pkg-config --cflags pnmf) "$LIBDIR/libpnmf.a" $(pkg-config --static --libs-only-l pnmf | sed 's/-lpnmf//')
"$P/bin/pnmf-enc" -w 20 -q 40 "$SRC/samples/sprites.mkv" "$T/a.pnmf" 2>/dev/null
"$P/bin/pnmf-dec" "$T/a.pnmf" - > "$T/tool.y4m" 2>/dev/null
LD_LIBRARY_PATH="$LIBDIR" "$T/decode" "$T/a.pnmf" > "$T/shared.y4m"
"$T/decode-static" "$T/a.pnmf" > "$T/static.y4m"
check 'cmp -s "$T/tool.y4m" "$T/shared.y4m"' "the installed decode example differs from pnmf-dec"
check 'cmp -s "$T/tool.y4m" "$T/static.y4m"' "the statically linked decode example differs from pnmf-dec"
LD_LIBRARY_PATH="$LIBDIR" "$T/encode" "$T/b.pnmf" < "$T/tool.y4m" 2>/dev/null
"$P/bin/pnmf-enc" "$T/tool.y4m" "$T/c.pnmf" 2>/dev/null
check 'cmp -s "$T/b.pnmf" "$T/c.pnmf"' "the installed encode example differs from pnmf-enc"

# A decoder-only library: built without FFTW, it decodes the same bytes
# and its encoder calls fail with a reason.
cmake -S "$SRC" -B "$T/dec" -DCMAKE_BUILD_TYPE=Release -DPNMF_BUILD_ENCODER=OFF -DPNMF_BUILD_TOOLS=OFF \
    -DBUILD_TESTING=OFF > /dev/null
cmake --build "$T/dec" -j2 > /dev/null
cmake --install "$T/dec" --prefix "$T/dprefix" > /dev/null
DLIB=$(ls -d "$T/dprefix"/lib*/pkgconfig | head -1 | xargs dirname)
check '! nm -D "$DLIB/libpnmf.so" | grep -q fftw' "the decoder-only library refers to FFTW"
check '! pkg-config --static --libs "$DLIB/pkgconfig/pnmf.pc" | grep -q fftw' "the decoder-only pnmf.pc asks for FFTW"
check '[ ! -e "$T/dprefix/include/pnmf/fit.h" ]' "the decoder-only install has the fit's header"
PKG_CONFIG_PATH="$DLIB/pkgconfig" $CC -std=c99 -o "$T/ddecode" "$SRC/examples/decode.c" \
    $(PKG_CONFIG_PATH="$DLIB/pkgconfig" pkg-config --cflags --libs pnmf)
PKG_CONFIG_PATH="$DLIB/pkgconfig" $CC -std=c99 -o "$T/dencode" "$SRC/examples/encode.c" \
    $(PKG_CONFIG_PATH="$DLIB/pkgconfig" pkg-config --cflags --libs pnmf)
LD_LIBRARY_PATH="$DLIB" "$T/ddecode" "$T/a.pnmf" > "$T/dec.y4m"
check 'cmp -s "$T/tool.y4m" "$T/dec.y4m"' "the decoder-only library decodes other bytes"
check '! LD_LIBRARY_PATH="$DLIB" "$T/dencode" "$T/d.pnmf" < "$T/tool.y4m" 2> "$T/dencode.err"' \
    "the decoder-only library encoded"
check 'grep -q "not built" "$T/dencode.err"' "the decoder-only encoder's error does not say why"
finish install
