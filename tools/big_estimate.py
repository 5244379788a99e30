#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The big-block estimate (docs/measurements.md, "Big blocks on smooth clips").

Runs a measurement build of pnmf-enc (-DPNMF_BIG_TRIAL) over the -q ladder
of a clip and writes OUT/base.csv (the points as coded) and OUT/est16.csv,
OUT/est32.csv, OUT/estU.csv, OUT/estA.csv: the same points with the bytes the tool would
save, estimated, so that tools/bdrate.py compares them.

For each frame the build writes, per 16x16 group of four 8x8 blocks, the
difference (in bits: cost / lambda) between the four blocks' costs as
coded and the best big coding (one vector, the low 8x8 of a 16-point
transform or no levels), and per 32x32 region of four groups the same
with a 32-point transform. The group's decision is a flag coded after
its top-left block's mode where that mode is shifted or has levels (and
a big group's mode must be): here an adaptive binary context per count
(0..2) of big groups left and above, priced as -log2 of its counts.
estU: big groups without levels alone; estA: a flag in every group,
and a big group of any inter mode. PNMF_BIGR (default 2): how far the
best shifted vector is refined, 0 for the blocks' own vectors alone.
The gains of the frames coded (the encoder codes some frames more than
once while it picks steps) are scaled to the clip's frames.
"""
import math
import os
import re
import subprocess
import sys

LADDER = (16, 26, 35, 45, 54, 64)
ANY = False  # load(): the variant with a flag in every group (estA)


class Ctx:
    def __init__(self, n):
        self.c = [[1, 1] for _ in range(n)]

    def cost(self, c, d):
        n0, n1 = self.c[c]
        return -math.log2((n1 if d else n0) / (n0 + n1))

    def update(self, c, d):
        self.c[c][d] += 1
        if sum(self.c[c]) > 255:
            self.c[c] = [self.c[c][0] / 2, self.c[c][1] / 2]


def load(path):
    frames, cur = [], None
    for line in open(path):
        t = line.split()
        if t[0] == 'F':
            cur = {'g': {}, 'R': {}}
            frames.append(cur)
        elif t[0] == 'R':
            cur['R'][(int(t[2]), int(t[3]))] = (float(t[4]), int(t[5]))
        elif len(t) < 7:  # a group with an intra, spatial, palette or compound block: its flag is 0
            cur['g'][(int(t[1]), int(t[2]))] = (-1e9, 1, -1e9)
        elif ANY:  # every group codes a flag, and a big group may have any inter mode
            cur['g'][(int(t[1]), int(t[2]))] = (float(t[3]), 1, float(t[6]))
        else:  # gain of any big coding, of those allowed, the top-left's mode allows the flag, uncoded only
            cur['g'][(int(t[1]), int(t[2]))] = (float(t[4]), int(t[5]), float(t[6]))
    return frames


def net_bits(frames, use32, uncoded):
    gain = flags = 0.0
    c16, c32 = Ctx(3), Ctx(3)
    for f in frames:
        dec16, dec32, done = {}, {}, set()

        def choose16(p):
            g, tl, gu = f['g'][p]
            if uncoded:
                g = gu
            c = dec16.get((p[0], p[1] - 1), 0) + dec16.get((p[0] - 1, p[1]), 0)
            b1, b0 = c16.cost(c, 1), c16.cost(c, 0)
            big = g > -1e8 and g - b1 > (-b0 if tl else 0)
            if not big and not tl:
                return 0.0, 0.0, None
            return (g if big else 0.0), (b1 if big else b0), (c, int(big))

        if use32:
            for (ry, rx), (g32, tl32) in sorted(f['R'].items()):
                grp = [(2 * ry + i, 2 * rx + k) for i in (0, 1) for k in (0, 1)]
                gb = fb = 0.0
                decs = []
                for p in grp:
                    g, fl, cd = choose16(p)
                    gb += g
                    fb += fl
                    decs.append((p, cd))
                c = dec32.get((ry, rx - 1), 0) + dec32.get((ry - 1, rx), 0)
                if tl32 and g32 > -1e8:
                    a1, a0 = c32.cost(c, 1), c32.cost(c, 0)
                    if g32 - a1 > gb - fb - a0:
                        gain += g32
                        flags += a1
                        c32.update(c, 1)
                        dec32[(ry, rx)] = 1
                        for p in grp:
                            dec16[p] = 1
                            done.add(p)
                        continue
                    flags += a0
                    c32.update(c, 0)
                    dec32[(ry, rx)] = 0
                for p, cd in decs:
                    if cd:
                        gain += f['g'][p][0] if cd[1] else 0.0
                        flags += c16.cost(cd[0], cd[1])
                        c16.update(cd[0], cd[1])
                        dec16[p] = cd[1]
                    done.add(p)
        for p in sorted(f['g']):
            if p in done:
                continue
            g, fl, cd = choose16(p)
            if cd:
                gain += g
                flags += fl
                c16.update(cd[0], cd[1])
                dec16[p] = cd[1]
    return gain - flags


def main():
    if len(sys.argv) != 4:
        sys.exit('usage: big_estimate.py TRIAL_PNMF_ENC CLIP OUTDIR')
    enc, clip, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    head = 'codec,knob,value,frames,width,height,bytes,bpp,psnr_y\n'
    rows = {k: [head] for k in ('base', 'est16', 'est32', 'estU', 'estA')}
    for q in LADDER:
        trial = os.path.join(out, 'trial%d.txt' % q)
        for p in (trial, trial + '.groups'):
            if os.path.exists(p):
                os.remove(p)
        env = dict(os.environ, PNMF_BIGTRIAL=trial, PNMF_BIGR=os.environ.get('PNMF_BIGR', '2'), PNMF_BIG32='1')
        r = subprocess.run([enc, '-y', '--threads', '1', '-q', str(q), clip, os.path.join(out, 'q%d.pnmf' % q)],
                           env=env, capture_output=True, text=True, check=True)
        m = re.search(r'frames (\d+)\s+bytes (\d+).*psnr-y ([0-9.]+)', r.stderr)
        nf, size, psnr = int(m.group(1)), int(m.group(2)), m.group(3)
        global ANY
        have = os.path.exists(trial + '.groups')
        ANY = True
        est_any = net_bits(load(trial + '.groups'), 0, 0) if have else 0.0
        ANY = False
        fr = load(trial + '.groups') if have else []
        coded = len(fr) or 1
        est = {'base': 0.0, 'est16': net_bits(fr, 0, 0), 'est32': net_bits(fr, 1, 0), 'estU': net_bits(fr, 0, 1),
               'estA': est_any}
        for k, bits in est.items():
            saved = int(round(bits / 8 * nf / coded))
            rows[k].append('pnmf,q,%d,%d,0,0,%d,0,%s\n' % (q, nf, size - saved, psnr))
        print('q %d: %d B %s dB, frames coded with the estimate %d; saved: 16 %d B, 16+32 %d B, uncoded 16 %d B, '
              'a flag in every group %d B' %
              (q, size, psnr, len(fr), round(est['est16'] / 8 * nf / coded), round(est['est32'] / 8 * nf / coded),
               round(est['estU'] / 8 * nf / coded), round(est['estA'] / 8 * nf / coded)), flush=True)
    for k, v in rows.items():
        with open(os.path.join(out, k + '.csv'), 'w') as fh:
            fh.writelines(v)


if __name__ == '__main__':
    main()
