/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bjøntegaard deltas (compare_bd.h).
 *
 * Outline: each curve is sorted by rate and checked (enough points, PSNR
 * strictly rising with strictly rising rate); both are fitted with y = f(x), where x is
 * PSNR and y = ln(rate) for BD-rate, or x = ln(rate) and y = PSNR for
 * BD-PSNR; the two fits are integrated in closed form over the overlap of
 * the x ranges, and the mean difference (test - anchor) is reported.
 *
 * PCHIP (F. N. Fritsch and R. E. Carlson, "Monotone piecewise cubic
 * interpolation", SIAM J. Numer. Anal. 17(2), 1980): on each interval a
 * cubic Hermite piece through the two end values with slopes d[i]; interior
 * slopes are the weighted harmonic mean of the neighbouring secants (zero
 * at a local extremum), end slopes the non-centred three-point estimate
 * limited so the interpolant stays monotone, as in MATLAB's and SciPy's
 * pchip. Each piece integrates exactly (its Hermite basis does), so no
 * sampling error enters the BD figure.
 *
 * Cubic (G. Bjøntegaard, VCEG-M33, 2001): the least-squares cubic
 * polynomial, here in a centred and scaled variable so the 4x4 normal
 * equations stay well conditioned.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare_bd.h"

typedef struct Curve {
    int n;
    double rate[CMP_BD_MAX_POINTS]; /* ascending */
    double psnr[CMP_BD_MAX_POINTS]; /* strictly ascending */
} Curve;

/* Sort by rate, drop exact duplicates, and check the curve. */
static int curve_prepare(const char *who, const double *rate, const double *psnr, int n, Curve *c,
                         CmpBd *r)
{
    if (n < CMP_BD_MIN_POINTS) {
        snprintf(r->reason, sizeof(r->reason), "%s: only %d point%s (%d needed)", who, n,
                 n == 1 ? "" : "s", CMP_BD_MIN_POINTS);
        return -1;
    }
    if (n > CMP_BD_MAX_POINTS) {
        snprintf(r->reason, sizeof(r->reason), "%s: %d points (at most %d)", who, n,
                 CMP_BD_MAX_POINTS);
        return -1;
    }
    c->n = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(rate[i]) || !isfinite(psnr[i]) || rate[i] <= 0) {
            snprintf(r->reason, sizeof(r->reason), "%s: invalid point (rate %g, PSNR %g)", who,
                     rate[i], psnr[i]);
            return -1;
        }
        /* insertion by rate, then PSNR */
        int j = c->n;
        while (j > 0 && (c->rate[j - 1] > rate[i] ||
                         (c->rate[j - 1] == rate[i] && c->psnr[j - 1] > psnr[i]))) {
            c->rate[j] = c->rate[j - 1];
            c->psnr[j] = c->psnr[j - 1];
            j--;
        }
        c->rate[j] = rate[i];
        c->psnr[j] = psnr[i];
        c->n++;
    }
    int m = 1;
    for (int i = 1; i < c->n; i++) {
        if (c->rate[i] == c->rate[m - 1] && c->psnr[i] == c->psnr[m - 1]) continue;
        c->rate[m] = c->rate[i];
        c->psnr[m] = c->psnr[i];
        m++;
    }
    c->n = m;
    if (c->n < CMP_BD_MIN_POINTS) {
        snprintf(r->reason, sizeof(r->reason), "%s: only %d distinct points (%d needed)", who,
                 c->n, CMP_BD_MIN_POINTS);
        return -1;
    }
    for (int i = 1; i < c->n; i++) {
        if (c->rate[i] == c->rate[i - 1]) {
            snprintf(r->reason, sizeof(r->reason),
                     "%s: non-monotonic: two points at rate %.6g (%.3f and %.3f dB)", who, c->rate[i],
                     c->psnr[i - 1], c->psnr[i]);
            return -1;
        }
        if (!(c->psnr[i] > c->psnr[i - 1])) {
            snprintf(r->reason, sizeof(r->reason),
                     "%s: non-monotonic: %.3f dB at rate %.6g, not above %.3f dB at rate %.6g", who,
                     c->psnr[i], c->rate[i], c->psnr[i - 1], c->rate[i - 1]);
            return -1;
        }
    }
    return 0;
}

void cmp_pchip_slopes(const double *x, const double *y, int n, double *d)
{
    if (n < 2) {
        if (n == 1) d[0] = 0;
        return;
    }
    if (n == 2) {
        d[0] = d[1] = (y[1] - y[0]) / (x[1] - x[0]);
        return;
    }
    /* secants s[k] on [x[k], x[k+1]] and widths h[k]; at most 3 live at once */
    for (int k = 1; k < n - 1; k++) {
        const double h0 = x[k] - x[k - 1], h1 = x[k + 1] - x[k];
        const double s0 = (y[k] - y[k - 1]) / h0, s1 = (y[k + 1] - y[k]) / h1;
        if (s0 * s1 <= 0) {
            d[k] = 0;
        } else {
            const double w1 = 2 * h1 + h0, w2 = h1 + 2 * h0;
            d[k] = (w1 + w2) / (w1 / s0 + w2 / s1);
        }
    }
    /* ends: the three-point estimate, zeroed when it points against the
     * first secant, capped at 3x the secant when the secants change sign */
    for (int e = 0; e < 2; e++) {
        const int a = e ? n - 1 : 0, b = e ? n - 2 : 1, c = e ? n - 3 : 2;
        const double h1 = fabs(x[b] - x[a]), h2 = fabs(x[c] - x[b]);
        const double s1 = (y[b] - y[a]) / (x[b] - x[a]), s2 = (y[c] - y[b]) / (x[c] - x[b]);
        double v = ((2 * h1 + h2) * s1 - h1 * s2) / (h1 + h2);
        if ((v > 0) != (s1 > 0) || v == 0 || s1 == 0) v = 0;
        else if ((s1 > 0) != (s2 > 0) && fabs(v) > 3 * fabs(s1)) v = 3 * s1;
        d[a] = v;
    }
}

/* The piece on [x[k], x[k+1]] at local t in [0, 1]. */
static double piece_eval(const double *x, const double *y, const double *d, int k, double t)
{
    const double h = x[k + 1] - x[k], t2 = t * t, t3 = t2 * t;
    return (2 * t3 - 3 * t2 + 1) * y[k] + (t3 - 2 * t2 + t) * h * d[k] + (-2 * t3 + 3 * t2) * y[k + 1] +
           (t3 - t2) * h * d[k + 1];
}

/* Antiderivative of that piece in t, times h: the integral over x from x[k]
 * to x[k] + t h. The Hermite basis functions integrate to
 * t^4/2 - t^3 + t, t^4/4 - 2t^3/3 + t^2/2, -t^4/2 + t^3, t^4/4 - t^3/3. */
static double piece_antideriv(const double *x, const double *y, const double *d, int k, double t)
{
    const double h = x[k + 1] - x[k], t2 = t * t, t3 = t2 * t, t4 = t3 * t;
    return h * ((t4 / 2 - t3 + t) * y[k] + (t4 / 4 - 2 * t3 / 3 + t2 / 2) * h * d[k] +
                (-t4 / 2 + t3) * y[k + 1] + (t4 / 4 - t3 / 3) * h * d[k + 1]);
}

double cmp_pchip_eval(const double *x, const double *y, const double *d, int n, double t)
{
    if (n == 1 || t <= x[0]) return y[0];
    if (t >= x[n - 1]) return y[n - 1];
    int k = 0;
    while (k < n - 2 && t >= x[k + 1]) k++;
    return piece_eval(x, y, d, k, (t - x[k]) / (x[k + 1] - x[k]));
}

double cmp_pchip_integral(const double *x, const double *y, const double *d, int n, double a,
                          double b)
{
    double sum = 0;
    for (int k = 0; k < n - 1; k++) {
        const double lo = a > x[k] ? a : x[k], hi = b < x[k + 1] ? b : x[k + 1];
        if (hi <= lo) continue;
        const double h = x[k + 1] - x[k];
        sum += piece_antideriv(x, y, d, k, (hi - x[k]) / h) - piece_antideriv(x, y, d, k, (lo - x[k]) / h);
    }
    return sum;
}

/* Least-squares cubic of y in u = (x - c) / s; coefficients a[0..3] of
 * 1, u, u^2, u^3. Normal equations by Gaussian elimination with partial
 * pivoting. */
static int cubic_fit(const double *x, const double *y, int n, double c, double s, double a[4])
{
    double m[4][5] = { { 0 } };
    for (int i = 0; i < n; i++) {
        const double u = (x[i] - c) / s;
        double p[7];
        p[0] = 1;
        for (int j = 1; j < 7; j++) p[j] = p[j - 1] * u;
        for (int r = 0; r < 4; r++) {
            for (int q = 0; q < 4; q++) m[r][q] += p[r + q];
            m[r][4] += p[r] * y[i];
        }
    }
    for (int col = 0; col < 4; col++) {
        int piv = col;
        for (int r = col + 1; r < 4; r++)
            if (fabs(m[r][col]) > fabs(m[piv][col])) piv = r;
        if (fabs(m[piv][col]) < 1e-300) return -1;
        if (piv != col) {
            for (int q = 0; q < 5; q++) {
                const double t = m[col][q];
                m[col][q] = m[piv][q];
                m[piv][q] = t;
            }
        }
        for (int r = col + 1; r < 4; r++) {
            const double f = m[r][col] / m[col][col];
            for (int q = col; q < 5; q++) m[r][q] -= f * m[col][q];
        }
    }
    for (int r = 3; r >= 0; r--) {
        double v = m[r][4];
        for (int q = r + 1; q < 4; q++) v -= m[r][q] * a[q];
        a[r] = v / m[r][r];
    }
    return 0;
}

/* Integral over x in [lo, hi] of the cubic fitted to the curve. */
static int cubic_integral(const double *x, const double *y, int n, double lo, double hi, double *out)
{
    /* centre and scale by the data's own range */
    const double c = 0.5 * (x[0] + x[n - 1]), s = 0.5 * (x[n - 1] - x[0]);
    double a[4];
    if (!(s > 0) || cubic_fit(x, y, n, c, s, a) < 0) return -1;
    const double ul = (lo - c) / s, uh = (hi - c) / s;
    double sum = 0;
    for (int j = 0; j < 4; j++) sum += a[j] * (pow(uh, j + 1) - pow(ul, j + 1)) / (j + 1);
    *out = sum * s;
    return 0;
}

/* The mean of f_test - f_anchor over the overlap of the x ranges. */
static int mean_delta(const double *xa, const double *ya, int na, const double *xt, const double *yt,
                      int nt, int method, int x_is_log_rate, CmpBd *r)
{
    const double lo = xa[0] > xt[0] ? xa[0] : xt[0];
    const double hi = xa[na - 1] < xt[nt - 1] ? xa[na - 1] : xt[nt - 1];
    r->lo = lo;
    r->hi = hi;
    if (!(hi > lo)) {
        if (x_is_log_rate)
            snprintf(r->reason, sizeof(r->reason), "no overlap: anchor rates %.6g..%.6g, test %.6g..%.6g",
                     exp(xa[0]), exp(xa[na - 1]), exp(xt[0]), exp(xt[nt - 1]));
        else
            snprintf(r->reason, sizeof(r->reason), "no overlap: anchor %.3f..%.3f dB, test %.3f..%.3f dB",
                     xa[0], xa[na - 1], xt[0], xt[nt - 1]);
        return -1;
    }
    double ia, it;
    if (method == CMP_BD_CUBIC) {
        if (cubic_integral(xa, ya, na, lo, hi, &ia) < 0 || cubic_integral(xt, yt, nt, lo, hi, &it) < 0) {
            snprintf(r->reason, sizeof(r->reason), "cubic fit is singular");
            return -1;
        }
    } else {
        double da[CMP_BD_MAX_POINTS], dt[CMP_BD_MAX_POINTS];
        cmp_pchip_slopes(xa, ya, na, da);
        cmp_pchip_slopes(xt, yt, nt, dt);
        ia = cmp_pchip_integral(xa, ya, da, na, lo, hi);
        it = cmp_pchip_integral(xt, yt, dt, nt, lo, hi);
    }
    r->value = (it - ia) / (hi - lo);
    return 0;
}

static int bd(const double *ar, const double *ap, int an, const double *tr, const double *tp, int tn,
              int method, int want_rate, CmpBd *r)
{
    memset(r, 0, sizeof(*r));
    if (method != CMP_BD_PCHIP && method != CMP_BD_CUBIC) {
        snprintf(r->reason, sizeof(r->reason), "unknown fit %d", method);
        return -1;
    }
    static Curve a, t; /* large; keep them off the stack */
    if (curve_prepare("anchor", ar, ap, an, &a, r) < 0 || curve_prepare("test", tr, tp, tn, &t, r) < 0)
        return -1;
    double la[CMP_BD_MAX_POINTS], lt[CMP_BD_MAX_POINTS];
    for (int i = 0; i < a.n; i++) la[i] = log(a.rate[i]);
    for (int i = 0; i < t.n; i++) lt[i] = log(t.rate[i]);
    if (want_rate) {
        if (mean_delta(a.psnr, la, a.n, t.psnr, lt, t.n, method, 0, r) < 0) return -1;
        r->value = (exp(r->value) - 1) * 100;
    } else {
        if (mean_delta(la, a.psnr, a.n, lt, t.psnr, t.n, method, 1, r) < 0) return -1;
    }
    r->ok = 1;
    return 0;
}

int cmp_bd_rate(const double *anchor_rate, const double *anchor_psnr, int anchor_n,
                const double *test_rate, const double *test_psnr, int test_n, int method, CmpBd *r)
{
    return bd(anchor_rate, anchor_psnr, anchor_n, test_rate, test_psnr, test_n, method, 1, r);
}

int cmp_bd_psnr(const double *anchor_rate, const double *anchor_psnr, int anchor_n,
                const double *test_rate, const double *test_psnr, int test_n, int method, CmpBd *r)
{
    return bd(anchor_rate, anchor_psnr, anchor_n, test_rate, test_psnr, test_n, method, 0, r);
}
