#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tools/bdrate.py against BD-rates known by construction: a codec whose
# every point takes 0.9 times the bytes at the same PSNR-Y is -10 %
# whatever the curve; the same points are 0 %; bytes between 0.8 and 0.9
# times at every point give a BD-rate between -20 % and -10 %; too few
# points and disjoint ranges are refused.
import csv, os, subprocess, sys, tempfile

tool = sys.argv[1]
fails = 0

def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["codec", "value", "bytes", "psnr_y", "status"])
        for r in rows:
            w.writerow(r)

def bd(a, ca, b, cb):
    r = subprocess.run([sys.executable, tool, a, ca, b, cb], capture_output=True, text=True)
    if r.returncode:
        return None, r.returncode
    return float(r.stdout.split(":")[1].split("%")[0]), 0

def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL:", what)

d = tempfile.mkdtemp()
A, B = os.path.join(d, "a.csv"), os.path.join(d, "b.csv")
psnr = [28.0, 33.5, 37.0, 41.2, 46.0, 52.5]
base = [1200, 4100, 9000, 21000, 52000, 160000]          # a bent, rising curve
write(A, [["x", i, b, p, "ok"] for i, (b, p) in enumerate(zip(base, psnr))] +
         [["x", 99, 10, 60.0, "failed"]])                 # left out: not ok
write(B, [["y", i, 0.9 * b, p, "ok"] for i, (b, p) in enumerate(zip(base, psnr))])
v, rc = bd(A, "x", B, "y")
check(rc == 0 and abs(v - (-10.0)) < 0.01, "0.9 times the bytes: %s (exit %d)" % (v, rc))
v, rc = bd(B, "y", A, "x")
check(rc == 0 and abs(v - (100 / 0.9 - 100)) < 0.01, "the other way round: %s" % v)
v, rc = bd(A, "x", A, "x")
check(rc == 0 and abs(v) < 0.005, "the same points: %s" % v)
# B's bytes 0.8 times A's at the lowest PSNR-Y, rising to 0.9 times at the
# highest: the BD-rate lies strictly between -20 % and -10 %
f = [0.8 + 0.1 * i / (len(psnr) - 1) for i in range(len(psnr))]
write(B, [["y", i, k * b, p, "ok"] for i, (k, b, p) in enumerate(zip(f, base, psnr))])
v, rc = bd(A, "x", B, "y")
check(rc == 0 and -20.0 < v < -10.0, "0.8 to 0.9 times: %s" % v)
# refused: three points, and ranges that do not overlap
write(B, [["y", i, b, p, "ok"] for i, (b, p) in enumerate(zip(base[:3], psnr[:3]))])
v, rc = bd(A, "x", B, "y")
check(rc == 1, "three points accepted: %s" % v)
write(B, [["y", i, b, p + 40, "ok"] for i, (b, p) in enumerate(zip(base, psnr))])
v, rc = bd(A, "x", B, "y")
check(rc == 1, "disjoint ranges accepted: %s" % v)
print("test_bdrate: %d failed" % fails)
sys.exit(1 if fails else 0)
