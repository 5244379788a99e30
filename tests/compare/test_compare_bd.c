/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bjøntegaard deltas: published test vectors, exact identities, the
 * refusals, and the PCHIP integral against a dense numerical one. */
#include <string.h>

#include "compare_bd.h"
#include "test.h"

/* The published vectors: rates and PSNR (dB) of an anchor and a test. */
static const double AR[] = { 9487.76, 4593.60, 2486.44, 1358.24 };
static const double AP[] = { 40.037, 38.615, 36.845, 34.851 };
static const double TR[] = { 9787.80, 4469.00, 2451.52, 1356.24 };
static const double TP[] = { 40.121, 38.651, 36.970, 34.987 };

#define CHECK_ABS(a, b, tol) do { \
    double a_ = (a), b_ = (b); \
    CHECK_MSG(fabs(a_ - b_) <= (tol), "%.6f vs %.6f (tol %g)", a_, b_, (double)(tol)); \
} while (0)

/* BD-rate by trapezoids on n samples of the PCHIP fits, sharing no code
 * with the exact integral but the interpolant itself. */
static double bd_rate_trapezoid(int n)
{
    double ax[4], ay[4], tx[4], ty[4], ad[4], td[4];
    for (int i = 0; i < 4; i++) { /* ascending PSNR */
        ax[i] = AP[3 - i]; ay[i] = log(AR[3 - i]);
        tx[i] = TP[3 - i]; ty[i] = log(TR[3 - i]);
    }
    cmp_pchip_slopes(ax, ay, 4, ad);
    cmp_pchip_slopes(tx, ty, 4, td);
    const double lo = fmax(ax[0], tx[0]), hi = fmin(ax[3], tx[3]);
    double sum = 0, prev = 0;
    for (int i = 0; i < n; i++) {
        const double x = lo + (hi - lo) * i / (n - 1);
        const double v = cmp_pchip_eval(tx, ty, td, 4, x) - cmp_pchip_eval(ax, ay, ad, 4, x);
        if (i) sum += 0.5 * (v + prev) * (hi - lo) / (n - 1);
        prev = v;
    }
    return (exp(sum / (hi - lo)) - 1) * 100;
}

static void test_vectors(void)
{
    CmpBd r;
    CHECK(cmp_bd_rate(AR, AP, 4, TR, TP, 4, CMP_BD_PCHIP, &r) == 0 && r.ok);
    CHECK_ABS(r.value, -4.4175, 0.0005);
    CHECK_ABS(r.lo, 34.987, 1e-12); /* the overlap: max of the minima ... */
    CHECK_ABS(r.hi, 40.037, 1e-12); /* ... to min of the maxima */
    CHECK_ABS(bd_rate_trapezoid(100), -4.4173, 0.0005);
    /* the exact integral is the limit of the sampled one */
    CHECK_ABS(bd_rate_trapezoid(200001), r.value, 1e-6);
    CHECK(cmp_bd_rate(AR, AP, 4, TR, TP, 4, CMP_BD_CUBIC, &r) == 0 && r.ok);
    CHECK_ABS(r.value, -4.4205, 0.0005);
    /* the test curve is better: it gains PSNR at the same rate */
    CHECK(cmp_bd_psnr(AR, AP, 4, TR, TP, 4, CMP_BD_PCHIP, &r) == 0 && r.ok && r.value > 0);
    CHECK(cmp_bd_psnr(AR, AP, 4, TR, TP, 4, CMP_BD_CUBIC, &r) == 0 && r.ok && r.value > 0);
}

static void test_identities(void)
{
    CmpBd r;
    double half[4], more[4], shuffled_r[4], shuffled_p[4];
    for (int i = 0; i < 4; i++) {
        half[i] = AR[i] / 2;
        more[i] = AP[i] + 1;
    }
    for (int m = CMP_BD_PCHIP; m <= CMP_BD_CUBIC; m++) {
        /* every rate halved: -50 % whatever the fit */
        CHECK(cmp_bd_rate(AR, AP, 4, half, AP, 4, m, &r) == 0 && r.ok);
        CHECK_ABS(r.value, -50.000, 0.0005);
        /* a curve against itself: 0 */
        CHECK(cmp_bd_rate(AR, AP, 4, AR, AP, 4, m, &r) == 0);
        CHECK_ABS(r.value, 0, 1e-9);
        CHECK(cmp_bd_psnr(AR, AP, 4, AR, AP, 4, m, &r) == 0);
        CHECK_ABS(r.value, 0, 1e-9);
        /* 1 dB better at every rate: BD-PSNR +1 dB */
        CHECK(cmp_bd_psnr(AR, AP, 4, AR, more, 4, m, &r) == 0 && r.ok);
        CHECK_ABS(r.value, 1.0, 1e-9);
        /* swapping anchor and test inverts the rate ratio */
        CmpBd s;
        cmp_bd_rate(AR, AP, 4, TR, TP, 4, m, &r);
        cmp_bd_rate(TR, TP, 4, AR, AP, 4, m, &s);
        CHECK_ABS((1 + r.value / 100) * (1 + s.value / 100), 1.0, 1e-12);
    }
    /* the points' order does not matter */
    const int perm[4] = { 2, 0, 3, 1 };
    for (int i = 0; i < 4; i++) {
        shuffled_r[i] = TR[perm[i]];
        shuffled_p[i] = TP[perm[i]];
    }
    CHECK(cmp_bd_rate(AR, AP, 4, shuffled_r, shuffled_p, 4, CMP_BD_PCHIP, &r) == 0);
    CHECK_ABS(r.value, -4.4175, 0.0005);
    /* an exact duplicate point is dropped, not refused */
    const double dr[5] = { 9787.80, 4469.00, 4469.00, 2451.52, 1356.24 };
    const double dp[5] = { 40.121, 38.651, 38.651, 36.970, 34.987 };
    CHECK(cmp_bd_rate(AR, AP, 4, dr, dp, 5, CMP_BD_PCHIP, &r) == 0);
    CHECK_ABS(r.value, -4.4175, 0.0005);
}

static void test_refusals(void)
{
    CmpBd r;
    /* 3 points */
    for (int m = CMP_BD_PCHIP; m <= CMP_BD_CUBIC; m++) {
        CHECK(cmp_bd_rate(AR, AP, 4, TR, TP, 3, m, &r) < 0 && !r.ok);
        CHECK_MSG(strstr(r.reason, "test") && strstr(r.reason, "3 points"), "reason: %s", r.reason);
        CHECK(cmp_bd_psnr(AR, AP, 3, TR, TP, 4, m, &r) < 0 && !r.ok);
        CHECK_MSG(strstr(r.reason, "anchor") && strstr(r.reason, "3 points"), "reason: %s", r.reason);
    }
    /* non-monotonic: PSNR falls while the rate rises */
    const double np[4] = { 40.121, 38.651, 39.000, 34.987 };
    CHECK(cmp_bd_rate(AR, AP, 4, TR, np, 4, CMP_BD_PCHIP, &r) < 0 && !r.ok);
    CHECK_MSG(strstr(r.reason, "non-monotonic"), "reason: %s", r.reason);
    CHECK(cmp_bd_psnr(AR, AP, 4, TR, np, 4, CMP_BD_PCHIP, &r) < 0);
    CHECK_MSG(strstr(r.reason, "non-monotonic"), "reason: %s", r.reason);
    /* two points at one rate with different PSNR are not a function */
    const double sr[4] = { 9787.80, 4469.00, 4469.00, 1356.24 };
    CHECK(cmp_bd_rate(AR, AP, 4, sr, TP, 4, CMP_BD_PCHIP, &r) < 0);
    CHECK_MSG(strstr(r.reason, "non-monotonic"), "reason: %s", r.reason);
    /* no overlap: the test lies wholly above the anchor in PSNR (BD-rate)
     * and wholly below it in rate (BD-PSNR) */
    const double hp[4] = { 50.121, 48.651, 46.970, 44.987 };
    CHECK(cmp_bd_rate(AR, AP, 4, TR, hp, 4, CMP_BD_PCHIP, &r) < 0 && !r.ok);
    CHECK_MSG(strstr(r.reason, "no overlap"), "reason: %s", r.reason);
    CHECK(cmp_bd_rate(AR, AP, 4, TR, hp, 4, CMP_BD_CUBIC, &r) < 0 && !r.ok);
    const double lr[4] = { 97.878, 44.69, 24.5152, 13.5624 };
    CHECK(cmp_bd_psnr(AR, AP, 4, lr, TP, 4, CMP_BD_PCHIP, &r) < 0 && !r.ok);
    CHECK_MSG(strstr(r.reason, "no overlap"), "reason: %s", r.reason);
    /* touching ranges (one common PSNR) are no overlap either */
    const double tp2[4] = { 45.0, 43.0, 41.0, 40.037 };
    CHECK(cmp_bd_rate(AR, AP, 4, TR, tp2, 4, CMP_BD_PCHIP, &r) < 0);
    /* invalid values */
    const double zr[4] = { 9787.80, 4469.00, 0, 1356.24 };
    CHECK(cmp_bd_rate(AR, AP, 4, zr, TP, 4, CMP_BD_PCHIP, &r) < 0);
    const double nanp[4] = { 40.121, NAN, 36.970, 34.987 };
    CHECK(cmp_bd_rate(AR, AP, 4, TR, nanp, 4, CMP_BD_PCHIP, &r) < 0);
}

/* The interpolant: through the points, monotone on monotone data, and its
 * closed-form integral over any sub-range equal to a dense Simpson sum. */
static void test_pchip(void)
{
    const double x[6] = { 0, 1, 1.5, 4, 4.2, 7 };
    const double y[6] = { 0, 0.1, 2, 2.1, 5, 5.05 };
    double d[6];
    cmp_pchip_slopes(x, y, 6, d);
    for (int i = 0; i < 6; i++) CHECK_NEAR(cmp_pchip_eval(x, y, d, 6, x[i]), y[i], 1e-12);
    int mono = 1;
    double prev = -1;
    for (int i = 0; i <= 7000; i++) {
        const double v = cmp_pchip_eval(x, y, d, 6, i * 0.001);
        mono &= v >= prev - 1e-12;
        prev = v;
    }
    CHECK_MSG(mono, "PCHIP not monotone on monotone data");
    const double a = 0.37, b = 6.1;
    const int n = 200000; /* even */
    double s = 0;
    for (int i = 0; i <= n; i++) {
        const double t = a + (b - a) * i / n;
        s += (i == 0 || i == n ? 1 : (i & 1) ? 4 : 2) * cmp_pchip_eval(x, y, d, 6, t);
    }
    s *= (b - a) / n / 3;
    CHECK_NEAR(cmp_pchip_integral(x, y, d, 6, a, b), s, 1e-9);
    /* a straight line is reproduced exactly */
    const double ly[6] = { 1, 3, 4, 9, 9.4, 15 };
    cmp_pchip_slopes(x, ly, 6, d);
    CHECK_NEAR(cmp_pchip_eval(x, ly, d, 6, 2.5), 6, 1e-12);
    CHECK_NEAR(cmp_pchip_integral(x, ly, d, 6, 0, 7), 0.5 * (1 + 15) * 7, 1e-12);
}

int main(void)
{
    test_vectors();
    test_identities();
    test_refusals();
    test_pchip();
    return test_summary("test_compare_bd");
}
