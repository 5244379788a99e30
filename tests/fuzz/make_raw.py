#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# make_raw.py IN.pnmf OUT: the raw form of a .pnmf file for the decode
# corpus (docs/fuzzing.md): each 'WIND' chunk's zstd frame replaced by
# "RAW!" and the decompressed payload, the index entries and the trailer
# pointing at the chunks' new places, CRCs left as zeros (fuzz_decode
# recomputes them and compresses raw windows again). Key windows only:
# a continuing window's frame needs the previous payload as a prefix.
# Needs the zstd program.
import struct
import subprocess
import sys

data = open(sys.argv[1], 'rb').read()
header = struct.unpack_from('<H', data, 12)[0]
if data[41] & 1:
    sys.exit('the quality byte is odd: fuzz_decode would read the file as it is')
WIND = struct.unpack('<I', b'WIND')[0]
INDX = struct.unpack('<I', b'INDX')[0]
out = bytearray(data[:header])
pos = header
now_at = {}
index_at = None
while pos + 12 <= len(data):
    kind, length = struct.unpack_from('<II', data, pos)
    if length > len(data) - pos - 12:
        break
    body = bytearray(data[pos + 8:pos + 8 + length])
    now_at[pos] = len(out)
    if kind == WIND:
        raw = subprocess.run(['zstd', '-d', '-c', '-q'], input=bytes(body[8:]), capture_output=True,
                             check=True).stdout
        body = body[:8] + b'RAW!' + raw
    if kind == INDX:
        index_at = len(out)
        for i in range(struct.unpack_from('<I', body, 0)[0]):
            struct.pack_into('<Q', body, 4 + 16 * i, now_at[struct.unpack_from('<Q', body, 4 + 16 * i)[0]])
    out += struct.pack('<II', kind, len(body)) + body + b'\0\0\0\0'
    pos += 12 + length
    if kind == INDX:
        break
trailer = bytearray(data[pos:])
if index_at is not None and len(trailer) >= 8:
    struct.pack_into('<Q', trailer, 0, index_at)
out += trailer
open(sys.argv[2], 'wb').write(out)
