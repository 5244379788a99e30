/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bjøntegaard deltas between two rate-distortion curves (pure maths, no I/O).
 *
 * A curve is n points (rate, PSNR in dB), in any order; the rate's unit
 * does not matter (bytes, kbit/s, bpp) as long as both curves use the
 * same. BD-rate is the mean difference of ln(rate) over the overlapping
 * PSNR range, as a percentage: (exp(mean) - 1) * 100; negative means the
 * test curve needs fewer bits than the anchor for the same quality.
 * BD-PSNR is the mean difference of PSNR over the overlapping ln(rate)
 * range, in dB; positive means the test curve is better.
 *
 * Two fits:
 *  - CMP_BD_PCHIP: the monotone piecewise cubic Hermite interpolant of
 *    Fritsch and Carlson through the points (the current JCT-VC / AOM
 *    practice), integrated exactly piece by piece;
 *  - CMP_BD_CUBIC: the least-squares cubic polynomial of the original
 *    VCEG-M33 proposal (exact interpolation for 4 points), integrated.
 *
 * A curve is refused, with a reason, when it has fewer than 4 points, when
 * it is not monotonic (sorted by rate, the rates must be distinct and the
 * PSNR must rise strictly; exact duplicate points are dropped first), when
 * a value is not finite or a rate is not positive; a pair is refused when
 * the two ranges do not overlap (touching at one value is no overlap).
 */
#ifndef PNMF_COMPARE_BD_H
#define PNMF_COMPARE_BD_H

#include <stddef.h>

enum { CMP_BD_PCHIP = 0, CMP_BD_CUBIC = 1 };

/* The fewest points a curve must have. */
#define CMP_BD_MIN_POINTS 4

/* The most points a curve may have. */
#define CMP_BD_MAX_POINTS 256

typedef struct CmpBd {
    int ok;             /* 1: value holds the delta; 0: reason says why not */
    double value;       /* BD-rate in %, or BD-PSNR in dB */
    double lo, hi;      /* the overlap integrated over: PSNR dB (BD-rate) or ln rate (BD-PSNR) */
    char reason[160];   /* "anchor: only 3 points (4 needed)", ... */
} CmpBd;

/* BD-rate of the test curve against the anchor, with fit CMP_BD_PCHIP or
 * CMP_BD_CUBIC. Returns 0 with r->ok = 1, or -1 with r->reason set. */
int cmp_bd_rate(const double *anchor_rate, const double *anchor_psnr, int anchor_n,
                const double *test_rate, const double *test_psnr, int test_n, int method, CmpBd *r);

/* BD-PSNR of the test curve against the anchor; as cmp_bd_rate(). */
int cmp_bd_psnr(const double *anchor_rate, const double *anchor_psnr, int anchor_n,
                const double *test_rate, const double *test_psnr, int test_n, int method, CmpBd *r);

/* The Fritsch–Carlson slopes d[0..n-1] of the monotone cubic Hermite
 * interpolant through (x[i], y[i]), x strictly increasing, n >= 2. */
void cmp_pchip_slopes(const double *x, const double *y, int n, double *d);

/* The interpolant with those slopes at t (clamped to [x[0], x[n-1]]). */
double cmp_pchip_eval(const double *x, const double *y, const double *d, int n, double t);

/* Its exact integral over [a, b], a <= b, inside [x[0], x[n-1]]. */
double cmp_pchip_integral(const double *x, const double *y, const double *d, int n, double a,
                          double b);

#endif /* PNMF_COMPARE_BD_H */
