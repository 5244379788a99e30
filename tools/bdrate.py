#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""BD-rate between two codecs' points of pnmf-compare's rd.csv files.

    python3 tools/bdrate.py A/rd.csv CODEC_A B/rd.csv CODEC_B

prints the Bjontegaard delta rate of B's CODEC_B against A's CODEC_A
(negative: B needs fewer bytes for the same PSNR-Y), the way pnmf-compare
computes it between the codecs of one run: log10(bytes) as a function of
PSNR-Y through the points of each codec, a monotone piecewise cubic
(PCHIP) through them, the difference of the two integrals over the PSNR-Y
range both cover, as a percentage. It compares two runs, such as pnmf of
two commits or two option sets, which pnmf-compare's --anchors cannot
(its anchors must be other codecs). Points whose status is not ok are
left out; points of equal PSNR-Y keep the smallest file.
"""
import csv
import math
import sys


def points(path, codec):
    best = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["codec"] != codec or r.get("status", "ok") not in ("ok", "") or not r["bytes"] or not r["psnr_y"]:
                continue
            p, b = float(r["psnr_y"]), float(r["bytes"])
            if b > 0 and (p not in best or b < best[p]):
                best[p] = b
    return sorted((p, math.log10(b)) for p, b in best.items())


def slopes(x, y):
    """Fritsch-Carlson derivatives of the monotone cubic through (x, y)."""
    n = len(x)
    h = [x[i + 1] - x[i] for i in range(n - 1)]
    s = [(y[i + 1] - y[i]) / h[i] for i in range(n - 1)]
    if n == 2:
        return [s[0], s[0]]
    d = [0.0] * n
    for i in range(1, n - 1):
        if s[i - 1] * s[i] > 0:
            w1, w2 = 2 * h[i] + h[i - 1], h[i] + 2 * h[i - 1]
            d[i] = (w1 + w2) / (w1 / s[i - 1] + w2 / s[i])

    def end(h0, h1, s0, s1):
        v = ((2 * h0 + h1) * s0 - h0 * s1) / (h0 + h1)
        if v * s0 <= 0:
            return 0.0
        if s0 * s1 <= 0 and abs(v) > abs(3 * s0):
            return 3 * s0
        return v

    d[0] = end(h[0], h[1], s[0], s[1])
    d[-1] = end(h[-1], h[-2], s[-1], s[-2])
    return d


def integral(pts, lo, hi):
    """The integral of the cubic through pts from lo to hi, exactly per piece."""
    x, y = [p for p, _ in pts], [v for _, v in pts]
    d = slopes(x, y)
    total = 0.0
    for i in range(len(x) - 1):
        a, b = max(lo, x[i]), min(hi, x[i + 1])
        if b <= a:
            continue
        h = x[i + 1] - x[i]

        def prim(t):
            # antiderivative of the Hermite cubic in u = (t - x_i) / h, times h
            u = (t - x[i]) / h
            h00 = u ** 4 / 2 - u ** 3 + u
            h10 = u ** 4 / 4 - 2 * u ** 3 / 3 + u ** 2 / 2
            h01 = -u ** 4 / 2 + u ** 3
            h11 = u ** 4 / 4 - u ** 3 / 3
            return h * (h00 * y[i] + h10 * h * d[i] + h01 * y[i + 1] + h11 * h * d[i + 1])

        total += prim(b) - prim(a)
    return total


def main(argv):
    if len(argv) != 5:
        sys.stderr.write("usage: bdrate.py A/rd.csv CODEC_A B/rd.csv CODEC_B\n")
        return 2
    a, b = points(argv[1], argv[2]), points(argv[3], argv[4])
    if len(a) < 4 or len(b) < 4:
        sys.stderr.write("bdrate.py: %d and %d distinct points: at least 4 each are needed\n" % (len(a), len(b)))
        return 1
    lo, hi = max(a[0][0], b[0][0]), min(a[-1][0], b[-1][0])
    if hi <= lo:
        sys.stderr.write("bdrate.py: the PSNR-Y ranges do not overlap\n")
        return 1
    diff = (integral(b, lo, hi) - integral(a, lo, hi)) / (hi - lo)
    print("BD-rate of %s (%s) against %s (%s): %+.2f %% over %.2f-%.2f dB" %
          (argv[4], argv[3], argv[2], argv[1], (10 ** diff - 1) * 100, lo, hi))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
