/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-bench's power-law fit: exact power laws give their exponent and
 * factor, noisy ones come close, and the undefined fits are refused. */
#include "bench_stats.h"
#include "test.h"

static void test_exact(void)
{
    const double bs[] = { 1, 2, 0.5, -1, 1.37, 0 };
    const double x[] = { 15, 30, 60, 120 };
    for (size_t t = 0; t < sizeof(bs) / sizeof(bs[0]); t++) {
        double y[4], a = 0, b = 0, r2 = 0;
        for (int i = 0; i < 4; i++) y[i] = 0.003 * pow(x[i], bs[t]);
        CHECK(bench_power_fit(x, y, 4, &a, &b, &r2) == 0);
        CHECK_NEAR(b, bs[t], 1e-12);
        CHECK_NEAR(a, 0.003, 1e-10);
        CHECK_NEAR(r2, 1, 1e-12);
    }
    /* two points are enough; r2 may be left out */
    const double x2[] = { 19200, 76800 }, y2[] = { 0.5, 2.0 };
    double a, b;
    CHECK(bench_power_fit(x2, y2, 2, &a, &b, NULL) == 0);
    CHECK_NEAR(b, 1, 1e-12);
    CHECK_NEAR(a * pow(19200, b), 0.5, 1e-12);
}

static void test_noisy(void)
{
    /* y = 2 x^1.5 times a deterministic +-5 % wobble */
    double x[9], y[9], a, b, r2;
    for (int i = 0; i < 9; i++) {
        x[i] = 10.0 * (i + 1);
        y[i] = 2 * pow(x[i], 1.5) * (1 + 0.05 * ((i % 3) - 1));
    }
    CHECK(bench_power_fit(x, y, 9, &a, &b, &r2) == 0);
    CHECK_MSG(fabs(b - 1.5) < 0.05, "exponent %.4f, expected 1.5 +- 0.05", b);
    CHECK_MSG(r2 > 0.99 && r2 <= 1, "R^2 %.4f", r2);
    /* the three-point shape of pnmf-bench: 2.1 s, 3.9 s, 8.4 s for k = 2, 4, 8 */
    const double k[] = { 2, 4, 8 }, t[] = { 2.1, 3.9, 8.4 };
    CHECK(bench_power_fit(k, t, 3, &a, &b, &r2) == 0);
    CHECK_MSG(fabs(b - 1.0) < 0.05, "exponent %.4f, expected about 1", b);
    /* the fitted line goes through the geometric means */
    CHECK_NEAR(a * pow(4, b), pow(2.1 * 3.9 * 8.4, 1.0 / 3), 1e-12);
}

static void test_refused(void)
{
    const double x[] = { 1, 2, 4 }, y[] = { 1, 2, 4 };
    const double same[] = { 3, 3, 3 }, zero[] = { 1, 0, 4 }, neg[] = { 1, -2, 4 };
    const double bad[] = { 1, NAN, 4 }, inf[] = { 1, INFINITY, 4 };
    double a = 7, b = 7, r2 = 7;
    CHECK(bench_power_fit(x, y, 1, &a, &b, &r2) == -1);   /* one point */
    CHECK(bench_power_fit(x, y, 0, &a, &b, &r2) == -1);   /* none */
    CHECK(bench_power_fit(same, y, 3, &a, &b, &r2) == -1); /* all x equal */
    CHECK(bench_power_fit(zero, y, 3, &a, &b, &r2) == -1); /* x = 0 */
    CHECK(bench_power_fit(x, zero, 3, &a, &b, &r2) == -1); /* y = 0: a failed timing */
    CHECK(bench_power_fit(neg, y, 3, &a, &b, &r2) == -1);
    CHECK(bench_power_fit(x, neg, 3, &a, &b, &r2) == -1);
    CHECK(bench_power_fit(bad, y, 3, &a, &b, &r2) == -1);
    CHECK(bench_power_fit(x, bad, 3, &a, &b, &r2) == -1);
    CHECK(bench_power_fit(inf, y, 3, &a, &b, &r2) == -1);
    CHECK(a == 7 && b == 7 && r2 == 7); /* nothing set when refused */
    /* all y equal is a fine fit: exponent 0 */
    CHECK(bench_power_fit(x, same, 3, &a, &b, &r2) == 0);
    CHECK_NEAR(b, 0, 1e-12);
    CHECK_NEAR(a, 3, 1e-12);
}

int main(void)
{
    test_exact();
    test_noisy();
    test_refused();
    return test_summary("test_bench_stats");
}
